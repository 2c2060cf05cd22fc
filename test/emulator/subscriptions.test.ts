import { createSub, Harness, ORDERS_SUB, useHarness } from './helpers';

let h: Harness;
useHarness((started) => {
  h = started;
}, {}, { reset: true });

const base = { account: 1001, user: 2001, status: 'active', date_start: '2026-01-01T00:00:00Z' };
const post = (attrs: Record<string, unknown>, path = '/v2/sub') => h.api('POST', path, { data: { type: 'Subscription', attributes: { ...base, ...attrs } } });
const patch = (id: number, attrs: Record<string, unknown>) => h.api('PATCH', `/v2/sub/${id}`, { data: { type: 'Subscription', id: String(id), attributes: attrs } });

describe('lookups', () => {
  test('account, user, identities, storages: only id (minimal reads), in the vendor envelopes', async () => {
    expect((await h.api('GET', '/account')).body).toEqual({ data: { type: 'Account', id: '1001' } });
    const user = (await h.api('GET', '/user')).body;
    expect(user.data).toEqual([{ type: 'User', id: '2001' }]);
    expect(user.meta.pagination).toEqual({ page: 1, pages: 1, count: 1 });
    for (const p of ['/sri', '/ri']) {
      const body = (await h.api('GET', p)).body;
      expect(body.data.map((x: any) => x.id)).toEqual(['362', '363', '364', '365']);
      expect(Object.keys(body).sort()).toEqual(['data', 'links', 'meta']);
      expect(body.data[0]).toEqual({ type: 'RemoteIdentity', id: '362' });
    }
    for (const p of ['/storages?status=active', '/v2/storages?status=active']) {
      const st = (await h.api('GET', p)).body.data;
      expect(st).toEqual([{ type: 'Storage', id: '501' }]);
    }
    expect((await h.api('GET', '/storages')).body.data.map((x: any) => x.id)).toEqual(['501', '502']);
    expect((await h.other('GET', '/sri')).body.data.map((x: any) => x.id)).toEqual(['372']);
    // The vendor's single-record routes are served in both modes (minimal: the spec's fields only).
    expect((await h.api('GET', '/ri/362')).body).toEqual({ data: { type: 'RemoteIdentity', id: '362' } });
    expect((await h.api('GET', '/ri/372')).status).toBe(404);
    expect((await h.api('GET', '/product/3001')).body).toMatchObject({ type: 'Product', id: '3001' });
  });

  test('products in both forms, storage filter, one product, 404', async () => {
    const all = (await h.api('GET', '/product')).body.data;
    expect(all.map((p: any) => p.id)).toEqual(['86', '107', '3001', '3002', '3003', '4001']);
    const src = (await h.api('GET', '/v2/product?is_storage_product=0')).body.data;
    expect(src.map((p: any) => p.id)).not.toContain('4001');
    const st = (await h.api('GET', '/v2/product?is_storage_product=1')).body.data;
    expect(st.map((p: any) => p.id)).toEqual(['4001']);
    expect(st[0].relationships.remote_identity_type.data).toBeNull();
    const one = (await h.api('GET', '/v2/product/3002')).body.data;
    expect(one).toMatchObject({
      type: 'Product',
      id: '3002',
      attributes: { active: 1, is_storage_product: 0, required_meta_fields: ['remote_identity_id', 'profile_id'] },
      relationships: { remote_identity_type: { data: { type: 'RemoteIdentityType', id: '5' } } },
    });
    expect((await h.api('GET', '/v2/product/9999')).status).toBe(404);
    expect((await h.api('GET', '/v2/product?is_storage_product=x')).status).toBe(400);
  });
});

describe('create', () => {
  test('v2 form: 201, remote_identity_id copied, primary job created for initialize_job products', async () => {
    const r = await post({ ...ORDERS_SUB, name: 'Orders' });
    expect(r.status).toBe(201);
    // Minimal reads: the spec shows only id and status.
    expect(r.body).toEqual({ data: { type: 'Subscription', id: expect.stringMatching(/^\d+$/), attributes: { status: 'active' } } });
    const rec = (await h.state()).subscriptions.find((x: any) => x.id === Number(r.body.data.id));
    expect(rec).toMatchObject({
      account: 1001,
      user: 2001,
      product: 3001,
      status: 'active',
      remote_identity: 362,
      storage_group: 501,
      name: 'Orders',
      product_parameters: { marketplace_id: 'ATVPDKIKX0DER', remote_identity_id: '362' },
    });
    const id = Number(r.body.data.id);
    for (const path of [`/sub/${id}`, `/v2/sub/${id}`]) {
      expect((await h.api('GET', path)).body).toEqual({ data: { type: 'Subscription', id: String(id), attributes: { status: 'active' } } });
    }
    const st = await h.state();
    expect(st.jobs.filter((j: any) => j.subscription_id === id && j.is_primary)).toHaveLength(1);
  });

  test('unversioned form with the meta array', async () => {
    const r = await post({
      product: 3002,
      remote_identity: 365,
      storage_group: 501,
      date_end: '2027-01-01T00:00:00Z',
      subscription_product_meta_attributes: [
        { data_id: 1, data_key: 'profile_id', data_value: '42', data_format: 'STRING', product: 3002 },
        { data_id: 2, data_key: 'stage_ids', data_value: '[1000]', data_format: 'STRING', product: 3002 },
      ],
    }, '/sub');
    expect(r.status).toBe(201);
    expect(r.body.data.attributes).toEqual({ status: 'active' });
    const rec = (await h.state()).subscriptions.find((x: any) => x.id === Number(r.body.data.id));
    expect(rec.product_parameters).toEqual({ profile_id: '42', stage_ids: '[1000]', remote_identity_id: '365' });
    expect(rec.date_end).toBe('2027-01-01T00:00:00Z');
    const bad = await post({ product: 3002, remote_identity: 365, subscription_product_meta_attributes: [{ data_key: 'profile_id', data_value: 42 }] }, '/sub');
    expect(bad.status).toBe(400);
    expect(bad.body.errors[0].detail).toMatch(/profile_id/);
  });

  test.each([
    ['missing account', { account: undefined }, 400, /account/],
    ['missing user', { user: undefined }, 400, /user/],
    ['missing product', { product: undefined }, 400, /product/],
    ['missing status', { status: undefined }, 400, /status/],
    ['missing date_start', { date_start: undefined }, 400, /date_start/],
    ['bad date_start', { date_start: 'yesterday' }, 400, /date_start/],
    ['foreign account', { account: 1002 }, 403, /account/],
    ['foreign user', { user: 2002 }, 403, /user/],
    ['non-string parameter', { product_parameters: { marketplace_id: 5 } }, 400, /marketplace_id/],
    ['missing required meta', { product_parameters: {} }, 400, /marketplace_id/],
    ['missing identity', { remote_identity: undefined }, 400, /remote_identity/],
    ['unknown identity', { remote_identity: 999 }, 400, /remote identity 999/],
    ["another account's identity", { remote_identity: 372 }, 400, /remote identity 372/],
    ['unknown storage group', { storage_group: 999 }, 400, /storage_group 999/],
    ['unknown product', { product: 4242 }, 400, /4242/],
    ['inactive product', { product: 3003, remote_identity: undefined }, 400, /not active/],
    ['legacy stage id', { product_parameters: { marketplace_id: 'X', stage_ids: '[10]' } }, 400, /legacy/],
    ['unknown stage id', { product_parameters: { marketplace_id: 'X', stage_ids: '[1500]' } }, 400, /1500/],
    ['create as cancelled', { status: 'cancelled' }, 400, /status/],
  ])('%s', async (_n, over, status, msg) => {
    const r = await post({ ...ORDERS_SUB, ...over });
    expect(r.status).toBe(status);
    expect(r.body.errors[0].detail).toMatch(msg);
    expect((await h.state()).subscriptions).toHaveLength(2);
  });

  test('a remote identity is refused for a product that needs none', async () => {
    const r = await post({ product: 4001, remote_identity: 362 });
    expect(r.status).toBe(400);
    expect((await post({ product: 4001 })).status).toBe(201);
  });
});

describe('read and list', () => {
  test('v2 list with product filter, list by account, 403 and 404', async () => {
    const a = await createSub(h, ORDERS_SUB);
    await createSub(h, { product: 4001 });
    const byProduct = (await h.api('GET', '/v2/sub?product=3001')).body.data;
    expect(byProduct.map((s: any) => Number(s.id))).toEqual([a]);
    expect((await h.api('GET', '/v2/sub')).body.data).toHaveLength(3);
    expect((await h.api('GET', '/sub?account=1001')).body.data).toHaveLength(3);
    expect((await h.api('GET', '/sub?account=1002')).status).toBe(403);
    expect((await h.api('GET', '/sub')).body.data).toHaveLength(3);
    expect((await h.api('GET', '/sub/8701')).status).toBe(403);
    expect((await h.api('GET', '/sub/123456')).status).toBe(404);
    expect((await h.other('GET', '/v2/sub')).body.data.map((s: any) => s.id)).toEqual(['8701']);
  });
});

describe('update', () => {
  test('partial merge of product_parameters; values must be strings (null does not delete)', async () => {
    const id = await createSub(h, { ...ORDERS_SUB, product_parameters: { marketplace_id: 'ATVPDKIKX0DER', extra: 'x', other: 'y' } });
    const r = await patch(id, { product_parameters: { extra: 'z', added: 'a' }, name: 'renamed' });
    expect(r.status).toBe(200);
    expect(r.body.data.attributes).toEqual({ status: 'active' });
    const rec = (await h.state()).subscriptions.find((x: any) => x.id === id);
    expect(rec.product_parameters).toEqual({ marketplace_id: 'ATVPDKIKX0DER', extra: 'z', other: 'y', added: 'a', remote_identity_id: '362' });
    expect(rec.name).toBe('renamed');
    for (const pp of [{ other: null }, { marketplace_id: null }, { x: 1 }, { x: true }, { x: { y: 'z' } }]) {
      const bad = await patch(id, { product_parameters: pp });
      expect(bad.status).toBe(400);
      expect(bad.body.errors[0].detail).toMatch(/must be a string/);
    }
    expect((await h.state()).subscriptions.find((x: any) => x.id === id).product_parameters).toEqual(rec.product_parameters);
  });

  test('v2: remote_identity_id in product_parameters names the identity too; a value other than remote_identity is a 400 (subscriptions-api.md)', async () => {
    expect((await post({ ...ORDERS_SUB, product_parameters: { marketplace_id: 'X', remote_identity_id: '362' } })).status).toBe(201);
    const bad = await post({ ...ORDERS_SUB, product_parameters: { marketplace_id: 'X', remote_identity_id: '363' } });
    expect(bad.status).toBe(400);
    expect(bad.body.errors[0].detail).toMatch(/remote_identity_id/);
    expect((await post({ product: 4001, product_parameters: { remote_identity_id: '362' } })).status).toBe(400);
    expect((await post({ ...ORDERS_SUB, product_parameters: null })).status).toBe(400);
    const id = await createSub(h, ORDERS_SUB);
    expect((await patch(id, { product_parameters: { remote_identity_id: '362' } })).status).toBe(200);
    expect((await patch(id, { remote_identity: 362, product_parameters: { remote_identity_id: '364' } })).status).toBe(400);
    expect((await h.state()).subscriptions.find((x: any) => x.id === id).remote_identity).toBe(362);
    expect((await patch(id, { remote_identity: 364, product_parameters: { remote_identity_id: '364' } })).status).toBe(200);
    // alone, it moves the subscription to that identity (vendor doc subscriptions-api.md, "Remote identity reconciliation")
    expect((await patch(id, { product_parameters: { remote_identity_id: '362' } })).status).toBe(200);
    expect((await h.state()).subscriptions.find((x: any) => x.id === id)).toMatchObject({ remote_identity: 362, product_parameters: { remote_identity_id: '362' } });
  });

  test('body id must match; immutable fields; 403 and 404', async () => {
    const id = await createSub(h, ORDERS_SUB);
    const r = await h.api('PATCH', `/v2/sub/${id}`, { data: { type: 'Subscription', id: '1', attributes: { name: 'x' } } });
    expect(r.status).toBe(400);
    expect((await patch(id, { product: 3002 })).status).toBe(400);
    expect((await patch(8701, { name: 'x' })).status).toBe(403);
    expect((await patch(77777, { name: 'x' })).status).toBe(404);
  });

  test('status transitions', async () => {
    const id = await createSub(h, ORDERS_SUB);
    expect((await patch(id, { status: 'paused' })).body.data.attributes.status).toBe('paused');
    expect((await patch(id, { status: 'active' })).body.data.attributes.status).toBe('active');
    expect((await patch(id, { status: 'cancelled' })).body.data.attributes.status).toBe('cancelled');
    const back = await patch(id, { status: 'active' });
    expect(back.status).toBe(400);
    expect((await patch(id, { status: 'invalid' })).body.data.attributes.status).toBe('invalid');
    expect((await patch(id, { status: 'paused' })).status).toBe(400);
    expect((await patch(id, { status: 'bogus' })).status).toBe(400);
    expect((await patch(id, { status: 'active' })).body.data.attributes.status).toBe('active');
  });

  test('leaving invalid is refused while a duplicate active or cancelled subscription exists', async () => {
    const a = await createSub(h, ORDERS_SUB);
    expect((await patch(a, { status: 'invalid' })).status).toBe(200);
    const b = await createSub(h, ORDERS_SUB);
    const r = await patch(a, { status: 'active' });
    expect(r.status).toBe(409);
    expect(r.body.errors[0].detail).toMatch(/duplicate/);
    expect((await patch(a, { status: 'cancelled' })).status).toBe(409);
    await patch(b, { status: 'paused' });
    expect((await patch(a, { status: 'cancelled' })).status).toBe(200);
  });

  test('nothing is ever deleted', async () => {
    const id = await createSub(h, ORDERS_SUB);
    const r = await h.api('DELETE', `/v2/sub/${id}`);
    expect(r.status).toBe(404);
    expect((await h.api('GET', `/sub/${id}`)).status).toBe(200);
  });
});
