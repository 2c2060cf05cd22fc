/**
 * The cloud's deliveries that the handler must survive (issue: "The cloud as it is"): CloudFormation cancels a Create
 * whose operation failed elsewhere and sends a Delete with an invented physical ID while the Create still runs; Lambda
 * delivers the same event twice at once. Each case runs the two invocations concurrently in this process against the
 * emulator, which holds the creating POST until the second invocation has arrived (or answers it just before the second
 * arrives), with records in the account that the stack did not make as bystanders.
 */
import { ARRIVALS, Deliveries, INVENTED, PIPE_PROPS, SUB_PROPS } from './delivery-helpers';
import { HandlerHarness, useHandlerHarness } from './helpers';
import { ResourceTypes } from '../../src/kinds';

const SUB = ResourceTypes.SUBSCRIPTION;
const PIPE = ResourceTypes.NOTIFICATION_PIPELINE;

let h: HandlerHarness;
useHandlerHarness((started) => {
  h = started;
}, { resetEach: true });
const deliveries = new Deliveries(() => h);
const activeMade = (): any[] => deliveries.activeMade();
const bystander = (): Promise<{ id: string; before: string }> => deliveries.bystander();
const unchanged = (b: { id: string; before: string }): void => deliveries.unchanged(b);
const liveRecords = (): Promise<any[]> => deliveries.liveRecords();
const fulfilled = <T>(r: PromiseSettledResult<T>): T => {
  if (r.status === 'rejected') throw r.reason;
  return r.value;
};
beforeEach(() => {
  // Waits are real here (short): the invocations run concurrently and wait for each other.
  h.onSleep = (ms) => new Promise((r) => setTimeout(r, Math.min(ms, 200)));
});
afterEach(() => {
  h.onSleep = undefined;
});

describe('a cancellation Delete with an invented physical ID races the Create', () => {
  test.each(ARRIVALS)('Subscription: the Delete arrives %s (POST /v2/sub): nothing stays active', async (arrival) => {
    const other = await bystander();
    const [c, d] = await deliveries.race(arrival, 'POST', '/v2/sub',
      () => h.onEvent(h.event(SUB, 'Create', SUB_PROPS)),
      () => h.onEvent(h.event(SUB, 'Delete', SUB_PROPS, { PhysicalResourceId: INVENTED })));
    // CloudFormation no longer reads the Create's answer; its Delete must succeed.
    expect(d).toMatchObject({ status: 'fulfilled', value: { PhysicalResourceId: INVENTED } });
    if (c.status === 'rejected') expect(String(c.reason)).toMatch(/stopped waiting|nothing was created/);
    expect(activeMade()).toEqual([]);
    expect(await liveRecords()).toEqual([]);
    unchanged(other);
  });

  test.each(ARRIVALS)('NotificationPipeline: the Delete arrives %s (the unified POST): no pipeline, no subscription', async (arrival) => {
    const other = await bystander();
    const [c, d] = await deliveries.race(arrival, 'POST', '/service/sp/notifications-unified/362',
      () => h.onEvent(h.event(PIPE, 'Create', PIPE_PROPS)),
      () => h.onEvent(h.event(PIPE, 'Delete', PIPE_PROPS, { PhysicalResourceId: INVENTED })));
    expect(d).toMatchObject({ status: 'fulfilled', value: { PhysicalResourceId: INVENTED } });
    if (c.status === 'rejected') expect(String(c.reason)).toMatch(/stopped waiting|nothing was created/);
    expect(h.state().pipelines).toEqual([]);
    expect(activeMade()).toEqual([]);
    expect(await liveRecords()).toEqual([]);
    unchanged(other);
  });

  test('a Delete after the Create finished (its answer lost to CloudFormation) ends what it made; an earlier deploy\'s record stays', async () => {
    const other = await bystander();
    const made = await h.onEvent(h.event(SUB, 'Create', SUB_PROPS));
    await h.onEvent(h.event(SUB, 'Delete', SUB_PROPS, { PhysicalResourceId: INVENTED }));
    expect(activeMade()).toEqual([]);
    expect(h.state().subscriptions.find((s: any) => String(s.id) === made.PhysicalResourceId).status).toBe('invalid');
    unchanged(other);
    // A record the resource made in an earlier, finished operation is not the cancelled Create's: a Delete with an
    // invented ID that follows no Create of the resource ends nothing.
    const kept = await h.onEvent(h.event(SUB, 'Create', SUB_PROPS));
    await h.onEvent(h.event(SUB, 'Update', SUB_PROPS, { PhysicalResourceId: kept.PhysicalResourceId, OldResourceProperties: { Connection: h.connection, ...SUB_PROPS } }));
    await h.onEvent(h.event(SUB, 'Delete', SUB_PROPS, { PhysicalResourceId: INVENTED }));
    expect(h.state().subscriptions.find((s: any) => String(s.id) === kept.PhysicalResourceId).status).toBe('active');
  });
});

describe('a cancelled HistoryRequest Create', () => {
  const HIST = ResourceTypes.HISTORY_REQUEST;
  const day = (n: number): string => new Date(Date.now() - n * 86_400_000).toISOString().slice(0, 10);
  const histProps = (sub: string): Record<string, unknown> => ({
    SubscriptionId: sub, StartDate: day(10), EndDate: day(5), StageId: '1000', WaitForCompletion: 'false', TimeoutSeconds: '600',
  });
  const open = (): any[] => h.state().history.filter((x: any) => x.status === 'pending' || x.status === 'processing');

  test.each(ARRIVALS)('the Delete arrives %s (the history POST): no open request stays', async (arrival) => {
    const sub = (await bystander()).id;
    const [, d] = await deliveries.race(arrival, 'POST', '/service/history/',
      () => h.onEvent(h.event(HIST, 'Create', histProps(sub))),
      () => h.onEvent(h.event(HIST, 'Delete', histProps(sub), { PhysicalResourceId: INVENTED })));
    expect(d).toMatchObject({ status: 'fulfilled', value: { PhysicalResourceId: INVENTED } });
    expect(open()).toEqual([]);
    expect(await liveRecords()).toEqual([]);
  });

  test('cancelled while it waits for the ceiling: it stops waiting and requests nothing', async () => {
    const sub = (await bystander()).id;
    await h.admin('POST', '/faults', { method: 'POST', pathPrefix: '/service/history/', status: 409, count: 1000, body: { errors: [{ detail: 'history request ceiling reached' }] } });
    const create = h.onEvent(h.event(HIST, 'Create', histProps(sub)));
    await deliveries.settledOrWaiting(create); // refused for the ceiling, it waits to try again
    const del = h.onEvent(h.event(HIST, 'Delete', histProps(sub), { PhysicalResourceId: INVENTED }));
    const [c, d] = await Promise.allSettled([create, del]);
    await h.admin('DELETE', '/faults');
    expect(d.status).toBe('fulfilled');
    expect(String((c as PromiseRejectedResult).reason)).toMatch(/stopped waiting/);
    expect(h.state().history).toEqual([]);
  });
});

describe('the same event delivered twice at once', () => {
  test('Subscription Create twice, the second while the first\'s POST is on the wire: one subscription, both report it', async () => {
    const other = await bystander();
    const event = h.event(SUB, 'Create', SUB_PROPS);
    const [a, b] = (await deliveries.race(ARRIVALS[0], 'POST', '/v2/sub', () => h.onEvent(event), () => h.onEvent(event))).map(fulfilled);
    expect(b.PhysicalResourceId).toBe(a.PhysicalResourceId);
    expect(activeMade().map((s) => String(s.id))).toEqual([a.PhysicalResourceId]);
    expect((await liveRecords()).map((r) => r.physicalId)).toEqual([a.PhysicalResourceId]);
    unchanged(other);
  });

  test('NotificationPipeline Create twice, the second while the first\'s unified POST is on the wire: one pipeline, both succeed with its ID', async () => {
    const other = await bystander();
    const event = h.event(PIPE, 'Create', PIPE_PROPS);
    const [a, b] = (await deliveries.race(ARRIVALS[0], 'POST', '/service/sp/notifications-unified/362', () => h.onEvent(event), () => h.onEvent(event))).map(fulfilled);
    expect(b.PhysicalResourceId).toBe(a.PhysicalResourceId);
    expect(h.state().pipelines).toHaveLength(1);
    expect(activeMade().map((s) => String(s.id))).toEqual([a.PhysicalResourceId]);
    unchanged(other);
  });
});
