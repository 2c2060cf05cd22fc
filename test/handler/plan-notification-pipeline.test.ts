import { EB_ROLE, HandlerHarness, ROLE, SELLER_PIPELINE, useHandlerHarness } from './helpers';
import { expectAgreement, planAndRun } from './plan-helpers';
import { NotificationPipelineAttributes as A } from '../../src/contract';
import { ResourceTypes } from '../../src/kinds';

const T = ResourceTypes.NOTIFICATION_PIPELINE;
/** A seller pipeline with a queue type and an event-bus type. */
const BASE = { ...SELLER_PIPELINE, NotificationTypes: ['REPORT_PROCESSING_FINISHED', 'ORDER_CHANGE'], RemovalPolicy: 'destroy' };

let h: HandlerHarness;
useHandlerHarness((started) => {
  h = started;
}, { resetEach: true });

async function deployed(props: Record<string, unknown> = BASE): Promise<{ id: string; data: Record<string, string> }> {
  const r = await h.onEvent(h.event(T, 'Create', props));
  return { id: r.PhysicalResourceId, data: r.Data ?? {} };
}

describe('planResource agrees with the handler: Custom::DpiNotificationPipeline', () => {
  test('create: the unified POST and the product-107 subscription', async () => {
    const r = await planAndRun(h, T, undefined, { newProps: BASE });
    expect(r.plan.action).toBe('create');
    expect(r.plan.calls.map((c) => `${c.method} ${c.path}`)).toEqual(['POST /service/sp/notifications-unified/362', 'POST /v2/sub']);
    expectAgreement(r);
  });

  test('a name change is one subscription PATCH: the pipeline is not touched', async () => {
    const { id } = await deployed();
    const r = await planAndRun(h, T, id, { oldProps: BASE, newProps: { ...BASE, Name: 'Renamed' } });
    expect(r.plan.action).toBe('update');
    expect(r.plan.changes).toEqual([{ prop: 'name', to: 'Renamed', effect: 'update' }]);
    expectAgreement(r);
  });

  test('a type change that keeps a queue type is the unified PATCH in place: the queue and prefix stay', async () => {
    const { id, data } = await deployed();
    const next = { ...BASE, NotificationTypes: ['REPORT_PROCESSING_FINISHED', 'FEED_PROCESSING_FINISHED'] };
    const r = await planAndRun(h, T, id, { oldProps: BASE, newProps: next }, data);
    expect(r.plan.action).toBe('update');
    expect(r.plan.changes).toEqual([expect.objectContaining({ prop: 'notificationTypes', effect: 'update' })]);
    expectAgreement(r);
    // What the service did: the queue path was kept.
    expect(r.result?.[A.PREFIX]).toBe(data[A.PREFIX]);
    expect(r.result?.[A.NOTIFICATION_QUEUE_ARN]).toBe(data[A.NOTIFICATION_QUEUE_ARN]);
  });

  test('a type change that removes every queue type rebuilds: the plan names the queue that goes away, and it does', async () => {
    const { id, data } = await deployed();
    const next = { ...BASE, NotificationTypes: ['ORDER_CHANGE'] };
    const r = await planAndRun(h, T, id, { oldProps: BASE, newProps: next }, data);
    expect(r.plan.action).toBe('rebuild');
    const text = r.plan.effects.join(' ');
    expect(text).toContain(`pipeline of identity 362 (subscription ${id}) is rebuilt`);
    expect(text).toContain(data[A.NOTIFICATION_QUEUE_ARN]);
    expect(text).toContain('consumers of the old queue stop receiving');
    expectAgreement(r);
    expect(r.result?.[A.PREFIX]).not.toBe(data[A.PREFIX]);
  });

  test('a region change rebuilds', async () => {
    const { id, data } = await deployed();
    const r = await planAndRun(h, T, id, { oldProps: BASE, newProps: { ...BASE, DeploymentRegion: 'us-west-2' } }, data);
    expect(r.plan.action).toBe('rebuild');
    expect(r.plan.changes).toEqual([{ prop: 'deploymentRegion', from: 'us-east-1', to: 'us-west-2', effect: 'rebuild' }]);
    expectAgreement(r);
    expect(r.result?.[A.PREFIX]).not.toBe(data[A.PREFIX]);
  });

  test('an identity change replaces: a new pipeline, then the old one is removed', async () => {
    const { id } = await deployed({ ...SELLER_PIPELINE, RemovalPolicy: 'destroy' });
    const old = { ...SELLER_PIPELINE, RemovalPolicy: 'destroy' };
    const vendor = { ...old, RemoteIdentityId: '363', AccountType: 'vendor', NotificationTypes: ['REPORT_PROCESSING_FINISHED', 'ITEM_SALES_EVENT_CHANGE'] };
    const r = await planAndRun(h, T, id, { oldProps: old, newProps: vendor });
    expect(r.plan.action).toBe('replace');
    expect(r.plan.calls.map((c) => `${c.method} ${c.path}`)).toEqual([
      'POST /service/sp/notifications-unified/363', 'POST /v2/sub', `DELETE /service/sp/notifications-unified/362/${id}`, `PATCH /v2/sub/${id}`,
    ]);
    expectAgreement(r);
  });

  test('an account-type change of the same identity: the plan says the deploy fails (the handler\'s reason), and it does', async () => {
    const { id } = await deployed();
    const r = await planAndRun(h, T, id, { oldProps: BASE, newProps: { ...BASE, AccountType: 'vendor' } });
    expect(r.plan.failure).toContain('AccountType changed from seller to vendor for the same identity 362');
    expect(r.plan.effects.join(' ')).toContain('the deploy fails');
    expectAgreement(r);
    expect(r.sent).toEqual([]);
  });

  test('partialFailure and the removal policy are no change for the service', async () => {
    const { id } = await deployed();
    const r = await planAndRun(h, T, id, { oldProps: BASE, newProps: { ...BASE, PartialFailure: 'ALLOW', RemovalPolicy: 'retain' } });
    expect(r.plan.action).toBe('no-change');
    expectAgreement(r);
  });

  test('delete: destroy removes the pipeline and ends its subscription; retain keeps it running', async () => {
    const { id, data } = await deployed();
    const d = await planAndRun(h, T, id, { oldProps: BASE }, data);
    expect(d.plan.action).toBe('delete');
    expect(d.plan.effects[0]).toContain(data[A.NOTIFICATION_QUEUE_ARN]);
    expectAgreement(d);
    const kept = { ...BASE, RemovalPolicy: 'retain', EbToFhRoleArn: EB_ROLE, RoleArn: ROLE };
    const k2 = await deployed(kept);
    const k = await planAndRun(h, T, k2.id, { oldProps: kept });
    expect(k.plan.action).toBe('retain');
    expectAgreement(k);
  });
});
