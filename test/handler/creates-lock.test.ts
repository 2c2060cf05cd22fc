/**
 * The creates locks (src/handler/journal-locks.ts, src/handler/creates-lock.ts, src/handler/creates.ts): a
 * subscription create whose lists are narrowed to its identity locks only that identity's creates, so a fleet's creates
 * of one product run at once; a lost answer's candidate is taken only where the service shows that it narrows the list
 * to the identity. What the service is learned to do: test/handler/narrowing.test.ts.
 */
import { AttributeValue, DynamoDBClient, PutItemCommand } from '@aws-sdk/client-dynamodb';
import { ATTRS, ignoringFilter, journal, learnYes, lockItems, ORDERS, STALE, SUB, subOf, useCreatesLockHarness, WAITING } from './creates-lock-helpers';
import { HandlerHarness, TEST_READS } from './helpers';
import { DpiClient, ServiceError, Subscription } from '../../src/client';
import { createRecordedSubscription } from '../../src/handler/creates';
import { JournalRecord } from '../../src/handler/journal';
import { NO_IDENTITY, WITNESS_AGE_MS } from '../../src/handler/narrowing';
import { Runtime } from '../../src/handler/runtime';

let h: HandlerHarness;
useCreatesLockHarness((started) => {
  h = started;
});

describe('the journal\'s creates locks: the whole kind and its parts', () => {
  test('parts of one kind are held at once; the whole waits for them and, once written, keeps new parts out', async () => {
    const j = journal();
    await h.onEvent(h.event(SUB, 'Create', { ...ORDERS, Name: 'warm-up' }, { LogicalResourceId: 'WarmUp' }));
    expect(await j.lock('sub#3001', 'S/A|1', STALE, '362')).toBeUndefined();
    expect(await j.lock('sub#3001', 'S/B|1', STALE, '364')).toBeUndefined();
    // The same part is one create at a time.
    expect(await j.lock('sub#3001', 'S/C|1', STALE, '362')).toEqual(expect.objectContaining({ member: 'S/A|1' }));
    // The whole names a part in flight and stays written.
    expect((await j.lock('sub#3001', 'S/W|1', STALE))?.member).toMatch(/^S\/[AB]\|1$/);
    expect(await lockItems()).toEqual(['inflight#sub#3001 lock', 'inflight#sub#3001 lock#362', 'inflight#sub#3001 lock#364']);
    // A part that comes after it withdraws, leaving nothing behind.
    expect(await j.lock('sub#3001', 'S/D|1', STALE, '999')).toEqual(expect.objectContaining({ member: 'S/W|1' }));
    expect(await lockItems()).not.toContain('inflight#sub#3001 lock#999');
    await j.unlock('sub#3001', 'S/A|1', '362');
    expect((await j.lock('sub#3001', 'S/W|1', STALE))?.member).toBe('S/B|1');
    await j.unlock('sub#3001', 'S/B|1', '364');
    expect(await j.lock('sub#3001', 'S/W|1', STALE)).toBeUndefined();
    await j.unlock('sub#3001', 'S/W|1');
    expect(await j.lock('sub#3001', 'S/D|1', STALE, '999')).toBeUndefined();
  });

  test('a resource\'s own part never holds up its whole; stale and planted parts do not hold it up and are removed', async () => {
    const j = journal();
    await h.onEvent(h.event(SUB, 'Create', { ...ORDERS, Name: 'warm-up' }, { LogicalResourceId: 'WarmUp' }));
    expect(await j.lock('sub#3001', 'S/Old|1', STALE, '362')).toBeUndefined();
    expect(await j.lock('sub#3001', 'S/Mine|1', STALE, '364')).toBeUndefined();
    expect(await j.lock('sub#3001', 'S/Mine|2', STALE)).toEqual(expect.objectContaining({ member: 'S/Old|1' }));
    await j.unlock('sub#3001', 'S/Old|1', '362');
    expect(await j.lock('sub#3001', 'S/Mine|2', STALE)).toBeUndefined();
    await j.unlock('sub#3001', 'S/Mine|2');
    await j.unlock('sub#3001', 'S/Mine|1', '364');
    // A part whose time is far ahead (planted) or unreadable is stale; a whole that reads stale parts removes them.
    const raw = new DynamoDBClient({ endpoint: h.journal.endpoint, region: 'us-east-1', credentials: { accessKeyId: 'local', secretAccessKey: 'local' } });
    for (const [part, startedAt] of [['1', '9999-01-01T00:00:00.000Z'], ['2', '~'], ['3', '2001-01-01T00:00:00.000Z']]) {
      await raw.send(new PutItemCommand({
        TableName: h.journalTable,
        Item: { pk: { S: 'inflight#sub#3001' }, sk: { S: `lock#${part}` }, member: { S: `S/Planted${part}|1` }, startedAt: { S: startedAt } },
      }));
    }
    expect(await j.lock('sub#3001', 'S/W|1', new Date(Date.now() - 60_000).toISOString())).toBeUndefined();
    await j.unlock('sub#3001', 'S/W|1');
    expect(await lockItems()).toEqual([]);
    // Nor does a planted whole hold up a part.
    await raw.send(new PutItemCommand({
      TableName: h.journalTable,
      Item: { pk: { S: 'inflight#sub#3001' }, sk: { S: 'lock' }, member: { S: 'S/Planted|1' }, startedAt: { S: '9999-01-01T00:00:00.000Z' } },
    }));
    expect(await j.lock('sub#3001', 'S/P|1', new Date(Date.now() - 60_000).toISOString(), '362')).toBeUndefined();
    raw.destroy();
  });
});


describe('a create waits only for creates of its own identity', () => {
  test('another resource\'s create of identity 362 in flight holds up a create of 362, not one of 364; the whole product holds up both', async () => {
    const j = journal();
    // The creates learn that the service narrows its lists to an identity (a list of identity 0, twice a minute apart).
    await learnYes(j);
    expect(await j.lock('sub#3001', 'HandlerTest/Other|2026-11-24T00:00:00.000Z#live', STALE, '362')).toBeUndefined();
    const of364 = await h.onEvent(h.event(SUB, 'Create', { ...ORDERS, RemoteIdentityId: '364', ProductParameters: { marketplace_id: 'A1AM78C64UM0Y8' } },
      { LogicalResourceId: 'Mx' }), 70_000);
    expect(subOf(of364.PhysicalResourceId).remote_identity).toBe(364);
    expect(h.logs.join('\n')).not.toContain(WAITING);
    const reason = await h.onEvent(h.event(SUB, 'Create', ORDERS, { LogicalResourceId: 'Us' }), 70_000).then(() => 'created', (e: Error) => e.message);
    expect(reason).toContain('another product-3001 subscription create (HandlerTest/Other');
    // The whole product's lock (an attempt that listed the whole product) holds up every identity.
    await j.unlock('sub#3001', 'HandlerTest/Other|2026-11-24T00:00:00.000Z#live', '362');
    expect(await j.lock('sub#3001', 'HandlerTest/Whole|2026-11-24T00:00:00.000Z#live', STALE)).toBeUndefined();
    const held = await h.onEvent(h.event(SUB, 'Create', { ...ORDERS, RemoteIdentityId: '364', ProductParameters: { marketplace_id: 'A1AM78C64UM0Y8' } },
      { LogicalResourceId: 'Mx2' }), 70_000).then(() => 'created', (e: Error) => e.message);
    expect(held).toContain('another product-3001 subscription create (HandlerTest/Whole');
    // Giving up leaves no part of its own behind.
    expect(await lockItems()).toEqual(['inflight#sub#3001 lock']);
  });

  test('creates of two identities at once, both answers lost: neither waits, each gets its own, the narrowing is shown by a list of no identity', async () => {
    await learnYes(journal());
    h.logs.length = 0;
    await h.admin('POST', '/faults', { method: 'POST', pathPrefix: '/v2/sub', dropResponse: true, count: 2 });
    await h.clearRequests();
    const [us, mx] = await Promise.all([
      h.onEvent(h.event(SUB, 'Create', ORDERS, { LogicalResourceId: 'Us' })),
      h.onEvent(h.event(SUB, 'Create', { ...ORDERS, RemoteIdentityId: '364', ProductParameters: { marketplace_id: 'A1AM78C64UM0Y8' } }, { LogicalResourceId: 'Mx' })),
    ]);
    expect(subOf(us.PhysicalResourceId).remote_identity).toBe(362);
    expect(subOf(mx.PhysicalResourceId).remote_identity).toBe(364);
    expect(await h.journalOwner('sub', us.PhysicalResourceId)).toBe('HandlerTest/Us');
    expect(await h.journalOwner('sub', mx.PhysicalResourceId)).toBe('HandlerTest/Mx');
    // The three warm-ups' and these two.
    expect(h.state().subscriptions.filter((s: any) => s.product === 3001 && s.account === 1001 && s.status === 'active')).toHaveLength(5);
    expect(h.logs.join('\n')).not.toContain(WAITING);
    const lists = (await h.requests()).filter((r) => r.method === 'GET' && r.path === '/v2/sub').map((r) => r.query.remote_identity);
    // Where the reads show no identity (the spec's), each resolution asks for the list of no identity; the vendor's show it.
    expect(lists.filter((x) => x === NO_IDENTITY)).toHaveLength(TEST_READS === 'minimal' ? 2 : 0);
    // Each read a minute after its candidates were listed (the fake sleep), when no list lags behind them.
    expect(h.slept.filter((ms) => ms === WITNESS_AGE_MS)).toHaveLength(TEST_READS === 'minimal' ? 2 : 0);
    expect(await lockItems()).toEqual([]);
  });
});


describe('a lost answer is resolved only where the service narrows the list to the identity', () => {
  /** A create of identity 364 under its identity's lock (the journal says the service narrows: `narrows#service`). */
  const run = async (filters: boolean): Promise<{ outcome: string; posts: number; rec: JournalRecord<any> }> => {
    const j = journal();
    await h.onEvent(h.event(SUB, 'Create', { ...ORDERS, Name: 'warm-up' }, { LogicalResourceId: 'WarmUp' }));
    await j.setFact('sub#3001', 'narrows#service', 'yes');
    // The service holds identity 362's subscription 9500 made by another resource's create that ran at the same time
    // (its outcome not claimed yet); this resource's POST, for identity 364, makes nothing and its answer is lost.
    const subs: Subscription[] = [];
    let posts = 0;
    const client = ignoringFilter(subs, {
      create: async () => {
        posts++;
        if (posts === 1) {
          subs.push({ id: '9500', status: 'active', product: 3001, remote_identity: 362 });
          throw new TypeError('fetch failed');
        }
        const made = { id: String(9600 + posts), status: 'active' as const, product: 3001, remote_identity: 364 };
        subs.push(made);
        return made;
      },
    }, filters);
    const rt = { client, journal: j, deadline: Date.now() + 600_000, sleep: async () => undefined } as unknown as Runtime;
    const rec = await j.create<any>('HandlerTest/Mx', 'new', { product: 3001, identity: '364' });
    const outcome = await createRecordedSubscription(rt, rec, { account: 1001, user: 2001, product: 3001, remote_identity: 364, date_start: '2026-11-29T00:00:00Z' },
      'abandoned', () => true).then((r) => `created ${r.physicalId}`, (e: Error) => e.message);
    return { outcome, posts, rec: (await j.records<any>('HandlerTest/Mx'))[0] };
  };

  test('a service that answers every identity\'s subscriptions (a planted or wrong fact): the other identity\'s new one is named, never taken', async () => {
    const { outcome, posts, rec } = await run(false);
    expect(outcome).toContain('subscription(s) 9500 appeared since in the list of identity 364');
    expect(outcome).toContain('none is taken or changed');
    expect(posts).toBe(1);
    expect(rec.state).toBe('recording');
    expect(await h.journalOwner('sub', '9500')).toBeUndefined();
    // Unlearned: the journal now says the service does not narrow (for an hour), so creates take the product's lock.
    expect(await journal().fact('sub#3001', 'narrows#service')).toMatch(/^no:\d+$/);
  });

  test('an attempt sent under its identity\'s lock is resolved the same way under the product\'s lock (the fact gone meanwhile)', async () => {
    const j = journal();
    await h.onEvent(h.event(SUB, 'Create', { ...ORDERS, Name: 'warm-up' }, { LogicalResourceId: 'WarmUp' }));
    const subs: Subscription[] = [{ id: '9400', status: 'active', product: 3001, remote_identity: 364 }];
    const client = ignoringFilter(subs, { create: async () => ({ id: '9999', status: 'active' }) }, false);
    const rt = { client, journal: j, deadline: Date.now() + 600_000, sleep: async () => undefined } as unknown as Runtime;
    const made = await j.create<any>('HandlerTest/Mx', 'new', { product: 3001, identity: '364' });
    const rec = await j.save<any>(made, 'recording', {
      product: 3001, identity: '364', attempt: { product: 3001, identity: '364', identityBefore: ['9400'], lock: 'identity', startedAt: new Date().toISOString() },
    });
    // Identity 362's create, which ran beside it, made 9500 and has not claimed it yet.
    subs.push({ id: '9500', status: 'active', product: 3001, remote_identity: 362 });
    const outcome = await createRecordedSubscription(rt, rec, { account: 1001, user: 2001, product: 3001, remote_identity: 364, date_start: '2026-11-29T00:00:00Z' },
      'abandoned', () => true).then((r) => `created ${r.physicalId}`, (e: Error) => e.message);
    expect(outcome).toContain('subscription(s) 9500 appeared since in the list of identity 364');
    expect(await h.journalOwner('sub', '9500')).toBeUndefined();
  });

  test('a service that narrows the list: the other identity\'s subscription is not in it, so nothing was made and the POST is sent again', async () => {
    const { outcome, posts, rec } = await run(true);
    expect(outcome).toBe('created 9602');
    expect(posts).toBe(2);
    expect(rec.state).toBe('active');
    expect(await h.journalOwner('sub', '9500')).toBeUndefined();
  });
});

describe('a create\'s lock, its wait and its identity', () => {
  test('a lock with no time, or a time that is no time, holds up nothing and is removed', async () => {
    const j = journal();
    await h.onEvent(h.event(SUB, 'Create', { ...ORDERS, Name: 'warm-up' }, { LogicalResourceId: 'WarmUp' }));
    const raw = new DynamoDBClient({ endpoint: h.journal.endpoint, region: 'us-east-1', credentials: { accessKeyId: 'local', secretAccessKey: 'local' } });
    const plant = (sk: string, startedAt?: AttributeValue): Promise<unknown> => raw.send(new PutItemCommand({
      TableName: h.journalTable,
      Item: { pk: { S: 'inflight#sub#3001' }, sk: { S: sk }, member: { S: `S/Planted-${sk}|1` }, ...(startedAt ? { startedAt } : {}) },
    }));
    const soon = new Date(Date.now() + 1000).toISOString();
    const times: Array<AttributeValue | undefined> = [undefined, { N: '1' }, { S: `${soon}~` }];
    for (const t of times) {
      await plant('lock', t);
      await plant('lock#362', t);
      expect(await j.lock('sub#3001', 'S/W|1', STALE)).toBeUndefined();
      await j.unlock('sub#3001', 'S/W|1');
      expect(await lockItems()).toEqual([]);
    }
    raw.destroy();
  });

  test('a wait for the rate limit past the deadline while showing the narrowing continues the event (it is no refusal)', async () => {
    const j = journal();
    await h.onEvent(h.event(SUB, 'Create', { ...ORDERS, Name: 'warm-up' }, { LogicalResourceId: 'WarmUp' }));
    await j.setFact('sub#3001', 'narrows#service', 'yes');
    const subs: Subscription[] = [];
    const client = {
      subscriptions: {
        list: async (q: { remoteIdentity?: string | number } = {}) => {
          if (String(q.remoteIdentity) === NO_IDENTITY) {
            throw new ServiceError({ message: 'turn after the deadline', method: 'GET', path: '/v2/sub', retryable: true, waitPastDeadline: true });
          }
          return subs.map((s) => ({ id: s.id, status: s.status }));
        },
        create: async () => {
          subs.push({ id: '9800', status: 'active', product: 3001, remote_identity: 364 });
          throw new TypeError('fetch failed');
        },
      },
      withDeadline() {
        return this;
      },
    } as unknown as DpiClient;
    const rt = { client, journal: j, deadline: Date.now() + 600_000, sleep: async () => undefined, continues: true } as unknown as Runtime;
    const rec = await j.create<any>('HandlerTest/Mx', 'new', { product: 3001, identity: '364' });
    const err = await createRecordedSubscription(rt, rec, ATTRS, 'abandoned', () => true).then(() => undefined, (e: unknown) => e);
    expect(err).toBeInstanceOf(ServiceError);
    expect((err as ServiceError).waitPastDeadline).toBe(true);
    expect((await j.records<any>('HandlerTest/Mx'))[0].state).toBe('recording');
  });

  test('a POST sent and not resolved keeps its lock: another create waits, the resource\'s next event takes it over and resolves', async () => {
    const j = journal();
    await h.onEvent(h.event(SUB, 'Create', { ...ORDERS, Name: 'warm-up' }, { LogicalResourceId: 'WarmUp' }));
    const subs: Subscription[] = [];
    let listsRefused = false;
    const client = {
      subscriptions: {
        list: async () => {
          if (listsRefused) throw new ServiceError({ message: 'turn after the deadline', method: 'GET', path: '/v2/sub', retryable: true, waitPastDeadline: true });
          return subs.map((x) => ({ id: x.id, status: x.status }));
        },
        create: async () => {
          // The answer is lost; nothing was made; the list after it must wait past the deadline.
          listsRefused = true;
          throw new TypeError('fetch failed');
        },
      },
      withDeadline() {
        return this;
      },
    } as unknown as DpiClient;
    const rt = { client, journal: j, deadline: Date.now() + 600_000, sleep: async () => undefined, continues: true } as unknown as Runtime;
    const rec = await j.create<any>('HandlerTest/A', 'new', { product: 3001, identity: '364' });
    const err = await createRecordedSubscription(rt, rec, ATTRS, 'abandoned', () => true).then(() => undefined, (e: unknown) => e);
    expect((err as ServiceError).waitPastDeadline).toBe(true);
    const [recording] = await j.records<any>('HandlerTest/A');
    expect(recording.state).toBe('recording');
    // The lock stays: another resource's create of the product (the service is not known to narrow) waits for it.
    expect((await j.lock('sub#3001', 'HandlerTest/B|r-1', STALE))?.member).toBe(`HandlerTest/A|${recording.id}`);
    // The resource's continuation takes it over, finds nothing made, sends again and releases it.
    listsRefused = false;
    const client2 = ignoringFilter(subs, {
      create: async () => {
        const made = { id: '9950', status: 'active' as const };
        subs.push(made);
        return made;
      },
    }, false);
    expect((await createRecordedSubscription({ ...rt, client: client2 } as Runtime, recording, ATTRS, 'abandoned', () => true)).physicalId).toBe('9950');
    expect(await j.lock('sub#3001', 'HandlerTest/B|r-1', STALE)).toBeUndefined();
  });

  test('identity 0, or one that is not a positive integer, takes the product\'s lock and teaches nothing', async () => {
    const j = journal();
    await h.onEvent(h.event(SUB, 'Create', { ...ORDERS, Name: 'warm-up' }, { LogicalResourceId: 'WarmUp' }));
    await j.setFact('sub#3001', 'narrows#service', 'yes');
    expect(await j.lock('sub#3001', 'HandlerTest/Other|r-1', STALE, '0')).toBeUndefined();
    const client = ignoringFilter([], { create: async () => ({ id: '9960', status: 'active' }) }, true);
    const rt = { client, journal: j, deadline: Date.now() + 600_000, sleep: async () => undefined } as unknown as Runtime;
    for (const [i, identity] of ['000', '-0', ' '].entries()) {
      const rec = await j.create<any>(`HandlerTest/Z${i}`, 'new', { product: 3001 });
      // The product's lock: the other resource's part for identity 0 holds it up.
      const attrs = { ...ATTRS, remote_identity: identity as unknown as number };
      const reason = await createRecordedSubscription({ ...rt, deadline: Date.now() + 61_500 } as Runtime, rec, attrs, 'abandoned', () => true)
        .then(() => 'created', (e: Error) => e.message);
      expect(reason).toContain('another product-3001 subscription create (HandlerTest/Other');
    }
  });

  test('one identity written two ways (\'042\' and \'42\') is one lock, one list filter and one attempt', async () => {
    const j = journal();
    await h.onEvent(h.event(SUB, 'Create', { ...ORDERS, Name: 'warm-up' }, { LogicalResourceId: 'WarmUp' }));
    await j.setFact('sub#3001', 'narrows#service', 'yes');
    expect(await j.lock('sub#3001', 'HandlerTest/B|r-1', STALE, '42')).toBeUndefined();
    const asked: string[] = [];
    const client = {
      subscriptions: {
        list: async (q: { remoteIdentity?: string | number } = {}) => {
          asked.push(String(q.remoteIdentity));
          return [];
        },
        create: async () => ({ id: '9900', status: 'active' }),
      },
      withDeadline() {
        return this;
      },
    } as unknown as DpiClient;
    const rt = { client, journal: j, deadline: Date.now() + 61_500, sleep: async () => undefined } as unknown as Runtime;
    const rec = await j.create<any>('HandlerTest/A', 'new', { product: 3001, identity: '042' });
    const reason = await createRecordedSubscription(rt, rec, { ...ATTRS, remote_identity: ' 042' as unknown as number }, 'abandoned', () => true)
      .then(() => 'created', (e: Error) => e.message);
    expect(reason).toContain('another product-3001 subscription create (HandlerTest/B');
    await j.unlock('sub#3001', 'HandlerTest/B|r-1', '42');
    const done = await createRecordedSubscription({ ...rt, deadline: Date.now() + 600_000 } as Runtime, rec, { ...ATTRS, remote_identity: '042' as unknown as number },
      'abandoned', () => true);
    expect(done.physicalId).toBe('9900');
    expect(asked).toEqual(['42']);
  });
});
