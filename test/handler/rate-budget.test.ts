/**
 * The request budget every provider container shares (src/handler/rate-budget.ts), in a local DynamoDB-compatible
 * journal table: containers that reserve at once, each with its own budget object, get distinct turns that keep every
 * window within the limit; the budget's item is not a journal record; a budget that cannot be used fails open.
 */
import { DynamoDBClient, UpdateItemCommand } from '@aws-sdk/client-dynamodb';
import { BUDGET_MARGIN_MS, paceOf } from '../../src/client/budget';
import { PROVIDED_JOURNAL_TABLES_ENV } from '../../src/contract';
import { dynamoJournal, resetJournalCache } from '../../src/handler/journal';
import { budgetPaceOf, dynamoBudget, PREDECESSOR_WAIT_MS, REQUEST_BUDGET_ENV } from '../../src/handler/rate-budget';
import { mostInWindow } from '../client/windows';
import { createJournalTable, useJournalServer } from '../journal-server';

const journal = useJournalServer();
const sleep = async (): Promise<void> => undefined;
let n = 0;
let table: string;

beforeEach(async () => {
  resetJournalCache();
  table = `budget-journal-${++n}`;
  await createJournalTable(journal.endpoint, table);
});

const env = (): Record<string, string> => ({ [PROVIDED_JOURNAL_TABLES_ENV]: table });

test('eight containers reserving 250 turns at once: the limit at once, the rest one window later, never over the limit', async () => {
  const pace = paceOf(100, 10_000);
  const now = 5_000_000;
  const containers = Array.from({ length: 8 }, () => dynamoBudget({ table, endpoint: journal.endpoint, sleep, environment: env(), now: () => now },
    'https://api.example.com', pace));
  const asks = Array.from({ length: 250 }, (_, i) => containers[i % 8]);
  const waits = await Promise.all(asks.map((b) => b.reserve(Infinity)));
  const sends = waits.map((w) => now + (w as number)).sort((a, b) => a - b);
  expect(sends.filter((t) => t === now)).toHaveLength(100);
  expect(sends.filter((t) => t === now + 10_000 + BUDGET_MARGIN_MS)).toHaveLength(100);
  expect(sends.filter((t) => t === now + 2 * (10_000 + BUDGET_MARGIN_MS))).toHaveLength(50);
  expect(mostInWindow(sends, 10_000)).toBeLessThanOrEqual(100);
});

test('another service address has a budget of its own; a hold after a 429 holds every container; a turn too late is not counted', async () => {
  const pace = paceOf(3, 10_000);
  let now = 1_000_000;
  const opts = { table, endpoint: journal.endpoint, sleep, environment: env(), now: () => now };
  const a = dynamoBudget(opts, 'https://api.example.com', pace);
  const a2 = dynamoBudget(opts, 'https://api.example.com', pace);
  const b = dynamoBudget(opts, 'https://other.example.com', pace);
  for (let i = 0; i < 3; i++) expect(await (i % 2 ? a2 : a).reserve(Infinity)).toBe(0);
  expect(await b.reserve(Infinity)).toBe(0);
  // The fourth request of the address: not within 5 s; counted once it may wait the window.
  expect(await a.reserve(5_000)).toEqual({ tooLongMs: 10_000 + BUDGET_MARGIN_MS });
  expect(await a2.reserve(Infinity)).toBe(10_000 + BUDGET_MARGIN_MS);
  await a.holdUntil(now + 30_000);
  now += 20_000;
  expect(await a2.reserve(Infinity)).toBe(10_000);
});

test('a ticket whose slot\'s previous ticket never wrote it (its container stopped) takes it over, as if that request went now', async () => {
  const pace = paceOf(1, 10_000);
  const now = 2_000_000;
  const opts = { table, endpoint: journal.endpoint, sleep, environment: env(), now: () => now };
  const c = new DynamoDBClient({ endpoint: journal.endpoint, region: 'us-east-1', credentials: { accessKeyId: 'local', secretAccessKey: 'local' } });
  // A ticket handed out whose slot was never written: ticket 0 of a budget of one slot.
  await c.send(new UpdateItemCommand({
    TableName: table,
    Key: { pk: { S: 'budget#https://api.example.com' }, sk: { S: 'counter' } },
    UpdateExpression: 'ADD n :one',
    ExpressionAttributeValues: { ':one': { N: '1' } },
  }));
  c.destroy();
  const started = Date.now();
  expect(await dynamoBudget(opts, 'https://api.example.com', pace).reserve(Infinity)).toBe(10_000 + BUDGET_MARGIN_MS);
  expect(Date.now() - started).toBeGreaterThanOrEqual(PREDECESSOR_WAIT_MS - 100);
});

test('planted items (a hold in the year 3000, a slot\'s turn far ahead) hold no turn longer than one window and its margin', async () => {
  const pace = paceOf(1, 10_000);
  const now = 3_000_000;
  const c = new DynamoDBClient({ endpoint: journal.endpoint, region: 'us-east-1', credentials: { accessKeyId: 'local', secretAccessKey: 'local' } });
  const pk = { S: 'budget#https://api.example.com' };
  await c.send(new UpdateItemCommand({
    TableName: table,
    Key: { pk, sk: { S: 'counter' } },
    UpdateExpression: 'SET n = :n, holdUntil = :h',
    ExpressionAttributeValues: { ':n': { N: '1' }, ':h': { N: String(Date.parse('3000-01-01')) } },
  }));
  await c.send(new UpdateItemCommand({
    TableName: table,
    Key: { pk: { S: 'budget#https://api.example.com#0' }, sk: { S: 'slot' } },
    UpdateExpression: 'SET ticket = :t, sentAt = :s',
    ExpressionAttributeValues: { ':t': { N: '0' }, ':s': { N: String(Date.parse('3000-01-01')) } },
  }));
  c.destroy();
  const b = dynamoBudget({ table, endpoint: journal.endpoint, sleep, environment: env(), now: () => now }, 'https://api.example.com', pace);
  const started = Date.now();
  expect(await b.reserve(Infinity)).toBe(10_000 + BUDGET_MARGIN_MS);
  // The planted slot is taken as it is (its ticket is the previous one): no wait for a ticket that never writes.
  expect(Date.now() - started).toBeLessThan(PREDECESSOR_WAIT_MS);
  // The next request of the one slot goes a window after that turn, not after the planted one.
  expect(await b.reserve(Infinity)).toBe(2 * (10_000 + BUDGET_MARGIN_MS));
});

test('the budget\'s item is not a journal record, and a budget whose table is missing fails open (no wait) with one warning', async () => {
  const opts = { table, endpoint: journal.endpoint, sleep, environment: env() };
  await dynamoBudget(opts, 'https://api.example.com', paceOf(100, 10_000)).reserve(Infinity);
  const scanned = await dynamoJournal(opts).scan();
  expect(scanned.records).toEqual([]);
  const logs: string[] = [];
  const spy = jest.spyOn(console, 'log').mockImplementation((l: string) => { logs.push(l); });
  try {
    const missing = dynamoBudget({ ...opts, table: 'not-there', environment: { [PROVIDED_JOURNAL_TABLES_ENV]: 'not-there' } }, 'https://api.example.com',
      paceOf(100, 10_000));
    expect(await missing.reserve(Infinity)).toBe(0);
    expect(await missing.reserve(Infinity)).toBe(0);
  } finally {
    spy.mockRestore();
  }
  expect(logs.filter((l) => l.includes('the request budget could not be used'))).toHaveLength(1);
});

test('the setting in the provider function\'s environment', () => {
  expect(budgetPaceOf({ [REQUEST_BUDGET_ENV]: '1000/300' })).toEqual({ limit: 1000, windowMs: 300_000 });
  expect(budgetPaceOf({ [REQUEST_BUDGET_ENV]: 'off' })).toBeUndefined();
  expect(budgetPaceOf({})).toBeUndefined();
  expect(budgetPaceOf({ [REQUEST_BUDGET_ENV]: 'lots' })).toBeUndefined();
});
