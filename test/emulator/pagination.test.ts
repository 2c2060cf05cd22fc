/**
 * The emulator's `pagination` option: by default every list answers the vendor's paginated envelope (`links`,
 * `meta.pagination`, `page`/`page_size`); with `pagination: false` each list answers all its records as `{data}`, no
 * `links` or `meta`, `page`/`page_size` ignored, like a service that does not paginate. The records are the same
 * either way (the paginated pages, concatenated). The transaction listing's cursor (in the spec) is not affected.
 * Both read modes.
 */
import { createSub, Harness, ORDERS_SUB } from './helpers';
import { READ_MODES } from '../../src/emulator';

const T0 = 1_800_000_000;
const LISTS = [
  '/sub', '/v2/sub', '/ri', '/sri', '/storages', '/v2/storages', '/product', '/v2/product', '/user', '/service/jobs/jobs',
  '/service/healthchecks/production/healthchecks/account/1001',
];

describe.each(READ_MODES)('%s reads', (reads) => {
  let paged: Harness;
  let flat: Harness;
  beforeAll(async () => {
    paged = await Harness.start({ now: T0, reads, tokenTtlSeconds: 30 * 86400 });
    flat = await Harness.start({ now: T0, reads, tokenTtlSeconds: 30 * 86400, pagination: false });
    for (const h of [paged, flat]) {
      const subs = [await createSub(h, { ...ORDERS_SUB, name: 'a' }), await createSub(h, { ...ORDERS_SUB, name: 'b' })];
      const r = await h.admin('POST', '/tx', subs.flatMap((s, i) => ['orders', 'fees'].map((payload, j) => ({
        id: `t${i}${j}`, subscription_id: s, payload_name: payload, sender: 'zeroadmin', status: 'PROCESSED', timestamp: T0 - 60 * (i + j + 1),
      }))));
      expect(r.status).toBe(200);
    }
  });
  afterAll(async () => {
    await paged.stop();
    await flat.stop();
  });

  /** Every record of a paginated list, one page of one record at a time (following links.next). */
  async function allPages(path: string): Promise<{ records: unknown[]; pages: number }> {
    const records: unknown[] = [];
    for (let page = 1; page < 100; page++) {
      const r = await paged.api('GET', `${path}${path.includes('?') ? '&' : '?'}page_size=1&page=${page}`);
      expect([path, r.status]).toEqual([path, 200]);
      expect([path, Object.keys(r.body).sort()]).toEqual([path, ['data', 'links', 'meta']]);
      records.push(...r.body.data);
      if (!r.body.links.next) return { records, pages: page };
    }
    throw new Error(`${path}: more than 99 pages`);
  }

  test('pagination: false answers every list in one {data} with all records; the same records as the pages of a paginating service', async () => {
    let multiPage = 0;
    for (const path of LISTS) {
      const { records, pages } = await allPages(path);
      if (pages > 1) multiPage++;
      // page and page_size are ignored, and a page past the end is no 404.
      for (const q of ['', '?page_size=1', '?page=99&page_size=1']) {
        const r = await flat.api('GET', path + q);
        expect([path + q, r.status]).toEqual([path + q, 200]);
        expect([path + q, Object.keys(r.body)]).toEqual([path + q, ['data']]);
        expect([path + q, r.body.data]).toEqual([path + q, records]);
      }
    }
    // The comparison means something: several lists have more than one record.
    expect(multiPage).toBeGreaterThanOrEqual(5);
    // A paginating emulator refuses a page past the end (the vendor's 404), the other does not page at all.
    expect((await paged.api('GET', '/sub?page=99&page_size=1')).status).toBe(404);
  });

  test('the transaction listing keeps its cursor (meta.next_cursor, from the spec) either way', async () => {
    for (const h of [paged, flat]) {
      const subs = (await h.api('GET', '/sub')).body.data.map((s: { id: string }) => Number(s.id));
      const withTx = Math.max(...subs); // the last one created: it has transactions
      const r = await h.api('GET', `/service/transactions/tx?subscription_id=${withTx}&limit=1`);
      expect(r.status).toBe(200);
      expect(r.body.data).toHaveLength(1);
      expect(r.body.meta.next_cursor).toEqual(expect.any(String));
    }
  });
});
