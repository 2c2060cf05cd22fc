/**
 * The healthchecks listing (vendor-documented, not in the spec): records derived from the transaction state (the
 * latest outcome per subscription and payload), the documented filter lookups, `order_by`, pagination, 403 for
 * another account, 404 for an unknown environment, both read modes, and the `healthchecks: false` option.
 */
import { createSub, Harness, ORDERS_SUB } from './helpers';
import { startEmulator } from '../../src/emulator';

const T0 = 1_800_000_000; // 2027-01-15T08:00:00Z
const HC = (account: number | string = 1001, env = 'production'): string => `/service/healthchecks/${env}/healthchecks/account/${account}`;
const iso = (unix: number): string => new Date(unix * 1000).toISOString().slice(0, 19);

const DOCUMENTED = ['id', 'account_id', 'subscription_id', 'subscription_name', 'product_id', 'subproduct_id', 'product_name', 'payload_name',
  'storage_id', 'status', 'message', 'err_msg', 'error_code', 'hc_runtime', 'modified_at', 'job_id', 'transaction_id', 'file_path', 'owner',
  'sender', 'company', 'email_address'];

for (const reads of ['minimal', 'vendor'] as const) {
  describe(`reads: ${reads}`, () => {
    let h: Harness;
    let a: number;
    let b: number;
    beforeAll(async () => {
      h = await Harness.start({ now: T0, reads, tokenTtlSeconds: 30 * 86400 });
    });
    afterAll(() => h.stop());
    beforeEach(async () => {
      await h.admin('POST', '/reset');
      await h.admin('POST', '/clock', { now: T0 });
      a = await createSub(h, { ...ORDERS_SUB, name: 'Orders US' });
      b = await createSub(h, { ...ORDERS_SUB, name: 'Fees CA' });
      const tx = (r: Record<string, unknown>) => ({ sender: 'zeroadmin', ...r });
      const res = await h.admin('POST', '/tx', [
        // a/orders: ERROR then loaded by another TX -> OK (the latest outcome counts)
        tx({ id: 'a1', subscription_id: a, payload_name: 'orders', status: 'ERROR', timestamp: T0 - 500, error_code: 'E1', error_message: 'denied' }),
        tx({ id: 'a2', subscription_id: a, payload_name: 'orders', status: 'PROCESSED', timestamp: T0 - 400, job_id: '77' }),
        // a/items: loaded, then a later ERROR -> ERROR; an even later upstream completion or in-progress replaces nothing
        tx({ id: 'a3', subscription_id: a, payload_name: 'items', status: 'SUCCESS', timestamp: T0 - 900 }),
        tx({ id: 'a4', subscription_id: a, payload_name: 'items', status: 'ERROR', timestamp: T0 - 300, error_code: 'LOAD', error_message: 'Table Locked' }),
        tx({ id: 'a5', subscription_id: a, payload_name: 'items', sender: 'ftpsync', status: 'PROCESSED', timestamp: T0 - 200 }),
        tx({ id: 'a6', subscription_id: a, payload_name: 'items', sender: 'supervisor', status: 'IN_PROGRESS', timestamp: T0 - 100 }),
        // b/fees: NO_DATA -> OK (a child inheriting subscription and payload from its parent)
        tx({ id: 'b0', subscription_id: b, payload_name: 'fees', sender: 'scheduler', status: 'PROCESSING', timestamp: T0 - 700, children: ['b1'] }),
        tx({ id: 'b1', parent: 'b0', sender: 'supervisor', status: 'NO_DATA', timestamp: T0 - 650 }),
        // b/returns: only work in progress -> no record
        tx({ id: 'b2', subscription_id: b, payload_name: 'returns', sender: 'scheduler', status: 'UNPROCESSED', timestamp: T0 - 50 }),
        // a subscription of nobody's state and one of another account: not listed
        tx({ id: 'x1', subscription_id: 123456, payload_name: 'orders', status: 'ERROR', timestamp: T0 - 10 }),
      ]);
      expect(res.status).toBe(200);
    });

    const list = async (q = ''): Promise<any[]> => {
      const r = await h.api('GET', `${HC()}${q}`);
      expect([r.status, r.body?.errors]).toEqual([200, undefined]);
      return r.body.data;
    };
    const keys = (rows: any[]): string[] => rows.map((r) => `${r.subscription_id === a ? 'a' : 'b'}/${r.payload_name}:${r.status}`);

    test('one record per subscription and payload, the latest outcome, newest first; the documented fields', async () => {
      const rows = await list();
      expect(keys(rows)).toEqual(['a/items:ERROR', 'a/orders:OK', 'b/fees:OK']);
      for (const r of rows) expect(Object.keys(r).sort()).toEqual([...DOCUMENTED].sort());
      const [items, orders, fees] = rows;
      expect(items).toMatchObject({
        account_id: 1001,
        subscription_id: a,
        subscription_name: 'Orders US',
        product_id: 3001,
        product_name: 'Marketplace Orders',
        storage_id: '501',
        status: 'ERROR',
        err_msg: 'Table Locked',
        error_code: 'LOAD',
        sender: 'zeroadmin',
        transaction_id: 'a4',
        hc_runtime: iso(T0 - 300),
        modified_at: iso(T0 - 300),
        company: 'Emulated Account',
        owner: '2001',
        subproduct_id: null,
        job_id: null,
      });
      expect(typeof items.id).toBe('number');
      expect(orders).toMatchObject({ status: 'OK', message: 'loaded', err_msg: '', error_code: '', transaction_id: 'a2', job_id: 77 });
      expect(fees).toMatchObject({ subscription_id: b, status: 'OK', message: 'no data', sender: 'supervisor', transaction_id: 'b1' });
      // The record ID is stable per subscription and payload: a new outcome updates the record, not its ID.
      await h.admin('POST', '/tx', { id: 'a7', subscription_id: a, payload_name: 'items', sender: 'zeroadmin', status: 'PROCESSED', timestamp: T0 - 5 });
      const again = await list(`?subscription_id=${a}&payload_name=items`);
      expect(again.map((r) => [r.id, r.status, r.transaction_id])).toEqual([[items.id, 'OK', 'a7']]);
    });

    test('records age out with their transactions (3 days)', async () => {
      await h.admin('POST', '/clock', { now: T0 + 3 * 86400 });
      expect(await list()).toEqual([]);
    });

    test('filters: bare = exact, the numeric and datetime lookups, contains / icontains; several combine', async () => {
      expect(keys(await list('?status=ERROR'))).toEqual(['a/items:ERROR']);
      expect(keys(await list('?status__exact=OK'))).toEqual(['a/orders:OK', 'b/fees:OK']);
      expect(keys(await list(`?subscription_id=${b}`))).toEqual(['b/fees:OK']);
      expect(keys(await list(`?subscription_id__gt=${a}`))).toEqual(['b/fees:OK']);
      expect(keys(await list(`?subscription_id__lte=${a}`))).toEqual(['a/items:ERROR', 'a/orders:OK']);
      expect(keys(await list(`?modified_at__gte=${encodeURIComponent(iso(T0 - 400).replace('T', ' '))}`))).toEqual(['a/items:ERROR', 'a/orders:OK']);
      expect(keys(await list(`?modified_at__lt=${iso(T0 - 400)}`))).toEqual(['b/fees:OK']);
      expect(keys(await list(`?hc_runtime=${iso(T0 - 650)}`))).toEqual(['b/fees:OK']);
      expect(keys(await list('?hc_runtime__gt=2099-01-01'))).toEqual([]);
      expect(keys(await list('?subscription_name__contains=Orders'))).toEqual(['a/items:ERROR', 'a/orders:OK']);
      expect(keys(await list('?subscription_name__contains=orders'))).toEqual([]);
      expect(keys(await list('?subscription_name__icontains=orders'))).toEqual(['a/items:ERROR', 'a/orders:OK']);
      expect(keys(await list('?err_msg__icontains=locked'))).toEqual(['a/items:ERROR']);
      expect(keys(await list('?payload_name=fees&sender=supervisor'))).toEqual(['b/fees:OK']);
      expect(keys(await list('?status=OK&product_name__icontains=marketplace&payload_name__contains=ord'))).toEqual(['a/orders:OK']);
      expect(keys(await list('?job_id__gte=77'))).toEqual(['a/orders:OK']);
      expect(keys(await list('?storage_id=502'))).toEqual([]);
    });

    test('unknown parameters and unsupported lookups are ignored; a malformed value is a 400 naming the parameter', async () => {
      expect(keys(await list('?colour=blue&status__gt=A&sender__contains=zero&tree=true'))).toEqual(['a/items:ERROR', 'a/orders:OK', 'b/fees:OK']);
      for (const q of ['subscription_id=abc', 'modified_at__gte=yesterday', 'id__lt=1.5']) {
        const r = await h.api('GET', `${HC()}?${q}`);
        expect([q, r.status]).toEqual([q, 400]);
        expect(r.body.errors[0].detail).toContain(q.split('=')[0]);
      }
    });

    test('order_by: a comma list, - for descending; an unknown field is a 400', async () => {
      expect(keys(await list('?order_by=payload_name'))).toEqual(['b/fees:OK', 'a/items:ERROR', 'a/orders:OK']);
      expect(keys(await list('?order_by=-payload_name'))).toEqual(['a/orders:OK', 'a/items:ERROR', 'b/fees:OK']);
      expect(keys(await list('?order_by=status,-subscription_id'))).toEqual(['a/items:ERROR', 'b/fees:OK', 'a/orders:OK']);
      expect(keys(await list('?order_by=modified_at'))).toEqual(['b/fees:OK', 'a/orders:OK', 'a/items:ERROR']);
      const r = await h.api('GET', `${HC()}?order_by=-colour`);
      expect(r.status).toBe(400);
      expect(r.body.errors[0].detail).toContain('colour');
    });

    test('403 for another account (also the other account\'s own token on ours); 404 for an unknown environment', async () => {
      expect((await h.api('GET', HC(1002))).status).toBe(403);
      expect((await h.api('GET', HC('abc'))).status).toBe(403);
      expect((await h.other('GET', HC(1001))).status).toBe(403);
      const mine = await h.other('GET', HC(1002));
      expect([mine.status, mine.body.data]).toEqual([200, []]);
      expect((await h.api('GET', HC(1001, 'staging'))).status).toBe(404);
      const dev = await h.api('GET', HC(1001, 'dev'));
      expect(dev.status).toBe(200);
      expect(dev.body.data).toHaveLength(3);
      expect((await h.raw('GET', HC())).status).toBe(401);
    });

    if (reads === 'vendor') {
      test('the vendor list envelope: page and page_size, links and meta.pagination; a page after the last is a 404', async () => {
        const p1 = await h.api('GET', `${HC()}?page_size=2`);
        expect(p1.status).toBe(200);
        expect(p1.body.meta.pagination).toEqual({ page: 1, pages: 2, count: 3 });
        expect(keys(p1.body.data)).toEqual(['a/items:ERROR', 'a/orders:OK']);
        expect(p1.body.links.next).toContain('page=2');
        const p2 = await h.api('GET', `${HC()}?page_size=2&page=2&status__exact=OK`);
        // The filter applies before paging: 2 OK records fit on page 1, so page 2 does not exist.
        expect(p2.status).toBe(404);
        const last = await h.api('GET', `${HC()}?page_size=2&page=2`);
        expect(keys(last.body.data)).toEqual(['b/fees:OK']);
        expect(last.body.links.next).toBeFalsy();
      });
    }
  });
}

test('healthchecks: false -> the route answers 404 (a service that does not serve it)', async () => {
  const h = await Harness.start({ healthchecks: false });
  try {
    const r = await h.api('GET', HC());
    expect(r.status).toBe(404);
    expect((await h.api('GET', '/account')).status).toBe(200);
  } finally {
    await h.stop();
  }
  const on = await startEmulator({ host: '127.0.0.1', port: 0 });
  try {
    // Default on: reachable (401 without a token, not 404).
    expect((await fetch(on.url + HC())).status).toBe(401);
  } finally {
    await on.stop();
  }
});
