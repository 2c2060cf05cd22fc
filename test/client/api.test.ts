import { ScriptedServer } from './scripted-server';
import { DpiClient, endpointsFromBase, TxQueryError, TxRecord } from '../../src/client';

let server: ScriptedServer;
let c: DpiClient;

beforeEach(async () => {
  server = await ScriptedServer.start();
  c = new DpiClient({ endpoints: endpointsFromBase(server.url), refreshToken: 'rt', baseDelayMs: 1, sleep: async () => {} });
});
afterEach(async () => {
  await server.close();
});

const body = (method: string, path: string, i = 0): unknown => JSON.parse(server.seen(method, path)[i].body);
const tx = (id: string, extra: object = {}): object => ({ id, attributes: { subscription_id: 9001, status: 'PROCESSED', ...extra } });

describe('transactions', () => {
  test('pages follow next_cursor through empty pages, encode the cursor and keep subscription/filters/tree', async () => {
    const cursors = ['a+b/c=d&e?f', 'x y%z', 'last=='];
    server.on('GET', '/service/transactions/tx',
      { status: 200, body: { data: [tx('t1'), tx('t2')], meta: { next_cursor: cursors[0] } } },
      { status: 200, body: { data: [], meta: { next_cursor: cursors[1] } } },
      { status: 200, body: { data: [], meta: { next_cursor: cursors[2] } } },
      { status: 200, body: { data: [tx('t3', { children: [{ transaction_id: 't4' }] })], meta: { next_cursor: null } } },
    );
    const records: TxRecord[] = [];
    for await (const r of c.tx.iterate({ subscription_id: '9001', status: 'PROCESSED', tree: true, tree_depth: 2, limit: 2 })) records.push(r);

    expect(records.map((r) => r.id)).toEqual(['t1', 't2', 't3']);
    expect(records[0]).toEqual({ id: 't1', subscription_id: 9001, status: 'PROCESSED' });
    expect(records[2].children).toEqual([{ transaction_id: 't4' }]);
    const seen = server.seen('GET', '/service/transactions/tx');
    expect(seen).toHaveLength(4);
    expect(seen.map((r) => r.query.get('cursor'))).toEqual([null, ...cursors]);
    for (const r of seen) {
      expect(r.query.get('subscription_id')).toBe('9001');
      expect(r.query.get('status')).toBe('PROCESSED');
      expect(r.query.get('tree')).toBe('true');
      expect(r.query.get('tree_depth')).toBe('2');
      expect(r.query.get('limit')).toBe('2');
      expect(r.query.getAll('subscription_id')).toHaveLength(1);
    }
    // the raw target carries the cursor percent-encoded, never the literal separators
    expect(seen[1].rawUrl).toContain('cursor=a%2Bb%2Fc%3Dd%26e%3Ff');
    expect(seen[1].rawUrl).not.toContain('a+b/c=d&e');
    expect(seen[2].rawUrl).toContain('cursor=x+y%25z');
  });

  test('pages() yields every page including empty ones; listPage returns one page', async () => {
    server.on('GET', '/service/transactions/tx',
      { status: 200, body: { data: [], meta: { next_cursor: 'c1' } } },
      { status: 200, body: { data: [tx('t1')], meta: { next_cursor: null } } },
    );
    const pages = [];
    for await (const p of c.tx.pages({ subscription_id: 9001 })) pages.push(p);
    expect(pages.map((p) => [p.records.length, p.nextCursor])).toEqual([[0, 'c1'], [1, null]]);
    expect((await c.tx.listPage({ subscription_id: 9001, cursor: 'c9' })).records.map((r) => r.id)).toEqual(['t1']);
    expect(server.seen('GET', '/service/transactions/tx')[2].query.get('cursor')).toBe('c9');
  });

  test('a cursor repeated by the server stops the loop', async () => {
    server.on('GET', '/service/transactions/tx', { status: 200, body: { data: [], meta: { next_cursor: 'same' } } });
    const it = c.tx.iterate({ subscription_id: 1 });
    await expect((async () => { for await (const _ of it) void _; })()).rejects.toThrow(/cursor it had returned before/);
    expect(server.seen('GET', '/service/transactions/tx')).toHaveLength(2);
  });

  test('an invalid query is rejected before anything is sent', async () => {
    await expect(c.tx.listPage({ subscription_id: 1, limit: 500 })).rejects.toThrow(TxQueryError);
    const it = c.tx.iterate({ subscription_id: 1, tree_depth: 2 });
    await expect(it.next()).rejects.toThrow(/tree_depth/);
    expect(server.requests).toHaveLength(0);
  });

  test('422 from the backend surfaces the detail', async () => {
    server.on('GET', '/service/transactions/tx', { status: 422, body: { errors: [{ detail: 'invalid cursor' }] } });
    await expect(c.tx.listPage({ subscription_id: 1, cursor: 'bad' })).rejects.toThrow('GET /service/transactions/tx failed with 422: invalid cursor');
  });
});

describe('marketplace and notifications', () => {
  const creds = { client_id: 'cid', client_secret: 'cs', region: 'eu' as const, refresh_token: 'upstream-rt' };

  test('unified create: POST envelope, 207 body with partial failures', async () => {
    const meta = { shared_pipeline_id: 'sp-1', s3_bucket_name: 'bucket', s3_notification_prefix: 'p/', sqs_source_queue_arn: 'arn:q' };
    server.on('POST', '/service/sp/notifications-unified/362', {
      status: 207,
      body: { type: 'SPAPINotifications', attributes: { subscriptions: { ORDER_CHANGE: 'u-1' }, failed: { ITEM_SALES_EVENT_CHANGE: { code: 'X' } }, meta } },
    });
    const req = { notification_types: ['ORDER_CHANGE', 'ITEM_SALES_EVENT_CHANGE'], role_arn: 'arn:role', eb_to_fh_role_arn: 'arn:eb', aws_region: 'us-east-1' };
    const r = await c.notifications.create('362', req);
    expect(r.subscriptions).toEqual({ ORDER_CHANGE: 'u-1' });
    expect(r.failed).toEqual({ ITEM_SALES_EVENT_CHANGE: { code: 'X' } });
    expect(r.meta).toEqual(meta);
    expect(body('POST', '/service/sp/notifications-unified/362')).toEqual({ data: { type: 'Service', attributes: req } });
  });

  test('unified update/delete/list types, legacy update/delete/list types', async () => {
    const ok207 = { status: 207, body: { data: { type: 'SPAPINotifications', attributes: { subscriptions: {}, failed: {}, meta: { a: 1 } } } } };
    server.on('PATCH', '/service/sp/notifications-unified/362/9001', ok207);
    server.on('DELETE', '/service/sp/notifications-unified/362/9001', { status: 204 });
    server.on('GET', '/service/sp/notifications-unified/list-notification-types',
      { status: 200, body: { type: 'SPAPINotifications', attributes: { notification_types: ['ORDER_CHANGE'] } } });
    server.on('PATCH', '/service/sp/notifications/17/86', { status: 200, body: { type: 'SPAPINotifications', attributes: { subscriptions: { A: 'u' }, destination_id: 'd-1' } } });
    server.on('DELETE', '/service/sp/notifications/17/86', { status: 204 });
    server.on('GET', '/service/sp/notifications/list-notification-types', { status: 200, body: { type: 'SPAPINotifications', attributes: { notification_types: ['A', 'B'] } } });

    const req = { notification_types: ['ORDER_CHANGE'], role_arn: 'arn:role', aws_region: 'us-west-2' };
    expect((await c.notifications.update(362, 9001, req)).meta).toEqual({ a: 1 });
    await c.notifications.delete(362, 9001);
    expect(await c.notifications.listTypes('vendor')).toEqual(['ORDER_CHANGE']);
    expect(await c.legacyNotifications.update(17, 86, { queue_arn: 'arn:q', notification_types: ['A'] }))
      .toEqual({ subscriptions: { A: 'u' }, destination_id: 'd-1' });
    await c.legacyNotifications.delete(17, 86);
    expect(await c.legacyNotifications.listTypes('seller')).toEqual(['A', 'B']);

    expect(body('PATCH', '/service/sp/notifications-unified/362/9001')).toEqual({ data: { type: 'Service', attributes: req } });
    expect(server.seen('DELETE', '/service/sp/notifications-unified/362/9001')[0].body).toBe('');
    expect(server.seen('GET', '/service/sp/notifications-unified/list-notification-types')[0].query.get('account_type')).toBe('vendor');
    expect(body('PATCH', '/service/sp/notifications/17/86')).toEqual({ data: { type: 'Service', attributes: { queue_arn: 'arn:q', notification_types: ['A'] } } });
    expect(server.seen('DELETE', '/service/sp/notifications/17/86')).toHaveLength(1);
    expect(server.seen('GET', '/service/sp/notifications/list-notification-types')[0].query.get('account_type')).toBe('seller');
  });

  test('marketplaces, sp-id, validate-creds (204 true / 400 false / 403 throws)', async () => {
    const mp = { id: 'ATVPDKIKX0DER', name: 'US', countryCode: 'US', defaultCurrencyCode: 'USD', defaultLanguageCode: 'en_US', domainName: 'x.com' };
    server.on('GET', '/service/sp/marketplaces/362', { status: 200, body: [mp] });
    server.on('POST', '/service/sp/sp-id', { status: 200, body: [{ type: 'Service', attributes: { selling_partner_id: 'A1SP' } }] });
    server.on('POST', '/service/sp/validate-creds', { status: 204 }, { status: 400, body: { errors: [{ detail: 'invalid' }] } }, { status: 403 });
    expect(await c.marketplace.listMarketplaces(362)).toEqual([mp]);
    expect(await c.marketplace.spId(creds)).toBe('A1SP');
    expect(body('POST', '/service/sp/sp-id')).toEqual({ data: { type: 'Service', attributes: creds } });
    expect(await c.marketplace.validateCreds(creds)).toBe(true);
    expect(await c.marketplace.validateCreds(creds)).toBe(false);
    await expect(c.marketplace.validateCreds(creds)).rejects.toMatchObject({ status: 403 });
    expect(body('POST', '/service/sp/validate-creds')).toEqual({ data: { type: 'Service', attributes: creds } });
  });
});

describe('catalog and lookups', () => {
  test('cards, definition, payloads with query; 404 on unknown product', async () => {
    server.on('GET', '/service/product-cards/card', { status: 200, body: [{ id: 1, name: 'P', summary: 's', payloads: ['orders'] }] });
    server.on('GET', '/service/product-cards/card/1', { status: 200, body: { id: 1, name: 'P', history_info: [] } });
    server.on('GET', '/service/product-cards/card/2', { status: 404, body: { error: 'no product 2' } });
    server.on('GET', '/service/products/product/1/payloads', { status: 200, body: { data: [{ type: 'Product', id: '5', attributes: { name: 'orders', stage_id: 1001 } }] } });
    expect((await c.catalog.listCards())[0].payloads).toEqual(['orders']);
    expect((await c.catalog.getCard(1)).name).toBe('P');
    await expect(c.catalog.getCard('2')).rejects.toMatchObject({ status: 404, serviceMessage: 'no product 2' });
    expect(await c.catalog.listPayloads(1, { stageIdGte: 1000, enabled: true })).toEqual([{ id: '5', name: 'orders', stage_id: 1001 }]);
    const q = server.seen('GET', '/service/products/product/1/payloads')[0].query;
    expect(q.get('stage_id__gte')).toBe('1000');
    expect(q.get('enabled')).toBe('true');
  });

  test('account, user, identities (sri/ri), storages (v1/v2), products', async () => {
    server.on('GET', '/user', { status: 200, body: { data: { type: 'User', id: 2001, attributes: { email: 'a@b' } } } });
    const ri = { data: [{ type: 'RemoteIdentity', id: '362', attributes: { name: 'seller', remote_identity_type_id: 17 } }] };
    server.on('GET', '/sri', { status: 200, body: ri });
    server.on('GET', '/ri', { status: 200, body: ri });
    const st = { data: [{ type: 'Storage', id: '501', attributes: { name: 's3', status: 'active', product: 3 } }] };
    server.on('GET', '/storages', { status: 200, body: st });
    server.on('GET', '/v2/storages', { status: 200, body: st });
    const prod = (id: string, rit: object | null): object => ({
      type: 'Product',
      id,
      attributes: { active: 1, name: 'p', is_storage_product: 0, required_meta_fields: ['remote_identity_id'] },
      relationships: { remote_identity_type: { data: rit } },
    });
    server.on('GET', '/v2/product', { status: 200, body: { data: [prod('107', { type: 'RemoteIdentityType', id: 17 }), prod('3', null)] } });
    server.on('GET', '/product', { status: 200, body: { data: [prod('3', null)] } });
    server.on('GET', '/v2/product/107', { status: 200, body: { data: prod('107', { type: 'RemoteIdentityType', id: '17' }) } });

    expect(await c.user.get()).toEqual({ id: '2001', email: 'a@b' });
    expect(await c.remoteIdentities.list()).toEqual([{ id: '362', name: 'seller', remote_identity_type_id: 17 }]);
    await c.remoteIdentities.list({ path: 'ri' });
    expect(await c.storages.list()).toEqual([{ id: '501', name: 's3', status: 'active', product: 3 }]);
    await c.storages.list({ v2: true });
    const products = await c.products.list({ isStorageProduct: 0 });
    expect(products[0]).toEqual({
      id: '107',
      active: 1,
      name: 'p',
      is_storage_product: 0,
      required_meta_fields: ['remote_identity_id'],
      remote_identity_type: { type: 'RemoteIdentityType', id: '17' },
    });
    expect(products[1].remote_identity_type).toBeNull();
    expect((await c.products.listUnversioned())[0].id).toBe('3');
    expect((await c.products.get(107)).remote_identity_type).toEqual({ type: 'RemoteIdentityType', id: '17' });

    expect(server.seen('GET', '/ri')).toHaveLength(1);
    expect(server.seen('GET', '/storages')[0].query.get('status')).toBe('active');
    expect(server.seen('GET', '/v2/storages')[0].query.get('status')).toBe('active');
    expect(server.seen('GET', '/v2/product')[0].query.get('is_storage_product')).toBe('0');
  });

  test('separate base addresses are used per service', async () => {
    const other = await ScriptedServer.start();
    try {
      other.on('GET', '/account', { status: 200, body: { data: { type: 'Account', id: '7' } } });
      const c2 = new DpiClient({ endpoints: { ...endpointsFromBase(server.url), accountUrl: `${other.url}/` }, refreshToken: 'rt' });
      expect(await c2.account.get()).toEqual({ id: '7' });
      expect(other.seen('GET', '/account')).toHaveLength(1);
      expect(server.exchanges).toHaveLength(1);
      expect(other.exchanges).toHaveLength(0);
    } finally {
      await other.close();
    }
  });
});

describe('subscriptions, history, jobs', () => {
  const sub = (id: string, status = 'active'): object => ({ type: 'Subscription', id, attributes: { account: 1001, status, product_parameters: { a: 'b' } } });

  test('subscription calls: paths, envelopes, integer IDs, default status', async () => {
    server.on('GET', '/v2/sub', { status: 200, body: { data: [sub('1'), sub('2', 'invalid')] } });
    server.on('GET', '/sub', { status: 200, body: { data: [sub('1')] } });
    server.on('GET', '/sub/1', { status: 200, body: { data: sub('1') } });
    server.on('POST', '/v2/sub', { status: 201, body: { data: sub('3') } });
    server.on('POST', '/sub', { status: 201, body: { data: sub('4') } });
    server.on('PATCH', '/v2/sub/3', { status: 200, body: { data: sub('3', 'paused') } });

    expect((await c.subscriptions.list({ product: 107 })).map((s) => [s.id, s.status])).toEqual([['1', 'active'], ['2', 'invalid']]);
    expect(server.seen('GET', '/v2/sub')[0].query.get('product')).toBe('107');
    await c.subscriptions.listByAccount(1001);
    expect(server.seen('GET', '/sub')[0].query.get('account')).toBe('1001');
    expect(await c.subscriptions.get('1')).toEqual({ id: '1', account: 1001, status: 'active', product_parameters: { a: 'b' } });

    const created = await c.subscriptions.create({
      account: '1001',
      user: 2001,
      product: '107',
      date_start: '2026-11-22T00:00:00Z',
      remote_identity: '362',
      storage_group: 501,
      product_parameters: { stage_ids: '[1001]', remote_identity_id: '362' },
    });
    expect(created.id).toBe('3');
    expect(body('POST', '/v2/sub')).toEqual({
      data: {
        type: 'Subscription',
        attributes: {
          account: 1001,
          user: 2001,
          product: 107,
          date_start: '2026-11-22T00:00:00Z',
          remote_identity: 362,
          storage_group: 501,
          status: 'active',
          product_parameters: { stage_ids: '[1001]', remote_identity_id: '362' },
        },
      },
    });
    await c.subscriptions.createUnversioned({
      account: 1001,
      user: 2001,
      product: 5,
      date_start: 'd',
      date_end: 'e',
      status: 'paused',
      subscription_product_meta_attributes: [{ data_id: 1, data_key: 'stage_ids', data_value: '[1001]', data_format: 'STRING', product: 5 }],
    });
    expect((body('POST', '/sub') as { data: { attributes: { status: string; date_end: string } } }).data.attributes)
      .toMatchObject({ status: 'paused', date_end: 'e', product: 5 });
    expect((await c.subscriptions.update(3, { status: 'paused', product_parameters: { x: 'y' } })).status).toBe('paused');
    expect(body('PATCH', '/v2/sub/3')).toEqual({ data: { type: 'Subscription', id: '3', attributes: { status: 'paused', product_parameters: { x: 'y' } } } });
    await expect(c.subscriptions.create({ account: 'abc', user: 1, product: 1, date_start: 'd' })).rejects.toThrow(/account must be an integer/);
  });

  test('history calls: create, get, status list, cancel by id / status path, cancel all, max-request', async () => {
    const H = '/service/history/production/history';
    const h = (id: string, status = 'pending'): object => ({ type: 'HistoryTransaction', id, attributes: { subscription_id: 9001, status } });
    server.on('POST', `${H}/9001`, { status: 201, body: { data: h('h-1') } });
    server.on('GET', `${H}/h-1`, { status: 200, body: { data: h('h-1', 'processing') } });
    server.on('GET', `${H}/status/9001`, { status: 200, body: { data: [h('h-1')] } });
    server.on('PATCH', `${H}/h-1`, { status: 200, body: { data: h('h-1', 'cancelled') } });
    server.on('PATCH', `${H}/status/h-2`, { status: 200, body: { data: h('h-2', 'cancelled') } });
    server.on('PATCH', `${H}/status/9001`, { status: 200, body: { data: [h('h-3', 'cancelled')] } });
    server.on('GET', `${H}/meta/max-request`, { status: 200, body: { data: { type: 'HistoryMaxRequest', attributes: { max_request: 3 } } } });

    expect(await c.history.create(9001, { dates: ['2026-11-01'], stage_id: '1001', product_id: 5 })).toEqual({ id: 'h-1', subscription_id: 9001, status: 'pending' });
    expect(body('POST', `${H}/9001`)).toEqual({ data: { type: 'HistoryTransaction', attributes: { dates: ['2026-11-01'], stage_id: 1001, product_id: 5 } } });
    expect((await c.history.get('h-1')).status).toBe('processing');
    expect((await c.history.statusBySubscription(9001)).map((x) => x.id)).toEqual(['h-1']);
    expect((await c.history.cancel('h-1')).status).toBe('cancelled');
    expect(body('PATCH', `${H}/h-1`)).toEqual({ data: { type: 'HistoryTransaction', id: 'h-1', attributes: { status: 'cancelled' } } });
    await c.history.cancel('h-2', { path: 'status' });
    expect(server.seen('PATCH', `${H}/status/h-2`)).toHaveLength(1);
    expect((await c.history.cancelAll(9001)).map((x) => x.id)).toEqual(['h-3']);
    expect(body('PATCH', `${H}/status/9001`)).toEqual({ data: { type: 'HistoryTransaction', id: '9001', attributes: { status: 'cancelled' } } });
    expect(await c.history.maxRequest()).toBe(3);
  });

  test('jobs: list with subscription_ids and stage_id; create secondary', async () => {
    server.on('GET', '/service/jobs/jobs', { status: 200, body: { data: [{ type: 'Job', id: 'j-1', attributes: { is_primary: true, subscription_id: 9001 } }] } });
    server.on('POST', '/service/jobs/jobs/j-1', { status: 201, body: { data: { type: 'Job', id: 'j-2', attributes: { is_primary: false, parent_job_id: 'j-1' } } } });
    expect(await c.jobs.list({ subscriptionIds: [9001, '9002'], stageId: 1000 })).toEqual([{ id: 'j-1', is_primary: true, subscription_id: 9001 }]);
    const q = server.seen('GET', '/service/jobs/jobs')[0].query;
    expect(q.get('subscription_ids')).toBe('9001,9002');
    expect(q.get('stage_id')).toBe('1000');
    const attrs = {
      is_primary: false as const,
      valid_date_start: '2026-11-22',
      valid_date_end: '2026-11-22',
      stage_id: 1000,
      extra_context: '{"order_ids":["123-1234567-1234567"]}',
      request_start: 1 as const,
      request_end: 0 as const,
      schedule: '0 9 22 11 *',
    };
    expect((await c.jobs.createSecondary('j-1', attrs)).id).toBe('j-2');
    expect(body('POST', '/service/jobs/jobs/j-1')).toEqual({ data: { type: 'Job', attributes: attrs } });
  });

  test('IDs are encoded as path segments', async () => {
    server.on('GET', '/service/history/production/history/h%2F1', { status: 200, body: { data: { type: 'HistoryTransaction', id: 'h/1', attributes: { status: 'pending' } } } });
    expect((await c.history.get('h/1')).id).toBe('h/1');
  });
});

describe('reads as the spec guarantees them, and as the vendor documents them', () => {
  const sub = (id: number, extra: object = {}): object => ({ type: 'Subscription', id: String(id), attributes: { status: 'active', ...extra } });

  test('every list follows the vendor pagination (links.next, then meta.pagination) and keeps the query', async () => {
    server.on('GET', '/v2/sub',
      { status: 200, body: { links: { next: `${server.url}/v2/sub?product=107&page=2` }, data: [sub(1), sub(2)], meta: { pagination: { page: 1, pages: 3, count: 5 } } } },
      { status: 200, body: { links: { next: '/v2/sub?product=107&page=3' }, data: [sub(3), sub(4)], meta: { pagination: { page: 2, pages: 3, count: 5 } } } },
      { status: 200, body: { links: { next: '' }, data: [sub(5)], meta: { pagination: { page: 3, pages: 3, count: 5 } } } },
    );
    const all = await c.subscriptions.list({ product: 107 });
    expect(all.map((s) => s.id)).toEqual(['1', '2', '3', '4', '5']);
    const seen = server.seen('GET', '/v2/sub');
    expect(seen.map((r) => r.query.get('page'))).toEqual([null, '2', '3']);
    expect(seen.every((r) => r.query.get('product') === '107')).toBe(true);
  });

  test('meta.pagination alone is followed; a bare data array is one page', async () => {
    server.on('GET', '/sri',
      { status: 200, body: { data: [{ id: 1 }], meta: { pagination: { page: 1, pages: 2 } } } },
      { status: 200, body: { data: [{ id: 2 }], meta: { pagination: { page: 2, pages: 2 } } } },
    );
    expect((await c.remoteIdentities.list()).map((r) => r.id)).toEqual(['1', '2']);
    server.on('GET', '/service/jobs/jobs', { status: 200, body: { data: [{ id: 4100001, attributes: { is_primary: true } }] } });
    const jobs = await c.jobs.list({ subscriptionIds: [9001] });
    expect(jobs.map((j) => j.id)).toEqual(['4100001']);
    expect(server.seen('GET', '/service/jobs/jobs')).toHaveLength(1);
  });

  test('GET /user as a list (vendor) and as an object (spec: only id)', async () => {
    server.on('GET', '/user', { status: 200, body: { data: [{ type: 'User', id: 321, attributes: { account_id: 123 } }] } });
    expect(await c.user.get()).toMatchObject({ id: '321', account_id: 123, account: 123 });
    server.on('GET', '/account', { status: 200, body: { data: { id: '1001' } } });
    expect((await c.account.get()).id).toBe('1001');
  });

  test('an empty /user list is a clear error', async () => {
    server.on('GET', '/user', { status: 200, body: { data: [] } });
    await expect(c.user.get()).rejects.toThrow('GET /user returned an empty list');
  });

  test('vendor v2 subscription fields are copied to the canonical optional fields; minimal reads have id and status only', async () => {
    server.on('GET', '/sub/9001', { status: 200, body: { data: sub(9001, { product_id: 107, remote_identity_id: 362, storage_group_id: 501, account_id: 123 }) } });
    expect(await c.subscriptions.get(9001)).toMatchObject({ id: '9001', status: 'active', product: 107, remote_identity: 362, storage_group: 501, account: 123 });
    server.on('GET', '/sub/9002', { status: 200, body: { data: sub(9002) } });
    expect(await c.subscriptions.get(9002)).toEqual({ id: '9002', status: 'active' });
  });
});
