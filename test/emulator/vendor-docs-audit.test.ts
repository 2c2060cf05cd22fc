import { createSub, Harness, ORDERS_SUB, useHarness } from './helpers';

/**
 * The routes, filters and rules of the vendor's api-usage-docs/ (openbridge/embedded-api) that an audit of the
 * traceability table found ignored, black-box, in both read modes. Each test names the doc that states the behaviour;
 * docs/emulator.md ("Vendor docs traceability") maps each to its test.
 */
describe.each(['minimal', 'vendor'] as const)("vendor docs audit, reads: '%s'", (reads) => {
  let h: Harness;
  useHarness((started) => {
    h = started;
  }, { reads }, { reset: true });

  const ids = (r: { body: { data: Array<{ id: string }> } }): string[] => r.body.data.map((x) => x.id);
  const post = (attributes: Record<string, unknown>) => h.api('POST', '/v2/sub', {
    data: { type: 'Subscription', attributes: { account: 1001, user: 2001, status: 'active', date_start: '2026-01-01T00:00:00Z', ...attributes } },
  });
  const patch = (id: number, attributes: Record<string, unknown>, route = '/v2/sub') =>
    h.api('PATCH', `${route}/${id}`, { data: { type: 'Subscription', id: String(id), attributes } });
  const stored = async (id: number): Promise<any> => (await h.state()).subscriptions.find((x: { id: number }) => x.id === id);
  const { remote_identity: _ri, ...ORDERS_NO_IDENTITY } = ORDERS_SUB;

  test('subscriptions-api.md ("Remote identity reconciliation"): create takes the identity from remote_identity_id or product_parameters too', async () => {
    const byAttribute = await post({ ...ORDERS_NO_IDENTITY, remote_identity_id: 362 });
    expect(byAttribute.status).toBe(201);
    const a = await stored(Number(byAttribute.body.data.id));
    expect(a).toMatchObject({ remote_identity: 362, product_parameters: { remote_identity_id: '362' } });
    const byParameter = await post({ ...ORDERS_NO_IDENTITY, product_parameters: { marketplace_id: 'X', remote_identity_id: '364' } });
    expect(byParameter.status).toBe(201);
    expect(await stored(Number(byParameter.body.data.id))).toMatchObject({ remote_identity: 364, product_parameters: { remote_identity_id: '364' } });
    // several locations naming the same identity (number and numeric string) are accepted
    expect((await post({ ...ORDERS_SUB, remote_identity_id: '362', product_parameters: { marketplace_id: 'X', remote_identity_id: '362' } })).status).toBe(201);
  });

  test('subscriptions-api.md ("Remote identity reconciliation"): conflicting values are a 400 that changes nothing', async () => {
    const before = (await h.state()).subscriptions.length;
    const conflict = await post({ ...ORDERS_SUB, remote_identity_id: 363 });
    expect(conflict.status).toBe(400);
    expect(conflict.body.errors[0].detail).toMatch(/conflicting remote identity values: remote_identity=362, remote_identity_id=363/);
    expect((await post({ ...ORDERS_NO_IDENTITY, remote_identity_id: 'seller' })).status).toBe(400);
    expect((await h.state()).subscriptions.length).toBe(before);
    const id = await createSub(h, ORDERS_SUB);
    expect((await patch(id, { remote_identity_id: 364, product_parameters: { remote_identity_id: '363' } })).status).toBe(400);
    expect((await stored(id)).remote_identity).toBe(362);
    const moved = await patch(id, { remote_identity_id: 364 });
    expect(moved.status).toBe(200);
    expect(await stored(id)).toMatchObject({ remote_identity: 364, product_parameters: { remote_identity_id: '364' } });
    if (reads === 'vendor') expect(moved.body.data.attributes.remote_identity_id).toBe(364);
  });

  test('subscriptions-api.md ("Remote identity reconciliation"): a required identity cannot be cleared with null', async () => {
    const id = await createSub(h, ORDERS_SUB);
    for (const attrs of [{ remote_identity: null }, { remote_identity_id: null }]) {
      const r = await patch(id, attrs);
      expect(r.status).toBe(400);
      expect(r.body.errors[0].detail).toMatch(/requires remote_identity/);
    }
    expect(await stored(id)).toMatchObject({ remote_identity: 362, product_parameters: { remote_identity_id: '362' } });
    // a product without identity: null is accepted and leaves none
    const dest = await createSub(h, { product: 4001 });
    expect((await patch(dest, { remote_identity_id: null })).status).toBe(200);
    expect(await stored(dest)).toMatchObject({ remote_identity: null, product_parameters: {} });
  });

  test('subscriptions-api.md ("Remote identity reconciliation"): a supplied identity must be valid; an unrelated update is not revalidated', async () => {
    const revoked = { id: 366, account: 1001, name: 'Revoked seller', remote_identity_type_id: 17, invalid_identity: 1 };
    expect((await h.admin('POST', '/fixtures', { remoteIdentities: [revoked] })).status).toBe(200);
    const refused = await post({ ...ORDERS_SUB, remote_identity: 366 });
    expect(refused.status).toBe(400);
    expect(refused.body.errors[0].detail).toMatch(/remote identity 366 cannot be attached: its credentials were revoked or expired/);
    const id = await createSub(h, ORDERS_SUB);
    expect((await patch(id, { remote_identity: 366 })).status).toBe(400);
    // identity 362 is revoked after the subscription was created: a status-only update still passes, supplying it does not
    expect((await h.admin('POST', '/fixtures', { remoteIdentities: [{ id: 362, account: 1001, remote_identity_type_id: 17, invalid_identity: 1 }] })).status).toBe(200);
    expect((await patch(id, { status: 'paused' })).status).toBe(200);
    expect((await patch(id, { name: 'renamed' }, '/sub')).status).toBe(200);
    expect((await patch(id, { remote_identity: 362 })).status).toBe(400);
    expect((await stored(id)).status).toBe('paused');
  });

  test('subscriptions-api.md ("Create Subscription"): v1 and v2 refuse to reactivate a subscription of an inactive product', async () => {
    const a = await createSub(h, ORDERS_SUB);
    // another identity: no duplicate of a (leaving invalid would be a 409 then)
    const b = await createSub(h, { ...ORDERS_SUB, remote_identity: 364 });
    expect((await patch(a, { status: 'paused' })).status).toBe(200);
    expect((await patch(b, { status: 'invalid' })).status).toBe(200);
    expect((await h.admin('POST', '/fixtures', { productCards: [{ id: 3001, active: 0 }] })).status).toBe(200);
    for (const [id, route] of [[a, '/v2/sub'], [a, '/sub'], [b, '/v2/sub'], [b, '/sub']] as const) {
      const r = await patch(id, { status: 'active' }, route);
      expect([route, r.status]).toEqual([route, 400]);
      expect(r.body.errors[0].detail).toMatch(/product 3001 is not active/);
    }
    // leaving the subscription inactive is still allowed
    expect((await patch(a, { status: 'cancelled' })).status).toBe(200);
    expect((await stored(b)).status).toBe('invalid');
    expect((await h.admin('POST', '/fixtures', { productCards: [{ id: 3001, active: 1 }] })).status).toBe(200);
    expect((await patch(b, { status: 'active' })).status).toBe(200);
  });

  test('subscriptions-api.md ("List Subscriptions"): the product-plan filter (no emulated subscription has a plan)', async () => {
    await createSub(h, ORDERS_SUB);
    for (const route of ['/v2/sub', '/sub']) {
      expect(ids(await h.api('GET', route)).length).toBeGreaterThan(0);
      expect(ids(await h.api('GET', `${route}?product_plan=1`))).toEqual([]);
      expect((await h.api('GET', `${route}?product_plan=basic`)).status).toBe(400);
    }
  });

  test('jobs-api.md: order_by sorts by any documented job field, - for descending; an unknown field is a 400', async () => {
    const a = await createSub(h, ORDERS_SUB);
    const b = await createSub(h, ORDERS_SUB);
    const q = `/service/jobs/jobs?subscription_ids=${a},${b}`;
    const [ja, jb] = ids(await h.api('GET', q));
    expect(ids(await h.api('GET', `${q}&order_by=id`))).toEqual([ja, jb]);
    expect(ids(await h.api('GET', `${q}&order_by=-id`))).toEqual([jb, ja]);
    expect(ids(await h.api('GET', `${q}&order_by=-subscription_id`))).toEqual([jb, ja]);
    // equal keys fall back to the ID order
    expect(ids(await h.api('GET', `${q}&order_by=is_primary`))).toEqual([ja, jb]);
    expect(ids(await h.api('GET', `${q}&order_by=-is_primary,-subscription_id`))).toEqual([jb, ja]);
    if (reads === 'vendor') {
      // every field a job shows is a sort key
      const fields = Object.keys((await h.api('GET', q)).body.data[0].attributes);
      expect(fields.length).toBeGreaterThan(10);
      for (const f of fields) expect([f, (await h.api('GET', `${q}&order_by=-${f}`)).status]).toEqual([f, 200]);
    }
    const bad = await h.api('GET', `${q}&order_by=-bogus`);
    expect(bad.status).toBe(400);
    expect(bad.body.errors[0].detail).toMatch(/order_by: unknown field 'bogus'/);
  });

  test('products-api.md ("Product Fields", "Payload Definition Fields"): created_at and modified_at in vendor reads', async () => {
    const reads_ = [
      (await h.api('GET', '/product/3001')).body.attributes,
      (await h.api('GET', '/v2/product/3001')).body.data.attributes,
      (await h.api('GET', '/product?name=Marketplace%20Orders')).body.data[0].attributes,
      (await h.api('GET', '/service/products/product/3001/payloads?stage_id__gte=1000')).body.data[0].attributes,
    ];
    for (const attrs of reads_) {
      if (reads === 'vendor') expect(attrs).toMatchObject({ created_at: '2024-01-01T00:00:00', modified_at: '2024-01-01T00:00:00' });
      else expect(Object.keys(attrs)).not.toContain('created_at');
    }
  });
});
