/**
 * What the service is learned to do (src/handler/narrowing.ts): whether it narrows `GET /v2/sub` to an identity, from
 * two observations a minute apart by the judging container's own clock, never from a list that lags or a planted
 * fact; and a lost answer's candidate under an identity's lock, checked against the list of identity 0 only once no
 * list lags behind the POST.
 */
import { DynamoDBClient, PutItemCommand } from '@aws-sdk/client-dynamodb';
import { advance, ATTRS, createAs, ignoringFilter, journal, lockItems, ORDERS, STALE, stubClient, stubRuntime, SUB, useCreatesLockHarness } from './creates-lock-helpers';
import { HandlerHarness } from './helpers';
import { DpiClient, ServiceError, Subscription } from '../../src/client';
import { createRecordedSubscription } from '../../src/handler/creates';
import { NO_IDENTITY, WITNESS_AGE_MS } from '../../src/handler/narrowing';
import { Runtime } from '../../src/handler/runtime';

let h: HandlerHarness;
useCreatesLockHarness((started) => {
  h = started;
});

describe('what the service is learned to do', () => {
  test('a service that ignores the identity filter is not learned to narrow: creates stay one at a time for the product', async () => {
    const j = journal();
    await h.onEvent(h.event(SUB, 'Create', { ...ORDERS, Name: 'warm-up' }, { LogicalResourceId: 'WarmUp' }));
    const subs: Subscription[] = [];
    const client = ignoringFilter(subs, {
      create: async () => {
        const made = { id: String(9700 + subs.length), status: 'active' as const, product: 3001, remote_identity: 364 };
        subs.push(made);
        return made;
      },
    }, false);
    const rt = stubRuntime(client, j, 'https://ignores.example');
    const rec = await j.create<any>('HandlerTest/Mx', 'new', { product: 3001, identity: '364' });
    expect((await createRecordedSubscription(rt, rec, ATTRS, 'abandoned', () => true)).physicalId).toBe('9700');
    expect(await j.fact('sub#3001', 'narrows#https://ignores.example')).toMatch(/^no:\d+$/);
    // The next create of another identity takes the product's lock: a third resource holding identity 362's part holds it up.
    expect(await j.lock('sub#3001', 'HandlerTest/Other|r-1', STALE, '362')).toBeUndefined();
    const second = await j.create<any>('HandlerTest/Us', 'new', { product: 3001, identity: '362' });
    const reason = await createRecordedSubscription({ ...rt, deadline: Date.now() + 61_500 } as Runtime, second, { ...ATTRS, remote_identity: 362 }, 'abandoned', () => true)
      .then(() => 'created', (e: Error) => e.message);
    expect(reason).toContain('another product-3001 subscription create (HandlerTest/Other');
  });

  /**
   * A service that ignores the identity filter, whose list of identity 0 (another replica) lags: it leaves out the
   * newest subscription. `onWitnessList` runs when the list of a first observation's identity is read.
   */
  const laggingReplica = (subs: Subscription[], onWitnessList?: () => Promise<void>): DpiClient => ({
    subscriptions: {
      list: async (q: { remoteIdentity?: string } = {}) => {
        if (q.remoteIdentity === '364' && onWitnessList) await onWitnessList();
        return (q.remoteIdentity === NO_IDENTITY ? subs.slice(0, -1) : subs).map((x) => ({ id: x.id, status: x.status }));
      },
      create: async () => {
        const made = { id: String(9700 + subs.length), status: 'active' as const };
        subs.push(made);
        return made;
      },
    },
    withDeadline() {
      return this;
    },
  }) as unknown as DpiClient;
  test('a list of identity 0 that lags behind the POST teaches no "yes": a minute later it shows the older subscription', async () => {
    const j = journal();
    await h.onEvent(h.event(SUB, 'Create', { ...ORDERS, Name: 'warm-up' }, { LogicalResourceId: 'WarmUp' }));
    const subs: Subscription[] = [];
    const rt = { client: laggingReplica(subs), journal: j, deadline: Date.now() + 600_000, sleep: async () => undefined, serviceOrigin: 'https://replica.example' } as unknown as Runtime;
    const fact = 'narrows#https://replica.example';
    const first = await j.create<any>('HandlerTest/Mx', 'new', { product: 3001, identity: '364' });
    expect((await createRecordedSubscription(rt, first, ATTRS, 'abandoned', () => true)).physicalId).toBe('9700');
    // The list of identity 0 left the new subscription out: only a first observation, no "yes".
    expect(await j.fact('sub#3001', fact)).toMatch(/^seen:\d+:364:9700$/);
    advance(WITNESS_AGE_MS);
    const second = await j.create<any>('HandlerTest/Us', 'new', { product: 3001, identity: '362' });
    expect((await createRecordedSubscription(rt, second, { ...ATTRS, remote_identity: 362 }, 'abandoned', () => true)).physicalId).toBe('9701');
    // It leaves out the newest again, but shows the older one: the service does not narrow.
    expect(await j.fact('sub#3001', fact)).toMatch(/^no:\d+$/);
  });

  test('a list of identity 0 that lags and ignores the filter, beside identities\' lists that narrow: it shows the older subscription, "no"', async () => {
    const j = journal();
    await h.onEvent(h.event(SUB, 'Create', { ...ORDERS, Name: 'warm-up' }, { LogicalResourceId: 'WarmUp' }));
    const subs: Subscription[] = [];
    const client = stubClient({
      list: async (q: { remoteIdentity?: string } = {}) => (q.remoteIdentity === NO_IDENTITY ? subs.slice(0, -1)
        : subs.filter((x) => String(x.remote_identity) === q.remoteIdentity)).map((x) => ({ id: x.id, status: x.status })),
      create: async () => {
        const made = { id: String(9700 + subs.length), status: 'active' as const, remote_identity: subs.length === 0 ? 364 : 362 };
        subs.push(made);
        return made;
      },
    });
    const rt = stubRuntime(client, j, 'https://replica-zero.example');
    const fact = 'narrows#https://replica-zero.example';
    await createAs(rt, j, 'HandlerTest/Mx', '364');
    expect(await j.fact('sub#3001', fact)).toMatch(/^seen:\d+:364:9700$/);
    advance(WITNESS_AGE_MS);
    await createAs(rt, j, 'HandlerTest/Us', '362');
    expect(await j.fact('sub#3001', fact)).toMatch(/^no:\d+$/);
  });

  test('any answer in the list of identity 0, or lists of two identities that share a subscription, is no narrowing', async () => {
    const j = journal();
    await h.onEvent(h.event(SUB, 'Create', { ...ORDERS, Name: 'warm-up' }, { LogicalResourceId: 'WarmUp' }));
    for (const [origin, zero, shared] of [['https://zero-other.example', ['1'], false], ['https://shared.example', [], true]] as const) {
      const subs: Subscription[] = [];
      const client = stubClient({
        // Narrows, but identity 0 answers an unrelated subscription; or identity 362's list also holds one of 364's.
        list: async (q: { remoteIdentity?: string } = {}) => (q.remoteIdentity === NO_IDENTITY ? zero.map((id) => ({ id, status: 'active' }))
          : subs.filter((x) => String(x.remote_identity) === q.remoteIdentity || (shared && q.remoteIdentity === '362' && x.id === '9800'))
            .map((x) => ({ id: x.id, status: x.status }))),
        create: async () => {
          const made = { id: String((shared ? 9800 : 9700) + subs.length), status: 'active' as const, remote_identity: subs.length === 0 ? 364 : 362 };
          subs.push(made);
          return made;
        },
      });
      const rt = stubRuntime(client, j, origin);
      await createAs(rt, j, `HandlerTest/A-${origin}`, '364');
      if (zero.length > 0) {
        expect(await j.fact('sub#3001', `narrows#${origin}`)).toMatch(/^no:\d+$/);
        continue;
      }
      expect(await j.fact('sub#3001', `narrows#${origin}`)).toMatch(/^seen:\d+:364:9800$/);
      advance(WITNESS_AGE_MS);
      await createAs(rt, j, `HandlerTest/B-${origin}`, '362');
      // 9800 (364's) is in 362's own list: "no".
      expect(await j.fact('sub#3001', `narrows#${origin}`)).toMatch(/^no:\d+$/);
    }
  });

  test('an identity\'s list that shows the other identity\'s new subscription is no narrowing', async () => {
    const j = journal();
    await h.onEvent(h.event(SUB, 'Create', { ...ORDERS, Name: 'warm-up' }, { LogicalResourceId: 'WarmUp' }));
    const subs: Subscription[] = [];
    const client = stubClient({
      // 364's list narrows, except that it also shows 362's newest (9701).
      list: async (q: { remoteIdentity?: string } = {}) => (q.remoteIdentity === NO_IDENTITY ? []
        : subs.filter((x) => String(x.remote_identity) === q.remoteIdentity || (q.remoteIdentity === '364' && x.id === '9701')))
        .map((x) => ({ id: x.id, status: x.status })),
      create: async () => {
        const made = { id: String(9700 + subs.length), status: 'active' as const, remote_identity: subs.length === 0 ? 364 : 362 };
        subs.push(made);
        return made;
      },
    });
    const rt = stubRuntime(client, j, 'https://shares.example');
    await createAs(rt, j, 'HandlerTest/Mx', '364');
    advance(WITNESS_AGE_MS);
    await createAs(rt, j, 'HandlerTest/Us', '362');
    expect(await j.fact('sub#3001', 'narrows#https://shares.example')).toMatch(/^no:\d+$/);
  });

  test('an observation whose subscription reads as gone, ended or another identity\'s teaches nothing, however its lists look; a paused one does', async () => {
    const j = journal();
    await h.onEvent(h.event(SUB, 'Create', { ...ORDERS, Name: 'warm-up' }, { LogicalResourceId: 'WarmUp' }));
    const reads: Array<() => Promise<Subscription>> = [
      async () => { throw new ServiceError({ message: 'not found', method: 'GET', path: '/v2/sub/9700', status: 404 }); },
      async () => ({ id: '9700', status: 'invalid' }),
      async () => ({ id: '9700', status: 'active', remote_identity: 999 }),
      // Paused (a create that declares it paused): still there, "yes".
      async () => ({ id: '9700', status: 'paused' }),
    ];
    for (const [i, read] of reads.entries()) {
      const origin = `https://gone-${i}.example`;
      const subs: Subscription[] = [];
      const client = stubClient({
        list: async (q: { remoteIdentity?: string } = {}) => (q.remoteIdentity === NO_IDENTITY ? []
          : subs.filter((x) => String(x.remote_identity) === q.remoteIdentity)).map((x) => ({ id: x.id, status: x.status })),
        create: async () => {
          const made = { id: String(9700 + 10 * i + subs.length), status: 'active' as const, remote_identity: subs.length === 0 ? 364 : 362 };
          subs.push(made);
          return made;
        },
        get: read,
      });
      const rt = stubRuntime(client, j, origin);
      await createAs(rt, j, `HandlerTest/Mx${i}`, '364');
      advance(WITNESS_AGE_MS);
      await createAs(rt, j, `HandlerTest/Us${i}`, '362');
      // Replaced by the newer observation (362's), never "yes"; a paused one teaches it.
      expect(await j.fact('sub#3001', `narrows#${origin}`)).toMatch(i === 3 ? /^yes$/ : new RegExp(`^seen:\\d+:362:${9701 + 10 * i}$`));
    }
  });

  test('one create per container: a create that waited a minute for the product\'s lock judges the observation it read while waiting', async () => {
    const j = journal();
    const fact = `narrows#${h.emu.url}`;
    await h.onEvent(h.event(SUB, 'Create', { ...ORDERS, Name: 'warm-up' }, { LogicalResourceId: 'WarmUp' }));
    expect(await j.fact('sub#3001', fact)).toMatch(/^seen:\d+:362:\d+$/);
    // Another resource's create holds the product's lock; a new container's create of 364 waits for it for a minute.
    expect(await j.lock('sub#3001', 'HandlerTest/Other|r-1', STALE)).toBeUndefined();
    h.configure();
    let waited = 0;
    h.onSleep = async (ms) => {
      advance(ms);
      waited += ms;
      if (waited >= WITNESS_AGE_MS) await j.unlock('sub#3001', 'HandlerTest/Other|r-1');
    };
    await h.clearRequests();
    await h.onEvent(h.event(SUB, 'Create', { ...ORDERS, Name: 'waiter', RemoteIdentityId: '364', ProductParameters: { marketplace_id: 'A1AM78C64UM0Y8' } },
      { LogicalResourceId: 'Waiter' }));
    expect(waited).toBeGreaterThanOrEqual(WITNESS_AGE_MS);
    expect(await j.fact('sub#3001', fact)).toBe('yes');
  });

  test('a service that answers identity 0 with nothing but ignores the filter otherwise teaches no "yes": another identity\'s list shows the older one', async () => {
    const j = journal();
    await h.onEvent(h.event(SUB, 'Create', { ...ORDERS, Name: 'warm-up' }, { LogicalResourceId: 'WarmUp' }));
    const subs: Subscription[] = [];
    const client = stubClient({
      list: async (q: { remoteIdentity?: string } = {}) =>
        (q.remoteIdentity === NO_IDENTITY ? [] : subs.map((x) => ({ id: x.id, status: x.status }))),
      create: async () => {
        const made = { id: String(9700 + subs.length), status: 'active' as const };
        subs.push(made);
        return made;
      },
    });
    const rt = stubRuntime(client, j, 'https://zero-empty.example');
    const fact = 'narrows#https://zero-empty.example';
    await createAs(rt, j, 'HandlerTest/Mx', '364');
    expect(await j.fact('sub#3001', fact)).toMatch(/^seen:\d+:364:9700$/);
    advance(WITNESS_AGE_MS);
    await createAs(rt, j, 'HandlerTest/Us', '362');
    expect(await j.fact('sub#3001', fact)).toMatch(/^no:\d+$/);
  });

  test('a planted first observation teaches nothing: one whose subscription its identity\'s list does not show, or with a time ahead, is replaced', async () => {
    const j = journal();
    await h.onEvent(h.event(SUB, 'Create', { ...ORDERS, Name: 'warm-up' }, { LogicalResourceId: 'WarmUp' }));
    const fact = `narrows#${h.emu.url}`;
    const create364 = (name: string, marketplace: string): Promise<{ PhysicalResourceId: string }> => h.onEvent(h.event(SUB, 'Create',
      { ...ORDERS, Name: name, RemoteIdentityId: '364', ProductParameters: { marketplace_id: marketplace } }, { LogicalResourceId: name }));
    // Its time says it is old; this container has only just read it: judged a minute later, then replaced.
    await j.setFact('sub#3001', fact, 'seen:1000:362:424242');
    h.configure();
    await create364('PlantedA', 'A1AM78C64UM0Y8');
    expect(await j.fact('sub#3001', fact)).toBe('seen:1000:362:424242');
    advance(WITNESS_AGE_MS);
    const made = await create364('PlantedB', 'A2EUQ1WTGCTBG2');
    expect(await j.fact('sub#3001', fact)).toMatch(new RegExp(`^seen:\\d+:364:${made.PhysicalResourceId}$`));
    // A time further ahead than the clocks may disagree: no observation, replaced at once.
    await j.setFact('sub#3001', fact, `seen:${Date.now() + 3_600_000}:362:9001`);
    h.configure();
    const next = await create364('PlantedC', 'ATVPDKIKX0DER');
    expect(await j.fact('sub#3001', fact)).toMatch(new RegExp(`^seen:\\d+:364:${next.PhysicalResourceId}$`));
  });

  test('"yes" is written only over the observation it judged: a "no" written meanwhile by another container stays', async () => {
    const j = journal();
    await h.onEvent(h.event(SUB, 'Create', { ...ORDERS, Name: 'warm-up' }, { LogicalResourceId: 'WarmUp' }));
    const fact = 'narrows#https://narrows.example';
    const subs: Subscription[] = [];
    let unlearnMeanwhile = false;
    const client = ignoringFilter(subs, {
      create: async () => {
        const made = { id: String(9700 + subs.length), status: 'active' as const, product: 3001, remote_identity: subs.length === 0 ? 364 : 362 };
        subs.push(made);
        return made;
      },
    }, true);
    const list = client.subscriptions.list.bind(client.subscriptions);
    (client.subscriptions as any).list = async (q: { remoteIdentity?: string }) => {
      if (unlearnMeanwhile && q.remoteIdentity === '364') await j.setFact('sub#3001', fact, `no:${Date.now()}`);
      return list(q);
    };
    const rt = stubRuntime(client, j, 'https://narrows.example');
    const first = await j.create<any>('HandlerTest/Mx', 'new', { product: 3001, identity: '364' });
    await createRecordedSubscription(rt, first, ATTRS, 'abandoned', () => true);
    expect(await j.fact('sub#3001', fact)).toMatch(/^seen:\d+:364:9700$/);
    advance(WITNESS_AGE_MS);
    unlearnMeanwhile = true;
    const second = await j.create<any>('HandlerTest/Us', 'new', { product: 3001, identity: '362' });
    await createRecordedSubscription(rt, second, { ...ATTRS, remote_identity: 362 }, 'abandoned', () => true);
    expect(await j.fact('sub#3001', fact)).toMatch(/^no:\d+$/);
    // Without the other container, the same observation teaches "yes": read by a new container, judged a minute later.
    await j.setFact('sub#3001', fact, 'seen:1:364:9700');
    unlearnMeanwhile = false;
    h.configure();
    const third = await j.create<any>('HandlerTest/Third', 'new', { product: 3001, identity: '362' });
    await createRecordedSubscription(rt, third, { ...ATTRS, remote_identity: 362 }, 'abandoned', () => true);
    expect(await j.fact('sub#3001', fact)).toBe('seen:1:364:9700');
    advance(WITNESS_AGE_MS);
    const fourth = await j.create<any>('HandlerTest/Fourth', 'new', { product: 3001, identity: '362' });
    await createRecordedSubscription(rt, fourth, { ...ATTRS, remote_identity: 362 }, 'abandoned', () => true);
    expect(await j.fact('sub#3001', fact)).toBe('yes');
  });

  test('a refused list of identity 0 teaches "no"; a list that fails teaches nothing and this container lists nothing more for a minute', async () => {
    const j = journal();
    await h.onEvent(h.event(SUB, 'Create', { ...ORDERS, Name: 'warm-up' }, { LogicalResourceId: 'WarmUp' }));
    const locksWhileLearning: string[] = [];
    for (const [status, origin] of [[400, 'https://refuses.example'], [503, 'https://fails.example']] as const) {
      const subs: Subscription[] = [];
      const lists: string[] = [];
      const client = ignoringFilter(subs, {
        create: async () => {
          const made = { id: String(status * 100 + subs.length), status: 'active' as const, product: 3001, remote_identity: 364 };
          subs.push(made);
          return made;
        },
      }, true);
      const list = client.subscriptions.list.bind(client.subscriptions);
      (client.subscriptions as any).list = async (q: { remoteIdentity?: string }) => {
        lists.push(String(q.remoteIdentity));
        // Learning lists after the create released its lock.
        if (q.remoteIdentity === NO_IDENTITY) locksWhileLearning.push(...await lockItems());
        if (q.remoteIdentity === NO_IDENTITY) throw new ServiceError({ message: `answered ${status}`, method: 'GET', path: '/v2/sub', status });
        return list(q);
      };
      const rt = stubRuntime(client, j, origin);
      await createAs(rt, j, `HandlerTest/A${status}`, '364');
      expect(lists).toEqual(['364', '364', '0']);
      expect(locksWhileLearning).toEqual([]);
      if (status === 400) {
        expect(await j.fact('sub#3001', `narrows#${origin}`)).toMatch(/^no:\d+$/);
      } else {
        expect(await j.fact('sub#3001', `narrows#${origin}`)).toBeUndefined();
        // The next create of this container, within the minute, learns nothing and lists only its own list before.
        lists.length = 0;
        await createAs(rt, j, 'HandlerTest/B503', '364');
        expect(lists).toEqual(['364']);
      }
    }
  });

  test('an observation of the same identity is not judged by it; a fact that is not a string counts as none and is replaced', async () => {
    const j = journal();
    const fact = `narrows#${h.emu.url}`;
    await h.onEvent(h.event(SUB, 'Create', { ...ORDERS, Name: 'warm-up' }, { LogicalResourceId: 'WarmUp' }));
    const seen = await j.fact('sub#3001', fact);
    advance(WITNESS_AGE_MS);
    await h.clearRequests();
    await h.onEvent(h.event(SUB, 'Create', { ...ORDERS, Name: 'same-identity', ProductParameters: { marketplace_id: 'A2EUQ1WTGCTBG2' } }, { LogicalResourceId: 'Same' }));
    expect(await j.fact('sub#3001', fact)).toBe(seen);
    expect((await h.requests()).filter((r) => r.method === 'GET' && r.path === '/v2/sub').map((r) => r.query.remote_identity)).toEqual(['362']);
    const raw = new DynamoDBClient({ endpoint: h.journal.endpoint, region: 'us-east-1', credentials: { accessKeyId: 'local', secretAccessKey: 'local' } });
    await raw.send(new PutItemCommand({ TableName: h.journalTable, Item: { pk: { S: 'inflight#sub#3001' }, sk: { S: `fact#${fact}` }, value: { N: '1' } } }));
    raw.destroy();
    h.configure();
    const made = await h.onEvent(h.event(SUB, 'Create', { ...ORDERS, Name: 'after-number', RemoteIdentityId: '364', ProductParameters: { marketplace_id: 'A1AM78C64UM0Y8' } },
      { LogicalResourceId: 'AfterNumber' }));
    expect(await j.fact('sub#3001', fact)).toBe(`seen:${/^seen:(\d+)/.exec((await j.fact('sub#3001', fact))!)![1]}:364:${made.PhysicalResourceId}`);
  });

  test('a provider timeout of one minute (45 s to the deadline) still learns: half of what is left is kept for the event', async () => {
    const j = journal();
    await h.onEvent(h.event(SUB, 'Create', { ...ORDERS, Name: 'warm-up' }, { LogicalResourceId: 'WarmUp' }));
    const subs: Subscription[] = [];
    const client = ignoringFilter(subs, {
      create: async () => {
        const made = { id: String(9500 + subs.length), status: 'active' as const, product: 3001, remote_identity: 364 };
        subs.push(made);
        return made;
      },
    }, true);
    const rt = stubRuntime(client, j, 'https://short-timeout.example', { deadline: Date.now() + 45_000 });
    await createAs(rt, j, 'HandlerTest/Short', '364');
    expect(await j.fact('sub#3001', 'narrows#https://short-timeout.example')).toMatch(/^seen:\d+:364:9500$/);
  });

  test('a list that lags the POST teaches nothing: the fact is learned only when the identity\'s own list shows the new subscription', async () => {
    const j = journal();
    await h.onEvent(h.event(SUB, 'Create', { ...ORDERS, Name: 'warm-up' }, { LogicalResourceId: 'WarmUp' }));
    const subs: Subscription[] = [];
    let hidden: string | undefined;
    const client = stubClient({
      // Ignores the identity filter, and does not show a new subscription in the first list after its POST.
      list: async () => {
        const out = subs.filter((x) => x.id !== hidden).map((x) => ({ id: x.id, status: x.status }));
        hidden = undefined;
        return out;
      },
      create: async () => {
        const made = { id: String(9700 + subs.length), status: 'active' as const };
        subs.push(made);
        hidden = made.id;
        return made;
      },
    });
    const rt = stubRuntime(client, j, 'https://lags.example');
    const rec = await j.create<any>('HandlerTest/Mx', 'new', { product: 3001, identity: '364' });
    expect((await createRecordedSubscription(rt, rec, ATTRS, 'abandoned', () => true)).physicalId).toBe('9700');
    expect(await j.fact('sub#3001', 'narrows#https://lags.example')).toBeUndefined();
    // This container learns again in 10 minutes; a new container's create learns: its identity's list shows it, and
    // so does the list of identity 0 (the filter is ignored).
    hidden = undefined;
    h.configure();
    const next = await j.create<any>('HandlerTest/Us', 'new', { product: 3001, identity: '362' });
    const client2 = ignoringFilter(subs, { create: async () => ({ id: '9800', status: 'active' }) }, false);
    subs.push({ id: '9800', status: 'active' });
    expect((await createRecordedSubscription({ ...rt, client: client2 } as Runtime, next, { ...ATTRS, remote_identity: 362 }, 'abandoned', () => true)).physicalId)
      .toBe('9800');
    expect(await j.fact('sub#3001', 'narrows#https://lags.example')).toMatch(/^no:\d+$/);
  });
});
