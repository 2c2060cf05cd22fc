import { chmodSync, mkdtempSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { clearRequests, dpi, fault, ingest, requests, SUB, testNoSecretsPrinted, useCliEmulator } from './helpers';
import { DEFAULT_REFRESH_TOKEN, RunningEmulator } from '../../src/emulator';

const T0 = 1763712000; // 2025-11-21T08:00:00Z
const TX_PATH = '/service/transactions/tx';

let emu: RunningEmulator;
useCliEmulator((started) => {
  emu = started;
}, { resetEach: true });

describe('dpi tx', () => {
  test('merge rules: supervisor PROCESSING then zeroadmin PROCESSED shows zeroadmin PROCESSED; a same-sender completion is kept', async () => {
    await ingest(emu,
      { id: 'tx-a', sender: 'supervisor', status: 'PROCESSING', subscription_id: SUB, payload_name: 'orders', attribution_date: '2025-11-20', timestamp: T0 },
      { id: 'tx-a', sender: 'zeroadmin', status: 'PROCESSED', timestamp: T0 + 60 },
      { id: 'tx-b', sender: 'ftpsync', status: 'PROCESSED', subscription_id: SUB, payload_name: 'order_items', attribution_date: '2025-11-20', timestamp: T0 + 10 },
      { id: 'tx-b', sender: 'ftpsync', status: 'PROCESSING', timestamp: T0 + 70 },
    );
    const r = await dpi(['tx', '--subscription', String(SUB)], { emu });
    expect(r.stderr).toBe('');
    expect(r.code).toBe(0);
    expect(r.stdout).toBe([
      'ID    TIME                  SENDER     STATUS     PAYLOAD      ATTRIBUTION DATE  JOB  ERROR',
      'tx-b  2025-11-21T08:01:10Z  ftpsync    PROCESSED  order_items  2025-11-20        -    -',
      'tx-a  2025-11-21T08:01:00Z  zeroadmin  PROCESSED  orders       2025-11-20        -    -',
      '',
    ].join('\n'));
    const seen = await requests(emu, TX_PATH);
    expect(seen).toHaveLength(1);
    expect(seen[0].query).toEqual({ subscription_id: String(SUB) });
  });

  test('follows every page through empty pages (filters that skip most records, small --limit)', async () => {
    const reports = [];
    for (let i = 0; i < 30; i++) {
      const err = i % 10 === 3; // 3 errors among 30 records
      reports.push({
        id: `tx-${String(i).padStart(2, '0')}`,
        sender: 'zeroadmin',
        status: err ? 'ERROR' : 'PROCESSED',
        subscription_id: SUB,
        payload_name: 'orders',
        attribution_date: '2025-11-20',
        timestamp: T0 + i,
        ...(err ? { error_code: 'E', error_message: `failed ${i}` } : {}),
      });
    }
    await ingest(emu, ...reports);
    await clearRequests(emu);
    const r = await dpi(['tx', '--subscription', String(SUB), '--status', 'ERROR', '--limit', '4', '--json'], { emu });
    expect(r.code).toBe(0);
    const records = JSON.parse(r.stdout) as Array<{ id: string; status: string; error_message: string }>;
    expect(records.map((x) => x.id)).toEqual(['tx-23', 'tx-13', 'tx-03']);
    expect(records.every((x) => x.status === 'ERROR')).toBe(true);
    const seen = await requests(emu, TX_PATH);
    // 30 records evaluated 4 at a time: 8 pages, most of them empty after the filter, each with the same filter.
    expect(seen).toHaveLength(8);
    for (const q of seen.map((x) => x.query)) {
      expect(q.subscription_id).toBe(String(SUB));
      expect(q.status).toBe('ERROR');
      expect(q.limit).toBe('4');
      expect(q.tree).toBeUndefined();
    }
    expect(seen[0].query.cursor).toBeUndefined();
    expect(seen.slice(1).every((x) => typeof x.query.cursor === 'string')).toBe(true);
  });

  test('--status, --sender and --attribution-date are checked before any call, listing what is accepted (exit 2)', async () => {
    await clearRequests(emu);
    let r = await dpi(['tx', '--subscription', String(SUB), '--status', 'error'], { emu });
    expect(r.code).toBe(2);
    expect(r.stderr).toContain("--status: 'error' is not a transaction status; use one of UNPROCESSED, PROCESSING, IN_PROGRESS, RETRY, ERROR, PROCESSED, SUCCESS, NO_DATA, IGNORED");
    r = await dpi(['tx', '--subscription', String(SUB), '--sender', 'bogus'], { emu });
    expect(r.code).toBe(2);
    expect(r.stderr).toContain("--sender: 'bogus' is not a sender; use one of scheduler, supervisor, ftpsync, zeroadmin");
    r = await dpi(['tx', '--subscription', String(SUB), '--attribution-date', '2026/11/01'], { emu });
    expect(r.code).toBe(2);
    expect(r.stderr).toContain("--attribution-date: '2026/11/01' is not YYYY-MM-DD or YYYY-MM-DDTHH:MM");
    expect(await requests(emu, '/service/transactions/tx')).toEqual([]);
  });

  test('filters map to the wire names; --from/--to take Unix seconds or ISO time', async () => {
    await ingest(emu,
      { id: 'old', sender: 'zeroadmin', status: 'PROCESSED', subscription_id: SUB, payload_name: 'orders', attribution_date: '2025-11-19', job_id: 'j-1', timestamp: T0 - 3600 },
      { id: 'in', sender: 'zeroadmin', status: 'PROCESSED', subscription_id: SUB, payload_name: 'orders', attribution_date: '2025-11-19', job_id: 'j-1', timestamp: T0 },
    );
    const r = await dpi(['tx', '--subscription', String(SUB), '--from', '2025-11-21T07:30:00Z', '--to', String(T0 + 60),
      '--sender', 'zeroadmin', '--job-id', 'j-1', '--payload', 'orders', '--attribution-date', '2025-11-19', '--json'], { emu });
    expect(r.code).toBe(0);
    expect((JSON.parse(r.stdout) as Array<{ id: string }>).map((x) => x.id)).toEqual(['in']);
    const [q] = (await requests(emu, TX_PATH)).map((x) => x.query);
    expect(q).toEqual({
      subscription_id: String(SUB),
      timestamp_from: String(T0 - 1800),
      timestamp_to: String(T0 + 60),
      sender: 'zeroadmin',
      job_id: 'j-1',
      payload_name: 'orders',
      attribution_date: '2025-11-19',
    });
  });

  test('--tree prints the three-level tree from raw parent/children links (no tree=true), --depth cuts levels', async () => {
    await ingest(emu,
      { id: 'job-1', sender: 'scheduler', status: 'PROCESSING', subscription_id: SUB, payload_name: 'orders', attribution_date: '2025-11-20', job_id: 'j-9', timestamp: T0 },
      { id: 'file-1', sender: 'ftpsync', status: 'PROCESSED', parent: 'job-1', timestamp: T0 + 10 },
      { id: 'file-2', sender: 'ftpsync', status: 'ERROR', parent: 'job-1', timestamp: T0 + 20, error_code: 'F7', error_message: 'bad header' },
      { id: 'load-1', sender: 'zeroadmin', status: 'PROCESSED', parent: 'file-1', timestamp: T0 + 30 },
      { id: 'load-2', sender: 'zeroadmin', status: 'IN_PROGRESS', parent: 'file-1', timestamp: T0 + 40 },
      // A second root whose parent is not in the listing.
      { id: 'orphan', sender: 'zeroadmin', status: 'NO_DATA', subscription_id: SUB, parent: 'gone-away', payload_name: 'fees', attribution_date: '2025-11-20', timestamp: T0 + 50 },
    );
    const r = await dpi(['tx', '--subscription', String(SUB), '--tree', '--limit', '2'], { emu });
    expect(r.stderr).toBe('');
    expect(r.code).toBe(0);
    expect(r.stdout).toBe([
      'orphan  2025-11-21T08:00:50Z  zeroadmin NO_DATA  fees  2025-11-20',
      'job-1  2025-11-21T08:00:00Z  scheduler PROCESSING  orders  2025-11-20  job j-9',
      '├─ file-1  2025-11-21T08:00:10Z  ftpsync PROCESSED  orders  2025-11-20',
      '│  ├─ load-1  2025-11-21T08:00:30Z  zeroadmin PROCESSED  orders  2025-11-20',
      '│  └─ load-2  2025-11-21T08:00:40Z  zeroadmin IN_PROGRESS  orders  2025-11-20',
      '└─ file-2  2025-11-21T08:00:20Z  ftpsync ERROR  orders  2025-11-20  F7: bad header',
      '',
    ].join('\n'));
    const seen = await requests(emu, TX_PATH);
    expect(seen.length).toBeGreaterThan(1);
    expect(seen.every((x) => x.query.tree === undefined && x.query.tree_depth === undefined)).toBe(true);

    const cut = await dpi(['tx', '--subscription', String(SUB), '--tree', '--depth', '1'], { emu });
    expect(cut.stdout).toBe([
      'orphan  2025-11-21T08:00:50Z  zeroadmin NO_DATA  fees  2025-11-20',
      'job-1  2025-11-21T08:00:00Z  scheduler PROCESSING  orders  2025-11-20  job j-9',
      '├─ file-1  2025-11-21T08:00:10Z  ftpsync PROCESSED  orders  2025-11-20  [+2 below --depth]',
      '└─ file-2  2025-11-21T08:00:20Z  ftpsync ERROR  orders  2025-11-20  F7: bad header',
      '',
    ].join('\n'));

    // A filtered listing: children outside the set are marked, records whose parent is absent are roots.
    const part = await dpi(['tx', '--subscription', String(SUB), '--tree', '--sender', 'ftpsync'], { emu });
    expect(part.stdout).toBe([
      'file-2  2025-11-21T08:00:20Z  ftpsync ERROR  orders  2025-11-20  F7: bad header',
      'file-1  2025-11-21T08:00:10Z  ftpsync PROCESSED  orders  2025-11-20',
      '├─ load-1  (not in this listing: filtered out, outside the time range, or expired)',
      '└─ load-2  (not in this listing: filtered out, outside the time range, or expired)',
      '',
    ].join('\n'));
  });

  test('--parent lists the raw children of a TX', async () => {
    await ingest(emu,
      { id: 'p', sender: 'scheduler', status: 'PROCESSED', subscription_id: SUB, timestamp: T0 },
      { id: 'c1', sender: 'zeroadmin', status: 'PROCESSED', parent: 'p', timestamp: T0 + 1 },
      { id: 'x', sender: 'zeroadmin', status: 'PROCESSED', subscription_id: SUB, timestamp: T0 + 2 },
    );
    const r = await dpi(['tx', '--subscription', String(SUB), '--parent', 'p', '--json'], { emu });
    expect((JSON.parse(r.stdout) as Array<{ id: string; parent: string }>).map((x) => [x.id, x.parent])).toEqual([['c1', 'p']]);
    expect((await requests(emu, TX_PATH))[0].query.parent).toBe('p');
  });

  test('an empty listing says so; progress goes to stderr only on a terminal', async () => {
    const r = await dpi(['tx', '--subscription', String(SUB)], { emu });
    expect(r.stdout).toContain('no transactions for subscription 9001');
    expect(r.stderr).toBe('');
    await ingest(emu, { id: 'one', sender: 'zeroadmin', status: 'PROCESSED', subscription_id: SUB, timestamp: T0 });
    const tty = await dpi(['tx', '--subscription', String(SUB), '--json'], { emu, isTTY: { stdout: false, stderr: true } });
    expect(tty.stderr).toContain('fetched 1 record… (1 page)');
    expect(JSON.parse(tty.stdout)).toHaveLength(1);
  });
});

describe('dpi tx errors', () => {
  test('403: not your subscription (exit 2)', async () => {
    const r = await dpi(['tx', '--subscription', '8701'], { emu });
    expect(r.code).toBe(2);
    expect(r.stdout).toBe('');
    expect(r.stderr).toBe('dpi: 403 Forbidden: not your subscription, or --subscription missing (subscription 8701)\n');
  });

  test('422 names the parameter from the service message', async () => {
    await fault(emu, { pathPrefix: TX_PATH, status: 422, body: { errors: [{ detail: 'limit: out of range (1-200)' }] } });
    const r = await dpi(['tx', '--subscription', String(SUB)], { emu });
    expect(r.code).toBe(2);
    expect(r.stderr).toBe('dpi: 422 invalid query parameter (--limit): limit: out of range (1-200)\n');
  });

  test('500 in tree mode points at the raw --parent listing', async () => {
    await fault(emu, { pathPrefix: TX_PATH, status: 500, body: { error: 'tree expansion failed' } });
    const r = await dpi(['tx', '--subscription', String(SUB), '--tree'], { emu });
    expect(r.code).toBe(2);
    expect(r.stderr).toContain('a referenced child may have expired; inspect raw records with `dpi tx --subscription 9001 --parent <id>`');
  });

  test('usage errors exit 2 before any request', async () => {
    await clearRequests(emu);
    const cases: Array<[string[], string]> = [
      [['tx'], "required option '--subscription <id>' not specified"],
      [['tx', '--subscription', String(SUB), '--limit', '0'], '--limit: must be between 1 and 200, got 0'],
      [['tx', '--subscription', String(SUB), '--limit', '201'], '--limit: must be between 1 and 200, got 201'],
      [['tx', '--subscription', String(SUB), '--depth', '2'], '--depth is allowed only with --tree'],
      [['tx', '--subscription', String(SUB), '--from', 'yesterday'], '--from: expected Unix seconds or an ISO time'],
      [['tx', '--subscription', String(SUB), '--from', '2025-11-21', '--to', '2025-11-20'], '--from (2025-11-21T00:00:00Z) must not be after --to'],
      [['tx', '--subscription', 'abc'], "--subscription: expected an integer subscription ID, got 'abc'"],
      [['tx', '--subscription', String(SUB), '--bogus'], "unknown option '--bogus'"],
    ];
    for (const [args, msg] of cases) {
      const r = await dpi(args, { emu });
      expect([args, r.code]).toEqual([args, 2]);
      expect(r.stderr).toContain(msg);
    }
    expect(await requests(emu)).toEqual([]);
  });

  test('connection settings: clear messages when missing; per-service flags override DPI_BASE_URL', async () => {
    const none = await dpi(['products'], { env: {} });
    expect(none.code).toBe(2);
    expect(none.stderr).toContain('no service address: set DPI_BASE_URL or pass --base-url URL');
    const noToken = await dpi(['products'], { env: { DPI_BASE_URL: emu.url } });
    expect(noToken.code).toBe(2);
    expect(noToken.stderr).toContain('no refresh token: set DPI_REFRESH_TOKEN or pass --refresh-token-file FILE');
    const partial = await dpi(['products', '--subscriptions-url', emu.url], { env: { DPI_REFRESH_TOKEN: DEFAULT_REFRESH_TOKEN } });
    expect(partial.code).toBe(2);
    expect(partial.stderr).toContain('missing service address: --base-url / DPI_BASE_URL, --account-url / DPI_ACCOUNT_URL');

    // Every address given separately (the auth address by flag, the rest from the environment): works.
    const env = {
      DPI_REFRESH_TOKEN: DEFAULT_REFRESH_TOKEN,
      DPI_SUBSCRIPTIONS_URL: emu.url,
      DPI_ACCOUNT_URL: emu.url,
      DPI_USER_URL: emu.url,
      DPI_REMOTE_IDENTITY_URL: emu.url,
      DPI_BASE_URL: 'http://127.0.0.1:9',
    };
    const ok = await dpi(['storages', '--auth-url', emu.url, '--json'], { env });
    expect(ok.stderr).toBe('');
    expect(ok.code).toBe(0);
  });

  test('the refresh token: from a file; refused as a flag value and never echoed; a wrong token gives 401 without the token', async () => {
    const dir = mkdtempSync(join(tmpdir(), 'dpi-cli-'));
    const file = join(dir, 'token');
    writeFileSync(file, `${DEFAULT_REFRESH_TOKEN}\n`, { mode: 0o600 });
    const fromFile = await dpi(['storages', '--refresh-token-file', file, '--json'], { env: { DPI_BASE_URL: emu.url } });
    expect(fromFile.code).toBe(0);
    expect((JSON.parse(fromFile.stdout) as Array<{ id: string }>).map((s) => s.id)).toEqual(['501']);

    const flag = await dpi(['storages', `--refresh-token=${DEFAULT_REFRESH_TOKEN}`], { env: { DPI_BASE_URL: emu.url } });
    expect(flag.code).toBe(2);
    expect(flag.stderr).toContain('--refresh-token is not accepted');
    const flag2 = await dpi(['tx', '--subscription', String(SUB), '--refresh-token', DEFAULT_REFRESH_TOKEN], { env: { DPI_BASE_URL: emu.url } });
    expect(flag2.code).toBe(2);
    expect(flag2.stderr).toContain('--refresh-token is not accepted');

    const wrong = 'wrong-refresh-token-0123456789';
    const bad = await dpi(['tx', '--subscription', String(SUB)], { env: { DPI_BASE_URL: emu.url, DPI_REFRESH_TOKEN: wrong } });
    expect(bad.code).toBe(2);
    expect(bad.stderr).toContain('authentication failed: the refresh token was rejected');
    expect(bad.stdout + bad.stderr).not.toContain(wrong);
    writeFileSync(file, wrong);
    const badFile = await dpi(['status', '--subscription', String(SUB), '--refresh-token-file', file], { env: { DPI_BASE_URL: emu.url } });
    expect(badFile.code).toBe(2);
    expect(badFile.stderr).toContain('authentication failed');
    expect(badFile.stdout + badFile.stderr).not.toContain(wrong);
    const missing = await dpi(['storages', '--refresh-token-file', join(dir, 'nope')], { env: { DPI_BASE_URL: emu.url } });
    expect(missing.stderr).toContain('--refresh-token-file: cannot read');
    expect(missing.code).toBe(2);
    // A token file others may read is refused, like an ssh private key (the token is not echoed).
    const shared = join(dir, 'shared-token');
    writeFileSync(shared, `${DEFAULT_REFRESH_TOKEN}\n`, { mode: 0o644 });
    chmodSync(shared, 0o644);
    const open = await dpi(['storages', '--refresh-token-file', shared], { env: { DPI_BASE_URL: emu.url } });
    expect(open.code).toBe(2);
    expect(open.stderr).toContain(`--refresh-token-file: ${shared} is readable or writable by other users (mode 0644): `
      + `a file holding the refresh token must be its owner's alone: chmod 600 ${shared}`);
    expect(open.stdout + open.stderr).not.toContain(DEFAULT_REFRESH_TOKEN);
  });

  test('an unreachable service: exit 2 with the address, not the token', async () => {
    const r = await dpi(['identities'], { env: { DPI_BASE_URL: 'http://user:pw@127.0.0.1:9', DPI_REFRESH_TOKEN: DEFAULT_REFRESH_TOKEN } });
    expect(r.code).toBe(2);
    expect(r.stderr).toContain('cannot reach the service at http://127.0.0.1:9');
    expect(r.stderr).not.toContain('pw@');
  });
});

// Runs last (tests run in file order): secrets are never printed, error paths included.
testNoSecretsPrinted();
