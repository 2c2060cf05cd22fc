import { ServiceError } from './errors';
import { DpiClientOptions, HttpCore, HttpSettings, RequestSpec, resolveSettings, TokenCache } from './http';
import { txSearchParams, validateTxQuery } from './tx';
import {
  AccountRecord, AsinValidation, HistoryCreate, HistoryTransaction, Id, Job, LegacyPipelineRequest, LegacyPipelineResult,
  Marketplace, PayloadRecord, PrivateAppCredentials, ProductCard, ProductDefinition, ProductRecord, RemoteIdentity,
  SecondaryJobAttributes, Storage, Subscription, SubscriptionCreateUnversioned, SubscriptionCreateV2, SubscriptionUpdate,
  TxPage, TxQuery, TxRecord, UnifiedPipelineRequest, UnifiedPipelineResult, UserRecord,
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
  /** `GET /v2/sub[?product=]` (all statuses). */
  list(q?: { product?: number | string }): Promise<Subscription[]>;
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

const HISTORY = '/service/history/production/history';

/** Encodes an ID as one URL path segment. */
function seg(id: Id): string {
  const s = String(id);
  if (s === '') throw new Error('an ID must not be empty');
  return encodeURIComponent(s);
}

/** Converts an ID to the JSON integer the wire expects (numeric strings accepted). */
function int(name: string, v: Id): number {
  const n = typeof v === 'number' ? v : /^\s*-?\d+\s*$/.test(v) ? Number(v) : NaN;
  if (!Number.isSafeInteger(n)) throw new Error(`${name} must be an integer ID, got ${JSON.stringify(v)}`);
  return n;
}

/** Returns `body.data` when the body is an envelope, else the body. */
function unwrap(body: unknown): unknown {
  if (body && typeof body === 'object' && !Array.isArray(body) && 'data' in body) return (body as { data: unknown }).data;
  return body;
}

/** Flattens a JSON:API-style resource into `{ ...attributes, id: string }`. */
function flat<T>(r: unknown): T {
  if (!r || typeof r !== 'object') throw new Error(`unexpected response: ${JSON.stringify(r)?.slice(0, 200)}`);
  const o = r as { id?: unknown; attributes?: unknown; type?: unknown };
  if (o.attributes && typeof o.attributes === 'object') {
    return { ...(o.attributes as object), id: o.id === undefined || o.id === null ? '' : String(o.id) } as T;
  }
  const { type: _type, ...rest } = o as Record<string, unknown>;
  void _type;
  return { ...rest, id: o.id === undefined || o.id === null ? '' : String(o.id) } as T;
}

function list(body: unknown): unknown[] {
  const d = unwrap(body);
  if (!Array.isArray(d)) throw new Error(`unexpected response: expected a list, got ${JSON.stringify(d)?.slice(0, 200)}`);
  return d;
}

function attrsOf(body: unknown): Record<string, unknown> {
  let d = unwrap(body);
  if (Array.isArray(d)) d = d[0];
  if (d && typeof d === 'object' && 'attributes' in d) d = (d as { attributes: unknown }).attributes;
  return d && typeof d === 'object' ? d as Record<string, unknown> : {};
}

function productRecord(r: unknown): ProductRecord {
  const base = flat<ProductRecord & { relationships?: unknown }>(r);
  const rel = (r as { relationships?: { remote_identity_type?: { data?: unknown } } }).relationships;
  const data = rel?.remote_identity_type?.data;
  const rit = data && typeof data === 'object'
    ? { type: String((data as { type?: unknown }).type ?? 'RemoteIdentityType'), id: String((data as { id?: unknown }).id) }
    : null;
  return { ...base, remote_identity_type: base.remote_identity_type ?? rit };
}

function pipelineResult(body: unknown): UnifiedPipelineResult {
  const a = attrsOf(body);
  return {
    ...a,
    subscriptions: (a.subscriptions ?? {}) as Record<string, string>,
    failed: (a.failed ?? {}) as Record<string, unknown>,
    meta: (a.meta ?? {}) as UnifiedPipelineResult['meta'],
  };
}

function notificationTypes(body: unknown): string[] {
  const a = attrsOf(body);
  const t = a.notification_types ?? unwrap(body);
  if (!Array.isArray(t)) throw new Error('unexpected response: no notification_types list');
  return t.map(String);
}

/**
 * Typed client of the Data Pipeline Integration Service.
 *
 * Every record is returned flattened (`{ id: string, ...attributes }`, see `types.ts`); IDs are accepted as
 * `string | number`. Failures throw `ServiceError` (never containing a token); invalid transaction queries
 * throw `TxQueryError` before anything is sent.
 *
 * Auth: the refresh token is exchanged at `POST {authUrl}/auth/api/ref` on first use; the JWT is cached until
 * 60 s before its `exp` and shared by concurrent calls (one exchange in flight); a 401 triggers one new exchange
 * and one retry of the call.
 *
 * Retries: 429 (honouring `Retry-After`), 502/503/504, connection errors and timeouts, with exponential backoff
 * and full jitter, up to `maxAttempts` and never past `deadline`. Creating POSTs are not repeated after an
 * ambiguous failure (`ServiceError.ambiguous`).
 */
export class DpiClient {
  /** Transactions (read only). */
  public readonly tx: TxApi;
  /** Marketplace lookups and credential checks. */
  public readonly marketplace: MarketplaceApi;
  /** Unified notification pipelines (product 107). */
  public readonly notifications: NotificationsApi;
  /** Legacy notification pipelines (product 86). */
  public readonly legacyNotifications: LegacyNotificationsApi;
  /** Product catalog. */
  public readonly catalog: CatalogApi;
  /** `GET {accountUrl}/account`. */
  public readonly account: { get(): Promise<AccountRecord> };
  /** `GET {userUrl}/user`. */
  public readonly user: { get(): Promise<UserRecord> };
  /** `GET {remoteIdentityUrl}/sri` (default) or `/ri`. */
  public readonly remoteIdentities: { list(opts?: { path?: 'sri' | 'ri' }): Promise<RemoteIdentity[]> };
  /** `GET {subscriptionsUrl}/storages?status=active` or `/v2/storages?status=active` (`v2: true`). */
  public readonly storages: { list(opts?: { v2?: boolean }): Promise<Storage[]> };
  /** Products of the subscriptions service. */
  public readonly products: {
    /** `GET /v2/product[?is_storage_product=]`. */
    list(q?: { isStorageProduct?: 0 | 1 }): Promise<ProductRecord[]>;
    /** `GET /product` (unversioned). */
    listUnversioned(): Promise<ProductRecord[]>;
    /** `GET /v2/product/{id}`. */
    get(productId: Id): Promise<ProductRecord>;
  };
  /** Subscriptions. */
  public readonly subscriptions: SubscriptionsApi;
  /** History (backfill) requests. */
  public readonly history: HistoryApi;
  /** Product jobs. */
  public readonly jobs: JobsApi;

  private readonly core: HttpCore;

  constructor(opts: DpiClientOptions);
  /** @internal */
  constructor(opts: DpiClientOptions, shared: { settings: HttpSettings; tokens: TokenCache });
  constructor(opts: DpiClientOptions, shared?: { settings: HttpSettings; tokens: TokenCache }) {
    this.core = shared
      ? new HttpCore(shared.settings, shared.tokens)
      : new HttpCore(resolveSettings(opts), new TokenCache(opts.refreshToken));
    const req = (spec: RequestSpec): Promise<unknown> => this.core.request(spec).then((r) => r.body);
    const base = (method: RequestSpec['method'], path: string, extra: Partial<RequestSpec> = {}): Promise<unknown> =>
      req({ method, service: 'baseUrl', path, ...extra });
    const subs = (method: RequestSpec['method'], path: string, extra: Partial<RequestSpec> = {}): Promise<unknown> =>
      req({ method, service: 'subscriptionsUrl', path, ...extra });

    const listPage = async (q: TxQuery): Promise<TxPage> => {
      validateTxQuery(q);
      const body = await base('GET', '/service/transactions/tx', { query: txSearchParams(q) }) as
        { data?: unknown; meta?: { next_cursor?: unknown } } | undefined;
      const records = (Array.isArray(body?.data) ? body.data : []).map((r) => flat<TxRecord>(r));
      const next = body?.meta?.next_cursor;
      return { records, nextCursor: typeof next === 'string' && next !== '' ? next : null };
    };
    async function* pages(q: TxQuery): AsyncGenerator<TxPage> {
      validateTxQuery(q);
      let cursor = q.cursor;
      const seen = new Set<string>();
      for (;;) {
        const page = await listPage({ ...q, cursor });
        yield page;
        if (page.nextCursor === null) return;
        if (seen.has(page.nextCursor)) throw new Error('transaction listing returned a cursor it had returned before; stopping to avoid a loop');
        seen.add(page.nextCursor);
        cursor = page.nextCursor;
      }
    }
    this.tx = {
      listPage,
      pages,
      iterate: async function* (q: TxQuery): AsyncGenerator<TxRecord> {
        for await (const page of pages(q)) yield* page.records;
      },
    };

    const service = (attributes: object): object => ({ data: { type: 'Service', attributes } });
    this.marketplace = {
      listMarketplaces: async (ri) => list(await base('GET', `/service/sp/marketplaces/${seg(ri)}`)) as Marketplace[],
      spId: async (creds) => {
        const a = attrsOf(await base('POST', '/service/sp/sp-id', { body: service(creds) }));
        if (typeof a.selling_partner_id !== 'string') throw new Error('sp-id response has no selling_partner_id');
        return a.selling_partner_id;
      },
      validateAsins: async (ri, asins) => {
        const d = unwrap(await base('POST', `/service/sp/validate-asins/${seg(ri)}`, { body: service({ asins }) })) as Partial<AsinValidation>;
        return { ...d, valid_asins: d?.valid_asins ?? [], invalid_asins: d?.invalid_asins ?? [] };
      },
      validateCreds: async (creds) => {
        try {
          await base('POST', '/service/sp/validate-creds', { body: service(creds) });
          return true;
        } catch (e) {
          if (e instanceof ServiceError && e.status === 400) return false;
          throw e;
        }
      },
    };

    const unified = '/service/sp/notifications-unified';
    this.notifications = {
      listTypes: async (t) => notificationTypes(await base('GET', `${unified}/list-notification-types`,
        { query: new URLSearchParams({ account_type: t }) })),
      create: async (ri, body) => pipelineResult(await base('POST', `${unified}/${seg(ri)}`, { body: service(body), creating: true })),
      update: async (ri, sub, body) => pipelineResult(await base('PATCH', `${unified}/${seg(ri)}/${seg(sub)}`, { body: service(body) })),
      delete: async (ri, sub) => { await base('DELETE', `${unified}/${seg(ri)}/${seg(sub)}`); },
    };
    const legacy = '/service/sp/notifications';
    this.legacyNotifications = {
      listTypes: async (t) => notificationTypes(await base('GET', `${legacy}/list-notification-types`,
        { query: new URLSearchParams({ account_type: t }) })),
      update: async (ri, sub, body) => {
        const a = attrsOf(await base('PATCH', `${legacy}/${seg(ri)}/${seg(sub)}`, { body: service(body) }));
        return { ...a, subscriptions: (a.subscriptions ?? {}) as Record<string, string>, destination_id: String(a.destination_id ?? '') };
      },
      delete: async (ri, sub) => { await base('DELETE', `${legacy}/${seg(ri)}/${seg(sub)}`); },
    };

    this.catalog = {
      listCards: async () => list(await base('GET', '/service/product-cards/card')) as ProductCard[],
      getCard: async (id) => unwrap(await base('GET', `/service/product-cards/card/${seg(id)}`)) as ProductDefinition,
      listPayloads: async (id, q = {}) => {
        const query = new URLSearchParams();
        if (q.stageIdGte !== undefined) query.set('stage_id__gte', String(q.stageIdGte));
        if (q.enabled !== undefined) query.set('enabled', q.enabled ? 'true' : 'false');
        return list(await base('GET', `/service/products/product/${seg(id)}/payloads`, { query })).map((r) => flat<PayloadRecord>(r));
      },
    };

    this.account = { get: async () => flat<AccountRecord>(unwrap(await req({ method: 'GET', service: 'accountUrl', path: '/account' }))) };
    this.user = { get: async () => flat<UserRecord>(unwrap(await req({ method: 'GET', service: 'userUrl', path: '/user' }))) };
    this.remoteIdentities = {
      list: async (o = {}) => list(await req({ method: 'GET', service: 'remoteIdentityUrl', path: `/${o.path ?? 'sri'}` }))
        .map((r) => flat<RemoteIdentity>(r)),
    };
    this.storages = {
      list: async (o = {}) => list(await subs('GET', o.v2 ? '/v2/storages' : '/storages', { query: new URLSearchParams({ status: 'active' }) }))
        .map((r) => flat<Storage>(r)),
    };
    this.products = {
      list: async (q = {}) => {
        const query = new URLSearchParams();
        if (q.isStorageProduct !== undefined) query.set('is_storage_product', String(q.isStorageProduct));
        return list(await subs('GET', '/v2/product', { query })).map(productRecord);
      },
      listUnversioned: async () => list(await subs('GET', '/product')).map(productRecord),
      get: async (id) => productRecord(unwrap(await subs('GET', `/v2/product/${seg(id)}`))),
    };

    const subAttrs = (a: SubscriptionCreateV2 | SubscriptionCreateUnversioned): Record<string, unknown> => {
      const out: Record<string, unknown> = { ...a, status: a.status ?? 'active' };
      for (const k of ['account', 'user', 'product', 'remote_identity', 'storage_group'] as const) {
        const v = (a as unknown as Record<string, Id | undefined>)[k];
        if (v !== undefined) out[k] = int(k, v);
      }
      return out;
    };
    const subEnv = (attributes: Record<string, unknown>, id?: Id): object =>
      ({ data: { type: 'Subscription', ...(id !== undefined ? { id: String(id) } : {}), attributes } });
    this.subscriptions = {
      list: async (q = {}) => {
        const query = new URLSearchParams();
        if (q.product !== undefined) query.set('product', String(q.product));
        return list(await subs('GET', '/v2/sub', { query })).map((r) => flat<Subscription>(r));
      },
      listByAccount: async (accountId) => list(await subs('GET', '/sub', { query: new URLSearchParams({ account: String(accountId) }) }))
        .map((r) => flat<Subscription>(r)),
      get: async (id) => flat<Subscription>(unwrap(await subs('GET', `/sub/${seg(id)}`))),
      create: async (attrs) => flat<Subscription>(unwrap(await subs('POST', '/v2/sub', { body: subEnv(subAttrs(attrs)), creating: true }))),
      createUnversioned: async (attrs) => flat<Subscription>(unwrap(await subs('POST', '/sub', { body: subEnv(subAttrs(attrs)), creating: true }))),
      update: async (id, changed) => {
        const attributes: Record<string, unknown> = { ...changed };
        for (const k of ['remote_identity', 'storage_group'] as const) {
          if (changed[k] !== undefined) attributes[k] = int(k, changed[k] as Id);
        }
        return flat<Subscription>(unwrap(await subs('PATCH', `/v2/sub/${seg(id)}`, { body: subEnv(attributes, id) })));
      },
    };

    const histEnv = (attributes: object, id?: Id): object =>
      ({ data: { type: 'HistoryTransaction', ...(id !== undefined ? { id: String(id) } : {}), attributes } });
    this.history = {
      create: async (subId, attrs) => {
        const attributes: Record<string, unknown> = { ...attrs };
        if (attrs.stage_id !== undefined) attributes.stage_id = int('stage_id', attrs.stage_id);
        if (attrs.product_id !== undefined) attributes.product_id = int('product_id', attrs.product_id);
        return flat<HistoryTransaction>(unwrap(await base('POST', `${HISTORY}/${seg(subId)}`, { body: histEnv(attributes), creating: true })));
      },
      get: async (id) => flat<HistoryTransaction>(unwrap(await base('GET', `${HISTORY}/${seg(id)}`))),
      statusBySubscription: async (subId) => list(await base('GET', `${HISTORY}/status/${seg(subId)}`)).map((r) => flat<HistoryTransaction>(r)),
      cancel: async (id, o = {}) => {
        const path = o.path === 'status' ? `${HISTORY}/status/${seg(id)}` : `${HISTORY}/${seg(id)}`;
        return flat<HistoryTransaction>(unwrap(await base('PATCH', path, { body: histEnv({ status: 'cancelled' }, id) })));
      },
      cancelAll: async (subId) => list(await base('PATCH', `${HISTORY}/status/${seg(subId)}`, { body: histEnv({ status: 'cancelled' }, subId) }))
        .map((r) => flat<HistoryTransaction>(r)),
      maxRequest: async () => {
        const a = attrsOf(await base('GET', `${HISTORY}/meta/max-request`));
        const n = Number(a.max_request);
        if (!Number.isFinite(n)) throw new Error('max-request response has no numeric max_request');
        return n;
      },
    };

    this.jobs = {
      list: async (q) => {
        if (!q || !Array.isArray(q.subscriptionIds) || q.subscriptionIds.length === 0) throw new Error('jobs.list: subscriptionIds must not be empty');
        const query = new URLSearchParams({ subscription_ids: q.subscriptionIds.map(String).join(',') });
        if (q.stageId !== undefined) query.set('stage_id', String(q.stageId));
        return list(await base('GET', '/service/jobs/jobs', { query })).map((r) => flat<Job>(r));
      },
      createSecondary: async (primary, attrs) =>
        flat<Job>(unwrap(await base('POST', `/service/jobs/jobs/${seg(primary)}`, { body: { data: { type: 'Job', attributes: attrs } }, creating: true }))),
    };
  }

  /** Returns a copy of this client with another deadline (epoch ms, or undefined for none); shares the token cache. */
  public withDeadline(deadline: number | undefined): DpiClient {
    const settings: HttpSettings = { ...this.core.settings, deadline };
    return new DpiClient({ endpoints: settings.endpoints, refreshToken: '' }, { settings, tokens: this.core.tokens });
  }
}
