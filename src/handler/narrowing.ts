/**
 * Whether the service narrows `GET /v2/sub` to a remote identity (`remote_identity`: the vendor's documented filter;
 * the spec shows `product` only). It decides what a subscription create locks (creates.ts): only its identity's
 * creates where the service is known to narrow, else the whole product's, as a service that ignores the filter needs.
 *
 * Learned, never assumed: after a create whose POST answered its new subscription's ID, a list filtered by an identity
 * no subscription has (`0`) that leaves that subscription out, and a minute or more later still leaves it out while
 * its identity's list shows it, shows it (`learnNarrowing`). Kept per container and in the journal (a fact
 * beside the product's creates locks, per service address), so the containers of every deploy of the account learn it
 * once. A planted fact can only make creates take identities' locks on a service that ignores the filter; there the
 * resolution of a lost answer still takes a candidate only once the service shows it is the identity's
 * (`narrowingShown` in creates.ts), so it fails clearly and never takes another's.
 */
import { ServiceError, Subscription } from '../client';
import { canonicalIdentity } from './common';
import { log } from './log';
import { clearedWithLocalRuntime, Runtime } from './runtime';

/** An identity no subscription has: a list filtered by it is empty where the service narrows lists to an identity. */
export const NO_IDENTITY = '0';

/**
 * What this container learned, until when: a "yes" is read again from the journal after a minute (another container
 * may have unlearned it), a "no" (or lists that lag) is kept as long as the journal keeps it.
 */
const known = new Map<string, { readonly yes: boolean; readonly until: number }>();

clearedWithLocalRuntime(() => known.clear());

const factName = (rt: Runtime): string => `narrows#${rt.serviceOrigin ?? 'service'}`;
const kindOf = (product: number): string => `sub#${product}`;
const keyOf = (rt: Runtime, product: number): string => `${rt.serviceOrigin ?? 'service'}|${product}`;

/** How long a learned "does not narrow" is kept in the journal before a create learns again. */
const NO_KEPT_MS = 60 * 60_000;
/** How long this container trusts a "yes" before it reads the journal again. */
const YES_CACHED_MS = 60_000;
/** How long this container waits before it learns again after lists that lag (the new subscription not shown yet). */
const LAG_KEPT_MS = 10 * 60_000;
/** How old the subscription of a first observation must be before a second one may learn "yes" from it. */
export const WITNESS_AGE_MS = 60_000;

/** What this container knows now, if anything. */
function cached(rt: Runtime, product: number): boolean | undefined {
  const c = known.get(keyOf(rt, product));
  return c !== undefined && Date.now() < c.until ? c.yes : undefined;
}

/** A first observation (fact `seen:<time>:<identity>:<subscription ID>`): a list of identity 0 left out that subscription. */
interface Seen {
  readonly at: number;
  readonly identity: string;
  readonly id: string;
}

/** What the journal says: 'yes', a recent 'no', a first observation, or nothing (learn); and the fact as read. */
async function journalSays(rt: Runtime, product: number): Promise<{ says?: 'yes' | 'no' | Seen; raw: string | null }> {
  const v = await rt.journal.fact(kindOf(product), factName(rt));
  const raw = v ?? null;
  const ahead = (t: number): boolean => t > Date.now() + 60_000;
  if (v === 'yes') return { says: 'yes', raw };
  const no = /^no:(\d+)$/.exec(v ?? '');
  if (no !== null) return { says: Date.now() - Number(no[1]) < NO_KEPT_MS && !ahead(Number(no[1])) ? 'no' : undefined, raw };
  const seen = /^seen:(\d+):([1-9]\d{0,17}):([^:]{1,64})$/.exec(v ?? '');
  return { says: seen !== null && !ahead(Number(seen[1])) ? { at: Number(seen[1]), identity: seen[2], id: seen[3] } : undefined, raw };
}

/**
 * Whether the service is known to narrow product `product`'s lists to an identity (this container's recent answer,
 * else the journal's).
 */
export async function narrows(rt: Runtime, product: number): Promise<boolean> {
  const c = cached(rt, product);
  if (c !== undefined) return c;
  const { says } = await journalSays(rt, product);
  if (says === 'yes') known.set(keyOf(rt, product), { yes: true, until: Date.now() + YES_CACHED_MS });
  return says === 'yes';
}

/** Records that the service does not narrow product `product`'s lists (for an hour, in the journal and here). */
async function learnedNo(rt: Runtime, product: number): Promise<void> {
  known.set(keyOf(rt, product), { yes: false, until: Date.now() + NO_KEPT_MS });
  await rt.journal.setFact(kindOf(product), factName(rt), `no:${Date.now()}`);
}

/**
 * Learns whether the service narrows product `product`'s lists, from subscription `madeId` that a create of identity
 * `identity` just made (its POST answered the ID): the identity's list must show it (a list that lags proves nothing)
 * and the list of identity `0` must leave it out (a refused list of identity `0`: the service does not narrow). Such
 * an observation is kept; "yes" is learned only when a later one, at least WITNESS_AGE_MS after, finds the list of
 * identity `0` still leaving out that older subscription while its own identity's list shows it: a list that lags
 * behind the POST (another replica) would show a subscription that old, so lag cannot teach "yes". Learning never
 * fails the create.
 */
export async function learnNarrowing(rt: Runtime, product: number, identity: string, madeId: string): Promise<void> {
  const k = keyOf(rt, product);
  try {
    if (cached(rt, product) !== undefined) return;
    const { says, raw } = await journalSays(rt, product);
    if (says === 'yes' || says === 'no') return;
    if (says !== undefined && Date.now() - says.at < WITNESS_AGE_MS) {
      // An observation too recent to be a witness: this container waits until it is old enough.
      known.set(k, { yes: false, until: says.at + WITNESS_AGE_MS });
      return;
    }
    const own = await rt.client.subscriptions.list({ product, remoteIdentity: identity });
    if (!own.some((s) => String(s.id) === madeId)) {
      // Not shown yet (a list that lags the POST): nothing is learned; this container tries again in a while.
      known.set(k, { yes: false, until: Date.now() + LAG_KEPT_MS });
      return;
    }
    let none: Set<string>;
    try {
      none = new Set((await rt.client.subscriptions.list({ product, remoteIdentity: NO_IDENTITY })).map((s) => String(s.id)));
    } catch (e) {
      if (!refused(e)) throw e;
      return await unlearned(rt, product);
    }
    if (none.has(madeId) || (says !== undefined && none.has(says.id))) return await unlearned(rt, product);
    const listedOf = async (of: string): Promise<Subscription[]> =>
      (of === identity ? own : rt.client.subscriptions.list({ product, remoteIdentity: of }));
    const witnessShown = says !== undefined && says.id !== madeId && (await listedOf(says.identity)).some((s) => String(s.id) === says.id);
    if (!witnessShown) {
      // The first observation (or its witness is no longer listed): kept, and judged again after WITNESS_AGE_MS.
      known.set(k, { yes: false, until: Date.now() + WITNESS_AGE_MS });
      await rt.journal.setFact(kindOf(product), factName(rt), `seen:${Date.now()}:${identity}:${madeId}`, raw);
      return;
    }
    if (await rt.journal.setFact(kindOf(product), factName(rt), 'yes', raw)) {
      known.set(k, { yes: true, until: Date.now() + YES_CACHED_MS });
      log({ msg: 'the service narrows subscription lists to an identity: creates of different identities run at once', product });
    }
  } catch (e) {
    log({ level: 'WARNING', msg: 'could not learn whether the service narrows subscription lists to an identity (creates of the product run one at a time)', product, error: (e as Error).message });
  }
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

/**
 * Whether the service shows that it narrows `GET /v2/sub` to identity `identity`, so that `candidates`, which
 * appeared in the identity's list, are the identity's: each shows the identity, or a list filtered by an identity no
 * subscription has leaves every one of them out. A create of another identity, which may have run at the same time
 * under its own lock, then cannot have made them. A refused list (4xx) shows nothing; a wait for the rate limit past
 * the deadline, or an unclear answer, is thrown (the event continues, or fails changing nothing).
 */
export async function narrowingShown(rt: Runtime, product: number, identity: string, candidates: Subscription[]): Promise<boolean> {
  const shown = (s: Subscription): boolean =>
    s.remote_identity !== undefined && s.remote_identity !== null && canonicalIdentity(s.remote_identity) === identity;
  if (candidates.every(shown)) return true;
  let listed: Subscription[];
  try {
    listed = await rt.client.subscriptions.list({ product, remoteIdentity: NO_IDENTITY });
  } catch (e) {
    if (refused(e)) return false;
    throw e;
  }
  const ids = new Set(listed.map((s) => String(s.id)));
  if (candidates.every((s) => !ids.has(String(s.id)))) return true;
  // The list of identity 0 answers them: the service does not narrow (the fact was wrong, or planted). Unlearned.
  await learnedNo(rt, product).catch(() => undefined);
  return false;
}
