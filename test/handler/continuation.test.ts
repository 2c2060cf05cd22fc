/**
 * Waits longer than an invocation continue asynchronously (src/handler/continuation.ts): an event whose turn in the
 * request budget falls past its invocation's deadline is answered with a continuation; isComplete (the provider
 * framework's waiter) runs it again under the resource's lease until it is done. The budget here is tiny and real
 * (a turn every 1.5 s or more), the sleeps are real, and the deadlines are short: an onEvent with 0.8 s left cannot
 * take its second turn.
 */
import { delay, Deliveries, INVENTED, PIPE_PROPS, SUB_PROPS } from './delivery-helpers';
import { HandlerHarness, useHandlerHarness } from './helpers';
import { CONTINUATION_ENV, REQUEST_BUDGET_ENV } from '../../src/contract';
import { CfnEvent, configureLocalRuntime, isComplete, IsCompleteResult, onEvent, OnEventResult } from '../../src/handler';
import { CONTINUATION_KEY } from '../../src/handler/continuation';
import { resourceKey } from '../../src/handler/journal';
import { dynamoLeases, newHolder } from '../../src/handler/journal-lease';
import { DEADLINE_MARGIN_MS } from '../../src/handler/runtime';
import { ResourceTypes } from '../../src/kinds';

const SUB = ResourceTypes.SUBSCRIPTION;

let h: HandlerHarness;
useHandlerHarness((started) => {
  h = started;
}, { resetEach: true });
const deliveries = new Deliveries(() => h);

/** The provider's environment with a request budget of one request per `seconds` and (unless off) continuations. */
function provider(seconds: number, continuation = true): void {
  configureLocalRuntime({
    ...h.runtime(),
    environment: () => ({
      ...h.environment(),
      [REQUEST_BUDGET_ENV]: `1/${seconds}`,
      ...(continuation ? { [CONTINUATION_ENV]: '1' } : {}),
    }),
  });
}

beforeEach(() => {
  // Real waits: the turns of the budget are real time.
  h.onSleep = (ms) => delay(ms);
});
afterEach(() => {
  h.onSleep = undefined;
  h.bound = { stacks: ['HandlerTest'], connections: [] };
  h.lineage = {};
  h.configure();
});

/** The isComplete event the provider framework's waiter sends: the onEvent event with onEvent's answer. */
const completeEvent = (event: CfnEvent, answer: OnEventResult): CfnEvent => ({
  ...event, PhysicalResourceId: answer.PhysicalResourceId, Data: answer.Data,
});
/** An onEvent's time left: enough for its journal work and one service call, not for a second turn 1.5 s later. */
const SHORT = 800;
/** An invocation with `ms` left before the handler's own deadline. */
const left = (ms: number): { getRemainingTimeInMillis: () => number } => ({ getRemainingTimeInMillis: () => DEADLINE_MARGIN_MS + ms });

/** Polls isComplete as the waiter does (a short interval here) until it answers true; fails after `polls`. */
async function waiter(event: CfnEvent, polls = 400): Promise<IsCompleteResult & { polls: number }> {
  for (let n = 1; n <= polls; n++) {
    const r = await isComplete(event, left(600_000));
    if (r.IsComplete) return { ...r, polls: n };
    expect(r.Data).toBeUndefined();
    await delay(100);
  }
  throw new Error(`still not complete after ${polls} polls`);
}

const creates = async (): Promise<number> => (await h.requests()).filter((r) => r.method === 'POST' && r.path.startsWith('/v2/sub')).length;

describe('a wait past the deadline continues in isComplete', () => {
  test('a Create whose next turn falls after its deadline answers a continuation, and isComplete finishes it', async () => {
    provider(0.5);
    const event = h.event(SUB, 'Create', SUB_PROPS);
    const answer = await onEvent(event, left(SHORT));
    expect(answer).toEqual({ PhysicalResourceId: event.RequestId, Data: { [CONTINUATION_KEY]: 'waiting' } });
    // No call was half-sent, nothing was made yet.
    expect(await creates()).toBe(0);
    expect(deliveries.activeMade()).toEqual([]);
    const done = await waiter(completeEvent(event, answer));
    expect(done.PhysicalResourceId).toMatch(/^\d+$/);
    expect(done.Data).toMatchObject({ SubscriptionId: done.PhysicalResourceId, [CONTINUATION_KEY]: 'resumed' });
    expect(deliveries.activeMade().map((s) => String(s.id))).toEqual([done.PhysicalResourceId]);
    expect(await creates()).toBe(1);
  }, 60_000);

  test('without the provider\'s continuation setting (a framework without waiter) the same wait fails as before', async () => {
    provider(0.5, false);
    // The deadline falls in its wait for a turn, or (on a loaded machine, the journal work having taken the 0.8 s)
    // before its first request: either way it fails where a framework with a waiter would continue.
    await expect(onEvent(h.event(SUB, 'Create', SUB_PROPS), left(SHORT))).rejects
      .toThrow(/deadline reached (.*request budget|before the request was sent)/);
    expect(await creates()).toBe(0);
  });

  test('isComplete answers false at once while its turn is not within its invocation (it holds no container)', async () => {
    provider(5);
    const event = h.event(SUB, 'Create', SUB_PROPS);
    const answer = await onEvent(event, left(SHORT));
    expect(answer.Data).toEqual({ [CONTINUATION_KEY]: 'waiting' });
    const started = Date.now();
    // The next turn is about 6 s away: an invocation with 1 s left does not wait for it.
    expect(await isComplete(completeEvent(event, answer), left(1_000))).toEqual({ IsComplete: false });
    expect(Date.now() - started).toBeLessThan(3_000);
    expect(await creates()).toBe(0);
  });

  test('a resource that finished in onEvent is complete at once, without a service call', async () => {
    provider(0.5);
    const event = h.event(SUB, 'Create', SUB_PROPS);
    const answer = await onEvent(event, left(600_000));
    expect(answer.PhysicalResourceId).toMatch(/^\d+$/);
    await h.clearRequests();
    expect(await isComplete(completeEvent(event, answer), left(600_000))).toEqual({ IsComplete: true });
    expect(await h.requests()).toEqual([]);
  }, 30_000);

  test('two continuations of the same request at once send one creating call and both answer the same subscription', async () => {
    provider(0.5);
    const event = h.event(SUB, 'Create', SUB_PROPS);
    const answer = await onEvent(event, left(SHORT));
    const [a, b] = await Promise.all([waiter(completeEvent(event, answer)), waiter(completeEvent(event, answer))]);
    expect(a.PhysicalResourceId).toMatch(/^\d+$/);
    expect(b.PhysicalResourceId).toBe(a.PhysicalResourceId);
    expect(await creates()).toBe(1);
    expect(deliveries.activeMade().map((s) => String(s.id))).toEqual([a.PhysicalResourceId]);
  }, 60_000);

  test('past CloudFormation\'s hour the continuation fails, naming the wait', async () => {
    provider(0.5);
    h.clock = Date.now();
    const event = h.event(SUB, 'Create', SUB_PROPS);
    const answer = await onEvent(event, left(SHORT));
    expect(answer.Data).toEqual({ [CONTINUATION_KEY]: 'waiting' });
    h.clock += 56 * 60_000;
    await expect(isComplete(completeEvent(event, answer), left(600_000)))
      .rejects.toThrow(/Create of Resource has waited 56 minutes .*for its turn in the service's rate limit.*CloudFormation waits at most one hour/);
    expect(await creates()).toBe(0);
  });
});

describe('a container stopped mid-continuation', () => {
  test('its lease holds the next polls (IsComplete false, nothing marked) until it expires; then a poll finishes the Create', async () => {
    provider(0.5);
    h.clock = Date.now();
    const event = h.event(SUB, 'Create', SUB_PROPS);
    const answer = await onEvent(event, left(SHORT));
    expect(answer.Data).toEqual({ [CONTINUATION_KEY]: 'waiting' });
    // A continuation of this request whose container was stopped: its lease stays until its deadline (10 minutes).
    const leases = dynamoLeases({
      table: h.journalTable, endpoint: h.journal.endpoint, sleep: async () => undefined, now: () => h.now(), environment: h.environment(),
    });
    const taken = await leases.take(resourceKey(event), {
      holder: newHolder(event.RequestId), requestId: event.RequestId, requestType: 'Create', expiresAt: new Date(h.now() + 600_000).toISOString(),
    });
    expect(taken.taken).toBe(true);
    expect(await isComplete(completeEvent(event, answer), left(600_000))).toEqual({ IsComplete: false });
    expect(await creates()).toBe(0);
    h.clock += 601_000;
    const done = await waiter(completeEvent(event, answer));
    expect(done.PhysicalResourceId).toMatch(/^\d+$/);
    expect(deliveries.activeMade().map((s) => String(s.id))).toEqual([done.PhysicalResourceId]);
    expect(await creates()).toBe(1);
  }, 60_000);
});

describe('a notification pipeline continues after its unified POST', () => {
  test('a 429 whose wait passes the deadline right after the pipeline was made: it continues, and its subscription is made once', async () => {
    configureLocalRuntime({ ...h.runtime(), environment: () => ({ ...h.environment(), [CONTINUATION_ENV]: '1' }) });
    h.onSleep = undefined;
    // The pipeline's product-107 subscription POST is refused once, for a minute: the onEvent has 15 s left.
    await h.admin('POST', '/faults', { method: 'POST', pathPrefix: '/v2/sub', status: 429, retryAfter: 60, count: 1 });
    const event = h.event(ResourceTypes.NOTIFICATION_PIPELINE, 'Create', PIPE_PROPS);
    const answer = await onEvent(event, left(15_000));
    expect(answer).toEqual({ PhysicalResourceId: event.RequestId, Data: { [CONTINUATION_KEY]: 'waiting' } });
    // The pipeline exists and was not undone; its subscription is not made yet.
    expect(h.state().pipelines).toHaveLength(1);
    const done = await isComplete(completeEvent(event, answer), left(600_000));
    expect(done).toMatchObject({ IsComplete: true, Data: { [CONTINUATION_KEY]: 'resumed' } });
    expect(done.PhysicalResourceId).toMatch(/^\d+$/);
    expect(done.Data?.SubscriptionId).toBe(done.PhysicalResourceId);
    const posts = (await h.requests()).filter((r) => r.method === 'POST' && r.path !== '/auth/api/ref').map((r) => `${r.path} ${r.status}`);
    expect(posts).toEqual(['/service/sp/notifications-unified/362 207', '/v2/sub 429', '/v2/sub 201']);
    expect(h.state().pipelines).toHaveLength(1);
  }, 60_000);
});

describe('a continuation is proven as onEvent is', () => {
  test('an isComplete event with the continuation\'s marker from a stack only named like a nested stack is refused, changing nothing', async () => {
    provider(0.5);
    h.bound = { stacks: ['HandlerTest', 'HandlerTest-*'], connections: [] };
    const evil = 'arn:aws:cloudformation:us-east-1:123456789012:stack/HandlerTest-Evil/11111111-2222-3333-4444-555555555555';
    // CloudFormation gives that stack no parent: onEvent refuses it, and so does a continuation sent to isComplete directly.
    h.lineage = { [evil]: {} };
    const event = h.event(SUB, 'Create', SUB_PROPS, { StackId: evil });
    await expect(onEvent(event, left(600_000))).rejects.toThrow(/named like a nested stack/);
    const forged = { ...event, PhysicalResourceId: event.RequestId, Data: { [CONTINUATION_KEY]: 'waiting' } };
    await expect(isComplete(forged, left(600_000))).rejects.toThrow(/named like a nested stack/);
    // Without the marker a poll only reads: complete at once, as for any event done in onEvent.
    expect(await isComplete({ ...forged, Data: {} }, left(600_000))).toEqual({ IsComplete: true });
    expect(await h.changingRequests()).toEqual([]);
  });
});

describe('a cancellation during a continuation', () => {
  test('the Delete with an invented physical ID runs between two polls: the continuation makes nothing', async () => {
    provider(0.5);
    const other = await deliveries.bystander();
    await h.clearRequests();
    const event = h.event(SUB, 'Create', SUB_PROPS);
    const answer = await onEvent(event, left(SHORT));
    expect(answer.Data).toEqual({ [CONTINUATION_KEY]: 'waiting' });
    const del = await onEvent(h.event(SUB, 'Delete', SUB_PROPS, { PhysicalResourceId: INVENTED }), left(600_000));
    expect(del).toEqual({ PhysicalResourceId: INVENTED });
    await expect(isComplete(completeEvent(event, answer), left(600_000))).rejects.toThrow(/moved on from it.*nothing was changed/);
    expect(await creates()).toBe(0);
    expect(deliveries.activeMade()).toEqual([]);
    deliveries.unchanged(other);
  }, 60_000);

  test('the Delete arrives while the continuation waits for its turn: no creating call leaves, the Delete succeeds', async () => {
    provider(2);
    const event = h.event(SUB, 'Create', SUB_PROPS);
    const answer = await onEvent(event, left(SHORT));
    expect(answer.Data).toEqual({ [CONTINUATION_KEY]: 'waiting' });
    // The continuation takes the lease and sleeps for its turns (3 s apart); the Delete comes meanwhile.
    const resumed = isComplete(completeEvent(event, answer), left(600_000));
    await delay(500);
    const deleted = onEvent(h.event(SUB, 'Delete', SUB_PROPS, { PhysicalResourceId: INVENTED }), left(600_000));
    const [c, d] = await Promise.allSettled([resumed, deleted]);
    expect(d).toEqual({ status: 'fulfilled', value: { PhysicalResourceId: INVENTED } });
    expect(c.status).toBe('rejected');
    expect(String((c as PromiseRejectedResult).reason)).toMatch(/stopped waiting|nothing was created/);
    expect(await creates()).toBe(0);
    expect(deliveries.activeMade()).toEqual([]);
  }, 90_000);
});
