/**
 * The client's healthchecks listing: the account ID (token claim, then the given one, then GET /account once), every
 * page at page_size 100, the record shapes the vendor shows (`data` or `results`, flat or with attributes), filters
 * and order_by sent as given, and 404 = not served (undefined). Against a scripted server and the emulator.
 */
import { makeJwt, ScriptedServer } from './scripted-server';
import { accountIdClaim, DpiClient, endpointsFromBase, ServiceError } from '../../src/client';
import { LIST_PAGE_SIZE } from '../../src/client/client';
import { stableOrder } from '../../src/client/healthchecks';
import { DEFAULT_REFRESH_TOKEN, startEmulator } from '../../src/emulator';

let server: ScriptedServer;
let c: DpiClient;
beforeEach(async () => {
  server = await ScriptedServer.start();
  c = new DpiClient({ endpoints: endpointsFromBase(server.url), refreshToken: 'rt', baseDelayMs: 1, sleep: async () => {} });
});
afterEach(async () => {
  await server.close();
});

const HC = (account: string | number): string => `/service/healthchecks/production/healthchecks/account/${account}`;
const withClaims = (claims: Record<string, unknown>): void => {
  server.on('POST', '/auth/api/ref', { status: 200, body: { data: { attributes: { token: makeJwt({ exp: Math.ceil(Date.now() / 1000) + 3600, ...claims }) } } } });
};

test('accountIdClaim reads account_id (number or digits) and nothing else', () => {
  expect(accountIdClaim(makeJwt({ account_id: 3558 }))).toBe('3558');
  expect(accountIdClaim(makeJwt({ account_id: '42' }))).toBe('42');
  expect(accountIdClaim(makeJwt({ account: 3558 }))).toBeUndefined();
  expect(accountIdClaim('not-a-jwt')).toBeUndefined();
});

test('the token\'s account_id claim names the account: no GET /account; every page at page_size 100; records normalised', async () => {
  withClaims({ account_id: 3558 });
  server.on('GET', HC(3558),
    { status: 200, body: { links: { next: 'http://internal/x?page=2' }, data: [{ id: 1, subscription_id: 7, payload_name: 'orders', status: 'OK', job_id: null }], meta: { pagination: { page: 1, pages: 2, count: 2 } } } },
    { status: 200, body: { links: { next: null }, results: [{ id: 2, subscription_id: 8, payload_name: 'fees', status: 'ERROR', err_msg: 'denied', product_id: 3 }], meta: { pagination: { page: 2, pages: 2, count: 2 } } } });
  const rows = await c.healthchecks.list({ filters: { status__exact: 'ERROR', modified_at__gte: '2024-01-01 00:00:00' }, orderBy: '-modified_at', accountId: 999 });
  expect(rows!.map((r) => [r.id, r.subscription_id, r.payload_name, r.status, r.err_msg, r.product_id])).toEqual([
    ['1', '7', 'orders', 'OK', '', null],
    ['2', '8', 'fees', 'ERROR', 'denied', 3],
  ]);
  const seen = server.seen('GET', HC(3558));
  expect(seen.map((r) => [r.query.get('page'), r.query.get('page_size'), r.query.get('status__exact'), r.query.get('modified_at__gte'), r.query.get('order_by')]))
    .toEqual([[null, String(LIST_PAGE_SIZE), 'ERROR', '2024-01-01 00:00:00', '-modified_at,id'], ['2', '100', 'ERROR', '2024-01-01 00:00:00', '-modified_at,id']]);
  expect(server.seen('GET', '/account')).toHaveLength(0);
});

test('no claim: the given account ID; neither: GET /account once per client', async () => {
  server.on('GET', HC(77), { status: 200, body: { data: [{ type: 'Healthcheck', id: '5', attributes: { subscription_id: 1, status: 'OK' } }] } });
  server.on('GET', HC(1234), { status: 200, body: { data: [] } });
  server.on('GET', '/account', { status: 200, body: { data: { type: 'Account', id: '1234', attributes: {} } } });
  expect((await c.healthchecks.list({ accountId: '77' }))!.map((r) => [r.id, r.subscription_id, r.status])).toEqual([['5', '1', 'OK']]);
  expect(server.seen('GET', '/account')).toHaveLength(0);
  expect(await c.healthchecks.list()).toEqual([]);
  expect(await c.healthchecks.list()).toEqual([]);
  expect(await c.healthchecks.accountId()).toBe('1234');
  expect(server.seen('GET', '/account')).toHaveLength(1);
});

test('order_by always ends in id (pages do not shift): id by default, appended to a given order, kept when given', async () => {
  expect([stableOrder(undefined), stableOrder('-modified_at'), stableOrder('status, -modified_at'), stableOrder('-id'), stableOrder('status,id')])
    .toEqual(['id', '-modified_at,id', 'status,-modified_at,id', '-id', 'status,id']);
  withClaims({ account_id: 5 });
  server.on('GET', HC(5), { status: 200, body: { data: [] } });
  await c.healthchecks.list();
  await c.healthchecks.list({ orderBy: 'status' });
  expect(server.seen('GET', HC(5)).map((r) => r.query.get('order_by'))).toEqual(['id', 'status,id']);
});

test('the older {count, next, results} shape: the top-level next is followed (its query, on our own host and path) until it is null', async () => {
  withClaims({ account_id: 3558 });
  const row = (id: number): object => ({ id, subscription_id: 100 + id, payload_name: 'orders', status: 'OK' });
  server.on('GET', HC(3558),
    // The vendor's example names its own host: only the query is followed, never the host.
    { status: 200, body: { count: 5, next: `https://service.api.example.invalid${HC(3558)}?order_by=id&page=2&page_size=2`, previous: null, results: [row(1), row(2)] } },
    { status: 200, body: { count: 5, next: `${HC(3558)}?order_by=id&page=3&page_size=2`, previous: 'x', results: [row(3), row(4)] } },
    { status: 200, body: { count: 5, next: null, previous: 'x', results: [row(5)] } });
  const rows = await c.healthchecks.list({ filters: { status: 'OK' } });
  expect(rows!.map((r) => r.id)).toEqual(['1', '2', '3', '4', '5']);
  const seen = server.seen('GET', HC(3558));
  expect(seen.map((r) => [r.query.get('page'), r.query.get('page_size'), r.query.get('order_by'), r.query.get('status')])).toEqual([
    [null, String(LIST_PAGE_SIZE), 'id', 'OK'], ['2', '2', 'id', 'OK'], ['3', '2', 'id', 'OK'],
  ]);
  // Every call went to this server (the scripted one), with the token.
  expect(seen.every((r) => typeof r.headers.authorization === 'string')).toBe(true);
});

test('a top-level next without a page number (offset pagination) is followed as it is; no page number of ours is added', async () => {
  withClaims({ account_id: 9 });
  server.on('GET', HC(9),
    { status: 200, body: { count: 3, next: `${HC(9)}?limit=2&offset=2`, results: [{ id: 1 }, { id: 2 }] } },
    { status: 200, body: { count: 3, next: null, results: [{ id: 3 }] } });
  expect((await c.healthchecks.list())!.map((r) => r.id)).toEqual(['1', '2', '3']);
  const second = server.seen('GET', HC(9))[1].query;
  expect([second.get('offset'), second.get('limit'), second.get('page'), second.get('order_by')]).toEqual(['2', '2', null, 'id']);
});

test('404 of the first page = not served (undefined); 403 and a 404 of a later page are errors', async () => {
  withClaims({ account_id: 1 });
  expect(await c.healthchecks.list()).toBeUndefined(); // the scripted server's unknown route
  server.on('GET', HC(1), { status: 403, body: { errors: [{ detail: 'Forbidden' }] } });
  await expect(c.healthchecks.list()).rejects.toMatchObject({ status: 403 });
  server.on('GET', HC(1),
    { status: 200, body: { data: [{ id: 1 }], meta: { pagination: { page: 1, pages: 2, count: 2 } } } },
    { status: 404, body: { errors: [{ detail: 'Invalid page.' }] } });
  const e = await c.healthchecks.list().catch((x: unknown) => x);
  expect(e).toBeInstanceOf(ServiceError);
  expect((e as ServiceError).status).toBe(404);
});

test('against the emulator: the account from the token, the records of its transactions; the route off -> undefined', async () => {
  for (const healthchecks of [true, false]) {
    const emu = await startEmulator({ host: '127.0.0.1', port: 0, healthchecks, reads: 'vendor' });
    try {
      const res = await fetch(`${emu.url}/_emulator/fixtures`, {
        method: 'POST',
        headers: { 'content-type': 'application/json' },
        body: JSON.stringify({ subscriptions: [9101, 9102].map((id) => ({ id, account: 1001, user: 2001, product: 3001 })) }),
      });
      expect(res.status).toBe(200);
      const now = Math.floor(Date.now() / 1000);
      await fetch(`${emu.url}/_emulator/tx`, {
        method: 'POST',
        headers: { 'content-type': 'application/json' },
        body: JSON.stringify([
          { id: 't1', subscription_id: 9101, payload_name: 'orders', sender: 'zeroadmin', status: 'PROCESSED', timestamp: now - 60 },
          { id: 't2', subscription_id: 9102, payload_name: 'orders', sender: 'zeroadmin', status: 'ERROR', timestamp: now - 30 },
        ]),
      });
      const client = new DpiClient({ endpoints: endpointsFromBase(emu.url), refreshToken: DEFAULT_REFRESH_TOKEN });
      const rows = await client.healthchecks.list({ accountId: 1001 });
      if (!healthchecks) {
        expect(rows).toBeUndefined();
        continue;
      }
      // order_by=id (the client's stable order): ascending record IDs.
      expect(rows!.map((r) => [r.subscription_id, r.status]).sort()).toEqual([['9101', 'OK'], ['9102', 'ERROR']]);
      const ids = rows!.map((r) => Number(r.id));
      expect(ids).toEqual([...ids].sort((a, b) => a - b));
      const onlyErrors = await client.healthchecks.list({ filters: { status: 'ERROR' }, accountId: 1001 });
      expect(onlyErrors!.map((r) => r.transaction_id)).toEqual(['t2']);
    } finally {
      await emu.stop();
    }
  }
});
