import { Subscription, SubscriptionCreateV2, SubscriptionStatus } from '../client';
import { HandlerError, isStatus, messageOf } from './errors';
import { JournalRecord, resourceKey } from './journal';
import { log } from './log';
import { Runtime } from './runtime';
import { CfnEvent } from './types';

/** ISO 8601 now without milliseconds. */
export function nowIso(): string {
  return new Date().toISOString().replace(/\.\d{3}Z$/, 'Z');
}

/** The subscription a resource creates; fields left undefined are not sent. */
export interface NewSubscription {
  product: number;
  /** Default: now. */
  dateStart?: string;
  remoteIdentityId?: string;
  storageGroupId?: number;
  name?: string;
  params: Record<string, string>;
}

/** The `POST /v2/sub` attributes of an active subscription of the deploying account and user. */
export async function newSubscriptionAttributes(rt: Runtime, s: NewSubscription): Promise<SubscriptionCreateV2> {
  const { accountId, userId } = await rt.ids();
  return {
    account: accountId,
    user: userId,
    product: s.product,
    status: 'active',
    date_start: s.dateStart ?? nowIso(),
    ...(s.remoteIdentityId !== undefined ? { remote_identity: s.remoteIdentityId } : {}),
    ...(s.storageGroupId !== undefined ? { storage_group: s.storageGroupId } : {}),
    ...(s.name !== undefined ? { name: s.name } : {}),
    product_parameters: s.params,
  };
}

/**
 * A subscription's status; undefined only when the service does not know it (404). A 403 is never "gone": the
 * connection's account may not read it (another account's record, or a secret rotated to another service account),
 * so it fails naming the account, before anything is created, replaced or marked deleted.
 */
export async function statusOrGone(rt: Runtime, id: string): Promise<SubscriptionStatus | undefined> {
  try {
    return (await rt.client.subscriptions.get(id)).status;
  } catch (e) {
    if (isStatus(e, 404)) return undefined;
    if (isStatus(e, 403)) throw await refused(rt, `subscription ${id}`, e);
    throw e;
  }
}

/** The failure of a refused (403) read or change of `what`: names the connection's account; nothing is taken as gone. */
export async function refused(rt: Runtime, what: string, e: unknown): Promise<HandlerError> {
  const account = await rt.ids().then((x) => x.accountId, () => undefined);
  return new HandlerError(`the service refused access to ${what} (403: ${messageOf(e)}): it is not readable by the connection's account`
    + `${account !== undefined ? ` ${account}` : ''}: it belongs to another account, or the connection's secret now holds another `
    + 'account\'s refresh token; restore the secret of the account that made it; nothing was changed or marked deleted');
}

/** A journal document of a resource that owns one subscription. */
export interface OwnsSubscription {
  subscriptionId?: string;
  /** The creating POST in flight (state `recording`): the product and its subscriptions listed right before the call. */
  attempt?: CreateAttempt;
  /** `retain`: a Delete releases the record (kept in the service); `destroy`: a Delete ends it. */
  removalPolicy?: RemovalPolicyValue;
  /** The record existed before the resource (adopted): never ended unless `removalPolicy` is `destroy` with the adoption still declared (`AdoptId`). */
  adopted?: boolean;
  /**
   * Made anew from the previous properties after the connection's journal table changed without the resource's records
   * (journal-move.ts): nothing proves it the stack's (kept as adopted), and it is no proof of ownership for a later
   * table change either. The previous table.
   */
  unprovenFrom?: string;
}

/** A creating POST: `before` holds the IDs of the product's subscriptions listed right before it. */
export interface CreateAttempt {
  product: number;
  /**
   * The remote identity the lists of this attempt are narrowed to (`remote_identity`, the vendor's filter: a create
   * lists one identity's subscriptions, not the whole product's, which grows with a fleet). Every later list of the
   * attempt uses the same filter, so the list before and the list after compare like with like.
   */
  identity?: string;
  /** The IDs of the identity's subscriptions of the product listed right before the POST (with `identity`). */
  identityBefore?: string[];
  /**
   * The IDs of the product's subscriptions listed right before the POST (without `identity`). A narrowed list is never
   * kept here: a handler of an earlier version reads `before` as the whole product's list, and would take another
   * identity's subscription for what the attempt made; finding no `before`, it fails instead, changing nothing.
   */
  before?: string[];
  /**
   * `identity`: the POST was sent holding only its identity's creates lock (creates-lock.ts), so another identity's
   * create may have run beside it: its resolution takes a candidate only once the service shows it is the identity's,
   * whatever lock the resolution holds.
   */
  lock?: 'identity';
  startedAt: string;
}

/** The list before an attempt's POST (narrowed or not); undefined when the attempt kept none that can be read. */
export function attemptBefore(a: CreateAttempt): string[] | undefined {
  const list = a.identity !== undefined ? a.identityBefore : a.before;
  return Array.isArray(list) ? list.map(String) : undefined;
}

/** The removal policy a resource's properties carry (`RemovalPolicy`). */
export type RemovalPolicyValue = 'retain' | 'destroy';

/**
 * The removal policy of a Delete: the event's `RemovalPolicy` property; else the one the journal recorded; else
 * `retain` for an adopted record (it existed before the stack) and `destroy` for a record the resource made.
 */
export function removalPolicyOf(props: Record<string, unknown> | undefined, doc: OwnsSubscription | undefined,
  namesAdoption = true): RemovalPolicyValue {
  const raw = props?.RemovalPolicy;
  if (typeof raw === 'string' && /^(retain|destroy)$/i.test(raw)) {
    const declared = raw.toLowerCase() as RemovalPolicyValue;
    // An adopted record is destroyed only while the declaration still names the adoption (`AdoptId`) next to
    // `destroy`: dropping `existingSubscriptionId` later (which turns a fleet's default DESTROY on) never makes a
    // record that existed before the stack the stack's to end.
    if (declared === 'destroy' && namesAdoption && doc?.adopted === true && typeof props?.AdoptId !== 'string') return doc.removalPolicy ?? 'retain';
    return declared;
  }
  if (doc?.removalPolicy === 'retain' || doc?.removalPolicy === 'destroy') return doc.removalPolicy;
  return doc?.adopted === true ? 'retain' : 'destroy';
}

/**
 * The removal policy an Update records: the declared one, except that an adopted record's policy becomes `destroy`
 * only while the declaration still names the adoption (`adoptId`): otherwise the recorded one stays (a fleet's
 * default DESTROY, which applies once `existingSubscriptionId` is dropped, never makes an adopted record the stack's
 * to end).
 */
export function recordedRemovalPolicy(declared: RemovalPolicyValue | undefined, adoptId: string | undefined,
  doc: OwnsSubscription): RemovalPolicyValue | undefined {
  if (declared === 'destroy' && doc.adopted === true && adoptId === undefined) return doc.removalPolicy ?? 'retain';
  return declared ?? doc.removalPolicy;
}

/** The `RemovalPolicy` property of a Create or Update (undefined when the template predates it). */
export function declaredRemovalPolicy(props: Record<string, unknown> | undefined): RemovalPolicyValue | undefined {
  const raw = props?.RemovalPolicy;
  if (raw === undefined) return undefined;
  if (typeof raw !== 'string' || !/^(retain|destroy)$/i.test(raw)) throw new HandlerError(`RemovalPolicy must be retain or destroy, got ${JSON.stringify(raw)}`);
  return raw.toLowerCase() as RemovalPolicyValue;
}

/** A read field (beyond `id` and `status`) that contradicts `want`; absent fields never contradict. */
export function contradicts(value: unknown, want: string | number | undefined): boolean {
  return value !== undefined && value !== null && want !== undefined && String(value) !== String(want);
}

/**
 * The canonical form of a remote identity (`'042'`, `' 42'`, `'+42'` and `42` are identity `'42'`: the service reads
 * integers), so that one identity is always one lock, one list filter, one attempt and one comparison. Empty: none.
 */
export function canonicalIdentity(v: string | number | null | undefined): string | undefined {
  if (v === undefined || v === null) return undefined;
  const s = String(v).trim();
  if (s === '') return undefined;
  const m = /^([+-]?)(\d+)$/.exec(s);
  if (m === null) return s;
  const digits = m[2].replace(/^0+(?=\d)/, '');
  return m[1] === '-' && digits !== '0' ? `-${digits}` : digits;
}

/** An identity a creates lock and a list filter can be narrowed to: a positive integer (canonical), else undefined. */
export function lockableIdentity(v: string | number | null | undefined): string | undefined {
  const c = canonicalIdentity(v);
  return c !== undefined && /^[1-9]\d*$/.test(c) ? c : undefined;
}

/** `contradicts` for remote identities: compared in their canonical forms. */
export function contradictsIdentity(value: unknown, want: string | number | undefined): boolean {
  if (value === undefined || value === null || want === undefined) return false;
  return canonicalIdentity(String(value)) !== canonicalIdentity(want);
}

/** Record states in which a resource holds no service record: ended, never made, or handed back (`released`). */
export const RELEASED_OR_DONE: ReadonlySet<string> = new Set(['deleted', 'abandoned', 'released']);

/**
 * Claims service record `kind`/`id` for `key` when adopting it. A claim held by another resource that still has an
 * unfinished journal record of `id` refuses the adoption before any change, naming that resource; a claim whose
 * owner has no such record any more (its resource was deleted with RETAIN, or its adoption was rolled back) is
 * taken over.
 */
export async function claimForAdoption(rt: Runtime, kind: string, id: string, key: string, what: string): Promise<void> {
  for (let round = 0; round < 3; round++) {
    const owner = await rt.journal.claim(kind, id, key);
    if (owner === key) return;
    const live = (await rt.journal.records<OwnsSubscription>(owner))
      .filter((r) => r.physicalId === id && !RELEASED_OR_DONE.has(r.state));
    if (live.length > 0) {
      throw new HandlerError(`${what} ${id} is managed by ${owner} (journal record ${live[0].id}, ${live[0].state}); a record is adopted by one `
        + 'resource only: remove it from that stack (removalPolicy RETAIN keeps it) before adopting it here; nothing was changed');
    }
    if (await rt.journal.transfer(kind, id, owner, key)) {
      log({ msg: 'adoption took over the claim of a resource that no longer manages the record', kind, id, previousOwner: owner });
      return;
    }
  }
  throw new HandlerError(`${what} ${id} is being claimed by another resource at the same time; deploy again`);
}

/** Why a subscription cannot be adopted (gone, another account's, ended), or undefined when it can. */
export function notAdoptable(id: string, status: SubscriptionStatus | undefined, prop: string): string | undefined {
  if (status === undefined) {
    return `${prop} ${id}: no such subscription (the service answered 404); check the ID (dpi import lists them); nothing was changed`;
  }
  if (status === 'invalid' || status === 'cancelled') {
    return `${prop} ${id}: the subscription is ${status} and cannot be adopted (only active or paused ones can); remove ${prop} to create a new one; nothing was changed`;
  }
  return undefined;
}

/** What an adoption starts from: the resource key, its unfinished journal record of the ID, the live subscription. */
export interface AdoptionStart<D> {
  readonly key: string;
  readonly rec?: JournalRecord<D>;
  readonly sub: Subscription;
}

/**
 * The common start of a subscription-backed adoption (`existingSubscriptionId`): the ID must be a subscription ID,
 * the subscription must exist for this account and be active or paused; otherwise the resource's unfinished record of
 * it is abandoned (the claim is freed) and the adoption fails naming `construct`, before any change.
 */
export async function startAdoption<D>(event: CfnEvent, rt: Runtime, construct: string, id: string,
  isNumericId: (v: string) => boolean, done: ReadonlySet<string>): Promise<AdoptionStart<D>> {
  if (!isNumericId(id)) throw new HandlerError(`${construct}: existingSubscriptionId ${JSON.stringify(id)} is not a subscription ID; nothing was changed`);
  const key = resourceKey(event);
  const recs = await rt.journal.records<D>(key);
  const rec = recs.find((r) => r.physicalId === id && !done.has(r.state));
  let sub: Subscription | undefined;
  try {
    sub = await rt.client.subscriptions.get(id);
  } catch (e) {
    // A 403 is the other account's record (or a rotated secret): refused without touching the journal.
    if (isStatus(e, 403)) throw await refused(rt, `${construct} existingSubscriptionId ${id}`, e);
    if (!isStatus(e, 404)) throw e;
  }
  const why = notAdoptable(id, sub?.status, 'existingSubscriptionId');
  if (why !== undefined || sub === undefined) {
    if (rec) await rt.journal.save(rec, 'abandoned', rec.doc);
    throw new HandlerError(`${construct}: ${why}`);
  }
  return { key, rec, sub };
}

/**
 * Whether a Delete may end service record `kind`/`id` of resource `key` that has no live journal record: only when the
 * journal's claim names this resource. A made-up Delete (a physical ID the stack never made) and a resource whose
 * records the journal lost end nothing: the record is left as it is, and the log names it and who claims it.
 */
export async function deleteProven(rt: Runtime, kind: string, id: string, key: string): Promise<boolean> {
  const owner = (await rt.journal.owners(kind, [id])).get(id);
  if (owner === key) return true;
  log({
    level: 'WARNING',
    msg: 'no journal record or claim of this resource proves that it made this record: the Delete leaves it as it is',
    kind,
    id,
    resource: key,
    ...(owner !== undefined ? { claimedBy: owner } : {}),
  });
  return false;
}
