/**
 * The request budget every provider container of an account and region shares (issue: one rate budget for all
 * containers): the service allows a number of requests per client address in a rolling window (the vendor documents
 * 1,000 per 5 minutes), and the containers of a deploy run at once, each with its own memory, behind one address. Each
 * of them takes its requests' turns from the lifecycle journal table, so together they stay within the limit instead
 * of each finding it by 429s and waiting out the vendor's doubling. The schedule is src/client/budget.ts's: `limit`
 * slots, each used at most once per window.
 *
 * Items (`pk` = `budget#<service address>`): `sk` = `counter`, attributes `n` (tickets handed out) and `holdUntil`
 * (the end of the last 429's wait); `sk` = `slot#<i>`, attributes `ticket` (the last ticket that took it) and `sentAt`
 * (when that ticket's request goes). A reservation is an atomic `ADD n` on the counter (its ticket `k`, and the hold),
 * a read of slot `k mod limit`, and a write of it conditional on the ticket: no read-modify-write loop on one hot item,
 * so hundreds of containers reserving at once each get a turn at once. Ticket `k` waits until ticket `k - limit` has
 * written the slot (a reservation in flight elsewhere, milliseconds); one that never does (its container stopped in
 * between) is taken over after a few seconds as if it had sent at that moment.
 *
 * The budget never fails a deploy: when its table cannot be used it says so once per container and the client paces
 * itself by the service's 429s alone, as it did without a budget.
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

let warned = false;

/** How long a ticket waits for its slot's previous ticket to write it before taking it over (real time). */
export const PREDECESSOR_WAIT_MS = 5_000;
const POLL_MS = 50;
const pause = (ms: number): Promise<void> => new Promise((r) => setTimeout(r, ms));

/**
 * The budget of the service address `scope` (its origin) in the journal table of `opts`. `now` is the clock of the
 * turns (every container's, so they must agree: Lambda's clocks are synchronized; the margin absorbs the rest).
 */
export function dynamoBudget(opts: JournalOptions, scope: string, pace: BudgetPace): RequestBudget {
  const { client: c, table, sdk: m, run } = openJournalTable(opts);
  const clock = opts.now ?? Date.now;
  const pk: ddb.AttributeValue = { S: `${BUDGET_PREFIX}${scope}` };
  const counter = { pk, sk: { S: 'counter' } };
  const N = (v: number): ddb.AttributeValue => ({ N: String(Math.round(v)) });
  const num = (v: ddb.AttributeValue | undefined): number | undefined => (v?.N === undefined ? undefined : Number(v.N));
  const failOpen = (e: unknown): number => {
    if (!warned) {
      warned = true;
      log({ level: 'WARNING', msg: 'the request budget could not be used; the client paces itself by 429s only', error: (e as Error).message });
    }
    return 0;
  };
  const take = async (maxWaitMs: number, depth = 0): Promise<number | { tooLongMs: number }> => {
    if (depth > 5) throw new Error('the request budget\'s slots kept being taken over');
    const ticketed = await c.send(new m.UpdateItemCommand({
      TableName: table,
      Key: counter,
      UpdateExpression: 'ADD #n :one',
      ExpressionAttributeNames: { '#n': 'n' },
      ExpressionAttributeValues: { ':one': N(1) },
      ReturnValues: 'ALL_NEW',
    }));
    const k = (num(ticketed.Attributes?.n) ?? 1) - 1;
    const hold = num(ticketed.Attributes?.holdUntil) ?? 0;
    const key = { pk, sk: { S: `slot#${k % pace.limit}` } };
    const previous = k - pace.limit;
    const since = Date.now();
    for (;;) {
      const slot = (await c.send(new m.GetItemCommand({ TableName: table, Key: key, ConsistentRead: true }))).Item;
      const last = num(slot?.ticket) ?? -1;
      if (last > k) return take(maxWaitMs, depth + 1); // a later ticket took the slot over: this one's turn is gone, take another
      const recorded = last >= previous;
      if (!recorded && previous >= 0 && Date.now() - since < PREDECESSOR_WAIT_MS) {
        await pause(POLL_MS);
        continue;
      }
      const now = clock();
      // The slot's previous request, or, when its ticket never wrote the slot, one sent now (the cautious guess).
      const lastSentAt = recorded ? num(slot?.sentAt) : previous >= 0 ? now : undefined;
      const turn = turnOf(pace, now, lastSentAt, hold);
      const wait = Math.max(0, Math.round(turn - now));
      const sending = wait <= maxWaitMs;
      try {
        await c.send(new m.PutItemCommand({
          TableName: table,
          // A ticket that does not send leaves the slot's time as it was, so the next ticket of the slot is not held.
          Item: { ...key, ticket: N(k), sentAt: N(sending ? turn : (lastSentAt ?? 0)) },
          ConditionExpression: 'attribute_not_exists(#t) OR #t < :k',
          ExpressionAttributeNames: { '#t': 'ticket' },
          ExpressionAttributeValues: { ':k': N(k) },
        }));
      } catch (e) {
        if (!conditionFailed(e)) throw e;
        return take(maxWaitMs, depth + 1);
      }
      return sending ? wait : { tooLongMs: wait };
    }
  };
  return {
    reserve: async (maxWaitMs) => {
      try {
        return await run(() => take(maxWaitMs));
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
              ConditionExpression: 'attribute_not_exists(#h) OR #h < :t',
              ExpressionAttributeNames: { '#h': 'holdUntil' },
              ExpressionAttributeValues: { ':t': N(untilMs) },
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
