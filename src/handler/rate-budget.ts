/**
 * The request budget every provider container of an account and region shares (issue: one rate budget for all
 * containers): the service allows a number of requests per client address in a rolling window (the vendor documents
 * 1,000 per 5 minutes), and the containers of a deploy run at once, each with its own memory, behind one address. Each
 * of them takes its requests' turns from the lifecycle journal table, so together they stay within the limit instead
 * of each finding it by 429s and waiting out the vendor's doubling. The schedule is src/client/budget.ts's: `limit`
 * slots, each used at most once per window.
 *
 * Items: the counter (`pk` = `budget#<service address>`, `sk` = `counter`; `n`, the tickets handed out, and
 * `holdUntil`, the end of the last 429's wait) and one item per slot (`pk` = `budget#<service address>#<i>`, `sk` =
 * `slot`; `ticket`, the last ticket that took it, and `sentAt`, when that ticket's request goes), each slot in a
 * partition of its own. A reservation is an atomic `ADD n` on the counter (its ticket `k`, and the hold), a read of
 * slot `k mod limit`, and a write of it conditional on the ticket read: no read-modify-write loop on one hot item, so
 * hundreds of containers reserving at once each get a turn at once. Ticket `k` waits until ticket `k - limit` has
 * written the slot (a reservation in flight elsewhere, milliseconds); one that never does (its container stopped in
 * between) is taken over after a few seconds as if it had sent at that moment. Values no honest writer leaves (a
 * ticket of another counter, a turn or hold far ahead) are overwritten, never obeyed; delete every `budget#` item of
 * the table to start the budget afresh.
 *
 * The budget never fails a deploy: when its table cannot be used it says so (once per table and reason in a container)
 * and the client paces itself by the service's 429s alone, as it did without a budget.
 */
import type * as ddb from '@aws-sdk/client-dynamodb';
import { BudgetPace, parseBudget, RequestBudget, turnOf } from '../client/budget';
import { REQUEST_BUDGET_ENV } from '../contract';
import { BUDGET_PREFIX, conditionFailed, JournalOptions, openJournalTable } from './journal';
import { JournalEnvironment } from './journal-provided';
import { log } from './log';

export { REQUEST_BUDGET_ENV } from '../contract';

/** The pace the provider function's environment sets (`DPI_REQUEST_BUDGET`); undefined when it sets none or `off`. */
export function budgetPaceOf(env: JournalEnvironment): BudgetPace | undefined {
  try {
    return parseBudget(env[REQUEST_BUDGET_ENV], REQUEST_BUDGET_ENV);
  } catch (e) {
    log({ level: 'WARNING', msg: 'the request budget setting is not readable; the client paces itself by 429s only', error: (e as Error).message });
    return undefined;
  }
}

const warned = new Set<string>();

/** Says (once per table and reason) that the budget's table could not be used. */
export type BudgetWarning = (table: string, reason: string) => void;

/** The handler's: a log line. */
const logWarning: BudgetWarning = (table, reason) => log({
  level: 'WARNING', msg: 'the request budget could not be used; the client paces itself by 429s only', table, error: reason,
});


/** The furthest ahead an honest reservation can put a slot's turn: a Lambda's longest run (15 minutes). */
const LONGEST_TURN_MS = 15 * 60_000;
/** The longest hold an honest 429 sets: the client's longest rate-limit wait (5 minutes) and a margin. */
const LONGEST_HOLD_MS = 6 * 60_000;

/** How long a ticket waits for its slot's previous ticket to write it before taking it over (real time). */
export const PREDECESSOR_WAIT_MS = 5_000;
const POLL_MS = 50;
const pause = (ms: number): Promise<void> => new Promise((r) => setTimeout(r, ms));

/**
 * The budget of the service address `scope` (its origin) in the journal table of `opts`. `now` is the clock of the
 * turns (every container's, so they must agree: Lambda's clocks are synchronized; the margin absorbs the rest).
 */
export function dynamoBudget(opts: JournalOptions, scope: string, pace: BudgetPace, warn: BudgetWarning = logWarning): RequestBudget {
  const { client: c, table, sdk: m, run } = openJournalTable(opts);
  const clock = opts.now ?? Date.now;
  const base = `${BUDGET_PREFIX}${scope}`;
  const counter = { pk: { S: base }, sk: { S: 'counter' } };
  const N = (v: number): ddb.AttributeValue => ({ N: String(Math.round(v)) });
  const num = (v: ddb.AttributeValue | undefined): number | undefined => {
    const x = v?.N === undefined ? undefined : Number(v.N);
    return x !== undefined && Number.isSafeInteger(x) ? x : undefined;
  };
  const failOpen = (e: unknown): number => {
    const reason = (e as Error).message;
    if (!warned.has(`${table}|${reason}`)) {
      warned.add(`${table}|${reason}`);
      warn(table, reason);
    }
    return 0;
  };
  /** One reservation; `until` is the absolute time past which the caller cannot send. */
  const take = async (until: number, depth: number): Promise<number | { tooLongMs: number }> => {
    if (depth > 5) throw new Error('the request budget\'s slots kept being taken by other tickets');
    const ticketed = await c.send(new m.UpdateItemCommand({
      TableName: table,
      Key: counter,
      UpdateExpression: 'ADD #n :one',
      ExpressionAttributeNames: { '#n': 'n' },
      ExpressionAttributeValues: { ':one': N(1) },
      ReturnValues: 'ALL_NEW',
    }));
    const n = num(ticketed.Attributes?.n);
    if (n === undefined || n < 1) throw new Error('the request budget\'s counter is not a ticket count (delete the table\'s budget# items)');
    const k = n - 1;
    const held = num(ticketed.Attributes?.holdUntil) ?? 0;
    const key = { pk: { S: `${base}#${k % pace.limit}` }, sk: { S: 'slot' } };
    const previous = k - pace.limit;
    const since = Date.now(); // the wait for the previous ticket is in real time
    let conflicts = 0;
    for (;;) {
      const slot = (await c.send(new m.GetItemCommand({ TableName: table, Key: key, ConsistentRead: true }))).Item;
      const now = clock();
      const last = num(slot?.ticket);
      // A ticket of this slot's chain that this counter handed out: its own (k - limit, k - 2 limit, ...) or a later one.
      const ours = last !== undefined && last % pace.limit === k % pace.limit && last < n + pace.limit;
      if (ours && last > k) return take(until, depth + 1); // a later ticket took the slot over: take another turn
      const recorded = ours && last >= previous;
      const waitFor = Math.min(PREDECESSOR_WAIT_MS, until - now - 1_000);
      if (!recorded && (ours || slot === undefined) && previous >= 0 && Date.now() - since < waitFor) {
        await pause(POLL_MS);
        continue;
      }
      // The slot's previous request; a ticket that never wrote it, or one of another counter, as if it went now.
      const sentAt = num(slot?.sentAt);
      const recordedAt = recorded ? (sentAt ?? now) : slot !== undefined || previous >= 0 ? now : undefined;
      // No honest writer leaves a turn further ahead than the longest Lambda, nor a hold longer than the longest
      // 429 wait: values past those (a damaged or planted item) count as "now", so no planted turn holds a request
      // longer than LONGEST_TURN_MS and a window.
      const lastSentAt = recordedAt !== undefined && recordedAt > now + LONGEST_TURN_MS ? now : recordedAt;
      const turn = turnOf(pace, now, lastSentAt, held > now + LONGEST_HOLD_MS ? now : held);
      const sending = turn <= until;
      try {
        await c.send(new m.PutItemCommand({
          TableName: table,
          // A ticket that does not send leaves the slot's time as it was (bounded above), so the next one is not held.
          Item: { ...key, ticket: N(k), sentAt: N(sending ? turn : (lastSentAt ?? 0)) },
          // On the ticket read: a slot written meanwhile (its slow previous ticket, another taker) is read again.
          ConditionExpression: slot?.ticket === undefined ? 'attribute_not_exists(#t)' : '#t = :last',
          ExpressionAttributeNames: { '#t': 'ticket' },
          ...(slot?.ticket === undefined ? {} : { ExpressionAttributeValues: { ':last': slot.ticket } }),
        }));
      } catch (e) {
        if (!conditionFailed(e)) throw e;
        if (++conflicts > 20) throw new Error('the request budget\'s slot kept changing under this reservation');
        continue;
      }
      return sending ? Math.max(0, Math.round(turn - now)) : { tooLongMs: Math.round(turn - now) };
    }
  };
  return {
    reserve: async (maxWaitMs) => {
      const until = clock() + maxWaitMs;
      try {
        return await run(() => take(until, 0));
      } catch (e) {
        return failOpen(e);
      }
    },
    holdUntil: async (untilMs) => {
      try {
        await run(async () => {
          try {
            await c.send(new m.UpdateItemCommand({
              TableName: table,
              Key: counter,
              UpdateExpression: 'SET #h = :t',
              // A hold past what an honest 429 sets (a planted one) is replaced, never kept.
              ConditionExpression: 'attribute_not_exists(#h) OR #h < :t OR #h > :far',
              ExpressionAttributeNames: { '#h': 'holdUntil' },
              ExpressionAttributeValues: { ':t': N(untilMs), ':far': N(clock() + LONGEST_HOLD_MS) },
            }));
          } catch (e) {
            if (!conditionFailed(e)) throw e;
          }
        });
      } catch (e) {
        failOpen(e);
      }
    },
  };
}
