/**
 * A continuation keeps its place in the request budget's queue (docs/handler.md, "One request budget for every
 * container"): a request whose turn comes after its invocation's deadline books that turn once (the budget's slot holds
 * it, so every other container leaves it free) and keeps it in the resource's lease item, which only the lease's holder
 * writes and which the next run of the same request (the next isComplete poll) reads. That run sends at the kept turn
 * without a new ticket. Without it, each poll took a new ticket, and a writer of the table who kept booking every slot
 * far ahead could push the turn past CloudFormation's hour.
 */
import type { LeaseScope } from './journal-lease';
import { log } from './log';
import type { RequestBudget } from '../client/budget';

/**
 * The budget of a run that may continue: its first request reuses the turn an earlier run of the request kept (when
 * it is plausible: not further ahead than `longestMs`, the furthest an honest booking goes); a request whose turn
 * comes too late books it and keeps it for the next run.
 */
export function keptTurnBudget(base: RequestBudget, lease: Pick<LeaseScope, 'keptTurn' | 'keepTurn'>, now: () => number, longestMs: number): RequestBudget {
  let kept = lease.keptTurn !== undefined && lease.keptTurn <= now() + longestMs ? lease.keptTurn : undefined;
  if (lease.keptTurn !== undefined && kept === undefined) {
    log({ level: 'WARNING', msg: 'the lease item keeps a turn in the request budget further ahead than any booking: ignored', keptTurn: lease.keptTurn });
  }
  return {
    reserve: async (maxWaitMs, opts) => {
      const t = now();
      if (kept !== undefined) {
        const wait = kept - t;
        if (wait > maxWaitMs) return { tooLongMs: wait };
        kept = undefined;
        // Used: forgotten before the request is sent, so no later run sends on it again.
        await lease.keepTurn(undefined).catch((e: unknown) => log({ level: 'WARNING', msg: 'could not forget the used turn in the lease item', error: String(e) }));
        return Math.max(0, wait);
      }
      const got = await base.reserve(maxWaitMs, { ...opts, book: true });
      if (typeof got === 'number' || got.bookedAt === undefined) return got;
      kept = got.bookedAt;
      await lease.keepTurn(got.bookedAt).catch((e: unknown) => log({ level: 'WARNING', msg: 'could not keep the booked turn in the lease item', error: String(e) }));
      log({ msg: 'booked a turn in the request budget for the next run of this request', turnAt: new Date(got.bookedAt).toISOString() });
      return { tooLongMs: got.tooLongMs };
    },
    holdUntil: (untilMs) => base.holdUntil(untilMs),
  };
}
