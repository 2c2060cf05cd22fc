/** The lifecycle gaps of the isComplete continuation (issue 32): a continued history request, the budget queue. */
import { left, polled, useContinuingProvider } from './continuation-helpers';
import { delay, Deliveries, SUB_PROPS } from './delivery-helpers';
import { daysAgo, HandlerHarness, useHandlerHarness } from './helpers';
import { isComplete, onEvent } from '../../src/handler';
import { CONTINUATION_KEY } from '../../src/handler/continuation';
import { ResourceTypes } from '../../src/kinds';

const HIST = ResourceTypes.HISTORY_REQUEST;
let h: HandlerHarness;
useHandlerHarness((s) => { h = s; }, { resetEach: true });

useContinuingProvider(() => h);

describe('a HistoryRequest Create that continued', () => {
  let subId: string;
  beforeEach(async () => { subId = await h.subscribe(3001, 362, { marketplace_id: 'ATVPDKIKX0DER' }); });
  const props = () => ({ SubscriptionId: subId, StartDate: daysAgo(10), EndDate: daysAgo(5), StageId: '1000', WaitForCompletion: 'true', TimeoutSeconds: '3000' });

  test('makes its request once; every later poll only reads its status; a Delete leaves none open', async () => {
    // The history POST meets a 429 whose wait passes onEvent's deadline: the Create continues.
    await h.admin('POST', '/faults', { method: 'POST', pathPrefix: '/service/history/', status: 429, retryAfter: 20, count: 1 });
    const event = h.event(HIST, 'Create', props());
    const answer = await onEvent(event, left(15_000));
    expect(answer.Data).toEqual({ [CONTINUATION_KEY]: 'waiting' });
    expect(h.state().history).toHaveLength(0);
    // The first poll makes the request; it is pending, so the poll answers "not yet".
    expect(await isComplete(polled(event, answer), left(600_000))).toEqual({ IsComplete: false });
    expect(h.state().history).toHaveLength(1);
    const id = String(h.state().history[0].id);
    // Later polls: only the request's status is read (no subscription, product card or status-list reads, which
    // would each take a turn in the request budget), and nothing is made again.
    for (let poll = 0; poll < 3; poll++) {
      await h.clearRequests();
      expect(await isComplete(polled(event, answer), left(600_000))).toEqual({ IsComplete: false });
      expect((await h.requests()).map((r) => `${r.method} ${r.path}`).filter((r) => !r.includes('/auth/'))).toEqual([`GET /service/history/production/history/${id}`]);
    }
    expect(h.state().history).toHaveLength(1);
    // CloudFormation stops waiting (a sibling failed): its Delete with the request ID as physical ID cancels it.
    const del = h.event(HIST, 'Delete', props(), { PhysicalResourceId: event.RequestId });
    await onEvent(del, left(600_000));
    expect(h.state().history.map((x: any) => x.status)).toEqual(['cancelled']);
  }, 120_000);

  test('completes with the one request, its timeout counted from when it was made', async () => {
    await h.admin('POST', '/faults', { method: 'POST', pathPrefix: '/service/history/', status: 429, retryAfter: 20, count: 1 });
    const event = h.event(HIST, 'Create', props());
    const answer = await onEvent(event, left(15_000));
    expect(await isComplete(polled(event, answer), left(600_000))).toEqual({ IsComplete: false });
    const id = String(h.state().history[0].id);
    await h.admin('POST', '/clock', { advance: 400 });
    const done = await isComplete(polled(event, answer), left(600_000));
    expect(done).toMatchObject({ IsComplete: true, PhysicalResourceId: id, Data: { HistoryTransactionId: id, Status: 'completed', [CONTINUATION_KEY]: 'resumed' } });
    expect(h.state().history).toHaveLength(1);
    expect((await h.journalRecords()).map((x) => [x.state, x.physicalId])).toEqual([['active', id]]);
  }, 120_000);

  test('its TimeoutSeconds counts from when the request was made, not from the last poll', async () => {
    await h.admin('POST', '/faults', { method: 'POST', pathPrefix: '/service/history/', status: 429, retryAfter: 20, count: 1 });
    const event = h.event(HIST, 'Create', { ...props(), TimeoutSeconds: '2' });
    const answer = await onEvent(event, left(15_000));
    expect(await isComplete(polled(event, answer), left(600_000))).toEqual({ IsComplete: false });
    await delay(1_200);
    expect(await isComplete(polled(event, answer), left(600_000))).toEqual({ IsComplete: false });
    await delay(1_200);
    await expect(isComplete(polled(event, answer), left(600_000))).rejects.toThrow(/still pending after 2 s/);
  }, 120_000);
});

describe('a replacing Subscription Update that continued with an attempt, then UPDATE_ROLLBACK', () => {
  const SUB = ResourceTypes.SUBSCRIPTION;
  const deliveries = new Deliveries(() => h);

  test('the rollback\'s Update ends the subscription the attempt made, by the record\'s product and identity; bystanders untouched', async () => {
    const created = await onEvent(h.event(SUB, 'Create', SUB_PROPS), left(600_000));
    // A bystander made outside the stack with the same product and identity as the Update's (before its POST).
    const sameIdentity = await h.subscribe(3001, 363, { marketplace_id: 'ATVPDKIKX0DER', remote_identity_id: '363' });
    // The replacing Update (another identity): its POST is applied but its answer lost, and the listing that would find
    // what it made meets a 429 whose wait passes the deadline: the Update continues, its attempt unresolved.
    await h.admin('POST', '/faults', { method: 'POST', pathPrefix: '/v2/sub', dropResponse: true, count: 1 });
    await h.admin('POST', '/faults', { method: 'GET', pathPrefix: '/v2/sub', status: 429, retryAfter: 20, skip: 1, count: 1 });
    const next = { ...SUB_PROPS, RemoteIdentityId: '363' };
    const update = h.event(SUB, 'Update', next, { PhysicalResourceId: created.PhysicalResourceId, OldResourceProperties: { Connection: h.connection, ...SUB_PROPS } });
    const answer = await onEvent(update, left(15_000));
    expect(answer).toEqual({ PhysicalResourceId: created.PhysicalResourceId, Data: { [CONTINUATION_KEY]: 'waiting' } });
    const made = h.state().subscriptions.filter((s: any) => s.id >= 9001 && String(s.id) !== sameIdentity && String(s.remote_identity) === '363');
    expect(made).toHaveLength(1);
    // Another, made outside the stack while the Update waits (after its POST, so new to the attempt too): the same
    // product with another identity. Only the attempt's record (product and identity) tells it apart.
    const otherIdentity = await h.subscribe(3001, 364, { marketplace_id: 'ATVPDKIKX0DER', remote_identity_id: '364' });
    const before = JSON.stringify(h.state().subscriptions.filter((s: any) => [otherIdentity, sameIdentity].includes(String(s.id))));
    expect((await h.journalRecords()).filter((r) => r.physicalId === undefined).map((r) => r.state)).toEqual(['recording']);
    // A sibling fails: UPDATE_ROLLBACK sends the old properties with the old physical ID, between two polls.
    const back = await onEvent(h.event(SUB, 'Update', SUB_PROPS, { PhysicalResourceId: created.PhysicalResourceId, OldResourceProperties: { Connection: h.connection, ...next } }), left(600_000));
    expect(back.PhysicalResourceId).toBe(created.PhysicalResourceId);
    await expect(isComplete(polled(update, answer), left(600_000))).rejects.toThrow(/moved on/);
    // The attempt's subscription is ended; the stack's own and the bystanders are as they were.
    expect(deliveries.subOf(String(made[0].id)).status).toBe('invalid');
    expect(deliveries.subOf(created.PhysicalResourceId).status).toBe('active');
    expect(JSON.stringify(h.state().subscriptions.filter((s: any) => [otherIdentity, sameIdentity].includes(String(s.id))))).toBe(before);
    expect((await h.journalRecords()).filter((r) => r.physicalId === undefined && ['recording', 'adopting'].includes(String(r.state)))).toEqual([]);
  }, 120_000);
});
