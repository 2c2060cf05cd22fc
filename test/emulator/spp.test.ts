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
        attributes: { marketplace_id: 'ATVPDKIKX0DER', stage_ids: '[1000]', remote_identity_id: '362' },
      },
    });
    // A PATCH merges: the read shows the new value and keeps the others.
    expect((await h.api('PATCH', `/v2/sub/${id}`, { data: { type: 'Subscription', id: String(id), attributes: { product_parameters: { stage_ids: '[1000, 1001]' } } } })).status).toBe(200);
    const after = await h.api('GET', `/v2/spp?subscription_id=${id}`);
    expect(after.body.data.attributes).toEqual({ marketplace_id: 'ATVPDKIKX0DER', stage_ids: '[1000, 1001]', remote_identity_id: '362' });
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
    expect(r.body.data[1].attributes).toEqual({ marketplace_id: 'ATVPDKIKX0DER', remote_identity_id: '362' });
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

describe("subscription product parameters, reads: 'minimal'", () => {
  let h: Harness;
  useHarness((started) => {
    h = started;
  }, { reads: 'minimal' }, { reset: true });

  test('the SPP routes do not exist (404 as any unknown route)', async () => {
    const id = await createSub(h, ORDERS_SUB);
    expect((await h.api('GET', `/v2/spp?subscription_id=${id}`)).status).toBe(404);
    expect((await h.api('GET', `/v2/spp/bulk?subscription_ids=${id}`)).status).toBe(404);
  });
});
