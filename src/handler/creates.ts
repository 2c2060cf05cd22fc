/**
 * Creating a subscription without ever taking one the resource did not make.
 *
 * A `POST /v2/sub` whose answer is lost (5xx, dropped connection, timeout, a killed runner) may or may not have made a
 * subscription. What it made is found by comparing the product's subscriptions listed right before the call (kept in
 * the journal record as `attempt.before`) with a list after it: a subscription that existed before the call is never
 * a candidate, whoever made it (the web UI, another app, a stack of another region or journal table). Creates of the
 * same product in flight in this journal are marked (`Journal.markInflight`), so a concurrent create's new
 * subscription is not mistaken for this one's: the resolution waits for them, then takes a candidate only when it is
 * the one left; otherwise it fails naming the candidates. See docs/handler.md ("Ownership").
 */
import { Subscription, SubscriptionCreateV2 } from '../client';
import { nowIso, OwnsSubscription } from './common';
import { HandlerError, isDefiniteFailure, messageOf } from './errors';
import { InflightMark, JournalRecord } from './journal';
import { log } from './log';
import { Runtime } from './runtime';

/** Creating POSTs one create sends at most while each lost answer is proven to have made nothing. */
export const MAX_CREATE_POSTS = 3;
/** An in-flight mark older than this (the longest a Lambda invocation runs) belongs to an attempt that ended. */
export const STALE_INFLIGHT_MS = 15 * 60_000;
/** How long a resolution waits for concurrent creates of the same product to record their outcome. */
const WAIT_FOR_OTHERS_MS = 60_000;

/** The in-flight kind of a product's subscription creates. */
export function inflightKind(product: number | string): string {
  return `sub#${product}`;
}

/** The in-flight member of a journal record. */
export function inflightMember(rec: JournalRecord<unknown>): string {
  return `${rec.key}|${rec.id}`;
}

function live(m: InflightMark, now: number): boolean {
  const t = Date.parse(m.startedAt);
  return !Number.isFinite(t) || now - t < STALE_INFLIGHT_MS;
}

/** The outcome of resolving an attempt: the subscription it made, or none. */
export interface Resolved {
  readonly id?: string;
}

/**
 * What an attempt whose POST had no clear outcome made: `{ id }`, or `{}` when it made nothing. Fails, changing
 * nothing, when it cannot tell (several candidates, or a candidate while other creates of the product are in flight).
 */
export async function resolveAttempt<D extends OwnsSubscription>(rt: Runtime, rec: JournalRecord<D>,
  matches: (s: Subscription) => boolean): Promise<Resolved> {
  const a = rec.doc.attempt;
  if (a === undefined) return resolveWithoutBefore(rt, rec, matches);
  const before = new Set(a.before.map(String));
  const me = inflightMember(rec);
  const until = Math.min(Date.now() + WAIT_FOR_OTHERS_MS, rt.deadline - 30_000);
  for (;;) {
    const appeared = (await rt.client.subscriptions.list({ product: a.product }))
      .filter((s) => !before.has(String(s.id)) && s.status === 'active' && matches(s)).map((s) => String(s.id));
    const owners = await rt.journal.owners('sub', appeared);
    const claimedHere = appeared.find((id) => owners.get(id) === rec.key);
    // An earlier delivery claimed it and stopped before recording the outcome.
    if (claimedHere !== undefined) return { id: claimedHere };
    const candidates = appeared.filter((id) => !owners.has(id));
    if (candidates.length === 0) return {};
    const now = Date.now();
    const others = (await rt.journal.inflight(inflightKind(a.product))).filter((m) => m.member !== me && live(m, now));
    if (candidates.length === 1 && others.length === 0) {
      log({ msg: 'found the subscription the create made (it appeared after the call and no other create of the product is in flight)', subscriptionId: candidates[0] });
      return { id: candidates[0] };
    }
    if (others.length > 0 && Date.now() + 2000 < until) {
      log({ msg: 'other creates of the product are in flight: waiting for them to record their outcome', product: a.product, candidates, others: others.length });
      await rt.sleep(2000);
      continue;
    }
    throw new HandlerError(`a product-${a.product} subscription create of ${rec.key} had no clear outcome and ${candidates.length} subscription`
      + `${candidates.length > 1 ? 's' : ''} of the product appeared since (${candidates.slice(0, 10).join(', ')})`
      + `${others.length > 0 ? ` while ${others.length} other create${others.length > 1 ? 's' : ''} of the product ${others.length > 1 ? 'were' : 'was'} in flight` : ''}`
      + ': which one it made cannot be told, so none is taken or changed; deploy again once the other creates finished, or resolve it with '
      + `'dpi journal' (the record stays '${rec.state}')`);
  }
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
 * Creates the subscription of a journal record: the product's subscriptions are listed and kept with the intent
 * (`recording`, an in-flight mark) before the POST; the outcome (`active`, the ID claimed for the record's resource)
 * after it. A record already `recording` (an earlier delivery's POST had no clear outcome) is resolved first. A lost
 * answer is resolved the same way; when the lists prove nothing was made, the POST is sent again (at most
 * `MAX_CREATE_POSTS` in all). A refused POST (4xx) puts the record back to `back` and rethrows. `fresh` gives the
 * document of a new attempt (today's desired state); a resolved earlier attempt keeps its own.
 */
export async function createRecordedSubscription<D extends OwnsSubscription>(rt: Runtime, rec: JournalRecord<D>,
  attrs: SubscriptionCreateV2, back: string, matches: (s: Subscription) => boolean, fresh: (doc: D) => D = (d) => d): Promise<JournalRecord<D>> {
  const product = Number(attrs.product);
  const kind = inflightKind(product);
  let r = rec;
  let id: string | undefined;
  let lost: string | undefined;
  for (let posts = 0; id === undefined;) {
    if (r.state === 'recording') {
      id = (await resolveAttempt(rt, r, matches)).id;
      if (id !== undefined) break;
      if (lost !== undefined) log({ level: 'WARNING', msg: 'the subscription create had no clear outcome and made nothing (nothing appeared since the call)', error: lost });
      else log({ msg: 'an earlier attempt of this resource made nothing: creating anew' });
    }
    if (posts >= MAX_CREATE_POSTS) {
      await rt.journal.clearInflight(kind, inflightMember(r));
      await rt.journal.save(r, back, { ...r.doc, attempt: undefined });
      throw new HandlerError(`creating the product-${product} subscription had no clear outcome ${posts} times (${lost ?? 'no answer'}) and the `
        + 'service shows that nothing was made: deploy again');
    }
    const before = (await rt.client.subscriptions.list({ product })).map((s) => String(s.id));
    r = await rt.journal.save(r, 'recording', { ...fresh(r.doc), attempt: { product, before, startedAt: nowIso() } });
    await rt.journal.markInflight(kind, inflightMember(r));
    posts++;
    try {
      id = String((await rt.client.subscriptions.create(attrs)).id);
    } catch (e) {
      if (isDefiniteFailure(e)) {
        await rt.journal.clearInflight(kind, inflightMember(r));
        await rt.journal.save(r, back, { ...r.doc, attempt: undefined });
        throw e;
      }
      lost = messageOf(e);
      log({ level: 'WARNING', msg: 'the subscription create had no clear outcome: comparing the product\'s subscriptions with the list before the call', error: lost });
    }
  }
  const owner = await rt.journal.claim('sub', id, r.key);
  if (owner !== r.key) throw new HandlerError(`subscription ${id} is claimed by ${owner} in the lifecycle journal; deploy again`);
  await rt.journal.clearInflight(kind, inflightMember(r));
  return rt.journal.save(r, 'active', { ...r.doc, subscriptionId: id, attempt: undefined }, id);
}
