import { encodeStageIds, ProductRecord, Subscription, SubscriptionStatus, SubscriptionUpdate } from '../client';
import { PipelineParameterKeys } from '../contract';
import { markerOf, newSubscriptionAttributes, readForDelete, readOrUndefined } from './common';
import { HandlerError, isStatus, messageOf } from './errors';
import { log } from './log';
import { isNumericId, Props } from './props';
import { Runtime } from './runtime';
import { CfnEvent, OnEventResult } from './types';

const MARKER = PipelineParameterKeys.RESOURCE_MARKER;

interface SubscriptionDesired {
  productId: number;
  storageGroupId?: number;
  remoteIdentityId?: string;
  params: Record<string, string>;
  stageIds: string[];
  status: 'active' | 'paused';
  name?: string;
  dateStart?: string;
  onDelete: 'invalid' | 'cancelled';
}

function desiredOf(raw: Record<string, unknown> | undefined): SubscriptionDesired {
  const p = new Props(raw, 'Subscription');
  const status = (p.optString('Status') ?? 'active').toLowerCase();
  if (status !== 'active' && status !== 'paused') throw new HandlerError(`Subscription: Status must be active or paused, got ${status}`);
  const onDelete = (p.optString('OnDelete') ?? 'invalid').toLowerCase();
  if (onDelete !== 'invalid' && onDelete !== 'cancelled') throw new HandlerError(`Subscription: OnDelete must be invalid or cancelled, got ${onDelete}`);
  return {
    productId: p.int('ProductId'),
    storageGroupId: p.optInt('StorageGroupId'),
    remoteIdentityId: p.optString('RemoteIdentityId'),
    params: p.map('ProductParameters'),
    stageIds: p.list('StageIds'),
    status,
    name: p.optString('Name'),
    dateStart: p.optString('DateStart'),
    onDelete,
  };
}

/** The product parameters the subscription should store (without the marker). */
function wantedParams(d: SubscriptionDesired): Record<string, string> {
  const out: Record<string, string> = { ...d.params };
  delete out.stage_ids;
  if (d.stageIds.length > 0) {
    try {
      out.stage_ids = encodeStageIds(d.stageIds);
    } catch (e) {
      throw new HandlerError(`Subscription: ${messageOf(e)}`);
    }
  }
  if (d.remoteIdentityId !== undefined) out.remote_identity_id = d.remoteIdentityId;
  return out;
}

/** Deploy-time checks against the product record and its payloads. Returns the product record. */
export async function checkAgainstProduct(rt: Runtime, d: SubscriptionDesired): Promise<ProductRecord> {
  let product: ProductRecord;
  try {
    product = await rt.client.products.get(d.productId);
  } catch (e) {
    if (isStatus(e, 404)) throw new HandlerError(`product ${d.productId} does not exist; look up product IDs with 'dpi products'`);
    throw e;
  }
  const problems: string[] = [];
  if (Number(product.active) !== 1) {
    throw new HandlerError(`product ${d.productId} (${product.name}) is not active; subscriptions to it cannot be created: choose an active product`);
  }
  const needsIdentity = product.remote_identity_type !== null && product.remote_identity_type !== undefined;
  if (needsIdentity && d.remoteIdentityId === undefined) {
    problems.push(`it needs a remote identity (type ${product.remote_identity_type!.id}): set remoteIdentityId`);
  }
  if (!needsIdentity && d.remoteIdentityId !== undefined) problems.push('it takes no remote identity: remove remoteIdentityId');
  const params = wantedParams(d);
  const missing = (product.required_meta_fields ?? []).filter((k) => params[k] === undefined || params[k] === '');
  if (missing.length > 0) problems.push(`required product parameters missing: ${missing.join(', ')}`);
  if (d.stageIds.length > 0) {
    const payloads = await rt.client.catalog.listPayloads(d.productId, { stageIdGte: 1000 });
    const known = new Set(payloads.map((x) => String(x.stage_id)));
    const unknown = d.stageIds.filter((s) => !known.has(String(Number(s))));
    if (unknown.length > 0) {
      problems.push(`stage IDs ${unknown.join(', ')} are not payloads of the product (known: ${[...known].join(', ') || 'none'})`);
    }
  }
  if (problems.length > 0) throw new HandlerError(`Subscription to product ${d.productId} (${product.name}): ${problems.join('; ')}`);
  return product;
}

function data(sub: Subscription): Record<string, string> {
  return { SubscriptionId: sub.id, Status: String(sub.status) };
}

/** Same remote identity (the stored top-level one, or the stored `remote_identity_id`). */
function sameIdentity(s: Subscription, remoteIdentityId: string | undefined): boolean {
  return String(s.remote_identity ?? s.product_parameters?.remote_identity_id ?? '') === String(remoteIdentityId ?? '');
}

/** Same storage group (absent and null are the same). */
function sameStorage(s: Subscription, storageGroupId: number | undefined): boolean {
  return String(s.storage_group ?? '') === String(storageGroupId ?? '');
}

/**
 * The service's duplicates of a subscription: same account, product, remote identity and storage group, in one of
 * `statuses`, other than `exceptId`.
 */
function duplicatesOf(subs: Subscription[], accountId: string, product: number, remoteIdentityId: string | undefined,
  storageGroupId: number | undefined, statuses: SubscriptionStatus[], exceptId?: string): Subscription[] {
  return subs.filter((s) => s.id !== exceptId && statuses.includes(s.status)
    && (s.account === undefined || String(s.account) === accountId)
    && (s.product === undefined || Number(s.product) === product)
    && sameIdentity(s, remoteIdentityId) && sameStorage(s, storageGroupId));
}

async function create(event: CfnEvent, rt: Runtime, d: SubscriptionDesired): Promise<OnEventResult> {
  const marker = markerOf(event);
  // One list serves the idempotency lookup, the reactivation of an invalid record and the duplicate warning.
  const subs = (await rt.client.subscriptions.list({ product: d.productId }))
    .filter((s) => s.product === undefined || Number(s.product) === d.productId);
  const mine = subs.filter((s) => s.product_parameters?.[MARKER] === marker && s.id !== event.PhysicalResourceId
    && sameIdentity(s, d.remoteIdentityId));
  const existing = mine.find((s) => s.status !== 'invalid');
  if (existing) {
    log({ msg: 'create already done by an earlier delivery', subscriptionId: existing.id });
    return converge(event, rt, d, existing);
  }
  const invalid = mine.filter((s) => s.status === 'invalid').sort((a, b) => Number(b.id) - Number(a.id))[0];
  if (invalid) return reactivate(rt, d, invalid);
  await checkAgainstProduct(rt, d);
  const attrs = await newSubscriptionAttributes(rt, {
    product: d.productId,
    dateStart: d.dateStart,
    remoteIdentityId: d.remoteIdentityId,
    storageGroupId: d.storageGroupId,
    name: d.name,
    params: { ...wantedParams(d), [MARKER]: marker },
  });
  // The service accepts a duplicate create (only leaving `invalid` is refused): create it, but say so.
  const dups = duplicatesOf(subs, String(attrs.account), d.productId, d.remoteIdentityId, d.storageGroupId, ['active']);
  if (dups.length > 0) {
    log({
      level: 'WARNING',
      msg: `an active subscription with the same product, remote identity and storage group already exists (${dups.map((s) => s.id).join(', ')}, `
        + 'not made by this resource); creating another one: data may be collected twice. To use the existing one instead, '
        + 'import it with Subscription.fromSubscriptionId',
      duplicateSubscriptionIds: dups.map((s) => s.id),
      productId: d.productId,
      remoteIdentityId: d.remoteIdentityId,
      storageGroupId: d.storageGroupId,
    });
  }
  let sub: Subscription;
  try {
    sub = await rt.client.subscriptions.create(attrs);
  } catch (e) {
    if (isStatus(e, 400, 403, 409)) throw new HandlerError(`the service rejected the subscription to product ${d.productId}: ${messageOf(e)}`);
    throw e;
  }
  if (d.status === 'paused') {
    try {
      sub = await rt.client.subscriptions.update(sub.id, { status: 'paused' });
    } catch (e) {
      // Undo: a Create that fails half-way leaves nothing behind.
      await rt.client.subscriptions.update(sub.id, { status: 'invalid' }).catch(() => undefined);
      throw e;
    }
  }
  return { PhysicalResourceId: sub.id, Data: data(sub) };
}

/**
 * The Create's marker lookup found only an `invalid` subscription of this resource (e.g. an earlier Create of the
 * same stack was rolled back): bring it back instead of making another record. One PATCH sets it active with the
 * desired attributes and parameters (parameters it stores but no longer wanted are removed); a paused resource is
 * then paused (`invalid` may only go to `active` or `cancelled`). The service refuses (409) while a duplicate
 * active or cancelled subscription exists.
 */
async function reactivate(rt: Runtime, d: SubscriptionDesired, sub: Subscription): Promise<OnEventResult> {
  log({ msg: 'reactivating the invalid subscription this resource created earlier', subscriptionId: sub.id });
  await checkAgainstProduct(rt, d);
  const stored = sub.product_parameters ?? {};
  const want = wantedParams(d);
  const params: Record<string, string | null> = {};
  for (const [k, v] of Object.entries(want)) if (stored[k] !== v) params[k] = v;
  for (const k of Object.keys(stored)) if (want[k] === undefined && k !== MARKER && k !== 'remote_identity_id') params[k] = null;
  const changes: SubscriptionUpdate = { status: 'active' };
  if (Object.keys(params).length > 0) changes.product_parameters = params as Record<string, string>;
  if (d.name !== undefined && d.name !== (sub.name ?? '')) changes.name = d.name;
  if (d.storageGroupId !== undefined && d.storageGroupId !== (sub.storage_group ?? undefined)) changes.storage_group = d.storageGroupId;
  if (d.dateStart !== undefined && d.dateStart !== sub.date_start) changes.date_start = d.dateStart;
  let updated: Subscription;
  try {
    updated = await rt.client.subscriptions.update(sub.id, changes);
  } catch (e) {
    if (isStatus(e, 409)) throw await duplicateError(rt, d, sub, e);
    if (isStatus(e, 400)) throw new HandlerError(`the service rejected the reactivation of subscription ${sub.id}: ${messageOf(e)}`);
    throw e;
  }
  if (d.status === 'paused') {
    try {
      updated = await rt.client.subscriptions.update(sub.id, { status: 'paused' });
    } catch (e) {
      // Undo: leave it invalid as it was found.
      await rt.client.subscriptions.update(sub.id, { status: 'invalid' }).catch(() => undefined);
      throw e;
    }
  }
  return { PhysicalResourceId: sub.id, Data: data(updated) };
}

/** The actionable error of a refused reactivation (409): names the duplicate when it can be found. */
async function duplicateError(rt: Runtime, d: SubscriptionDesired, sub: Subscription, cause: unknown): Promise<HandlerError> {
  const storage = d.storageGroupId ?? (sub.storage_group ?? undefined);
  let dup: Subscription | undefined;
  try {
    const { accountId } = await rt.ids();
    const subs = await rt.client.subscriptions.list({ product: d.productId });
    dup = duplicatesOf(subs, accountId, d.productId, d.remoteIdentityId, storage, ['active', 'cancelled'], sub.id)[0];
  } catch (e) {
    log({ level: 'WARNING', msg: 'could not list subscriptions to name the duplicate', error: messageOf(e) });
  }
  const which = dup ? `subscription ${dup.id} (${dup.status})` : 'another active or cancelled subscription';
  const importId = dup ? `'${dup.id}'` : 'its ID';
  return new HandlerError(`subscription ${sub.id}, which this resource created earlier and is now invalid, cannot be reactivated because `
    + `${which} has the same product ${d.productId}, remote identity ${d.remoteIdentityId ?? 'none'} and storage group ${storage ?? 'none'} `
    + `(the service answered 409: ${messageOf(cause)}): set ${dup ? dup.id : 'that subscription'} invalid and deploy again, `
    + `or use it instead with Subscription.fromSubscriptionId(this, id, ${importId}) and remove this resource`);
}

/** Applies the difference between the stored subscription and the desired state. */
async function converge(event: CfnEvent, rt: Runtime, d: SubscriptionDesired, sub: Subscription): Promise<OnEventResult> {
  const old = event.RequestType === 'Update' ? desiredOf(event.OldResourceProperties) : undefined;
  const stored = sub.product_parameters ?? {};
  const want = wantedParams(d);
  const changes: Omit<SubscriptionUpdate, 'product_parameters'> & { product_parameters?: Record<string, string | null> } = {};
  const params: Record<string, string | null> = {};
  for (const [k, v] of Object.entries(want)) if (stored[k] !== v) params[k] = v;
  // Removed by the user: present in the old properties (or stored stage_ids) but no longer wanted.
  const removable = new Set<string>(old ? Object.keys(wantedParams(old)) : []);
  for (const k of removable) {
    if (want[k] === undefined && stored[k] !== undefined && k !== MARKER && k !== 'remote_identity_id') params[k] = null;
  }
  if (Object.keys(params).length > 0) {
    await checkAgainstProduct(rt, d);
    changes.product_parameters = params;
  }
  if (d.name !== undefined && d.name !== (sub.name ?? '')) changes.name = d.name;
  if (d.storageGroupId !== undefined && d.storageGroupId !== (sub.storage_group ?? undefined)) changes.storage_group = d.storageGroupId;
  if (d.dateStart !== undefined && (!old || old.dateStart !== d.dateStart) && d.dateStart !== sub.date_start) changes.date_start = d.dateStart;
  if (d.status !== sub.status) {
    if (sub.status === 'cancelled') {
      throw new HandlerError(`subscription ${sub.id} is cancelled and cannot become ${d.status} again; `
        + 'replace the resource (e.g. change its logical ID) to create a new subscription');
    }
    changes.status = d.status as SubscriptionStatus;
  }
  if (Object.keys(changes).length === 0) {
    log({ msg: 'subscription unchanged', subscriptionId: sub.id });
    return { PhysicalResourceId: sub.id, Data: data(sub) };
  }
  let updated: Subscription;
  try {
    updated = await rt.client.subscriptions.update(sub.id, changes as SubscriptionUpdate);
  } catch (e) {
    if (isStatus(e, 400, 409)) throw new HandlerError(`the service rejected the update of subscription ${sub.id}: ${messageOf(e)}`);
    throw e;
  }
  return { PhysicalResourceId: sub.id, Data: data(updated) };
}

async function update(event: CfnEvent, rt: Runtime, d: SubscriptionDesired): Promise<OnEventResult> {
  const id = event.PhysicalResourceId;
  const old = new Props(event.OldResourceProperties, 'Subscription');
  if (!isNumericId(id)) return create(event, rt, d);
  if (old.optInt('ProductId') !== d.productId || old.optString('RemoteIdentityId') !== d.remoteIdentityId) {
    log({ msg: 'replacement: product or remote identity changed', old: id });
    return create(event, rt, d);
  }
  const sub = await readOrUndefined(rt, id);
  if (!sub || sub.status === 'invalid') {
    log({ msg: 'replacement: the subscription is gone or invalid', old: id });
    return create(event, rt, d);
  }
  return converge(event, rt, d, sub);
}

async function remove(event: CfnEvent, rt: Runtime): Promise<OnEventResult> {
  const id = event.PhysicalResourceId ?? '';
  const sub = await readForDelete(rt, id);
  const onDelete = new Props(event.ResourceProperties, 'Subscription').optString('OnDelete') === 'cancelled' ? 'cancelled' : 'invalid';
  if (!sub || sub.status === 'invalid' || sub.status === onDelete) {
    log({ msg: 'nothing to delete', physicalResourceId: id, status: sub?.status });
    return { PhysicalResourceId: id };
  }
  await rt.client.subscriptions.update(sub.id, { status: onDelete });
  return { PhysicalResourceId: id };
}

/** Handles `Custom::DpiSubscription`. */
export async function subscription(event: CfnEvent, rt: Runtime): Promise<OnEventResult> {
  if (event.RequestType === 'Delete') return remove(event, rt);
  const d = desiredOf(event.ResourceProperties);
  return event.RequestType === 'Create' ? create(event, rt, d) : update(event, rt, d);
}
