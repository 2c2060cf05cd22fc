/**
 * One budget of requests for every client that shares the service's rate limit (the limit is per client address, and
 * a deploy's provider containers share one: see docs/handler.md, "One request budget for every container").
 *
 * The service allows `limit` requests in any rolling window of `windowMs`. The budget keeps `limit` slots, each the
 * time of the last request sent through it; a request takes the next slot in turn (ticket `k` takes slot `k mod
 * limit`) and goes no earlier than one window (plus a margin) after that slot's last request. Each slot is then used
 * at most once per window, so no window holds more than `limit` requests, while a deploy of fewer requests than the
 * limit is never slowed, and a long one runs at the limit's pace. The store of the slots (DynamoDB in the handler,
 * memory here) is the budget's `RequestBudget`.
 */

import { BUDGET_MARGIN_MS } from '../contract';

/** A request budget shared by many clients (containers, processes). */
export interface RequestBudget {
  /**
   * Reserves the next request's turn and resolves with the ms to wait before sending it (0: at once). When the turn
   * would come more than `maxWaitMs` from now, the request is not counted and it resolves with `{ tooLongMs }` (the
   * wait the caller could not take).
   */
  reserve(maxWaitMs: number): Promise<number | { readonly tooLongMs: number }>;
  /**
   * The service refused a request (429) until `untilMs` (epoch ms): no turn of any client starts before it. Best
   * effort: a failure is not the caller's.
   */
  holdUntil(untilMs: number): Promise<void>;
}

/** A budget's limit: at most `limit` requests in any rolling `windowMs`. */
export interface BudgetPace {
  readonly limit: number;
  readonly windowMs: number;
}

export { BUDGET_MARGIN_MS } from '../contract';

/** The pace of `limit` requests per `windowMs`. */
export function paceOf(limit: number, windowMs: number): BudgetPace {
  if (!Number.isInteger(limit) || limit < 1 || !Number.isFinite(windowMs) || windowMs <= 0) {
    throw new Error(`a request budget needs a limit of at least 1 request per a positive window (got ${limit} per ${windowMs} ms)`);
  }
  return { limit, windowMs };
}

/**
 * Parses a budget setting: `off`, or `<requests>/<seconds>` (e.g. `1000/300`, the service's documented limit).
 * Undefined (no setting) and `off` give undefined; anything else unreadable throws, naming the value.
 */
export function parseBudget(value: string | undefined, name = 'the request budget'): BudgetPace | undefined {
  const v = (value ?? '').trim();
  if (v === '' || v === 'off') return undefined;
  const m = /^(\d+)\/(\d+(?:\.\d+)?)$/.exec(v);
  if (!m) throw new Error(`${name} must be 'off' or <requests>/<seconds>, e.g. 1000/300 (got ${JSON.stringify(value)})`);
  return paceOf(Number(m[1]), Number(m[2]) * 1000);
}

/**
 * The turn of a request whose slot last sent at `lastSentAt` (undefined: never), at `now`, while a 429 holds every
 * turn until `holdUntil`.
 */
export function turnOf(pace: BudgetPace, now: number, lastSentAt: number | undefined, holdUntil = 0): number {
  return Math.max(now, holdUntil, lastSentAt === undefined ? -Infinity : lastSentAt + pace.windowMs + BUDGET_MARGIN_MS);
}

/** A budget kept in this process's memory (one client, tests): the same slots as a shared one. */
export class MemoryBudget implements RequestBudget {
  private readonly slots: number[] = [];
  private ticket = 0;
  private held = 0;
  constructor(private readonly pace: BudgetPace, private readonly now: () => number = Date.now) {}

  public async reserve(maxWaitMs: number): Promise<number | { tooLongMs: number }> {
    const t = this.now();
    const slot = this.ticket % this.pace.limit;
    const turn = turnOf(this.pace, t, this.slots[slot], this.held);
    if (turn - t > maxWaitMs) return { tooLongMs: turn - t };
    this.slots[slot] = turn;
    this.ticket++;
    return turn - t;
  }

  public async holdUntil(untilMs: number): Promise<void> {
    this.held = Math.max(this.held, untilMs);
  }
}
