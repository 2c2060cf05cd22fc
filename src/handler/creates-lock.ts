/**
 * What a subscription create locks while it lists, sends and records (creates.ts; the items: journal-locks.ts): the
 * creates of its remote identity where the service is known to narrow its lists to an identity (narrowing.ts), so a
 * fleet's creates of one product run at once; else the whole product's creates, one at a time, as a service that
 * ignores the filter needs. See docs/handler.md ("Ownership").
 */
import { attemptBefore, CreateAttempt, lockableIdentity, OwnsSubscription } from './common';
import { WaitPastDeadline } from './continuation';
import { HandlerError, messageOf } from './errors';
import { JournalRecord } from './journal';
import { log } from './log';
import { narrows } from './narrowing';
import { Runtime } from './runtime';

/** A creates lock older than this (the longest a Lambda invocation runs) belongs to an invocation that ended. */
export const STALE_LOCK_MS = 15 * 60_000;

/** The lock kind of a product's subscription creates. */
export function inflightKind(product: number | string): string {
  return `sub#${product}`;
}

/** The lock member of a journal record. */
export function inflightMember(rec: JournalRecord<unknown>): string {
  return `${rec.key}|${rec.id}`;
}

/**
 * What a subscription create may lock at the narrowest: its product's creates, or only those of its remote identity
 * (`identity`, canonical) when its lists are narrowed to the identity. The identity's lock is taken only once the
 * service is known to narrow (else the product's); a lost answer's candidate under it is taken only once the service
 * shows it is the identity's (`narrowingShown`).
 */
export interface CreatesScope {
  readonly product: number;
  readonly identity?: string;
}

/** The scope of an attempt: narrowed to its identity when its lists were. */
export function attemptScope(a: CreateAttempt): CreatesScope {
  const identity = lockableIdentity(a.identity);
  return identity !== undefined ? { product: a.product, identity } : { product: a.product };
}

/**
 * The scope of a create of `product` for `identity` (canonical): the identity's, unless the record's unresolved
 * earlier attempt (resolved first, under the same lock) listed more than that identity's subscriptions (the whole
 * product's, before the lists were narrowed, or another identity's): then the product's, so that no create of another
 * identity runs inside the window it compares.
 */
export function createScope(rec: JournalRecord<OwnsSubscription>, product: number, identity: string | undefined): CreatesScope {
  // Only a positive integer narrows a lock (anything else is refused by the service, or is the probe identity 0).
  if (lockableIdentity(identity) === undefined) return { product };
  const a = rec.state === 'recording' ? rec.doc.attempt : undefined;
  if (rec.state === 'recording' && (a === undefined || attemptBefore(a) === undefined || a.product !== product
    || attemptScope(a).identity !== identity)) return { product };
  return { product, identity };
}

const staleBefore = (): string => new Date(Date.now() - STALE_LOCK_MS).toISOString();

/**
 * Runs `fn` holding the creates lock of `want` for `rec` (the identity's only where the service is known to narrow,
 * else the product's; `fn` is told which): waits (patiently, saying so in the log) while another create of the scope
 * is in flight, taking the identity's lock as soon as the service is learned to narrow; fails clearly when it is still
 * held close to the invocation's deadline (continues in isComplete where the event can).
 */
export async function withCreatesLock<T>(rt: Runtime, want: CreatesScope, rec: JournalRecord<unknown>,
  fn: (held: CreatesScope) => Promise<T>, keepOnFailure: () => boolean = () => false): Promise<T> {
  const { product } = want;
  const kind = inflightKind(product);
  const me = inflightMember(rec);
  const narrowest = async (): Promise<CreatesScope> => (want.identity !== undefined && await narrows(rt, product) ? want : { product });
  let scope = await narrowest();
  for (let round = 0; ; round++) {
    const holder = await rt.journal.lock(kind, me, staleBefore(), scope.identity);
    if (holder === undefined) break;
    if (Date.now() + 1000 > rt.deadline - 60_000 || round >= 2000) {
      // A whole-product lock waiting for identities' creates stays written: released here, it holds up nobody.
      await rt.journal.unlock(kind, me, scope.identity).catch(() => undefined);
      const what = `another product-${product} subscription create (${holder.member.split('|')[0]}, since ${holder.startedAt}) is `;
      if (rt.continues) {
        // The event continues in isComplete: waiting for the other create is no failure (nothing was sent).
        throw new WaitPastDeadline(`${what}still in flight past this invocation's deadline`, `the product-${product} creates lock`);
      }
      throw new HandlerError(`${what}still in flight; creates of one product (of one identity, where the service narrows its lists to it) `
        + 'run one at a time so that a lost answer is never mistaken for another\'s: deploy again');
    }
    if (round === 0) log({ msg: 'another create of the product is in flight: waiting for it to record its outcome', product, identity: scope.identity, holder: holder.member.split('|')[0] });
    // Slower as the wait grows (a fleet's waiters share one partition of the journal), 2 s at most.
    const pause = Math.min(2000, 250 + 25 * round);
    await rt.sleep(pause + Math.floor(Math.random() * pause));
    if (scope.identity === undefined && want.identity !== undefined && round % 4 === 3) {
      const next = await narrowest();
      if (next.identity !== undefined) {
        // Learned meanwhile (another create's list): the product's lock it may have written while waiting goes.
        await rt.journal.unlock(kind, me);
        scope = next;
      }
    }
  }
  const held = scope;
  let kept = false;
  try {
    return await fn(held);
  } catch (e) {
    // A POST sent and not resolved (the record stays `recording`): the lock stays with the resource until its next
    // event resolves it (the same resource takes it over) or it goes stale, when a lone candidate is no longer taken
    // (FRESH_ATTEMPT_MS): no other create runs inside the window that resolution will compare.
    kept = keepOnFailure();
    throw e;
  } finally {
    if (!kept) {
      // A record resumed `recording` may still hold the lock an earlier event kept, of the other scope: released too.
      const parts = new Set<string | undefined>([held.identity]);
      if (rec.state === 'recording') [undefined, want.identity].forEach((p) => parts.add(p));
      for (const part of parts) {
        await rt.journal.unlock(kind, me, part).catch((e: unknown) => {
          log({ level: 'WARNING', msg: 'could not release the creates lock (it expires)', product, error: messageOf(e) });
        });
      }
    }
  }
}
