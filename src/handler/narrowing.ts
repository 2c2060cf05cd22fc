/**
 * Whether the service narrows `GET /v2/sub` to a remote identity (`remote_identity`: the vendor's documented filter;
 * the spec shows `product` only). It decides what a subscription create locks (creates.ts): only its identity's
 * creates where the service is known to narrow, else the whole product's, as a service that ignores the filter needs.
 *
 * Learned, never assumed (`learnNarrowing`): after a create whose POST answered its new subscription's ID, a list
 * filtered by an identity no subscription has (`0`) leaves that subscription out, and a minute or more later (by the
 * judging container's own clock) a create of another identity finds that older subscription listed under its identity,
 * left out of its own identity's list and of identity 0's. Kept per container and in the journal (a fact
 * beside the product's creates locks, per service address), so the containers of every deploy of the account learn it
 * once. A planted fact can only make creates take identities' locks on a service that ignores the filter; there the
 * resolution of a lost answer still takes a candidate only once the service shows it is the identity's
 * (`narrowingShown` in creates.ts), so it fails clearly and never takes another's.
 */
import { DpiClient, ServiceError, Subscription } from '../client';
import { canonicalIdentity } from './common';
import { WaitPastDeadline } from './continuation';
import { HandlerError } from './errors';
import { log } from './log';
import { clearedWithLocalRuntime, Runtime } from './runtime';

/** An identity no subscription has: a list filtered by it is empty where the service narrows lists to an identity. */
export const NO_IDENTITY = '0';

/**
 * What this container learned from the journal, until when: a "yes" is read again after a minute (another container
 * may have unlearned it), a "no" is kept as long as the journal keeps it.
 */
const known = new Map<string, { readonly yes: boolean; readonly until: number }>();
/** When this container may try to learn again (after lists that lag, an error, or a recent observation): not a "no". */
const retryAt = new Map<string, number>();
/** When this container first read a first observation (the fact's value): its age is judged by this clock alone. */
const firstRead = new Map<string, { readonly raw: string; readonly at: number }>();

clearedWithLocalRuntime(() => {
  known.clear();
  retryAt.clear();
  firstRead.clear();
});

const factName = (rt: Runtime): string => `narrows#${rt.serviceOrigin ?? 'service'}`;
const kindOf = (product: number): string => `sub#${product}`;
const keyOf = (rt: Runtime, product: number): string => `${rt.serviceOrigin ?? 'service'}|${product}`;

/** How long a learned "does not narrow" is kept in the journal before a create learns again. */
const NO_KEPT_MS = 60 * 60_000;
/** How long this container trusts a "yes" before it reads the journal again. */
const YES_CACHED_MS = 60_000;
/** How long this container waits before it learns again after lists that lag (the new subscription not shown yet). */
const LAG_KEPT_MS = 10 * 60_000;
/**
 * How old a subscription must be before a list of identity 0 that leaves it out shows narrowing: longer than any
 * replica lags behind a POST (assumed under a minute).
 */
export const WITNESS_AGE_MS = 60_000;
/** How far the provider functions' clocks may disagree (assumed; Lambda's are synchronized). */
export const CLOCK_SKEW_MS = 60_000;
/** How long a container that met an observation of its own create's identity waits before it tries again. */
const SAME_IDENTITY_RETRY_MS = 10_000;
/**
 * The most the learning's lists may take together, their turns in the request budget included (a 429's wait, a
 * minute or more, is not waited for).
 */
const LEARNING_BUDGET_MS = 30_000;

/** What this container knows now, if anything. */
function cached(rt: Runtime, product: number): boolean | undefined {
  const c = known.get(keyOf(rt, product));
  return c !== undefined && Date.now() < c.until ? c.yes : undefined;
}

/** A first observation (fact `seen:<time>:<identity>:<subscription ID>`): a list of identity 0 left out that subscription. */
interface Seen {
  readonly identity: string;
  readonly id: string;
}

/** What the journal says: 'yes', a recent 'no', a first observation, or nothing (learn); and the fact as read. */
async function journalSays(rt: Runtime, product: number): Promise<{ says?: 'yes' | 'no' | Seen; raw: string | null }> {
  const v = await rt.journal.fact(kindOf(product), factName(rt));
  const raw = v ?? null;
  const ahead = (t: number): boolean => t > Date.now() + CLOCK_SKEW_MS;
  if (v === 'yes') return { says: 'yes', raw };
  const no = /^no:(\d{1,15})$/.exec(v ?? '');
  if (no !== null) return { says: Date.now() - Number(no[1]) < NO_KEPT_MS && !ahead(Number(no[1])) ? 'no' : undefined, raw };
  // The time is the writer's (for people reading the journal): the age is judged by the reader's own clock.
  const seen = (v ?? '').length <= 300 ? /^seen:(\d{1,15}):([1-9]\d*):(.+)$/.exec(v ?? '') : null;
  return { says: seen !== null && !ahead(Number(seen[1])) ? { identity: seen[2], id: seen[3] } : undefined, raw };
}

/**
 * Whether the service is known to narrow product `product`'s lists to an identity (this container's recent answer,
 * else the journal's).
 */
export async function narrows(rt: Runtime, product: number): Promise<boolean> {
  const c = cached(rt, product);
  if (c !== undefined) return c;
  const { says, raw } = await journalSays(rt, product);
  const k = keyOf(rt, product);
  // A "no" is read again after a minute too (it may be learned again once the journal's hour is over).
  if (says === 'yes' || says === 'no') known.set(k, { yes: says === 'yes', until: Date.now() + YES_CACHED_MS });
  else if (says !== undefined && raw !== null) noteFirstRead(k, raw);
  return says === 'yes';
}

/**
 * When this container first read the first observation `raw` (now, if this is the first time): a create waiting for
 * the product's lock counts its wait towards the minute.
 */
function noteFirstRead(k: string, raw: string): number {
  const at = firstRead.get(k)?.raw === raw ? firstRead.get(k)!.at : Date.now();
  firstRead.set(k, { raw, at });
  return at;
}

/** Records that the service does not narrow product `product`'s lists (for an hour, in the journal and here). */
async function learnedNo(rt: Runtime, product: number): Promise<void> {
  known.set(keyOf(rt, product), { yes: false, until: Date.now() + NO_KEPT_MS });
  await rt.journal.setFact(kindOf(product), factName(rt), `no:${Date.now()}`);
}

/**
 * Learns whether the service narrows product `product`'s lists, from subscription `madeId` that a create of identity
 * `identity` just made (its POST answered the ID), outside any creates lock. The identity's list must show it (a list
 * that lags proves nothing) and the list of identity `0` must leave it out (a refused list of identity `0`, or one that
 * shows it: the service does not narrow). The first such observation is kept. "Yes" is learned only by a create of
 * another identity at least WITNESS_AGE_MS after this container first read that observation (its own clock: writers'
 * clocks may disagree): the observed subscription, that old, must be listed under its identity and left out of this
 * identity's list and of identity 0's. A list that lags behind the POST (another replica) would show a subscription
 * that old, so lag teaches no "yes"; a planted observation teaches nothing, as only a service that narrows lists an
 * old subscription under one identity and not under another. Learning never fails the create.
 */
export async function learnNarrowing(rt: Runtime, product: number, identity: string, madeId: string): Promise<void> {
  const k = keyOf(rt, product);
  if (cached(rt, product) !== undefined || Date.now() < (retryAt.get(k) ?? 0)) return;
  try {
    const { says, raw } = await journalSays(rt, product);
    if (says === 'yes' || says === 'no') return;
    if (says !== undefined && raw !== null) {
      const first = noteFirstRead(k, raw);
      // Too recent for this container to judge, or the same identity (its list cannot show the other's is left out).
      if (Date.now() - first < WITNESS_AGE_MS) {
        retryAt.set(k, first + WITNESS_AGE_MS);
        return;
      }
      if (says.identity === identity) {
        retryAt.set(k, Date.now() + SAME_IDENTITY_RETRY_MS);
        return;
      }
    }
    // One deadline for the learning's lists (a 429's wait, a minute or more, is not waited for), and half of what is
    // left, up to a minute, kept for the rest of the event: learning never holds up the create it follows for long.
    const until = Math.min(Date.now() + LEARNING_BUDGET_MS, rt.deadline - Math.min(60_000, Math.max(0, rt.deadline - Date.now()) / 2));
    if (until - Date.now() < 5_000) {
      log({ msg: 'too little of this invocation is left to learn whether the service narrows subscription lists to an identity', product });
      retryAt.set(k, Date.now() + SAME_IDENTITY_RETRY_MS);
      return;
    }
    const client = (): DpiClient => rt.client.withDeadline(until);
    const own = await client().subscriptions.list({ product, remoteIdentity: identity });
    if (!own.some((s) => String(s.id) === madeId)) {
      // Not shown yet (a list that lags the POST): nothing is learned; this container tries again in a while.
      retryAt.set(k, Date.now() + LAG_KEPT_MS);
      return;
    }
    let none: Set<string>;
    try {
      none = new Set((await client().subscriptions.list({ product, remoteIdentity: NO_IDENTITY })).map((s) => String(s.id)));
    } catch (e) {
      if (!refused(e)) throw e;
      return await unlearned(rt, product);
    }
    // Where the service narrows, no subscription is identity 0's: any answer there (even another one, or one that a
    // page shifting under the read moved) is no narrowing.
    const old = says !== undefined ? says.id : undefined;
    if (none.size > 0 || (old !== undefined && own.some((s) => String(s.id) === old))) return await unlearned(rt, product);
    const ownIds = new Set(own.map((s) => String(s.id)));
    const witness = says !== undefined ? await listedUnder(client(), product, says, ownIds) : 'absent';
    // Two identities' lists that share a subscription: the service does not narrow.
    if (witness === 'shared') return await unlearned(rt, product);
    // The older subscription itself must still be there, active and (where its record shows one) of its identity: a
    // list that lags may still show one deleted since.
    if (says !== undefined && witness === 'shown' && await stillThere(client(), says)) {
      if (await rt.journal.setFact(kindOf(product), factName(rt), 'yes', raw)) {
        known.set(k, { yes: true, until: Date.now() + YES_CACHED_MS });
        log({ msg: 'the service narrows subscription lists to an identity: creates of different identities run at once', product });
      }
      return;
    }
    // The first observation (or one whose subscription is no longer listed): kept, and judged after WITNESS_AGE_MS.
    const value = `seen:${Date.now()}:${identity}:${madeId}`;
    if (await rt.journal.setFact(kindOf(product), factName(rt), value, raw)) firstRead.set(k, { raw: value, at: Date.now() });
    retryAt.set(k, Date.now() + WITNESS_AGE_MS);
  } catch (e) {
    retryAt.set(k, Date.now() + WITNESS_AGE_MS);
    log({ level: 'WARNING', msg: 'could not learn whether the service narrows subscription lists to an identity (creates of the product run one at a time)', product, error: (e as Error).message });
  }
}

/**
 * What the list of the observation's identity shows: its subscription, and nothing of `ownIds` (the creating identity's
 * list: where the service narrows, two identities' lists are apart, so one item skipped by a page that shifted cannot
 * pass for narrowing) ('shown'); a subscription of `ownIds` ('shared': the service does not narrow); or not its
 * subscription ('absent'; also a refused list).
 */
async function listedUnder(client: DpiClient, product: number, seen: Seen, ownIds: ReadonlySet<string>): Promise<'shown' | 'shared' | 'absent'> {
  let listed: Subscription[];
  try {
    listed = await client.subscriptions.list({ product, remoteIdentity: seen.identity });
  } catch (e) {
    if (refused(e)) return 'absent';
    throw e;
  }
  if (listed.some((s) => ownIds.has(String(s.id)))) return 'shared';
  return listed.some((s) => String(s.id) === seen.id) ? 'shown' : 'absent';
}

/**
 * Whether the observation's subscription reads as not ended (any status but `invalid` or `cancelled`: a create may
 * pause it at once) and not of another identity (404 or a refusal: no).
 */
async function stillThere(client: DpiClient, seen: Seen): Promise<boolean> {
  let s: Subscription;
  try {
    s = await client.subscriptions.get(seen.id);
  } catch (e) {
    if (refused(e)) return false;
    throw e;
  }
  const of = s.remote_identity === undefined || s.remote_identity === null ? undefined : canonicalIdentity(s.remote_identity);
  return s.status !== 'invalid' && s.status !== 'cancelled' && (of === undefined || of === seen.identity);
}

async function unlearned(rt: Runtime, product: number): Promise<void> {
  await learnedNo(rt, product);
  log({ msg: 'the service does not narrow subscription lists to an identity: creates of the product run one at a time', product });
}

/** A list the service refused (4xx but 429), not one stopped by a wait for the rate limit. */
function refused(e: unknown): boolean {
  const status = e instanceof ServiceError && !e.waitPastDeadline ? e.status ?? 0 : 0;
  return status >= 400 && status < 500 && status !== 429;
}

/** When a resolution first listed these candidates (a fact beside the locks, so that its wait spans invocations). */
interface Listed {
  readonly at: number;
  readonly ids: string[];
}

function listedOf(v: string | undefined): Listed | undefined {
  try {
    const o = JSON.parse(v ?? '') as { at?: unknown; ids?: unknown };
    return typeof o.at === 'number' && Array.isArray(o.ids) && o.ids.every((x) => typeof x === 'string') ? { at: o.at, ids: o.ids as string[] } : undefined;
  } catch {
    return undefined;
  }
}

/**
 * Unlearns "yes" when the list of identity 0 answers anything (read once, no wait: an answer there is conclusive), for
 * a resolution that refuses its candidates without the narrowing check (several, or a stale window) under an
 * identity's lock. Never fails.
 */
export async function unlearnIfAnswered(rt: Runtime, product: number): Promise<void> {
  try {
    const until = Math.min(rt.deadline - 30_000, Date.now() + LEARNING_BUDGET_MS);
    if (until - Date.now() < 5_000) return;
    if ((await rt.client.withDeadline(until).subscriptions.list({ product, remoteIdentity: NO_IDENTITY })).length > 0) await unlearned(rt, product);
  } catch (e) {
    if (refused(e)) await unlearned(rt, product).catch(() => undefined);
  }
}

/**
 * Whether the service shows that it narrows `GET /v2/sub` to identity `identity`, so that `candidates`, which
 * appeared in the identity's list, are the identity's: each shows the identity, or the list filtered by an identity no
 * subscription has is empty. A create of another identity, which may have run at the same time under its own lock,
 * then cannot have made them. That list is read once no list lags behind the candidates: WITNESS_AGE_MS after this
 * container listed them, or, where an earlier invocation of the resolution `attempt` (`<resource key>|<record ID>`)
 * listed them first (kept in the journal), that long plus CLOCK_SKEW_MS after its time, so the wait ends however short
 * each invocation is. The wait holds the lock the resolution holds, and continues the event past the invocation's
 * deadline where it can. A refused list (4xx) shows nothing; a wait for the rate limit past the deadline, or an
 * unclear answer, is thrown (the event continues, or fails changing nothing).
 */
export async function narrowingShown(rt: Runtime, product: number, identity: string, candidates: Subscription[], attempt: string,
  startedAt: number): Promise<boolean> {
  const shown = (s: Subscription): boolean =>
    s.remote_identity !== undefined && s.remote_identity !== null && canonicalIdentity(s.remote_identity) === identity;
  if (candidates.every(shown)) return true;
  const ids = candidates.map((c) => String(c.id));
  const name = `listed#${attempt}`;
  const raw = await rt.journal.fact(kindOf(product), name);
  const prior = listedOf(raw);
  // A listing of these very candidates, within the attempt's window (a time before the attempt, or ahead of this
  // clock, or other IDs: not this resolution's listing, planted or not).
  const began = Number.isFinite(startedAt) ? startedAt : Date.now();
  const same = prior !== undefined && prior.ids.length === ids.length && ids.every((id) => prior.ids.includes(id));
  let readyAt: number;
  if (prior !== undefined && same && prior.at >= began - CLOCK_SKEW_MS && prior.at <= Date.now() + CLOCK_SKEW_MS) {
    readyAt = prior.at + WITNESS_AGE_MS + CLOCK_SKEW_MS;
  } else {
    await rt.journal.setFact(kindOf(product), name, JSON.stringify({ at: Date.now(), ids }));
    readyAt = Date.now() + WITNESS_AGE_MS;
  }
  // Never sooner than a minute (and the clocks' disagreement) after the attempt began.
  readyAt = Math.max(readyAt, began + WITNESS_AGE_MS + CLOCK_SKEW_MS);
  const wait = readyAt - Date.now();
  if (wait > 0) {
    if (Date.now() + wait > rt.deadline - 30_000) {
      const what = `the list of identity ${NO_IDENTITY} that shows whether the product-${product} subscription(s) ${ids.slice(0, 10).join(', ')} `
        + `are identity ${identity}'s is read ${Math.ceil(wait / 1000)} s from now, a minute after they were listed (when no list lags behind them)`;
      if (rt.continues) throw new WaitPastDeadline(`${what}: past this invocation's deadline`, 'the narrowing check');
      throw new HandlerError(`${what}, past this invocation's deadline: deploy again`);
    }
    log({ msg: 'waiting until no list lags behind the candidates before reading the list of no identity', product, ms: wait });
    await rt.sleep(wait);
  }
  let listed: Subscription[] | undefined;
  try {
    listed = await rt.client.subscriptions.list({ product, remoteIdentity: NO_IDENTITY });
  } catch (e) {
    if (!refused(e)) throw e;
  }
  // Read (or refused): the listing's time is not needed any more (a wait past the deadline above keeps it).
  await rt.journal.dropFact(kindOf(product), name).catch(() => undefined);
  if (listed === undefined) return false;
  // Where the service narrows, no subscription is identity 0's: any answer there is no narrowing.
  if (listed.length === 0) return true;
  // The list of identity 0 answers something: the service does not narrow (the fact was wrong, or planted). Unlearned.
  await learnedNo(rt, product).catch(() => undefined);
  return false;
}
