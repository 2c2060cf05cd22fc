/**
 * The rollback of an Update that failed before it changed anything: CloudFormation sends the old declaration back with
 * the failed one as the previous properties, and the physical ID of the record that never changed. The handler
 * compares the declaration with what the journal records of that record, not with the previous properties, so the
 * rollback makes nothing new: no second subscription, pipeline or history request, and no refusal that would leave the
 * stack in UPDATE_ROLLBACK_FAILED.
 */
import { daysAgo, HandlerHarness, SELLER_PIPELINE, useHandlerHarness } from './helpers';
import { ResourceTypes } from '../../src/kinds';

let h: HandlerHarness;
useHandlerHarness((started) => {
  h = started;
}, { resetEach: true });

/** A failed Update from `before` to `after`, then its rollback; returns the rollback's physical ID and its changing calls. */
async function failThenRollBack(type: string, before: Record<string, unknown>, after: Record<string, unknown>, expected: string):
Promise<{ id: string; back: string; calls: string[] }> {
  const { PhysicalResourceId: id } = await h.onEvent(h.event(type, 'Create', before));
  const old = (p: Record<string, unknown>): Record<string, unknown> => ({ Connection: h.connection, ...p });
  expect(await h.fails(h.event(type, 'Update', after, { PhysicalResourceId: id, OldResourceProperties: old(before) }))).toContain(expected);
  await h.clearRequests();
  const back = await h.onEvent(h.event(type, 'Update', before, { PhysicalResourceId: id, OldResourceProperties: old(after) }));
  return { id, back: back.PhysicalResourceId, calls: await h.changingRequests() };
}

test('subscription: a product change whose create fails rolls back to the same subscription, with no POST', async () => {
  const before = { ProductId: '3001', RemoteIdentityId: '362', ProductParameters: { marketplace_id: 'ATVPDKIKX0DER' }, Status: 'active', OnDelete: 'invalid' };
  const after = { ...before, ProductId: '3002' };
  const { id, back, calls } = await failThenRollBack(ResourceTypes.SUBSCRIPTION, before, after, '3002');
  expect(back).toBe(id);
  expect(calls).toEqual([]);
  const live = h.state().subscriptions.filter((s: any) => s.id >= 9001 && s.status === 'active').map((s: any) => String(s.id));
  expect(live).toEqual([id]);
});

test('pipeline: an identity change whose create fails rolls back to the same pipeline, with no unified POST', async () => {
  const { id, back, calls } = await failThenRollBack(ResourceTypes.NOTIFICATION_PIPELINE, SELLER_PIPELINE,
    { ...SELLER_PIPELINE, RemoteIdentityId: '99999' }, '99999');
  expect(back).toBe(id);
  expect(calls).toEqual([]);
  expect(h.state().pipelines).toHaveLength(1);
});

test('pipeline: a refused account-type change rolls back (not refused again)', async () => {
  const { id, back, calls } = await failThenRollBack(ResourceTypes.NOTIFICATION_PIPELINE, SELLER_PIPELINE,
    { ...SELLER_PIPELINE, AccountType: 'vendor', NotificationTypes: ['ITEM_SALES_EVENT_CHANGE'] }, 'AccountType changed from seller to vendor');
  expect(back).toBe(id);
  expect(calls).toEqual([]);
});

test('history request: a change whose create fails rolls back to the same request, with no second request', async () => {
  const subId = await h.subscribe(3001, 362, { marketplace_id: 'ATVPDKIKX0DER' });
  const props = (extra: Record<string, unknown>): Record<string, unknown> => ({
    SubscriptionId: subId, StartDate: daysAgo(10), EndDate: daysAgo(5), StageId: '1000', WaitForCompletion: 'false', TimeoutSeconds: '600', ...extra,
  });
  const { id, back, calls } = await failThenRollBack(ResourceTypes.HISTORY_REQUEST, props({}),
    props({ StartDate: daysAgo(50), EndDate: daysAgo(1), ProductId: '3001' }), 'at most 30 day(s)');
  expect(back).toBe(id);
  expect(calls).toEqual([]);
  expect(h.state().history).toHaveLength(1);
  h.assertNoSecrets();
});
