import { makeJwt, ScriptedServer } from './scripted-server';
import { DpiClient, DpiClientOptions, endpointsFromBase, jwtExpiry, parseRetryAfter, ServiceError } from '../../src/client';

const REFRESH = 'rt-very-secret-refresh-token';
let server: ScriptedServer;
let sleeps: number[];
let logs: string[];

beforeEach(async () => {
  server = await ScriptedServer.start();
  sleeps = [];
  logs = [];
});
afterEach(async () => {
  await server.close();
});

function client(extra: Partial<DpiClientOptions> = {}): DpiClient {
  return new DpiClient({
    endpoints: endpointsFromBase(server.url),
    refreshToken: REFRESH,
    baseDelayMs: 5,
    sleep: async (ms) => { sleeps.push(ms); },
    logger: (l) => logs.push(l),
    ...extra,
  });
}

const ACCOUNT = { data: { type: 'Account', id: '1001', attributes: { name: 'acme' } } };
const SUB = (id: string): object => ({ data: { type: 'Subscription', id, attributes: { status: 'active', product: 107 } } });

async function caught(p: Promise<unknown>): Promise<ServiceError> {
  try {
    await p;
  } catch (e) {
    expect(e).toBeInstanceOf(ServiceError);
    return e as ServiceError;
  }
  throw new Error('expected a ServiceError');
}

describe('auth', () => {
  test('exchanges the refresh token and sends the bearer JWT; Content-Type only with a body', async () => {
    server.on('GET', '/account', { status: 200, body: ACCOUNT });
    server.on('PATCH', '/v2/sub/9001', { status: 200, body: SUB('9001') });
    const c = client();
    expect(await c.account.get()).toEqual({ id: '1001', name: 'acme' });
    await c.subscriptions.update(9001, { status: 'paused' });

    expect(server.exchanges).toHaveLength(1);
    const ex = server.exchanges[0];
    expect(JSON.parse(ex.body)).toEqual({ data: { type: 'APIAuth', attributes: { refresh_token: REFRESH } } });
    expect(ex.headers['content-type']).toBe('application/json');
    expect(ex.headers.authorization).toBeUndefined();

    const [get] = server.seen('GET', '/account');
    expect(get.headers.authorization).toBe(`Bearer ${server.issuedTokens[0]}`);
    expect(get.headers['content-type']).toBeUndefined();
    const [patch] = server.seen('PATCH', '/v2/sub/9001');
    expect(patch.headers.authorization).toBe(`Bearer ${server.issuedTokens[0]}`);
    expect(patch.headers['content-type']).toBe('application/json');
    expect(JSON.parse(patch.body)).toEqual({ data: { type: 'Subscription', id: '9001', attributes: { status: 'paused' } } });
  });

  test('401 -> one new exchange -> the call is retried once and succeeds', async () => {
    server.on('GET', '/account', { status: 401, body: { message: 'Unauthorized' } }, { status: 200, body: ACCOUNT });
    const c = client();
    expect((await c.account.get()).id).toBe('1001');
    expect(server.exchanges).toHaveLength(2);
    const gets = server.seen('GET', '/account');
    expect(gets.map((g) => g.headers.authorization)).toEqual([`Bearer ${server.issuedTokens[0]}`, `Bearer ${server.issuedTokens[1]}`]);
    expect(server.issuedTokens[0]).not.toBe(server.issuedTokens[1]);
  });

  test('a second 401 fails (no loop): exactly two exchanges and two calls', async () => {
    server.on('GET', '/account', { status: 401, body: { message: 'Unauthorized' } });
    const err = await caught(client().account.get());
    expect(err.status).toBe(401);
    expect(err.message).toBe('GET /account failed with 401: Unauthorized');
    expect(server.exchanges).toHaveLength(2);
    expect(server.seen('GET', '/account')).toHaveLength(2);
  });

  test('concurrent calls share one in-flight exchange', async () => {
    server.authDelayMs = 150;
    server.on('GET', '/account', { status: 200, body: ACCOUNT });
    const c = client();
    await Promise.all([c.account.get(), c.account.get(), c.account.get(), c.account.get(), c.account.get()]);
    expect(server.exchanges).toHaveLength(1);
    expect(server.seen('GET', '/account')).toHaveLength(5);
  });

  test('the token is cached until 60 s before exp', async () => {
    server.on('GET', '/account', { status: 200, body: ACCOUNT });
    // exp = now + 61..62 s -> usable for 1..2 s by the client's clock (injected: moved, not waited for)
    server.tokenTtlSeconds = 61;
    let clock = Date.now();
    const c = client({ now: () => clock });
    await c.account.get();
    clock += 900;
    await c.account.get();
    expect(server.exchanges).toHaveLength(1);
    clock += 1200;
    await c.account.get();
    expect(server.exchanges).toHaveLength(2);
    const gets = server.seen('GET', '/account');
    expect(gets[2].headers.authorization).toBe(`Bearer ${server.issuedTokens[1]}`);
  });

  test('a token within 60 s of exp is never reused', async () => {
    server.on('GET', '/account', { status: 200, body: ACCOUNT });
    server.tokenTtlSeconds = 30;
    const c = client();
    await c.account.get();
    await c.account.get();
    expect(server.exchanges).toHaveLength(2);
  });

  test('refresh token function is resolved once; withDeadline shares the token cache', async () => {
    server.on('GET', '/account', { status: 200, body: ACCOUNT });
    let calls = 0;
    const c = client({ refreshToken: async () => { calls++; return REFRESH; } });
    await c.account.get();
    await c.withDeadline(Date.now() + 10_000).account.get();
    await c.withDeadline(undefined).account.get();
    expect(calls).toBe(1);
    expect(server.exchanges).toHaveLength(1);
    expect(server.seen('GET', '/account')).toHaveLength(3);
  });

  test('a rejected refresh token (401 at exchange) fails without leaking it', async () => {
    server.on('POST', '/auth/api/ref', { status: 401, body: { errors: [{ detail: `unknown refresh token ${REFRESH}` }] } });
    const err = await caught(client().account.get());
    expect(err.status).toBe(401);
    expect(err.path).toBe('/auth/api/ref');
    expect(err.message).not.toContain(REFRESH);
    expect(JSON.stringify(err)).not.toContain(REFRESH);
    expect(server.seen('GET', '/account')).toHaveLength(0);
    expect(server.exchanges).toHaveLength(1);
  });

  test('jwtExpiry decodes exp without verification', () => {
    expect(jwtExpiry(makeJwt({ exp: 1234 }))).toBe(1234);
    expect(jwtExpiry('not-a-jwt')).toBeUndefined();
    expect(jwtExpiry(makeJwt({ sub: 'x' }))).toBeUndefined();
  });
});

describe('retries', () => {
  test('429 with Retry-After (seconds): the wait is honoured in real time', async () => {
    server.on('GET', '/account', { status: 429, headers: { 'retry-after': '1' } }, { status: 200, body: ACCOUNT });
    const c = client({ sleep: undefined });
    const t0 = Date.now();
    await c.account.get();
    const gets = server.seen('GET', '/account');
    expect(gets).toHaveLength(2);
    expect(gets[1].at - gets[0].at).toBeGreaterThanOrEqual(1000);
    expect(Date.now() - t0).toBeGreaterThanOrEqual(1000);
  });

  test('429 with Retry-After as an HTTP date: the requested wait covers it', async () => {
    const when = new Date(Date.now() + 5000).toUTCString();
    server.on('GET', '/account', { status: 429, headers: { 'retry-after': when } }, { status: 200, body: ACCOUNT });
    await client().account.get();
    expect(sleeps).toHaveLength(1);
    expect(sleeps[0]).toBeGreaterThanOrEqual(3000);
    expect(server.seen('GET', '/account')).toHaveLength(2);
  });

  test('parseRetryAfter', () => {
    expect(parseRetryAfter('2')).toBe(2000);
    expect(parseRetryAfter(null)).toBeUndefined();
    expect(parseRetryAfter('soon')).toBeUndefined();
    expect(parseRetryAfter(new Date(10_000).toUTCString(), 4_000)).toBe(6_000);
    expect(parseRetryAfter(new Date(1_000).toUTCString(), 4_000)).toBe(0);
  });

  test('503 then 200: retried once with a backoff wait, one log line without the token', async () => {
    server.on('GET', '/account', { status: 503, body: { message: 'busy' } }, { status: 200, body: ACCOUNT });
    await client().account.get();
    expect(server.seen('GET', '/account')).toHaveLength(2);
    expect(sleeps).toHaveLength(1);
    expect(sleeps[0]).toBeLessThanOrEqual(5);
    expect(logs).toHaveLength(1);
    expect(logs[0]).toMatch(/retry 2 GET \/account after 503/);
    expect(logs.join('\n')).not.toContain(server.issuedTokens[0]);
  });

  test.each([502, 504])('%i on a GET is retried', async (status) => {
    server.on('GET', '/account', { status }, { status: 200, body: ACCOUNT });
    await client().account.get();
    expect(server.seen('GET', '/account')).toHaveLength(2);
  });

  test('backoff grows exponentially with full jitter (random = 0.999)', async () => {
    server.on('GET', '/account', { status: 503 });
    const err = await caught(client({ baseDelayMs: 100, maxDelayMs: 350, random: () => 0.999 }).account.get());
    expect(sleeps).toEqual([99, 199, 349, 349]);
    expect(err.attempts).toBe(5);
  });

  test('attempts exhausted: message names it and the last status; maxAttempts respected', async () => {
    server.on('GET', '/account', { status: 503, body: { errors: [{ status: '503', title: 'Unavailable', detail: 'try later' }] } });
    const err = await caught(client({ maxAttempts: 3 }).account.get());
    expect(server.seen('GET', '/account')).toHaveLength(3);
    expect(err.message).toBe('GET /account failed after 3 attempt(s) (attempts exhausted); last status 503: try later');
    expect(err.status).toBe(503);
    expect(err.retryable).toBe(true);
    expect(err.ambiguous).toBe(false);
  });

  test.each([400, 403, 404, 409, 422])('%i fails at once with the service message', async (status) => {
    server.on('POST', '/service/sp/notifications-unified/362', { status, body: { errors: [{ status: String(status), title: 'x', detail: 'role cannot be assumed' }] } });
    const err = await caught(client().notifications.create(362, { notification_types: ['ORDER_CHANGE'], role_arn: 'arn:r', aws_region: 'us-east-1' }));
    expect(err.message).toBe(`POST /service/sp/notifications-unified/362 failed with ${status}: role cannot be assumed`);
    expect(err).toMatchObject({ method: 'POST', path: '/service/sp/notifications-unified/362', status, serviceMessage: 'role cannot be assumed', retryable: false });
    expect(server.seen('POST', '/service/sp/notifications-unified/362')).toHaveLength(1);
    expect(sleeps).toHaveLength(0);
  });

  test('500 on a creating POST: not repeated, flagged ambiguous (it may have been applied)', async () => {
    server.on('POST', '/service/sp/notifications-unified/362', { status: 500, body: { error: 'boom' } });
    const err = await caught(client().notifications.create(362, { notification_types: ['ORDER_CHANGE'], role_arn: 'arn:r', aws_region: 'us-east-1' }));
    expect(err).toMatchObject({ status: 500, ambiguous: true, retryable: false });
    expect(err.message).toContain('may have been applied');
    expect(server.seen('POST', '/service/sp/notifications-unified/362')).toHaveLength(1);
  });

  test.each([['GET', '/account'], ['PATCH', '/v2/sub/9001'], ['DELETE', '/service/sp/notifications-unified/362/9001']])(
    '500 on an idempotent %s is retried', async (method, path) => {
      server.on(method, path, { status: 500, body: { error: 'boom' } }, { status: method === 'DELETE' ? 204 : 200, body: method === 'DELETE' ? undefined : ACCOUNT });
      const c = client();
      if (method === 'GET') await c.account.get();
      else if (method === 'PATCH') await c.subscriptions.update(9001, { status: 'paused' });
      else await c.notifications.delete(362, 9001);
      expect(server.seen(method, path)).toHaveLength(2);
    });

  test.each([['PATCH', '/v2/sub/9001'], ['DELETE', '/service/sp/notifications-unified/362/9001']])(
    '503 on an idempotent %s is retried (it keeps its retries)', async (method, path) => {
      server.on(method, path, { status: 503, headers: { 'retry-after': '0' } }, { status: method === 'DELETE' ? 204 : 200, body: method === 'DELETE' ? undefined : SUB('9001') });
      const c = client();
      if (method === 'PATCH') await c.subscriptions.update(9001, { status: 'paused' });
      else await c.notifications.delete(362, 9001);
      expect(server.seen(method, path)).toHaveLength(2);
    });

  test('a 503 may have been applied: the error of the retried call says so (afterUnclearAttempt); a 429 does not', async () => {
    const path = '/service/sp/notifications-unified/362/9001';
    server.on('DELETE', path, { status: 503 }, { status: 400, body: { message: 'no pipeline for the stored metadata' } });
    const after503 = await caught(client().notifications.delete(362, 9001));
    expect(after503).toMatchObject({ status: 400, afterUnclearAttempt: true, ambiguous: false });
    server.on('DELETE', path, { status: 429, headers: { 'retry-after': '0' } }, { status: 400, body: { message: 'no pipeline for the stored metadata' } });
    const after429 = await caught(client().notifications.delete(362, 9001));
    expect(after429).toMatchObject({ status: 400, afterUnclearAttempt: false });
  });

  test('with a deadline the retry budget is the deadline, not maxAttempts', async () => {
    let n = 0;
    server.on('GET', '/account', { status: 503 }, { status: 503 }, { status: 503 }, { status: 503 }, { status: 503 }, { status: 503 }, { status: 503 },
      { status: 200, body: ACCOUNT });
    await client({ maxAttempts: 2, deadline: Date.now() + 60_000, sleep: async () => { n++; } }).account.get();
    expect(server.seen('GET', '/account')).toHaveLength(8);
    expect(n).toBe(7);
  });

  test('the unified create gets the provisioning timeout, other calls the request timeout', async () => {
    server.on('POST', '/service/sp/notifications-unified/362', { status: 207, body: { data: { type: 'SPAPINotifications', attributes: { subscriptions: {}, failed: {}, meta: {} } } }, delayMs: 400 });
    server.on('GET', '/account', { status: 200, body: ACCOUNT, delayMs: 400 }, { status: 200, body: ACCOUNT });
    const c = client({ requestTimeoutMs: 150, provisioningTimeoutMs: 2000 });
    await c.notifications.create(362, { notification_types: ['ORDER_CHANGE'], role_arn: 'arn:r', aws_region: 'us-east-1' });
    expect(server.seen('POST', '/service/sp/notifications-unified/362')).toHaveLength(1);
    await c.account.get();
    expect(server.seen('GET', '/account')).toHaveLength(2);
  });

  test('a 401 re-reads the refresh token from its source (a rotated secret) and exchanges once more', async () => {
    let reads = 0;
    server.on('GET', '/account', { status: 401, body: { message: 'Unauthorized' } }, { status: 200, body: ACCOUNT });
    const c = client({ refreshToken: async () => { reads++; return REFRESH; } });
    expect((await c.account.get()).id).toBe('1001');
    expect(reads).toBe(2);
    expect(server.exchanges).toHaveLength(2);
  });

  test('service message order: errors[0].detail, errors[0].title, error, message, raw text', async () => {
    server.on('GET', '/account',
      { status: 400, body: { errors: [{ title: 'T' }], error: 'E' } },
    );
    expect((await caught(client().account.get())).serviceMessage).toBe('T');
    server.on('GET', '/user', { status: 500, body: { error: 'E', message: 'M' } });
    expect((await caught(client().user.get())).serviceMessage).toBe('E');
    server.on('GET', '/sri', { status: 403, body: 'plain text' });
    expect((await caught(client().remoteIdentities.list())).serviceMessage).toBe('plain text');
  });

  test('per-attempt timeout on a GET is retried', async () => {
    server.on('GET', '/account', { status: 200, body: ACCOUNT, delayMs: 1000 }, { status: 200, body: ACCOUNT });
    await client({ requestTimeoutMs: 150 }).account.get();
    expect(server.seen('GET', '/account')).toHaveLength(2);
    expect(logs[0]).toMatch(/after timeout/);
  });

  test('deadline stops retries: a Retry-After that would cross it fails now', async () => {
    server.on('GET', '/account', { status: 429, headers: { 'retry-after': '5' }, body: { message: 'slow down' } });
    const t0 = Date.now();
    const err = await caught(client({ sleep: undefined, deadline: Date.now() + 1500 }).account.get());
    expect(Date.now() - t0).toBeLessThan(1000);
    expect(server.seen('GET', '/account')).toHaveLength(1);
    expect(err.message).toMatch(/^GET \/account failed: deadline reached after 1 attempt\(s\) .*last status 429: slow down$/);
    expect(err.status).toBe(429);
  });

  test('deadline stops retries of a failing call in real time', async () => {
    server.on('GET', '/account', { status: 503 });
    const t0 = Date.now();
    const err = await caught(client({ sleep: undefined, baseDelayMs: 200, maxAttempts: 50, deadline: Date.now() + 700 }).account.get());
    const elapsed = Date.now() - t0;
    expect(elapsed).toBeLessThan(1200);
    expect(err.message).toMatch(/deadline reached/);
    expect(err.message).toMatch(/503/);
    expect(server.seen('GET', '/account').length).toBeLessThan(50);
    expect(server.seen('GET', '/account').every((r) => r.at - t0 <= 700)).toBe(true);
  });

  test('a deadline already passed sends nothing', async () => {
    const err = await caught(client({ deadline: Date.now() - 1 }).account.get());
    expect(err.message).toMatch(/deadline reached before the request was sent/);
    expect(server.requests).toHaveLength(0);
  });

  test('a per-attempt timeout never extends past the deadline', async () => {
    server.on('GET', '/account', { status: 200, body: ACCOUNT, delayMs: 3000 });
    const t0 = Date.now();
    const err = await caught(client({ deadline: Date.now() + 400 }).account.get());
    expect(Date.now() - t0).toBeLessThan(1500);
    expect(err.message).toMatch(/deadline reached/);
    expect(err.code).toBe('TIMEOUT');
  });

  test('connection refused is retried', async () => {
    const dead = await ScriptedServer.start();
    const url = dead.url;
    await dead.close();
    const c = new DpiClient({
      endpoints: { ...endpointsFromBase(server.url), accountUrl: url },
      refreshToken: REFRESH,
      maxAttempts: 2,
      sleep: async (ms) => { sleeps.push(ms); },
    });
    const err = await caught(c.account.get());
    expect(err.code).toBe('ECONNREFUSED');
    expect(err.attempts).toBe(2);
    expect(err.message).toMatch(/attempts exhausted.*ECONNREFUSED/);
  });
});

describe('creating POSTs', () => {
  const attrs = { account: 1001, user: 2001, product: 107, date_start: '2026-11-22T00:00:00Z' };

  test('a lost response (socket destroyed after the request) -> ambiguous, exactly one POST', async () => {
    server.on('POST', '/v2/sub', { destroy: true });
    const err = await caught(client().subscriptions.create(attrs));
    expect(err.ambiguous).toBe(true);
    expect(err.retryable).toBe(false);
    expect(err.status).toBeUndefined();
    expect(err.message).toMatch(/^POST \/v2\/sub failed: .* after the request was sent; the request may have been applied: look for what it made/);
    expect(server.seen('POST', '/v2/sub')).toHaveLength(1);
  });

  test.each([502, 504])('%i on a create -> ambiguous, exactly one POST', async (status) => {
    server.on('POST', '/service/history/production/history/9001', { status, body: { message: 'gateway' } });
    const err = await caught(client().history.create(9001, { start_date: '2026-11-01', end_date: '2026-11-02' }));
    expect(err.ambiguous).toBe(true);
    expect(err.status).toBe(status);
    expect(err.message).toContain('may have been applied');
    expect(server.seen('POST', '/service/history/production/history/9001')).toHaveLength(1);
  });

  test('a timeout on a create -> ambiguous, exactly one POST', async () => {
    server.on('POST', '/service/jobs/jobs/j-1', { status: 201, body: { data: { type: 'Job', id: 'j-2', attributes: {} } }, delayMs: 1000 });
    const err = await caught(client({ requestTimeoutMs: 150 }).jobs.createSecondary('j-1', {
      is_primary: false,
      valid_date_start: '2026-11-22',
      valid_date_end: '2026-11-22',
      stage_id: 1000,
      extra_context: '{"order_ids":[]}',
      request_start: 1,
      request_end: 0,
      schedule: '0 0 22 11 *',
    }));
    expect(err.ambiguous).toBe(true);
    expect(err.code).toBe('TIMEOUT');
    expect(server.seen('POST', '/service/jobs/jobs/j-1')).toHaveLength(1);
  });

  test('429 on a create is waited out and sent again (a rate-limit refusal: not applied)', async () => {
    server.on('POST', '/service/sp/notifications-unified/362', { status: 429, headers: { 'retry-after': '0' } },
      { status: 207, body: { type: 'SPAPINotifications', attributes: { subscriptions: { ORDER_CHANGE: 'up-1' }, failed: {}, meta: {} } } });
    const r = await client().notifications.create(362, { notification_types: ['ORDER_CHANGE'], role_arn: 'arn:r', aws_region: 'us-east-1' });
    expect(r.subscriptions).toEqual({ ORDER_CHANGE: 'up-1' });
    expect(server.seen('POST', '/service/sp/notifications-unified/362')).toHaveLength(2);
  });

  /** Every creating call of the client: the path it POSTs to and how to call it. */
  const CREATES: Array<[string, string, (c: DpiClient) => Promise<unknown>]> = [
    ['unified notification create', '/service/sp/notifications-unified/362',
      (c) => c.notifications.create(362, { notification_types: ['ORDER_CHANGE'], role_arn: 'arn:r', aws_region: 'us-east-1' })],
    ['subscription create (v2)', '/v2/sub', (c) => c.subscriptions.create(attrs)],
    ['subscription create (unversioned)', '/sub', (c) => c.subscriptions.createUnversioned({ ...attrs, subscription_product_meta_attributes: [] })],
    ['history create', '/service/history/production/history/9001', (c) => c.history.create(9001, { start_date: '2026-11-01', end_date: '2026-11-02' })],
    ['job create', '/service/jobs/jobs/j-1', (c) => c.jobs.createSecondary('j-1', {
      is_primary: false,
      valid_date_start: '2026-11-22',
      valid_date_end: '2026-11-22',
      stage_id: 1000,
      extra_context: '{"order_ids":[]}',
      request_start: 1,
      request_end: 0,
      schedule: '0 0 22 11 *',
    })],
  ];
  const FIVE_XX = [500, 502, 503, 504, 507];

  test.each(CREATES.flatMap(([what, path, call]) => FIVE_XX.map((status) => [what, status, path, call] as const)))(
    '%s answered %i -> ambiguous, sent exactly once, no wait', async (_what, status, path, call) => {
      // A Retry-After on the 503 does not make it safe: the POST may have been applied before the service gave up.
      server.on('POST', path, { status, headers: { 'retry-after': '1' }, body: { message: 'unavailable' } },
        { status: 201, body: SUB('9002') });
      const err = await caught(call(client()));
      expect(err).toMatchObject({ status, ambiguous: true, retryable: false, attempts: 1, serviceMessage: 'unavailable' });
      expect(err.message).toBe(`POST ${path} failed with ${status}: unavailable; the request may have been applied: look for what it made before trying again`);
      expect(server.seen('POST', path)).toHaveLength(1);
      expect(sleeps).toEqual([]);
    });

  test('a creating POST whose connection is refused before anything was sent is sent again (not applied)', async () => {
    server.on('POST', '/v2/sub', { status: 201, body: SUB('9003') });
    let refused = 0;
    const c = client({
      fetch: async (input, init) => {
        if (String(input).endsWith('/v2/sub') && refused === 0) {
          refused++;
          throw new TypeError('fetch failed', { cause: Object.assign(new Error('connect ECONNREFUSED 127.0.0.1:1'), { code: 'ECONNREFUSED' }) });
        }
        return fetch(input, init);
      },
    });
    expect((await c.subscriptions.create(attrs)).id).toBe('9003');
    expect(refused).toBe(1);
    expect(server.seen('POST', '/v2/sub')).toHaveLength(1);
    expect(logs.join('\n')).toMatch(/retry 2 POST \/v2\/sub after ECONNREFUSED/);
  });

  test('a creating POST reset after it was sent (ECONNRESET) is not sent again', async () => {
    let calls = 0;
    const c = client({
      fetch: async (input, init) => {
        if (String(input).endsWith('/v2/sub')) {
          calls++;
          throw new TypeError('fetch failed', { cause: Object.assign(new Error('socket hang up'), { code: 'ECONNRESET' }) });
        }
        return fetch(input, init);
      },
    });
    const err = await caught(c.subscriptions.create(attrs));
    expect(err).toMatchObject({ ambiguous: true, retryable: false, code: 'ECONNRESET', status: undefined });
    expect(calls).toBe(1);
  });

  test('a 401 on a create is re-authenticated and sent again (not applied)', async () => {
    server.on('POST', '/v2/sub', { status: 401 }, { status: 201, body: SUB('9002') });
    expect((await client().subscriptions.create(attrs)).id).toBe('9002');
    expect(server.seen('POST', '/v2/sub')).toHaveLength(2);
    expect(server.exchanges).toHaveLength(2);
  });

  test('a create answered 2xx with an unreadable body -> ambiguous, not repeated', async () => {
    server.on('POST', '/v2/sub', { status: 201, body: '<html>ok</html>' });
    const err = await caught(client().subscriptions.create(attrs));
    expect(err.ambiguous).toBe(true);
    expect(err.message).toMatch(/not JSON; the request was applied/);
    expect(server.seen('POST', '/v2/sub')).toHaveLength(1);
  });

  test('read-only POSTs (validate-asins) are retried after a lost response', async () => {
    server.on('POST', '/service/sp/validate-asins/362', { destroy: true }, { status: 200, body: { valid_asins: [], invalid_asins: ['B0'] } });
    expect(await client().marketplace.validateAsins(362, ['B0'])).toEqual({ valid_asins: [], invalid_asins: ['B0'] });
    expect(server.seen('POST', '/service/sp/validate-asins/362')).toHaveLength(2);
  });
});

describe('secrets never leak', () => {
  test('service messages echoing the token and refresh token are scrubbed', async () => {
    server.on('GET', '/account', (req) => ({
      status: 400,
      body: { errors: [{ detail: `bad header ${req.headers.authorization} for ${REFRESH}` }] },
    }));
    const err = await caught(client().account.get());
    const token = server.issuedTokens[0];
    for (const text of [err.message, JSON.stringify(err), String(err.serviceMessage), err.stack ?? '']) {
      expect(text).not.toContain(token);
      expect(text).not.toContain(REFRESH);
    }
    expect(err.message).toContain('bad header Bearer ***');
  });

  test('retry logs and exhausted errors carry no token', async () => {
    server.on('GET', '/account', (req) => ({ status: 503, body: { message: `echo ${req.headers.authorization}` } }));
    const err = await caught(client({ maxAttempts: 2 }).account.get());
    const token = server.issuedTokens[0];
    expect(logs.join('\n')).not.toContain(token);
    expect(err.message).not.toContain(token);
    expect(JSON.stringify(err)).not.toContain(token);
    expect(err.path).toBe('/account');
  });
});
