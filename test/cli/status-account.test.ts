/**
 * `dpi status` without `--subscription`: one row per subscription and payload of the account from the healthchecks
 * listing (one listing call), the summary line, --json, the filters mapped to the route's, and the fallback message
 * (exit 2, naming --subscription) where the route answers 404.
 */
import { addFixtures, CLI_FIXTURES, dpi, ingest, requests, clearRequests, REVOKED_IDENTITY, SUB, testNoSecretsPrinted, TxReport } from './helpers';
import { HEALTH_NOT_SHOWN } from '../../src/cli/identity-health';
import { RunningEmulator, startEmulator } from '../../src/emulator';
import { makeJwt, ScriptedServer } from '../client/scripted-server';

const NOW = 1763800000; // 2025-11-22T08:26:40Z
const now = (): number => NOW * 1000;
const SUB2 = 9002;
const HC = '/service/healthchecks/production/healthchecks/account/1001';

let emu: RunningEmulator;
let off: RunningEmulator;
beforeAll(async () => {
  const fixtures = {
    ...CLI_FIXTURES,
    subscriptions: [...CLI_FIXTURES.subscriptions!, { ...CLI_FIXTURES.subscriptions![0], id: SUB2, name: 'CLI fees' }],
  };
  emu = await startEmulator({ host: '127.0.0.1', port: 0, fixtures, now: NOW });
  off = await startEmulator({ host: '127.0.0.1', port: 0, fixtures, now: NOW, healthchecks: false });
  const tx = (id: string, sub: number, payload: string, sender: string, status: string, ago: number, extra: Partial<TxReport> = {}): TxReport =>
    ({ id, sender, status, subscription_id: sub, payload_name: payload, attribution_date: '2025-11-21', timestamp: NOW - ago, ...extra });
  for (const e of [emu, off]) {
    await ingest(e,
      tx('a', SUB, 'orders', 'zeroadmin', 'PROCESSED', 900),
      tx('b', SUB, 'items', 'zeroadmin', 'ERROR', 600, { error_code: 'LOAD_FAILED', error_message: 'table locked' }),
      tx('c', SUB2, 'fees', 'supervisor', 'NO_DATA', 300),
      tx('d', SUB2, 'returns', 'scheduler', 'PROCESSING', 100));
  }
});
afterAll(async () => {
  await emu.stop();
  await off.stop();
});
beforeEach(async () => {
  await clearRequests(emu);
  await clearRequests(off);
});

const status = (args: string[] = [], e: RunningEmulator = emu) => dpi(['status', ...args], { emu: e, now });

test('every subscription and payload of the account from one listing call; summary line; exit 1 on an ERROR row', async () => {
  const r = await status();
  // The spec's minimal reads carry no identity health: said once.
  expect(r.stderr).toBe(`${HEALTH_NOT_SHOWN}\n`);
  expect(r.code).toBe(1);
  const lines = r.stdout.trimEnd().split('\n');
  expect(lines[0]).toBe('account 1001: latest healthcheck per subscription and payload, at 2025-11-22T08:26:40Z');
  expect(lines[1].split(/\s{2,}/)).toEqual(['SUBSCRIPTION', 'NAME', 'PRODUCT', 'PAYLOAD', 'STATUS', 'LAST RUN', 'DETAIL']);
  expect(lines.slice(2, 5).map((l) => l.split(/\s{2,}/).slice(0, 5))).toEqual([
    ['9001', 'CLI orders', 'Marketplace Orders', 'items', 'ERROR'],
    ['9001', 'CLI orders', 'Marketplace Orders', 'orders', 'OK'],
    ['9002', 'CLI fees', 'Marketplace Orders', 'fees', 'OK'],
  ]);
  expect(lines[2]).toContain('LOAD_FAILED: table locked');
  expect(lines[5]).toBe('3 payloads of 2 subscriptions: 1 ERROR, 2 OK; 1 subscription with an ERROR');
  // One listing call (the account from the token's claim, or one GET /account), no transaction page.
  const seen = (await requests(emu)).filter((x) => x.path !== '/auth/api/ref');
  expect(seen.filter((x) => x.path === HC)).toHaveLength(1);
  expect(seen.filter((x) => x.path === '/service/transactions/tx')).toHaveLength(0);
  // ... and one identity list read (identity health).
  expect(seen.filter((x) => x.path === '/sri')).toHaveLength(1);
  expect(seen.length).toBeLessThanOrEqual(3);
});

test('--json, and the filters sent as the route\'s (payload_name, product_name__icontains, subscription_name__icontains, modified_at__gte); --status applied to the newest rows', async () => {
  const r = await status(['--json', '--status', 'OK', '--name', 'cli']);
  expect(r.code).toBe(0);
  const doc = JSON.parse(r.stdout);
  expect(doc).toMatchObject({
    account_id: 1001,
    source: 'healthchecks',
    generated_at: NOW,
    has_error: false,
    filters: { status: 'OK', subscription_name__icontains: 'cli' },
    summary: { payloads: 2, subscriptions: 2, by_status: { OK: 2 }, subscriptions_with_error: 0 },
  });
  expect(doc.rows.map((x: any) => [x.subscription_id, x.payload_name, x.status, x.last_run])).toEqual([
    ['9001', 'orders', 'OK', '2025-11-22T08:11:40'],
    ['9002', 'fees', 'OK', '2025-11-22T08:21:40'],
  ]);
  // No --days: no time filter is sent.
  expect(doc.filters).toEqual({ status: 'OK', subscription_name__icontains: 'cli' });
  const q = (await requests(emu, HC))[0].query;
  expect(q).toMatchObject({ subscription_name__icontains: 'cli' });
  expect(q.status).toBeUndefined();

  const more = await status(['--json', '--payload', 'items', '--product', 'ORDERS', '--days', '1']);
  expect(more.code).toBe(1);
  expect(JSON.parse(more.stdout).rows.map((x: any) => x.payload_name)).toEqual(['items']);
  expect((await requests(emu, HC))[1].query).toMatchObject({
    payload_name: 'items', product_name__icontains: 'ORDERS', modified_at__gte: '2025-11-21 08:26:40',
  });
  const none = await status(['--status', 'RETRY']);
  expect([none.code, none.stdout.split('\n')[1]]).toEqual([0, 'no healthcheck records']);
});

test('identity health: vendor reads name an invalid identity with its date (text and --json); exit code unchanged', async () => {
  const v = await startEmulator({ host: '127.0.0.1', port: 0, fixtures: CLI_FIXTURES, now: NOW, reads: 'vendor' });
  try {
    await addFixtures(v, { remoteIdentities: [REVOKED_IDENTITY] });
    await ingest(v, { id: 'a', sender: 'zeroadmin', status: 'PROCESSED', subscription_id: SUB, payload_name: 'orders', attribution_date: '2025-11-21', timestamp: NOW - 900 });
    const r = await status([], v);
    expect(r.code).toBe(0);
    expect(r.stderr).toBe('');
    const lines = r.stdout.trimEnd().split('\n');
    expect(lines[lines.length - 1]).toBe('1 invalid remote identity: 366 (Revoked seller) since 2024-01-01T00:00:00; its pipelines and subscriptions '
      + 'get no data: the seller must re-authorize it in the service\'s UI (or authorize a new identity and use its ID)');
    const doc = JSON.parse((await status(['--json'], v)).stdout);
    expect(doc.identities).toEqual({ health: 'known', invalid: [{ id: '366', name: 'Revoked seller', invalidated_at: '2024-01-01T00:00:00' }] });
    // Minimal reads: --json says unknown.
    expect(JSON.parse((await status(['--json'])).stdout).identities).toEqual({ health: 'unknown', invalid: [] });
  } finally {
    await v.stop();
  }
});

test('where the route answers 404: a message naming --subscription, exit 2, and no per-subscription paging', async () => {
  const r = await status([], off);
  expect(r.code).toBe(2);
  expect(r.stdout).toBe('');
  expect(r.stderr).toContain('dpi status --subscription <id>');
  expect(r.stderr).toContain('healthchecks');
  expect((await requests(off, '/service/transactions/tx'))).toHaveLength(0);
  // --subscription still works there, from the transactions.
  const one = await status(['--subscription', String(SUB), '--json'], off);
  expect(one.code).toBe(1);
  expect(JSON.parse(one.stdout).cells.map((c: any) => c.payload_name).sort()).toEqual(['items', 'orders']);
});

test('the account-wide filters are refused with --subscription (usage, exit 2)', async () => {
  const r = await status(['--subscription', String(SUB), '--status', 'ERROR']);
  expect(r.code).toBe(2);
  expect(r.stderr).toContain('--status applies to the whole account');
});

test('a service that answers a history of checks: only the newest row per subscription and payload is shown and counted (an old ERROR does not exit 1)', async () => {
  const server = await ScriptedServer.start();
  try {
    server.on('POST', '/auth/api/ref', { status: 200, body: { data: { attributes: { token: makeJwt({ account_id: 1001, exp: Math.ceil(Date.now() / 1000) + 3600 }) } } } });
    const rec = (id: number, sub: number, payload: string, state: string, at: string, extra: Record<string, unknown> = {}): object => ({
      id, subscription_id: sub, subscription_name: `s${sub}`, product_name: 'P', payload_name: payload, status: state, hc_runtime: at, modified_at: at, ...extra,
    });
    const listing = (...data: object[]): { status: number; body: object } => ({ status: 200, body: { data } });
    server.on('GET', HC, listing(
      // 9001/orders: ERROR, then OK (newer, listed first as a newest-first service would)
      rec(12, 9001, 'orders', 'OK', '2025-11-22 07:00:00'),
      rec(11, 9001, 'orders', 'ERROR', '2025-11-21 07:00:00', { err_msg: 'old failure' }),
      // 9002/fees: OK, then ERROR (newer, listed last)
      rec(21, 9002, 'fees', 'OK', '2025-11-20 07:00:00'),
      rec(22, 9002, 'fees', 'ERROR', '2025-11-22 06:00:00', { err_msg: 'new failure' }),
      rec(31, 9003, 'items', 'OK', '2025-11-22 05:00:00'),
    ));
    const run = (args: string[]) => dpi(['status', ...args], { env: { DPI_BASE_URL: server.url, DPI_REFRESH_TOKEN: 'rt' }, now });
    const r = await run(['--json']);
    expect(r.stderr).toBe('');
    expect(r.code).toBe(1); // 9002/fees's newest is ERROR
    const doc = JSON.parse(r.stdout);
    expect(doc.rows.map((x: any) => [x.subscription_id, x.payload_name, x.status, x.err_msg])).toEqual([
      ['9001', 'orders', 'OK', ''], ['9002', 'fees', 'ERROR', 'new failure'], ['9003', 'items', 'OK', ''],
    ]);
    expect(doc.summary).toEqual({ payloads: 3, subscriptions: 3, by_status: { ERROR: 1, OK: 2 }, subscriptions_with_error: 1 });

    // Without 9002's newer ERROR, only the old ERROR of 9001/orders is left in the history: exit 0.
    server.on('GET', HC, listing(
      rec(11, 9001, 'orders', 'ERROR', '2025-11-21 07:00:00', { err_msg: 'old failure' }),
      rec(12, 9001, 'orders', 'OK', '2025-11-22 07:00:00'),
    ));
    const ok = await run([]);
    expect([ok.code, ok.stderr]).toEqual([0, '']);
    expect(ok.stdout).toContain('1 payload of 1 subscription: 1 OK');
    expect(ok.stdout).not.toContain('old failure');

    // --status is applied to the newest check of each payload: 9001/orders's old OK is not shown as OK.
    server.on('GET', HC, listing(
      rec(42, 9001, 'orders', 'ERROR', '2025-11-22 07:00:00', { err_msg: 'new failure' }),
      rec(41, 9001, 'orders', 'OK', '2025-11-21 07:00:00'),
      rec(51, 9002, 'fees', 'OK', '2025-11-22 07:00:00'),
    ));
    const onlyOk = await run(['--status', 'OK', '--json']);
    expect(JSON.parse(onlyOk.stdout).rows.map((x: any) => [x.subscription_id, x.status])).toEqual([['9002', 'OK']]);
    const onlyErr = await run(['--status', 'ERROR', '--json']);
    expect(onlyErr.code).toBe(1);
    expect(JSON.parse(onlyErr.stdout).rows.map((x: any) => [x.subscription_id, x.status])).toEqual([['9001', 'ERROR']]);
  } finally {
    await server.close();
  }
});

testNoSecretsPrinted();
