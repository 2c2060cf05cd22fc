import { createSub, Harness, ORDERS_SUB, useHarness } from './helpers';

/**
 * The routes, filters and rules of the vendor's public API docs (openbridge/embedded-api, api-usage-docs/ and
 * tutorials/) for the spec's areas, black-box, in both read modes. Each test names the doc that states the behaviour;
 * docs/emulator.md ("Vendor docs traceability") maps each to its test.
 */
describe.each(['minimal', 'vendor'] as const)("vendor-documented routes and rules, reads: '%s'", (reads) => {
  let h: Harness;
  useHarness((started) => {
    h = started;
  }, { reads }, { reset: true });

  const ids = (r: { body: { data: Array<{ id: string }> } }): string[] => r.body.data.map((x) => x.id);
  const patch = (id: number, attributes: Record<string, unknown>) =>
    h.api('PATCH', `/v2/sub/${id}`, { data: { type: 'Subscription', id: String(id), attributes } });

  /** Identity 380 of account 1002, shared with account 1001; identity 381 of account 1002, not shared. */
  async function loadShared(): Promise<void> {
    const r = await h.admin('POST', '/fixtures', {
      remoteIdentities: [
        { id: 380, account: 1002, name: 'Shared seller', remote_identity_type_id: 17, shared_with: [1001] },
        { id: 381, account: 1002, name: 'Private seller', remote_identity_type_id: 17 },
      ],
    });
    expect(r.status).toBeLessThan(300);
  }

  test('remote-identity-api.md: remote_identity_type filters /ri and /sri', async () => {
    for (const route of ['/ri', '/sri']) {
      expect(ids(await h.api('GET', `${route}?remote_identity_type=17`))).toEqual(['362', '364']);
      expect(ids(await h.api('GET', `${route}?remote_identity_type=18`))).toEqual(['363']);
      expect(ids(await h.api('GET', `${route}?remote_identity_type=99`))).toEqual([]);
      expect((await h.api('GET', `${route}?remote_identity_type=seller`)).status).toBe(400);
    }
  });

  test('remote-identity-api.md: /sri lists identities shared with the account, /ri only its own; /ri/{id} reads a shared one', async () => {
    await loadShared();
    expect(ids(await h.api('GET', '/sri?remote_identity_type=17'))).toEqual(['362', '364', '380']);
    expect(ids(await h.api('GET', '/ri?remote_identity_type=17'))).toEqual(['362', '364']);
    expect(ids(await h.api('GET', '/sri?ordering=-id&page_size=2'))).toEqual(['380', '365']);
    const one = await h.api('GET', '/ri/380');
    expect(one.status).toBe(200);
    expect(one.body.data.id).toBe('380');
    if (reads === 'vendor') expect(one.body.data.attributes.account_id).toBe(1002);
    else expect(one.body.data.attributes).toBeUndefined();
    expect((await h.api('GET', '/ri/381')).status).toBe(404);
    // the owner still sees both as its own
    expect(ids(await h.other('GET', '/ri?remote_identity_type=17'))).toEqual(['372', '380', '381']);
  });

  test('remote-identity-api.md: GET /rit (name, auth_service filters and their __icontains) and GET /rit/{id}', async () => {
    expect((await h.admin('POST', '/fixtures', {
      remoteIdentityTypes: [{ id: 1, name: 'Google', auth_service: 'google-api-oauth2' }, { id: 17, name: 'Amazon Seller Central', auth_service: 'sp-api-oauth' }],
    })).status).toBeLessThan(300);
    const all = await h.api('GET', '/rit');
    expect(all.status).toBe(200);
    // the loaded types and those the default products and identities name (5 advertising, 18 vendor)
    expect(ids(all)).toEqual(['1', '5', '17', '18']);
    expect(all.body.meta.pagination.count).toBe(4);
    expect(ids(await h.api('GET', '/rit?name=Google'))).toEqual(['1']);
    expect(ids(await h.api('GET', '/rit?name__icontains=amazon'))).toEqual(['5', '17', '18']);
    expect(ids(await h.api('GET', '/rit?auth_service=sp-api-oauth'))).toEqual(['17']);
    expect(ids(await h.api('GET', '/rit?auth_service__icontains=OAUTH'))).toEqual(['1', '17']);
    const one = await h.api('GET', '/rit/17');
    expect(one.status).toBe(200);
    if (reads === 'vendor') {
      expect(one.body).toMatchObject({ type: 'RemoteIdentityType', id: '17', attributes: { name: 'Amazon Seller Central', auth_service: 'sp-api-oauth' } });
    } else {
      expect(one.body).toEqual({ type: 'RemoteIdentityType', id: '17' });
    }
    expect((await h.api('GET', '/rit/99')).status).toBe(404);
    expect((await h.raw('GET', '/rit')).status).toBe(401);
  });

  test('subscriptions-api.md (remote identity reconciliation): a subscription may use an identity shared with the account', async () => {
    await loadShared();
    const id = await createSub(h, { ...ORDERS_SUB, remote_identity: 380 });
    expect((await h.state()).subscriptions.find((x: { id: number }) => x.id === id).product_parameters.remote_identity_id).toBe('380');
    const refused = await h.api('POST', '/v2/sub', {
      data: { type: 'Subscription', attributes: { account: 1001, user: 2001, status: 'active', date_start: '2026-01-01T00:00:00Z', ...ORDERS_SUB, remote_identity: 381 } },
    });
    expect(refused.status).toBe(400);
  });

  test('products-api.md: the product listing, unversioned and v2, with its filters (name, name__icontains too)', async () => {
    for (const route of ['/product', '/v2/product']) {
      const all = await h.api('GET', route);
      expect(all.status).toBe(200);
      expect(ids(all)).toEqual(['86', '107', '3001', '3002', '3003', '4001']);
      expect(all.body.meta.pagination).toEqual({ page: 1, pages: 1, count: 6 });
      expect(all.body.data[2]).toMatchObject({
        type: 'Product',
        attributes: { active: 1, name: 'Marketplace Orders', is_storage_product: 0 },
        relationships: { remote_identity_type: { data: { type: 'RemoteIdentityType', id: '17' } } },
      });
      expect(ids(await h.api('GET', `${route}?name=Advertising`))).toEqual(['3002']);
      expect(ids(await h.api('GET', `${route}?name=advertising`))).toEqual([]);
      expect(ids(await h.api('GET', `${route}?name__icontains=SP-API`))).toEqual(['86', '107']);
      expect(ids(await h.api('GET', `${route}?name__icontains=orders&active=1`))).toEqual(['3001']);
      expect(ids(await h.api('GET', `${route}?is_storage_product=1`))).toEqual(['4001']);
      expect(ids(await h.api('GET', `${route}?remote_identity_type=5`))).toEqual(['3002']);
      expect(ids(await h.api('GET', `${route}?active=0`))).toEqual(['3003']);
    }
    const bare = await h.api('GET', '/product/3001');
    expect(bare.body).toMatchObject({ type: 'Product', id: '3001' });
    expect((await h.api('GET', '/v2/product/3001')).body.data.id).toBe('3001');
  });

  test('subscriptions-api-legacy.md: /spm rows carry data_value as a string (JSON text stays text), data_id 0, data_format', async () => {
    const id = await createSub(h, { ...ORDERS_SUB, product_parameters: { marketplace_id: 'ATVPDKIKX0DER', stage_ids: '[1000]' } });
    const r = await h.api('GET', `/spm?subscription=${id}&data_key=stage_ids`);
    expect(r.status).toBe(200);
    expect(r.body.data).toHaveLength(1);
    expect(r.body.data[0].attributes).toEqual({ data_id: 0, data_key: 'stage_ids', data_value: '[1000]', data_format: 'STRING', product: 3001 });
    const all = await h.api('GET', `/spm?subscription=${id}`);
    expect(all.body.data.map((x: { attributes: { data_value: unknown } }) => typeof x.attributes.data_value)).toEqual(['string', 'string', 'string']);
    // v1 consumers see the remote identity as an SPM row (subscriptions-api.md, "Remote identity reconciliation")
    expect(all.body.data.find((x: { attributes: { data_key: string } }) => x.attributes.data_key === 'remote_identity_id').attributes.data_value).toBe('362');
  });

  test('subscriptions-api.md (Update Subscription): product_parameters PATCHes merge and never delete a key', async () => {
    const id = await createSub(h, { ...ORDERS_SUB, product_parameters: { marketplace_id: 'ATVPDKIKX0DER', stage_ids: '[1000]' } });
    const stored = async () => (await h.state()).subscriptions.find((x: { id: number }) => x.id === id).product_parameters;
    expect((await patch(id, { product_parameters: { stage_ids: '[1001]' } })).status).toBe(200);
    expect(await stored()).toEqual({ marketplace_id: 'ATVPDKIKX0DER', stage_ids: '[1001]', remote_identity_id: '362' });
    expect((await patch(id, { product_parameters: {} })).status).toBe(200);
    expect((await patch(id, { status: 'paused' })).status).toBe(200);
    expect(await stored()).toEqual({ marketplace_id: 'ATVPDKIKX0DER', stage_ids: '[1001]', remote_identity_id: '362' });
    // null-to-delete is not supported (400, nothing changes)
    expect((await patch(id, { product_parameters: { stage_ids: null } })).status).toBe(400);
    expect((await patch(id, { product_parameters: null })).status).toBe(400);
    expect(await stored()).toEqual({ marketplace_id: 'ATVPDKIKX0DER', stage_ids: '[1001]', remote_identity_id: '362' });
  });

  test('tutorials/subscription-configuration.md: leaving invalid while a duplicate is active or cancelled is refused (409)', async () => {
    const a = await createSub(h, ORDERS_SUB);
    expect((await patch(a, { status: 'invalid' })).status).toBe(200);
    const b = await createSub(h, ORDERS_SUB);
    const r = await patch(a, { status: 'active' });
    expect(r.status).toBe(409);
    expect(r.body.errors[0].status).toBe('409');
    expect((await h.state()).subscriptions.find((x: { id: number }) => x.id === a).status).toBe('invalid');
    expect((await patch(b, { status: 'cancelled' })).status).toBe(200);
    expect((await patch(a, { status: 'cancelled' })).status).toBe(409);
    expect((await patch(b, { status: 'invalid' })).status).toBe(200);
    expect((await patch(a, { status: 'active' })).status).toBe(200);
  });

  test('jobs-api.md: the job listing filters id, ids, subscription_ids and order_by=-id; GET /service/jobs/jobs/{id}', async () => {
    const a = await createSub(h, ORDERS_SUB);
    const b = await createSub(h, ORDERS_SUB);
    const all = ids(await h.api('GET', `/service/jobs/jobs?subscription_ids=${a},${b}`));
    expect(all).toHaveLength(2);
    const [ja, jb] = all;
    expect(ids(await h.api('GET', `/service/jobs/jobs?subscription_ids=${b}`))).toEqual([jb]);
    expect(ids(await h.api('GET', `/service/jobs/jobs?id=${jb}`))).toEqual([jb]);
    expect(ids(await h.api('GET', `/service/jobs/jobs?ids=${ja},${jb}`))).toEqual([ja, jb]);
    expect(ids(await h.api('GET', `/service/jobs/jobs?ids=${ja},${jb}&order_by=-id`))).toEqual([jb, ja]);
    expect(ids(await h.api('GET', `/service/jobs/jobs?ids=${ja},${jb}&page_size=1&page=2`))).toEqual([jb]);
    const one = await h.api('GET', `/service/jobs/jobs/${ja}`);
    expect(one.status).toBe(200);
    expect(one.body.data).toMatchObject({ type: 'Job', id: ja, attributes: { is_primary: true } });
  });

  test('subscriptions-api.md / subscriptions-api-legacy.md: storage listing filtered by status, as the docs look destinations up', async () => {
    for (const route of ['/storages', '/v2/storages']) {
      expect(ids(await h.api('GET', `${route}?status=active`))).toEqual(['501']);
      expect(ids(await h.api('GET', route))).toEqual(['501', '502']);
    }
  });
});
