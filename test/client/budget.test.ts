/**
 * The request budget a client shares with the other clients of the service address (src/client/budget.ts): its
 * schedule keeps every window of the limit's length within the limit, and the client waits for its turn before each
 * attempt, fails without sending when the turn is past its deadline, and holds every client's turns after a 429.
 */
import { ScriptedServer } from './scripted-server';
import { mostInWindow } from './windows';
import { DpiClient, endpointsFromBase, MemoryBudget, paceOf, parseBudget, RequestBudget, ServiceError } from '../../src/client';
import { BUDGET_MARGIN_MS } from '../../src/client/budget';

const ACCOUNT = { status: 200, body: { data: { type: 'Account', id: '1001', attributes: { name: 'acme' } } } };

describe('the schedule', () => {
  test('the limit at once, then each slot again one window (and the margin) after its last request; never more than the limit in any window', async () => {
    const pace = paceOf(1000, 300_000);
    let now = 1_000_000;
    const b = new MemoryBudget(pace, () => now);
    const sends: number[] = [];
    // 3,000 requests asked for at once, then a pause of an hour, then 200 more.
    for (let i = 0; i < 3000; i++) sends.push(now + (await b.reserve(Infinity) as number));
    expect(sends.slice(0, 1000).every((t) => t === now)).toBe(true);
    expect(sends[1000] - now).toBe(300_000 + BUDGET_MARGIN_MS);
    now += 3_600_000 * 2;
    for (let i = 0; i < 200; i++) sends.push(now + (await b.reserve(Infinity) as number));
    expect(sends.slice(3000).every((t) => t === now)).toBe(true);
    expect(mostInWindow(sends, 300_000)).toBeLessThanOrEqual(1000);
    // 3,000 requests take two windows (the rate floor: 3,000 / 1,000 per 5 minutes = 15 minutes, of which the last
    // window's requests go at its start).
    expect(sends[2999] - sends[0]).toBe(2 * (300_000 + BUDGET_MARGIN_MS));
  });

  test('a turn past what the caller can wait is not counted', async () => {
    const now = 0;
    const b = new MemoryBudget(paceOf(2, 10_000), () => now);
    expect(await b.reserve(0)).toBe(0);
    expect(await b.reserve(0)).toBe(0);
    expect(await b.reserve(500)).toEqual({ tooLongMs: 10_000 + BUDGET_MARGIN_MS });
    expect(await b.reserve(60_000)).toBe(10_000 + BUDGET_MARGIN_MS);
    await b.holdUntil(30_000);
    expect(await b.reserve(60_000)).toBe(30_000);
  });

  test('the setting: off, <requests>/<seconds>, anything else refused naming it', () => {
    expect(parseBudget(undefined)).toBeUndefined();
    expect(parseBudget('off')).toBeUndefined();
    expect(parseBudget('1000/300')).toEqual({ limit: 1000, windowMs: 300_000 });
    expect(parseBudget('100/10')).toEqual({ limit: 100, windowMs: 10_000 });
    expect(() => parseBudget('fast', 'DPI_REQUEST_BUDGET')).toThrow('DPI_REQUEST_BUDGET must be \'off\' or <requests>/<seconds>, e.g. 1000/300 (got "fast")');
    expect(() => parseBudget('0/300')).toThrow('a request budget needs a limit of at least 1 request');
  });
});

describe('the client', () => {
  let server: ScriptedServer;
  let sleeps: number[];
  beforeEach(async () => {
    server = await ScriptedServer.start();
    sleeps = [];
  });
  afterEach(async () => server.close());

  const client = (budget: RequestBudget, deadline?: number): DpiClient => new DpiClient({
    endpoints: endpointsFromBase(server.url),
    refreshToken: 'rt-secret-refresh-token',
    sleep: async (ms) => { sleeps.push(ms); },
    random: () => 0.5,
    budget,
    ...(deadline !== undefined ? { deadline } : {}),
  });

  test('waits for its turn before each request', async () => {
    server.on('GET', '/account', ACCOUNT, ACCOUNT);
    // The token exchange is a request to the service too: it takes the first turn.
    const turns = [0, 0, 1_234];
    const asked: number[] = [];
    const budget: RequestBudget = { reserve: async (max) => { asked.push(max); return turns.shift()!; }, holdUntil: async () => undefined };
    const c = client(budget);
    await c.account.get();
    await c.account.get();
    expect(sleeps).toEqual([1_234]);
    expect(asked).toHaveLength(3);
    expect(server.exchanges).toHaveLength(1);
    expect(server.seen('GET', '/account')).toHaveLength(2);
  });

  test('a turn past the deadline: the call fails retryable, naming the wait, and nothing is sent', async () => {
    server.on('GET', '/account', ACCOUNT);
    const budget: RequestBudget = { reserve: async () => ({ tooLongMs: 95_000 }), holdUntil: async () => undefined };
    let error: unknown;
    try {
      await client(budget, Date.now() + 60_000).account.get();
    } catch (e) {
      error = e;
    }
    expect(error).toBeInstanceOf(ServiceError);
    expect((error as ServiceError).message).toContain('deadline reached before the request was sent: the request budget shared by the clients '
      + 'of the service address gives it its turn in 95 s');
    expect((error as ServiceError).retryable).toBe(true);
    expect((error as ServiceError).waitPastDeadline).toBe(true);
    expect(server.seen('GET', '/account')).toHaveLength(0);
  });

  test('a 429 whose wait would pass the deadline says so (waitPastDeadline); other failures do not', async () => {
    server.on('GET', '/account', { status: 429, headers: { 'retry-after': '120' }, body: {} });
    server.on('GET', '/user', { status: 400, body: { error: 'bad' } });
    const budget: RequestBudget = { reserve: async () => 0, holdUntil: async () => undefined };
    const c = client(budget, Date.now() + 60_000);
    const errorOf = async (p: Promise<unknown>): Promise<ServiceError> => p.then(() => { throw new Error('no failure'); }, (e: ServiceError) => e);
    const limited = await errorOf(c.account.get());
    expect(limited.message).toMatch(/while waiting out the service's rate limit/);
    expect(limited.waitPastDeadline).toBe(true);
    const refused = await errorOf(c.user.get());
    expect(refused.status).toBe(400);
    expect(refused.waitPastDeadline).toBe(false);
  });

  test('withCreatingCheck: the check runs right before a creating request leaves (after its turn); when it throws, nothing is sent', async () => {
    const created = { status: 201, body: { data: { type: 'Subscription', id: '9001', attributes: { status: 'active' } } } };
    server.on('POST', '/v2/sub', created);
    const order: string[] = [];
    const budget: RequestBudget = { reserve: async () => { order.push('turn'); return 5_000; }, holdUntil: async () => undefined };
    sleeps = [];
    let cancelled = false;
    const c = client(budget).withCreatingCheck(async () => {
      order.push('check');
      if (cancelled) throw new Error('cancelled meanwhile');
    });
    // A read is not checked.
    server.on('GET', '/account', ACCOUNT);
    await c.account.get();
    expect(order.filter((o) => o === 'check')).toHaveLength(0);
    order.length = 0;
    await c.subscriptions.create({ product: 3001, status: 'active' } as never);
    expect(order).toEqual(['turn', 'check']);
    cancelled = true;
    await expect(c.subscriptions.create({ product: 3001, status: 'active' } as never)).rejects.toThrow('cancelled meanwhile');
    expect(server.seen('POST', '/v2/sub')).toHaveLength(1);
  });

  test('a 429 holds every client\'s turns until its wait has passed', async () => {
    server.on('GET', '/account', { status: 429, headers: { 'retry-after': '30' }, body: {} }, ACCOUNT);
    const holds: number[] = [];
    const budget: RequestBudget = { reserve: async () => 0, holdUntil: async (t) => { holds.push(t); } };
    const before = Date.now();
    await client(budget).account.get();
    expect(holds).toHaveLength(1);
    expect(holds[0]).toBeGreaterThanOrEqual(before + 30_000);
    expect(sleeps).toEqual([30_000]);
  });
});
