/**
 * The resource lease (src/handler/lease.ts, journal-lease.ts) against the cloud's deliveries as CloudFormation, Lambda
 * and the provider framework (aws-cdk-lib custom-resources runtime) make them: late and repeated deliveries, stopped
 * containers, cancelled Updates, failed cancellation Deletes, waits that give up. The two residual cases (1a, 2b)
 * assert what remains and that it stays findable (docs/handler.md, "Cancellations and duplicate deliveries").
 */
import { DeleteItemCommand, DynamoDBClient, GetItemCommand, PutItemCommand } from '@aws-sdk/client-dynamodb';
import { ARRIVALS, delay, Deliveries, INVENTED, PIPE_PROPS, SUB_PROPS } from './delivery-helpers';
import { HandlerHarness, daysAgo, useHandlerHarness } from './helpers';
import { dynamoJournal } from '../../src/handler/journal';
import { ResourceTypes } from '../../src/kinds';

jest.setTimeout(90_000);

const SUB = ResourceTypes.SUBSCRIPTION;
const PIPE = ResourceTypes.NOTIFICATION_PIPELINE;
const HIST = ResourceTypes.HISTORY_REQUEST;
/** Another product and identity (a replacement). */
const SUB_PROPS_B = { ProductId: '3002', RemoteIdentityId: '365', ProductParameters: { profile_id: '77' }, Status: 'active', OnDelete: 'invalid' };
const KEY = 'HandlerTest/Resource';

let h: HandlerHarness;
useHandlerHarness((started) => {
  h = started;
}, { resetEach: true });

const realFetch = globalThis.fetch;
beforeEach(() => {
  h.onSleep = (ms) => new Promise((r) => setTimeout(r, Math.min(ms, 200)));
  outside.clear();
});
afterEach(() => {
  h.onSleep = undefined;
  globalThis.fetch = realFetch;
});

const deliveries = new Deliveries(() => h);
const outside = deliveries.outside;
const activeMade = (): any[] => deliveries.activeMade();
const subOf = (id: string): any => deliveries.subOf(id);
const old = (p: Record<string, unknown>): Record<string, unknown> => ({ Connection: h.connection, ...p });
const bystander = (): Promise<{ id: string; before: string }> => deliveries.bystander();
const unchanged = (b: { id: string; before: string }): void => deliveries.unchanged(b);
const liveRecords = (): Promise<any[]> => deliveries.liveRecords();
const ON_THE_WIRE = ARRIVALS[0];
const fulfilled = <T>(r: PromiseSettledResult<T>): T => {
  if (r.status === 'rejected') throw r.reason;
  return r.value;
};
function ddbClient(): DynamoDBClient {
  return new DynamoDBClient({ endpoint: h.journal.endpoint, region: 'us-east-1', credentials: { accessKeyId: 'local', secretAccessKey: 'local' } });
}
async function leaseItem(): Promise<Record<string, any> | undefined> {
  const c = ddbClient();
  try {
    return (await c.send(new GetItemCommand({ TableName: h.journalTable, Key: { pk: { S: `lease#${KEY}` }, sk: { S: 'lease' } }, ConsistentRead: true }))).Item;
  } finally {
    c.destroy();
  }
}

/**
 * Simulates a Lambda container stopped right after it sent the creating POST: the POST reaches the service (and is
 * applied), the invocation never resumes (its promise never settles, as a killed container never answers).
 */
function killAfterPost(pathPrefix: string): { sent: Promise<void> } {
  let sentResolve: () => void = () => undefined;
  const sent = new Promise<void>((r) => {
    sentResolve = r;
  });
  let armed = true;
  globalThis.fetch = (async (input: any, init?: any) => {
    const url = String(input instanceof Request ? input.url : input);
    const method = String(init?.method ?? 'GET').toUpperCase();
    if (armed && method === 'POST' && new URL(url).pathname.startsWith(pathPrefix)) {
      armed = false;
      await realFetch(input, { ...init, signal: undefined }).catch(() => undefined);
      sentResolve();
      return new Promise(() => undefined);
    }
    return realFetch(input, init);
  }) as typeof fetch;
  return { sent };
}

describe('1. a cancellation Delete that runs before the Create (late delivery)', () => {
  test('1a (residual): Delete with an invented ID first, the cancelled Create delivered after it finished: its record stays in the journal, findable', async () => {
    const other = await bystander();
    const create = h.event(SUB, 'Create', SUB_PROPS);
    await h.onEvent(h.event(SUB, 'Delete', SUB_PROPS, { PhysicalResourceId: INVENTED }));
    // Lambda's async queue delivered the Create late (throttling/retry backoff): CloudFormation ignores its answer.
    // Nothing in the event tells it from the next deploy's Create, so it creates; the journal keeps its record, which
    // 'dpi orphans' lists once the stack's template no longer has the resource.
    const r = await h.onEvent(create);
    expect(activeMade().map((s) => String(s.id))).toEqual([r.PhysicalResourceId]);
    expect((await liveRecords()).map((x) => [x.state, x.physicalId])).toEqual([['active', r.PhysicalResourceId]]);
    unchanged(other);
  });

  test('1b: the provider framework re-invokes the cancelled Create (same RequestId) after the cancellation Delete finished', async () => {
    const other = await bystander();
    const create = h.event(SUB, 'Create', SUB_PROPS);
    await deliveries.race(ON_THE_WIRE, 'POST', '/v2/sub', () => h.onEvent(create), () => h.onEvent(h.event(SUB, 'Delete', SUB_PROPS, { PhysicalResourceId: INVENTED })));
    expect(activeMade()).toEqual([]);
    // framework.js invokeUserFunction: lambda.invoke failed (e.g. a network error) -> waitUntilFunctionActive -> invoke again.
    const again = await h.onEvent(create).then((r) => `fulfilled ${r.PhysicalResourceId}`, (e) => `rejected ${String(e)}`);
    expect({ again, active: activeMade().map((s) => s.id) }).toEqual({ again: expect.stringMatching(/rejected/), active: [] });
    unchanged(other);
  });

  test('1c: duplicate Create (same RequestId) waiting behind the cancelled Create, plus the cancellation Delete: nothing stays active', async () => {
    const other = await bystander();
    const create = h.event(SUB, 'Create', SUB_PROPS);
    let b: Promise<unknown> = Promise.resolve();
    const [, del] = await deliveries.race(ON_THE_WIRE, 'POST', '/v2/sub', () => h.onEvent(create), async () => {
      const d = h.onEvent(h.event(SUB, 'Delete', SUB_PROPS, { PhysicalResourceId: INVENTED }));
      await deliveries.settledOrWaiting(d);
      b = h.onEvent(create); // the duplicate arrives behind the Delete
      await deliveries.settledOrWaiting(b);
      return d;
    });
    await Promise.allSettled([b]);
    expect(del.status).toBe('fulfilled');
    expect(activeMade()).toEqual([]);
    expect(await liveRecords()).toEqual([]);
    unchanged(other);
  });

  test('1d: the cancelled Create arrives while the cancellation Delete waits for it (a cold start): nothing of it is left', async () => {
    const other = await bystander();
    // CloudFormation stopped waiting for the Create while its container was still starting: its Delete runs first.
    const d = h.onEvent(h.event(SUB, 'Delete', SUB_PROPS, { PhysicalResourceId: INVENTED }));
    await delay(400);
    const [c, del] = await Promise.allSettled([h.onEvent(h.event(SUB, 'Create', SUB_PROPS)), d]);
    expect(fulfilled(del).PhysicalResourceId).toBe(INVENTED);
    // The Create found itself cancelled before its creating call, or made a subscription that the Delete then ended.
    if (c.status === 'rejected') expect(String(c.reason)).toMatch(/CloudFormation stopped waiting for this request/);
    expect(activeMade()).toEqual([]);
    expect((await liveRecords()).filter((x) => x.state === 'active')).toEqual([]);
    unchanged(other);
  });
});

describe('2. the Create\'s container stopped', () => {
  test('2a: Create killed right after its POST: the Delete waits for the lease to expire (no takeover) and ends what the POST made', async () => {
    const other = await bystander();
    const kill = killAfterPost('/v2/sub');
    // The handler's clock moves with its sleeps: the Delete's wait for the lease takes no real time.
    h.clock = Date.now();
    h.onSleep = () => delay(2);
    const t0 = h.now();
    // remaining 18 s: client deadline t0+3 s, lease expires t0+18 s (the Lambda timeout).
    void h.onEvent(h.event(SUB, 'Create', SUB_PROPS), 18_000).catch(() => undefined);
    await kill.sent;
    globalThis.fetch = realFetch;
    await delay(200);
    expect(activeMade()).toHaveLength(1);
    const made = String(activeMade()[0].id);
    const lease = await leaseItem();
    expect(lease?.requestType?.S).toBe('Create');
    const d = await h.onEvent(h.event(SUB, 'Delete', SUB_PROPS, { PhysicalResourceId: INVENTED }));
    const waited = h.now() - t0;
    expect(d.PhysicalResourceId).toBe(INVENTED);
    expect(waited).toBeGreaterThanOrEqual(17_000);
    expect(subOf(made).status).toBe('invalid');
    expect(await liveRecords()).toEqual([]);
    unchanged(other);
  });

  test('2b (residual): pipeline Create stopped right after its unified POST: the attempt stays \'posting\' for its human step', async () => {
    const kill = killAfterPost('/service/sp/notifications-unified/362');
    h.clock = Date.now();
    h.onSleep = () => delay(2);
    void h.onEvent(h.event(PIPE, 'Create', PIPE_PROPS), 18_000).catch(() => undefined);
    await kill.sent;
    globalThis.fetch = realFetch;
    const d = await h.onEvent(h.event(PIPE, 'Delete', PIPE_PROPS, { PhysicalResourceId: INVENTED }));
    expect(d.PhysicalResourceId).toBe(INVENTED);
    // The unified POST's result is the only handle on a pipeline (the service has no read of one): the documented
    // residual. The attempt stays 'posting' (dpi orphans: unresolved, with 'dpi journal resolve'), never taken as done.
    expect({ pipelines: h.state().pipelines.length, live: (await liveRecords()).map((r) => r.state) }).toEqual({ pipelines: 1, live: ['posting'] });
    expect(h.logs.join('\n')).toContain('sent the unified create without a known outcome');
  });
});

describe('3. duplicate deliveries and a cancelled Update', () => {
  test('3a: the same Delete delivered twice at once: both succeed, the subscription ends once', async () => {
    const other = await bystander();
    const made = await h.onEvent(h.event(SUB, 'Create', SUB_PROPS));
    const ev = h.event(SUB, 'Delete', SUB_PROPS, { PhysicalResourceId: made.PhysicalResourceId });
    const [a, b] = await deliveries.race(ON_THE_WIRE, 'PATCH', '/v2/sub', () => h.onEvent(ev), () => h.onEvent(ev));
    expect([a.status, b.status]).toEqual(['fulfilled', 'fulfilled']);
    expect(subOf(made.PhysicalResourceId).status).toBe('invalid');
    expect(await liveRecords()).toEqual([]);
    unchanged(other);
  });

  test('3b: the same replacement Update (ProductId change) delivered twice at once: one new subscription, both report it', async () => {
    const made = await h.onEvent(h.event(SUB, 'Create', SUB_PROPS));
    const ev = h.event(SUB, 'Update', SUB_PROPS_B, { PhysicalResourceId: made.PhysicalResourceId, OldResourceProperties: old(SUB_PROPS) });
    const [a, b] = (await deliveries.race(ON_THE_WIRE, 'POST', '/v2/sub', () => h.onEvent(ev), () => h.onEvent(ev))).map(fulfilled);
    expect(b.PhysicalResourceId).toBe(a.PhysicalResourceId);
    expect(activeMade().map((s) => String(s.id)).sort()).toEqual([made.PhysicalResourceId, a.PhysicalResourceId].sort());
  });

  test.each(ARRIVALS)('3c: forward replacement Update and a rollback Update arriving %s (the forward POST): only the original stays', async (arrival) => {
    const other = await bystander();
    const made = await h.onEvent(h.event(SUB, 'Create', SUB_PROPS));
    const [f, b] = await deliveries.race(arrival, 'POST', '/v2/sub',
      () => h.onEvent(h.event(SUB, 'Update', SUB_PROPS_B, { PhysicalResourceId: made.PhysicalResourceId, OldResourceProperties: old(SUB_PROPS) })),
      () => h.onEvent(h.event(SUB, 'Update', SUB_PROPS, { PhysicalResourceId: made.PhysicalResourceId, OldResourceProperties: old(SUB_PROPS_B) })));
    h.logs.length = 0;
    expect(b).toMatchObject({ status: 'fulfilled', value: { PhysicalResourceId: made.PhysicalResourceId } });
    // CloudFormation never learns the forward Update's answer: a subscription it made is never deleted by CloudFormation.
    expect({ forward: f.status, active: activeMade().map((s) => String(s.id)) })
      .toEqual({ forward: expect.anything(), active: [made.PhysicalResourceId] });
    unchanged(other);
  });
});

describe('4. an earlier operation\'s record and a newer cancelled Create of the same key', () => {
  test('4a: earlier deploy made X (3001/362, kept); a newer Create for 3002/365 is cancelled: X stays, the new one ends', async () => {
    const other = await bystander();
    const x = await h.onEvent(h.event(SUB, 'Create', SUB_PROPS));
    const [, d] = await deliveries.race(ARRIVALS[1], 'POST', '/v2/sub',
      () => h.onEvent(h.event(SUB, 'Create', SUB_PROPS_B)),
      () => h.onEvent(h.event(SUB, 'Delete', SUB_PROPS_B, { PhysicalResourceId: INVENTED })));
    expect(d.status).toBe('fulfilled');
    expect(subOf(x.PhysicalResourceId).status).toBe('active');
    expect(activeMade().map((s) => String(s.id))).toEqual([x.PhysicalResourceId]);
    unchanged(other);
  });

  test('4b: earlier deploy made X; a newer Create of the same product/identity with another Name takes X over and is cancelled: X is ended', async () => {
    const other = await bystander();
    const x = await h.onEvent(h.event(SUB, 'Create', SUB_PROPS));
    const c = await h.onEvent(h.event(SUB, 'Create', { ...SUB_PROPS, Name: 'Orders2' }));
    expect(c.PhysicalResourceId).toBe(x.PhysicalResourceId); // pre-existing: a Create reuses the key's active record
    await h.onEvent(h.event(SUB, 'Delete', SUB_PROPS, { PhysicalResourceId: INVENTED }));
    // The earlier deploy's subscription is ended by the cancellation of a later Create that only renamed it.
    expect(subOf(x.PhysicalResourceId).status).toBe('active');
    unchanged(other);
  });

  test('4c: a cancelled adopting Create of a subscription made outside the stack: it is released, never ended', async () => {
    const other = await bystander();
    await h.onEvent(h.event(SUB, 'Create', { ...SUB_PROPS, AdoptId: other.id }));
    await h.onEvent(h.event(SUB, 'Delete', SUB_PROPS, { PhysicalResourceId: INVENTED }));
    expect(subOf(other.id).status).toBe('active');
  });
});

describe('5. the wait bound', () => {
  test('5a: a Delete that cannot outwait a slow Create fails clearly, changing nothing; a retry (new RequestId) converges', async () => {
    const other = await bystander();
    // The handler's clock moves with its sleeps: the Delete's wait for the lease takes no real time.
    h.clock = Date.now();
    h.onSleep = () => delay(2);
    const [, first] = await deliveries.race(ON_THE_WIRE, 'POST', '/v2/sub', () => h.onEvent(h.event(SUB, 'Create', SUB_PROPS)), async () => {
      await h.clearRequests();
      // remaining 76 s: deadline t+61 s, it stops waiting 60 s before it.
      return h.onEvent(h.event(SUB, 'Delete', SUB_PROPS, { PhysicalResourceId: INVENTED }), 76_000);
    }, 'the second settles');
    expect(first.status === 'rejected' ? String(first.reason) : 'fulfilled').toMatch(/still running.*retry then \(nothing was changed\)/);
    await h.onEvent(h.event(SUB, 'Delete', SUB_PROPS, { PhysicalResourceId: INVENTED }));
    expect(activeMade()).toEqual([]);
    expect(await liveRecords()).toEqual([]);
    unchanged(other);
  });

  test.each(['new', 'same'])('5b: the cancellation Delete fails ending what the Create made; its retry (%s RequestId) ends it', async (which) => {
    const other = await bystander();
    const made = await h.onEvent(h.event(SUB, 'Create', SUB_PROPS)); // answer lost to CloudFormation (it stopped waiting)
    await h.admin('POST', '/faults', { method: 'PATCH', pathPrefix: `/v2/sub/${made.PhysicalResourceId}`, status: 409, count: 1 });
    const del = h.event(SUB, 'Delete', SUB_PROPS, { PhysicalResourceId: INVENTED });
    const first = await h.onEvent(del).then(() => 'fulfilled', (e) => String(e));
    expect(first).not.toBe('fulfilled');
    // continue-update-rollback sends a new Delete (new RequestId); Lambda's async retry / the framework re-invoke keep it.
    const retry = which === 'new' ? h.event(SUB, 'Delete', SUB_PROPS, { PhysicalResourceId: INVENTED }) : del;
    await h.onEvent(retry);
    expect(subOf(made.PhysicalResourceId).status).toBe('invalid');
    expect(await liveRecords()).toEqual([]);
    unchanged(other);
  });
  test('5c: a duplicate delivery of a Create (framework re-invoke) gives up waiting and fails: nothing may stay (CREATE_FAILED marker -> Delete ignored)', async () => {
    const other = await bystander();
    const ev = h.event(SUB, 'Create', SUB_PROPS);
    // The framework's first invoke errored (its answer lost): the re-invoke's answer is the one CloudFormation gets.
    h.clock = Date.now();
    h.onSleep = () => delay(2);
    const [, second] = await deliveries.race(ON_THE_WIRE, 'POST', '/v2/sub', () => h.onEvent(ev), () => h.onEvent(ev, 76_000), 'the second settles');
    const dup = second.status === 'fulfilled' ? `fulfilled ${second.value.PhysicalResourceId}` : `rejected ${String(second.reason).slice(0, 120)}`;
    // framework.js safeHandler: a failed Create answers CREATE_FAILED_PHYSICAL_ID_MARKER; its rollback Delete never reaches the handler.
    expect({ dup, active: activeMade().map((s) => String(s.id)) }).toEqual({ dup: expect.stringMatching(/^rejected/), active: [] });
    unchanged(other);
  });
});

describe('6. other', () => {
  test('6a: HistoryRequest: a Create cancelled while isComplete polls (the Delete has an invented ID): the request is cancelled', async () => {
    const subId = await h.subscribe(3001, 362, { marketplace_id: 'ATVPDKIKX0DER' });
    const props = { SubscriptionId: subId, StartDate: daysAgo(10), EndDate: daysAgo(5), StageId: '1000', WaitForCompletion: 'true', TimeoutSeconds: '600' };
    const ev = h.event(HIST, 'Create', props);
    const r = await h.onEvent(ev);
    expect(await h.isComplete({ ...ev, PhysicalResourceId: r.PhysicalResourceId, Data: r.Data })).toEqual({ IsComplete: false });
    await h.onEvent(h.event(HIST, 'Delete', props, { PhysicalResourceId: INVENTED }));
    const hr = h.state().history.find((x: any) => String(x.id) === r.PhysicalResourceId);
    expect(hr.status).toMatch(/cancel/);
  });

  test('6b: a lease item without `version` (hand-restored / older writer): take() must not spin', async () => {
    await h.onEvent(h.event(SUB, 'Create', SUB_PROPS)); // table exists
    const c = ddbClient();
    await c.send(new PutItemCommand({
      TableName: h.journalTable,
      Item: { pk: { S: `lease#${KEY}` }, sk: { S: 'lease' }, requestId: { S: 'r0' }, requestType: { S: 'Delete' }, since: { S: new Date(0).toISOString() } },
    }));
    c.destroy();
    const ev = h.event(SUB, 'Delete', SUB_PROPS, { PhysicalResourceId: '9001' });
    const out = await Promise.race([h.onEvent(ev).then(() => 'done', (e) => `failed: ${String(e)}`), delay(8000).then(() => 'still spinning after 8 s')]);
    // Let the spinning invocation out (the item removed), so that the harness can stop.
    const c2 = ddbClient();
    await c2.send(new DeleteItemCommand({ TableName: h.journalTable, Key: { pk: { S: `lease#${KEY}` }, sk: { S: 'lease' } } }));
    c2.destroy();
    await delay(500);
    expect(out).not.toBe('still spinning after 8 s');
  });

  test('6c: journal scan (dpi journal, orphans) does not see lease items as records', async () => {
    await h.onEvent(h.event(SUB, 'Create', SUB_PROPS));
    const j = dynamoJournal({ create: true, table: h.journalTable, endpoint: h.journal.endpoint, sleep: async () => undefined });
    const s = await j.scan();
    expect(s.records.map((r) => r.key)).toEqual([KEY]);
    expect((await h.journalItems()).some((i) => i.pk.startsWith('lease#'))).toBe(true);
  });
});
