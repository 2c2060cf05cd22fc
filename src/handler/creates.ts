/**
 * Creating a subscription without ever taking one the resource did not make.
 *
 * A `POST /v2/sub` whose answer is lost (5xx, dropped connection, timeout, a killed runner) may or may not have made a
 * subscription. What it made is found by comparing the product's subscriptions listed right before the call (kept in
 * the journal record as `attempt.before`, or `attempt.identityBefore` when narrowed to the identity) with a list after
 * it: a subscription that existed before the call is never a candidate, whoever made it (the web UI, another app, a
 * stack of another region or journal table). The creates of one product are serialized per journal (a lock in the
 * journal, from the list before the POST to the recorded outcome), so no create of this journal runs inside another's
 * window: a fleet's concurrent creates never take each other's subscriptions. More than one candidate (something made elsewhere during the call) fails naming them. See
 * docs/handler.md ("Ownership").
 */
import { Subscription, SubscriptionCreateV2 } from '../client';
import { attemptBefore, CreateAttempt, nowIso, OwnsSubscription } from './common';
import { WaitPastDeadline } from './continuation';
import { HandlerError, isDefiniteFailure, messageOf } from './errors';
import { JournalRecord } from './journal';
import { log } from './log';
import { Runtime } from './runtime';

/** Creating POSTs one create sends at most while each lost answer is proven to have made nothing. */
export const MAX_CREATE_POSTS = 3;
/**
 * An attempt older than this (the longest a Lambda invocation runs) is resolved only when nothing appeared since its
 * call: over a longer window a new subscription may as well be another's, so it is named, never taken.
 */
export const FRESH_ATTEMPT_MS = 15 * 60_000;
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
 * What a subscription create locks: its product's creates, or only those of its remote identity (`identity`) when its
 * lists are narrowed to the identity. Creates of different identities then run at once (a fleet's creates are not
 * queued behind one another); a lost answer's candidate is taken only once the service is shown to narrow its lists to
 * the identity (`narrowingShown`).
 */
export interface CreatesScope {
  readonly product: number;
  readonly identity?: string;
}

/** The scope of an attempt: narrowed to its identity when its lists were. */
export function attemptScope(a: CreateAttempt): CreatesScope {
  return a.identity !== undefined ? { product: a.product, identity: String(a.identity) } : { product: a.product };
}

/**
 * Runs `fn` holding the creates lock of `scope` for `rec`: waits (patiently, saying so in the log) while another
 * create of the scope is in flight; fails clearly when it is still held close to the invocation's deadline.
 */
export async function withCreatesLock<T>(rt: Runtime, scope: CreatesScope, rec: JournalRecord<unknown>, fn: () => Promise<T>): Promise<T> {
  const { product, identity } = scope;
  const kind = inflightKind(product);
  const me = inflightMember(rec);
  for (let round = 0; ; round++) {
    const holder = await rt.journal.lock(kind, me, new Date(Date.now() - STALE_LOCK_MS).toISOString(), identity);
    if (holder === undefined) break;
    if (Date.now() + 1000 > rt.deadline - 60_000 || round >= 2000) {
      // A whole-product lock waiting for identities' creates stays written: released here, it holds up nobody.
      await rt.journal.unlock(kind, me, identity).catch(() => undefined);
      const what = `another product-${product} subscription create (${holder.member.split('|')[0]}, since ${holder.startedAt}) is `;
      if (rt.continues) {
        // The event continues in isComplete: waiting for the other create is no failure (nothing was sent).
        throw new WaitPastDeadline(`${what}still in flight past this invocation's deadline`, `the product-${product} creates lock`);
      }
      throw new HandlerError(`${what}still in flight; creates of one product (of one identity, where the lists are narrowed to it) run one `
        + 'at a time so that a lost answer is never mistaken for another\'s: deploy again');
    }
    if (round === 0) log({ msg: 'another create of the product is in flight: waiting for it to record its outcome', product, identity, holder: holder.member.split('|')[0] });
    await rt.sleep(250 + Math.floor(Math.random() * 250));
  }
  try {
    return await fn();
  } finally {
    await rt.journal.unlock(kind, me, identity).catch((e: unknown) => {
      log({ level: 'WARNING', msg: 'could not release the creates lock (it expires)', product, error: messageOf(e) });
    });
  }
}

/**
 * The scope of a create of `product` for `identity`: the identity's, unless the record's unresolved earlier attempt
 * (resolved first, under the same lock) listed more than that identity's subscriptions (the whole product's, before
 * the lists were narrowed, or another identity's): then the product's, so that no create of another identity runs
 * inside the window it compares.
 */
function createScope(rec: JournalRecord<OwnsSubscription>, product: number, identity: string | undefined): CreatesScope {
  const a = rec.state === 'recording' ? rec.doc.attempt : undefined;
  if (identity === undefined) return { product };
  if (rec.state === 'recording' && (a === undefined || attemptBefore(a) === undefined || a.product !== product
    || attemptScope(a).identity !== identity)) return { product };
  return { product, identity };
}

/** An identity no subscription has: a list filtered by it is empty where the service narrows lists to an identity. */
export const NO_IDENTITY = '0';

/**
 * Whether the service is shown to narrow `GET /v2/sub` to the identity `identity` (the vendor's documented filter;
 * the spec shows `product` only), so that `candidates`, which appeared in the identity's list, are the identity's:
 * each shows the identity, or a list filtered by an identity no subscription has leaves every one of them out. Then
 * a create of another identity, which ran at the same time under its own lock, cannot have made them.
 */
async function narrowingShown(rt: Runtime, product: number, identity: string, candidates: Subscription[]): Promise<boolean> {
  if (candidates.every((s) => s.remote_identity !== undefined && s.remote_identity !== null && String(s.remote_identity) === identity)) return true;
  let listed: Subscription[];
  try {
    listed = await rt.client.subscriptions.list({ product, remoteIdentity: NO_IDENTITY });
  } catch (e) {
    if (isDefiniteFailure(e)) return false;
    throw e;
  }
  const ids = new Set(listed.map((s) => String(s.id)));
  return candidates.every((s) => !ids.has(String(s.id)));
}

/** The outcome of resolving an attempt: the subscription it made, or none. */
export interface Resolved {
  readonly id?: string;
}

/**
 * What an attempt whose POST had no clear outcome made: `{ id }`, or `{}` when it made nothing; holds the creates lock
 * of the product while it looks. Fails, changing nothing, when it cannot tell (several candidates).
 */
export async function resolveAttempt<D extends OwnsSubscription>(rt: Runtime, rec: JournalRecord<D>,
  matches: (s: Subscription) => boolean): Promise<Resolved> {
  const a = rec.doc.attempt;
  // Without the list before the call, the whole product is listed: the whole product's lock.
  const scope = a !== undefined && attemptBefore(a) !== undefined ? attemptScope(a)
    : { product: a?.product ?? (rec.doc as { product?: number }).product ?? 107 };
  return withCreatesLock(rt, scope, rec, () => resolveLocked(rt, rec, matches));
}

/** `resolveAttempt` with the lock held. */
async function resolveLocked<D extends OwnsSubscription>(rt: Runtime, rec: JournalRecord<D>,
  matches: (s: Subscription) => boolean): Promise<Resolved> {
  const a = rec.doc.attempt;
  if (a === undefined) return resolveWithoutBefore(rt, rec, matches);
  const listed = attemptBefore(a);
  if (listed === undefined) return resolveWithoutBefore(rt, rec, matches);
  const before = new Set(listed);
  const appearedSubs = (await rt.client.subscriptions.list({ product: a.product, remoteIdentity: a.identity }))
    .filter((s) => !before.has(String(s.id)) && s.status === 'active' && matches(s));
  const appeared = appearedSubs.map((s) => String(s.id));
  const owners = await rt.journal.owners('sub', appeared);
  // An earlier delivery claimed it and stopped before recording the outcome.
  const claimedHere = appeared.find((id) => owners.get(id) === rec.key);
  if (claimedHere !== undefined) return { id: claimedHere };
  const candidates = appeared.filter((id) => !owners.has(id));
  if (candidates.length === 0) return {};
  if (a.identity !== undefined
    && !await narrowingShown(rt, a.product, String(a.identity), appearedSubs.filter((s) => candidates.includes(String(s.id))))) {
    throw new HandlerError(`a product-${a.product} subscription create of ${rec.key} had no clear outcome and subscription(s) `
      + `${candidates.slice(0, 10).join(', ')} appeared since in the list of identity ${a.identity}, but the service does not show that it narrows `
      + 'that list to the identity (the records show no identity, and a list filtered by an identity no subscription has still answers them): '
      + 'a create of another identity that ran meanwhile may have made them, so none is taken or changed (the record stays '
      + `'${rec.state}'); set the one this resource made invalid in the service, then run 'dpi journal resolve ${rec.key} --keep-candidates' and deploy again`);
  }
  const age = Date.now() - Date.parse(a.startedAt);
  if (candidates.length === 1 && age > FRESH_ATTEMPT_MS) {
    throw new HandlerError(`a product-${a.product} subscription create of ${rec.key} had no clear outcome ${Math.round(age / 60_000)} minutes ago `
      + `and subscription ${candidates[0]} of the product appeared since: over so long a window it may as well be another's, so it is not `
      + `taken or changed (the record stays '${rec.state}'); if it is this resource's, set it invalid in the service (or keep it as your `
      + `own), then run 'dpi journal resolve ${rec.key} --keep-candidates' and deploy again`);
  }
  if (candidates.length === 1) {
    log({ msg: 'found the subscription the create made: the one that appeared since the call', subscriptionId: candidates[0] });
    return { id: candidates[0] };
  }
  throw new HandlerError(`a product-${a.product} subscription create of ${rec.key} had no clear outcome and ${candidates.length} subscriptions `
    + `of the product appeared since (${candidates.slice(0, 10).join(', ')}), made elsewhere meanwhile: which one it made cannot be told, so `
    + `none is taken or changed (the record stays '${rec.state}'); set the one this resource made invalid in the service (the others are not `
    + `this stack's), then run 'dpi journal resolve ${rec.key} --keep-candidates' and deploy again`);
}

/** An attempt recorded before the journal kept the list before the call: never guesses. */
async function resolveWithoutBefore<D extends OwnsSubscription>(rt: Runtime, rec: JournalRecord<D>,
  matches: (s: Subscription) => boolean): Promise<Resolved> {
  const product = (rec.doc as { product?: number }).product ?? 107;
  const subs = (await rt.client.subscriptions.list({ product })).filter((s) => s.status === 'active' && matches(s)).map((s) => String(s.id));
  const owners = await rt.journal.owners('sub', subs);
  const mine = subs.find((id) => owners.get(id) === rec.key);
  if (mine !== undefined) return { id: mine };
  const unclaimed = subs.filter((id) => !owners.has(id));
  if (unclaimed.length === 0) return {};
  throw new HandlerError(`an earlier create of ${rec.key} had no clear outcome and was recorded without the list of what existed before it; `
    + `${unclaimed.length} active product-${product} subscriptions are claimed by no resource of this journal (${unclaimed.slice(0, 10).join(', ')}), `
    + 'and any of them may be another app\'s or the web UI\'s: none is taken or changed; if none is this resource\'s, run '
    + `'dpi journal resolve ${rec.key}' and deploy again`);
}

/**
 * Creates the subscription of a journal record, holding the product's creates lock: the product's subscriptions are
 * listed and kept with the intent (`recording`) before the POST; the outcome (`active`, the ID claimed for the
 * record's resource) after it. A record already `recording` (an earlier delivery's POST had no clear outcome) is
 * resolved first. A lost answer is resolved the same way; when the lists prove nothing was made, the POST is sent
 * again (at most `MAX_CREATE_POSTS` in all). A refused POST (4xx) puts the record back to `back` and rethrows. `fresh`
 * gives the document of a new attempt (today's desired state); a resolved earlier attempt keeps its own. `beforePost`
 * runs before each POST: when it throws (e.g. the Create was cancelled), nothing is sent and the record goes back to `back`.
 */
export async function createRecordedSubscription<D extends OwnsSubscription>(rt: Runtime, rec: JournalRecord<D>,
  attrs: SubscriptionCreateV2, back: string, matches: (s: Subscription) => boolean, fresh: (doc: D) => D = (d) => d,
  beforePost?: () => Promise<void>): Promise<JournalRecord<D>> {
  const product = Number(attrs.product);
  const identity = attrs.remote_identity !== undefined && attrs.remote_identity !== null ? String(attrs.remote_identity) : undefined;
  return withCreatesLock(rt, createScope(rec, product, identity), rec, async () => {
    let r = rec;
    let id: string | undefined;
    let lost: string | undefined;
    for (let posts = 0; id === undefined;) {
      if (r.state === 'recording') {
        id = (await resolveLocked(rt, r, matches)).id;
        if (id !== undefined) break;
        if (lost !== undefined) log({ level: 'WARNING', msg: 'the subscription create had no clear outcome and made nothing (nothing appeared since the call)', error: lost });
        else log({ msg: 'an earlier attempt of this resource made nothing: creating anew' });
      }
      if (posts >= MAX_CREATE_POSTS) {
        await rt.journal.save(r, back, { ...r.doc, attempt: undefined });
        throw new HandlerError(`creating the product-${product} subscription had no clear outcome ${posts} times (${lost ?? 'no answer'}) and the `
          + 'service shows that nothing was made: deploy again');
      }
      // A resend after a lost answer keeps the first list: should the first POST show up late, it is still a candidate
      // (then named with the second, never taken on a guess) instead of hiding among what existed before.
      if (beforePost !== undefined) {
        try {
          await beforePost();
        } catch (e) {
          // Nothing is sent: an earlier POST of this record, if any, is proven above to have made nothing.
          await rt.journal.save(r, back, { ...r.doc, attempt: undefined });
          throw e;
        }
      }
      let attempt = r.doc.attempt;
      if (lost === undefined || attempt === undefined) {
        const listed = (await rt.client.subscriptions.list({ product, remoteIdentity: identity })).map((s) => String(s.id));
        attempt = { product, ...(identity !== undefined ? { identity, identityBefore: listed } : { before: listed }), startedAt: nowIso() };
      }
      r = await rt.journal.save(r, 'recording', { ...fresh(r.doc), attempt });
      posts++;
      try {
        id = String((await rt.client.subscriptions.create(attrs)).id);
      } catch (e) {
        if (isDefiniteFailure(e)) {
          await rt.journal.save(r, back, { ...r.doc, attempt: undefined });
          throw e;
        }
        lost = messageOf(e);
        log({ level: 'WARNING', msg: 'the subscription create had no clear outcome: comparing the product\'s subscriptions with the list before the call', error: lost });
      }
    }
    const owner = await rt.journal.claim('sub', id, r.key);
    if (owner !== r.key) throw new HandlerError(`subscription ${id} is claimed by ${owner} in the lifecycle journal; deploy again`);
    return rt.journal.save(r, 'active', { ...r.doc, subscriptionId: id, attempt: undefined }, id);
  });
}
