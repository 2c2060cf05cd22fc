import { existsSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { createSub, Harness, ORDERS_SUB, useHarness } from './helpers';
import { DEFAULT_FIXTURES, loadFixturesFile, startEmulator } from '../../src/emulator';

let h: Harness;
useHarness((started) => {
  h = started;
});

describe('admin API', () => {
  test('reset returns to the default fixtures', async () => {
    await createSub(h, ORDERS_SUB);
    expect((await h.state()).subscriptions).toHaveLength(3);
    expect((await h.admin('POST', '/reset')).status).toBe(204);
    const st = await h.state();
    expect(st.subscriptions.map((s: any) => s.id)).toEqual([8601, 8701]);
    expect(st.historyMaxRequests).toBe(3);
  });

  test('fixtures merge records and return counts; invalid fixtures -> 400', async () => {
    const r = await h.admin('POST', '/fixtures', {
      accounts: [{ id: 1003, name: 'Third' }],
      users: [{ id: 2003, account: 1003 }],
      refreshTokens: [{ token: 'third-token', accountId: 1003, userId: 2003 }],
      storages: [{ id: 601, account: 1003 }],
      historyMaxRequests: 7,
    });
    expect(r.status).toBe(200);
    expect(r.body.loaded).toEqual({ accounts: 1, users: 1, refreshTokens: 1, storages: 1, historyMaxRequests: 1 });
    const t = await h.exchange('third-token');
    expect((await h.api('GET', '/account', undefined, t)).body.data).toEqual({ type: 'Account', id: '1003' });
    expect((await h.state()).accounts).toContainEqual({ id: 1003, name: 'Third' });
    expect((await h.api('GET', '/storages?status=active', undefined, t)).body.data.map((s: any) => s.id)).toEqual(['601']);
    expect((await h.admin('POST', '/fixtures', { nonsense: [] })).status).toBe(400);
    expect((await h.admin('POST', '/fixtures', { accounts: [{ name: 'no id' }] })).status).toBe(400);
    expect((await h.admin('POST', '/fixtures', { accounts: {} })).status).toBe(400);
    expect((await h.admin('POST', '/fixtures', '[1,2]')).status).toBe(400);
  });

  test('faults: status, count, Retry-After, method and prefix; cleared by DELETE', async () => {
    await h.admin('POST', '/faults', { method: 'GET', pathPrefix: '/account', status: 429, count: 2, retryAfter: 3 });
    const a = await h.api('GET', '/account');
    expect(a.status).toBe(429);
    expect(a.headers.get('retry-after')).toBe('3');
    expect((await h.api('GET', '/user')).status).toBe(200);
    expect((await h.api('GET', '/account')).status).toBe(429);
    expect((await h.api('GET', '/account')).status).toBe(200);
    await h.admin('POST', '/faults', { pathPrefix: '/account', status: 503, count: 5 });
    expect((await h.api('GET', '/account')).status).toBe(503);
    expect((await h.admin('DELETE', '/faults')).status).toBe(204);
    expect((await h.api('GET', '/account')).status).toBe(200);
    expect((await h.admin('POST', '/faults', { pathPrefix: 'account', status: 500 })).status).toBe(400);
    expect((await h.admin('POST', '/faults', { pathPrefix: '/x', status: 42 })).status).toBe(400);
  });

  test('faults: delay and dropped connections', async () => {
    await h.admin('POST', '/faults', { pathPrefix: '/user', delayMs: 150, count: 1 });
    const t0 = Date.now();
    expect((await h.api('GET', '/user')).status).toBe(200);
    expect(Date.now() - t0).toBeGreaterThanOrEqual(140);
    await h.admin('POST', '/faults', { pathPrefix: '/user', status: 0, count: 1 });
    await expect(h.api('GET', '/user')).rejects.toThrow();
    expect((await h.api('GET', '/user')).status).toBe(200);
  });

  test('faults: hold keeps a request, unhandled, until the test releases it (oldest first); clearing releases all, a reset drops them', async () => {
    const held = async (n: number): Promise<void> => {
      for (let i = 0; i < 500 && (await h.admin('GET', '/faults/held')).body.held !== n; i++) await new Promise((r) => setTimeout(r, 5));
      expect((await h.admin('GET', '/faults/held')).body.held).toBe(n);
    };
    await h.admin('POST', '/faults', { method: 'POST', pathPrefix: '/v2/sub', hold: true, count: 2 });
    const first = createSub(h, { ...ORDERS_SUB, name: 'held-1' });
    await held(1);
    const second = createSub(h, { ...ORDERS_SUB, name: 'held-2' });
    await held(2);
    // Held before it is handled: nothing applied yet; other routes answer meanwhile.
    expect((await h.state()).subscriptions.filter((s: any) => String(s.name).startsWith('held-'))).toEqual([]);
    expect((await h.api('GET', '/v2/sub')).status).toBe(200);
    expect((await h.admin('POST', '/faults/release', { count: 1 })).body).toEqual({ released: 1, held: 1 });
    const id1 = await first;
    expect((await h.state()).subscriptions.filter((s: any) => String(s.name).startsWith('held-')).map((s: any) => s.id)).toEqual([id1]);
    expect((await h.admin('POST', '/faults/release', {})).body).toEqual({ released: 1, held: 0 });
    expect(await second).toBeGreaterThan(id1);
    // With a status, the released request gets it; DELETE /faults and reset release what is held.
    await h.admin('POST', '/faults', { pathPrefix: '/user', hold: true, status: 503, count: 1 });
    const refused = h.api('GET', '/user');
    await held(1);
    expect((await h.admin('DELETE', '/faults')).status).toBe(204);
    expect((await refused).status).toBe(503);
    // A reset releases it too, but it belonged to the discarded state: dropped (a network error), not handled.
    await h.admin('POST', '/faults', { pathPrefix: '/user', hold: true });
    const answered = h.api('GET', '/user').then((r) => r.status, () => 'network error');
    await held(1);
    expect((await h.admin('POST', '/reset')).status).toBe(204);
    expect(await answered).toBe('network error');
    await held(0);
    // Invalid.
    expect((await h.admin('POST', '/faults', { pathPrefix: '/user', hold: 'yes' })).status).toBe(400);
    expect((await h.admin('POST', '/faults/release', { count: 0 })).status).toBe(400);
  });

  test('faults: dropResponse applies the request, logs its real status, then drops the connection', async () => {
    const f = await h.admin('POST', '/faults', { method: 'POST', pathPrefix: '/v2/sub', dropResponse: true });
    expect(f.status).toBe(200);
    expect(f.body.faults).toEqual([expect.objectContaining({ pathPrefix: '/v2/sub', dropResponse: true, count: 1 })]);
    await h.admin('DELETE', '/requests');
    const before = (await h.api('GET', '/v2/sub')).body.data.length;
    await expect(createSub(h, { ...ORDERS_SUB, name: 'lost-response' })).rejects.toThrow();
    // The server applied it: the subscription exists.
    const list = (await h.api('GET', '/v2/sub')).body.data;
    expect(list).toHaveLength(before + 1);
    expect((await h.state()).subscriptions.filter((s: any) => s.name === 'lost-response')).toHaveLength(1);
    const log = (await h.admin('GET', '/requests')).body.filter((r: any) => r.method === 'POST' && r.path === '/v2/sub');
    expect(log.map((r: any) => r.status)).toEqual([201]);
    // One-shot: the next create answers normally.
    expect((await h.admin('GET', '/faults')).body.faults).toEqual([]);
    expect(await createSub(h, { ...ORDERS_SUB, name: 'second' })).toBeGreaterThan(0);
    // A request the service rejects is still handled (logged with its 4xx) and its answer lost.
    await h.admin('POST', '/faults', { pathPrefix: '/v2/sub', dropResponse: true });
    await expect(h.api('POST', '/v2/sub', { data: { type: 'Subscription', attributes: { account: 1001 } } })).rejects.toThrow();
    expect((await h.admin('GET', '/requests')).body.at(-1)).toMatchObject({ method: 'POST', path: '/v2/sub', status: 400 });
    // Invalid combinations.
    expect((await h.admin('POST', '/faults', { pathPrefix: '/v2/sub', dropResponse: true, status: 500 })).status).toBe(400);
    expect((await h.admin('POST', '/faults', { pathPrefix: '/v2/sub', dropResponse: 'yes' })).status).toBe(400);
  });

  test('clock: now and advance', async () => {
    expect((await h.admin('POST', '/clock', { now: 2_000_000_000 })).body.now).toBe(2_000_000_000);
    const r = await h.admin('POST', '/clock', { advance: 10 });
    expect(r.body.now).toBeGreaterThanOrEqual(2_000_000_010);
    expect(r.body.now).toBeLessThan(2_000_000_013);
    // Fractions add up exactly (the runner's emulator-clock waits advance by the milliseconds a handler would sleep).
    await h.admin('POST', '/clock', { now: 2_100_000_000 });
    for (let i = 0; i < 8; i++) await h.admin('POST', '/clock', { advance: 0.25 });
    const two = (await h.admin('GET', '/clock')).body.now;
    expect(two).toBeGreaterThanOrEqual(2_100_000_002);
    expect(two).toBeLessThan(2_100_000_004);
    expect((await h.admin('POST', '/clock', { later: 1 })).status).toBe(400);
    await h.admin('POST', '/clock', { now: Math.floor(Date.now() / 1000) });
  });

  test('request log records method, path, query and status; DELETE clears it', async () => {
    await h.admin('DELETE', '/requests');
    await h.api('GET', '/v2/product?is_storage_product=0');
    await h.raw('GET', '/account');
    const log = (await h.admin('GET', '/requests')).body;
    expect(log.map((e: any) => [e.method, e.path, e.status])).toEqual([['GET', '/v2/product', 200], ['GET', '/account', 401]]);
    expect(log[0].query).toEqual({ is_storage_product: '0' });
    expect(typeof log[0].time).toBe('number');
  });

  test('robustness: unknown route 404 JSON, malformed JSON 400 JSON, wrong content 400', async () => {
    const nf = await h.api('GET', '/no/such/route');
    expect(nf.status).toBe(404);
    expect(nf.body.errors[0].detail).toBe('GET /no/such/route');
    const bad = await h.api('POST', '/v2/sub', '{"data":');
    expect(bad.status).toBe(400);
    expect(bad.body.errors[0].title).toBe('Bad Request');
    const txt = await h.raw('POST', '/v2/sub', 'hello', { 'content-type': 'text/plain', 'authorization': `Bearer ${h.token}` });
    expect(txt.status).toBe(400);
    expect((await h.api('POST', '/v2/sub', [1, 2])).status).toBe(400);
    const proto = await h.admin('POST', '/fixtures', '{"accounts":[{"id":1009,"__proto__":{"polluted":true}}]}');
    expect(proto.status).toBe(200);
    expect(({} as any).polluted).toBeUndefined();
  });

  test('state includes customer-cloud resources and upstream subscriptions', async () => {
    const st = await h.state();
    for (const k of ['cloud', 'destinations', 'upstreamSubscriptions', 'pipelines', 'legacyPipelines', 'transactions', 'history', 'jobs', 'now']) {
      expect(st).toHaveProperty(k);
    }
    expect(h.emu.state().subscriptions.length).toBe(st.subscriptions.length);
  });
});

describe('options', () => {
  test('fixtures option merges over defaults; DEFAULT_FIXTURES exported', async () => {
    const emu = await startEmulator({ fixtures: { historyMaxRequests: 9 } });
    try {
      expect(emu.url).toMatch(/^http:\/\/127\.0\.0\.1:\d+$/);
      expect(emu.state().historyMaxRequests).toBe(9);
      expect(emu.state().products.length).toBe(DEFAULT_FIXTURES.products!.length);
    } finally {
      await emu.stop();
    }
  });

  test('stateFile: saved after mutations and on stop, loaded at start', async () => {
    const dir = mkdtempSync(join(tmpdir(), 'emu-'));
    const file = join(dir, 'state.json');
    try {
      const a = await Harness.start({ stateFile: file });
      const res = await a.api('POST', '/v2/sub', {
        data: { attributes: { account: 1001, user: 2001, status: 'active', date_start: '2026-01-01T00:00:00Z', product: 4001 } },
      });
      expect(res.status).toBe(201);
      const id = res.body.data.id;
      expect(existsSync(file)).toBe(true);
      expect(JSON.parse(readFileSync(file, 'utf8')).state.subscriptions.map((s: any) => String(s.id))).toContain(id);
      await a.stop();
      const b = await Harness.start({ stateFile: file });
      try {
        expect((await b.api('GET', `/sub/${id}`)).status).toBe(200);
      } finally {
        await b.stop();
      }
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
  });

  test('one emulator per state file: a second start is refused while the first runs (each would overwrite the other), a dead holder\'s lock is taken over', async () => {
    const dir = mkdtempSync(join(tmpdir(), 'emu-'));
    const file = join(dir, 'state.json');
    try {
      const a = await startEmulator({ stateFile: file });
      expect(readFileSync(`${file}.lock`, 'utf8').trim()).toBe(String(process.pid));
      await expect(startEmulator({ stateFile: file })).rejects.toThrow(/state\.json is in use by another emulator \(pid \d+\).*stop it first/);
      await a.stop();
      expect(existsSync(`${file}.lock`)).toBe(false);
      // A lock left by a process that is gone (a killed emulator) does not keep the file.
      // A process ID above any kernel's pid_max (2^22): no process has it.
      writeFileSync(`${file}.lock`, '2147483646\n');
      const b = await startEmulator({ stateFile: file });
      expect(readFileSync(`${file}.lock`, 'utf8').trim()).toBe(String(process.pid));
      await b.stop();
      // A state file in a folder that does not exist yet (a first local-deploy's .dpi/): the lock makes the folder.
      const nested = join(dir, 'new', 'state.json');
      const c = await startEmulator({ stateFile: nested });
      expect(readFileSync(`${nested}.lock`, 'utf8').trim()).toBe(String(process.pid));
      await c.stop();
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
  });

  test('an unreadable state file fails the start with a clear error', async () => {
    const dir = mkdtempSync(join(tmpdir(), 'emu-'));
    try {
      const file = join(dir, 'state.json');
      writeFileSync(file, '{broken');
      await expect(startEmulator({ stateFile: file })).rejects.toThrow(/cannot load emulator state file/);
      writeFileSync(file, '{}');
      await expect(startEmulator({ stateFile: file })).rejects.toThrow(/no state object/);
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
  });

  test('loadFixturesFile reads JSON and reports errors clearly', () => {
    const dir = mkdtempSync(join(tmpdir(), 'emu-'));
    try {
      const f = join(dir, 'f.json');
      writeFileSync(f, JSON.stringify({ historyMaxRequests: 4 }));
      expect(loadFixturesFile(f)).toEqual({ historyMaxRequests: 4 });
      writeFileSync(f, '{oops');
      expect(() => loadFixturesFile(f)).toThrow(/not valid JSON/);
      expect(() => loadFixturesFile(join(dir, 'missing.json'))).toThrow(/cannot read/);
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
  });

  test('numeric admin inputs out of range are 400, not 500', async () => {
    const tx = await h.admin('POST', '/tx', { id: 'huge', sender: 'supervisor', status: 'PROCESSING', timestamp: 1e308 });
    expect(tx.status).toBe(400);
    expect(tx.body.errors[0].detail).toMatch(/timestamp/);
    expect((await h.admin('POST', '/tx', { id: 'sub', sender: 'supervisor', status: 'PROCESSING', subscription_id: 1e308 })).status).toBe(400);
    expect((await h.admin('POST', '/clock', { now: 1e308 })).status).toBe(400);
    expect((await h.admin('POST', '/clock', { advance: 1e308 })).status).toBe(400);
    expect((await h.admin('POST', '/faults', { pathPrefix: '/x', status: 500, count: 1e308 })).status).toBe(400);
    expect((await h.admin('POST', '/faults', { pathPrefix: '/x', status: 503, retryAfter: 1e308 })).status).toBe(400);
    expect((await h.admin('POST', '/fixtures', { accounts: [{ id: 1e308 }] })).status).toBe(400);
    expect((await h.admin('POST', '/fixtures', { failingCleanupSubscriptions: [1e308] })).status).toBe(400);
    expect((await h.admin('GET', '/faults')).body.faults).toEqual([]);
  });
});
