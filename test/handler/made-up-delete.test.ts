/**
 * A Delete ends a record only when the journal proves the resource made it (its live record, or its claim): a made-up
 * Delete from a stack the provider serves, naming a record made outside any stack, changes nothing.
 */
import { EB_ROLE, HandlerHarness, ROLE, useHandlerHarness } from './helpers';
import { ResourceTypes } from '../../src/kinds';

let h: HandlerHarness;
useHandlerHarness((started) => {
  h = started;
}, { resetEach: true });

const sub = (id: string): any => h.state().subscriptions.find((s: any) => String(s.id) === id);

test('Subscription: a Delete naming a subscription made in the web UI leaves it active and records nothing', async () => {
  const id = await h.subscribe(3001, 362, { marketplace_id: 'ATVPDKIKX0DER', remote_identity_id: '362' });
  await h.clearRequests();
  const r = await h.onEvent(h.event(ResourceTypes.SUBSCRIPTION, 'Delete', { ProductId: '3001', RemoteIdentityId: '362' }, { PhysicalResourceId: id }));
  expect(r.PhysicalResourceId).toBe(id);
  expect(sub(id).status).toBe('active');
  expect(await h.changingRequests()).toEqual([]);
  expect(await h.journalRecords()).toEqual([]);
  expect(h.logs.join('\n')).toContain('the Delete leaves it as it is');
});

test('Subscription: a Delete naming another resource\'s subscription leaves it (the claim names the other resource)', async () => {
  const props = { ProductId: '3001', RemoteIdentityId: '362', ProductParameters: { marketplace_id: 'ATVPDKIKX0DER' } };
  const made = await h.onEvent(h.event(ResourceTypes.SUBSCRIPTION, 'Create', props, { LogicalResourceId: 'Owner' }));
  await h.onEvent(h.event(ResourceTypes.SUBSCRIPTION, 'Delete', props, { LogicalResourceId: 'Intruder', PhysicalResourceId: made.PhysicalResourceId }));
  expect(sub(made.PhysicalResourceId).status).toBe('active');
  // Its own resource still ends it.
  await h.onEvent(h.event(ResourceTypes.SUBSCRIPTION, 'Delete', props, { LogicalResourceId: 'Owner', PhysicalResourceId: made.PhysicalResourceId }));
  expect(sub(made.PhysicalResourceId).status).toBe('invalid');
});

test('NotificationPipeline and LegacyNotificationPipeline (RemovalPolicy destroy): a made-up Delete of a UI record changes nothing', async () => {
  const id = await h.subscribe(3001, 362, { marketplace_id: 'ATVPDKIKX0DER', remote_identity_id: '362' });
  await h.clearRequests();
  await h.onEvent(h.event(ResourceTypes.NOTIFICATION_PIPELINE, 'Delete', {
    RemoteIdentityId: '362', AccountType: 'seller', NotificationTypes: ['ORDER_CHANGE'], RoleArn: ROLE, EbToFhRoleArn: EB_ROLE, DeploymentRegion: 'us-east-1',
  }, { PhysicalResourceId: id }));
  await h.onEvent(h.event(ResourceTypes.LEGACY_NOTIFICATION_PIPELINE, 'Delete', {
    SubscriptionId: id, RemoteIdentityId: '362', RemovalPolicy: 'destroy',
  }, { PhysicalResourceId: id, LogicalResourceId: 'Legacy' }));
  expect(sub(id).status).toBe('active');
  expect(await h.changingRequests()).toEqual([]);
});

test('HistoryRequest: a made-up Delete of a request made outside the stack does not cancel it', async () => {
  const subId = await h.subscribe(3001, 362, { marketplace_id: 'ATVPDKIKX0DER' });
  const day = (n: number): string => new Date(Date.now() - n * 86_400_000).toISOString().slice(0, 10);
  const props = { SubscriptionId: subId, StartDate: day(10), EndDate: day(5), StageId: '1000', WaitForCompletion: 'false', TimeoutSeconds: '600' };
  // Made by another journal (another region's stacks, say): this journal holds no record or claim of it.
  const made = await h.onEvent(h.event(ResourceTypes.HISTORY_REQUEST, 'Create', props));
  await h.reset({ keepEmulator: true });
  await h.clearRequests();
  await h.onEvent(h.event(ResourceTypes.HISTORY_REQUEST, 'Delete', props, { PhysicalResourceId: made.PhysicalResourceId }));
  expect(h.state().history.find((x: any) => String(x.id) === made.PhysicalResourceId).status).toBe('pending');
  expect(await h.changingRequests()).toEqual([]);
});
