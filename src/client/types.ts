/**
 * Record and request types of the Data Pipeline Integration Service client.
 *
 * Conventions (apply to every type in this file):
 * - Attribute names are the wire names (snake_case).
 * - JSON:API-style resources (`{ type, id, attributes }`) are returned FLATTENED:
 *   `{ id: string, ...attributes }`. The `type` is dropped and `id` is always a
 *   string (a numeric wire `id` is converted). Extra wire fields are kept as they came.
 * - Plain (non-envelope) responses such as marketplaces, product cards and product
 *   definitions are returned as on the wire.
 * - IDs passed INTO the client are `string | number` (see {@link Id}); integer wire
 *   fields are sent as JSON numbers (a numeric string is converted; anything else throws).
 */

import type { Id } from './id';

export type { Id } from './id';

export * from './types-tx';

// ---------------------------------------------------------------------------
// Marketplace seller integration
// ---------------------------------------------------------------------------

/** A marketplace (plain object, as on the wire). */
export interface Marketplace {
  id: string;
  name: string;
  countryCode: string;
  defaultCurrencyCode: string;
  defaultLanguageCode: string;
  domainName: string;
}

/** Private application credentials (body of sp-id and validate-creds). */
export interface PrivateAppCredentials {
  client_id: string;
  client_secret: string;
  region: 'na' | 'eu' | 'fe';
  refresh_token: string;
}

/** Result of validate-asins, as on the wire. */
export interface AsinValidation {
  valid_asins: Array<{ asin: string; attributes: Record<string, unknown> }>;
  invalid_asins: string[];
}

/** The six accepted deployment regions of a unified pipeline. */
export type DeploymentRegion = 'us-east-1' | 'us-east-2' | 'us-west-1' | 'us-west-2' | 'af-south-1' | 'ap-east-1';

/** Attributes of a unified notification pipeline create / update (PATCH sends the full body). */
export interface UnifiedPipelineRequest {
  /** Non-empty; names from the list endpoint for the identity's account type. */
  notification_types: string[];
  /** Customer role the service assumes. */
  role_arn: string;
  /** Needed for event-bus types; omit for queue-only requests. */
  eb_to_fh_role_arn?: string;
  aws_region: DeploymentRegion | string;
}

/** `attributes.meta` of a unified pipeline result. Keep it whole: update and delete rely on it. */
export interface UnifiedPipelineMeta {
  shared_pipeline_id?: string;
  s3_bucket_name?: string;
  s3_notification_prefix?: string;
  s3_notification_queue_arn?: string;
  s3_notification_configuration_id?: string;
  sqs_destination_id?: string;
  eventbridge_destination_id?: string;
  eventbridge_pipe_arn?: string;
  firehose_arn?: string;
  eventbridge_pipeline_id?: string;
  event_bus_name?: string;
  eventbridge_rule_id?: string;
  eventbridge_target_id?: string;
  /** Further identifiers (`sqs_*`, ...) as the service returns them. */
  [key: string]: unknown;
}

/** Unified create/update result (the 207 body's `attributes`, flattened). */
export interface UnifiedPipelineResult {
  /** Notification type -> upstream subscription ID, for successes. */
  subscriptions: Record<string, string>;
  /** Notification type -> upstream error details, for failures (empty when all succeeded). */
  failed: Record<string, unknown>;
  meta: UnifiedPipelineMeta;
}

/** Body attributes of a legacy pipeline PATCH. */
export interface LegacyPipelineRequest {
  queue_arn: string;
  notification_types: string[];
}

/** Legacy update result (`attributes`, flattened). */
export interface LegacyPipelineResult {
  subscriptions: Record<string, string>;
  /** Queue destination registered upstream; keep it for cleanup. */
  destination_id: string;
}

// ---------------------------------------------------------------------------
// Catalog
// ---------------------------------------------------------------------------

/** Product card (list item), as on the wire. */
export interface ProductCard {
  id: number;
  name: string;
  summary: string;
  payloads: string[];
}

/** One `backend_info[]` record. */
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

/** One `history_info[]` record. */
export interface HistoryInfo {
  stage_id: number;
  subproduct_id: string;
  /** Maximum days of history that can be requested for the stage. */
  days: number;
  schedule_offset: number | null;
  /** Maximum age in days of a single data request for the stage. */
  max_request_time: number;
}

/** One `stages[]` record. */
export interface ProductStage {
  name: string;
  stage_id: number;
  restricted_to: string[] | null;
}

/** Product definition (catalog detail), as on the wire. */
export interface ProductDefinition {
  id: number;
  product_group_id: number;
  name: string;
  summary: string;
  description: string | null;
  worker_name: string | null;
  remote_identity_type_name: string | null;
  remote_identity_type_id: number | null;
  is_storage_product: 0 | 1;
  active: 0 | 1;
  allow_as_trial: 0 | 1;
  premium_product: 0 | 1;
  initialize_job: 0 | 1;
  subscription_info: { spm_requirements: string[] } | null;
  backend_info: BackendInfo[] | null;
  history_info: HistoryInfo[] | null;
  stages: ProductStage[] | null;
}

/** Payload record of the products service, flattened. */
export interface PayloadRecord {
  id: string;
  name: string;
  stage_id: number;
}

// ---------------------------------------------------------------------------
// Lookups
// ---------------------------------------------------------------------------

/** Own account, flattened (use `id` as subscription `account`). */
export interface AccountRecord {
  id: string;
  name?: string;
}

/** Own user, flattened (use `id` as subscription `user`). */
export interface UserRecord {
  id: string;
  email?: string;
}

/** Remote identity, flattened (use `id` as `remote_identity` and as the `remote_identity_id` meta string). */
export interface RemoteIdentity {
  id: string;
  name?: string;
  /** 17 = seller, 18 = vendor. */
  remote_identity_type_id?: number;
  remote_identity_type_name?: string;
  /**
   * `1` when the seller revoked access or the identity's token expired; the seller must re-authorize it (vendor reads
   * only: absent under minimal reads, when the health is unknown).
   */
  invalid_identity?: number;
  /** When the service found the identity invalid (ISO 8601), `null` while it is valid (vendor reads only). */
  invalidated_at?: string | null;
}

/** Storage destination, flattened (use `id` as `storage_group`). */
export interface Storage {
  id: string;
  name?: string;
  status?: string;
  /** Storage product ID. */
  product?: number;
}

/**
 * Product record of the subscriptions service, flattened. `relationships.remote_identity_type.data`
 * becomes `remote_identity_type` (null when the product needs no remote identity).
 */
export interface ProductRecord {
  id: string;
  active: 0 | 1;
  name: string;
  is_storage_product: 0 | 1;
  required_meta_fields: string[];
  remote_identity_type: { type: string; id: string } | null;
}

// ---------------------------------------------------------------------------
// Subscriptions
// ---------------------------------------------------------------------------

/** Subscription status. */
export type SubscriptionStatus = 'active' | 'cancelled' | 'paused' | 'invalid';

/** A subscription, flattened. */
export interface Subscription {
  /** Guaranteed by the spec. */
  id: string;
  // Not shown by the spec beyond `id` and `status`: the fields below are present only where the service shows
  // them (the vendor's v2 reads: `product_id`, `remote_identity_id`, ... copied here); use them only to cross-check.
  account?: number;
  user?: number;
  product?: number;
  name?: string | null;
  /** Guaranteed by the spec. */
  status: SubscriptionStatus;
  date_start?: string;
  date_end?: string | null;
  remote_identity?: number | null;
  storage_group?: number | null;
  /** Flat key/value map; every value a string. Not shown by the spec nor by the vendor's v2 reads. */
  product_parameters?: Record<string, string>;
}

/** Attributes of `POST /v2/sub`. */
export interface SubscriptionCreateV2 {
  account: Id;
  user: Id;
  product: Id;
  name?: string;
  /** Default `active`. */
  status?: SubscriptionStatus;
  /** ISO 8601 datetime. */
  date_start: string;
  remote_identity?: Id;
  storage_group?: Id;
  /** Flat string map (e.g. `stage_ids` from `encodeStageIds`). */
  product_parameters?: Record<string, string>;
}

/** One entry of `subscription_product_meta_attributes` (unversioned form). */
export interface SubscriptionMetaAttribute {
  data_id: number;
  data_key: string;
  data_value: string;
  /** `STRING` */
  data_format: string;
  product: number;
}

/** Attributes of `POST /sub` (unversioned form). */
export interface SubscriptionCreateUnversioned {
  account: Id;
  user: Id;
  product: Id;
  name?: string;
  /** Default `active`. */
  status?: SubscriptionStatus;
  date_start: string;
  date_end?: string;
  remote_identity?: Id;
  storage_group?: Id;
  subscription_product_meta_attributes?: SubscriptionMetaAttribute[];
}

/** Changed attributes of `PATCH /v2/sub/{id}`; `product_parameters` is a partial merge. */
export interface SubscriptionUpdate {
  name?: string;
  status?: SubscriptionStatus;
  date_start?: string;
  remote_identity?: Id;
  storage_group?: Id;
  product_parameters?: Record<string, string>;
}

// ---------------------------------------------------------------------------
// History
// ---------------------------------------------------------------------------

/** HistoryTransaction status. */
export type HistoryStatus = 'pending' | 'processing' | 'completed' | 'failed' | 'cancelled';

/** Attributes of a history create: either `dates`, or both `start_date` and `end_date`. */
export interface HistoryCreate {
  /** YYYY-MM-DD */
  start_date?: string;
  /** YYYY-MM-DD */
  end_date?: string;
  /** YYYY-MM-DD each; instead of a range. */
  dates?: string[];
  product_id?: Id;
  /** Omitted = all stages. */
  stage_id?: Id;
  /** `YYYY-MM-DD HH:MM:SS` */
  start_time?: string;
}

/** A HistoryTransaction, flattened. */
export interface HistoryTransaction {
  id: string;
  status: HistoryStatus;
  subscription_id?: number;
  start_date?: string | null;
  end_date?: string | null;
  dates?: string[] | null;
  stage_id?: number | null;
  product_id?: number | null;
  start_time?: string | null;
  /** Unix seconds. */
  created_at?: number;
  error_message?: string | null;
}

// ---------------------------------------------------------------------------
// Jobs
// ---------------------------------------------------------------------------

/** Attributes of a secondary (product) job create. */
export interface SecondaryJobAttributes {
  is_primary: false;
  /** YYYY-MM-DD */
  valid_date_start: string;
  /** YYYY-MM-DD, equal to valid_date_start. */
  valid_date_end: string;
  stage_id: number;
  /** `JSON.stringify({ order_ids: [...] })` */
  extra_context: string;
  request_start: 1;
  request_end: 0;
  /** Cron expression. */
  schedule: string;
}

/** A job, flattened. */
export interface Job {
  id: string;
  is_primary: boolean;
  subscription_id?: number;
  parent_job_id?: string | null;
  stage_id?: number;
  valid_date_start?: string;
  valid_date_end?: string;
  extra_context?: string;
  request_start?: number;
  request_end?: number;
  schedule?: string;
}
