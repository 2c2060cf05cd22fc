/**
 * `dpi journal resolve`: what the check of an unconfirmed attempt builds on (the service it reads, the outcome), and
 * the check of the shared create (`recording`, src/handler/creates.ts: a subscription create of a subscription or a
 * pipeline resource). A kind's own unconfirmed states are checked by its `attemptChecks` (src/kinds/<kind>/tools/resolve.ts,
 * listed in src/kinds/registry/cli.ts).
 */
import { DpiClient } from '../../client';
import { Journal, JournalRecord } from '../../handler/journal';

/** A subscription create in flight, as the handler records it in a `recording` record (`attempt`). */
interface CreateAttempt {
  product: number;
  /** The IDs of the product's subscriptions listed right before the POST (of `identity` only, when it is set: `identityBefore`). */
  before: string[];
  /** The remote identity the attempt's lists were narrowed to. */
  identity?: string;
}

/** The attempt of a `recording` record; undefined when the handler that wrote it kept none (older handlers). */
export function attemptOf(doc: Record<string, unknown>): CreateAttempt | 'unreadable' | undefined {
  const a = doc.attempt;
  if (a === undefined || a === null) return undefined;
  if (typeof a !== 'object') return 'unreadable';
  const { product, before, identity, identityBefore } = a as { product?: unknown; before?: unknown; identity?: unknown; identityBefore?: unknown };
  const n = Number(product);
  // A narrowed attempt keeps its list as identityBefore (src/handler/common.ts, CreateAttempt).
  const narrowed = identity !== undefined && identity !== null;
  const listed = narrowed ? identityBefore : before;
  if (!Number.isInteger(n) || n <= 0 || !Array.isArray(listed)) return 'unreadable';
  return { product: n, before: listed.map(String), ...(narrowed ? { identity: String(identity) } : {}) };
}

/** What a check needs: the service (a client), opened only when an attempt has to be checked. */
export interface Service {
  readonly client: DpiClient;
  readonly origins: string[];
  close(): Promise<void>;
}

/** The outcome of a check: why a record cannot be abandoned (what its attempt may have made), or a note on what was checked. */
export type Check = { readonly refusal?: string; readonly note?: string };

/** The check of a record in an unconfirmed state, before it is abandoned. */
export type AttemptCheck = (r: JournalRecord<Record<string, unknown>>, journal: Journal, service: () => Promise<Service>) => Promise<Check>;

/**
 * `recording` (a subscription create, of a subscription or a pipeline resource) with `attempt`: an active subscription
 * of the attempt's product listed now, not in `attempt.before`, not of another identity where the read shows one, and
 * claimed in the journal by no other resource, is one the attempt may have made (the handler's own test,
 * src/handler/creates.ts). Without `attempt` (a handler that kept no list) nothing can be told apart: abandoned as
 * before (the handler itself asks for this step once the operator has checked).
 */
export const recordedCreateCheck: AttemptCheck = async (r, journal, service) => {
  const doc = r.doc;
  if (doc.result !== undefined && doc.result !== null) {
    // A notification pipeline whose unified create was answered: the pipeline exists; abandoning the record would
    // leak it and hand its identity to a second pipeline.
    return {
      refusal: `attempt ${r.id} (recording) belongs to a notification pipeline that exists (its unified create was answered; only its `
        + 'product-107 subscription is unconfirmed): deploy again to record and keep it, or delete the stack (or run dpi orphans --fix) '
        + 'to remove it; it is never abandoned',
    };
  }
  const a = attemptOf(doc);
  if (a === undefined) return { note: `${r.id}: recorded without the list of subscriptions before its create; not checked` };
  if (a === 'unreadable') {
    return { refusal: `attempt ${r.id} (recording) holds an unreadable create attempt (${JSON.stringify(doc.attempt)}); deploy again: the handler resolves it` };
  }
  const { client } = await service();
  const before = new Set(a.before);
  const identity = doc.identity === undefined || doc.identity === null ? undefined : String(doc.identity);
  // Another identity, where the read shows one (the spec's reads show `id` and `status` only): not this attempt's.
  const otherIdentity = (v: unknown): boolean => identity !== undefined && v !== undefined && v !== null && String(v) !== identity;
  // The attempt's own filter (its identity, when it listed one identity's subscriptions), as the handler lists.
  const appeared = (await client.subscriptions.list({ product: a.product, remoteIdentity: a.identity }))
    // A create makes an active subscription (as the handler, only active ones count: `invalid` is how one is removed).
    .filter((x) => !before.has(String(x.id)) && x.status === 'active' && !otherIdentity(x.remote_identity));
  const owners = await journal.owners('sub', appeared.map((x) => String(x.id)));
  const candidates = appeared.filter((x) => !owners.has(String(x.id)) || owners.get(String(x.id)) === r.key);
  if (candidates.length === 0) {
    return { note: `${r.id}: no product-${a.product} subscription appeared since its create that no other resource claims` };
  }
  const named = candidates.slice(0, 10).map((x) => `${x.id} (${String(x.status)})`).join(', ') + (candidates.length > 10 ? ', ...' : '');
  const one = candidates.length === 1;
  return {
    refusal: `attempt ${r.id} (recording: a product-${a.product} subscription create) may have made subscription${one ? '' : 's'} `
      + `${named}: listed now, not among the ${a.before.length} listed before its POST, and claimed by no other resource; `
      + (one
        ? 'deploy again: the handler resolves it (if it is not wanted, set it invalid first; then resolve again)'
        : 'it made one of them at most, and the others are not this stack\'s: set the one this resource made invalid in the service, '
          + 'then resolve again with --keep-candidates'),
  };
};
