import {
  AccountFixture, AsinFixture, CloudRoleFixture, CredentialFixture, MarketplaceFixture, PayloadFixture,
  ProductFixture, RefreshTokenFixture, RemoteIdentityFixture, RemoteIdentityMetaFixture, RemoteIdentityTypeFixture, StorageFixture, UserFixture,
} from './fixtures';

export interface SubscriptionRecord {
  id: number;
  account: number;
  user: number;
  product: number;
  name: string;
  status: string;
  date_start: string;
  date_end: string | null;
  remote_identity: number | null;
  storage_group: number | null;
  product_parameters: Record<string, string>;
  created_at: number;
  updated_at: number;
}

export interface TxRecord {
  id: string;
  subscription_id?: number;
  subscription_name?: string;
  product_name?: string;
  payload_name?: string;
  job_id?: string;
  attribution_date?: string;
  sender: string;
  status: string;
  modified_at: string;
  timestamp: number;
  time_to_live: number;
  file_path?: string;
  parent: string;
  children: string[];
  error_code?: string;
  error_message?: string;
  /** Arrival sequence of the first report (stable tiebreak). */
  seq: number;
  /** Reports merged into this record. */
  reports: number;
}

export interface HistoryRecord {
  id: string;
  account: number;
  subscription_id: number;
  status: string;
  start_date: string | null;
  end_date: string | null;
  dates: string[] | null;
  stage_id: number | null;
  product_id: number | null;
  start_time: string | null;
  created_at: number;
  processing_at: number;
  completed_at: number;
  cancelled_at: number | null;
  error_message: string | null;
}

export interface JobRecord {
  id: string;
  account: number;
  subscription_id: number;
  is_primary: boolean;
  parent_job_id: string | null;
  stage_id: number | null;
  valid_date_start: string | null;
  valid_date_end: string | null;
  extra_context: string | null;
  request_start: number | null;
  request_end: number | null;
  schedule: string | null;
  created_at: number;
}

/** A resource the emulated service provisioned in the customer's cloud account. */
export interface CloudResource {
  kind: string;
  id: string;
  arn?: string;
  accountId: string;
  region: string;
  /** Absent for shared resources (bucket, event bus, event-bus destination). */
  pipelineId?: string;
  shared: boolean;
  details?: Record<string, string>;
}

/** A notification destination registered upstream (marketplace side). */
export interface DestinationRecord {
  id: string;
  kind: 'sqs' | 'eventbridge';
  arn: string;
  accountId: string;
  region: string;
  shared: boolean;
  pipelineId?: string;
  legacySubscriptionId?: number;
}

/** An upstream (marketplace) notification subscription. */
export interface UpstreamSubscription {
  id: string;
  remoteIdentityId: number;
  notificationType: string;
  destinationId: string;
  enabled: boolean;
  createdAt: number;
  pipelineId?: string;
  legacySubscriptionId?: number;
}

export interface PipelineRecord {
  id: string;
  account: number;
  remoteIdentityId: number;
  awsAccountId: string;
  region: string;
  prefix: string;
  notificationTypes: string[];
  meta: Record<string, string>;
}

export interface LegacyPipelineRecord {
  subscriptionId: number;
  remoteIdentityId: number;
  queueArn: string;
  destinationId: string;
  subscriptions: Record<string, string>;
}

export interface EmulatorState {
  accounts: AccountFixture[];
  users: UserFixture[];
  refreshTokens: RefreshTokenFixture[];
  products: ProductFixture[];
  payloads: PayloadFixture[];
  remoteIdentities: RemoteIdentityFixture[];
  /** Absent in a state file written before remote identity types existed. */
  remoteIdentityTypes?: RemoteIdentityTypeFixture[];
  /** Absent in a state file written before remote identity meta records existed. */
  remoteIdentityMeta?: RemoteIdentityMetaFixture[];
  storages: StorageFixture[];
  subscriptions: SubscriptionRecord[];
  marketplaces: MarketplaceFixture[];
  credentials: CredentialFixture[];
  asins: AsinFixture[];
  cloudRoles: CloudRoleFixture[];
  historyMaxRequests: number;
  /** Default page size of vendor-mode lists (fixture `pageSize`). */
  pageSize: number;
  failingNotificationTypes: string[];
  failingCleanupSubscriptions: number[];
  failingHistorySubscriptions: number[];
  failingCatalogProducts: number[];
  transactions: TxRecord[];
  history: HistoryRecord[];
  jobs: JobRecord[];
  cloud: CloudResource[];
  destinations: DestinationRecord[];
  upstreamSubscriptions: UpstreamSubscription[];
  pipelines: PipelineRecord[];
  legacyPipelines: LegacyPipelineRecord[];
  asinValidation: { calls: number; batches: number; lastCallBatches: number };
  counters: { subscription: number; history: number; job: number; upstream: number; destination: number; pipeline: number; txSeq: number };
}

/** What `GET /_emulator/state` and `RunningEmulator.state()` return. */
export type EmulatorStateSnapshot = EmulatorState & { now: number };

export function emptyState(): EmulatorState {
  return {
    accounts: [],
    users: [],
    refreshTokens: [],
    products: [],
    payloads: [],
    remoteIdentities: [],
    remoteIdentityTypes: [],
    remoteIdentityMeta: [],
    storages: [],
    subscriptions: [],
    marketplaces: [],
    credentials: [],
    asins: [],
    cloudRoles: [],
    historyMaxRequests: 3,
    pageSize: 20,
    failingNotificationTypes: [],
    failingCleanupSubscriptions: [],
    failingHistorySubscriptions: [],
    failingCatalogProducts: [],
    transactions: [],
    history: [],
    jobs: [],
    cloud: [],
    destinations: [],
    upstreamSubscriptions: [],
    pipelines: [],
    legacyPipelines: [],
    asinValidation: { calls: 0, batches: 0, lastCallBatches: 0 },
    counters: { subscription: 9000, history: 0, job: 0, upstream: 0, destination: 0, pipeline: 0, txSeq: 0 },
  };
}
