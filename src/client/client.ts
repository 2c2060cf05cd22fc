import {
  TxApi, MarketplaceApi, NotificationsApi, LegacyNotificationsApi, CatalogApi, SubscriptionsApi,
  SubscriptionParametersApi, MAX_PARAMETER_READ_IDS, HistoryApi, JobsApi,
} from './client-apis';
import {
  LIST_PAGE_SIZE, MAX_LIST_PAGES, attrsOf, flat, int, isObject, list, nextPageOf, notServed, notificationTypes,
  parametersOf, pipelineResult, productRecord, record, seg, single, unresolvedIds, unwrap,
} from './client-parse';
import { ServiceError } from './errors';
import { createHealthchecksApi, HealthchecksApi } from './healthchecks';
import { DpiClientOptions, HttpCore, HttpSettings, RequestSpec, resolveSettings, TokenCache } from './http';
import { txSearchParams, validateTxQuery } from './tx';
import {
  AccountRecord, AsinValidation, HistoryTransaction, Id, Job, Marketplace, PayloadRecord, ProductCard,
  ProductDefinition, ProductRecord, RemoteIdentity, Storage, Subscription, SubscriptionCreateUnversioned,
  SubscriptionCreateV2, TxPage, TxQuery, TxRecord, UserRecord,
} from './types';

export { LIST_PAGE_SIZE, MAX_LIST_PAGES, nextPageOf } from './client-parse';

const HISTORY = '/service/history/production/history';

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
 * Retries: a 429 is waited out as the vendor documents (`Retry-After`, then doubling up to 5 minutes, +-15% jitter;
 * see `RATE_LIMIT`), for as long as the next wait fits before the `deadline`, else within `maxRateLimitWaitMs`, and
 * reported to `onWait`; 500/502/503/504, connection errors and timeouts with exponential backoff and full jitter;
 * with a `deadline` the budget is the deadline, else `maxAttempts`. Creating POSTs are
 * not repeated after an ambiguous failure (`ServiceError.ambiguous`). Every list follows the vendor pagination.
 * Reads are typed with `id` (and `status`) as the only guaranteed fields: the spec shows no more.
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
  public readonly remoteIdentities: {
    list(opts?: { path?: 'sri' | 'ri' }): Promise<RemoteIdentity[]>;
    /** `GET {remoteIdentityUrl}/ri/{id}`: one identity of the caller's account (another account's is a 404). */
    get(id: Id): Promise<RemoteIdentity>;
  };
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
  /** Stored product parameters (vendor reads, not in the specification: `undefined` when not served). */
  public readonly parameters: SubscriptionParametersApi;
  /** History (backfill) requests. */
  public readonly history: HistoryApi;
  /** Product jobs. */
  public readonly jobs: JobsApi;
  /** The account's healthchecks listing (vendor docs, not in the specification: `list()` is `undefined` when not served). */
  public readonly healthchecks: HealthchecksApi;

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
    /** Every record of a list, following the vendor pagination (`page`) until the last page. */
    const listAll = async (spec: RequestSpec): Promise<unknown[]> => {
      const out: unknown[] = [];
      let page = 1;
      for (let i = 0; i < MAX_LIST_PAGES; i++) {
        const query = new URLSearchParams(spec.query);
        if (!query.has('page_size')) query.set('page_size', String(LIST_PAGE_SIZE));
        if (page > 1) query.set('page', String(page));
        const body = await req({ ...spec, query });
        out.push(...list(body));
        const next = nextPageOf(body, page);
        if (next === undefined) return out;
        page = next;
      }
      throw new Error(`listing ${spec.path} returned more than ${MAX_LIST_PAGES} pages; stopping`);
    };
    const getAll = (service: RequestSpec['service'], path: string, query?: URLSearchParams): Promise<unknown[]> =>
      listAll({ method: 'GET', service, path, query });

    const listPage = async (q: TxQuery): Promise<TxPage> => {
      validateTxQuery(q);
      // A 500 here is the spec's answer to a tree expansion with an unavailable child, not a transient failure.
      const body = await base('GET', '/service/transactions/tx', { query: txSearchParams(q), final500: true }) as
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
      create: async (ri, body) => pipelineResult(await base('POST', `${unified}/${seg(ri)}`, { body: service(body), creating: true, provisioning: true })),
      update: async (ri, sub, body) => pipelineResult(await base('PATCH', `${unified}/${seg(ri)}/${seg(sub)}`, { body: service(body), provisioning: true })),
      delete: async (ri, sub) => { await base('DELETE', `${unified}/${seg(ri)}/${seg(sub)}`); },
    };
    const legacy = '/service/sp/notifications';
    this.legacyNotifications = {
      listTypes: async (t) => notificationTypes(await base('GET', `${legacy}/list-notification-types`,
        { query: new URLSearchParams({ account_type: t }) })),
      update: async (ri, sub, body) => {
        const a = attrsOf(await base('PATCH', `${legacy}/${seg(ri)}/${seg(sub)}`, { body: service(body), provisioning: true }));
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

    this.account = { get: async () => single<AccountRecord>(await req({ method: 'GET', service: 'accountUrl', path: '/account' }), 'GET /account') };
    this.user = { get: async () => single<UserRecord>(await req({ method: 'GET', service: 'userUrl', path: '/user' }), 'GET /user') };
    this.healthchecks = createHealthchecksApi({
      request: req,
      token: () => this.core.token(),
      account: () => this.account.get(),
      nextPage: nextPageOf,
      pageSize: LIST_PAGE_SIZE,
      maxPages: MAX_LIST_PAGES,
    });
    this.remoteIdentities = {
      list: async (o = {}) => (await getAll('remoteIdentityUrl', `/${o.path ?? 'sri'}`)).map((r) => record<RemoteIdentity>(r)),
      get: async (id) => record<RemoteIdentity>(unwrap(await req({ method: 'GET', service: 'remoteIdentityUrl', path: `/ri/${seg(id)}` }))),
    };
    this.storages = {
      list: async (o = {}) => (await getAll('subscriptionsUrl', o.v2 ? '/v2/storages' : '/storages', new URLSearchParams({ status: 'active' })))
        .map((r) => record<Storage>(r)),
    };
    this.products = {
      list: async (q = {}) => {
        const query = new URLSearchParams();
        if (q.isStorageProduct !== undefined) query.set('is_storage_product', String(q.isStorageProduct));
        return (await getAll('subscriptionsUrl', '/v2/product', query)).map(productRecord);
      },
      listUnversioned: async () => (await getAll('subscriptionsUrl', '/product')).map(productRecord),
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
        if (q.remoteIdentity !== undefined) query.set('remote_identity', String(q.remoteIdentity));
        return (await getAll('subscriptionsUrl', '/v2/sub', query)).map((r) => record<Subscription>(r));
      },
      listByAccount: async (accountId) => (await getAll('subscriptionsUrl', '/sub', new URLSearchParams({ account: String(accountId) })))
        .map((r) => record<Subscription>(r)),
      get: async (id) => record<Subscription>(unwrap(await subs('GET', `/sub/${seg(id)}`))),
      create: async (attrs) => record<Subscription>(unwrap(await subs('POST', '/v2/sub', { body: subEnv(subAttrs(attrs)), creating: true }))),
      createUnversioned: async (attrs) => record<Subscription>(unwrap(await subs('POST', '/sub', { body: subEnv(subAttrs(attrs)), creating: true }))),
      update: async (id, changed) => {
        const attributes: Record<string, unknown> = { ...changed };
        for (const k of ['remote_identity', 'storage_group'] as const) {
          if (changed[k] !== undefined) attributes[k] = int(k, changed[k] as Id);
        }
        return record<Subscription>(unwrap(await subs('PATCH', `/v2/sub/${seg(id)}`, { body: subEnv(attributes, id) })));
      },
    };

    this.parameters = {
      get: async (id) => {
        try {
          const body = await subs('GET', '/v2/spp', { query: new URLSearchParams({ subscription_id: String(int('subscription_id', id)) }) });
          return parametersOf(unwrap(body));
        } catch (e) {
          if (notServed(e)) return undefined;
          throw e;
        }
      },
      bulk: async (ids) => {
        const unique = [...new Set(ids.map((id) => String(int('subscription_ids', id))))];
        const out = new Map<string, Record<string, string>>();
        const read = async (chunk: string[]): Promise<unknown[]> =>
          list(await subs('GET', '/v2/spp/bulk', { query: new URLSearchParams({ subscription_ids: chunk.join(',') }) }));
        for (let i = 0; i < unique.length; i += MAX_PARAMETER_READ_IDS) {
          let chunk = unique.slice(i, i + MAX_PARAMETER_READ_IDS);
          let rows: unknown[];
          try {
            rows = await read(chunk);
          } catch (e) {
            const missing = e instanceof ServiceError && e.status === 404 ? unresolvedIds(e.serviceMessage, chunk) : undefined;
            if (missing === undefined) {
              if (notServed(e)) return undefined;
              throw e;
            }
            chunk = chunk.filter((id) => !missing.has(id));
            if (chunk.length === 0) continue;
            try {
              rows = await read(chunk);
            } catch (e2) {
              if (notServed(e2)) return undefined;
              throw e2;
            }
          }
          for (const r of rows) {
            const id = isObject(r) && r.id !== undefined && r.id !== null ? String(r.id) : undefined;
            const params = parametersOf(r);
            if (id !== undefined && params !== undefined && chunk.includes(id)) out.set(id, params);
          }
        }
        return out;
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
      statusBySubscription: async (subId) => (await getAll('baseUrl', `${HISTORY}/status/${seg(subId)}`)).map((r) => flat<HistoryTransaction>(r)),
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
        return (await getAll('baseUrl', '/service/jobs/jobs', query)).map((r) => flat<Job>(r));
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

  /**
   * @internal A copy of this client that runs `check` right before each attempt of a creating request is sent: when it
   * throws, nothing is sent and the call fails with its error. Shares the token cache.
   */
  public withCreatingCheck(check: () => Promise<void>): DpiClient {
    const settings: HttpSettings = { ...this.core.settings, beforeCreatingSend: check };
    return new DpiClient({ endpoints: settings.endpoints, refreshToken: '' }, { settings, tokens: this.core.tokens });
  }
}
