/**
 * A HistoryRequest that continued in isComplete, under CloudFormation's cancellations and rollbacks: what it made is
 * ended when CloudFormation never learned it, and a request made outside the stack is never touched.
 */
import { left, polled, useContinuingProvider } from './continuation-helpers';
import { INVENTED } from './delivery-helpers';
import { daysAgo, HandlerHarness, useHandlerHarness } from './helpers';
import { isComplete, onEvent } from '../../src/handler';
import { CONTINUATION_KEY } from '../../src/handler/continuation';
import { ResourceTypes } from '../../src/kinds';

const HIST = ResourceTypes.HISTORY_REQUEST;
let h: HandlerHarness;
useHandlerHarness((s) => { h = s; }, { resetEach: true });
const status = (id: string): string => String(h.state().history.find((x: any) => String(x.id) === id)?.status);
/** The next history POST meets a 429 whose wait passes onEvent's deadline: the event continues in isComplete. */
const slowTurn = () => h.admin('POST', '/faults', { method: 'POST', pathPrefix: '/service/history/', status: 429, retryAfter: 20, count: 1 });

useContinuingProvider(() => h);

let subId: string;
beforeEach(async () => { subId = await h.subscribe(3001, 362, { marketplace_id: 'ATVPDKIKX0DER' }); });
const oldProps = () => ({ SubscriptionId: subId, StartDate: daysAgo(10), EndDate: daysAgo(5), StageId: '1000', WaitForCompletion: 'true', TimeoutSeconds: '3000' });
const newProps = () => ({ ...oldProps(), StartDate: daysAgo(9) });

/** A history request of the same subscription made outside the stack (test setup). */
async function handMade(start: number): Promise<string> {
  const r = await h.api('POST', `/service/history/production/history/${subId}`, {
    data: { type: 'HistoryTransaction', attributes: { start_date: daysAgo(start), end_date: daysAgo(2), stage_id: 1000 } },
  });
  expect(r.status).toBe(201);
  return String(r.body.data.id);
}

describe('a replacing HistoryRequest Update that continued, then UPDATE_ROLLBACK', () => {
  test('after the poll that made its request: the rollback\'s Update cancels that request; the old one and a bystander stay', async () => {
    const h1 = (await onEvent(h.event(HIST, 'Create', oldProps()), left(600_000))).PhysicalResourceId;
    const bystander = await handMade(20);
    await slowTurn();
    const update = h.event(HIST, 'Update', newProps(), { PhysicalResourceId: h1, OldResourceProperties: { Connection: h.connection, ...oldProps() } });
    const answer = await onEvent(update, left(15_000));
    expect(answer.Data).toEqual({ [CONTINUATION_KEY]: 'waiting' });
    // The first poll makes the new request (pending): not yet complete.
    expect(await isComplete(polled(update, answer), left(600_000))).toEqual({ IsComplete: false });
    const h2 = String(h.state().history.find((x: any) => ![h1, bystander].includes(String(x.id))).id);
    // A sibling fails: UPDATE_ROLLBACK sends the old properties with the old physical ID, between two polls.
    const back = await onEvent(h.event(HIST, 'Update', oldProps(), { PhysicalResourceId: h1, OldResourceProperties: { Connection: h.connection, ...newProps() } }), left(600_000));
    expect(back.PhysicalResourceId).toBe(h1);
    await expect(isComplete(polled(update, answer), left(600_000))).rejects.toThrow(/moved on/);
    // CloudFormation never learned h2 and sends no Delete for it: the rollback ended it.
    expect(status(h2)).toBe('cancelled');
    expect(status(h1)).not.toBe('cancelled');
    expect(status(bystander)).not.toBe('cancelled');
    expect((await h.journalRecords()).filter((r) => r.physicalId === h2).map((r) => r.state)).toEqual(['deleted']);
    // The next deploy of the new properties requests anew instead of taking the cancelled h2 as done.
    const again = await onEvent(h.event(HIST, 'Update', newProps(), { PhysicalResourceId: h1, OldResourceProperties: { Connection: h.connection, ...oldProps() } }), left(600_000));
    expect([h1, h2, bystander]).not.toContain(again.PhysicalResourceId);
    expect(['pending', 'processing']).toContain(status(again.PhysicalResourceId));
  }, 120_000);

  test('before its POST: nothing was made, its attempt is closed; the old request and a bystander stay', async () => {
    const h1 = (await onEvent(h.event(HIST, 'Create', oldProps()), left(600_000))).PhysicalResourceId;
    const bystander = await handMade(20);
    await slowTurn();
    const update = h.event(HIST, 'Update', newProps(), { PhysicalResourceId: h1, OldResourceProperties: { Connection: h.connection, ...oldProps() } });
    const answer = await onEvent(update, left(15_000));
    expect(answer.Data).toEqual({ [CONTINUATION_KEY]: 'waiting' });
    await onEvent(h.event(HIST, 'Update', oldProps(), { PhysicalResourceId: h1, OldResourceProperties: { Connection: h.connection, ...newProps() } }), left(600_000));
    await expect(isComplete(polled(update, answer), left(600_000))).rejects.toThrow(/moved on/);
    expect(h.state().history.map((x: any) => String(x.id)).sort()).toEqual([h1, bystander].sort());
    expect(h.state().history.map((x: any) => x.status)).not.toContain('cancelled');
    expect((await h.journalRecords()).filter((r) => r.physicalId === undefined).map((r) => r.state)).toEqual(['abandoned']);
  }, 120_000);

  test('a request no resource claims that appeared after its attempt\'s list is not cancelled on a guess', async () => {
    const h1 = (await onEvent(h.event(HIST, 'Create', oldProps()), left(600_000))).PhysicalResourceId;
    await slowTurn();
    const update = h.event(HIST, 'Update', newProps(), { PhysicalResourceId: h1, OldResourceProperties: { Connection: h.connection, ...oldProps() } });
    const answer = await onEvent(update, left(15_000));
    expect(answer.Data).toEqual({ [CONTINUATION_KEY]: 'waiting' });
    // Made outside the stack after the attempt listed the subscription's requests: it looks like what the attempt made.
    const bystander = await handMade(9);
    await onEvent(h.event(HIST, 'Update', oldProps(), { PhysicalResourceId: h1, OldResourceProperties: { Connection: h.connection, ...newProps() } }), left(600_000));
    expect(status(bystander)).not.toBe('cancelled');
    expect(status(h1)).not.toBe('cancelled');
    expect((await h.journalRecords()).filter((r) => r.physicalId === undefined).map((r) => r.state)).toEqual(['creating']);
  }, 120_000);
});

describe('a HistoryRequest Create cancelled by a Delete with an invented physical ID', () => {
  test('a second operation\'s Create that made its request in a poll, then cancelled too: the Delete cancels it (the first attempt is taken over)', async () => {
    const bystander = await handMade(20);
    await slowTurn();
    const event = h.event(HIST, 'Create', oldProps());
    const answer = await onEvent(event, left(15_000));
    expect(answer.Data).toEqual({ [CONTINUATION_KEY]: 'waiting' });
    expect(await onEvent(h.event(HIST, 'Delete', oldProps(), { PhysicalResourceId: INVENTED }), left(600_000))).toEqual({ PhysicalResourceId: INVENTED });
    await expect(isComplete(polled(event, answer), left(600_000))).rejects.toThrow(/moved on|stopped waiting|nothing was/);
    expect(h.state().history.map((x: any) => String(x.id))).toEqual([bystander]);
    // Second operation: the Create makes its request in a poll, then CloudFormation cancels it.
    await slowTurn();
    const again = h.event(HIST, 'Create', oldProps());
    const a2 = await onEvent(again, left(15_000));
    expect(a2.Data).toEqual({ [CONTINUATION_KEY]: 'waiting' });
    expect(await isComplete(polled(again, a2), left(600_000))).toEqual({ IsComplete: false });
    const made = h.state().history.filter((x: any) => String(x.id) !== bystander).map((x: any) => String(x.id));
    expect(made).toHaveLength(1);
    await onEvent(h.event(HIST, 'Delete', oldProps(), { PhysicalResourceId: 'HandlerTest-Resource-9Z8Y7X6W5V4U' }), left(600_000));
    await expect(isComplete(polled(again, a2), left(600_000))).rejects.toThrow();
    expect(status(made[0])).toBe('cancelled');
    expect(status(bystander)).not.toBe('cancelled');
    // The first operation's attempt was closed when the second took it over; nothing stays open in the journal.
    const recs = await h.journalRecords();
    expect(recs.map((r) => r.state).sort()).toEqual(['abandoned', 'deleted']);
    expect(recs.find((r) => r.state === 'abandoned')?.doc.takenOverBy).toBe(recs.find((r) => r.state === 'deleted')?.sk);
  }, 120_000);

  test('one operation: a Create that made its request in a poll is cancelled by the Delete', async () => {
    await slowTurn();
    const event = h.event(HIST, 'Create', oldProps());
    const answer = await onEvent(event, left(15_000));
    expect(await isComplete(polled(event, answer), left(600_000))).toEqual({ IsComplete: false });
    expect(h.state().history).toHaveLength(1);
    await onEvent(h.event(HIST, 'Delete', oldProps(), { PhysicalResourceId: INVENTED }), left(600_000));
    await expect(isComplete(polled(event, answer), left(600_000))).rejects.toThrow();
    expect(h.state().history.map((x: any) => x.status)).toEqual(['cancelled']);
  }, 120_000);
});
