import { createSub, Harness, ORDERS_SUB, useHarness } from './helpers';

let h: Harness;
let sid: number;
const T0 = 1_800_000_000;
useHarness((started) => {
  h = started;
}, { now: T0, tokenTtlSeconds: 30 * 86400 }, { reset: true, now: T0 });
beforeEach(async () => {
  sid = await createSub(h, ORDERS_SUB);
});

const TX = '/service/transactions/tx';
const ingest = async (r: Record<string, unknown>) => {
  const res = await h.admin('POST', '/tx', { subscription_id: sid, ...r });
  expect(res.status).toBe(200);
  return res.body.data;
};
const list = (q: string) => h.api('GET', `${TX}?subscription_id=${sid}${q}`);

describe('merge rules', () => {
  test('higher precedence wins; lower never overrides', async () => {
    await ingest({ id: 'a', sender: 'supervisor', status: 'PROCESSING', timestamp: T0 });
    let r = await ingest({ id: 'a', sender: 'ftpsync', status: 'IN_PROGRESS', timestamp: T0 + 1 });
    expect(r.attributes).toMatchObject({ sender: 'ftpsync', status: 'IN_PROGRESS' });
    r = await ingest({ id: 'a', sender: 'scheduler', status: 'ERROR', timestamp: T0 + 2 });
    expect(r.attributes).toMatchObject({ sender: 'ftpsync', status: 'IN_PROGRESS', timestamp: T0 + 2 });
    r = await ingest({ id: 'a', sender: 'zeroadmin', status: 'PROCESSED', timestamp: T0 + 3 });
    expect(r.attributes).toMatchObject({ sender: 'zeroadmin', status: 'PROCESSED' });
  });

  test('a completed status is kept against later reports of the same sender; time still moves', async () => {
    await ingest({ id: 'c', sender: 'supervisor', status: 'NO_DATA', timestamp: T0 });
    const r = await ingest({ id: 'c', sender: 'supervisor', status: 'ERROR', timestamp: T0 + 50 });
    expect(r.attributes).toMatchObject({ status: 'NO_DATA', timestamp: T0 + 50 });
    expect(r.attributes.modified_at).toMatch(/^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}\.\d+Z$/);
  });

  test('non-completed statuses of the same sender follow arrival order, not timestamp order', async () => {
    await ingest({ id: 'n', sender: 'ftpsync', status: 'ERROR', timestamp: T0 + 10, error_code: 'E1', error_message: 'bad' });
    const r = await ingest({ id: 'n', sender: 'ftpsync', status: 'RETRY', timestamp: T0 + 5, error_message: '' });
    expect(r.attributes).toMatchObject({ status: 'RETRY', timestamp: T0 + 10, error_code: 'E1', error_message: '' });
  });

  test('time_to_live = first ingestion + 3 days, never extended; expired records are gone', async () => {
    const first = await ingest({ id: 't', sender: 'scheduler', status: 'UNPROCESSED', timestamp: T0 });
    expect(first.attributes.time_to_live).toBe(T0 + 3 * 86400);
    await h.admin('POST', '/clock', { advance: 86400 });
    const again = await ingest({ id: 't', sender: 'scheduler', status: 'PROCESSING', timestamp: T0 + 86400 });
    expect(again.attributes.time_to_live).toBe(T0 + 3 * 86400);
    expect((await list('')).body.data).toHaveLength(1);
    await h.admin('POST', '/clock', { now: T0 + 3 * 86400 });
    expect((await list('')).body.data).toHaveLength(0);
  });

  test('error_message is cut to 8,000 bytes without splitting a character', async () => {
    const msg = 'é'.repeat(4001) + 'tail';
    const r = await ingest({ id: 'e', sender: 'zeroadmin', status: 'ERROR', error_message: msg });
    expect(Buffer.byteLength(r.attributes.error_message, 'utf8')).toBe(8000);
    expect(r.attributes.error_message).toBe('é'.repeat(4000));
  });

  test('children inherit subscription, product, payload, attribution date and file path', async () => {
    await ingest({
      id: 'p',
      sender: 'scheduler',
      status: 'PROCESSING',
      timestamp: T0,
      product_name: 'Orders',
      payload_name: 'orders',
      attribution_date: '2026-01-01',
      file_path: '/f',
      subscription_name: 'S',
      children: ['k'],
    });
    await h.admin('POST', '/tx', { id: 'k', sender: 'supervisor', status: 'PROCESSING', timestamp: T0 + 1, parent: 'p', payload_name: 'items' });
    const rows = (await list('&parent=p')).body.data;
    expect(rows).toHaveLength(1);
    expect(rows[0].attributes).toMatchObject({
      subscription_id: sid, product_name: 'Orders', payload_name: 'items', attribution_date: '2026-01-01', file_path: '/f', parent: 'p',
    });
  });

  test('a child reported before its parent inherits once the parent arrives', async () => {
    await h.admin('POST', '/tx', { id: 'early', sender: 'supervisor', status: 'PROCESSING', timestamp: T0 + 1, parent: 'late' });
    expect((await list('')).body.data).toHaveLength(0);
    await ingest({ id: 'late', sender: 'scheduler', status: 'PROCESSING', timestamp: T0, product_name: 'P' });
    const rows = (await list('&parent=late')).body.data;
    expect(rows.map((x: any) => [x.id, x.attributes.product_name])).toEqual([['early', 'P']]);
    expect((await list('&parent=')).body.data[0].attributes.children).toEqual(['early']);
  });

  test('invalid reports -> 400', async () => {
    expect((await h.admin('POST', '/tx', { id: 'x', sender: 'nobody', status: 'PROCESSING' })).status).toBe(400);
    expect((await h.admin('POST', '/tx', { id: 'x', sender: 'ftpsync', status: 'processed' })).status).toBe(400);
    expect((await h.admin('POST', '/tx', { sender: 'ftpsync', status: 'PROCESSED' })).status).toBe(400);
  });
});

describe('listing', () => {
  async function seed(n: number): Promise<void> {
    for (let i = 0; i < n; i++) {
      await ingest({ id: `tx-${String(i).padStart(3, '0')}`, sender: i % 2 ? 'ftpsync' : 'supervisor', status: i % 3 ? 'PROCESSED' : 'ERROR', timestamp: T0 + i, job_id: i % 4 ? `job-${i % 4}` : '' });
    }
  }

  test('newest first, stable tiebreak, default limit 50', async () => {
    await seed(60);
    await ingest({ id: 'same-b', sender: 'ftpsync', status: 'PROCESSED', timestamp: T0 + 100 });
    await ingest({ id: 'same-a', sender: 'ftpsync', status: 'PROCESSED', timestamp: T0 + 100 });
    const r = await list('');
    expect(r.status).toBe(200);
    expect(r.body.data).toHaveLength(50);
    expect(r.body.data.slice(0, 3).map((x: any) => x.id)).toEqual(['same-a', 'same-b', 'tx-059']);
    expect(r.body.meta.next_cursor).toEqual(expect.any(String));
  });

  test('limit counts records evaluated before filters; pages can be short or empty; cursor walks to the end', async () => {
    await seed(30);
    const seen: string[] = [];
    let cursor: string | null = null;
    let pages = 0;
    let emptyPages = 0;
    do {
      const q: string = `&limit=5&sender=ftpsync&status=ERROR${cursor ? `&cursor=${encodeURIComponent(cursor)}` : ''}`;
      const r = await list(q);
      expect(r.status).toBe(200);
      expect(r.body.data.length).toBeLessThanOrEqual(5);
      if (r.body.data.length === 0) emptyPages++;
      seen.push(...r.body.data.map((x: any) => x.id));
      cursor = r.body.meta.next_cursor;
      pages++;
    } while (cursor);
    expect(pages).toBe(6);
    expect(emptyPages).toBeGreaterThan(0);
    // ftpsync = odd i, ERROR = i % 3 == 0 -> 3, 9, 15, 21, 27
    expect(seen).toEqual(['tx-027', 'tx-021', 'tx-015', 'tx-009', 'tx-003']);
  });

  test('exact filters, job_id never matches empty, timestamp and modified_at ranges', async () => {
    await seed(12);
    const ids = async (q: string) => (await list(q)).body.data.map((x: any) => x.id);
    expect(await ids('&job_id=job-1')).toEqual(['tx-009', 'tx-005', 'tx-001']);
    expect(await ids('&job_id=')).toEqual([]);
    expect(await ids(`&timestamp_from=${T0 + 3}&timestamp_to=${T0 + 5}`)).toEqual(['tx-005', 'tx-004', 'tx-003']);
    expect(await ids(`&timestamp_from=${T0 + 10}`)).toEqual(['tx-011', 'tx-010']);
    const all = (await list('')).body.data;
    const mod = all.find((x: any) => x.id === 'tx-004').attributes.modified_at;
    expect(await ids(`&modified_at_from=${encodeURIComponent(mod)}&modified_at_to=${encodeURIComponent(mod)}`)).toEqual(['tx-004']);
    const ttl = all[0].attributes.time_to_live;
    expect(await ids(`&time_to_live=${ttl}`)).toHaveLength(12);
    expect(await ids('&status=processed')).toEqual([]);
  });

  test('403: missing subscription_id, another account, unknown subscription', async () => {
    const r = await h.api('GET', TX);
    expect(r.status).toBe(403);
    expect(r.body).toEqual({ message: 'Forbidden' });
    expect((await h.api('GET', `${TX}?subscription_id=8701`)).status).toBe(403);
    expect((await h.api('GET', `${TX}?subscription_id=424242`)).status).toBe(403);
    expect((await h.other('GET', `${TX}?subscription_id=8701`)).status).toBe(200);
  });

  test.each([
    ['unsupported parameter', '&foo=1'],
    ['repeated parameter', '&sender=ftpsync&sender=zeroadmin'],
    ['invalid integer limit', '&limit=abc'],
    ['limit too low', '&limit=0'],
    ['limit too high', '&limit=201'],
    ['invalid timestamp', '&timestamp_from=yesterday'],
    ['inverted timestamp range', '&timestamp_from=10&timestamp_to=5'],
    ['inverted modified_at range', '&modified_at_from=2026-02&modified_at_to=2026-01'],
    ['tree not boolean text', '&tree=yes'],
    ['tree_depth without tree', '&tree_depth=2'],
    ['tree_depth with tree=false', '&tree=false&tree_depth=2'],
    ['tree_depth out of range', '&tree=true&tree_depth=5'],
    ['tree_depth zero', '&tree=true&tree_depth=0'],
    ['invalid cursor', '&cursor=%%%garbage'],
    ['invalid integer time_to_live', '&time_to_live=1.5'],
  ])('422: %s', async (_n, q) => {
    const r = await list(q);
    expect(r.status).toBe(422);
    expect(r.body.errors[0].detail).toEqual(expect.any(String));
  });

  test('a cursor used with different filters or another subscription -> 422', async () => {
    await seed(5);
    const c = (await list('&limit=2&sender=ftpsync')).body.meta.next_cursor;
    expect((await list(`&limit=2&sender=ftpsync&cursor=${encodeURIComponent(c)}`)).status).toBe(200);
    expect((await list(`&limit=3&sender=ftpsync&cursor=${encodeURIComponent(c)}`)).status).toBe(200);
    expect((await list(`&limit=2&sender=zeroadmin&cursor=${encodeURIComponent(c)}`)).status).toBe(422);
    const other = await createSub(h, { product: 4001 });
    expect((await h.api('GET', `${TX}?subscription_id=${other}&limit=2&sender=ftpsync&cursor=${encodeURIComponent(c)}`)).status).toBe(422);
  });
});

describe('tree mode', () => {
  beforeEach(async () => {
    await ingest({ id: 'root', sender: 'scheduler', status: 'PROCESSING', timestamp: T0, product_name: 'Orders', job_id: 'J', children: ['c1', 'c2'] });
    await h.admin('POST', '/tx', { id: 'c1', sender: 'supervisor', status: 'PROCESSED', timestamp: T0 + 1, parent: 'root', payload_name: 'orders', job_id: '' });
    await h.admin('POST', '/tx', { id: 'c2', sender: 'supervisor', status: 'ERROR', timestamp: T0 + 2, parent: 'root', children: ['g1'] });
    await h.admin('POST', '/tx', { id: 'g1', sender: 'zeroadmin', status: 'PROCESSED', timestamp: T0 + 3, parent: 'c2', file_path: '/data/g1' });
  });

  test('one merged record per branch; descendant values override, empty values do not', async () => {
    const r = await list('&tree=true&parent=');
    // parent= matches only the root (empty parent)
    expect(r.status).toBe(200);
    const byId = Object.fromEntries(r.body.data.map((x: any) => [x.id, x.attributes]));
    expect(Object.keys(byId).sort()).toEqual(['c1', 'g1']);
    expect(byId.c1).toMatchObject({ sender: 'supervisor', status: 'PROCESSED', payload_name: 'orders', product_name: 'Orders', job_id: 'J', parent: 'root' });
    expect(byId.g1).toMatchObject({ sender: 'zeroadmin', status: 'PROCESSED', file_path: '/data/g1', job_id: 'J', parent: 'c2' });
  });

  test('tree_depth stops branches early; children stay expanded objects', async () => {
    const r = await list('&tree=true&tree_depth=1&parent=');
    const c2 = r.body.data.find((x: any) => x.id === 'c2');
    expect(c2.attributes.status).toBe('ERROR');
    expect(c2.attributes.children[0]).toMatchObject({ transaction_id: 'g1' });
  });

  test('filters apply before expansion; a descendant can appear twice', async () => {
    const r = await list('&tree=true');
    // root -> c1, root -> c2 -> g1, c1, c2 -> g1, g1
    expect(r.body.data.map((x: any) => x.id).sort()).toEqual(['c1', 'c1', 'g1', 'g1', 'g1']);
  });

  test('a missing referenced child -> 500 {error}', async () => {
    await ingest({ id: 'broken', sender: 'scheduler', status: 'PROCESSING', timestamp: T0 + 10, children: ['ghost'] });
    const r = await list('&tree=true');
    expect(r.status).toBe(500);
    expect(r.body.error).toMatch(/ghost/);
    expect((await list('')).status).toBe(200);
  });
});
