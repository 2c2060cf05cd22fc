/** The shapes of the records the emulator can be seeded with (fixtures.ts loads them; default-fixtures.ts holds the defaults). */

/** Records the emulator can be seeded with (all optional; merged over the defaults). */
export interface AccountFixture { id: number; name?: string }
export interface UserFixture {
  id: number;
  account: number;
  /** The user's email address (`email_address` in vendor reads). */
  email?: string;
  /** Vendor reads: given name (default ''). */
  first_name?: string;
  /** Vendor reads: family name (default ''). */
  last_name?: string;
  /** Vendor reads: 1 for an account administrator (default 0). */
  is_admin?: 0 | 1;
}
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
  /**
   * Other accounts the identity is shared with (the vendor's "shared remote identities"): they see it in `GET /sri`
   * and `GET /ri/{id}` and may attach it to a subscription, but not in `GET /ri` (the identities created by the
   * account). Default none.
   */
  shared_with?: number[];
}
/**
 * A remote identity type (the vendor's `GET /rit`). Types named by a product's or an identity's
 * `remote_identity_type_id` are listed without one (name: their `remote_identity_type_name`).
 */
export interface RemoteIdentityTypeFixture {
  id: number;
  name: string;
  /** Vendor reads: the provider's auth service identifier. Default `''`. */
  auth_service?: string;
}
/** The formats of a remote identity meta record (vendor doc remote-identity-api.md, `meta_format` filter of `GET /rim`). */
export type RemoteIdentityMetaFormat = 'STRING' | 'JSON' | 'ENCRYPTED_STRING' | 'ENCRYPTED_JSON';
/**
 * A remote identity meta record (the vendor's `RemoteIdentityMeta`, `GET /rim` and `GET /ri/{id}/rim-overview` in
 * vendor reads): one configuration or credential value of an identity. The emulator holds only what fixtures give
 * it and answers `meta_value` as given (an `ENCRYPTED_*` value is the ciphertext a fixture holds, never invented).
 */
export interface RemoteIdentityMetaFixture {
  id: number;
  /** The identity the record belongs to. */
  remote_identity: number;
  /** The vendor's meta key number (e.g. 26 client_id, 31 region, 32 selling_partner_id; tutorials/amazon-identities). */
  remote_identity_type_meta_key: number;
  /** The meta key's name. Default: the vendor's name of the key (see docs/emulator.md), else `meta_key_<n>`. */
  key_name?: string;
  meta_value: string;
  meta_format: RemoteIdentityMetaFormat;
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
  remoteIdentityTypes?: RemoteIdentityTypeFixture[];
  /** Remote identity meta records (`GET /rim`, `GET /ri/{id}/rim-overview`, vendor reads). */
  remoteIdentityMeta?: RemoteIdentityMetaFixture[];
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
