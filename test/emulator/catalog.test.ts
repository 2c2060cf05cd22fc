import { Harness, useHarness } from './helpers';

let h: Harness;
useHarness((started) => {
  h = started;
});

describe('product catalog', () => {
  test('cards list only active products with payload names', async () => {
    const r = await h.api('GET', '/service/product-cards/card');
    expect(r.status).toBe(200);
    const ids = r.body.map((c: any) => c.id);
    expect(ids).toContain(3001);
    expect(ids).not.toContain(3003);
    expect(r.body.find((c: any) => c.id === 3001)).toEqual({ id: 3001, name: 'Marketplace Orders', summary: expect.any(String), payloads: ['orders', 'order_items'] });
  });

  test('card detail has every definition field; storage product nulls; 404', async () => {
    const d = (await h.api('GET', '/service/product-cards/card/3001')).body;
    for (const k of ['id', 'product_group_id', 'name', 'summary', 'description', 'worker_name', 'remote_identity_type_name', 'remote_identity_type_id',
      'is_storage_product', 'active', 'allow_as_trial', 'premium_product', 'initialize_job', 'subscription_info', 'backend_info', 'history_info', 'stages']) {
      expect(d).toHaveProperty(k);
    }
    expect(d.initialize_job).toBe(1);
    expect(d.subscription_info.spm_requirements).toEqual(['remote_identity_id', 'marketplace_id']);
    expect(d.history_info[0]).toMatchObject({ stage_id: 1000, subproduct_id: 'default', days: 30 });
    const s = (await h.api('GET', '/service/product-cards/card/4001')).body;
    expect(s).toMatchObject({ is_storage_product: 1, worker_name: null, backend_info: null, history_info: null, stages: null });
    expect((await h.api('GET', '/service/product-cards/card/9999')).status).toBe(404);
    expect((await h.api('GET', '/service/product-cards/card/abc')).status).toBe(404);
  });

  test('payloads with stage_id__gte and enabled filters', async () => {
    const all = (await h.api('GET', '/service/products/product/3001/payloads')).body.data;
    expect(all.map((p: any) => p.attributes.stage_id)).toEqual([10, 1000, 1001, 1002]);
    expect(all[0]).toEqual({ type: 'Product', id: '30010', attributes: { name: 'orders_legacy', stage_id: 10 } });
    const named = (await h.api('GET', '/service/products/product/3001/payloads?stage_id__gte=1000&enabled=true')).body.data;
    expect(named.map((p: any) => p.attributes.name)).toEqual(['orders', 'order_items']);
    expect((await h.api('GET', '/service/products/product/3001/payloads?stage_id__gte=x')).status).toBe(400);
    expect((await h.api('GET', '/service/products/product/777/payloads')).status).toBe(404);
  });

  test('fixture-driven and fault-injected 500s carry {error}', async () => {
    await h.admin('POST', '/fixtures', { failingCatalogProducts: [3002] });
    const r = await h.api('GET', '/service/product-cards/card/3002');
    expect(r.status).toBe(500);
    expect(typeof r.body.error).toBe('string');
    expect((await h.api('GET', '/service/products/product/3002/payloads')).status).toBe(500);
    await h.admin('POST', '/fixtures', { failingCatalogProducts: [] });
    expect((await h.api('GET', '/service/product-cards/card/3002')).status).toBe(200);
    await h.admin('POST', '/faults', { pathPrefix: '/service/product-cards', status: 500, count: 1, body: { error: 'boom' } });
    const f = await h.api('GET', '/service/product-cards/card');
    expect(f.status).toBe(500);
    expect(f.body).toEqual({ error: 'boom' });
    expect((await h.api('GET', '/service/product-cards/card')).status).toBe(200);
  });
});
