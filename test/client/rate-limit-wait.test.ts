import { ScriptedServer } from './scripted-server';
import {
  DEFAULT_MAX_RATE_LIMIT_WAIT_MS, DpiClient, DpiClientOptions, endpointsFromBase, RATE_LIMIT, RateLimitWait, ServiceError,
} from '../../src/client';
import { rateLimitWaitMs } from '../../src/client/http';

/**
 * The rate-limit wait as the vendor documents it: the first wait is Retry-After, each later 429 of the same call
 * doubles it up to 5 minutes, with +-15% jitter, never below the Retry-After; bounded by the deadline or by
 * `maxRateLimitWaitMs`, not by `maxAttempts`. An injected sleep and random: no real time passes.
 */
const ACCOUNT = { data: { type: 'Account', id: '1001', attributes: { name: 'acme' } } };
const R429 = (retryAfter?: string): { status: number; headers?: Record<string, string>; body: unknown } => ({
  status: 429,
  headers: retryAfter === undefined ? undefined : { 'retry-after': retryAfter },
  body: { errors: [{ status: '429', title: 'Too Many Requests', detail: `Rate limit exceeded. Retry after ${retryAfter ?? 60} seconds.` }] },
});
const OK = { status: 200, body: ACCOUNT };

let server: ScriptedServer;
let sleeps: number[];
let waits: RateLimitWait[];
let logs: string[];

beforeEach(async () => {
  server = await ScriptedServer.start();
  sleeps = [];
  waits = [];
  logs = [];
});
afterEach(async () => {
  await server.close();
});

function client(extra: Partial<DpiClientOptions> = {}): DpiClient {
  return new DpiClient({
    endpoints: endpointsFromBase(server.url),
    refreshToken: 'rt-secret-refresh-token',
    baseDelayMs: 5,
    sleep: async (ms) => { sleeps.push(ms); },
    random: () => 0.5, // no jitter
    onWait: (w) => waits.push(w),
    logger: (l) => logs.push(l),
    ...extra,
  });
}

async function caught(p: Promise<unknown>): Promise<ServiceError> {
  try {
    await p;
  } catch (e) {
    expect(e).toBeInstanceOf(ServiceError);
    return e as ServiceError;
  }
  throw new Error('expected a ServiceError');
}

const gets = (): number => server.seen('GET', '/account').length;

describe('the wait sequence', () => {
  test('Retry-After first, then doubling, capped at 300 s; onWait once per wait with the refusal count', async () => {
    server.on('GET', '/account', ...Array(7).fill(R429('60')), OK);
    expect(await client().account.get()).toEqual({ id: '1001', name: 'acme' });
    expect(sleeps).toEqual([60_000, 120_000, 240_000, 300_000, 300_000, 300_000, 300_000]);
    expect(waits.map((w) => [w.refusals, w.waitMs])).toEqual(sleeps.map((ms, i) => [i + 1, ms]));
    expect(waits[0]).toEqual({ method: 'GET', path: '/account', waitMs: 60_000, refusals: 1, retryAfterMs: 60_000 });
    expect(gets()).toBe(8);
  });

  test('the client\'s own requests fill the window (1,000 in 5 minutes): one wait until the oldest leaves it, not 60 + 120 + 240 s', async () => {
    const c = client();
    const n = RATE_LIMIT.WINDOW_REQUESTS;
    server.on('GET', '/account', ...Array(n).fill(OK), R429('60'), OK);
    const started = Date.now();
    for (let i = 0; i < n; i++) await c.account.get();
    expect(await c.account.get()).toEqual({ id: '1001', name: 'acme' });
    const elapsed = Date.now() - started;
    expect(sleeps).toHaveLength(1);
    // Until the first of the 1,000 leaves the 5-minute window, plus 1 s, plus 2.5% (random 0.5 of +5%).
    const floor = Math.round((RATE_LIMIT.WINDOW_MS - elapsed + RATE_LIMIT.WINDOW_MARGIN_MS) * 1.025);
    expect(sleeps[0]).toBeGreaterThanOrEqual(floor - 50);
    expect(sleeps[0]).toBeLessThanOrEqual(Math.round((RATE_LIMIT.WINDOW_MS + RATE_LIMIT.WINDOW_MARGIN_MS) * 1.025));
    expect(waits).toEqual([expect.objectContaining({ refusals: 1, waitMs: sleeps[0] })]);
  }, 60_000);

  test('fewer of its own requests than the window holds: the 429 comes from traffic the client does not see, the documented doubling applies', async () => {
    server.on('GET', '/account', ...Array(20).fill(OK), R429('60'), R429('60'), OK);
    const c = client();
    for (let i = 0; i < 20; i++) await c.account.get();
    await c.account.get();
    expect(sleeps).toEqual([60_000, 120_000]);
  });

  test('jitter stays within +-15% and never below the Retry-After', async () => {
    server.on('GET', '/account', ...Array(4).fill(R429('60')), OK);
    await client({ random: () => 0 }).account.get();
    // -15%: the first wait is held at the Retry-After; later ones are 0.85 x the doubled wait.
    expect(sleeps).toEqual([60_000, 102_000, 204_000, 255_000]);

    sleeps = [];
    server.on('GET', '/account', ...Array(4).fill(R429('60')), OK);
    await client({ random: () => 0.999999 }).account.get();
    const high = [60_000, 120_000, 240_000, 300_000].map((b) => b * 1.15);
    sleeps.forEach((ms, i) => {
      expect(ms).toBeLessThanOrEqual(high[i]);
      expect(ms).toBeGreaterThan(high[i] - 10);
    });

    // Every random value: within [0.85, 1.15] x the base, and at least the Retry-After.
    for (let r = 0; r < 1; r += 0.01) {
      for (let n = 1; n <= 8; n++) {
        const base = Math.min(300_000, 60_000 * 2 ** (n - 1));
        const ms = rateLimitWaitMs(n, 60_000, 60_000, r);
        expect(ms).toBeGreaterThanOrEqual(Math.max(60_000, Math.floor(base * 0.85)));
        expect(ms).toBeLessThanOrEqual(Math.ceil(base * 1.15));
      }
    }
  });

  test('no Retry-After: 60 s (the documented value) is the first wait and the floor', async () => {
    server.on('GET', '/account', R429(), R429(), OK);
    await client({ random: () => 0 }).account.get();
    expect(sleeps).toEqual([RATE_LIMIT.DEFAULT_RETRY_AFTER_MS, 102_000]);
    expect(waits[0].retryAfterMs).toBeUndefined();
  });

  test('a Retry-After longer than the cap is honoured; Retry-After 0 doubles from 1 s', async () => {
    server.on('GET', '/account', R429('10'), R429('10'), R429('600'), OK);
    await client().account.get();
    expect(sleeps).toEqual([10_000, 20_000, 600_000]);

    sleeps = [];
    server.on('GET', '/account', R429('0'), R429('0'), R429('0'), OK);
    await client().account.get();
    expect(sleeps).toEqual([0, 2_000, 4_000]);
  });
});

describe('the budget', () => {
  test('without a deadline: no attempt count; 12 refusals then 200 within the 30-minute default', async () => {
    expect(DEFAULT_MAX_RATE_LIMIT_WAIT_MS).toBe(30 * 60_000);
    server.on('GET', '/account', ...Array(12).fill(R429('1')), OK);
    expect(await client({ maxAttempts: 2 }).account.get()).toEqual({ id: '1001', name: 'acme' });
    expect(gets()).toBe(13);
    expect(sleeps).toEqual([1, 2, 4, 8, 16, 32, 64, 128, 256, 300, 300, 300].map((s) => s * 1000));
  });

  test('without a deadline: the call fails when the next wait would pass maxRateLimitWaitMs', async () => {
    server.on('GET', '/account', R429('60'));
    const err = await caught(client().account.get());
    // 60 + 120 + 240 + 4 x 300 = 1620 s; the next 300 s would make 1920 s > 1800 s.
    expect(sleeps).toEqual([60_000, 120_000, 240_000, 300_000, 300_000, 300_000, 300_000]);
    expect(gets()).toBe(8);
    expect(err).toMatchObject({ status: 429, retryable: true, attempts: 8 });
    expect(err.message).toBe('GET /account failed: still rate limited after 8 refusal(s) and 1620 s of waiting; the next wait '
      + 'of 300 s would pass this call\'s rate-limit budget of 1800 s (maxRateLimitWaitMs); last status 429: Rate limit exceeded. '
      + 'Retry after 60 seconds.');
    expect(waits).toHaveLength(7);

    sleeps = [];
    const small = await caught(client({ maxRateLimitWaitMs: 100_000 }).account.get());
    expect(sleeps).toEqual([60_000]);
    expect(small.message).toMatch(/still rate limited after 2 refusal\(s\)/);
  });

  test('with a deadline: waits go on while the next one fits before it (maxRateLimitWaitMs does not apply)', async () => {
    server.on('GET', '/account', R429('60'));
    const deadline = Date.now() + 10 * 60_000;
    const err = await caught(client({ deadline, maxRateLimitWaitMs: 1_000, maxAttempts: 1 }).account.get());
    // 60 + 120 + 240 = 420 s waited; the next 300 s would end past the 600 s deadline.
    expect(sleeps).toEqual([60_000, 120_000, 240_000]);
    expect(gets()).toBe(4);
    expect(err.message).toMatch(/^GET \/account failed: deadline reached after 4 attempt\(s\) while waiting out the service's rate limit \(refused with 429 4 time\(s\); the next wait of 300 s would pass it\); last status 429: /);
    expect(err).toMatchObject({ status: 429, retryable: true });

    sleeps = [];
    server.on('GET', '/account', R429('60'), R429('60'), OK);
    await client({ deadline: Date.now() + 10 * 60_000, maxAttempts: 1 }).account.get();
    expect(sleeps).toEqual([60_000, 120_000]);
  });

  test('a copy whose deadline ends before the pause in progress fails at once instead of waiting past it', async () => {
    server.on('GET', '/account', R429('120'), OK);
    let release: () => void = () => undefined;
    const c = client({ sleep: (ms) => { sleeps.push(ms); return new Promise<void>((r) => { release = r; }); } });
    const first = c.account.get();
    for (let i = 0; i < 50 && sleeps.length === 0; i++) await new Promise((r) => setTimeout(r, 5));
    expect(sleeps).toEqual([120_000]);
    const err = await caught(c.withDeadline(Date.now() + 60_000).account.get());
    expect(err.message).toMatch(/^GET \/account failed: deadline reached before the request was sent: the client waits out the service's rate limit \(429\) for another 1\d\d s$/);
    expect(gets()).toBe(1);
    release();
    await first;
    expect(gets()).toBe(2);
  });
});

describe('what is waited out', () => {
  test('onWait once per wait the client starts, not per request that joins it', async () => {
    server.on('GET', '/user', { status: 200, body: { data: { type: 'User', id: '2001', attributes: {} } } });
    server.on('GET', '/account', ...Array(5).fill(R429('2')), OK);
    const releases: Array<() => void> = [];
    const c = client({ sleep: (ms) => { sleeps.push(ms); return new Promise<void>((r) => { releases.push(r); }); } });
    await c.user.get(); // token exchanged first
    const calls = [c.account.get(), ...[1, 2, 3, 4].map(() => c.withDeadline(Date.now() + 600_000).account.get())];
    const joined = (): number => logs.filter((l) => l.includes('joins the rate-limit pause')).length;
    for (let i = 0; i < 200 && (sleeps.length < 1 || joined() < 4); i++) await new Promise((r) => setTimeout(r, 5));
    expect(sleeps).toEqual([2000]);
    expect(joined()).toBe(4);
    expect(waits).toHaveLength(1);
    expect(waits[0]).toMatchObject({ method: 'GET', path: '/account', refusals: 1, waitMs: 2000 });
    releases.forEach((r) => r());
    expect((await Promise.all(calls)).map((a) => a.id)).toEqual(Array(5).fill('1001'));
    expect(gets()).toBe(10);
    expect(waits).toHaveLength(1);
  });

  test('a creating POST answered 429 is sent again after the wait (a refusal proves it was not applied)', async () => {
    const path = '/service/sp/notifications-unified/362';
    server.on('POST', path, R429('60'), R429('60'),
      { status: 207, body: { type: 'SPAPINotifications', attributes: { subscriptions: { ORDER_CHANGE: 'up-1' }, failed: {}, meta: {} } } });
    const r = await client({ maxAttempts: 1 }).notifications.create(362, { notification_types: ['ORDER_CHANGE'], role_arn: 'arn:r', aws_region: 'us-east-1' });
    expect(r.subscriptions).toEqual({ ORDER_CHANGE: 'up-1' });
    expect(server.seen('POST', path)).toHaveLength(3);
    expect(sleeps).toEqual([60_000, 120_000]);
    expect(waits.map((w) => [w.method, w.path, w.refusals])).toEqual([['POST', path, 1], ['POST', path, 2]]);
  });

  test('5xx of an idempotent call is still bounded by maxAttempts; 429s in between do not count', async () => {
    server.on('GET', '/account', { status: 503, body: { message: 'try later' } });
    const err = await caught(client({ maxAttempts: 3 }).account.get());
    expect(gets()).toBe(3);
    expect(err.message).toBe('GET /account failed after 3 attempt(s) (attempts exhausted); last status 503: try later');
    expect(waits).toHaveLength(0);

    server.on('GET', '/account', R429('1'), R429('1'), R429('1'), { status: 502 }, { status: 502 }, { status: 502 });
    const mixed = await caught(client({ maxAttempts: 2 }).account.get());
    expect(gets()).toBe(3 + 5);
    expect(mixed.message).toBe('GET /account failed after 5 attempt(s) (attempts exhausted); last status 502');
    expect(waits).toHaveLength(3);
  });

  test('a reporter that throws does not fail the call; the logger keeps one line per retry', async () => {
    server.on('GET', '/account', R429('60'), OK);
    await client({ onWait: () => { throw new Error('broken reporter'); } }).account.get();
    expect(gets()).toBe(2);
    expect(logs).toEqual(['retry 2 GET /account after 429 in 60000 ms (refusal 1)']);
  });
});
