/**
 * The request budget of a `dpi` command (src/cli/budget.ts): the pace it takes (--request-budget, DPI_REQUEST_BUDGET,
 * the documented limit), that it shares the provider containers' budget in the journal table (same service address:
 * the handler's turns count against the command's), and that a table it cannot use is said once on stderr, never in
 * the command's output, and the command goes on.
 */
import { useCliEmulator } from './helpers';
import { cliBudget, cliPace, DOCUMENTED_BUDGET } from '../../src/cli/budget';
import { BUDGET_TABLE_ENV, connect, ConnectionFlags } from '../../src/cli/connection';
import { CliError } from '../../src/cli/errors';
import { waitLine } from '../../src/cli/waits';
import { endpointsFromBase } from '../../src/client';
import { paceOf } from '../../src/client/budget';
import { DEFAULT_REFRESH_TOKEN, RunningEmulator } from '../../src/emulator';
import { dynamoBudget } from '../../src/handler/rate-budget';
import { createJournalTable, useJournalServer } from '../journal-server';

const journal = useJournalServer();
const sleep = async (): Promise<void> => undefined;

interface FakeIo {
  env: Record<string, string>;
  stdout: { write: (s: string) => boolean };
  stderr: { write: (s: string) => boolean };
  err: string[];
  out: string[];
}

function io(): FakeIo {
  const err: string[] = [];
  const out: string[] = [];
  return { env: {}, err, out, stdout: { write: (s) => out.push(s) > 0 }, stderr: { write: (s) => err.push(s) > 0 } };
}

test('the pace: --request-budget, else DPI_REQUEST_BUDGET, else the documented 1,000 per 5 minutes; off; a bad value names its source', () => {
  expect(cliPace(undefined, {})).toEqual(paceOf(1000, 300_000));
  expect(DOCUMENTED_BUDGET).toBe('1000/300');
  expect(cliPace(undefined, { DPI_REQUEST_BUDGET: '50/10' })).toEqual(paceOf(50, 10_000));
  expect(cliPace('20/5', { DPI_REQUEST_BUDGET: '50/10' })).toEqual(paceOf(20, 5_000));
  expect(cliPace('off', {})).toBeUndefined();
  expect(() => cliPace('lots', {})).toThrow(CliError);
  expect(() => cliPace(undefined, { DPI_REQUEST_BUDGET: 'x' })).toThrow('DPI_REQUEST_BUDGET must be');
});

test('a command shares the provider containers\' budget of the same address: their turns count against its own', async () => {
  const table = 'cli-budget-journal';
  await createJournalTable(journal.endpoint, table);
  const pace = paceOf(3, 60_000);
  const container = dynamoBudget({ table, endpoint: journal.endpoint, sleep, provided: true }, 'https://api.example.com', pace);
  for (let i = 0; i < 3; i++) expect(await container.reserve(1_000)).toBe(0);
  const o = io();
  const mine = cliBudget({ table, endpoint: journal.endpoint }, endpointsFromBase('https://api.example.com/some/path'), pace, o as never)!;
  // The limit is spent by the containers: the command's next turn is a window away, more than it may wait here.
  const turn = await mine.reserve(1_000);
  expect(typeof turn === 'object' && turn.tooLongMs > 50_000).toBe(true);
  // Another address has a budget of its own.
  const other = cliBudget({ table, endpoint: journal.endpoint }, endpointsFromBase('https://other.example.com'), pace, o as never)!;
  expect(await other.reserve(1_000)).toBe(0);
  expect([o.err, o.out]).toEqual([[], []]);
});

test('a table it cannot use is said once on stderr; the command goes on at once (429s alone pace it)', async () => {
  const o = io();
  const b = cliBudget({ table: 'no-such-table', endpoint: journal.endpoint }, endpointsFromBase('https://api.example.com'), paceOf(3, 60_000), o as never)!;
  expect(await b.reserve(1_000)).toBe(0);
  expect(await b.reserve(1_000)).toBe(0);
  expect(o.err).toHaveLength(1);
  expect(o.err[0]).toMatch(/^dpi: the request budget in table no-such-table could not be used \(.+\); this command paces its requests by the service's 429s only\n$/);
  expect(o.out).toEqual([]);
  expect(cliBudget({ table: 'x' }, endpointsFromBase('https://api.example.com'), undefined, o as never)).toBeUndefined();
});

test('a turn\'s wait is said as pacing, not as a refusal', () => {
  expect(waitLine({ refusals: 0, waitMs: 4_000, method: 'GET', path: '/v2/sub' } as never, '3 of 9 read'))
    .toBe('dpi: requests are paced to the service\'s rate limit (the budget shared with the deploy); waiting 4 s before GET /v2/sub (3 of 9 read)');
  expect(waitLine({ refusals: 1, waitMs: 60_000, method: 'GET', path: '/v2/sub' } as never))
    .toBe('dpi: the service\'s rate limit was reached; waiting 60 s before GET /v2/sub again');
});

describe('DPI_BUDGET_TABLE: the shared budget of a command that reads no journal (dpi status, dpi import, the lookups)', () => {
  let emu: RunningEmulator;
  useCliEmulator((e) => { emu = e; });
  let n = 0;

  /**
   * A command's client with `flags` and `env` (given the table) makes one call (its token exchange and a read: two
   * turns at a pace of 2 per minute); then a provider container of the same address asks for a turn in the table:
   * 0 when the command took none there.
   */
  async function containerTurnAfter(flags: (table: string) => ConnectionFlags, env: (table: string) => Record<string, string>): Promise<unknown> {
    const table = `env-budget-${n++}`;
    await createJournalTable(journal.endpoint, table);
    const o = io();
    o.env = { DPI_REFRESH_TOKEN: DEFAULT_REFRESH_TOKEN, DPI_REQUEST_BUDGET: '2/60', ...env(table) };
    const c = connect({ baseUrl: emu.url, budgetEndpoint: journal.endpoint, ...flags(table) }, o as never);
    await c.client.account.get();
    expect([o.err, o.out]).toEqual([[], []]);
    return dynamoBudget({ table, endpoint: journal.endpoint, sleep, provided: true }, new URL(emu.url).origin, paceOf(2, 60_000)).reserve(1_000);
  }
  const spent = (turn: unknown): boolean => typeof turn === 'object' && turn !== null && (turn as { tooLongMs: number }).tooLongMs > 50_000;

  test('the command takes its turns in the table DPI_BUDGET_TABLE names, as with --budget-table', async () => {
    expect(BUDGET_TABLE_ENV).toBe('DPI_BUDGET_TABLE');
    expect(spent(await containerTurnAfter(() => ({}), (t) => ({ DPI_BUDGET_TABLE: t })))).toBe(true);
    expect(spent(await containerTurnAfter((t) => ({ budgetTable: t }), () => ({})))).toBe(true);
  });

  test('--budget-table wins over the variable; an empty --budget-table, or --local, takes no turn there', async () => {
    // The flag names another table: the command's turns are there, the variable's table is left alone.
    await createJournalTable(journal.endpoint, 'flag-budget');
    expect(await containerTurnAfter(() => ({ budgetTable: 'flag-budget' }), (t) => ({ DPI_BUDGET_TABLE: t }))).toBe(0);
    expect(spent(await dynamoBudget({ table: 'flag-budget', endpoint: journal.endpoint, sleep, provided: true }, new URL(emu.url).origin, paceOf(2, 60_000))
      .reserve(1_000))).toBe(true);
    expect(await containerTurnAfter(() => ({ budgetTable: '' }), (t) => ({ DPI_BUDGET_TABLE: t }))).toBe(0);
    expect(await containerTurnAfter(() => ({ local: true }), (t) => ({ DPI_BUDGET_TABLE: t }))).toBe(0);
  });
});
