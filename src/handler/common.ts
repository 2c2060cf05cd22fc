import { Subscription, SubscriptionCreateV2, SubscriptionStatus } from '../client';
import { HandlerError, isDefiniteFailure, isStatus, messageOf } from './errors';
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

/** A subscription's status; undefined when the service does not know it (404) or it belongs to another account (403). */
export async function statusOrGone(rt: Runtime, id: string): Promise<SubscriptionStatus | undefined> {
  try {
    return (await rt.client.subscriptions.get(id)).status;
  } catch (e) {
    if (isStatus(e, 404, 403)) return undefined;
    throw e;
  }
}

/** A journal document of a resource that owns one subscription. */
export interface OwnsSubscription {
  subscriptionId?: string;
}

/**
 * The active subscriptions of `product` that no resource of the journal claims and that `matches` (a cross-check
 * on read fields the service may show beyond `id` and `status`; absent fields never exclude).
 */
export async function unclaimedSubscriptions(rt: Runtime, product: number, matches: (s: Subscription) => boolean): Promise<string[]> {
  const subs = (await rt.client.subscriptions.list({ product })).filter((s) => s.status === 'active' && matches(s));
  const owners = await rt.journal.owners('sub', subs.map((s) => s.id));
  return subs.filter((s) => !owners.has(s.id)).map((s) => s.id);
}

/**
 * Creates the subscription of a journal record: intent (`recording`) before the POST, outcome (`active`, the
 * subscription ID claimed for the record's resource) after it. When the POST has no clear outcome (response lost,
 * timeout, 5xx), the subscription is looked for among the unclaimed active subscriptions of the product: one
 * found is taken; none means nothing was made (the record goes back to `back`); several fail the call naming them.
 */
export async function createRecordedSubscription<D extends OwnsSubscription>(rt: Runtime, rec: JournalRecord<D>,
  attrs: SubscriptionCreateV2, back: string, matches: (s: Subscription) => boolean): Promise<JournalRecord<D>> {
  let r = rec.state === 'recording' ? rec : await rt.journal.save(rec, 'recording', rec.doc);
  let id: string | undefined;
  if (rec.state === 'recording') {
    // An earlier attempt stopped after its POST was sent: find what it made before making another.
    id = await resolveRecording(rt, Number(attrs.product), matches);
  }
  if (id === undefined) {
    try {
      id = (await rt.client.subscriptions.create(attrs)).id;
    } catch (e) {
      if (isDefiniteFailure(e)) {
        await rt.journal.save(r, back, r.doc);
        throw e;
      }
      log({ level: 'WARNING', msg: 'the subscription create had no clear outcome: looking for it among the unclaimed subscriptions', error: messageOf(e) });
      id = await resolveRecording(rt, Number(attrs.product), matches);
      if (id === undefined) {
        await rt.journal.save(r, back, r.doc);
        throw new HandlerError(`creating the product-${attrs.product} subscription had no clear outcome (${messageOf(e)}) and no unclaimed `
          + 'active subscription of the product appeared: nothing was made; deploy again');
      }
    }
  }
  const owner = await rt.journal.claim('sub', id, r.key);
  if (owner !== r.key) throw new HandlerError(`subscription ${id} is claimed by ${owner} in the lifecycle journal; deploy again`);
  r = await rt.journal.save(r, 'active', { ...r.doc, subscriptionId: id }, id);
  return r;
}

async function resolveRecording(rt: Runtime, product: number, matches: (s: Subscription) => boolean): Promise<string | undefined> {
  const candidates = await unclaimedSubscriptions(rt, product, matches);
  if (candidates.length > 1) {
    throw new HandlerError(`an earlier create of this resource had no clear outcome and ${candidates.length} active product-${product} subscriptions `
      + `are claimed by no resource (${candidates.slice(0, 10).join(', ')}): set the ones that are not this resource's invalid, then deploy again`);
  }
  if (candidates.length === 1) log({ msg: 'found the subscription of an earlier create', subscriptionId: candidates[0] });
  return candidates[0];
}

/** A read field (beyond `id` and `status`) that contradicts `want`; absent fields never contradict. */
export function contradicts(value: unknown, want: string | number | undefined): boolean {
  return value !== undefined && value !== null && want !== undefined && String(value) !== String(want);
}

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
      .filter((r) => r.physicalId === id && r.state !== 'deleted' && r.state !== 'abandoned');
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
    return `${prop} ${id}: no such subscription for this account (the service answered 404 or 403); check the ID (dpi import lists them); nothing was changed`;
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
    if (!isStatus(e, 404, 403)) throw e;
  }
  const why = notAdoptable(id, sub?.status, 'existingSubscriptionId');
  if (why !== undefined || sub === undefined) {
    if (rec) await rt.journal.save(rec, 'abandoned', rec.doc);
    throw new HandlerError(`${construct}: ${why}`);
  }
  return { key, rec, sub };
}
