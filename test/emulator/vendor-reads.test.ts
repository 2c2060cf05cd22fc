import { createSub, Harness, ORDERS_SUB, useHarness } from './helpers';

let h: Harness;
useHarness((started) => {
  h = started;
}, { reads: 'vendor', now: Date.parse('2026-06-15T12:00:00Z') / 1000 }, { reset: true });

const H = '/service/history/production/history';

describe("reads: 'vendor'", () => {
  test('lists are paginated envelopes honouring page and page_size (default from the pageSize fixture)', async () => {
    const all = await h.api('GET', '/sri');
    expect(all.body.meta.pagination).toEqual({ page: 1, pages: 1, count: 4 });
    expect(all.body.links.next).toBe('');
    const p1 = await h.api('GET', '/sri?page_size=3');
    expect(p1.body.data.map((x: any) => x.id)).toEqual(['362', '363', '364']);
    expect(p1.body.meta.pagination).toEqual({ page: 1, pages: 2, count: 4 });
    expect(p1.body.links.next).toMatch(/\/sri\?page_size=3&page=2$/);
    expect(p1.body.links.prev).toBe('');
    const p2 = await h.api('GET', new URL(p1.body.links.next).pathname + new URL(p1.body.links.next).search);
    expect(p2.body.data.map((x: any) => x.id)).toEqual(['365']);
    expect(p2.body.links.next).toBe('');
    expect(p2.body.links.prev).toMatch(/page=1$/);
    expect((await h.api('GET', '/sri?page=3&page_size=3')).status).toBe(404);
    expect((await h.api('GET', '/sri?page=0')).status).toBe(400);
    // The fixture sets the default page size.
    await h.admin('POST', '/fixtures', { pageSize: 2 });
    const subs = [await createSub(h, ORDERS_SUB), await createSub(h, { product: 4001 }), await createSub(h, { product: 4001, name: 'third' })];
    const seen: string[] = [];
    let next = '/v2/sub';
    while (next !== '') {
      const r = await h.api('GET', next);
      expect(r.status).toBe(200);
      expect(r.body.meta.pagination).toMatchObject({ pages: 2, count: 4 });
      seen.push(...r.body.data.map((x: any) => x.id));
      next = r.body.links.next === '' ? '' : new URL(r.body.links.next).pathname + new URL(r.body.links.next).search;
    }
    expect(seen).toEqual(['8601', ...subs.map(String)]);
    expect((await h.admin('POST', '/fixtures', { pageSize: 0 })).status).toBe(400);
  });

  test('/user is a list with account_id; /account has the id', async () => {
    const u = (await h.api('GET', '/user')).body;
    expect(u.data).toEqual([{
      type: 'User',
      id: '2001',
      attributes: {
        account_id: 1001,
        first_name: 'Emulated',
        last_name: 'User',
        email_address: 'user@example.com',
        created_at: '2024-01-01T00:00:00',
        modified_at: '2024-01-01T00:00:00',
        is_admin: 1,
        email_address_normalized: 'user@example.com',
      },
    }]);
    expect(u.meta.pagination).toEqual({ page: 1, pages: 1, count: 1 });
    expect((await h.api('GET', '/account')).body.data).toMatchObject({ type: 'Account', id: '1001' });
  });

  test('v2 subscription reads use the smaller v2 representation (no product_parameters)', async () => {
    const r = await h.api('POST', '/v2/sub', {
      data: { type: 'Subscription', attributes: { account: 1001, user: 2001, status: 'active', date_start: '2026-01-01T00:00:00Z', name: 'Orders', ...ORDERS_SUB } },
    });
    expect(r.status).toBe(201);
    const id = r.body.data.id;
    for (const rec of [r.body.data, (await h.api('GET', `/v2/sub/${id}`)).body.data]) {
      expect(rec).toMatchObject({
        type: 'Subscription',
        id,
        attributes: {
          status: 'active',
          name: 'Orders',
          product_id: 3001,
          remote_identity_id: 362,
          storage_group_id: 501,
          account_id: 1001,
          user_id: 2001,
          date_start: '2026-01-01T00:00:00Z',
          // The emulator's clock starts at 12:00:00 with the suite and runs on (seconds under load): the format is exact.
          created_at: expect.stringMatching(/^2026-06-15T12:0\d:\d\d$/),
          modified_at: rec.attributes.created_at,
          invalidated_at: null,
        },
      });
      for (const k of ['product_parameters', 'remote_identity', 'account', 'product', 'date_end']) expect(rec.attributes).not.toHaveProperty(k);
    }
    // Unversioned reads add date_end; GET /sub without account lists the caller's subscriptions.
    expect((await h.api('GET', `/sub/${id}`)).body.data.attributes).toHaveProperty('date_end', null);
    const mine = (await h.api('GET', '/sub')).body;
    expect(mine.data.map((x: any) => x.id)).toEqual(['8601', id]);
    expect((await h.api('GET', '/sub?status__not=active')).body.data).toEqual([]);
    expect((await h.api('GET', '/v2/sub?product=86')).body.data.map((x: any) => x.id)).toEqual(['8601']);
  });

  test('documented single-record routes: GET /ri/{id}, GET /product/{id}, PATCH /sub/{id}, GET jobs/{id}', async () => {
    const ri = await h.api('GET', '/ri/362');
    expect(ri.status).toBe(200);
    expect(ri.body.data).toMatchObject({
      type: 'RemoteIdentity',
      id: '362',
      attributes: { name: 'Seller US', account_id: 1001, user_id: 2001, invalid_identity: 0, region: 'global' },
      relationships: { remote_identity_type: { data: { type: 'RemoteIdentityType', id: '17' } } },
    });
    expect((await h.api('GET', '/ri/372')).status).toBe(404);
    const p = await h.api('GET', '/product/3002');
    expect(p.status).toBe(200);
    expect(p.body).toMatchObject({ type: 'Product', id: '3002', attributes: { required_meta_fields: ['remote_identity_id', 'profile_id'] } });
    const sid = await createSub(h, ORDERS_SUB);
    const patch = await h.api('PATCH', `/sub/${sid}`, {
      data: { type: 'Subscription', id: String(sid), attributes: { name: 'v1', subscription_product_meta_attributes: [{ data_id: 0, data_key: 'marketplace_id', data_value: 'A2EUQ1WTGCTBG2', data_format: 'STRING', product: 3001 }] } },
    });
    expect(patch.status).toBe(200);
    expect(patch.body.data.attributes).toMatchObject({ name: 'v1', product_id: 3001 });
    expect((await h.state()).subscriptions.find((x: any) => x.id === sid).product_parameters.marketplace_id).toBe('A2EUQ1WTGCTBG2');
    const jobs = (await h.api('GET', `/service/jobs/jobs?subscription_ids=${sid}`)).body;
    expect(jobs.meta.pagination.count).toBe(1);
    const job = jobs.data[0];
    expect(job.attributes).toMatchObject({ subscription_id: sid, is_primary: true, product_id: 3001, subproduct_id: 'default' });
    const one = await h.api('GET', `/service/jobs/jobs/${job.id}`);
    expect(one.status).toBe(200);
    expect(one.body.data.id).toBe(job.id);
    expect((await h.api('GET', '/service/jobs/jobs/999')).status).toBe(404);
    // Without subscription_ids: all jobs of the caller.
    expect((await h.api('GET', '/service/jobs/jobs')).body.data.map((j: any) => j.id)).toEqual([job.id]);
  });

  test('job and history IDs are numeric', async () => {
    const sid = await createSub(h, ORDERS_SUB);
    const primary = (await h.api('GET', `/service/jobs/jobs?subscription_ids=${sid}`)).body.data[0].id;
    expect(primary).toMatch(/^\d+$/);
    const created = await h.api('POST', `/service/jobs/jobs/${primary}`, {
      data: {
        type: 'Job',
        attributes: {
          is_primary: false,
          valid_date_start: '2026-06-16',
          valid_date_end: '2026-06-16',
          stage_id: 1000,
          extra_context: JSON.stringify({ order_ids: ['123-1234567-1234567'] }),
          request_start: 1,
          request_end: 0,
          schedule: '15 2 16 6 *',
        },
      },
    });
    expect(created.status).toBe(201);
    expect(created.body.data.id).toMatch(/^\d+$/);
    expect(created.body.data.attributes).toMatchObject({ is_primary: false, stage_id: 1000, valid_date_start: '2026-06-16' });
    const hist = await h.api('POST', `${H}/${sid}`, { data: { type: 'HistoryTransaction', attributes: { start_date: '2026-06-01', end_date: '2026-06-02', stage_id: 1000 } } });
    expect(hist.status).toBe(201);
    expect(hist.body.data.id).toMatch(/^\d+$/);
    expect(hist.body.data.attributes).toMatchObject({ status: 'pending', subscription_id: sid, start_date: '2026-06-01' });
    expect((await h.api('GET', `${H}/${hist.body.data.id}`)).body.data.attributes.status).toBe('pending');
  });

  test('remote identities: documented attributes and the invalid_identity and type filters', async () => {
    await h.admin('POST', '/fixtures', { remoteIdentities: [{ id: 366, account: 1001, name: 'Revoked', remote_identity_type_id: 17, invalid_identity: 1 }] });
    const invalid = (await h.api('GET', '/sri?invalid_identity=1')).body.data;
    expect(invalid.map((x: any) => x.id)).toEqual(['366']);
    expect(invalid[0].attributes).toMatchObject({ invalid_identity: 1, name: 'Revoked' });
    expect((await h.api('GET', '/sri?invalid_identity=0')).body.data.map((x: any) => x.id)).toEqual(['362', '363', '364', '365']);
    expect((await h.api('GET', '/ri?remote_identity_type=18')).body.data.map((x: any) => x.id)).toEqual(['363']);
    expect((await h.api('GET', '/sri?invalid_identity=x')).status).toBe(400);
  });

  test('the admin API still shows the full state', async () => {
    const sid = await createSub(h, ORDERS_SUB);
    const rec = (await h.state()).subscriptions.find((x: any) => x.id === sid);
    expect(rec.product_parameters).toEqual({ marketplace_id: 'ATVPDKIKX0DER', remote_identity_id: '362' });
  });
});

test('startEmulator rejects an unknown read mode', async () => {
  await expect(Harness.start({ reads: 'rich' as never })).rejects.toThrow(/reads must be one of minimal, vendor/);
});
