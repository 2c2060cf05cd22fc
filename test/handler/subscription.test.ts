import { HandlerHarness, STACK_ID, useHandlerHarness } from './helpers';
import { ResourceTypes } from '../../src/contract';

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
  test('create (v2 form, stage_ids encoded, marker) and a duplicate Create finds it', async () => {
    const r = await h.onEvent(h.event(T, 'Create', BASE));
    expect(r.Data).toEqual({ SubscriptionId: r.PhysicalResourceId, Status: 'active' });
    const s = subOf(r.PhysicalResourceId);
    expect(s).toMatchObject({ product: 3001, remote_identity: 362, storage_group: 501, name: 'Orders', status: 'active' });
    expect(s.product_parameters).toEqual({
      marketplace_id: 'ATVPDKIKX0DER',
      report_window: '7',
      stage_ids: '[1000,1001]',
      remote_identity_id: '362',
      cdk_resource: `${STACK_ID}/Resource`,
    });
    const again = await h.onEvent(h.event(T, 'Create', BASE));
    expect(again.PhysicalResourceId).toBe(r.PhysicalResourceId);
    expect((await h.changingRequests()).filter((x) => x.startsWith('POST /v2/sub'))).toEqual(['POST /v2/sub 201']);
  });

  test('update sends only the changes; a removed parameter is removed (null); pause and resume', async () => {
    const { PhysicalResourceId: id } = await h.onEvent(h.event(T, 'Create', BASE));
    const next = { ...BASE, ProductParameters: { marketplace_id: 'A2EUQ1WTGCTBG2' }, StageIds: ['1001'], Name: 'Orders CA' };
    await h.clearRequests();
    await h.onEvent(h.event(T, 'Update', next, { PhysicalResourceId: id, OldResourceProperties: old(BASE) }));
    expect(await h.changingRequests()).toEqual([`PATCH /v2/sub/${id} 200`]);
    let s = subOf(id);
    expect(s.name).toBe('Orders CA');
    expect(s.product_parameters).toEqual({
      marketplace_id: 'A2EUQ1WTGCTBG2', stage_ids: '[1001]', remote_identity_id: '362', cdk_resource: `${STACK_ID}/Resource`,
    });

    // Removing every stage ID removes stage_ids.
    const noStages = { ...next, StageIds: [] };
    await h.onEvent(h.event(T, 'Update', noStages, { PhysicalResourceId: id, OldResourceProperties: old(next) }));
    expect(subOf(id).product_parameters.stage_ids).toBeUndefined();

    // Pause, then resume: status-only PATCHes, no product checks.
    await h.clearRequests();
    const paused = await h.onEvent(h.event(T, 'Update', { ...noStages, Status: 'paused' }, { PhysicalResourceId: id, OldResourceProperties: old(noStages) }));
    expect(paused).toEqual({ PhysicalResourceId: id, Data: { SubscriptionId: id, Status: 'paused' } });
    s = subOf(id);
    expect(s.status).toBe('paused');
    const resumed = await h.onEvent(h.event(T, 'Update', noStages, { PhysicalResourceId: id, OldResourceProperties: old({ ...noStages, Status: 'paused' }) }));
    expect(resumed.Data!.Status).toBe('active');
    expect(await h.changingRequests()).toEqual([`PATCH /v2/sub/${id} 200`, `PATCH /v2/sub/${id} 200`]);
    expect((await h.requests()).filter((r) => r.path.startsWith('/v2/product'))).toEqual([]);

    // No change: no changing call.
    await h.clearRequests();
    await h.onEvent(h.event(T, 'Update', noStages, { PhysicalResourceId: id, OldResourceProperties: old(noStages) }));
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

  test('Delete sets invalid (default) or cancelled; unknown, placeholder and already-invalid IDs succeed', async () => {
    const a = await h.onEvent(h.event(T, 'Create', BASE));
    await h.onEvent(h.event(T, 'Delete', BASE, { PhysicalResourceId: a.PhysicalResourceId }));
    expect(subOf(a.PhysicalResourceId).status).toBe('invalid');
    const b = await h.onEvent(h.event(T, 'Create', { ...BASE, OnDelete: 'cancelled' }, { LogicalResourceId: 'Other' }));
    await h.onEvent(h.event(T, 'Delete', { ...BASE, OnDelete: 'cancelled' }, { PhysicalResourceId: b.PhysicalResourceId }));
    expect(subOf(b.PhysicalResourceId).status).toBe('cancelled');
    await h.clearRequests();
    for (const id of [a.PhysicalResourceId, b.PhysicalResourceId, '77777', 'HandlerTest-Resource-XYZ', '8701']) {
      await h.onEvent(h.event(T, 'Delete', { ...BASE, OnDelete: 'cancelled' }, { PhysicalResourceId: id }));
    }
    await h.onEvent(h.event(T, 'Delete', BASE, { PhysicalResourceId: a.PhysicalResourceId }));
    expect(await h.changingRequests()).toEqual([]);
  });

  test('a Create whose marker finds only an invalid subscription (rolled back earlier) reactivates it: one PATCH, no second subscription', async () => {
    const first = await h.onEvent(h.event(T, 'Create', BASE));
    const id = first.PhysicalResourceId;
    // The rollback of that Create (CloudFormation's Delete) set it invalid; the stack is deployed again, same StackId.
    await h.onEvent(h.event(T, 'Delete', BASE, { PhysicalResourceId: id }));
    expect(subOf(id).status).toBe('invalid');
    const next = { ...BASE, ProductParameters: { marketplace_id: 'A2EUQ1WTGCTBG2' }, StageIds: ['1001'], Name: 'Orders CA' };
    await h.clearRequests();
    const again = await h.onEvent(h.event(T, 'Create', next));
    expect(again).toEqual({ PhysicalResourceId: id, Data: { SubscriptionId: id, Status: 'active' } });
    expect(await h.changingRequests()).toEqual([`PATCH /v2/sub/${id} 200`]);
    const s = subOf(id);
    expect(s.status).toBe('active');
    expect(s.name).toBe('Orders CA');
    // Parameters as an Update would leave them: report_window (no longer wanted) removed, the marker kept.
    expect(s.product_parameters).toEqual({
      marketplace_id: 'A2EUQ1WTGCTBG2', stage_ids: '[1001]', remote_identity_id: '362', cdk_resource: `${STACK_ID}/Resource`,
    });
    expect(h.state().subscriptions.filter((x: any) => x.product === 3001 && x.account === 1001)).toHaveLength(1);
    expect(h.logs.some((l) => l.includes('reactivating the invalid subscription this resource created earlier'))).toBe(true);
    expect(h.logs.some((l) => l.includes('"level":"WARNING"'))).toBe(false);

    // A paused resource: reactivated (invalid may only become active or cancelled), then paused.
    await h.onEvent(h.event(T, 'Delete', next, { PhysicalResourceId: id }));
    await h.clearRequests();
    const paused = await h.onEvent(h.event(T, 'Create', { ...next, Status: 'paused' }));
    expect(paused.Data).toEqual({ SubscriptionId: id, Status: 'paused' });
    expect(await h.changingRequests()).toEqual([`PATCH /v2/sub/${id} 200`, `PATCH /v2/sub/${id} 200`]);
    expect(subOf(id).status).toBe('paused');
  });

  test('reactivation refused (409, a duplicate active subscription exists): the reason names the duplicate and what to do', async () => {
    const first = await h.onEvent(h.event(T, 'Create', BASE));
    const id = first.PhysicalResourceId;
    await h.onEvent(h.event(T, 'Delete', BASE, { PhysicalResourceId: id }));
    // Made outside this stack meanwhile: same account, product, remote identity and storage group.
    await h.admin('POST', '/fixtures', { subscriptions: [outside(9500, 'active', 501)] });
    await h.clearRequests();
    const reason = await h.fails(h.event(T, 'Create', BASE));
    expect(reason).toContain(`subscription ${id}, which this resource created earlier and is now invalid, cannot be reactivated`);
    expect(reason).toContain('subscription 9500 (active) has the same product 3001, remote identity 362 and storage group 501');
    expect(reason).toContain('set 9500 invalid and deploy again');
    expect(reason).toContain('Subscription.fromSubscriptionId(this, id, \'9500\')');
    expect(await h.changingRequests()).toEqual([`PATCH /v2/sub/${id} 409`]);
    expect(subOf(id).status).toBe('invalid');
    expect(subOf('9500').status).toBe('active');
    const subs3001 = h.state().subscriptions.filter((x: any) => x.product === 3001 && x.account === 1001);
    expect(subs3001.map((x: any) => x.id).sort()).toEqual([Number(id), 9500].sort());

    // After the operator sets the duplicate invalid, the same Create reactivates.
    await h.api('PATCH', '/v2/sub/9500', { data: { type: 'Subscription', id: '9500', attributes: { status: 'invalid' } } });
    const again = await h.onEvent(h.event(T, 'Create', BASE));
    expect(again.PhysicalResourceId).toBe(id);
    expect(subOf(id).status).toBe('active');
  });

  test('a Create next to an active duplicate made outside the stack creates it (the service allows it) and warns naming the duplicate', async () => {
    await h.admin('POST', '/fixtures', {
      // 9501 (another storage group) and 9502 (paused) are not duplicates.
      subscriptions: [outside(9500, 'active', 501), outside(9501, 'active', 502), outside(9502, 'paused', 501)],
    });
    await h.clearRequests();
    const r = await h.onEvent(h.event(T, 'Create', BASE));
    expect(await h.changingRequests()).toEqual(['POST /v2/sub 201']);
    expect(r.PhysicalResourceId).not.toBe('9500');
    expect(subOf(r.PhysicalResourceId).status).toBe('active');
    const warnings = h.logs.filter((l) => l.includes('"level":"WARNING"'));
    expect(warnings).toHaveLength(1);
    expect(warnings[0]).toContain('already exists (9500, not made by this resource)');
    expect(warnings[0]).toContain('Subscription.fromSubscriptionId');
    expect(warnings[0]).not.toContain('9501');
    expect(warnings[0]).not.toContain('9502');
  });

  test.each([
    ['an inactive product', { ProductId: '3003', RemoteIdentityId: undefined, ProductParameters: {}, StageIds: [] }, 'product 3003 (Retired Source) is not active'],
    ['a missing required parameter', { ProductParameters: {} }, 'required product parameters missing: marketplace_id'],
    ['a missing remote identity', { RemoteIdentityId: undefined }, 'it needs a remote identity (type 17): set remoteIdentityId'],
    ['a remote identity for a product that takes none', { ProductId: '4001', ProductParameters: {}, StageIds: [] }, 'it takes no remote identity: remove remoteIdentityId'],
    ['unknown stage IDs', { StageIds: ['1000', '1005', '1006'] }, 'stage IDs 1005, 1006 are not payloads of the product'],
    ['a legacy stage ID', { StageIds: ['10'] }, 'stage ID 10 is below 1000'],
    ['an unknown product', { ProductId: '9999' }, 'product 9999 does not exist'],
  ])('deploy-time check: %s fails before anything is created', async (_name, change, message) => {
    const reason = await h.fails(h.event(T, 'Create', { ...BASE, ...change }));
    expect(reason).toContain(message);
    expect(await h.changingRequests()).toEqual([]);
  });
});
