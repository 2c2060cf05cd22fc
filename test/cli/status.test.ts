import { CASES } from './expected';
import { dpi, FakeSignals, fault, ingest, plain, requests, SUB, testNoSecretsPrinted, TxReport, useCliEmulator } from './helpers';
import { DEFAULT_REFRESH_TOKEN, RunningEmulator } from '../../src/emulator';

const NOW = 1763800000; // 2025-11-22T08:26:40Z
const now = (): number => NOW * 1000;
const TX_PATH = '/service/transactions/tx';

let emu: RunningEmulator;
useCliEmulator((started) => {
  emu = started;
}, { resetEach: true });

const tx = (id: string, sender: string, status: string, extra: Partial<TxReport> = {}): TxReport =>
  ({ id, sender, status, subscription_id: SUB, payload_name: 'orders', attribution_date: '2025-11-21', timestamp: NOW - 600, ...extra });

interface Cell { attribution_date: string; payload_name: string; state: string; counts: Record<string, number>; errors: unknown[] }
const status = (args: string[] = [], o: Parameters<typeof dpi>[1] = {}) =>
  dpi(['status', '--subscription', String(SUB), ...args], { emu, now, ...o });
async function cells(): Promise<{ code: number; cells: Cell[] }> {
  const r = await status(['--json']);
  expect(r.stderr).toBe('');
  return { code: r.code, cells: (JSON.parse(r.stdout) as { cells: Cell[] }).cells };
}

describe('dpi status classification', () => {
  test('every TX status x sender of the spec lands in its class (over real HTTP)', async () => {
    await ingest(emu, ...CASES.map(([sender, st], i) => tx(`t${i}`, sender, st, { payload_name: `${sender}/${st}`, error_code: st === 'ERROR' ? 'E1' : undefined })));
    const { code, cells: got } = await cells();
    expect(code).toBe(1); // some records are in ERROR
    const bySlot = Object.fromEntries(got.map((c) => [c.payload_name, c.state]));
    expect(bySlot).toEqual(Object.fromEntries(CASES.map(([sender, st, cls]) => [`${sender}/${st}`, cls])));
    expect(got.every((c) => c.attribution_date === '2025-11-21')).toBe(true);
  });

  test('merge: supervisor PROCESSING then zeroadmin PROCESSED -> loaded; a same-sender completion is kept against a later non-completed report', async () => {
    await ingest(emu, tx('a', 'supervisor', 'PROCESSING'));
    expect((await cells()).cells.map((c) => c.state)).toEqual(['in-progress']);
    await ingest(emu, tx('a', 'zeroadmin', 'PROCESSED'));
    let r = await cells();
    expect(r.cells.map((c) => [c.payload_name, c.state, c.counts])).toEqual([['orders', 'loaded', { loaded: 1 }]]);
    expect(r.code).toBe(0);

    await ingest(emu, tx('b', 'ftpsync', 'PROCESSED', { payload_name: 'order_items' }), tx('b', 'ftpsync', 'PROCESSING', { payload_name: 'order_items' }));
    r = await cells();
    expect(r.cells.map((c) => [c.payload_name, c.state])).toEqual([['order_items', 'formatted-not-loaded'], ['orders', 'loaded']]);
    // A lower sender cannot undo a load.
    await ingest(emu, tx('a', 'ftpsync', 'ERROR'));
    expect((await cells()).cells.find((c) => c.payload_name === 'orders')!.state).toBe('loaded');
  });

  test('a retry of the same TX ID replaces ERROR (exit code 1, then 0)', async () => {
    await ingest(emu, tx('r', 'zeroadmin', 'ERROR', { error_code: 'LOAD_FAILED', error_message: 'table locked' }));
    let r = await status();
    expect(r.code).toBe(1);
    expect(r.stdout).toContain('LOAD_FAILED: table locked (r, zeroadmin)');
    await ingest(emu, tx('r', 'zeroadmin', 'RETRY', { timestamp: NOW - 300 }));
    expect((await cells()).cells[0].state).toBe('retrying');
    await ingest(emu, tx('r', 'zeroadmin', 'PROCESSED', { timestamp: NOW - 200 }));
    r = await status();
    expect(r.code).toBe(0);
    expect(r.stdout).toContain('loaded');
    expect(r.stdout).not.toContain('ERROR');
  });

  test('parent status is not derived from children; NO_DATA and IGNORED are not loads', async () => {
    await ingest(emu,
      tx('job', 'scheduler', 'PROCESSING', { children: ['f1', 'f2'] }),
      tx('f1', 'zeroadmin', 'PROCESSED', { parent: 'job', subscription_id: undefined, payload_name: undefined }),
      tx('f2', 'zeroadmin', 'SUCCESS', { parent: 'job', subscription_id: undefined, payload_name: undefined }),
      tx('n', 'supervisor', 'NO_DATA', { payload_name: 'fees' }),
      tx('d', 'ftpsync', 'IGNORED', { payload_name: 'returns' }),
    );
    const { code, cells: got } = await cells();
    expect(code).toBe(0);
    expect(got.map((c) => [c.payload_name, c.state, c.counts])).toEqual([
      ['fees', 'no-data', { 'no-data': 1 }],
      ['orders', 'loaded', { loaded: 2 }], // children inherit payload and date; the PROCESSING parent is not counted
      ['returns', 'duplicate-skipped', { 'duplicate-skipped': 1 }],
    ]);
  });

  test('looks back --days days (timestamp_from), every page at limit 200', async () => {
    await ingest(emu,
      tx('recent', 'zeroadmin', 'PROCESSED', { timestamp: NOW - 86400 + 60 }),
      tx('older', 'zeroadmin', 'ERROR', { timestamp: NOW - 2 * 86400, attribution_date: '2025-11-19' }),
    );
    const one = await status(['--days', '1', '--json']);
    expect(one.code).toBe(0);
    expect((JSON.parse(one.stdout) as { cells: Cell[] }).cells.map((c) => c.attribution_date)).toEqual(['2025-11-21']);
    const three = await status();
    expect(three.code).toBe(1);
    const qs = (await requests(emu, TX_PATH)).map((x) => x.query);
    expect(qs).toEqual([
      { subscription_id: String(SUB), timestamp_from: String(NOW - 86400), limit: '200' },
      { subscription_id: String(SUB), timestamp_from: String(NOW - 3 * 86400), limit: '200' },
    ]);
    expect((await status(['--days', '0'])).code).toBe(2);
  });

  test('table text: plain when stdout is not a terminal, ANSI colours on a terminal (not with NO_COLOR)', async () => {
    await ingest(emu,
      tx('a', 'zeroadmin', 'PROCESSED', { timestamp: NOW - 100 }),
      tx('b', 'zeroadmin', 'ERROR', { payload_name: 'order_items', timestamp: NOW - 50, error_code: 'E9', error_message: 'denied' }),
    );
    const r = await status();
    expect(r.code).toBe(1);
    expect(r.stdout).toBe([
      'subscription 9001: last 3 days (since 2025-11-19T08:26:40Z), 2 records, at 2025-11-22T08:26:40Z',
      'ATTRIBUTION DATE  PAYLOAD      STATE   RECORDS   LAST UPDATE           DETAIL',
      '2025-11-21        order_items  error   1 error   2025-11-22T08:25:50Z  E9: denied (b, zeroadmin)',
      '2025-11-21        orders       loaded  1 loaded  2025-11-22T08:25:00Z',
      '1 record in ERROR',
      '',
    ].join('\n'));
    const tty = await status([], { isTTY: true });
    expect(tty.stdout).toContain('\x1b[31merror\x1b[39m');
    expect(tty.stdout).toContain('\x1b[32mloaded\x1b[39m');
    expect(plain(tty.stdout)).toBe(r.stdout);
    const noColour = await status([], { isTTY: true, env: { DPI_BASE_URL: emu.url, DPI_REFRESH_TOKEN: DEFAULT_REFRESH_TOKEN, NO_COLOR: '1' } });
    expect(noColour.stdout).toBe(r.stdout);
    // --no-color (before or after the command) and --color, like the cdk CLI.
    expect((await status(['--no-color'], { isTTY: true })).stdout).toBe(r.stdout);
    expect((await dpi(['--no-color', 'status', '--subscription', String(SUB)], { emu, now, isTTY: true })).stdout).toBe(r.stdout);
    expect((await status(['--color'])).stdout).toBe(tty.stdout);
  });

  test('no records: exit 0 with a message', async () => {
    const r = await status();
    expect(r.code).toBe(0);
    expect(r.stdout).toContain('no transactions in this period (records are kept 3 days)');
  });
});

describe('dpi status --watch', () => {
  test('refreshes in place on a terminal until interrupted; the exit code is that of the last refresh', async () => {
    await ingest(emu, tx('w', 'zeroadmin', 'ERROR', { error_code: 'E', error_message: 'first try failed' }));
    const signals = new FakeSignals();
    const sleeps: number[] = [];
    const sleep = async (ms: number): Promise<void> => {
      sleeps.push(ms);
      if (sleeps.length === 1) await ingest(emu, tx('w', 'zeroadmin', 'PROCESSED', { timestamp: NOW - 10 }));
      else signals.fire('SIGINT');
    };
    const r = await status(['--watch', '2'], { isTTY: true, sleep, onInterrupt: signals.onInterrupt });
    expect(sleeps).toEqual([2000, 2000]);
    expect(r.code).toBe(0);
    const frames = r.stdout.split('\x1b[2J\x1b[H').slice(1);
    expect(frames).toHaveLength(2);
    expect(plain(frames[0])).toContain('first try failed');
    expect(plain(frames[1])).toMatch(/orders\s+loaded/);
    expect(signals.listening).toBe(0);
  });

  test('keeps the error exit code, prints one JSON line per refresh, waits out a transient failure', async () => {
    await ingest(emu, tx('w', 'zeroadmin', 'ERROR'));
    await fault(emu, { pathPrefix: TX_PATH, status: 500, count: 1, body: { error: 'backend hiccup' } });
    const signals = new FakeSignals();
    let n = 0;
    const sleep = async (): Promise<void> => {
      if (++n === 3) signals.fire('SIGTERM');
    };
    const r = await status(['--watch', '1', '--json'], { sleep, onInterrupt: signals.onInterrupt });
    expect(r.stderr).toContain('500 service failure: GET /service/transactions/tx (service said: backend hiccup) (retrying in 1 s)');
    const lines = r.stdout.trim().split('\n');
    expect(lines).toHaveLength(2);
    for (const l of lines) expect((JSON.parse(l) as { has_error: boolean }).has_error).toBe(true);
    expect(r.code).toBe(1);
  });

  test('a non-transient failure (403) stops watching at once', async () => {
    const signals = new FakeSignals();
    const r = await dpi(['status', '--subscription', '8701', '--watch', '1'], { emu, now, sleep: async () => undefined, onInterrupt: signals.onInterrupt });
    expect(r.code).toBe(2);
    expect(r.stderr).toContain('not your subscription');
    expect(signals.listening).toBe(0);
  });
});

// Runs last (tests run in file order): secrets are never printed, error paths included.
testNoSecretsPrinted();
