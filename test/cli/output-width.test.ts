import { dpi, useCliEmulator } from './helpers';
import { renderStackDrift } from '../../src/cli/commands/drift-render';
import { Orphan, renderOrphans } from '../../src/cli/commands/orphans-judge';
import { renderTable, terminalWidth, visibleLength, wrapLine } from '../../src/cli/format';
import { waitLine, waitReporter } from '../../src/cli/waits';
import { DEFAULT_REFRESH_TOKEN, RunningEmulator } from '../../src/emulator';
import type { DriftRow } from '../../src/handler/drift-types';
import { formatEvent, renderSummary, SummaryRow } from '../../src/local/output';
import { DEFAULT_OUTPUT_WIDTH, fitColumns, MIN_OUTPUT_WIDTH, outputWidth, tableWidth } from '../../src/local/width';

const WIDTHS = [60, 80];
const long = (prefix: string, n: number): string => `${prefix}-${'x'.repeat(n)}-end`;

/** The lines of a text (or lines) wider than `width`, with their widths: empty when every line fits. */
function tooWide(text: string | string[], width: number): string[] {
  const lines = Array.isArray(text) ? text : text.split('\n');
  return lines.filter((l) => visibleLength(l) > width).map((l) => `${visibleLength(l)}: ${l}`);
}

describe('the width output fits', () => {
  test('the terminal\'s columns, else COLUMNS, else 100; never below 60', () => {
    expect(outputWidth(72, {})).toBe(72);
    expect(outputWidth(72, { COLUMNS: '90' })).toBe(72);
    expect(outputWidth(undefined, { COLUMNS: '80' })).toBe(80);
    expect(outputWidth(undefined, { COLUMNS: ' 66 ' })).toBe(66);
    expect(outputWidth(undefined, {})).toBe(DEFAULT_OUTPUT_WIDTH);
    expect(outputWidth(undefined, { COLUMNS: 'wide' })).toBe(DEFAULT_OUTPUT_WIDTH);
    expect(outputWidth(undefined, { COLUMNS: '0' })).toBe(DEFAULT_OUTPUT_WIDTH);
    expect(outputWidth(40, {})).toBe(MIN_OUTPUT_WIDTH);
    expect(outputWidth(undefined, { COLUMNS: '20' })).toBe(MIN_OUTPUT_WIDTH);
    expect(outputWidth(250, {})).toBe(250);
  });

  test('dpi takes stdout\'s columns only when stdout is a terminal', () => {
    expect(terminalWidth({ isTTY: { stdout: true, stderr: false }, columns: 70, env: { COLUMNS: '90' } })).toBe(70);
    expect(terminalWidth({ isTTY: { stdout: false, stderr: false }, columns: 70, env: { COLUMNS: '90' } })).toBe(90);
    // redirected without COLUMNS: tables are not fitted (scripts read every cell); progress lines fit 100
    expect(terminalWidth({ isTTY: { stdout: false, stderr: true }, env: {} })).toBeUndefined();
    expect(terminalWidth({ isTTY: { stdout: true, stderr: true }, env: {} })).toBeUndefined();
    expect(terminalWidth({ isTTY: { stdout: true, stderr: true }, columns: 30, env: {} })).toBe(60);
    expect(tableWidth(undefined, { COLUMNS: '0' })).toBeUndefined();
    expect(tableWidth(undefined, { COLUMNS: '72' })).toBe(72);
  });

  test('fitColumns shrinks the widest column first and keeps short columns whole', () => {
    expect(fitColumns([5, 80, 10], [2, 6, 6], 60)).toEqual([5, 41, 10]);
    expect(fitColumns([5, 20, 10], [2, 6, 6], 60)).toEqual([5, 20, 10]);
    // two long columns share the room
    expect(fitColumns([50, 50], [4, 4], 60)).toEqual([29, 29]);
  });
});

describe.each(WIDTHS)('every line fits %i columns', (width) => {
  test('a dpi table of long and coloured cells (tx\'s eight columns)', () => {
    const red = (s: string): string => `\x1b[31m${s}\x1b[39m`;
    const text = renderTable(
      ['ID', 'TIME', 'SENDER', 'STATUS', 'PAYLOAD', 'ATTRIBUTION DATE', 'JOB', 'ERROR'],
      [
        ['98765', '2026-11-20T08:00:00Z', long('sender', 30), red('ERROR'), long('payload', 40), '2026-11-19', '55', long('error', 80)],
        ['98766', '2026-11-20T08:05:00Z', 'orders', 'OK', 'orders', '2026-11-19', '-', '-'],
      ],
      width,
    );
    expect(tooWide(text, width)).toEqual([]);
    expect(text.split('\n')[0]).toMatch(/^ID\s+TIME\s+SENDER/);
    expect(text).toContain('98765');
    expect(text).toContain('…');
  });

  test('dpi drift\'s table', () => {
    const rows: DriftRow[] = [{
      stack: 'Orders',
      logicalId: long('SellerPipeline', 30),
      key: 'k',
      type: 'Custom::DpiNotificationPipeline',
      physicalId: long('pipeline-1234', 30),
      status: 'MODIFIED',
      notChecked: [],
      differences: [{ property: 'notificationTypes', declared: long('ORDER_CHANGE', 40), live: long('REPORT', 40) }],
    }];
    expect(tooWide(renderStackDrift('Orders', rows, true, undefined, false, width), width)).toEqual([]);
  });

  test('dpi orphans\' table', () => {
    const orphan: Orphan = {
      key: long('OldStack/SellerPipeline', 30),
      type: 'Custom::DpiNotificationPipeline',
      record: 'r',
      state: 'created',
      why: long('the stack OldStack no longer exists', 30),
      verdict: 'retained',
      serviceIds: ['sub 1234', 'identity 362'],
      holds: long('an active pipeline with 3 upstream types', 20),
      kept: 'removal policy RETAIN',
    };
    expect(tooWide(renderOrphans([orphan]), width).length).toBeGreaterThan(0); // without a width: as wide as its cells
    expect(tooWide(renderOrphans([orphan], 'kept', width), width)).toEqual([]);
  });

  test('local-deploy\'s progress lines (long nested stack names, long reasons)', () => {
    const nested = `Fleet-Sellers3NestedStackSellers3NestedStackResource${'A1B2C3D4'}`;
    const lines = [
      formatEvent({
        stack: nested,
        time: '2026-11-20T08:00:00.000Z',
        status: 'UPDATE_ROLLBACK_COMPLETE_CLEANUP_IN_PROGRESS',
        type: 'Custom::DpiLegacyNotificationPipeline',
        logicalId: long('Seller362Pipeline', 40),
      }, width),
      formatEvent({
        stack: 'MyStack',
        time: '2026-11-20T08:00:00.000Z',
        status: 'CREATE_FAILED',
        type: 'Custom::DpiSubscription',
        logicalId: 'Orders',
        reason: `remote identity 362 not found: ${'a long reason '.repeat(12)}`,
      }, width),
    ];
    expect(tooWide(lines.join('\n'), width)).toEqual([]);
  });

  test('local-deploy\'s summary table (long physical IDs and attributes)', () => {
    const rows: SummaryRow[] = [{
      stack: long('Fleet-Sellers3', 20),
      logicalId: long('Seller362Pipeline', 20),
      type: 'Custom::DpiNotificationPipeline',
      physicalId: long('107-362', 40),
      attributes: { BucketName: long('dpi-notifications', 30), Prefix: 'seller-362/', SubscribedTypes: 'ORDER_CHANGE,REPORT' },
    }];
    const lines = renderSummary(rows, width);
    expect(tooWide(lines, width)).toEqual([]);
    // the physical ID keeps its start and its end
    expect(lines[2]).toMatch(/107-3\S*…\S*-end/);
    expect(renderSummary(rows).some((l) => l.length > width)).toBe(true);
  });
});

describe.each(WIDTHS)('the rate-limit wait lines at %i columns', (width) => {
  test('wrapped to the width (continuation lines indented), whole without a known width', () => {
    const lines: string[] = [];
    const io = { stderr: { write: (t: string) => lines.push(t) }, isTTY: { stdout: false, stderr: false }, env: { COLUMNS: String(width) } };
    const report = waitReporter(io,
      () => '120 of 325 resources read');
    report({ method: 'GET', path: '/v2/sub/9001', waitMs: 120_000, refusals: 2 });
    const text = lines.join('');
    expect(tooWide(text.replace(/\n$/, ''), width)).toEqual([]);
    expect(text.split('\n').length).toBeGreaterThan(2);
    expect(text.replace(/\n {4}/g, ' ')).toBe(`${waitLine({ method: 'GET', path: '/v2/sub/9001', waitMs: 120_000, refusals: 2 }, '120 of 325 resources read')}\n`);
    expect(wrapLine('a b', undefined)).toBe('a b');
  });
});

describe('a command\'s table through dpi', () => {
  let emu: RunningEmulator;
  useCliEmulator((e) => {
    emu = e;
  });
  const env = (): Record<string, string> => ({ DPI_BASE_URL: emu.url, DPI_REFRESH_TOKEN: DEFAULT_REFRESH_TOKEN });

  test.each(WIDTHS)('dpi status (one subscription, the account) with COLUMNS=%i: every line of stdout fits', async (width) => {
    for (const args of [['status', '--subscription', '9001'], ['status']]) {
      const r = await dpi(args, { env: { ...env(), COLUMNS: String(width) } });
      expect(r.code).toBe(0);
      expect(r.stdout).toMatch(/^(subscription 9001|account \d+): /);
      expect(tooWide(r.stdout, width)).toEqual([]);
    }
  });

  test.each(WIDTHS)('dpi products with COLUMNS=%i: every line fits', async (width) => {
    const r = await dpi(['products'], { env: { ...env(), COLUMNS: String(width) } });
    expect(r.code).toBe(0);
    expect(r.stdout).toContain('3001');
    expect(tooWide(r.stdout, width)).toEqual([]);
  });

  test('a terminal of 60 columns (stdout\'s width) wins over COLUMNS; redirected without COLUMNS, the table is whole', async () => {
    const tty = await dpi(['products'], { env: { ...env(), COLUMNS: '200', NO_COLOR: '1' }, isTTY: true, columns: 60 });
    expect(tooWide(tty.stdout, 60)).toEqual([]);
    const whole = await dpi(['products'], { env: env() });
    expect(whole.stdout).toContain('remote_identity_id, subscriptions, meta');
    expect(tooWide(whole.stdout, 80).length).toBeGreaterThan(0);
  });
});
