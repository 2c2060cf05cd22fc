import { daysAgo, HandlerHarness, useHandlerHarness } from './helpers';
import { expectAgreement, planAndRun } from './plan-helpers';
import { ResourceTypes } from '../../src/kinds';

let h: HandlerHarness;
let subId: string;
useHandlerHarness((started) => {
  h = started;
}, { resetEach: true });
beforeEach(async () => {
  subId = await h.subscribe(3001, 362, { marketplace_id: 'ATVPDKIKX0DER' });
});

function orderIds(n: number, from = 0): string[] {
  return Array.from({ length: n }, (_, i) => `123-${String(1000000 + from + i)}-${String(7000000 + from + i)}`);
}
const primaryOf = (sub: string): string => String(h.state().jobs.find((j: any) => j.is_primary && String(j.subscription_id) === sub).id);

describe('planResource agrees with the handler: Custom::DpiProductOrderJobs', () => {
  const T = ResourceTypes.PRODUCT_ORDER_JOBS;

  test('create: one POST per batch of 100 under the primary job', async () => {
    const props = { SubscriptionId: subId, OrderIds: orderIds(150), StageId: '1000' };
    const r = await planAndRun(h, T, undefined, { newProps: props });
    expect(r.plan.action).toBe('create');
    expect(r.plan.calls).toHaveLength(2);
    expectAgreement(r, { primary: primaryOf(subId) });
  });

  test('added order IDs: only the new ones are POSTed; order IDs already submitted are not re-sent', async () => {
    const old = { SubscriptionId: subId, OrderIds: orderIds(120), StageId: '1000' };
    const id = (await h.onEvent(h.event(T, 'Create', old))).PhysicalResourceId;
    const next = { ...old, OrderIds: [...orderIds(120), ...orderIds(130, 500)] };
    const r = await planAndRun(h, T, id, { oldProps: old, newProps: next });
    expect(r.plan.action).toBe('update');
    expect(r.plan.effects).toContain('order IDs already submitted are not re-sent');
    expect(r.plan.calls.map((c) => c.path)).toEqual([`/service/jobs/jobs/${id}`, `/service/jobs/jobs/${id}`]);
    expectAgreement(r);
  });

  test('dropped order IDs send nothing (jobs stay); another stage submits every order ID again', async () => {
    const old = { SubscriptionId: subId, OrderIds: orderIds(3), StageId: '1000' };
    const id = (await h.onEvent(h.event(T, 'Create', old))).PhysicalResourceId;
    const fewer = await planAndRun(h, T, id, { oldProps: old, newProps: { ...old, OrderIds: orderIds(2) } });
    expect(fewer.plan.action).toBe('no-change');
    expect(fewer.plan.effects.join(' ')).toContain('their jobs stay');
    expectAgreement(fewer);
    const stage = await planAndRun(h, T, id, { oldProps: { ...old, OrderIds: orderIds(2) }, newProps: { ...old, OrderIds: orderIds(2), StageId: '1001' } });
    expect(stage.plan.action).toBe('update');
    expect(stage.plan.calls).toHaveLength(1);
    expectAgreement(stage);
  });

  test('delete: the jobs stay, nothing is sent', async () => {
    const old = { SubscriptionId: subId, OrderIds: orderIds(2), StageId: '1000' };
    const id = (await h.onEvent(h.event(T, 'Create', old))).PhysicalResourceId;
    const r = await planAndRun(h, T, id, { oldProps: old });
    expect(r.plan.action).toBe('retain');
    expectAgreement(r);
  });
});

describe('planResource agrees with the handler: Custom::DpiHistoryRequest', () => {
  const T = ResourceTypes.HISTORY_REQUEST;
  const props = (extra: Record<string, unknown> = {}): Record<string, unknown> =>
    ({ SubscriptionId: subId, StartDate: daysAgo(10), EndDate: daysAgo(5), StageId: '1000', WaitForCompletion: 'false', TimeoutSeconds: '600', ...extra });

  test('create: one POST', async () => {
    const r = await planAndRun(h, T, undefined, { newProps: props() });
    expect(r.plan.action).toBe('create');
    expectAgreement(r);
  });

  test('other dates replace: a new request, then the pending old one is cancelled', async () => {
    const id = (await h.onEvent(h.event(T, 'Create', props()))).PhysicalResourceId;
    const r = await planAndRun(h, T, id, { oldProps: props(), newProps: props({ StartDate: daysAgo(12) }) });
    expect(r.plan.action).toBe('replace');
    expect(r.plan.changes).toEqual([expect.objectContaining({ prop: 'startDate', effect: 'replace' })]);
    expectAgreement(r);
    expect(h.state().history.find((x: any) => String(x.id) === id).status).toBe('cancelled');
  });

  test('waitForCompletion and timeout are no change: nothing is sent', async () => {
    const id = (await h.onEvent(h.event(T, 'Create', props()))).PhysicalResourceId;
    const r = await planAndRun(h, T, id, { oldProps: props(), newProps: props({ WaitForCompletion: 'true', TimeoutSeconds: '900' }) });
    expect(r.plan.action).toBe('no-change');
    expectAgreement(r);
  });

  test('delete cancels a pending request; an adopted one is kept', async () => {
    const id = (await h.onEvent(h.event(T, 'Create', props()))).PhysicalResourceId;
    const r = await planAndRun(h, T, id, { oldProps: props() });
    expect(r.plan.action).toBe('delete');
    expectAgreement(r);
    const planOnly = await planAndRun(h, T, id, { oldProps: props({ AdoptId: id }) });
    expect(planOnly.plan.action).toBe('retain');
    expectAgreement(planOnly);
  });
});

describe('planResource agrees with the handler: Custom::DpiLegacyNotificationPipeline', () => {
  const T = ResourceTypes.LEGACY_NOTIFICATION_PIPELINE;
  const QUEUE = 'arn:aws:sqs:us-east-1:123456789012:legacy-notifications';
  const BASE = { SubscriptionId: '8601', RemoteIdentityId: '364', QueueArn: QUEUE, NotificationTypes: ['ORDER_CHANGE'], Retired: 'false', RemovalPolicy: 'retain' };

  test('adoption sends nothing; a queue change re-points (two PATCHes); retiring removes it; un-retiring restores it', async () => {
    const a = await planAndRun(h, T, undefined, { newProps: BASE });
    expect(a.plan.action).toBe('no-change');
    expectAgreement(a);
    const moved = { ...BASE, QueueArn: `${QUEUE}-2` };
    const m = await planAndRun(h, T, '8601', { oldProps: BASE, newProps: moved });
    expect(m.plan.action).toBe('rebuild');
    expect(m.plan.effects[0]).toContain(`queue ${QUEUE} stops receiving`);
    expectAgreement(m);
    const retired = { ...moved, Retired: 'true' };
    const r = await planAndRun(h, T, '8601', { oldProps: moved, newProps: retired });
    expect(r.plan.action).toBe('delete');
    expectAgreement(r);
    const back = await planAndRun(h, T, '8601', { oldProps: retired, newProps: moved });
    expect(back.plan.action).toBe('rebuild');
    expect(back.plan.calls).toHaveLength(3);
    expectAgreement(back);
  });

  test('removal: retain releases it (nothing sent), destroy retires it', async () => {
    await h.onEvent(h.event(T, 'Create', BASE));
    const kept = await planAndRun(h, T, '8601', { oldProps: BASE });
    expect(kept.plan.action).toBe('retain');
    expectAgreement(kept);
    const destroy = { ...BASE, RemovalPolicy: 'destroy' };
    await h.onEvent(h.event(T, 'Create', destroy));
    const gone = await planAndRun(h, T, '8601', { oldProps: destroy });
    expect(gone.plan.action).toBe('delete');
    expectAgreement(gone);
  });
});
