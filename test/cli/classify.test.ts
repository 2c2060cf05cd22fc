import { CASES } from './expected';
import { redact } from '../../src/cli/errors';
import { renderTable, sanitize } from '../../src/cli/format';
import { TxRecord } from '../../src/client';
import { CLASS_ORDER, classifyTx, latestById, summarise } from '../../src/client/classify';

describe('classifyTx: every TX status x sender of the spec', () => {
  test('the table covers 9 statuses x 4 senders', () => {
    expect(CASES).toHaveLength(36);
  });
  test.each(CASES)('%s %s -> %s', (sender, status, cls) => {
    expect(classifyTx(sender, status)).toBe(cls);
  });
  test.each([
    ['zeroadmin', 'processed'], // statuses are case-sensitive
    ['zeroadmin', 'DONE'],
    ['zeroadmin', undefined],
    ['loader', 'PROCESSED'], // a completion from a sender outside the spec is not a load
    [undefined, 'SUCCESS'],
  ])('%s %s -> unknown', (sender, status) => {
    expect(classifyTx(sender, status)).toBe('unknown');
  });
  test('a sender outside the spec still reports errors, progress, no data', () => {
    expect(classifyTx('loader', 'ERROR')).toBe('error');
    expect(classifyTx('loader', 'PROCESSING')).toBe('in-progress');
    expect(classifyTx('loader', 'NO_DATA')).toBe('no-data');
  });
});

const rec = (id: string, sender: string, status: string, extra: Partial<TxRecord> = {}): TxRecord =>
  ({ id, sender, status, payload_name: 'orders', attribution_date: '2026-11-20', timestamp: 1000, parent: '', children: [], ...extra });

describe('summarise', () => {
  test('the cell shows the most relevant class, in the documented order', () => {
    expect(CLASS_ORDER).toEqual(['error', 'retrying', 'unknown', 'in-progress', 'formatted-not-loaded', 'loaded', 'no-data', 'duplicate-skipped']);
    // Add records from the least to the most relevant: each addition must take over the cell.
    const pool: Array<[string, string]> = [
      ['ftpsync', 'IGNORED'], ['supervisor', 'NO_DATA'], ['zeroadmin', 'PROCESSED'], ['ftpsync', 'PROCESSED'],
      ['supervisor', 'PROCESSING'], ['zeroadmin', 'processed'], ['ftpsync', 'RETRY'], ['zeroadmin', 'ERROR'],
    ];
    const records: TxRecord[] = [];
    pool.forEach(([sender, status], i) => {
      records.push(rec(`t${i}`, sender, status));
      const s = summarise(records);
      expect(s.cells).toHaveLength(1);
      expect(s.cells[0].state).toBe([...CLASS_ORDER].reverse()[i]);
      expect(s.cells[0].records).toBe(i + 1);
    });
    const s = summarise(records);
    expect(s.hasError).toBe(true);
    expect(s.cells[0].counts).toEqual({
      'error': 1, 'retrying': 1, 'unknown': 1, 'in-progress': 1, 'formatted-not-loaded': 1, 'loaded': 1, 'no-data': 1, 'duplicate-skipped': 1,
    });
  });

  test('groups by attribution date x payload, newest date first, payloads sorted', () => {
    const s = summarise([
      rec('a', 'zeroadmin', 'PROCESSED', { attribution_date: '2026-11-19', payload_name: 'orders' }),
      rec('b', 'zeroadmin', 'ERROR', { attribution_date: '2026-11-20', payload_name: 'orders', error_code: 'E1', error_message: 'boom' }),
      rec('c', 'supervisor', 'NO_DATA', { attribution_date: '2026-11-20', payload_name: 'fees' }),
      rec('d', 'ftpsync', 'PROCESSED', { attribution_date: '', payload_name: '' }),
    ]);
    expect(s.cells.map((c) => [c.attribution_date, c.payload_name, c.state])).toEqual([
      ['2026-11-20', 'fees', 'no-data'],
      ['2026-11-20', 'orders', 'error'],
      ['2026-11-19', 'orders', 'loaded'],
      ['-', '-', 'formatted-not-loaded'],
    ]);
    expect(s.cells[1].errors).toEqual([{ id: 'b', sender: 'zeroadmin', error_code: 'E1', error_message: 'boom' }]);
  });

  test('a parent status is not derived from children: a PROCESSING root with loaded leaves is loaded', () => {
    const s = summarise([
      rec('root', 'scheduler', 'PROCESSING', { children: ['l1', 'l2'] }),
      rec('l1', 'zeroadmin', 'PROCESSED', { parent: 'root' }),
      rec('l2', 'zeroadmin', 'SUCCESS', { parent: 'root' }),
    ]);
    expect(s.cells[0].state).toBe('loaded');
    expect(s.considered).toBe(2);
  });

  test('a parent in ERROR or RETRY still counts (job-level problem); a root without children is its own leaf', () => {
    expect(summarise([
      rec('root', 'supervisor', 'ERROR', { children: ['l1'] }),
      rec('l1', 'zeroadmin', 'PROCESSED', { parent: 'root' }),
    ]).cells[0].state).toBe('error');
    expect(summarise([
      rec('root', 'supervisor', 'RETRY', { children: ['l1'] }),
      rec('l1', 'zeroadmin', 'PROCESSED', { parent: 'root' }),
    ]).cells[0].state).toBe('retrying');
    expect(summarise([rec('root', 'supervisor', 'PROCESSING')]).cells[0].state).toBe('in-progress');
  });

  test('a parent whose children are not in the listing is a leaf', () => {
    const s = summarise([rec('root', 'ftpsync', 'PROCESSED', { children: ['expired-child'] })]);
    expect(s.cells[0].state).toBe('formatted-not-loaded');
  });

  test('the same TX ID seen twice while paging counts once, newest snapshot', () => {
    const s = summarise([
      rec('t', 'zeroadmin', 'PROCESSED', { timestamp: 2000 }),
      rec('t', 'zeroadmin', 'ERROR', { timestamp: 1000 }),
    ]);
    expect(s.fetched).toBe(1);
    expect(s.cells[0].state).toBe('loaded');
    expect(s.hasError).toBe(false);
    expect(latestById([rec('x', 'a', 'B', { timestamp: 5 }), rec('x', 'a', 'C', { timestamp: 7 })])[0].status).toBe('C');
  });
});

describe('redact', () => {
  test('removes known secrets and JWT-shaped text', () => {
    expect(redact('a s3cr3t-token b eyJx.eyJy.zzz c', ['s3cr3t-token'])).toBe('a *** b *** c');
    expect(redact('short ab stays', ['ab'])).toBe('short ab stays');
  });
});

describe('sanitize', () => {
  test('control characters of service data become spaces; colour codes stay', () => {
    expect(sanitize('line1\nline2\tx\x1b]0;title\x07y')).toBe('line1 line2 x ]0;title y');
    expect(sanitize('\x1b[31merror\x1b[39m')).toBe('\x1b[31merror\x1b[39m');
    expect(renderTable(['A', 'B'], [['x\ny', 'z']])).toBe('A    B\nx y  z\n');
  });
});
