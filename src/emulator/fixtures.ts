import { readFileSync } from 'node:fs';

/** Records the emulator can be seeded with (all optional; merged over the defaults). */
export interface AccountFixture { id: number; name?: string }
export interface UserFixture { id: number; account: number; email?: string }
export interface RefreshTokenFixture { token: string; accountId: number; userId: number }

// Catalog records: the emulator's own copies of the wire shapes of the interface specification (the emulator
// imports nothing from the library, so that it stays an independent witness of the service's behaviour).

/** One `backend_info[]` record of a product definition (one per subproduct stream). */
export interface BackendInfo {
  subproduct_id: string;
  worker_name: string;
  job_type: string;
  base_schedule_start: string | null;
  base_schedule_end: string | null;
  base_request_start: number | null;
  num_days: number | null;
  days_list: number[] | null;
  num_stages: number | null;
  stage_list: number[] | null;
}

/** One `history_info[]` record of a product definition (one per stage per subproduct). */
export interface HistoryInfo {
  stage_id: number;
  subproduct_id: string;
  /** Maximum days of history that can be requested for the stage. */
  days: number;
  schedule_offset: number | null;
  /** Maximum age in days of a single data request for the stage. */
  max_request_time: number;
}

/** One `stages[]` record of a product definition. */
export interface StageInfo {
  name: string;
  stage_id: number;
  restricted_to: string[] | null;
}

/** A product: the catalog definition plus the subscriptions-service fields (`required_meta_fields`). */
export interface ProductFixture {
  id: number;
  name: string;
  product_group_id?: number;
  summary?: string;
  description?: string | null;
  worker_name?: string | null;
  remote_identity_type_name?: string | null;
  remote_identity_type_id?: number | null;
  is_storage_product?: 0 | 1;
  active?: 0 | 1;
  allow_as_trial?: 0 | 1;
  premium_product?: 0 | 1;
  initialize_job?: 0 | 1;
  subscription_info?: { spm_requirements: string[] } | null;
  backend_info?: BackendInfo[] | null;
  history_info?: HistoryInfo[] | null;
  stages?: StageInfo[] | null;
  required_meta_fields?: string[];
}
export interface PayloadFixture { id: string | number; product: number; name: string; stage_id: number; enabled?: boolean }
export interface RemoteIdentityFixture {
  id: number;
  account: number;
  name?: string;
  remote_identity_type_id: number;
  remote_identity_type_name?: string;
  /** Marketplace IDs the identity participates in (types 17/18). */
  marketplaces?: string[];
  /** `1` when the identity's credentials were revoked or expired (vendor reads, `invalid_identity` filter). Default 0. */
  invalid_identity?: 0 | 1;
  /** The user who authorized the identity (vendor reads). Default: the first user of the account. */
  user?: number;
  /** Vendor reads: region of the identity (default `global`). */
  region?: string;
  /** Vendor reads: email of the third-party profile. */
  email?: string;
  /** Vendor reads: the provider's identifying value (default: the identity ID). */
  remote_unique_id?: string;
}
export interface StorageFixture { id: number; account: number; name?: string; status?: string; product?: number }
export interface SubscriptionFixture {
  id: number;
  account: number;
  user: number;
  product: number;
  name?: string;
  status?: string;
  date_start?: string;
  date_end?: string | null;
  remote_identity?: number | null;
  storage_group?: number | null;
  product_parameters?: Record<string, string>;
}
/** A marketplace, as `GET /service/sp/marketplaces/{id}` returns it. */
export interface MarketplaceFixture {
  id: string;
  name: string;
  countryCode: string;
  defaultCurrencyCode: string;
  defaultLanguageCode: string;
  domainName: string;
}
export interface CredentialFixture {
  client_id: string;
  client_secret: string;
  region: string;
  refresh_token: string;
  selling_partner_id: string;
}
export interface AsinFixture { marketplaceId: string; asin: string; attributes?: Record<string, unknown> }
export interface CloudRoleFixture { accountId: string; roleArn: string; trustsService: boolean }
/** An existing legacy (product 86) pipeline: its subscription must exist (or be given in `subscriptions`). */
export interface LegacyPipelineFixture {
  subscriptionId: number;
  remoteIdentityId: number;
  queueArn: string;
  notificationTypes: string[];
}

export interface EmulatorFixtures {
  accounts?: AccountFixture[];
  users?: UserFixture[];
  refreshTokens?: RefreshTokenFixture[];
  products?: ProductFixture[];
  /** Partial product definitions merged into `products` by `id` (catalog-only fields). */
  productCards?: Array<Partial<ProductFixture> & { id: number }>;
  payloads?: PayloadFixture[];
  remoteIdentities?: RemoteIdentityFixture[];
  storages?: StorageFixture[];
  subscriptions?: SubscriptionFixture[];
  marketplaces?: MarketplaceFixture[];
  credentials?: CredentialFixture[];
  asins?: AsinFixture[];
  cloudRoles?: CloudRoleFixture[];
  historyMaxRequests?: number;
  /** Default page size of lists in `reads: 'vendor'` mode (default 20; `page_size` overrides it per request). */
  pageSize?: number;
  legacyPipelines?: LegacyPipelineFixture[];
  /** Notification types whose upstream subscription fails (listed in `failed` of a 207). Replaces the list. */
  failingNotificationTypes?: string[];
  /** Subscription IDs whose pipeline cleanup (unified PATCH/DELETE) fails with 400. Replaces the list. */
  failingCleanupSubscriptions?: number[];
  /** Subscription IDs whose history requests end `failed` instead of `completed`. Replaces the list. */
  failingHistorySubscriptions?: number[];
  /** Product IDs whose catalog detail and payload reads answer 500 `{error}`. Replaces the list. */
  failingCatalogProducts?: number[];
}

export const DEFAULT_REFRESH_TOKEN = 'emulator-refresh-token';
/** Refresh token of the second default account (1002), for ownership (403) tests. */
export const OTHER_REFRESH_TOKEN = 'emulator-refresh-token-other';
/** The customer cloud account of the default cloud roles. */
export const DEFAULT_CLOUD_ACCOUNT = '123456789012';

const backend = (worker: string): BackendInfo[] => [{
  subproduct_id: 'default',
  worker_name: worker,
  job_type: 'daily',
  base_schedule_start: '0 2 * * *',
  base_schedule_end: '0 6 * * *',
  base_request_start: 3,
  num_days: 1,
  days_list: null,
  num_stages: null,
  stage_list: [1000, 1001],
}];

const MARKETPLACES: MarketplaceFixture[] = [
  { id: 'ATVPDKIKX0DER', name: 'Amazon.com', countryCode: 'US', defaultCurrencyCode: 'USD', defaultLanguageCode: 'en_US', domainName: 'www.amazon.com' },
  { id: 'A2EUQ1WTGCTBG2', name: 'Amazon.ca', countryCode: 'CA', defaultCurrencyCode: 'CAD', defaultLanguageCode: 'en_CA', domainName: 'www.amazon.ca' },
  { id: 'A1AM78C64UM0Y8', name: 'Amazon.com.mx', countryCode: 'MX', defaultCurrencyCode: 'MXN', defaultLanguageCode: 'es_MX', domainName: 'www.amazon.com.mx' },
];

function asinRange(marketplaceId: string, from: number, to: number): AsinFixture[] {
  const out: AsinFixture[] = [];
  for (let i = from; i <= to; i++) {
    const asin = `B0${String(i).padStart(8, '0')}`;
    out.push({ marketplaceId, asin, attributes: { title: `Emulated item ${i}` } });
  }
  return out;
}

/** The fixtures every emulator starts with (and returns to on `POST /_emulator/reset`). */
export const DEFAULT_FIXTURES: EmulatorFixtures = {
  accounts: [{ id: 1001, name: 'Emulated Account' }, { id: 1002, name: 'Other Account' }],
  users: [{ id: 2001, account: 1001, email: 'user@example.com' }, { id: 2002, account: 1002, email: 'other@example.com' }],
  refreshTokens: [
    { token: DEFAULT_REFRESH_TOKEN, accountId: 1001, userId: 2001 },
    { token: OTHER_REFRESH_TOKEN, accountId: 1002, userId: 2002 },
  ],
  products: [
    {
      id: 86,
      name: 'SP-API Notifications (legacy)',
      product_group_id: 8,
      summary: 'Marketplace notifications to customer queues',
      description: 'Legacy queue-based notification pipelines; modify or delete only.',
      worker_name: 'spapi_notifications',
      remote_identity_type_name: 'Amazon Selling Partner',
      remote_identity_type_id: 17,
      is_storage_product: 0,
      active: 1,
      allow_as_trial: 0,
      premium_product: 0,
      initialize_job: 0,
      subscription_info: { spm_requirements: ['remote_identity_id'] },
      backend_info: null,
      history_info: null,
      stages: null,
      required_meta_fields: ['remote_identity_id'],
    },
    {
      id: 107,
      name: 'SP-API Notifications',
      product_group_id: 8,
      summary: 'Unified marketplace notification pipelines',
      description: 'Notifications delivered into a shared bucket in the customer cloud account.',
      worker_name: 'spapi_notifications_unified',
      remote_identity_type_name: 'Amazon Selling Partner',
      remote_identity_type_id: 17,
      is_storage_product: 0,
      active: 1,
      allow_as_trial: 1,
      premium_product: 0,
      initialize_job: 0,
      subscription_info: { spm_requirements: ['remote_identity_id', 'subscriptions', 'meta'] },
      backend_info: null,
      history_info: null,
      stages: null,
      required_meta_fields: ['remote_identity_id', 'subscriptions', 'meta'],
    },
    {
      id: 3001,
      name: 'Marketplace Orders',
      product_group_id: 3,
      summary: 'Orders and order items from the marketplace',
      description: 'Order-level data of a selling partner.',
      worker_name: 'sp_orders',
      remote_identity_type_name: 'Amazon Selling Partner',
      remote_identity_type_id: 17,
      is_storage_product: 0,
      active: 1,
      allow_as_trial: 1,
      premium_product: 0,
      initialize_job: 1,
      subscription_info: { spm_requirements: ['remote_identity_id', 'marketplace_id'] },
      backend_info: backend('sp_orders'),
      history_info: [
        { stage_id: 1000, subproduct_id: 'default', days: 30, schedule_offset: null, max_request_time: 730 },
        { stage_id: 1001, subproduct_id: 'default', days: 14, schedule_offset: 30, max_request_time: 365 },
      ],
      stages: [
        { name: 'orders', stage_id: 1000, restricted_to: null },
        { name: 'order_items', stage_id: 1001, restricted_to: null },
      ],
      required_meta_fields: ['remote_identity_id', 'marketplace_id'],
    },
    {
      id: 3002,
      name: 'Advertising',
      product_group_id: 4,
      summary: 'Sponsored advertising performance',
      description: null,
      worker_name: 'ads_reports',
      remote_identity_type_name: 'Amazon Advertising',
      remote_identity_type_id: 5,
      is_storage_product: 0,
      active: 1,
      allow_as_trial: 0,
      premium_product: 1,
      initialize_job: 0,
      subscription_info: { spm_requirements: ['remote_identity_id', 'profile_id'] },
      backend_info: backend('ads_reports'),
      history_info: [
        { stage_id: 1000, subproduct_id: 'default', days: 60, schedule_offset: null, max_request_time: 90 },
        { stage_id: 1001, subproduct_id: 'default', days: 60, schedule_offset: null, max_request_time: 90 },
      ],
      stages: [
        { name: 'campaigns', stage_id: 1000, restricted_to: null },
        { name: 'keywords', stage_id: 1001, restricted_to: null },
      ],
      required_meta_fields: ['remote_identity_id', 'profile_id'],
    },
    {
      id: 3003,
      name: 'Retired Source',
      product_group_id: 3,
      summary: 'No longer offered',
      description: null,
      worker_name: 'retired',
      remote_identity_type_name: null,
      remote_identity_type_id: null,
      is_storage_product: 0,
      active: 0,
      allow_as_trial: 0,
      premium_product: 0,
      initialize_job: 0,
      subscription_info: null,
      backend_info: backend('retired'),
      history_info: [],
      stages: null,
      required_meta_fields: [],
    },
    {
      id: 4001,
      name: 'Object Storage Destination',
      product_group_id: 9,
      summary: 'Deliver into a storage bucket',
      description: null,
      worker_name: null,
      remote_identity_type_name: null,
      remote_identity_type_id: null,
      is_storage_product: 1,
      active: 1,
      allow_as_trial: 1,
      premium_product: 0,
      initialize_job: 0,
      subscription_info: null,
      backend_info: null,
      history_info: null,
      stages: null,
      required_meta_fields: [],
    },
  ],
  payloads: [
    { id: '30010', product: 3001, name: 'orders_legacy', stage_id: 10, enabled: true },
    { id: '30011', product: 3001, name: 'orders', stage_id: 1000, enabled: true },
    { id: '30012', product: 3001, name: 'order_items', stage_id: 1001, enabled: true },
    { id: '30013', product: 3001, name: 'order_fees', stage_id: 1002, enabled: false },
    { id: '30021', product: 3002, name: 'campaigns', stage_id: 1000, enabled: true },
    { id: '30022', product: 3002, name: 'keywords', stage_id: 1001, enabled: true },
  ],
  remoteIdentities: [
    { id: 362, account: 1001, name: 'Seller US', remote_identity_type_id: 17, remote_identity_type_name: 'Amazon Selling Partner', marketplaces: ['ATVPDKIKX0DER', 'A2EUQ1WTGCTBG2'] },
    { id: 363, account: 1001, name: 'Vendor US', remote_identity_type_id: 18, remote_identity_type_name: 'Amazon Vendor', marketplaces: ['ATVPDKIKX0DER'] },
    { id: 364, account: 1001, name: 'Seller MX (legacy pipeline)', remote_identity_type_id: 17, remote_identity_type_name: 'Amazon Selling Partner', marketplaces: ['A1AM78C64UM0Y8'] },
    { id: 365, account: 1001, name: 'Advertising', remote_identity_type_id: 5, remote_identity_type_name: 'Amazon Advertising' },
    { id: 372, account: 1002, name: 'Other seller', remote_identity_type_id: 17, remote_identity_type_name: 'Amazon Selling Partner', marketplaces: ['ATVPDKIKX0DER'] },
  ],
  storages: [
    { id: 501, account: 1001, name: 'Main bucket', status: 'active', product: 4001 },
    { id: 502, account: 1001, name: 'Old bucket', status: 'inactive', product: 4001 },
    { id: 511, account: 1002, name: 'Other bucket', status: 'active', product: 4001 },
  ],
  subscriptions: [
    {
      id: 8601,
      account: 1001,
      user: 2001,
      product: 86,
      name: 'Legacy notifications MX',
      status: 'active',
      date_start: '2025-01-01T00:00:00Z',
      remote_identity: 364,
      storage_group: null,
      product_parameters: { remote_identity_id: '364' },
    },
    {
      id: 8701,
      account: 1002,
      user: 2002,
      product: 3001,
      name: 'Other account orders',
      status: 'active',
      date_start: '2025-01-01T00:00:00Z',
      remote_identity: 372,
      storage_group: 511,
      product_parameters: { remote_identity_id: '372', marketplace_id: 'ATVPDKIKX0DER' },
    },
  ],
  marketplaces: MARKETPLACES,
  credentials: [{
    client_id: 'amzn1.application-oa2-client.emulator',
    client_secret: 'emulator-client-secret',
    region: 'na',
    refresh_token: 'Atzr|emulator-sp-refresh-token',
    selling_partner_id: 'A3EMULATORSELLER',
  }],
  asins: [...asinRange('ATVPDKIKX0DER', 1, 40), ...asinRange('A2EUQ1WTGCTBG2', 31, 50), ...asinRange('A1AM78C64UM0Y8', 1, 5)],
  cloudRoles: [
    { accountId: DEFAULT_CLOUD_ACCOUNT, roleArn: `arn:aws:iam::${DEFAULT_CLOUD_ACCOUNT}:role/dpi-management`, trustsService: true },
    { accountId: DEFAULT_CLOUD_ACCOUNT, roleArn: `arn:aws:iam::${DEFAULT_CLOUD_ACCOUNT}:role/service-spapi-firehose-role`, trustsService: true },
    { accountId: DEFAULT_CLOUD_ACCOUNT, roleArn: `arn:aws:iam::${DEFAULT_CLOUD_ACCOUNT}:role/dpi-eventbus-to-firehose`, trustsService: true },
  ],
  historyMaxRequests: 3,
  pageSize: 20,
  legacyPipelines: [{
    subscriptionId: 8601,
    remoteIdentityId: 364,
    queueArn: `arn:aws:sqs:us-east-1:${DEFAULT_CLOUD_ACCOUNT}:legacy-notifications`,
    notificationTypes: ['ORDER_CHANGE', 'FEED_PROCESSING_FINISHED'],
  }],
  failingNotificationTypes: [],
  failingCleanupSubscriptions: [],
  failingHistorySubscriptions: [],
  failingCatalogProducts: [],
};

/** Reads a fixtures JSON file (an object with the keys of EmulatorFixtures). Throws a clear error when invalid. */
export function loadFixturesFile(path: string): EmulatorFixtures {
  let text: string;
  try {
    text = readFileSync(path, 'utf8');
  } catch (e) {
    throw new Error(`cannot read fixtures file ${path}: ${(e as Error).message}`);
  }
  let parsed: unknown;
  try {
    parsed = JSON.parse(text);
  } catch (e) {
    throw new Error(`fixtures file ${path} is not valid JSON: ${(e as Error).message}`);
  }
  if (parsed === null || typeof parsed !== 'object' || Array.isArray(parsed)) {
    throw new Error(`fixtures file ${path} must contain a JSON object`);
  }
  return parsed as EmulatorFixtures;
}
