/**
 * `Custom::DpiSubscription` events: Create (a new subscription, or an adoption), Update (one PATCH, or a replacement
 * when the product or identity changes), Delete (ends the subscription the resource made, or releases it under the
 * `retain` policy and for adopted records). See docs/handler.md ("Ownership").
 */
import { adopt, release } from './handler-adoption';
import {
  Applied, appliedOf, checkAgainstProduct, converge, desiredOf, DONE, matchesDesired, PIPELINE_PRODUCTS, SubscriptionDesired, SubscriptionDoc,
  SubscriptionRecord, wantedParams,
} from './handler-state';
import type { Subscription } from '../../../client';
import { contradicts, deleteProven, newSubscriptionAttributes, recordedRemovalPolicy, removalPolicyOf, statusOrGone } from '../../../handler/common';
import { continuesAfter } from '../../../handler/continuation';
import { createRecordedSubscription, resolveAttempt } from '../../../handler/creates';
import { HandlerError, isStatus, messageOf } from '../../../handler/errors';
import { refuseInvalidIdentity } from '../../../handler/identity-health';
import { resourceKey } from '../../../handler/journal';
import { madeByCancelledCreate, madeByMovedOnUpdate, refuseIfCancelled, undoIfCancelled } from '../../../handler/lease';
import { log } from '../../../handler/log';
import { subscriptionReplacement } from '../../../handler/plan-decisions';
import { isNumericId, Props } from '../../../handler/props';
import { Runtime } from '../../../handler/runtime';
import { CfnEvent, OnEventResult } from '../../../handler/types';
import type { SubscriptionState } from '../wire';

async function create(event: CfnEvent, rt: Runtime, d: SubscriptionDesired): Promise<OnEventResult> {
  if (d.adoptId !== undefined) return adopt(event, rt, d, d.adoptId);
  const key = resourceKey(event);
  const recs = await rt.journal.records<SubscriptionDoc>(key);
  let rec = recs.filter((r) => !DONE.has(r.state) && r.doc.product === d.productId && (r.doc.identity ?? '') === (d.remoteIdentityId ?? '')
    && (event.PhysicalResourceId === undefined || r.physicalId !== event.PhysicalResourceId)).sort((a, b) => (a.id < b.id ? 1 : -1))[0];
  if (rec?.state === 'active' && isNumericId(rec.physicalId) && (await rt.journal.owners('sub', [rec.physicalId])).get(rec.physicalId) !== key) {
    // Written by no handler (a handler claims what it records): never taken.
    throw new HandlerError(`journal record ${key} (${rec.id}) names subscription ${rec.physicalId}, which the journal does not give to this `
      + 'resource: it is not taken or changed; remove that record (dpi journal show) and deploy again');
  }
  if (rec?.state === 'active') {
    log({ msg: 'create already done by an earlier delivery', subscriptionId: rec.physicalId });
    return converge(rt, rec, d);
  }
  await checkAgainstProduct(rt, d);
  if (!rec) await refuseInvalidIdentity(rt, d.remoteIdentityId, `the subscription to product ${d.productId}`);
  const attrs = await newSubscriptionAttributes(rt, {
    product: d.productId,
    dateStart: d.dateStart,
    remoteIdentityId: d.remoteIdentityId,
    storageGroupId: d.storageGroupId,
    name: d.name,
    params: wantedParams(d),
  });
  const doc = { product: d.productId, identity: d.remoteIdentityId, removalPolicy: d.removalPolicy };
  if (!rec) rec = await rt.journal.create<SubscriptionDoc, SubscriptionState>(key, 'abandoned', doc);
  // What this POST sends (a resolved earlier attempt keeps what it sent; converge below brings it to today's state).
  const posted: Applied = { ...appliedOf(d), status: 'active' };
  try {
    rec = await createRecordedSubscription(rt, rec, attrs, 'abandoned', matchesDesired(d), (x) => ({ ...x, ...doc, applied: posted }),
      () => refuseIfCancelled(rt));
  } catch (e) {
    if (isStatus(e, 400, 403, 409)) throw new HandlerError(`the service rejected the subscription to product ${d.productId}: ${messageOf(e)}`);
    throw e;
  }
  return settle(event, rt, rec, d);
}

/**
 * Brings the subscription a Create made to the desired state (`paused`, or what changed since an earlier attempt
 * sent its POST). A Create never leaks: when that fails, the subscription it made is set invalid before the failure
 * is reported; an earlier attempt's subscription that cannot reach today's state (it stores a parameter the
 * declaration no longer has) is ended and a new one is made.
 */
async function settle(event: CfnEvent, rt: Runtime, rec: SubscriptionRecord, d: SubscriptionDesired): Promise<OnEventResult> {
  const id = rec.physicalId!;
  const stale = Object.keys(rec.doc.applied?.params ?? {}).filter((k) => wantedParams(d)[k] === undefined && k !== 'remote_identity_id');
  if (stale.length > 0) {
    log({ msg: 'an earlier attempt made the subscription with parameters the declaration no longer has: ending it and creating anew', subscriptionId: id, stale });
    await rt.client.subscriptions.update(id, { status: 'invalid' });
    await rt.journal.save(rec, 'deleted', rec.doc);
    return create(event, rt, d);
  }
  try {
    return await converge(rt, rec, d, 'active');
  } catch (e) {
    // A wait for the rate limit past the deadline: the event continues in isComplete, which finds this record and
    // converges it; undoing it here would leave it active (its PATCH meets the same wait) and make a second one.
    if (continuesAfter(rt, e)) throw e;
    await rt.client.subscriptions.update(id, { status: 'invalid' }).catch((e2) => {
      log({ level: 'WARNING', msg: 'could not set the subscription of the failed create invalid', subscriptionId: id, error: messageOf(e2) });
    });
    const latest = (await rt.journal.records<SubscriptionDoc>(rec.key)).find((r) => r.id === rec.id) ?? rec;
    await rt.journal.save(latest, 'deleted', latest.doc);
    throw e;
  }
}

async function update(event: CfnEvent, rt: Runtime, d: SubscriptionDesired): Promise<OnEventResult> {
  const id = event.PhysicalResourceId;
  const key = resourceKey(event);
  await endMovedOnUpdate(rt, key, id, event, d.onDelete);
  if (!isNumericId(id)) return create(event, rt, d);
  let rec = (await rt.journal.records<SubscriptionDoc>(key)).find((r) => r.physicalId === id && !DONE.has(r.state));
  // The recorded product and identity, not the previous properties: in a rollback they are the failed declaration's.
  const recorded = typeof rec?.doc.product === 'number' ? { product: rec.doc.product, identity: rec.doc.identity } : undefined;
  const replacement = subscriptionReplacement(event.OldResourceProperties, d, id, recorded);
  if (replacement !== undefined) {
    log({ msg: `replacement: ${replacement}`, old: id, ...(d.adoptId !== undefined && d.adoptId !== id ? { adopt: d.adoptId } : {}) });
    return create(event, rt, d);
  }
  const status = await statusOrGone(rt, id);
  if (status === undefined || status === 'invalid') {
    log({ msg: 'replacement: the subscription is gone or invalid', old: id });
    if (rec) await rt.journal.save(rec, 'deleted', rec.doc);
    return create(event, rt, d);
  }
  if (!rec) {
    // Deployed before the journal existed: what the service has is taken from the previous properties.
    log({ msg: 'no journal record for this subscription: recording it from the previous properties', subscriptionId: id });
    const owner = await rt.journal.claim('sub', id, key);
    if (owner !== key) throw new HandlerError(`subscription ${id} is managed by ${owner} in the lifecycle journal; nothing was changed`);
    // Declared as an adoption (before or now), or nothing proves the stack made it (a journal table changed without its
    // records): the user's to keep, ended only by an explicit destroy declared next to the adoption.
    const adopted = typeof event.OldResourceProperties?.AdoptId === 'string' || d.adoptId === id || rt.journalUnproven !== undefined;
    rec = await rt.journal.create<SubscriptionDoc, SubscriptionState>(key, 'active', {
      product: d.productId,
      identity: d.remoteIdentityId,
      subscriptionId: id,
      applied: appliedOf(desiredOf(event.OldResourceProperties)),
      removalPolicy: adopted ? recordedRemovalPolicy(d.removalPolicy, d.adoptId, { adopted }) : d.removalPolicy,
      ...(adopted ? { adopted: true } : {}),
      ...(rt.journalUnproven !== undefined ? { unprovenFrom: rt.journalUnproven.from } : {}),
    }, id);
  }
  return converge(rt, rec, d, status);
}

async function remove(event: CfnEvent, rt: Runtime): Promise<OnEventResult> {
  const id = event.PhysicalResourceId ?? '';
  const key = resourceKey(event);
  const recs = await rt.journal.records<SubscriptionDoc>(key);
  const onDelete = new Props(event.ResourceProperties, 'Subscription').optString('OnDelete') === 'cancelled' ? 'cancelled' : 'invalid';
  if (!isNumericId(id)) {
    // Rollback of a failed Create: what its attempts made (proven by the journal and the lists around each POST).
    for (const r of recs.filter((x) => x.state === 'recording' || x.state === 'adopting')) await removeAttempt(rt, r, event, onDelete);
    // A Create that CloudFormation stopped waiting for (cancelled when another resource failed) may have finished:
    // what that Create made or changed is ended (an adoption released); records of earlier operations are not touched.
    for (const r of await madeByCancelledCreate(rt, 'sub', recs)) {
      // As CloudFormation keeps a resource with DeletionPolicy Retain when the rollback of its creation removes it.
      if (r.doc.adopted === true || r.doc.removalPolicy === 'retain') {
        await release(rt, r, event.ResourceProperties);
        continue;
      }
      log({ msg: 'ending what a Create that CloudFormation stopped waiting for made', subscriptionId: r.physicalId });
      if (isNumericId(r.physicalId)) await end(rt, r.physicalId, onDelete);
      await rt.journal.save(r, 'deleted', r.doc);
    }
    return { PhysicalResourceId: id };
  }
  const rec = recs.find((r) => r.physicalId === id && !DONE.has(r.state));
  if (removalPolicyOf(event.ResourceProperties, rec?.doc) === 'retain') {
    await release(rt, rec, event.ResourceProperties);
    if (!rec) log({ msg: 'removal policy retain: the subscription is kept in the service', subscriptionId: id });
    return { PhysicalResourceId: id };
  }
  if (!rec && !await deleteProven(rt, 'sub', id, key)) return { PhysicalResourceId: id };
  await end(rt, id, onDelete);
  if (rec) await rt.journal.save(rec, 'deleted', rec.doc);
  return { PhysicalResourceId: id };
}

/**
 * An Update that follows another Update CloudFormation moved on from (an UPDATE_ROLLBACK while a replacing Update still
 * continued in isComplete): the subscription that Update made under another physical ID is known to nobody and no
 * Delete will come for it, so it is ended (an adopted or retained one released) before this Update runs; its attempts
 * are resolved with what they were made for (their record), not this event's properties.
 */
async function endMovedOnUpdate(rt: Runtime, key: string, physicalId: string | undefined, event: CfnEvent,
  onDelete: 'invalid' | 'cancelled'): Promise<void> {
  const { made, attempts } = await madeByMovedOnUpdate(rt, 'sub', await rt.journal.records<SubscriptionDoc>(key), physicalId);
  for (const r of made) {
    if (r.doc.adopted === true || r.doc.removalPolicy === 'retain') {
      await release(rt, r, event.ResourceProperties);
      continue;
    }
    log({ msg: 'ending the subscription of an Update that CloudFormation moved on from', subscriptionId: r.physicalId, record: r.id });
    await end(rt, r.physicalId!, onDelete);
    await rt.journal.save(r, 'deleted', r.doc);
  }
  for (const r of attempts) {
    await removeAttempt(rt, r, event, onDelete, (s) => !contradicts(s.product, r.doc.product) && !contradicts(s.remote_identity, r.doc.identity));
  }
}

/** Ends a subscription (404 and `invalid` mean it is gone; a 403 fails, naming the account). */
async function end(rt: Runtime, id: string, onDelete: 'invalid' | 'cancelled'): Promise<void> {
  const status = await statusOrGone(rt, id);
  if (status !== undefined && status !== 'invalid' && status !== onDelete) {
    await rt.client.subscriptions.update(id, { status: onDelete });
    // After the subscription ended (a failed PATCH cancels nothing): its open requests are moot and count against the ceiling.
    await cancelPendingHistory(rt, id);
  } else {
    log({ msg: 'nothing to delete', physicalResourceId: id, status });
  }
}

/** Undoes one attempt of a failed Create: an adoption lets go; a create ends only what it is proven to have made. */
async function removeAttempt(rt: Runtime, r: SubscriptionRecord, event: CfnEvent, onDelete: 'invalid' | 'cancelled',
  matches: (s: Subscription) => boolean = matchesDesired(desiredOf(event.ResourceProperties))): Promise<void> {
  if (r.state === 'adopting') {
    await release(rt, r, event.ResourceProperties);
    return;
  }
  let made: string | undefined;
  try {
    made = (await resolveAttempt(rt, r, matches)).id;
  } catch (e) {
    // A wait past the deadline (for the rate limit, a creates lock, or a list that may lag): the event continues.
    if (continuesAfter(rt, e)) throw e;
    // The rollback finishes: nothing is ended on a guess; the record stays for the next deploy or 'dpi journal'.
    log({ level: 'WARNING', msg: 'an attempt of this resource had no clear outcome and what it made cannot be told: nothing is changed', error: messageOf(e) });
    return;
  }
  if (made !== undefined) {
    const owner = await rt.journal.claim('sub', made, r.key);
    if (owner !== r.key) {
      log({ level: 'WARNING', msg: 'the subscription an attempt made is claimed by another resource: nothing is changed', subscriptionId: made, owner });
      return;
    }
    await end(rt, made, onDelete);
  }
  await rt.journal.save(r, made !== undefined ? 'deleted' : 'abandoned', { ...r.doc, attempt: undefined, ...(made ? { subscriptionId: made } : {}) }, made);
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

/** Handles `Custom::DpiSubscription`. */
export async function subscription(event: CfnEvent, rt: Runtime): Promise<OnEventResult> {
  if (event.RequestType === 'Delete') return remove(event, rt);
  const d = desiredOf(event.ResourceProperties);
  const pipelineKind = PIPELINE_PRODUCTS.get(d.productId);
  if (pipelineKind !== undefined) {
    // A pipeline's subscription stores the metadata its unified update and delete rely on (and that an adoption takes
    // as the pipeline's result): only the pipeline resources write it.
    throw new HandlerError(`Subscription: product ${d.productId} is a notification pipeline's product: declare a ${pipelineKind}; a Subscription `
      + 'could rewrite the metadata the pipeline\'s update and delete rely on; nothing was changed');
  }
  // Where a read does not show the product (the spec's reads), an adopted pipeline's subscription could pass for
  // another product's: the keys under which a pipeline's result is stored are never written by a Subscription.
  const reserved = [rt.metadataKeys.subscriptions, rt.metadataKeys.meta].filter((k) => d.params[k] !== undefined);
  if (reserved.length > 0) {
    throw new HandlerError(`Subscription: productParameters ${reserved.join(', ')} ${reserved.length === 1 ? 'is' : 'are'} where a notification `
      + 'pipeline\'s result is stored (the connection\'s pipelineMetadataKeys): a Subscription does not write them; nothing was changed');
  }
  const out = event.RequestType === 'Create' ? await create(event, rt, d) : await update(event, rt, d);
  const key = resourceKey(event);
  await undoIfCancelled(rt, key, out.PhysicalResourceId, 'sub', () => rt.journal.records<SubscriptionDoc>(key), async (r) => {
    if (r.doc.adopted === true || r.doc.removalPolicy === 'retain') return release(rt, r, event.ResourceProperties);
    await end(rt, r.physicalId!, d.onDelete);
    await rt.journal.save(r, 'deleted', r.doc);
  });
  return out;
}
