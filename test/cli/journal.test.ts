/**
 * `dpi journal show|resolve` against the dpi local-deploy journal (--local), written the way the handler writes it.
 */
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { dpi } from './helpers';
import { DpiClient, endpointsFromBase } from '../../src/client';
import { DEFAULT_REFRESH_TOKEN, RunningEmulator, startEmulator, SubscriptionFixture } from '../../src/emulator';
import { dynamoJournal, Journal } from '../../src/handler/journal';
import { startJournalServer } from '../../src/local/journal-server';

const KEY = 'MarketplaceData/SellerNotifications8C79AC32';
let dir: string;
beforeEach(async () => {
  dir = mkdtempSync(join(tmpdir(), 'dpi-journal-cli-'));
  // What a unified create whose answer was lost leaves: a `posting` record (and an older, finished one).
  const server = await startJournalServer({ stateFile: join(dir, 'journal.json') });
  const j = dynamoJournal({ create: true, table: 'dpi-lifecycle-journal', endpoint: server.endpoint, sleep: (ms) => new Promise((r) => setTimeout(r, ms)) });
  const old = await j.create(KEY, 'active', { identity: '362' }, '9001');
  await j.save(old, 'deleted', old.doc);
  await j.create(KEY, 'posting', { identity: '362', postUnclear: 'UND_ERR_SOCKET' });
  await server.stop();
});
afterEach(() => rmSync(dir, { recursive: true, force: true }));

const local = ['--local', '--state', (): string => join(dir, 'local-state.json')];
const args = (...a: Array<string | (() => string)>): string[] => a.map((x) => (typeof x === 'function' ? x() : x));

test('show prints the records of a resource; --json for scripts', async () => {
  const r = await dpi(args('journal', 'show', KEY, ...local), { env: {} });
  expect(r.code).toBe(0);
  const lines = r.stdout.trim().split('\n');
  expect(lines).toHaveLength(2);
  expect(lines[0]).toMatch(/ deleted +9001 /);
  expect(lines[1]).toMatch(/ posting +- .*identity 362, unclear: UND_ERR_SOCKET$/);
  const j = await dpi(args('journal', 'show', KEY, ...local, '--json'), { env: {} });
  expect((JSON.parse(j.stdout) as Array<{ state: string }>).map((x) => x.state)).toEqual(['deleted', 'posting']);
});

test('show of a key without records exits 2 naming the key, the journal and dpi journal list (also with --json)', async () => {
  for (const json of [[], ['--json']]) {
    const none = await dpi(args('journal', 'show', 'Other/Resource', ...local, ...json), { env: {} });
    expect(none.code).toBe(2);
    expect(none.stdout).toBe('');
    expect(none.stderr).toBe(`dpi: no journal records for key 'Other/Resource' in ${join(dir, 'journal.json')}: a key is <stack name>/<logical ID> `
      + 'as the handler\'s messages name it (a fleet pipeline\'s is its JournalKey); run dpi journal list --prefix \'Other/\' with the same options '
      + 'to see the keys it has\n');
  }
  // An existing key still exits 0.
  expect((await dpi(args('journal', 'show', KEY, ...local), { env: {} })).code).toBe(0);
});

test('list prints every key with its record count and latest state; --prefix narrows it; --json for scripts', async () => {
  const server = await startJournalServer({ stateFile: join(dir, 'journal.json') });
  try {
    const j = dynamoJournal({ create: true, table: 'dpi-lifecycle-journal', endpoint: server.endpoint, sleep: (ms) => new Promise((r) => setTimeout(r, ms)) });
    await j.create('OtherStack/Sub1', 'active', { subscriptionId: '77' }, '77');
  } finally {
    await server.stop();
  }
  const r = await dpi(args('journal', 'list', ...local), { env: {} });
  expect(r.code).toBe(0);
  const rows = r.stdout.trim().split('\n').map((l) => l.split(/ {2,}/));
  expect(rows.map((x) => x.slice(0, 4))).toEqual([
    ['KEY', 'RECORDS', 'LATEST STATE', 'PHYSICAL ID'],
    [KEY, '2', 'posting', '-'],
    ['OtherStack/Sub1', '1', 'active', '77'],
  ]);
  const some = JSON.parse((await dpi(args('journal', 'list', ...local, '--prefix', 'OtherStack/', '--json'), { env: {} })).stdout) as Array<{ key: string; records: number; state: string }>;
  expect(some.map((k) => [k.key, k.records, k.state])).toEqual([['OtherStack/Sub1', 1, 'active']]);
  const none = await dpi(args('journal', 'list', ...local, '--prefix', 'Nothing/'), { env: {} });
  expect(none.code).toBe(0);
  expect(none.stdout).toBe(`no records with a key that starts with Nothing/ in ${join(dir, 'journal.json')}\n`);
});

test('resolve marks the unconfirmed attempt abandoned (once: a second resolve has nothing to do and exits 2)', async () => {
  const r = await dpi(args('journal', 'resolve', KEY, ...local), { env: {} });
  expect(r.code).toBe(0);
  expect(r.stdout).toMatch(new RegExp(`^resolved 1 attempt\\(s\\) of ${KEY} in .*journal\\.json: `));
  const after = await dpi(args('journal', 'show', KEY, ...local, '--json'), { env: {} });
  expect((JSON.parse(after.stdout) as Array<{ state: string }>).map((x) => x.state)).toEqual(['deleted', 'abandoned']);
  const again = await dpi(args('journal', 'resolve', KEY, ...local), { env: {} });
  expect(again.code).toBe(2);
  expect(again.stderr).toContain(`${KEY} has no attempt without a confirmed outcome`);
});

test('a corrupt local journal is named, exit 2', async () => {
  writeFileSync(join(dir, 'journal.json'), '{');
  const r = await dpi(args('journal', 'show', KEY, ...local), { env: {} });
  expect(r.code).toBe(2);
  expect(r.stderr).toContain(join(dir, 'journal.json'));
});

test('scan reads every record under a key prefix and every claim', async () => {
  const server = await startJournalServer({ stateFile: join(dir, 'journal.json') });
  try {
    const j = dynamoJournal({ create: true, table: 'dpi-lifecycle-journal', endpoint: server.endpoint, sleep: (ms) => new Promise((r) => setTimeout(r, ms)) });
    await j.create('OtherStack/Sub1', 'active', { subscriptionId: '77' }, '77');
    await j.claim('sub', '77', 'OtherStack/Sub1');
    const all = await j.scan();
    expect(all.records.map((r) => `${r.key} ${r.state}`)).toEqual([
      `${KEY} deleted`, `${KEY} posting`, 'OtherStack/Sub1 active',
    ]);
    expect(all.claims).toEqual([{ kind: 'sub', id: '77', owner: 'OtherStack/Sub1' }]);
    const some = await j.scan('OtherStack/');
    expect(some.records.map((r) => r.key)).toEqual(['OtherStack/Sub1']);
    expect(some.claims).toHaveLength(1);
  } finally {
    await server.stop();
  }
});

describe('resolve checks subscription creates and history requests against the service first', () => {
  const SUB_KEY = 'MarketplaceData/OrdersSubscriptionA1B2C3D4';
  const HIST_KEY = 'MarketplaceData/OrdersBackfillE5F6A7B8';
  const sub = (id: number, status = 'active', remoteIdentity = 362): SubscriptionFixture => ({
    id,
    account: 1001,
    user: 2001,
    product: 3001,
    name: `orders ${id}`,
    status,
    date_start: '2026-01-01T00:00:00Z',
    remote_identity: remoteIdentity,
    storage_group: 501,
    product_parameters: { remote_identity_id: String(remoteIdentity), marketplace_id: 'ATVPDKIKX0DER' },
  });
  let emu: RunningEmulator | undefined;
  afterEach(async () => {
    await emu?.stop();
    emu = undefined;
  });
  const service = (): Record<string, string> => ({ DPI_BASE_URL: emu!.url, DPI_REFRESH_TOKEN: DEFAULT_REFRESH_TOKEN });

  /** Writes journal records the way the handler does, with the local journal server. */
  async function withJournal<T>(fn: (j: Journal) => Promise<T>): Promise<T> {
    const server = await startJournalServer({ stateFile: join(dir, 'journal.json') });
    try {
      return await fn(dynamoJournal({ create: true, table: 'dpi-lifecycle-journal', endpoint: server.endpoint, sleep: (ms) => new Promise((r) => setTimeout(r, ms)) }));
    } finally {
      await server.stop();
    }
  }
  /** A subscription create whose answer was lost: `recording`, with the product's subscriptions listed before the POST. */
  const recording = (before: string[] | undefined): Promise<string> => withJournal(async (j) => {
    const doc = { product: 3001, identity: '362', ...(before ? { attempt: { product: 3001, before, startedAt: '2026-11-23T12:00:00.000Z' } } : {}) };
    const r = await j.create(SUB_KEY, 'recording', doc);
    // The invocation that sent the POST stopped holding the product's creates lock.
    if (before) expect(await j.lock('sub#3001', `${SUB_KEY}|${r.id}`, '2000-01-01T00:00:00.000Z')).toBeUndefined();
    return r.id;
  });
  const states = (key: string): Promise<string[]> => withJournal(async (j) => (await j.records(key)).map((r) => r.state));

  test('a subscription that appeared since the create and that no other resource claims: refused, naming it; nothing changed (exit 2)', async () => {
    emu = await startEmulator({ fixtures: { subscriptions: [sub(9001), sub(9002)] } });
    const id = await recording(['9001']);
    const r = await dpi(args('journal', 'resolve', SUB_KEY, ...local), { env: service() });
    expect(r.code).toBe(2);
    expect(r.stderr).toContain(`dpi: ${SUB_KEY}: not resolved, nothing was changed: attempt ${id} (recording: a product-3001 subscription create) `
      + 'may have made subscription 9002 (active): listed now, not among the 1 listed before its POST, and claimed by no other resource; '
      + 'deploy again: the handler resolves it');
    expect(r.stderr).not.toContain('9001');
    expect(r.stdout).toBe('');
    expect(await states(SUB_KEY)).toEqual(['recording']);
    expect(r.stdout + r.stderr).not.toContain(DEFAULT_REFRESH_TOKEN);
  });

  test('an attempt narrowed to its identity (identity, identityBefore) is checked with the same filter: another identity\'s subscription is no candidate', async () => {
    // 9002 is of identity 363, made (e.g. in the web UI) after the attempt's list of identity 362's subscriptions.
    emu = await startEmulator({ fixtures: { subscriptions: [sub(9001), sub(9002, 'active', 363)] } });
    await withJournal((j) => j.create(SUB_KEY, 'recording', {
      product: 3001, identity: '362', attempt: { product: 3001, identity: '362', identityBefore: ['9001'], startedAt: '2026-11-23T12:00:00.000Z' },
    }));
    const r = await dpi(args('journal', 'resolve', SUB_KEY, ...local), { env: service() });
    expect(r.stderr).not.toContain('9002');
    expect(r.code).toBe(0);
    expect(await states(SUB_KEY)).toEqual(['abandoned']);
    const seen = (await (await fetch(`${emu.url}/_emulator/requests`)).json()) as Array<{ path: string; query: Record<string, string> }>;
    expect(seen.filter((x) => x.path === '/v2/sub').map((x) => x.query)).toEqual([expect.objectContaining({ product: '3001', remote_identity: '362' })]);
    expect(emu.state().subscriptions.find((x) => x.id === 9002)!.status).toBe('active');
  });

  test('a notification pipeline whose unified create was answered is never abandoned, even with --keep-candidates', async () => {
    emu = await startEmulator();
    await withJournal((j) => j.create(SUB_KEY, 'recording', {
      identity: '362', selection: { types: ['ORDER_CHANGE'] }, result: { subscriptions: { ORDER_CHANGE: 'u-1' }, failed: {}, meta: {} },
    }));
    const r = await dpi(args('journal', 'resolve', SUB_KEY, ...local, '--keep-candidates'), { env: service() });
    expect(r.code).toBe(2);
    expect(r.stderr).toContain('belongs to a notification pipeline that exists');
    expect(await states(SUB_KEY)).toEqual(['recording']);
  });

  test('several candidates: refused, naming them all; --keep-candidates resolves and leaves every one of them as it is', async () => {
    emu = await startEmulator({ fixtures: { subscriptions: [sub(9001), sub(9002), sub(9003)] } });
    await recording(['9001']);
    const r = await dpi(args('journal', 'resolve', SUB_KEY, ...local), { env: service() });
    expect(r.code).toBe(2);
    expect(r.stderr).toContain('may have made subscriptions 9002 (active), 9003 (active): listed now, not among the 1 listed before its POST, '
      + 'and claimed by no other resource; it made one of them at most, and the others are not this stack\'s: set the one this resource made '
      + 'invalid in the service, then resolve again with --keep-candidates');
    expect(await states(SUB_KEY)).toEqual(['recording']);
    const kept = await dpi(args('journal', 'resolve', SUB_KEY, ...local, '--keep-candidates'), { env: service() });
    expect(kept.code).toBe(0);
    expect(kept.stderr).toContain('left as it is in the service (--keep-candidates)');
    expect(await states(SUB_KEY)).toEqual(['abandoned']);
    expect(emu.state().subscriptions.filter((x) => x.id >= 9001).map((x) => x.status)).toEqual(['active', 'active', 'active']);
  });

  test('claimed by this resource (an earlier delivery claimed it, then stopped): refused too', async () => {
    emu = await startEmulator({ fixtures: { subscriptions: [sub(9001), sub(9002)] } });
    await recording(['9001']);
    await withJournal((j) => j.claim('sub', '9002', SUB_KEY));
    const r = await dpi(args('journal', 'resolve', SUB_KEY, ...local), { env: service() });
    expect(r.code).toBe(2);
    expect(r.stderr).toContain('may have made subscription 9002 (active)');
  });

  test.each([
    ['claimed by another resource', [sub(9001), sub(9002)], true],
    ['set invalid (removed)', [sub(9001), sub(9002, 'invalid')], false],
    ['paused (a create makes an active one)', [sub(9001), sub(9002, 'paused')], false],
    ['of another identity', [sub(9001), sub(9002, 'active', 363)], false],
    ['listed before the create', [sub(9001), sub(9002)], false],
  ])('a new subscription %s is no candidate: abandoned as before, the creates lock released', async (what, subs, claimed) => {
    // Only the vendor's reads show a subscription's identity (the spec's show `id` and `status`).
    emu = await startEmulator({ fixtures: { subscriptions: subs }, reads: what === 'of another identity' ? 'vendor' : 'minimal' });
    const id = await recording(what === 'listed before the create' ? ['9001', '9002'] : ['9001']);
    if (claimed) await withJournal((j) => j.claim('sub', '9002', 'OtherStack/Orders'));
    const r = await dpi(args('journal', 'resolve', SUB_KEY, ...local), { env: service() });
    expect(r.stderr).toContain(`checked ${id}: no product-3001 subscription appeared since its create that no other resource claims`);
    expect(r.code).toBe(0);
    expect(r.stdout).toMatch(new RegExp(`^resolved 1 attempt\\(s\\) of ${SUB_KEY} in .*: ${id}; `));
    expect(await states(SUB_KEY)).toEqual(['abandoned']);
    // Another create of the product gets the lock at once (it no longer waits for the attempt's lock to go stale).
    expect(await withJournal((j) => j.lock('sub#3001', 'OtherStack/Orders|r-2', '2000-01-01T00:00:00.000Z'))).toBeUndefined();
  });

  test('an attempt narrowed to its identity releases the identity\'s creates lock', async () => {
    emu = await startEmulator({ fixtures: { subscriptions: [sub(9001)] } });
    const id = await withJournal(async (j) => {
      const r = await j.create(SUB_KEY, 'recording', {
        product: 3001, identity: '362', attempt: { product: 3001, identity: '362', identityBefore: ['9001'], startedAt: '2026-11-23T12:00:00.000Z' },
      });
      expect(await j.lock('sub#3001', `${SUB_KEY}|${r.id}`, '2000-01-01T00:00:00.000Z', '362')).toBeUndefined();
      return r.id;
    });
    const r = await dpi(args('journal', 'resolve', SUB_KEY, ...local), { env: service() });
    expect(r.code).toBe(0);
    expect(r.stdout).toContain(id);
    expect(await withJournal((j) => j.lock('sub#3001', 'OtherStack/Orders|r-2', '2000-01-01T00:00:00.000Z', '362'))).toBeUndefined();
  });

  test('a record without the list before its create (an older handler) is abandoned as before, without asking the service', async () => {
    await recording(undefined);
    const r = await dpi(args('journal', 'resolve', SUB_KEY, ...local), { env: {} });
    expect(r.code).toBe(0);
    expect(await states(SUB_KEY)).toEqual(['abandoned']);
  });

  test('a create to check and no service to ask: refused, saying how to give it (exit 2)', async () => {
    const id = await recording(['9001']);
    const r = await dpi(args('journal', 'resolve', SUB_KEY, ...local), { env: {} });
    expect(r.code).toBe(2);
    expect(r.stderr).toContain(`${SUB_KEY}: attempt ${id} (recording) may have made a service record; checking it needs the service: set DPI_BASE_URL`);
    expect(await states(SUB_KEY)).toEqual(['recording']);
  });

  test('--local without a service address asks the embedded emulator of dpi local-deploy (emulator-state.json beside --state)', async () => {
    const seeded = await startEmulator({ stateFile: join(dir, 'emulator-state.json'), fixtures: { subscriptions: [sub(9001), sub(9002)] } });
    await seeded.stop();
    await recording(['9001']);
    const r = await dpi(args('journal', 'resolve', SUB_KEY, ...local), { env: {} });
    expect(r.code).toBe(2);
    expect(r.stderr).toContain('may have made subscription 9002 (active)');
  });

  test('every attempt is checked before any is abandoned: one refusal leaves the others as they were', async () => {
    emu = await startEmulator({ fixtures: { subscriptions: [sub(9001), sub(9002)] } });
    await withJournal(async (j) => {
      await j.create(SUB_KEY, 'posting', { identity: '362', postUnclear: 'HTTP 503' });
      await j.create(SUB_KEY, 'recording', { product: 3001, identity: '362', attempt: { product: 3001, before: ['9001'], startedAt: '2026-11-23T12:00:00.000Z' } });
    });
    const r = await dpi(args('journal', 'resolve', SUB_KEY, ...local), { env: service() });
    expect(r.code).toBe(2);
    expect(await states(SUB_KEY)).toEqual(['posting', 'recording']);
  });

  test('a history request the POST may have made: refused naming it; once it is cancelled, abandoned', async () => {
    emu = await startEmulator({ fixtures: { subscriptions: [sub(9001)] } });
    const client = new DpiClient({ endpoints: endpointsFromBase(emu.url), refreshToken: DEFAULT_REFRESH_TOKEN });
    const known = (await client.history.statusBySubscription(9001)).map((h) => String(h.id));
    const id = await withJournal(async (j) => (await j.create(HIST_KEY, 'creating', { request: '["9001"]', subscriptionId: '9001', known })).id);
    const yesterday = new Date(Date.now() - 86_400_000).toISOString().slice(0, 10);
    const h = await client.history.create(9001, { start_date: yesterday, end_date: yesterday });
    const r = await dpi(args('journal', 'resolve', HIST_KEY, ...local), { env: service() });
    expect(r.code).toBe(2);
    expect(r.stderr).toContain(`attempt ${id} (creating: a history request for subscription 9001) may have made history request ${h.id} (${h.status})`);
    expect(r.stderr).toContain('deploy again: the handler resolves it (if it is not wanted, cancel it first; then resolve again)');
    expect(await states(HIST_KEY)).toEqual(['creating']);
    await client.history.cancel(String(h.id));
    const again = await dpi(args('journal', 'resolve', HIST_KEY, ...local), { env: service() });
    expect(again.code).toBe(0);
    expect(await states(HIST_KEY)).toEqual(['abandoned']);
  });

  test('a history record whose POST was never sent (no list before it) is abandoned without asking the service', async () => {
    await withJournal((j) => j.create(HIST_KEY, 'creating', { request: '["9001"]', subscriptionId: '9001' }));
    const r = await dpi(args('journal', 'resolve', HIST_KEY, ...local), { env: {} });
    expect(r.code).toBe(0);
    expect(await states(HIST_KEY)).toEqual(['abandoned']);
  });
});
