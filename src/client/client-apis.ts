/**
 * The interfaces of the service client's groups of calls (`DpiClient.tx`, `.subscriptions`, ...): what each call
 * sends and answers. The implementation is client.ts.
 */
import type {
  AsinValidation, HistoryCreate, HistoryTransaction, Id, Job, LegacyPipelineRequest, LegacyPipelineResult,
  Marketplace, PayloadRecord, PrivateAppCredentials, ProductCard, ProductDefinition, SecondaryJobAttributes,
  Subscription, SubscriptionCreateUnversioned, SubscriptionCreateV2, SubscriptionUpdate, TxPage, TxQuery, TxRecord,
  UnifiedPipelineRequest, UnifiedPipelineResult,
} from './types';

/** Account type of a marketplace seller identity. */
export type AccountType = 'seller' | 'vendor';

/** Transactions (read only). */
export interface TxApi {
  /** One page of `GET /service/transactions/tx`. The query is validated first (`TxQueryError`). */
  listPage(q: TxQuery): Promise<TxPage>;
  /** Every record of every page (follows `meta.next_cursor` until null, through empty pages). */
  iterate(q: TxQuery): AsyncGenerator<TxRecord>;
  /** Every page (follows `meta.next_cursor` until null; subscription, filters and tree kept on each page). */
  pages(q: TxQuery): AsyncGenerator<TxPage>;
}

/** Marketplace seller integration (lookups and checks). */
export interface MarketplaceApi {
  /** `GET /service/sp/marketplaces/{remote_identity_id}` (seller or vendor identity). */
  listMarketplaces(remoteIdentityId: Id): Promise<Marketplace[]>;
  /** `POST /service/sp/sp-id`: the selling partner ID of private application credentials. */
  spId(creds: PrivateAppCredentials): Promise<string>;
  /** `POST /service/sp/validate-asins/{remote_identity_id}`. */
  validateAsins(remoteIdentityId: Id, asins: string[]): Promise<AsinValidation>;
  /** `POST /service/sp/validate-creds`: true on 204, false on 400; other failures throw. */
  validateCreds(creds: PrivateAppCredentials): Promise<boolean>;
}

/** Unified notification pipelines (product 107). */
export interface NotificationsApi {
  /** `GET .../notifications-unified/list-notification-types?account_type=`. */
  listTypes(accountType: AccountType): Promise<string[]>;
  /** `POST .../notifications-unified/{remote_identity_id}` (creating: never blindly repeated). Resolves on 207; inspect `failed`. */
  create(remoteIdentityId: Id, body: UnifiedPipelineRequest): Promise<UnifiedPipelineResult>;
  /** `PATCH .../notifications-unified/{remote_identity_id}/{subscription_id}` with the full create body. */
  update(remoteIdentityId: Id, subscriptionId: Id, body: UnifiedPipelineRequest): Promise<UnifiedPipelineResult>;
  /** `DELETE .../notifications-unified/{remote_identity_id}/{subscription_id}` (204). */
  delete(remoteIdentityId: Id, subscriptionId: Id): Promise<void>;
}

/** Legacy notification pipelines (product 86; modify or delete only). */
export interface LegacyNotificationsApi {
  /** `GET .../notifications/list-notification-types?account_type=`. */
  listTypes(accountType: AccountType): Promise<string[]>;
  /** `PATCH .../notifications/{remote_identity_id}/{subscription_id}` (replaces by delete + re-create). */
  update(remoteIdentityId: Id, subscriptionId: Id, body: LegacyPipelineRequest): Promise<LegacyPipelineResult>;
  /** `DELETE .../notifications/{remote_identity_id}/{subscription_id}` (204). */
  delete(remoteIdentityId: Id, subscriptionId: Id): Promise<void>;
}

/** Product catalog. */
export interface CatalogApi {
  /** `GET /service/product-cards/card`: cards of all active products. */
  listCards(): Promise<ProductCard[]>;
  /** `GET /service/product-cards/card/{product_id}` (404 -> ServiceError status 404). */
  getCard(productId: Id): Promise<ProductDefinition>;
  /** `GET /service/products/product/{product_id}/payloads` (`stage_id__gte`, `enabled`). */
  listPayloads(productId: Id, q?: { stageIdGte?: number; enabled?: boolean }): Promise<PayloadRecord[]>;
}

/** Subscriptions service. */
export interface SubscriptionsApi {
  /**
   * `GET /v2/sub[?product=][&remote_identity=]` (all statuses). `remoteIdentity` is the vendor's documented filter (the
   * spec shows `product` only): a service that ignores it answers every subscription of the product, so a caller
   * treats the answer as a superset and checks the identity where a read shows it.
   */
  list(q?: { product?: number | string; remoteIdentity?: number | string }): Promise<Subscription[]>;
  /** `GET /sub?account=`. */
  listByAccount(accountId: Id): Promise<Subscription[]>;
  /** `GET /sub/{id}`. */
  get(id: Id): Promise<Subscription>;
  /** `POST /v2/sub` (creating; `status` defaults to `active`). */
  create(attrs: SubscriptionCreateV2): Promise<Subscription>;
  /** `POST /sub`, unversioned form with the meta array (creating; `status` defaults to `active`). */
  createUnversioned(attrs: SubscriptionCreateUnversioned): Promise<Subscription>;
  /** `PATCH /v2/sub/{id}` with only the changed attributes (`product_parameters` merges). */
  update(id: Id, changed: SubscriptionUpdate): Promise<Subscription>;
}

/**
 * Stored product parameters of subscriptions (the vendor's "Subscription Product Parameters" reads, `GET /v2/spp` and
 * `GET /v2/spp/bulk`). NOT in the service specification: an ASSUMPTION from the vendor's public docs, used only to see
 * more. Every method answers `undefined` ("not shown") when the service does not serve the route (404, 405 or 400),
 * never an error; other failures (429 after retries, 5xx, connection) are thrown as `ServiceError`.
 */
export interface SubscriptionParametersApi {
  /**
   * `GET /v2/spp?subscription_id=ID`: the subscription's stored `data_key -> data_value` map (values are the stored
   * strings, e.g. `stage_ids: '[1000]'`). `undefined`: not shown (route not served, or the subscription is missing:
   * the two are not told apart; read the subscription itself for that).
   */
  get(subscriptionId: Id): Promise<Record<string, string> | undefined>;
  /**
   * `GET /v2/spp/bulk?subscription_ids=...` in chunks of 100 (one call per chunk): each subscription's stored map,
   * keyed by subscription ID. The vendor's bulk read is all-or-nothing: when a chunk answers 404 naming the
   * unresolved IDs, the chunk is read once more without them (those are left out of the map). `undefined`: not
   * shown (the service does not serve the route).
   */
  bulk(subscriptionIds: readonly Id[]): Promise<Map<string, Record<string, string>> | undefined>;
}

/** Most subscription IDs one bulk parameter read accepts. */
export const MAX_PARAMETER_READ_IDS = 100;

/** History (backfill) requests. */
export interface HistoryApi {
  /** `POST H/{subscription_id}` (creating). See `validateHistoryRequest` to check it first. */
  create(subscriptionId: Id, attrs: HistoryCreate): Promise<HistoryTransaction>;
  /** `GET H/{transaction_id}`. */
  get(txId: Id): Promise<HistoryTransaction>;
  /** `GET H/status/{subscription_id}`. */
  statusBySubscription(subscriptionId: Id): Promise<HistoryTransaction[]>;
  /**
   * Cancels one transaction: `PATCH H/{id}` (path `id`, default) or `PATCH H/status/{id}` (path `status`);
   * body `{ id, attributes: { status: 'cancelled' } }`.
   */
  cancel(txId: Id, opts?: { path?: 'id' | 'status' }): Promise<HistoryTransaction>;
  /** `PATCH H/status/{subscription_id}` with status `cancelled` (body `id` = the subscription ID); returns those changed. */
  cancelAll(subscriptionId: Id): Promise<HistoryTransaction[]>;
  /** `GET H/meta/max-request`: maximum number of active history requests. */
  maxRequest(): Promise<number>;
}

/** Product jobs. */
export interface JobsApi {
  /** `GET /service/jobs/jobs?subscription_ids=a,b[&stage_id=]`. */
  list(q: { subscriptionIds: Id[]; stageId?: number }): Promise<Job[]>;
  /** `POST /service/jobs/jobs/{primary_job_id}` (creating; see `planOrderJobBatches`). */
  createSecondary(primaryJobId: Id, attrs: SecondaryJobAttributes): Promise<Job>;
}
