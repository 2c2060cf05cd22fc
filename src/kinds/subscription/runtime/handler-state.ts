/**
 * `Custom::DpiSubscription`: the desired state from the properties, the journal document, the deploy-time checks and
 * `converge` (the one PATCH that brings a subscription from what the service confirmed last to the desired state),
 * shared by the event handlers (handler.ts) and adoption/release (handler-adoption.ts).
 */
import type { Applied, SubscriptionDesired } from './handler-types';
import { encodeStageIds, ProductRecord, Subscription } from '../../../client';
import { contradicts, contradictsIdentity, declaredRemovalPolicy, OwnsSubscription, recordedRemovalPolicy, RELEASED_OR_DONE } from '../../../handler/common';
import { HandlerError, isStatus, messageOf } from '../../../handler/errors';
import { JournalRecord } from '../../../handler/journal';
import { log } from '../../../handler/log';
import { droppedParameterSplit, dropRefusal, subscriptionChanges } from '../../../handler/plan-decisions';
import { readProps } from '../../../handler/props';
import { Runtime } from '../../../handler/runtime';
import { OnEventResult } from '../../../handler/types';
import { SUBSCRIPTION_FIELDS, SubscriptionKind } from '../wire';

export type { Applied, SubscriptionDesired } from './handler-types';

export function desiredOf(raw: Record<string, unknown> | undefined): SubscriptionDesired {
  const w = readProps(raw, SUBSCRIPTION_FIELDS, SubscriptionKind.shortName);
  const status = (w.Status ?? 'active').toLowerCase();
  if (status !== 'active' && status !== 'paused') throw new HandlerError(`Subscription: Status must be active or paused, got ${status}`);
  const onDelete = (w.OnDelete ?? 'invalid').toLowerCase();
  if (onDelete !== 'invalid' && onDelete !== 'cancelled') throw new HandlerError(`Subscription: OnDelete must be invalid or cancelled, got ${onDelete}`);
  return {
    productId: w.ProductId,
    storageGroupId: w.StorageGroupId,
    remoteIdentityId: w.RemoteIdentityId,
    params: w.ProductParameters,
    stageIds: w.StageIds,
    status,
    name: w.Name,
    dateStart: w.DateStart,
    onDelete,
    adoptId: w.AdoptId,
    removalPolicy: declaredRemovalPolicy(raw),
  };
}

/** The products whose subscriptions are notification pipelines, with the construct that manages them. */
export const PIPELINE_PRODUCTS: ReadonlyMap<number, string> = new Map([[107, 'NotificationPipeline'], [86, 'LegacyNotificationPipeline']]);

/** The product parameters the subscription should store. */
export function wantedParams(d: SubscriptionDesired): Record<string, string> {
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

/** The journal document of a subscription resource. */
export interface SubscriptionDoc extends OwnsSubscription {
  product: number;
  identity?: string;
  applied?: Applied;
  /** The applied state before the last change (what an UPDATE_ROLLBACK returns to). */
  previous?: Applied;
  /** Stored parameters the service keeps although the declaration dropped them (a rollback cannot remove them). */
  kept?: Record<string, string>;
  /** Adopted records: what a read showed before the adoption changed anything, and the declaration that adopted it. */
  adoption?: { before: Applied; paramsShown: boolean; declared: string };
  /** What a release could not restore of the state before the adoption. */
  unrestored?: string[];
}

export type SubscriptionRecord = JournalRecord<SubscriptionDoc>;
export const DONE = RELEASED_OR_DONE;

export function appliedOf(d: SubscriptionDesired): Applied {
  return { params: wantedParams(d), status: d.status, name: d.name, storageGroupId: d.storageGroupId, dateStart: d.dateStart };
}

export function data(id: string, status: string): Record<string, string> {
  return { SubscriptionId: id, Status: status };
}

export function matchesDesired(d: SubscriptionDesired): (s: Subscription) => boolean {
  return (s) => !contradicts(s.product, d.productId) && !contradictsIdentity(s.remote_identity, d.remoteIdentityId)
    && !contradicts(s.storage_group, d.storageGroupId) && !contradicts(s.name, d.name);
}

/**
 * The stored parameters the declaration drops: those the last change added (an UPDATE_ROLLBACK, or a revert) are
 * kept by the service (a partial merge cannot remove them) and recorded, so the rollback finishes; dropping any other
 * one is refused before any change.
 */
function droppedParameters(rec: SubscriptionRecord, applied: Applied, want: Record<string, string>): Record<string, string> {
  const { kept, refused } = droppedParameterSplit(applied, want, rec.doc.previous, rec.doc.kept);
  // The service merges parameters and cannot delete one (values are strings; null is not accepted).
  if (refused.length > 0) throw new HandlerError(dropRefusal(rec.physicalId, refused));
  const added = Object.keys(kept).filter((k) => rec.doc.kept?.[k] === undefined);
  if (added.length > 0) {
    log({
      level: 'WARNING',
      msg: 'the service keeps stored parameters that the last change added and this one drops (a partial merge cannot remove them): recorded in the journal; dpi drift reports them',
      subscriptionId: rec.physicalId,
      kept: added,
    });
  }
  return kept;
}

/** Applies the difference between what the service confirmed last (the journal) and the desired state. */
export async function converge(rt: Runtime, rec: SubscriptionRecord, d: SubscriptionDesired, serviceStatus?: string,
  adopted = false): Promise<OnEventResult> {
  const id = rec.physicalId!;
  const applied = rec.doc.applied ?? { params: {}, status: 'active' };
  const want = wantedParams(d);
  const kept = droppedParameters(rec, applied, want);
  const current = serviceStatus ?? applied.status;
  const { changes, refusal } = subscriptionChanges(applied, d, want, current, id);
  if (changes.product_parameters !== undefined) await checkAgainstProduct(rt, d, adopted || rec.doc.adopted === true);
  if (refusal !== undefined) throw new HandlerError(refusal);
  const next: SubscriptionDoc = {
    ...rec.doc,
    applied: appliedOf(d),
    kept: Object.keys(kept).length > 0 ? kept : undefined,
    removalPolicy: recordedRemovalPolicy(d.removalPolicy, d.adoptId, rec.doc),
  };
  if (Object.keys(changes).length === 0) {
    log({ msg: 'subscription unchanged', subscriptionId: id });
    if (rec.state !== 'active' || JSON.stringify(next) !== JSON.stringify(rec.doc)) await rt.journal.save(rec, 'active', next);
    return { PhysicalResourceId: id, Data: data(id, current) };
  }
  try {
    await rt.client.subscriptions.update(id, changes);
  } catch (e) {
    if (isStatus(e, 400, 409)) throw new HandlerError(`the service rejected the update of subscription ${id}: ${messageOf(e)}`);
    throw e;
  }
  await rt.journal.save(rec, 'active', { ...next, previous: applied });
  return { PhysicalResourceId: id, Data: data(id, d.status) };
}
