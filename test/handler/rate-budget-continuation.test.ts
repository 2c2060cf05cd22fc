/**
 * A continuation keeps its place in the request budget's queue (src/handler/continuation-turn.ts): the turn it booked
 * is kept in the resource's lease item and reused by the next poll, so a writer of the journal table who keeps booking
 * every slot far ahead can no longer push it past CloudFormation's hour; an honest booking is obeyed by every container.
 */
import { DynamoDBClient, GetItemCommand, PutItemCommand } from '@aws-sdk/client-dynamodb';
import { BUDGET_MARGIN_MS, paceOf, RequestBudget } from '../../src/client/budget';
import { PROVIDED_JOURNAL_TABLES_ENV } from '../../src/contract';
import { CONTINUATION_LIMIT_MS } from '../../src/handler/continuation';
import { keptTurnBudget } from '../../src/handler/continuation-turn';
import { resetJournalCache } from '../../src/handler/journal';
import { dynamoLeases } from '../../src/handler/journal-lease';
import { dynamoBudget, LONGEST_TURN_MS, longestBookingMs } from '../../src/handler/rate-budget';
import { createJournalTable, useJournalServer } from '../journal-server';

const journal = useJournalServer();
const sleep = async (): Promise<void> => undefined;
const ORIGIN = 'https://api.example.com';
const pace = paceOf(1, 60_000);
let n = 0;
let table: string;
let now: number;
const client = (): DynamoDBClient => new DynamoDBClient({ endpoint: journal.endpoint, region: 'us-east-1', credentials: { accessKeyId: 'local', secretAccessKey: 'local' } });

beforeEach(async () => {
  resetJournalCache();
  table = `budget-cont-${++n}`;
  now = 10_000_000;
  await createJournalTable(journal.endpoint, table);
});

const opts = () => ({ table, endpoint: journal.endpoint, sleep, environment: { [PROVIDED_JOURNAL_TABLES_ENV]: table }, now: () => now });
const budget = (): RequestBudget => dynamoBudget(opts(), ORIGIN, pace);

/** The attacker: books the one slot `aheadMs` ahead of now, as the last ticket handed out (so it is obeyed). */
async function plant(aheadMs: number): Promise<void> {
  const c = client();
  try {
    const counter = (await c.send(new GetItemCommand({ TableName: table, Key: { pk: { S: `budget#${ORIGIN}` }, sk: { S: 'counter' } } }))).Item;
    const last = Number(counter?.n?.N ?? '0') - 1;
    await c.send(new PutItemCommand({
      TableName: table,
      Item: { pk: { S: `budget#${ORIGIN}#0` }, sk: { S: 'slot' }, ticket: { N: String(Math.max(0, last)) }, sentAt: { N: String(now + aheadMs) } },
    }));
  } finally {
    c.destroy();
  }
}

/** Polls every 30 s (each an invocation that may wait 110 s), the attacker planting before each; the minutes until the turn came. */
async function pollsUntilTurn(reserve: () => Promise<number | { tooLongMs: number }>): Promise<number | undefined> {
  const start = now;
  while (now - start < CONTINUATION_LIMIT_MS) {
    await plant(14 * 60_000);
    const got = await reserve();
    if (typeof got === 'number') return Math.round((now + got - start) / 60_000);
    now += 30_000;
  }
  return undefined;
}

test('an attacker who books the slot 14 minutes ahead at every poll: a new ticket per poll never gets its turn within the hour', async () => {
  await budget().reserve(Infinity); // ticket 0: the counter exists
  expect(await pollsUntilTurn(() => budget().reserve(110_000))).toBeUndefined();
});

test('the same attacker: the continuation\'s kept turn comes within 16 minutes', async () => {
  await budget().reserve(Infinity);
  let kept: number | undefined;
  const lease = { get keptTurn() { return kept; }, keepTurn: async (at: number | undefined) => { kept = at; } };
  // Each poll is a new invocation: a new budget wrapper that reads the lease item's kept turn.
  const minutes = await pollsUntilTurn(() =>
    keptTurnBudget(budget(), { keptTurn: lease.keptTurn, keepTurn: lease.keepTurn }, () => now, longestBookingMs(pace)).reserve(110_000));
  expect(minutes).toBeDefined();
  expect(minutes!).toBeLessThanOrEqual(16);
  expect(kept).toBeUndefined(); // used, then forgotten
});

test('a booked turn holds its slot: another container\'s next ticket goes a window after it, not before', async () => {
  await budget().reserve(Infinity);
  await plant(LONGEST_TURN_MS - 1_000);
  let kept: number | undefined;
  const got = await keptTurnBudget(budget(), { keepTurn: async (at) => { kept = at; } }, () => now, longestBookingMs(pace)).reserve(110_000);
  expect(got).toEqual({ tooLongMs: LONGEST_TURN_MS - 1_000 + 60_000 + BUDGET_MARGIN_MS });
  expect(kept).toBe(now + LONGEST_TURN_MS - 1_000 + 60_000 + BUDGET_MARGIN_MS);
  // More than LONGEST_TURN_MS ahead, and still obeyed by a plain reservation (of another container).
  expect(await budget().reserve(Infinity)).toBe(kept! - now + 60_000 + BUDGET_MARGIN_MS);
});

test('a kept turn further ahead than any booking (planted in the lease item) is not obeyed: a new turn is taken', async () => {
  await budget().reserve(Infinity);
  now += 2 * 60_000;
  const planted = { keptTurn: now + 3_600_000, keepTurn: async () => undefined };
  const got = await keptTurnBudget(budget(), planted, () => now, longestBookingMs(pace)).reserve(110_000);
  expect(got).toBe(0);
});

test('the lease item keeps a booked turn for the same request only', async () => {
  const leases = dynamoLeases(opts());
  const expiresAt = new Date(now + 60_000).toISOString();
  const first = await leases.take('Stack/Res', { holder: 'req-1|a', requestId: 'req-1', requestType: 'Create', expiresAt });
  expect(first.taken).toBe(true);
  await leases.keepTurn('Stack/Res', 'req-1|a', 12_345_678);
  await leases.keepTurn('Stack/Res', 'someone-else', 1); // not the holder: nothing written
  await leases.release('Stack/Res', 'req-1|a');
  const again = await leases.take('Stack/Res', { holder: 'req-1|b', requestId: 'req-1', requestType: 'Create', expiresAt });
  expect(again.taken && again.previous?.keptTurn).toBe(12_345_678);
  await leases.release('Stack/Res', 'req-1|b');
  await leases.take('Stack/Res', { holder: 'req-2|c', requestId: 'req-2', requestType: 'Delete', expiresAt });
  await leases.release('Stack/Res', 'req-2|c');
  const third = await leases.take('Stack/Res', { holder: 'req-2|d', requestId: 'req-2', requestType: 'Delete', expiresAt });
  expect(third.taken && third.previous?.keptTurn).toBeUndefined();
});
