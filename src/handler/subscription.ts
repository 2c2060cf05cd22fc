import { decodeStageIds, encodeStageIds, ProductRecord, Subscription, SubscriptionStatus, SubscriptionUpdate } from '../client';
import { claimForAdoption, contradicts, createRecordedSubscription, newSubscriptionAttributes, OwnsSubscription, startAdoption, statusOrGone, unclaimedSubscriptions } from './common';
import { HandlerError, isStatus, messageOf } from './errors';
import { JournalRecord, resourceKey } from './journal';
import { log } from './log';
import { isNumericId, Props } from './props';
import { Runtime } from './runtime';
import { CfnEvent, OnEventResult } from './types';

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
  /** An existing subscription to adopt (`existingSubscriptionId`). */
  adoptId?: string;
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
    adoptId: p.optString('AdoptId'),
  };
}

/** The product parameters the subscription should store. */
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
export async function checkAgainstProduct(rt: Runtime, d: SubscriptionDesired, adopted = false): Promise<ProductRecord> {
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
  // An adopted subscription already stores its required parameters (the service merges; undeclared ones are kept).
  const missing = adopted ? [] : (product.required_meta_fields ?? []).filter((k) => params[k] === undefined || params[k] === '');
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

/** What the service confirmed last for the subscription. */
interface Applied {
  params: Record<string, string>;
  status: 'active' | 'paused';
  name?: string;
  storageGroupId?: number;
  dateStart?: string;
}

/** The journal document of a subscription resource. */
interface SubscriptionDoc extends OwnsSubscription {
  product: number;
  identity?: string;
  applied?: Applied;
  /** Adopted (`existingSubscriptionId`): it may store parameters the declaration does not name. */
  adopted?: boolean;
}

type SubscriptionRecord = JournalRecord<SubscriptionDoc>;
const DONE = new Set(['deleted', 'abandoned']);

function appliedOf(d: SubscriptionDesired): Applied {
  return { params: wantedParams(d), status: d.status, name: d.name, storageGroupId: d.storageGroupId, dateStart: d.dateStart };
}

function data(id: string, status: string): Record<string, string> {
  return { SubscriptionId: id, Status: status };
}

function matchesDesired(d: SubscriptionDesired): (s: Subscription) => boolean {
  return (s) => !contradicts(s.product, d.productId) && !contradicts(s.remote_identity, d.remoteIdentityId)
    && !contradicts(s.storage_group, d.storageGroupId);
}

async function create(event: CfnEvent, rt: Runtime, d: SubscriptionDesired): Promise<OnEventResult> {
  if (d.adoptId !== undefined) return adopt(event, rt, d, d.adoptId);
  const key = resourceKey(event);
  const recs = await rt.journal.records<SubscriptionDoc>(key);
  let rec = recs.filter((r) => !DONE.has(r.state) && r.doc.product === d.productId && (r.doc.identity ?? '') === (d.remoteIdentityId ?? '')
    && (event.PhysicalResourceId === undefined || r.physicalId !== event.PhysicalResourceId)).sort((a, b) => (a.id < b.id ? 1 : -1))[0];
  if (rec?.state === 'active') {
    log({ msg: 'create already done by an earlier delivery', subscriptionId: rec.physicalId });
    return converge(rt, rec, d);
  }
  await checkAgainstProduct(rt, d);
  const attrs = await newSubscriptionAttributes(rt, {
    product: d.productId,
    dateStart: d.dateStart,
    remoteIdentityId: d.remoteIdentityId,
    storageGroupId: d.storageGroupId,
    name: d.name,
    params: wantedParams(d),
  });
  if (!rec) rec = await rt.journal.create<SubscriptionDoc>(key, 'abandoned', { product: d.productId, identity: d.remoteIdentityId });
  try {
    rec = await createRecordedSubscription(rt, rec, attrs, 'abandoned', matchesDesired(d));
  } catch (e) {
    if (isStatus(e, 400, 403, 409)) throw new HandlerError(`the service rejected the subscription to product ${d.productId}: ${messageOf(e)}`);
    throw e;
  }
  const id = rec.physicalId!;
  if (d.status === 'paused') {
    try {
      await rt.client.subscriptions.update(id, { status: 'paused' });
    } catch (e) {
      // Create never leaks: the subscription this attempt made is set invalid before the failure is reported.
      await rt.client.subscriptions.update(id, { status: 'invalid' }).catch((e2) => {
        log({ level: 'WARNING', msg: 'could not set the subscription of the failed create invalid', subscriptionId: id, error: messageOf(e2) });
      });
      await rt.journal.save(rec, 'deleted', rec.doc);
      throw e;
    }
  }
  rec = await rt.journal.save(rec, 'active', { ...rec.doc, applied: appliedOf(d) });
  return { PhysicalResourceId: id, Data: data(id, d.status) };
}

/**
 * Adopts an existing subscription: no creating call. It must exist and be active or paused; the product and identity
 * a read shows (vendor reads) must be the declared ones; it is claimed for the resource (refused, naming the owner,
 * when another resource manages it); then it is reconciled as an Update would: what a read shows is taken as applied,
 * everything else declared is sent (one idempotent PATCH). The journal record ends as a Create's (`active`,
 * `applied` = the declared state).
 */
async function adopt(event: CfnEvent, rt: Runtime, d: SubscriptionDesired, id: string): Promise<OnEventResult> {
  const start = await startAdoption<SubscriptionDoc>(event, rt, 'Subscription', id, isNumericId, DONE);
  const key = start.key;
  let rec = start.rec;
  const sub = start.sub;
  if (rec?.state === 'active') {
    log({ msg: 'adoption already done by an earlier delivery', subscriptionId: id });
    return converge(rt, rec, d, sub.status);
  }
  const wrong: string[] = [];
  if (contradicts(sub.product, d.productId)) wrong.push(`product ${sub.product} (declared ${d.productId})`);
  if (contradicts(sub.remote_identity, d.remoteIdentityId)) wrong.push(`remote identity ${sub.remote_identity} (declared ${d.remoteIdentityId ?? 'none'})`);
  if (wrong.length > 0) {
    throw new HandlerError(`Subscription: existingSubscriptionId ${id} has ${wrong.join(' and ')}; a change of product or identity needs a new `
      + 'subscription: declare what the service has, or drop existingSubscriptionId; nothing was changed');
  }
  await claimForAdoption(rt, 'sub', id, key, 'subscription');
  // What a read shows is what the service has; the rest is unknown and sent if declared.
  const shownParams: Record<string, string> = {};
  if (sub.remote_identity !== undefined && sub.remote_identity !== null) shownParams.remote_identity_id = String(sub.remote_identity);
  // Where the service shows the stored parameters (the vendor's SPP read, an assumption), declared ones it already
  // stores are not sent again (so adopting what `dpi import` wrote makes no changing call).
  Object.assign(shownParams, alreadyStored(wantedParams(d), await storedParameters(rt, id)));
  const shown: Applied = {
    params: shownParams,
    status: sub.status === 'paused' ? 'paused' : 'active',
    ...(typeof sub.name === 'string' ? { name: sub.name } : {}),
    ...(sub.storage_group !== undefined && sub.storage_group !== null ? { storageGroupId: Number(sub.storage_group) } : {}),
    ...(typeof sub.date_start === 'string' ? { dateStart: sub.date_start } : {}),
  };
  const doc: SubscriptionDoc = { product: d.productId, identity: d.remoteIdentityId, subscriptionId: id, applied: shown, adopted: true };
  rec = rec ? await rt.journal.save(rec, 'adopting', doc) : await rt.journal.create<SubscriptionDoc>(key, 'adopting', doc, id);
  log({ msg: 'adopting an existing subscription', subscriptionId: id, shown: Object.keys(shown) });
  return converge(rt, rec, d, sub.status, true);
}

/** The stored parameters of a subscription as the vendor's parameter read shows them; undefined when not shown. */
async function storedParameters(rt: Runtime, id: string): Promise<Record<string, string> | undefined> {
  if (typeof rt.client.parameters?.get !== 'function') return undefined;
  try {
    return await rt.client.parameters.get(id);
  } catch (e) {
    log({ level: 'WARNING', msg: 'the stored parameters could not be read; declared ones are sent', subscriptionId: id, error: messageOf(e) });
    return undefined;
  }
}

/** The declared parameters the service already stores with the same value (stage IDs compared as ID sets). */
function alreadyStored(want: Record<string, string>, stored: Record<string, string> | undefined): Record<string, string> {
  const out: Record<string, string> = {};
  if (!stored) return out;
  const ids = (v: string): string | undefined => {
    try {
      return JSON.stringify([...decodeStageIds(v)].sort((a, b) => a - b));
    } catch {
      return undefined;
    }
  };
  for (const [k, v] of Object.entries(want)) {
    const have = stored[k];
    if (have === undefined) continue;
    if (have === v || (k === 'stage_ids' && ids(have) !== undefined && ids(have) === ids(v))) out[k] = v;
  }
  return out;
}

/** Applies the difference between what the service confirmed last (the journal) and the desired state. */
async function converge(rt: Runtime, rec: SubscriptionRecord, d: SubscriptionDesired, serviceStatus?: string,
  adopted = false): Promise<OnEventResult> {
  const id = rec.physicalId!;
  const applied = rec.doc.applied ?? { params: {}, status: 'active' };
  const want = wantedParams(d);
  const changes: SubscriptionUpdate = {};
  const params: Record<string, string> = {};
  for (const [k, v] of Object.entries(want)) if (applied.params[k] !== v) params[k] = v;
  const dropped = Object.keys(applied.params).filter((k) => want[k] === undefined && k !== 'remote_identity_id');
  if (dropped.length > 0) {
    // The service merges parameters and cannot delete one (values are strings; null is not accepted).
    throw new HandlerError(`subscription ${id} cannot drop the stored parameter${dropped.length > 1 ? 's' : ''} ${dropped.join(', ')}: the service `
      + 'keeps stored parameters (a partial merge, no removal); keep them, give them another value, or replace the subscription '
      + '(change the construct ID) to start without them; nothing was changed');
  }
  if (Object.keys(params).length > 0) {
    await checkAgainstProduct(rt, d, adopted || rec.doc.adopted === true);
    changes.product_parameters = params;
  }
  if (d.name !== undefined && d.name !== (applied.name ?? '')) changes.name = d.name;
  if (d.storageGroupId !== undefined && d.storageGroupId !== applied.storageGroupId) changes.storage_group = d.storageGroupId;
  if (d.dateStart !== undefined && d.dateStart !== applied.dateStart) changes.date_start = d.dateStart;
  const current = serviceStatus ?? applied.status;
  if (d.status !== current) {
    if (current === 'cancelled') {
      throw new HandlerError(`subscription ${id} is cancelled and cannot become ${d.status} again; `
        + 'replace the resource (e.g. change its logical ID) to create a new subscription');
    }
    changes.status = d.status as SubscriptionStatus;
  }
  if (Object.keys(changes).length === 0) {
    log({ msg: 'subscription unchanged', subscriptionId: id });
    if (rec.state !== 'active') await rt.journal.save(rec, 'active', { ...rec.doc, applied: appliedOf(d) });
    return { PhysicalResourceId: id, Data: data(id, current) };
  }
  try {
    await rt.client.subscriptions.update(id, changes);
  } catch (e) {
    if (isStatus(e, 400, 409)) throw new HandlerError(`the service rejected the update of subscription ${id}: ${messageOf(e)}`);
    throw e;
  }
  await rt.journal.save(rec, 'active', { ...rec.doc, applied: appliedOf(d) });
  return { PhysicalResourceId: id, Data: data(id, d.status) };
}

async function update(event: CfnEvent, rt: Runtime, d: SubscriptionDesired): Promise<OnEventResult> {
  const id = event.PhysicalResourceId;
  const old = new Props(event.OldResourceProperties, 'Subscription');
  if (!isNumericId(id)) return create(event, rt, d);
  if (old.optInt('ProductId') !== d.productId || old.optString('RemoteIdentityId') !== d.remoteIdentityId) {
    log({ msg: 'replacement: product or remote identity changed', old: id });
    return create(event, rt, d);
  }
  if (d.adoptId !== undefined && d.adoptId !== id) {
    log({ msg: 'replacement: another existing subscription is adopted', old: id, adopt: d.adoptId });
    return create(event, rt, d);
  }
  const key = resourceKey(event);
  let rec = (await rt.journal.records<SubscriptionDoc>(key)).find((r) => r.physicalId === id && !DONE.has(r.state));
  const status = await statusOrGone(rt, id);
  if (status === undefined || status === 'invalid') {
    log({ msg: 'replacement: the subscription is gone or invalid', old: id });
    if (rec) await rt.journal.save(rec, 'deleted', rec.doc);
    return create(event, rt, d);
  }
  if (!rec) {
    // Deployed before the journal existed: what the service has is taken from the previous properties.
    log({ msg: 'no journal record for this subscription: recording it from the previous properties', subscriptionId: id });
    rec = await rt.journal.create<SubscriptionDoc>(key, 'active', {
      product: d.productId, identity: d.remoteIdentityId, subscriptionId: id, applied: appliedOf(desiredOf(event.OldResourceProperties)),
    }, id);
    await rt.journal.claim('sub', id, key);
  }
  return converge(rt, rec, d, status);
}

async function remove(event: CfnEvent, rt: Runtime): Promise<OnEventResult> {
  const id = event.PhysicalResourceId ?? '';
  const key = resourceKey(event);
  const recs = await rt.journal.records<SubscriptionDoc>(key);
  const onDelete = new Props(event.ResourceProperties, 'Subscription').optString('OnDelete') === 'cancelled' ? 'cancelled' : 'invalid';
  const targets = isNumericId(id)
    ? [{ id, rec: recs.find((r) => r.physicalId === id) }]
    // Rollback of a failed Create: an attempt whose POST had no clear outcome is resolved through the journal's claims.
    : await Promise.all(recs.filter((r) => r.state === 'recording' || r.state === 'adopting').map(async (r) => ({ id: await resolveAttempt(rt, r, event), rec: r })));
  for (const t of targets) {
    if (t.id === undefined) continue;
    const status = await statusOrGone(rt, t.id);
    if (status !== undefined && status !== 'invalid' && status !== onDelete) {
      await cancelPendingHistory(rt, t.id);
      await rt.client.subscriptions.update(t.id, { status: onDelete });
    } else {
      log({ msg: 'nothing to delete', physicalResourceId: t.id, status });
    }
    if (t.rec && !DONE.has(t.rec.state)) await rt.journal.save(t.rec, 'deleted', t.rec.doc);
  }
  return { PhysicalResourceId: id };
}

/**
 * Cancels the subscription's history requests that are still pending or processing (they count against the account's
 * ceiling and are moot once the subscription ends), e.g. one whose HistoryRequest create failed without a clear outcome
 * and was never deleted. Best effort: a failure is logged, the subscription is still ended.
 */
async function cancelPendingHistory(rt: Runtime, id: string): Promise<void> {
  try {
    const open = (await rt.client.history.statusBySubscription(id)).filter((h) => h.status === 'pending' || h.status === 'processing');
    for (const h of open) {
      await rt.client.history.cancel(String(h.id)).catch((e: unknown) => {
        if (!isStatus(e, 400, 404, 409)) throw e;
      });
      log({ msg: 'cancelled a history request of the ending subscription', subscriptionId: id, historyId: h.id });
    }
  } catch (e) {
    log({ level: 'WARNING', msg: 'could not cancel the open history requests of the ending subscription', subscriptionId: id, error: messageOf(e) });
  }
}

/** The subscription of an attempt whose POST had no clear outcome (undefined: it made none). */
async function resolveAttempt(rt: Runtime, rec: SubscriptionRecord, event: CfnEvent): Promise<string | undefined> {
  if (rec.state === 'adopting') {
    // A failed adoption never ends the record it tried to adopt: it only lets go of it.
    await rt.journal.save(rec, 'abandoned', rec.doc);
    return undefined;
  }
  const d = desiredOf(event.ResourceProperties);
  const candidates = await unclaimedSubscriptions(rt, d.productId, matchesDesired(d));
  if (candidates.length === 1) {
    await rt.journal.claim('sub', candidates[0], rec.key);
    return candidates[0];
  }
  if (candidates.length > 1) {
    log({ level: 'WARNING', msg: 'an attempt of this resource had no clear outcome and several unclaimed subscriptions match it; none is changed', candidates });
  }
  await rt.journal.save(rec, 'abandoned', rec.doc);
  return undefined;
}

/** Handles `Custom::DpiSubscription`. */
export async function subscription(event: CfnEvent, rt: Runtime): Promise<OnEventResult> {
  if (event.RequestType === 'Delete') return remove(event, rt);
  const d = desiredOf(event.ResourceProperties);
  return event.RequestType === 'Create' ? create(event, rt, d) : update(event, rt, d);
}
