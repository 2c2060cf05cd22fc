/**
 * Creating a subscription without ever taking one the resource did not make.
 *
 * A `POST /v2/sub` whose answer is lost (5xx, dropped connection, timeout, a killed runner) may or may not have made a
 * subscription. What it made is found by comparing the product's subscriptions listed right before the call (kept in
 * the journal record as `attempt.before`, or `attempt.identityBefore` when narrowed to the identity) with a list after
 * it: a subscription that existed before the call is never a candidate, whoever made it (the web UI, another app, a
 * stack of another region or journal table). The creates of one identity (of the whole product, until the service is
 * known to narrow its lists to an identity) are serialized per journal (creates-lock.ts, from the list before the POST
 * to the recorded outcome), so no create of this journal runs inside another's window: a fleet's concurrent creates
 * never take each other's subscriptions. More than one candidate (something made elsewhere during the call) fails
 * naming them. See docs/handler.md ("Ownership").
 */
import { Subscription, SubscriptionCreateV2 } from '../client';
import { attemptBefore, canonicalIdentity, lockableIdentity, nowIso, OwnsSubscription } from './common';
import { attemptScope, createScope, CreatesScope, withCreatesLock } from './creates-lock';
import { HandlerError, isDefiniteFailure, messageOf } from './errors';
import { JournalRecord } from './journal';
import { log } from './log';
import { learnNarrowing, narrowingShown, unlearnIfAnswered } from './narrowing';
import { Runtime } from './runtime';

/** Creating POSTs one create sends at most while each lost answer is proven to have made nothing. */
export const MAX_CREATE_POSTS = 3;
/**
 * An attempt older than this (the longest a Lambda invocation runs) is resolved only when nothing appeared since its
 * call: over a longer window a new subscription may as well be another's, so it is named, never taken.
 */
export const FRESH_ATTEMPT_MS = 15 * 60_000;
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
  return withCreatesLock(rt, scope, rec, (held) => resolveLocked(rt, rec, matches, held), () => sentAndUnresolved(rec));
}

/** `resolveAttempt` with the lock `held`: under an identity's lock, a candidate must be shown the identity's. */
async function resolveLocked<D extends OwnsSubscription>(rt: Runtime, rec: JournalRecord<D>,
  matches: (s: Subscription) => boolean, held: CreatesScope): Promise<Resolved> {
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
  // Checked first: a stale window, and several candidates, are refused before any wait for the narrowing check (under
  // an identity's lock, a list of identity 0 that answers anything still unlearns a wrong "yes").
  const identity = held.identity ?? (a.lock === 'identity' ? canonicalIdentity(a.identity) : undefined);
  const age = Date.now() - Date.parse(a.startedAt);
  const stale = candidates.length === 1 && age > FRESH_ATTEMPT_MS;
  if ((stale || candidates.length > 1) && identity !== undefined) await unlearnIfAnswered(rt, a.product);
  if (stale) {
    throw new HandlerError(`a product-${a.product} subscription create of ${rec.key} had no clear outcome ${Math.round(age / 60_000)} minutes ago `
      + `and subscription ${candidates[0]} of the product appeared since: over so long a window it may as well be another's, so it is not `
      + `taken or changed (the record stays '${rec.state}'); if it is this resource's, set it invalid in the service (or keep it as your `
      + `own), then run 'dpi journal resolve ${rec.key} --keep-candidates' and deploy again`);
  }
  if (candidates.length > 1) throw severalCandidates(rec, a.product, candidates);
  // Another identity's create may have run inside the window when the POST or this resolution holds only an identity's lock.
  if (identity !== undefined
    && !await narrowingShown(rt, a.product, identity, appearedSubs.filter((s) => candidates.includes(String(s.id))), `${rec.key}|${rec.id}`,
      Date.parse(a.startedAt))) {
    throw new HandlerError(`a product-${a.product} subscription create of ${rec.key} had no clear outcome and subscription(s) `
      + `${candidates.slice(0, 10).join(', ')} appeared since in the list of identity ${a.identity}, but the service does not show that it narrows `
      + 'that list to the identity (the records show no identity, and a list filtered by an identity no subscription has still answers them): '
      + 'a create of another identity that ran meanwhile may have made them, so none is taken or changed (the record stays '
      + `'${rec.state}'); if one is this resource's, set it invalid in the service (or keep it as your own), then run `
      + `'dpi journal resolve ${rec.key} --keep-candidates' and deploy again`);
  }
  log({ msg: 'found the subscription the create made: the one that appeared since the call', subscriptionId: candidates[0] });
  return { id: candidates[0] };
}

/** The refusal of a resolution that found several candidates: which one the create made cannot be told. */
function severalCandidates(rec: JournalRecord<OwnsSubscription>, product: number, candidates: string[]): HandlerError {
  return new HandlerError(`a product-${product} subscription create of ${rec.key} had no clear outcome and ${candidates.length} subscriptions `
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
  const identity = canonicalIdentity(attrs.remote_identity);
  let latest: JournalRecord<D> = rec;
  let learnFrom: string | undefined;
  const saved = await withCreatesLock(rt, createScope(rec, product, identity), rec, async (held) => {
    let r = rec;
    let id: string | undefined;
    let lost: string | undefined;
    let answered = false;
    for (let posts = 0; id === undefined;) {
      if (r.state === 'recording') {
        id = (await resolveLocked(rt, r, matches, held)).id;
        if (id !== undefined) break;
        if (lost !== undefined) log({ level: 'WARNING', msg: 'the subscription create had no clear outcome and made nothing (nothing appeared since the call)', error: lost });
        else log({ msg: 'an earlier attempt of this resource made nothing: creating anew' });
      }
      if (posts >= MAX_CREATE_POSTS) {
        latest = await rt.journal.save(r, back, { ...r.doc, attempt: undefined });
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
          latest = await rt.journal.save(r, back, { ...r.doc, attempt: undefined });
          throw e;
        }
      }
      let attempt = r.doc.attempt;
      if (lost === undefined || attempt === undefined) {
        const listed = (await rt.client.subscriptions.list({ product, remoteIdentity: identity })).map((s) => String(s.id));
        attempt = {
          product,
          ...(identity !== undefined ? { identity, identityBefore: listed } : { before: listed }),
          ...(held.identity !== undefined ? { lock: 'identity' as const } : {}),
          startedAt: nowIso(),
        };
      }
      r = await rt.journal.save(r, 'recording', { ...fresh(r.doc), attempt });
      latest = r;
      posts++;
      try {
        id = String((await rt.client.subscriptions.create(attrs)).id);
        answered = true;
      } catch (e) {
        if (isDefiniteFailure(e)) {
          latest = await rt.journal.save(r, back, { ...r.doc, attempt: undefined });
          throw e;
        }
        lost = messageOf(e);
        log({ level: 'WARNING', msg: 'the subscription create had no clear outcome: comparing the product\'s subscriptions with the list before the call', error: lost });
      }
    }
    const owner = await rt.journal.claim('sub', id, r.key);
    if (owner !== r.key) throw new HandlerError(`subscription ${id} is claimed by ${owner} in the lifecycle journal; deploy again`);
    // Under the whole product's lock because the service is not known to narrow its lists yet: learned from this one.
    if (answered && held.identity === undefined) learnFrom = id;
    return rt.journal.save(r, 'active', { ...r.doc, subscriptionId: id, attempt: undefined }, id);
  }, () => sentAndUnresolved(latest));
  // Learned after the lock is released: its lists hold up no other create.
  const learns = lockableIdentity(identity);
  if (learnFrom !== undefined && learns !== undefined) await learnNarrowing(rt, product, learns, learnFrom);
  return saved;
}

/** A record whose creating POST was sent and whose outcome is not recorded (it keeps its creates lock on a failure). */
function sentAndUnresolved(rec: JournalRecord<OwnsSubscription>): boolean {
  return rec.state === 'recording' && rec.doc.attempt !== undefined;
}
