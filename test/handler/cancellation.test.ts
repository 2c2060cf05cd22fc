/**
 * The cloud's deliveries that the handler must survive (issue: "The cloud as it is"): CloudFormation cancels a Create
 * whose operation failed elsewhere and sends a Delete with an invented physical ID while the Create still runs; Lambda
 * delivers the same event twice at once. Each case runs the two invocations concurrently in this process against the
 * emulator, whose creating POST is slowed, with records in the account that the stack did not make as bystanders.
 */
import { delay, Deliveries, INVENTED, PIPE_PROPS, SUB_PROPS } from './delivery-helpers';
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
beforeEach(() => {
  // Waits are real here (short): the invocations run concurrently and wait for each other.
  h.onSleep = (ms) => new Promise((r) => setTimeout(r, Math.min(ms, 200)));
});
afterEach(() => {
  h.onSleep = undefined;
});

describe('a cancellation Delete with an invented physical ID races the Create', () => {
  test.each([100, 600, 1500])('Subscription: POST /v2/sub takes 1.2 s, the Delete arrives %i ms in: nothing stays active', async (at) => {
    const other = await bystander();
    await h.admin('POST', '/faults', { method: 'POST', pathPrefix: '/v2/sub', delayMs: 1200, count: 1 });
    const create = h.onEvent(h.event(SUB, 'Create', SUB_PROPS));
    await delay(at);
    const del = h.onEvent(h.event(SUB, 'Delete', SUB_PROPS, { PhysicalResourceId: INVENTED }));
    const [c, d] = await Promise.allSettled([create, del]);
    // CloudFormation no longer reads the Create's answer; its Delete must succeed.
    expect(d).toMatchObject({ status: 'fulfilled', value: { PhysicalResourceId: INVENTED } });
    if (c.status === 'rejected') expect(String(c.reason)).toMatch(/stopped waiting|nothing was created/);
    expect(activeMade()).toEqual([]);
    expect(await liveRecords()).toEqual([]);
    unchanged(other);
  });

  test.each([100, 800, 2000])('NotificationPipeline: the unified POST takes 1.5 s, the Delete arrives %i ms in: no pipeline, no subscription', async (at) => {
    const other = await bystander();
    await h.admin('POST', '/faults', { method: 'POST', pathPrefix: '/service/sp/notifications-unified/362', delayMs: 1500, count: 1 });
    const create = h.onEvent(h.event(PIPE, 'Create', PIPE_PROPS));
    await delay(at);
    const del = h.onEvent(h.event(PIPE, 'Delete', PIPE_PROPS, { PhysicalResourceId: INVENTED }));
    const [c, d] = await Promise.allSettled([create, del]);
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

  test.each([100, 1500])('the POST takes 1.2 s, the Delete arrives %i ms in: no open request stays', async (at) => {
    const sub = (await bystander()).id;
    await h.admin('POST', '/faults', { method: 'POST', pathPrefix: '/service/history/', delayMs: 1200, count: 1 });
    const create = h.onEvent(h.event(HIST, 'Create', histProps(sub)));
    await delay(at);
    const del = h.onEvent(h.event(HIST, 'Delete', histProps(sub), { PhysicalResourceId: INVENTED }));
    const [, d] = await Promise.allSettled([create, del]);
    expect(d).toMatchObject({ status: 'fulfilled', value: { PhysicalResourceId: INVENTED } });
    expect(open()).toEqual([]);
    expect(await liveRecords()).toEqual([]);
  });

  test('cancelled while it waits for the ceiling: it stops waiting and requests nothing', async () => {
    const sub = (await bystander()).id;
    await h.admin('POST', '/faults', { method: 'POST', pathPrefix: '/service/history/', status: 409, count: 1000, body: { errors: [{ detail: 'history request ceiling reached' }] } });
    const create = h.onEvent(h.event(HIST, 'Create', histProps(sub)));
    await delay(500);
    const del = h.onEvent(h.event(HIST, 'Delete', histProps(sub), { PhysicalResourceId: INVENTED }));
    const [c, d] = await Promise.allSettled([create, del]);
    await h.admin('DELETE', '/faults');
    expect(d.status).toBe('fulfilled');
    expect(String((c as PromiseRejectedResult).reason)).toMatch(/stopped waiting/);
    expect(h.state().history).toEqual([]);
  });
});

describe('the same event delivered twice at once', () => {
  test('Subscription Create twice, 150 ms apart: one subscription, both report it', async () => {
    const other = await bystander();
    await h.admin('POST', '/faults', { method: 'POST', pathPrefix: '/v2/sub', delayMs: 1200, count: 1 });
    const event = h.event(SUB, 'Create', SUB_PROPS);
    const first = h.onEvent(event);
    await delay(150);
    const second = h.onEvent(event);
    const [a, b] = await Promise.all([first, second]);
    expect(b.PhysicalResourceId).toBe(a.PhysicalResourceId);
    expect(activeMade().map((s) => String(s.id))).toEqual([a.PhysicalResourceId]);
    expect((await liveRecords()).map((r) => r.physicalId)).toEqual([a.PhysicalResourceId]);
    unchanged(other);
  });

  test('NotificationPipeline Create twice, 150 ms apart: one pipeline, both succeed with its ID', async () => {
    const other = await bystander();
    await h.admin('POST', '/faults', { method: 'POST', pathPrefix: '/service/sp/notifications-unified/362', delayMs: 1500, count: 1 });
    const event = h.event(PIPE, 'Create', PIPE_PROPS);
    const first = h.onEvent(event);
    await delay(150);
    const second = h.onEvent(event);
    const [a, b] = await Promise.all([first, second]);
    expect(b.PhysicalResourceId).toBe(a.PhysicalResourceId);
    expect(h.state().pipelines).toHaveLength(1);
    expect(activeMade().map((s) => String(s.id))).toEqual([a.PhysicalResourceId]);
    unchanged(other);
  });
});
