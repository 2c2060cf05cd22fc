/**
 * Interoperability with the vendor's own clients, written from the vendor's public API documentation (black-box HTTP;
 * no vendor code): list envelopes, token claims, the documented routes and unknown query parameters, in both read
 * modes. The modes differ only in the attributes a record shows. Filters: interop-filters.test.ts.
 */
import { createSub, Harness, ORDERS_SUB, useHarness } from './helpers';
import { DEFAULT_REFRESH_TOKEN, ReadMode } from '../../src/emulator';

const T0 = Date.parse('2026-06-15T12:00:00Z') / 1000;
/** Tokens outlive the clock moves of a test. */
const TTL = 10 * 86400;

function claims(jwt: string): Record<string, unknown> {
  return JSON.parse(Buffer.from(jwt.split('.')[1], 'base64url').toString('utf8'));
}

/** Path and query of an absolute link. */
function local(link: string): string {
  const u = new URL(link);
  return u.pathname + u.search;
}

describe.each(['minimal', 'vendor'] as ReadMode[])("vendor interop, reads: '%s'", (reads) => {
  let h: Harness;
  useHarness((started) => {
    h = started;
  }, { reads, now: T0, tokenTtlSeconds: TTL }, { reset: true, now: T0 });
  const vendor = reads === 'vendor';

  test('every list answers the paginated envelope: links, data, meta.pagination', async () => {
    const sub = await createSub(h, ORDERS_SUB);
    const lists = ['/sri', '/ri', '/storages', '/v2/storages', '/product', '/v2/product', '/v2/sub', '/sub', '/user',
      `/service/jobs/jobs?subscription_ids=${sub}`, `/spm?subscription=${sub}`];
    for (const path of lists) {
      const r = await h.api('GET', path);
      expect([path, r.status]).toEqual([path, 200]);
      expect(Object.keys(r.body).sort()).toEqual(['data', 'links', 'meta']);
      expect(Array.isArray(r.body.data)).toBe(true);
      expect(r.body.meta.pagination).toEqual({ page: 1, pages: 1, count: r.body.data.length });
      expect(r.body.links.first).toBe(`${h.url}${path}${path.includes('?') ? '&' : '?'}page=1`);
      expect(r.body.links.last).toBe(r.body.links.first);
      expect([r.body.links.next, r.body.links.prev]).toEqual(['', '']);
    }
  });

  test('page and page_size are honoured; next/prev links are followed; a page after the last is a 404', async () => {
    const p1 = await h.api('GET', '/sri?page_size=1');
    expect(p1.body.data.map((x: any) => x.id)).toEqual(['362']);
    expect(p1.body.meta.pagination).toEqual({ page: 1, pages: 4, count: 4 });
    expect(p1.body.links.last).toMatch(/page=4$/);
    const seen = [...p1.body.data.map((x: any) => x.id)];
    let next: string = p1.body.links.next;
    while (next !== '') {
      const r = await h.api('GET', local(next));
      expect(r.body.links.prev).not.toBe('');
      seen.push(...r.body.data.map((x: any) => x.id));
      next = r.body.links.next;
    }
    expect(seen).toEqual(['362', '363', '364', '365']);
    expect((await h.api('GET', '/sri?page=2&page_size=2')).body.data.map((x: any) => x.id)).toEqual(['364', '365']);
    expect((await h.api('GET', '/sri?page=5&page_size=1')).status).toBe(404);
    // The default page size (fixture pageSize, 20) applies when page_size is absent.
    await h.admin('POST', '/fixtures', { pageSize: 3 });
    expect((await h.api('GET', '/ri')).body.meta.pagination).toEqual({ page: 1, pages: 2, count: 4 });
  });

  test('the access token carries account_id, user_id and expires_at; expires_in agrees with them', async () => {
    const r = await h.raw('POST', '/auth/api/ref', { data: { type: 'APIAuth', attributes: { refresh_token: DEFAULT_REFRESH_TOKEN } } });
    expect(r.status).toBe(200);
    const token = r.body.data.attributes.token as string;
    expect(token).toMatch(/^[A-Za-z0-9_-]+\.[A-Za-z0-9_-]+\.[A-Za-z0-9_-]+$/);
    const c = claims(token);
    expect(c).toMatchObject({ account_id: 1001, user_id: 2001, account: 1001, user: 2001 });
    expect(typeof c.expires_at).toBe('number');
    expect(c.expires_at).toBe(c.exp);
    expect(r.body.data.attributes.expires_in).toBe((c.expires_at as number) - (c.iat as number));
    expect(r.body.data.attributes.expires_in).toBe(TTL);
    const now = (await h.admin('GET', '/clock')).body.now as number;
    expect(Math.abs((c.expires_at as number) - TTL - now)).toBeLessThanOrEqual(1);
    expect(claims(h.otherToken)).toMatchObject({ account_id: 1002, user_id: 2002 });
    // The token authenticates until expires_at, and not after.
    expect((await h.api('GET', '/account', undefined, token)).status).toBe(200);
    await h.admin('POST', '/clock', { now: (c.expires_at as number) + 1 });
    expect((await h.api('GET', '/account', undefined, token)).status).toBe(401);
  });

  test('GET /user: the list envelope with the caller as data[0] (vendor: the documented user fields)', async () => {
    const r = await h.api('GET', '/user');
    expect(r.body.data).toHaveLength(1);
    expect(r.body.data[0]).toMatchObject({ type: 'User', id: '2001' });
    if (vendor) {
      expect(r.body.data[0].attributes).toMatchObject({
        account_id: 1001, email_address: 'user@example.com', first_name: 'Emulated', last_name: 'User',
      });
      expect(r.body.data[0].attributes.email).toBeUndefined();
    } else {
      expect(r.body.data[0]).toEqual({ type: 'User', id: '2001' });
    }
    expect((await h.other('GET', '/user')).body.data[0].id).toBe('2002');
  });

  test('GET /ri/{id}: one identity of the caller; another account\'s or an unknown one is a 404', async () => {
    const r = await h.api('GET', '/ri/363');
    expect(r.status).toBe(200);
    expect(r.body.data).toMatchObject({ type: 'RemoteIdentity', id: '363' });
    if (vendor) expect(r.body.data.attributes).toMatchObject({ name: 'Vendor US', account_id: 1001, invalid_identity: 0 });
    else expect(r.body.data.attributes).toBeUndefined();
    expect((await h.api('GET', '/ri/372')).status).toBe(404);
    expect((await h.api('GET', '/ri/999999')).status).toBe(404);
    expect((await h.other('GET', '/ri/372')).body.data.id).toBe('372');
  });

  test('PATCH /sub/{id} (unversioned): status and meta entries, merged into the stored parameters', async () => {
    const id = await createSub(h, ORDERS_SUB);
    const body = {
      data: {
        type: 'Subscription',
        id: String(id),
        attributes: {
          status: 'paused',
          subscription_product_meta_attributes: [{ data_id: 0, data_key: 'stage_ids', data_value: '[1000]', data_format: 'STRING', product: 3001 }],
        },
      },
    };
    const r = await h.api('PATCH', `/sub/${id}`, body);
    expect(r.status).toBe(200);
    expect(r.body.data).toMatchObject({ type: 'Subscription', id: String(id), attributes: { status: 'paused' } });
    const stored = (await h.state()).subscriptions.find((s: any) => s.id === id);
    expect(stored.product_parameters).toEqual({ marketplace_id: 'ATVPDKIKX0DER', remote_identity_id: '362', stage_ids: '[1000]' });
    expect((await h.api('PATCH', `/sub/${id}`, { data: { type: 'Subscription', id: '1', attributes: {} } })).status).toBe(400);
    expect((await h.api('PATCH', '/sub/8701', { data: { type: 'Subscription', id: '8701', attributes: { status: 'paused' } } })).status).toBe(403);
  });

  test('GET /spm: one SubscriptionProductMeta row per stored parameter; data_key filter; other accounts match nothing', async () => {
    const id = await createSub(h, { ...ORDERS_SUB, product_parameters: { marketplace_id: 'ATVPDKIKX0DER', stage_ids: '[1000]' } });
    const r = await h.api('GET', `/spm?subscription=${id}`);
    expect(r.status).toBe(200);
    const rows = r.body.data.map((x: any) => [x.type, ...['data_key', 'data_value', 'data_format', 'product'].map((k) => x.attributes[k])]);
    expect(rows).toEqual([
      ['SubscriptionProductMeta', 'marketplace_id', 'ATVPDKIKX0DER', 'STRING', 3001],
      ['SubscriptionProductMeta', 'stage_ids', '[1000]', 'STRING', 3001],
      ['SubscriptionProductMeta', 'remote_identity_id', '362', 'STRING', 3001],
    ]);
    expect(new Set(r.body.data.map((x: any) => x.id)).size).toBe(3);
    const one = await h.api('GET', `/spm?subscription=${id}&data_key=stage_ids`);
    expect(one.body.data.map((x: any) => x.attributes.data_value)).toEqual(['[1000]']);
    expect((await h.api('GET', '/spm?subscription=8701')).body.data).toEqual([]);
    expect((await h.api('GET', `/spm?subscription__in=8601,${id}&data_key=remote_identity_id`)).body.data.map((x: any) => x.attributes.data_value))
      .toEqual(['364', '362']);
  });

  test('v2 storages carry storage_group_id (vendor); GET /product/{id} is a bare record', async () => {
    const v2 = (await h.api('GET', '/v2/storages?status=active')).body.data;
    const v1 = (await h.api('GET', '/storages?status=active')).body.data;
    expect(v2.map((x: any) => x.id)).toEqual(['501']);
    if (vendor) {
      expect(v2[0].attributes).toMatchObject({ storage_group_id: 501, status: 'active' });
      expect(v1[0].attributes.storage_group_id).toBeUndefined();
    } else {
      expect([v1[0], v2[0]]).toEqual([{ type: 'Storage', id: '501' }, { type: 'Storage', id: '501' }]);
    }
    const p = await h.api('GET', '/product/3001');
    expect(p.body).toMatchObject({ type: 'Product', id: '3001', attributes: { name: 'Marketplace Orders' } });
    expect(p.body.data).toBeUndefined();
    expect((await h.api('GET', '/product/999')).status).toBe(404);
  });

  test('jobs: subscription_ids is an optional filter; GET /service/jobs/jobs/{id}', async () => {
    const sub = await createSub(h, ORDERS_SUB);
    const all = await h.api('GET', '/service/jobs/jobs');
    expect(all.status).toBe(200);
    expect(all.body.data).toHaveLength(1);
    const job = all.body.data[0];
    expect(job.attributes.is_primary).toBe(true);
    expect((await h.api('GET', `/service/jobs/jobs/${job.id}`)).body.data).toEqual(job);
    expect((await h.api('GET', `/service/jobs/jobs?subscription_ids=${sub}&id=${job.id}`)).body.data).toHaveLength(1);
    expect((await h.api('GET', '/service/jobs/jobs/nope')).status).toBe(404);
    expect((await h.other('GET', `/service/jobs/jobs/${job.id}`)).status).toBe(403);
  });

  test('unknown query parameters are ignored, never refused', async () => {
    await createSub(h, ORDERS_SUB);
    for (const path of ['/sub', '/v2/sub', '/sri', '/ri', '/storages', '/v2/storages', '/product', '/v2/product', '/user', '/spm',
      '/service/jobs/jobs']) {
      const plain = await h.api('GET', path);
      const odd = await h.api('GET', `${path}?not_a_filter=1&format=json&subproduct=x`);
      expect([path, odd.status]).toEqual([path, 200]);
      expect(odd.body.data).toEqual(plain.body.data);
    }
    expect((await h.api('GET', '/ri/362?include=everything')).status).toBe(200);
    expect((await h.api('GET', '/account?fields=id')).status).toBe(200);
  });
});
