import { HandlerHarness, useHandlerHarness } from './helpers';
import { ResourceTypes } from '../../src/kinds';

const T = ResourceTypes.SUBSCRIPTION;
const BASE = {
  ProductId: '3001',
  RemoteIdentityId: '362',
  StorageGroupId: '501',
  ProductParameters: { marketplace_id: 'ATVPDKIKX0DER', report_window: '7' },
  StageIds: ['1000', '1001'],
  Status: 'active',
  Name: 'Orders',
  OnDelete: 'invalid',
};

let h: HandlerHarness;
useHandlerHarness((started) => {
  h = started;
}, { resetEach: true });

const subOf = (id: string): any => h.state().subscriptions.find((s: any) => String(s.id) === id);
/** The subscriptions the handler made (the emulator numbers them from 9001; fixtures use lower IDs). */
const made = (): any[] => h.state().subscriptions.filter((s: any) => s.id >= 9001);
const old = (props: Record<string, unknown>): Record<string, unknown> => ({ Connection: h.connection, ...props });

/** A product-3001 subscription of account 1001 made outside the stack (a fixture record). */
function outside(id: number, status: string, storageGroup: number): Record<string, unknown> {
  return {
    id,
    account: 1001,
    user: 2001,
    product: 3001,
    status,
    remote_identity: 362,
    storage_group: storageGroup,
    product_parameters: { marketplace_id: 'ATVPDKIKX0DER', remote_identity_id: '362' },
  };
}

describe('Custom::DpiSubscription', () => {
  test('create (v2 form, stage_ids encoded, nothing but the parameters stored) and a duplicate Create finds it in the journal', async () => {
    const r = await h.onEvent(h.event(T, 'Create', BASE));
    expect(r.Data).toEqual({ SubscriptionId: r.PhysicalResourceId, Status: 'active' });
    const s = subOf(r.PhysicalResourceId);
    expect(s).toMatchObject({ product: 3001, remote_identity: 362, storage_group: 501, name: 'Orders', status: 'active' });
    expect(s.product_parameters).toEqual({
      marketplace_id: 'ATVPDKIKX0DER',
      report_window: '7',
      stage_ids: '[1000,1001]',
      remote_identity_id: '362',
    });
    // The journal records the resource (key `<stack name>/<logical ID>`), what was applied, and claims the ID.
    const recs = await h.journalRecords();
    expect(recs).toHaveLength(1);
    expect(recs[0]).toMatchObject({ pk: 'HandlerTest/Resource', state: 'active', physicalId: r.PhysicalResourceId });
    expect(recs[0].doc).toMatchObject({ product: 3001, identity: '362', subscriptionId: r.PhysicalResourceId });
    expect(recs[0].doc.applied).toMatchObject({ status: 'active', name: 'Orders', storageGroupId: 501, params: s.product_parameters });
    expect(await h.journalOwner('sub', r.PhysicalResourceId)).toBe('HandlerTest/Resource');

    // A duplicate Create (same stack and logical ID, record active): no POST, no check, no new record.
    await h.clearRequests();
    const again = await h.onEvent(h.event(T, 'Create', BASE));
    expect(again).toEqual(r);
    expect(await h.changingRequests()).toEqual([]);
    expect((await h.requests()).filter((x) => x.path.startsWith('/v2/product'))).toEqual([]);
    expect(await h.journalRecords()).toHaveLength(1);
    expect(made()).toHaveLength(1);
  });

  test('the same properties under another logical ID make another subscription (the journal is per resource)', async () => {
    const a = await h.onEvent(h.event(T, 'Create', BASE));
    const b = await h.onEvent(h.event(T, 'Create', BASE, { LogicalResourceId: 'Other' }));
    expect(b.PhysicalResourceId).not.toBe(a.PhysicalResourceId);
    expect(made().map((x: any) => String(x.id))).toEqual([a.PhysicalResourceId, b.PhysicalResourceId]);
    expect(await h.journalOwner('sub', b.PhysicalResourceId)).toBe('HandlerTest/Other');
  });

  test('Update compares with the journal\'s applied state, never with the read fields', async () => {
    const { PhysicalResourceId: id } = await h.onEvent(h.event(T, 'Create', BASE));
    // Changed outside the stack: the reads (vendor shape) show it; the journal does not.
    const outsideChange = await h.api('PATCH', `/v2/sub/${id}`, {
      data: { type: 'Subscription', id, attributes: { name: 'Renamed outside', product_parameters: { report_window: '30' } } },
    });
    expect(outsideChange.status).toBe(200);
    await h.clearRequests();
    await h.onEvent(h.event(T, 'Update', BASE, { PhysicalResourceId: id, OldResourceProperties: old(BASE) }));
    expect(await h.changingRequests()).toEqual([]);
    expect(subOf(id)).toMatchObject({ name: 'Renamed outside', product_parameters: { report_window: '30' } });

    // Only what differs from the journal is sent: the name, not the parameters the journal says are applied.
    await h.onEvent(h.event(T, 'Update', { ...BASE, Name: 'Orders 2' }, { PhysicalResourceId: id, OldResourceProperties: old(BASE) }));
    expect(await h.changingRequests()).toEqual([`PATCH /v2/sub/${id} 200`]);
    expect(subOf(id)).toMatchObject({ name: 'Orders 2', product_parameters: { report_window: '30' } });
    expect((await h.journalRecords())[0].doc.applied.name).toBe('Orders 2');
  });

  test('update sends only the changes; a parameter cannot be dropped (clear failure, nothing sent); pause and resume', async () => {
    const { PhysicalResourceId: id } = await h.onEvent(h.event(T, 'Create', BASE));
    const next = { ...BASE, ProductParameters: { marketplace_id: 'A2EUQ1WTGCTBG2', report_window: '7' }, StageIds: ['1001'], Name: 'Orders CA' };
    await h.clearRequests();
    await h.onEvent(h.event(T, 'Update', next, { PhysicalResourceId: id, OldResourceProperties: old(BASE) }));
    expect(await h.changingRequests()).toEqual([`PATCH /v2/sub/${id} 200`]);
    const patch = (await h.requests()).find((r) => r.method === 'PATCH')!;
    expect(patch).toBeDefined();
    let s = subOf(id);
    expect(s.name).toBe('Orders CA');
    expect(s.product_parameters).toEqual({ marketplace_id: 'A2EUQ1WTGCTBG2', report_window: '7', stage_ids: '[1001]', remote_identity_id: '362' });

    // Dropping a parameter: the service cannot delete one; a clear failure before any change.
    const dropped = { ...next, ProductParameters: { marketplace_id: 'A2EUQ1WTGCTBG2' } };
    await h.clearRequests();
    const reason = await h.fails(h.event(T, 'Update', dropped, { PhysicalResourceId: id, OldResourceProperties: old(next) }));
    expect(reason).toContain('report_window');
    expect(reason).toContain('nothing was changed');
    expect(await h.changingRequests()).toEqual([]);

    // Pause, then resume: status-only PATCHes, no product checks.
    await h.clearRequests();
    const paused = await h.onEvent(h.event(T, 'Update', { ...next, Status: 'paused' }, { PhysicalResourceId: id, OldResourceProperties: old(next) }));
    expect(paused).toEqual({ PhysicalResourceId: id, Data: { SubscriptionId: id, Status: 'paused' } });
    s = subOf(id);
    expect(s.status).toBe('paused');
    const resumed = await h.onEvent(h.event(T, 'Update', next, { PhysicalResourceId: id, OldResourceProperties: old({ ...next, Status: 'paused' }) }));
    expect(resumed.Data!.Status).toBe('active');
    expect(await h.changingRequests()).toEqual([`PATCH /v2/sub/${id} 200`, `PATCH /v2/sub/${id} 200`]);
    expect((await h.requests()).filter((r) => r.path.startsWith('/v2/product'))).toEqual([]);

    // No change: no changing call.
    await h.clearRequests();
    await h.onEvent(h.event(T, 'Update', next, { PhysicalResourceId: id, OldResourceProperties: old(next) }));
    expect(await h.changingRequests()).toEqual([]);
  });

  test('Create with Status paused creates active, then pauses', async () => {
    const r = await h.onEvent(h.event(T, 'Create', { ...BASE, Status: 'paused' }));
    expect(r.Data!.Status).toBe('paused');
    expect(await h.changingRequests()).toEqual(['POST /v2/sub 201', `PATCH /v2/sub/${r.PhysicalResourceId} 200`]);
  });

  test('product or remote identity change -> replacement (new subscription)', async () => {
    const a = await h.onEvent(h.event(T, 'Create', BASE));
    const next = { ProductId: '3002', RemoteIdentityId: '365', ProductParameters: { profile_id: '77' }, Status: 'active', OnDelete: 'invalid' };
    const b = await h.onEvent(h.event(T, 'Update', next, { PhysicalResourceId: a.PhysicalResourceId, OldResourceProperties: old(BASE) }));
    expect(b.PhysicalResourceId).not.toBe(a.PhysicalResourceId);
    expect(subOf(b.PhysicalResourceId).product).toBe(3002);
    expect(subOf(a.PhysicalResourceId).status).toBe('active');
  });

  test('a subscription set invalid outside the stack: an Update (a name change) makes a new one, as dpi drift --fix advises', async () => {
    const a = await h.onEvent(h.event(T, 'Create', BASE));
    await h.api('PATCH', `/v2/sub/${a.PhysicalResourceId}`, { data: { type: 'Subscription', id: a.PhysicalResourceId, attributes: { status: 'invalid' } } });
    const renamed = { ...BASE, Name: 'orders-again' };
    const b = await h.onEvent(h.event(T, 'Update', renamed, { PhysicalResourceId: a.PhysicalResourceId, OldResourceProperties: old(BASE) }));
    expect(b.PhysicalResourceId).not.toBe(a.PhysicalResourceId);
    expect(subOf(b.PhysicalResourceId)).toMatchObject({ status: 'active', product: 3001 });
    expect(subOf(a.PhysicalResourceId).status).toBe('invalid');
  });

  test('Delete sets invalid (default) or cancelled; unknown, placeholder and already-invalid IDs succeed', async () => {
    const a = await h.onEvent(h.event(T, 'Create', BASE));
    await h.clearRequests();
    await h.onEvent(h.event(T, 'Delete', BASE, { PhysicalResourceId: a.PhysicalResourceId }));
    // One read of the status, one PATCH, then one read of its open history requests (cancelled once it ended).
    expect((await h.requests()).filter((x) => x.path !== '/auth/api/ref').map((x) => `${x.method} ${x.path}`))
      .toEqual([`GET /sub/${a.PhysicalResourceId}`, `PATCH /v2/sub/${a.PhysicalResourceId}`, `GET /service/history/production/history/status/${a.PhysicalResourceId}`]);
    expect(subOf(a.PhysicalResourceId).status).toBe('invalid');
    const b = await h.onEvent(h.event(T, 'Create', { ...BASE, OnDelete: 'cancelled' }, { LogicalResourceId: 'Other' }));
    await h.onEvent(h.event(T, 'Delete', { ...BASE, OnDelete: 'cancelled' }, { LogicalResourceId: 'Other', PhysicalResourceId: b.PhysicalResourceId }));
    expect(subOf(b.PhysicalResourceId).status).toBe('cancelled');
    // The journal keeps the records (state deleted), for a later rollback or recovery.
    expect((await h.journalRecords()).map((x) => x.state)).toEqual(['deleted']);
    expect((await h.journalRecords('Other')).map((x) => x.state)).toEqual(['deleted']);
    await h.clearRequests();
    for (const id of [a.PhysicalResourceId, b.PhysicalResourceId, '77777', 'HandlerTest-Resource-XYZ']) {
      await h.onEvent(h.event(T, 'Delete', { ...BASE, OnDelete: 'cancelled' }, { PhysicalResourceId: id }));
    }
    await h.onEvent(h.event(T, 'Delete', BASE, { PhysicalResourceId: a.PhysicalResourceId }));
    expect(await h.changingRequests()).toEqual([]);
  });

  test('a 403 is never "gone": Delete and Update of another account\'s subscription fail naming the account, nothing is changed or replaced', async () => {
    await h.clearRequests();
    // Without a record or claim of this resource, a Delete leaves it without a call (a made-up Delete).
    await h.onEvent(h.event(T, 'Delete', BASE, { PhysicalResourceId: '8701' }));
    expect(await h.changingRequests()).toEqual([]);
    // The resource's own claim (its account changed since, say): the Delete reads it and fails on the 403.
    await h.seedClaim('sub', '8701');
    const reason = await h.fails(h.event(T, 'Delete', BASE, { PhysicalResourceId: '8701' }));
    expect(reason).toContain('refused access to subscription 8701 (403');
    expect(reason).toContain('account 1001');
    expect(reason).toContain('nothing was changed or marked deleted');
    const renamed = await h.fails(h.event(T, 'Update', { ...BASE, Name: 'x' }, { PhysicalResourceId: '8701', OldResourceProperties: old(BASE) }));
    expect(renamed).toContain('(403');
    expect(await h.changingRequests()).toEqual([]);
    expect(subOf('8701').status).toBe('active');
  });

  test('a 403 on the read of an Update of its own subscription fails; no replacement is made', async () => {
    const { PhysicalResourceId: id } = await h.onEvent(h.event(T, 'Create', BASE));
    await h.admin('POST', '/faults', { method: 'GET', pathPrefix: `/sub/${id}`, status: 403, count: 1 });
    await h.clearRequests();
    expect(await h.fails(h.event(T, 'Update', { ...BASE, Name: 'renamed' }, { PhysicalResourceId: id, OldResourceProperties: old(BASE) })))
      .toContain(`refused access to subscription ${id} (403`);
    expect(await h.changingRequests()).toEqual([]);
    expect(made().map((x: any) => x.status)).toEqual(['active']);
  });

  test('a subscription POST applied but its response lost is found among the unclaimed subscriptions: no second subscription', async () => {
    await h.admin('POST', '/faults', { method: 'POST', pathPrefix: '/v2/sub', dropResponse: true, count: 1 });
    const r = await h.onEvent(h.event(T, 'Create', BASE));
    expect(made().map((s: any) => String(s.id))).toEqual([r.PhysicalResourceId]);
    expect(h.logs.some((l) => l.includes('the subscription create had no clear outcome'))).toBe(true);
    expect(await h.journalOwner('sub', r.PhysicalResourceId)).toBe('HandlerTest/Resource');
    // A second delivery of the same Create finds it in the journal: no call that changes anything.
    await h.clearRequests();
    const again = await h.onEvent(h.event(T, 'Create', BASE));
    expect(again.PhysicalResourceId).toBe(r.PhysicalResourceId);
    expect(await h.changingRequests()).toEqual([]);
  });

  test('a subscription POST that failed (500) with nothing made is sent again once the lists prove it made nothing', async () => {
    await h.admin('POST', '/faults', { method: 'POST', pathPrefix: '/v2/sub', status: 500, count: 1 });
    await h.clearRequests();
    const r = await h.onEvent(h.event(T, 'Create', BASE));
    expect(await h.changingRequests()).toEqual(['POST /v2/sub 500', 'POST /v2/sub 201']);
    expect(made().map((s: any) => String(s.id))).toEqual([r.PhysicalResourceId]);
  });

  test('a subscription POST that keeps failing (500) with nothing made: the Create fails, the rollback Delete changes nothing, a retry creates one', async () => {
    await h.admin('POST', '/faults', { method: 'POST', pathPrefix: '/v2/sub', status: 500, count: 3 });
    const reason = await h.fails(h.event(T, 'Create', BASE));
    expect(reason).toContain('nothing was made');
    await h.clearRequests();
    await h.onEvent(h.event(T, 'Delete', BASE, { PhysicalResourceId: 'HandlerTest-Resource-1A2B' }));
    expect(await h.changingRequests()).toEqual([]);
    const r = await h.onEvent(h.event(T, 'Create', BASE));
    expect(made().map((s: any) => String(s.id))).toEqual([r.PhysicalResourceId]);
  });

  test('a Create that fails after its subscription exists (pause refused) sets it invalid before failing: nothing active remains', async () => {
    await h.admin('POST', '/faults', { method: 'PATCH', pathPrefix: '/v2/sub/', status: 400, count: 1 });
    await h.fails(h.event(T, 'Create', { ...BASE, Status: 'paused' }));
    expect(made().map((s: any) => s.status)).toEqual(['invalid']);
  });

  test('an active subscription made outside the stack is never taken for this resource\'s lost response', async () => {
    await h.admin('POST', '/fixtures', { subscriptions: [outside(9500, 'active', 501)] });
    await h.admin('POST', '/faults', { method: 'POST', pathPrefix: '/v2/sub', dropResponse: true, count: 1 });
    // It existed before the POST: only what appeared after the call is a candidate.
    const r = await h.onEvent(h.event(T, 'Create', BASE));
    expect(r.PhysicalResourceId).not.toBe('9500');
    await h.onEvent(h.event(T, 'Delete', BASE, { PhysicalResourceId: r.PhysicalResourceId }));
    expect(subOf('9500').status).toBe('active');
    expect(await h.journalOwner('sub', '9500')).toBeUndefined();
  });

  test('a lost POST whose attempt cannot be told from a subscription made meanwhile elsewhere fails naming both; none is taken or changed', async () => {
    // The POST is held 400 ms, then applied and its answer lost; meanwhile the same subscription is made by hand.
    await h.admin('POST', '/faults', { method: 'POST', pathPrefix: '/v2/sub', delayMs: 400, dropResponse: true, count: 1 });
    const attempt = h.fails(h.event(T, 'Create', BASE));
    for (let i = 0; i < 200 && (await h.admin('GET', '/faults')).faults.length > 0; i++) await new Promise((res) => setTimeout(res, 10));
    // The same declaration (name, storage group): no read field tells the two apart.
    const outsider = await h.subscribe(3001, 362, { marketplace_id: 'ATVPDKIKX0DER' }, { storage_group: 501, name: 'Orders' });
    const reason = await attempt;
    expect(reason).toContain('cannot be told');
    expect(reason).toContain(outsider);
    expect(made().filter((x: any) => x.status === 'active')).toHaveLength(2);
    // The record stays `recording`: a Delete of the failed Create (rollback) changes nothing and finishes.
    await h.clearRequests();
    await h.onEvent(h.event(T, 'Delete', BASE, { PhysicalResourceId: 'HandlerTest-Resource-1A2B' }));
    expect(await h.changingRequests()).toEqual([]);
    expect(subOf(outsider).status).toBe('active');
  });

  test('a subscription deployed before the journal existed: Update compares with the previous properties', async () => {
    const { PhysicalResourceId: id } = await h.onEvent(h.event(T, 'Create', BASE));
    await h.reset({ keepEmulator: true });
    await h.clearRequests();
    await h.onEvent(h.event(T, 'Update', { ...BASE, Name: 'Orders US' }, { PhysicalResourceId: id, OldResourceProperties: old(BASE) }));
    expect(await h.changingRequests()).toEqual([`PATCH /v2/sub/${id} 200`]);
    const patch = (await h.requests()).find((r) => r.method === 'PATCH');
    expect(patch).toBeDefined();
    expect(subOf(id).name).toBe('Orders US');
  });
});
