import { Harness, useHarness } from './helpers';

/**
 * The explicit `/v1/...` aliases of the unversioned subscriptions-service routes and the `Deprecation` header of v1
 * answers, as the vendor's subscriptions-api-legacy.md (and subscriptions-api.md, "Migrating from v1?") documents
 * them, black-box, in both read modes. docs/emulator.md ("Vendor docs traceability") maps each to its test.
 */
describe.each(['minimal', 'vendor'] as const)("v1 aliases, reads: '%s'", (reads) => {
  let h: Harness;
  useHarness((started) => {
    h = started;
  }, { reads }, { reset: true });

  const DEPRECATION = '@1786406400';
  const ids = (r: { body: { data: Array<{ id: string }> } }): string[] => r.body.data.map((x) => x.id);
  const sub = (attributes: Record<string, unknown>) => ({
    data: { type: 'Subscription', attributes: { account: 1001, user: 2001, status: 'active', date_start: '2026-01-01T00:00:00Z', ...attributes } },
  });
  const orders = {
    product: 3001,
    remote_identity: 362,
    storage_group: 501,
    subscription_product_meta_attributes: [{ data_id: 0, data_key: 'marketplace_id', data_value: 'ATVPDKIKX0DER', data_format: 'STRING', product: 3001 }],
  };

  test('subscriptions-api-legacy.md: /v1/sub, /v1/spm, /v1/storages, /v1/product answer as the unversioned paths', async () => {
    const pairs: Array<[string, string]> = [
      ['/sub?status__not=invalid', '/v1/sub?status__not=invalid'],
      ['/sub/8601', '/v1/sub/8601'],
      ['/spm?subscription=8601&data_key=remote_identity_id', '/v1/spm?subscription=8601&data_key=remote_identity_id'],
      ['/storages?status=active', '/v1/storages?status=active'],
      ['/product?is_storage_product=1', '/v1/product?is_storage_product=1'],
      ['/product/3001', '/v1/product/3001'],
    ];
    for (const [plain, v1] of pairs) {
      const a = await h.api('GET', plain);
      const b = await h.api('GET', v1);
      expect([v1, b.status]).toEqual([v1, 200]);
      // same records (list links name the path that was called)
      expect(b.body.data ?? b.body).toEqual(a.body.data ?? a.body);
    }
    expect(ids(await h.api('GET', '/v1/storages?status=active'))).toEqual(['501']);
    expect(ids(await h.api('GET', '/v1/product?is_storage_product=1'))).toEqual(['4001']);
    expect((await h.api('GET', '/v1/spm?subscription=8601')).body.data.map((x: any) => x.attributes.data_key)).toEqual(['remote_identity_id']);
  });

  test('subscriptions-api-legacy.md: POST /v1/sub creates (meta entries), PATCH /v1/sub/{id} updates', async () => {
    const created = await h.api('POST', '/v1/sub', sub(orders));
    expect(created.status).toBe(201);
    expect(created.headers.get('deprecation')).toBe(DEPRECATION);
    const id = created.body.data.id as string;
    const patched = await h.api('PATCH', `/v1/sub/${id}`, { data: { type: 'Subscription', id, attributes: { status: 'paused' } } });
    expect(patched.status).toBe(200);
    expect(patched.body.data.attributes.status).toBe('paused');
    expect((await h.api('GET', `/sub/${id}`)).body.data.attributes.status).toBe('paused');
    // the v1 form refuses the v2 parameters, as /sub does
    expect((await h.api('POST', '/v1/sub', sub({ ...orders, product_parameters: { marketplace_id: 'X' } }))).status).toBe(400);
  });

  test('subscriptions-api-legacy.md: every v1 answer, unversioned or /v1, errors included, carries Deprecation; v2 and other services do not', async () => {
    for (const path of ['/sub', '/v1/sub', '/sub/8601', '/v1/sub/8601', '/spm?subscription=8601', '/v1/spm?subscription=8601',
      '/storages', '/v1/storages', '/product', '/v1/product', '/product/3001', '/v1/product/3001']) {
      const r = await h.api('GET', path);
      expect([path, r.status, r.headers.get('deprecation')]).toEqual([path, 200, DEPRECATION]);
      expect(r.headers.get('sunset')).toBeNull();
    }
    for (const [path, status] of [['/v1/sub/8701', 403], ['/v1/sub/99999', 404], ['/v1/sub?account=1002', 403], ['/v1/product/abc', 404], ['/v1/storages?id=x', 400]] as const) {
      const r = await h.api('GET', path);
      expect([path, r.status, r.headers.get('deprecation')]).toEqual([path, status, DEPRECATION]);
    }
    // an unauthenticated v1 call is refused before any route (no header needed to tell a client anything)
    expect((await h.raw('GET', '/v1/sub')).status).toBe(401);
    for (const path of ['/v2/sub', '/v2/product', '/v2/storages', '/sri', '/ri', '/account', '/user']) {
      const r = await h.api('GET', path);
      expect([path, r.status, r.headers.get('deprecation')]).toEqual([path, 200, null]);
    }
  });

  test('subscriptions-api-legacy.md: only the subscriptions service\'s unversioned routes have /v1 aliases', async () => {
    // v2 has no /v1/spp, and the account, user and remote identity services are not versioned (subscriptions-api.md)
    for (const path of ['/v1/v2/sub', '/v1/spp?subscription_id=8601', '/v1/ri', '/v1/sri', '/v1/account', '/v1/user', '/v1/rit']) {
      expect([path, (await h.api('GET', path)).status]).toEqual([path, 404]);
    }
  });

  test('subscriptions-api-legacy.md: list links of /v1/sub stay on /v1', async () => {
    for (let i = 0; i < 3; i++) expect((await h.api('POST', '/v1/sub', sub(orders))).status).toBe(201);
    const r = await h.api('GET', '/v1/sub?page_size=2');
    expect(r.body.meta.pagination.pages).toBe(2);
    expect(new URL(r.body.links.next).pathname).toBe('/v1/sub');
    expect(ids(await h.api('GET', '/v1/sub?page=2&page_size=2'))).toEqual(ids(await h.api('GET', '/sub?page=2&page_size=2')));
  });
});
