import { HandlerHarness, useHandlerHarness } from './helpers';
import { expectAgreement, planAndRun } from './plan-helpers';
import { planResource } from '../../src/handler/plan';
import { ResourceTypes } from '../../src/kinds';

const T = ResourceTypes.SUBSCRIPTION;
const BASE = {
  ProductId: '3001',
  RemoteIdentityId: '362',
  StorageGroupId: '501',
  ProductParameters: { marketplace_id: 'ATVPDKIKX0DER', report_window: '7' },
  StageIds: ['1000'],
  Status: 'active',
  Name: 'Orders',
  OnDelete: 'invalid',
  RemovalPolicy: 'destroy',
};

let h: HandlerHarness;
useHandlerHarness((started) => {
  h = started;
}, { resetEach: true });

async function deployed(props: Record<string, unknown> = BASE): Promise<string> {
  return (await h.onEvent(h.event(T, 'Create', props))).PhysicalResourceId;
}
const statusOf = (id: string | undefined): string => h.state().subscriptions.find((s: any) => String(s.id) === id)?.status;

describe('planResource agrees with the handler: Custom::DpiSubscription', () => {
  test('create: one POST', async () => {
    const a = await planAndRun(h, T, undefined, { newProps: BASE });
    expect(a.plan.action).toBe('create');
    expectAgreement(a);
  });

  test('create paused: the POST and the PATCH that pauses the new subscription', async () => {
    const b = await planAndRun(h, T, undefined, { newProps: { ...BASE, Name: 'Paused', Status: 'paused' } });
    expect(b.plan.calls.map((c) => `${c.method} ${c.path}`)).toEqual(['POST /v2/sub', 'PATCH /v2/sub/{new}']);
    expectAgreement(b);
  });

  test.each([
    ['name', { Name: 'Renamed' }],
    ['status', { Status: 'paused' }],
    ['storage group', { StorageGroupId: '502' }],
    ['a product parameter', { ProductParameters: { marketplace_id: 'ATVPDKIKX0DER', report_window: '14' } }],
    ['stage IDs', { StageIds: ['1000', '1001'] }],
  ])('a change of %s is one PATCH /v2/sub/{id} in place', async (_what, change) => {
    const id = await deployed();
    const r = await planAndRun(h, T, id, { oldProps: BASE, newProps: { ...BASE, ...change } });
    expect(r.plan.action).toBe('update');
    expect(r.plan.changes.every((c) => c.effect === 'update')).toBe(true);
    expect(r.physicalId).toBe(id);
    expectAgreement(r);
  });

  test('a product or identity change replaces: the new subscription is made, the old one becomes invalid (named in the plan)', async () => {
    const id = await deployed();
    const next = { ...BASE, RemoteIdentityId: '364', ProductParameters: { marketplace_id: 'A1AM78C64UM0Y8' } };
    const r = await planAndRun(h, T, id, { oldProps: BASE, newProps: next });
    expect(r.plan.action).toBe('replace');
    expect(r.plan.changes.find((c) => c.prop === 'remoteIdentityId')).toMatchObject({ from: '362', to: '364', effect: 'replace' });
    expect(r.plan.effects.join(' ')).toContain(`subscription ${id} becomes invalid`);
    expect(r.physicalId).not.toBe(id);
    expect(statusOf(id)).toBe('invalid');
    expectAgreement(r);
  });

  test('a replacement under the retain policy keeps the old subscription: only the new one is made', async () => {
    const kept = { ...BASE, RemovalPolicy: 'retain' };
    const id = await deployed(kept);
    const r = await planAndRun(h, T, id, { oldProps: kept, newProps: { ...kept, RemoteIdentityId: '364', ProductParameters: { marketplace_id: 'A1AM78C64UM0Y8' } } });
    expect(r.plan.action).toBe('replace');
    expect(r.plan.effects.join(' ')).toContain(`subscription ${id} is kept`);
    expect(statusOf(id)).toBe('active');
    expectAgreement(r);
  });

  test('onDelete, removal policy and the connection are no change for the service: nothing is sent', async () => {
    const id = await deployed();
    const r = await planAndRun(h, T, id, { oldProps: BASE, newProps: { ...BASE, OnDelete: 'cancelled', RemovalPolicy: 'retain' } });
    expect(r.plan.action).toBe('no-change');
    expect(r.plan.changes.map((c) => c.prop).sort()).toEqual(['onDelete', 'removalPolicy']);
    expectAgreement(r);
    expect(r.sent).toEqual([]);
    const conn = planResource({
      type: T,
      stack: 'S',
      logicalId: 'L',
      physicalId: id,
      oldProps: { ...BASE, Connection: { BaseUrl: 'a' } },
      newProps: { ...BASE, Connection: { BaseUrl: 'b' } },
    });
    expect(conn).toMatchObject({ action: 'no-change', calls: [], changes: [] });
    expect(conn.effects.join(' ')).toContain('connection changed');
  });

  test('dropping a stored parameter: the plan says the deploy fails with the handler\'s reason, and it does', async () => {
    const id = await deployed();
    const r = await planAndRun(h, T, id, { oldProps: BASE, newProps: { ...BASE, ProductParameters: { marketplace_id: 'ATVPDKIKX0DER' } } });
    expect(r.plan.failure).toContain('cannot drop the stored parameter report_window');
    expectAgreement(r);
  });

  test('delete: destroy ends the subscription (one PATCH), retain keeps it (nothing sent)', async () => {
    const id = await deployed();
    const d = await planAndRun(h, T, id, { oldProps: BASE });
    expect(d.plan.action).toBe('delete');
    expect(d.plan.effects[0]).toContain(`subscription ${id} becomes invalid; its history and jobs end with it`);
    expectAgreement(d);
    expect(statusOf(id)).toBe('invalid');
    const kept = { ...BASE, Name: 'Kept', RemovalPolicy: 'retain' };
    const id2 = await deployed(kept);
    const k = await planAndRun(h, T, id2, { oldProps: kept });
    expect(k.plan.action).toBe('retain');
    expectAgreement(k);
    expect(statusOf(id2)).toBe('active');
  });

  test('an adopted subscription is never ended by the removal unless destroy is declared next to its adoption', async () => {
    const other = await h.subscribe(3001, 362, { marketplace_id: 'ATVPDKIKX0DER' });
    const adopted = { ...BASE, ProductParameters: { marketplace_id: 'ATVPDKIKX0DER' }, StageIds: [], Name: 'Adopted', AdoptId: other, RemovalPolicy: 'retain' };
    await h.onEvent(h.event(T, 'Create', adopted));
    // Dropping the adoption and turning destroy on: the journal knows it is adopted (the plan is told so).
    const next = { ...adopted, AdoptId: undefined, RemovalPolicy: 'destroy' };
    const plan = planResource({ type: T, stack: 'S', logicalId: 'L', physicalId: other, oldProps: next, journal: { adopted: true, removalPolicy: 'retain' } });
    expect(plan.action).toBe('retain');
    const r = await planAndRun(h, T, other, { oldProps: adopted });
    expect(r.plan.action).toBe('retain');
    expectAgreement(r);
    expect(statusOf(other)).toBe('active');
  });
});
