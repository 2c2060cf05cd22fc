import { createSub, Harness, ORDERS_SUB, useHarness } from './helpers';

describe("subscription product parameters (SPP), reads: 'vendor'", () => {
  let h: Harness;
  useHarness((started) => {
    h = started;
  }, { reads: 'vendor' }, { reset: true });

  test('GET /v2/spp shows the stored parameters of one subscription as one aggregate resource', async () => {
    const id = await createSub(h, { ...ORDERS_SUB, product_parameters: { marketplace_id: 'ATVPDKIKX0DER', stage_ids: '[1000]' } });
    const r = await h.api('GET', `/v2/spp?subscription_id=${id}`);
    expect(r.status).toBe(200);
    expect(r.body).toEqual({
      data: {
        type: 'SubscriptionProductParameters',
        id: String(id),
        // vendor doc subscriptions-api.md, "Remote identity reconciliation": the derived remote_identity_id row is
        // not exposed by the SPP reads (it is stored: the admin state shows it).
        attributes: { marketplace_id: 'ATVPDKIKX0DER', stage_ids: '[1000]' },
      },
    });
    // A PATCH merges: the read shows the new value and keeps the others.
    expect((await h.api('PATCH', `/v2/sub/${id}`, { data: { type: 'Subscription', id: String(id), attributes: { product_parameters: { stage_ids: '[1000, 1001]' } } } })).status).toBe(200);
    const after = await h.api('GET', `/v2/spp?subscription_id=${id}`);
    expect(after.body.data.attributes).toEqual({ marketplace_id: 'ATVPDKIKX0DER', stage_ids: '[1000, 1001]' });
    const stored = (await h.state()).subscriptions.find((x: any) => x.id === id);
    expect(stored.product_parameters.remote_identity_id).toBe('362');
  });

  test('GET /v2/spp: 400 for a missing or invalid ID, 404 for a missing or other account\'s subscription', async () => {
    const id = await createSub(h, ORDERS_SUB);
    expect((await h.api('GET', '/v2/spp')).status).toBe(400);
    expect((await h.api('GET', '/v2/spp?subscription_id=abc')).status).toBe(400);
    expect((await h.api('GET', '/v2/spp?subscription_id=0')).status).toBe(400);
    expect((await h.api('GET', '/v2/spp?subscription_id=999999')).status).toBe(404);
    expect((await h.other('GET', `/v2/spp?subscription_id=${id}`)).status).toBe(404);
    expect((await h.raw('GET', `/v2/spp?subscription_id=${id}`)).status).toBe(401);
  });

  test('GET /v2/spp/bulk: resources in the requested order, all-or-nothing 404 listing every unresolved ID, 1 to 100 IDs', async () => {
    const a = await createSub(h, ORDERS_SUB);
    const b = await createSub(h, { product: 4001, name: 'no params' });
    const r = await h.api('GET', `/v2/spp/bulk?subscription_ids=${b},${a}`);
    expect(r.status).toBe(200);
    expect(r.body.data.map((x: any) => x.id)).toEqual([String(b), String(a)]);
    expect(r.body.data[0]).toEqual({ type: 'SubscriptionProductParameters', id: String(b), attributes: {} });
    expect(r.body.data[1].attributes).toEqual({ marketplace_id: 'ATVPDKIKX0DER' });
    const missing = await h.api('GET', `/v2/spp/bulk?subscription_ids=${a},999998,999999`);
    expect(missing.status).toBe(404);
    expect(missing.body.errors[0].detail).toBe('Subscriptions were not found or are not accessible: 999998,999999');
    expect((await h.other('GET', `/v2/spp/bulk?subscription_ids=${a}`)).status).toBe(404);
    expect((await h.api('GET', '/v2/spp/bulk')).status).toBe(400);
    expect((await h.api('GET', `/v2/spp/bulk?subscription_ids=${a},${a}`)).status).toBe(400);
    expect((await h.api('GET', `/v2/spp/bulk?subscription_ids=${a},x`)).status).toBe(400);
    const many = Array.from({ length: 101 }, (_, i) => String(i + 1)).join(',');
    expect((await h.api('GET', `/v2/spp/bulk?subscription_ids=${many}`)).status).toBe(400);
  });
});

describe("POST /v2/spp (vendor doc subscriptions-api.md, 'Create a parameter row'), reads: 'vendor'", () => {
  let h: Harness;
  useHarness((started) => {
    h = started;
  }, { reads: 'vendor' }, { reset: true });
  const row = (attributes: Record<string, unknown>, type = 'SubscriptionProductParameter') => ({ data: { type, attributes } });

  test('creates a row (201) that the reads show; a duplicate key is a 409 that changes nothing', async () => {
    const id = await createSub(h, ORDERS_SUB);
    const r = await h.api('POST', '/v2/spp', row({ data_key: 'stage_ids', data_value: '[1000]', subscription: id }));
    expect(r.status).toBe(201);
    expect(r.body.data).toMatchObject({
      type: 'SubscriptionProductParameter',
      attributes: { data_key: 'stage_ids', data_value: '[1000]', subscription_id: id, product_id: 3001 },
    });
    expect(typeof r.body.data.id).toBe('string');
    expect(r.body.data.attributes.created_at).toMatch(/^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}Z$/);
    expect((await h.api('GET', `/v2/spp?subscription_id=${id}`)).body.data.attributes).toEqual({ marketplace_id: 'ATVPDKIKX0DER', stage_ids: '[1000]' });
    const dup = await h.api('POST', '/v2/spp', row({ data_key: 'stage_ids', data_value: '[1001]', subscription: id }));
    expect(dup.status).toBe(409);
    expect((await h.api('GET', `/v2/spp?subscription_id=${id}`)).body.data.attributes.stage_ids).toBe('[1000]');
    // data_value may be empty
    expect((await h.api('POST', '/v2/spp', row({ data_key: 'profile_id', data_value: '', subscription: id }))).status).toBe(201);
  });

  test('400 for computed or unknown attributes, a bad key, value, type or ID, remote_identity_id; 404 for another account', async () => {
    const id = await createSub(h, ORDERS_SUB);
    const ok = { data_key: 'stage_ids', data_value: '[1000]', subscription: id };
    for (const bad of [
      { ...ok, product: 3001 }, { ...ok, data_format: 'STRING' }, { ...ok, data_id: 0 }, { ...ok, colour: 'x' },
      { ...ok, data_key: '' }, { ...ok, data_value: 1000 }, { data_key: 'stage_ids', subscription: id }, { ...ok, subscription: '1' },
      { ...ok, subscription: 0 }, { ...ok, data_key: 'remote_identity_id', data_value: '363' },
    ]) {
      expect([JSON.stringify(bad), (await h.api('POST', '/v2/spp', row(bad))).status]).toEqual([JSON.stringify(bad), 400]);
    }
    expect((await h.api('POST', '/v2/spp', row(ok, 'SubscriptionProductParameters'))).status).toBe(400);
    expect((await h.other('POST', '/v2/spp', row(ok))).status).toBe(404);
    expect((await h.api('POST', '/v2/spp', row({ ...ok, subscription: 999999 }))).status).toBe(404);
    expect((await h.state()).subscriptions.find((x: any) => x.id === id).product_parameters).toEqual({ marketplace_id: 'ATVPDKIKX0DER', remote_identity_id: '362' });
  });
});

describe("subscription product parameters, reads: 'minimal'", () => {
  let h: Harness;
  useHarness((started) => {
    h = started;
  }, { reads: 'minimal' }, { reset: true });

  test('the SPP routes do not exist (404 as any unknown route)', async () => {
    const id = await createSub(h, ORDERS_SUB);
    expect((await h.api('GET', `/v2/spp?subscription_id=${id}`)).status).toBe(404);
    expect((await h.api('GET', `/v2/spp/bulk?subscription_ids=${id}`)).status).toBe(404);
    expect((await h.api('POST', '/v2/spp', { data: { type: 'SubscriptionProductParameter', attributes: { data_key: 'k', data_value: 'v', subscription: id } } })).status).toBe(404);
  });
});
