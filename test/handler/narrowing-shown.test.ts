/**
 * A lost answer's candidate under an identity's lock, where the records show no identity (src/handler/narrowing.ts,
 * `narrowingShown`): taken only when the list of identity 0 is empty, read once no list lags behind the candidates,
 * however short each invocation is; never sooner on a listing time planted in the journal; several candidates are
 * refused before any wait.
 */
import { advance, ATTRS, journal, lockItems, ORDERS, stubClient, stubRuntime, SUB, useCreatesLockHarness } from './creates-lock-helpers';
import { HandlerHarness } from './helpers';
import { DpiClient, Subscription } from '../../src/client';
import { createRecordedSubscription } from '../../src/handler/creates';
import { CLOCK_SKEW_MS, NO_IDENTITY, WITNESS_AGE_MS } from '../../src/handler/narrowing';
import { Runtime } from '../../src/handler/runtime';

let h: HandlerHarness;
useCreatesLockHarness((started) => {
  h = started;
});

/**
 * A service that narrows to the identity, whose records show only `id` and `status` (the spec's); each POST makes
 * `made` (identity 364) and its answer is lost. `zero` answers the list of identity 0.
 */
function quietService(subs: Subscription[], made: Subscription[], zero: () => Subscription[] = () => []): DpiClient {
  return stubClient({
    list: async (q: { remoteIdentity?: string } = {}) => (q.remoteIdentity === NO_IDENTITY ? zero()
      : subs.filter((x) => String(x.remote_identity) === String(q.remoteIdentity))).map((x) => ({ id: x.id, status: x.status })),
    create: async () => {
      subs.push(...made);
      throw new TypeError('fetch failed');
    },
  });
}

describe('a lost answer under an identity\'s lock', () => {
  test('a lost answer under an identity\'s lock, records that show no identity: the list of identity 0 is read a minute after the candidates were listed', async () => {
    const j = journal();
    await h.onEvent(h.event(SUB, 'Create', { ...ORDERS, Name: 'warm-up' }, { LogicalResourceId: 'WarmUp' }));
    const origin = 'https://narrows-quietly.example';
    await j.setFact('sub#3001', `narrows#${origin}`, 'yes');
    const subs: Subscription[] = [];
    const slept: number[] = [];
    const client = stubClient({
      // Narrows to the identity; its records show only `id` and `status` (the spec's). Its list of identity 0 lags:
      // it answers 9900 until the resolution has waited (read too early, the candidate would not be taken).
      list: async (q: { remoteIdentity?: string } = {}) => (q.remoteIdentity === NO_IDENTITY && slept.length === 0 ? subs : subs
        .filter((x) => String(x.remote_identity) === String(q.remoteIdentity))).map((x) => ({ id: x.id, status: x.status })),
      create: async () => {
        subs.push({ id: '9900', status: 'active', product: 3001, remote_identity: 364 });
        throw new TypeError('fetch failed');
      },
    });
    const rt = (deadlineIn: number): Runtime => ({
      client, journal: j, deadline: Date.now() + deadlineIn, sleep: async (ms: number) => void slept.push(ms), serviceOrigin: origin,
    }) as unknown as Runtime;
    const rec = await j.create<any>('HandlerTest/Quiet', 'new', { product: 3001, identity: '364' });
    // Too close to the deadline for the wait: fails clearly, the record stays `recording` and keeps its identity's lock.
    const reason = await createRecordedSubscription(rt(80_000), rec, ATTRS, 'abandoned', () => true).then(() => 'created', (e: Error) => e.message);
    expect(reason).toContain('a minute after they were listed');
    expect(await lockItems()).toEqual(['inflight#sub#3001 lock#364']);
    const recording = (await j.records<any>('HandlerTest/Quiet')).find((r) => r.state === 'recording')!;
    expect(recording.doc.attempt.lock).toBe('identity');
    // The next event waits from when the first listed the candidates (a minute, and the clocks' disagreement, as another
    // container may have listed them), then the list of identity 0 is empty: 9900 is taken.
    expect((await createRecordedSubscription(rt(600_000), recording, ATTRS, 'abandoned', () => true)).physicalId).toBe('9900');
    expect(slept).toHaveLength(1);
    expect(slept[0]).toBeGreaterThan(WITNESS_AGE_MS);
    expect(slept[0]).toBeLessThanOrEqual(WITNESS_AGE_MS + CLOCK_SKEW_MS);
    expect(await lockItems()).toEqual([]);
  });

  test('a resolution whose every invocation is shorter than the wait still ends: the wait runs from when the candidates were first listed', async () => {
    const j = journal();
    await h.onEvent(h.event(SUB, 'Create', { ...ORDERS, Name: 'warm-up' }, { LogicalResourceId: 'WarmUp' }));
    const origin = 'https://short-invocations.example';
    await j.setFact('sub#3001', `narrows#${origin}`, 'yes');
    const subs: Subscription[] = [];
    const client = stubClient({
      list: async (q: { remoteIdentity?: string } = {}) =>
        subs.filter((x) => String(x.remote_identity) === String(q.remoteIdentity)).map((x) => ({ id: x.id, status: x.status })),
      create: async () => {
        subs.push({ id: '9910', status: 'active', product: 3001, remote_identity: 364 });
        throw new TypeError('fetch failed');
      },
    });
    // A provider timeout of one minute: each invocation has 45 s; isComplete runs it again every 30 s.
    const rt = (): Runtime => ({
      client, journal: j, deadline: Date.now() + 45_000, sleep: async () => undefined, serviceOrigin: origin, continues: true,
    }) as unknown as Runtime;
    let rec = await j.create<any>('HandlerTest/Short', 'new', { product: 3001, identity: '364' });
    let outcome = '';
    let invocations = 0;
    for (; invocations < 10 && outcome !== '9910'; invocations++) {
      outcome = await createRecordedSubscription(rt(), rec, ATTRS, 'abandoned', () => true).then((r) => String(r.physicalId), (e: Error) => e.name);
      if (outcome !== '9910') {
        expect(outcome).toBe('WaitPastDeadline');
        rec = (await j.records<any>('HandlerTest/Short')).find((r) => r.state === 'recording')!;
        advance(30_000);
      }
    }
    expect(outcome).toBe('9910');
    expect(invocations).toBeLessThanOrEqual(5);
  });

  test('an unrelated subscription in the list of identity 0 is no narrowing: the candidate is named, not taken', async () => {
    const j = journal();
    await h.onEvent(h.event(SUB, 'Create', { ...ORDERS, Name: 'warm-up' }, { LogicalResourceId: 'WarmUp' }));
    const origin = 'https://zero-unrelated.example';
    await j.setFact('sub#3001', `narrows#${origin}`, 'yes');
    const subs: Subscription[] = [];
    const client = quietService(subs, [{ id: '9920', status: 'active', product: 3001, remote_identity: 364 }], () => [{ id: '1', status: 'active' }]);
    const rt = { client, journal: j, deadline: Date.now() + 600_000, sleep: async () => undefined, serviceOrigin: origin } as unknown as Runtime;
    const rec = await j.create<any>('HandlerTest/Unrelated', 'new', { product: 3001, identity: '364' });
    const reason = await createRecordedSubscription(rt, rec, ATTRS, 'abandoned', () => true).then(() => 'created', (e: Error) => e.message);
    expect(reason).toContain('does not show that it narrows');
    expect(await j.fact('sub#3001', `narrows#${origin}`)).toMatch(/^no:\d+$/);
  });

  test('a listing time planted in the journal (long before the attempt) does not shorten the wait; several candidates fail before any', async () => {
    const j = journal();
    await h.onEvent(h.event(SUB, 'Create', { ...ORDERS, Name: 'warm-up' }, { LogicalResourceId: 'WarmUp' }));
    const origin = 'https://planted-listing.example';
    await j.setFact('sub#3001', `narrows#${origin}`, 'yes');
    const subs: Subscription[] = [];
    const slept: number[] = [];
    const rt = (made: Subscription[]): Runtime => ({
      client: quietService(subs, made),
      journal: j,
      deadline: Date.now() + 600_000,
      serviceOrigin: origin,
      sleep: async (ms: number) => void slept.push(ms),
    }) as unknown as Runtime;
    const rec = await j.create<any>('HandlerTest/Planted', 'new', { product: 3001, identity: '364' });
    // Planted: these very candidates listed long ago.
    await j.setFact('sub#3001', `listed#${rec.key}|${rec.id}`, JSON.stringify({ at: 0, ids: ['9930'] }));
    const made = await createRecordedSubscription(rt([{ id: '9930', status: 'active', product: 3001, remote_identity: 364 }]), rec, ATTRS, 'abandoned', () => true);
    expect(made.physicalId).toBe('9930');
    expect(slept).toHaveLength(1);
    expect(slept[0]).toBeGreaterThanOrEqual(WITNESS_AGE_MS);
    // Resolved: the listing's time is gone from the journal.
    expect(await j.fact('sub#3001', `listed#${rec.key}|${rec.id}`)).toBeUndefined();
    // Two candidates appear after a lost answer: refused at once, no wait.
    slept.length = 0;
    const two = await j.create<any>('HandlerTest/Two', 'new', { product: 3001, identity: '364' });
    const reason = await createRecordedSubscription(rt([{ id: '9990', status: 'active', product: 3001, remote_identity: 364 },
      { id: '9991', status: 'active', product: 3001, remote_identity: 364 }]), two, ATTRS, 'abandoned', () => true).then(() => 'created', (e: Error) => e.message);
    expect(reason).toContain('2 subscriptions of the product appeared since');
    expect(slept).toEqual([]);
    expect(await lockItems()).toEqual(['inflight#sub#3001 lock#364']);
    // The service narrows (identity 0's list is empty): the "yes" stays.
    expect(await j.fact('sub#3001', `narrows#${origin}`)).toBe('yes');
  });

  test('several candidates on a service whose list of identity 0 answers: refused at once, and the wrong "yes" is unlearned', async () => {
    const j = journal();
    await h.onEvent(h.event(SUB, 'Create', { ...ORDERS, Name: 'warm-up' }, { LogicalResourceId: 'WarmUp' }));
    const origin = 'https://several.example';
    await j.setFact('sub#3001', `narrows#${origin}`, 'yes');
    const subs: Subscription[] = [];
    const made = [{ id: '8001', status: 'active' as const, product: 3001, remote_identity: 364 },
      { id: '8002', status: 'active' as const, product: 3001, remote_identity: 364 }];
    const rt = stubRuntime(quietService(subs, made, () => subs), j, origin);
    const rec = await j.create<any>('HandlerTest/Several', 'new', { product: 3001, identity: '364' });
    const reason = await createRecordedSubscription(rt, rec, ATTRS, 'abandoned', () => true).then(() => 'created', (e: Error) => e.message);
    expect(reason).toContain('2 subscriptions of the product appeared since');
    expect(await j.fact('sub#3001', `narrows#${origin}`)).toMatch(/^no:\d+$/);
  });
});
