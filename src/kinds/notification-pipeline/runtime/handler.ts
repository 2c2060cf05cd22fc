/**
 * `Custom::DpiNotificationPipeline` events: Create (the unified POST and the product-107 subscription that stores its
 * result, or an adoption), Update (a unified PATCH, or a replacement), Delete (the unified DELETE, or a release under
 * the `retain` policy and for adopted pipelines). See docs/handler.md.
 */
import { adoptPipeline } from './handler-adoption';
import {
  body, claimIdentity, converge, dataOf, DONE, failedReasons, parametersOf, PipelineDesired, pipelineDesired, PipelineDoc, pipelineError,
  PipelineRecord, precheckParameters, preflightRoles, PRODUCT, release, sameSelection, selectionOf, withRolePropagation,
} from './handler-state';
import { ServiceError, UnifiedPipelineResult } from '../../../client';
import {
  contradicts, contradictsIdentity, deleteProven, newSubscriptionAttributes, removalPolicyOf, statusOrGone,
} from '../../../handler/common';
import { continuesAfter } from '../../../handler/continuation';
import { createRecordedSubscription } from '../../../handler/creates';
import { HandlerError, isDefiniteFailure, isStatus, messageOf } from '../../../handler/errors';
import { refuseInvalidIdentity } from '../../../handler/identity-health';
import { resourceKey } from '../../../handler/journal';
import { madeByCancelledCreate, madeByMovedOnUpdate, refuseIfCancelled, undoIfCancelled } from '../../../handler/lease';
import { log } from '../../../handler/log';
import { pipelineUpdateDecision } from '../../../handler/plan-decisions';
import { isNumericId, Props } from '../../../handler/props';
import { Runtime } from '../../../handler/runtime';
import { CfnEvent, OnEventResult } from '../../../handler/types';
import type { NotificationPipelineState } from '../wire';

async function create(event: CfnEvent, rt: Runtime, d: PipelineDesired): Promise<OnEventResult> {
  await preflightRoles(rt, d);
  if (d.adoptId !== undefined) return adoptPipeline(event, rt, d, d.adoptId);
  const key = resourceKey(event);
  const recs = await rt.journal.records<PipelineDoc>(key);
  // The latest unfinished record of this identity (an earlier delivery, a failed deploy, a killed runner);
  // a replacement's old record (another identity) is never taken.
  const others = (r: PipelineRecord): boolean => event.PhysicalResourceId === undefined || r.physicalId !== event.PhysicalResourceId;
  let rec = recs.filter((r) => r.doc.identity === d.remoteIdentityId && !DONE.has(r.state) && others(r))
    .sort((a, b) => (a.id < b.id ? 1 : -1))[0];
  if (rec) log({ msg: 'found an earlier attempt of this resource in the journal', record: rec.id, state: rec.state, subscriptionId: rec.doc.subscriptionId });
  if (rec && (rec.state === 'active' || rec.state === 'updating')) {
    const id = rec.doc.subscriptionId;
    if (id !== undefined && (await rt.journal.owners('sub', [id])).get(id) !== key) {
      // Written by no handler (a handler claims the subscription it records): never taken.
      throw new HandlerError(`journal record ${key} (${rec.id}) names subscription ${id}, which the journal does not give to this resource: `
        + 'it is not taken or changed; remove that record (dpi journal show) and deploy again');
    }
    return converge(rt, rec, d, event);
  }
  await precheckParameters(rt);
  if (!rec) {
    await refuseInvalidIdentity(rt, d.remoteIdentityId, `the notification pipeline of identity ${d.remoteIdentityId}`);
    await claimIdentity(rt, d.remoteIdentityId, key);
    rec = await rt.journal.create<PipelineDoc, NotificationPipelineState>(key, 'posting', {
      identity: d.remoteIdentityId, selection: selectionOf(d), name: d.name, storageGroupId: d.storageGroupId, removalPolicy: d.removalPolicy,
    });
  } else if (rec.state === 'posted') {
    // The subscription of an earlier attempt was never sent: it is made with today's name and storage group (a
    // refused storage group, since fixed, is not sent again); a changed selection is applied after it (converge).
    rec = await rt.journal.save(rec, 'posted', { ...rec.doc, name: d.name, storageGroupId: d.storageGroupId, removalPolicy: d.removalPolicy });
  } else if (rec.state === 'posting') {
    // Sending it again could duplicate the pipeline (event-bus types are reused, delivery resources are not) or
    // fail on the first one's queue destination: only the service can tell, and its interface shows no pipeline.
    throw unclearCreate(rec);
  }
  if (rec.state === 'posting') rec = await post(rt, rec, d);
  try {
    rec = await recordSubscription(rt, rec);
  } catch (e) {
    // A wait for the rate limit past the deadline: the event continues in isComplete, where the record is `posted`.
    if (continuesAfter(rt, e)) throw e;
    // The provider framework ignores the rollback Delete of a failed Create (aws-cdk-lib's CREATE_FAILED marker):
    // a Create undoes what it made before it reports the failure. The unified DELETE needs the subscription, so
    // it is recorded once more (the failure may have been transient), then the pipeline is removed.
    throw await undoAfterFailure(rt, key, e as Error);
  }
  if (!sameSelection(rec.doc.applied, selectionOf(d)) || (d.name !== undefined && d.name !== rec.doc.name)
    || (d.storageGroupId !== undefined && d.storageGroupId !== rec.doc.storageGroupId)) {
    // An earlier attempt made it with an older declaration: today's desired state is applied to it.
    log({ msg: 'the pipeline an earlier attempt made differs from the declaration: applying today\'s', subscriptionId: rec.doc.subscriptionId });
    return converge(rt, rec, d, event);
  }
  const failed = Object.keys(rec.doc.result?.failed ?? {});
  if (failed.length > 0 && d.partialFailure === 'FAIL') {
    await undo(rt, rec);
    throw new HandlerError(`notification types failed: ${failedReasons(rec.doc.result!.failed)}; the pipeline was removed again `
      + '(PartialFailure FAIL): fix the cause, drop those types, or set partialFailure ALLOW');
  }
  return dataOf(rec);
}

/**
 * After a failed subscription create (the pipeline exists): record it once more and remove the pipeline, so the
 * failed Create leaves nothing behind. Returns the error to report: the original one, saying the pipeline was
 * removed, or the leftover (the journal keeps the result for the next deploy or for `dpi`).
 */
async function undoAfterFailure(rt: Runtime, key: string, cause: Error): Promise<Error> {
  const rec = (await rt.journal.records<PipelineDoc>(key)).filter((r) => r.state === 'posted' || r.state === 'recording')
    .sort((a, b) => (a.id < b.id ? 1 : -1))[0];
  if (!rec) return cause;
  try {
    const recorded = await recordSubscription(rt, rec);
    await undo(rt, recorded);
  } catch (e) {
    log({ level: 'WARNING', msg: 'could not remove the pipeline of the failed create', record: rec.id, error: messageOf(e) });
    return cause;
  }
  log({ msg: 'the failed create\'s pipeline was removed again', record: rec.id });
  return new HandlerError(`${cause.message.replace(/; the lifecycle journal keeps the result.*$/, '')}; the pipeline was removed again: fix the cause and deploy again`);
}

/** The unified POST, between its intent (`posting`) and outcome (`posted`, or `abandoned` when refused). */
async function post(rt: Runtime, rec: PipelineRecord, d: PipelineDesired): Promise<PipelineRecord> {
  const sel = selectionOf(d);
  const r = rec.state === 'posting' && sameSelection(rec.doc.selection, sel) ? rec : await rt.journal.save(rec, 'posting', { ...rec.doc, selection: sel });
  try {
    await refuseIfCancelled(rt);
  } catch (e) {
    await rt.journal.save(r, 'abandoned', r.doc);
    throw e;
  }
  let result: UnifiedPipelineResult;
  try {
    result = await withRolePropagation(rt, d, () => rt.client.notifications.create(d.remoteIdentityId, body(d)));
  } catch (e) {
    if (isDefiniteFailure(e)) {
      await rt.journal.save(r, 'abandoned', r.doc);
      throw pipelineError(e, d, 'create');
    }
    log({ level: 'ERROR', msg: 'the unified create had no clear outcome', remoteIdentityId: d.remoteIdentityId, error: messageOf(e) });
    const cause = e instanceof ServiceError ? (e.status !== undefined ? `HTTP ${e.status}` : e.code ?? 'no answer') : 'no answer';
    const unclear = await rt.journal.save(r, 'posting', { ...r.doc, postUnclear: cause });
    throw unclearCreate(unclear);
  }
  // The result is logged before it is stored: the journal write could fail.
  log({ msg: 'unified pipeline created', remoteIdentityId: d.remoteIdentityId, region: d.region, meta: result.meta, subscriptions: result.subscriptions });
  return rt.journal.save(r, 'posted', {
    ...r.doc, applied: sel, result: { subscriptions: result.subscriptions ?? {}, failed: result.failed ?? {}, meta: result.meta ?? {} },
  });
}

/**
 * The residual case of a unified create whose answer was lost: the service's interface offers no read of a pipeline,
 * so what the POST made (if anything) cannot be found or removed through it. Names what may remain and the one step
 * that clears it.
 */
function unclearCreate(rec: PipelineRecord): HandlerError {
  const sel = rec.doc.selection;
  // The step comes before the list of what may remain: a long list may be cut from the reason (~500 characters).
  return new HandlerError(`the unified create of identity ${rec.doc.identity} (${sel.region}) got no answer `
    + `(${rec.doc.postUnclear ?? 'the invocation ended first'}); if the service applied it, only the service can remove it: once removed `
    + `(or confirmed never made), run 'dpi journal resolve ${rec.key}' (--local for dpi local-deploy) and deploy again; it may have made `
    + `upstream subscriptions for ${sel.types.join(', ')}, their destination and delivery resources in ${sel.region}`);
}

/** Stores a posted result in a new product-107 subscription (the service's PATCH and DELETE read it there). */
async function recordSubscription(rt: Runtime, rec: PipelineRecord): Promise<PipelineRecord> {
  const result = rec.doc.result!;
  let params: Record<string, string>;
  try {
    params = await parametersOf(rt, result as UnifiedPipelineResult);
  } catch (e) {
    if (continuesAfter(rt, e)) throw e;
    throw leftover(rec, messageOf(e));
  }
  const attrs = await newSubscriptionAttributes(rt, {
    product: PRODUCT,
    remoteIdentityId: rec.doc.identity,
    storageGroupId: rec.doc.storageGroupId,
    name: rec.doc.name,
    params,
  });
  try {
    return await createRecordedSubscription(rt, rec, attrs, 'posted',
      (s) => !contradictsIdentity(s.remote_identity, rec.doc.identity) && !contradicts(s.product, PRODUCT) && !contradicts(s.name, rec.doc.name));
  } catch (e) {
    if (continuesAfter(rt, e)) throw e;
    throw leftover(rec, messageOf(e));
  }
}

/** A failure after the pipeline exists but before its subscription does: names what remains and the step that clears it. */
function leftover(rec: PipelineRecord, cause: string): HandlerError {
  const meta = rec.doc.result?.meta ?? {};
  return new HandlerError(`the notification pipeline of identity ${rec.doc.identity} was created (region ${rec.doc.applied?.region}, prefix `
    + `${String(meta.s3_notification_prefix ?? '?')}, types ${Object.keys(rec.doc.result?.subscriptions ?? {}).join(', ') || 'none'}) but its `
    + `subscription could not be recorded (${cause}); the lifecycle journal keeps the result: deploy again (or delete the stack) to `
    + 'record and then keep or remove it');
}

/** Removes a pipeline and marks its subscription invalid (a Create's undo, and Delete). */
async function undo(rt: Runtime, rec: PipelineRecord): Promise<PipelineRecord> {
  const id = rec.doc.subscriptionId!;
  // An earlier invocation that recorded `deleting` and no answer may have sent the DELETE (e.g. it ended while waiting).
  const resumed = rec.state === 'deleting' && rec.doc.deleteAnswered !== true;
  let r = rec.state === 'deleting' ? rec : await rt.journal.save(rec, 'deleting', rec.doc);
  try {
    await rt.client.notifications.delete(rec.doc.identity, id);
  } catch (e) {
    const unclearBefore = r.doc.deleteUnclear === true || resumed || (e instanceof ServiceError && e.afterUnclearAttempt);
    if (isStatus(e, 400) && unclearBefore) {
      // An earlier DELETE was sent without a clear outcome; the service now finds no pipeline for the stored
      // metadata: that DELETE removed it (see docs/handler.md, "Assumptions").
      log({ level: 'WARNING', msg: 'an earlier unified delete had no clear outcome and the service now finds no pipeline for the stored metadata: taken as deleted', subscriptionId: id, error: messageOf(e) });
    } else if (isStatus(e, 400)) {
      await rt.journal.save(r, 'deleting', { ...r.doc, deleteAnswered: true });
      throw new HandlerError(`the service cannot delete the notification pipeline of subscription ${id}: ${messageOf(e)}; `
        + 'its stored metadata must be intact: restore it or remove the pipeline resources by hand, then delete again '
        + '(or keep the resource with removalPolicy RETAIN)');
    } else if (!isStatus(e, 404)) {
      if (!isDefiniteFailure(e)) await rt.journal.save(r, 'deleting', { ...r.doc, deleteUnclear: true });
      throw e;
    }
  }
  await rt.client.subscriptions.update(id, { status: 'invalid' });
  r = await rt.journal.save(r, 'deleted', r.doc);
  return r;
}

async function update(event: CfnEvent, rt: Runtime, d: PipelineDesired): Promise<OnEventResult> {
  const id = event.PhysicalResourceId;
  const key = resourceKey(event);
  await endMovedOnUpdate(rt, key, id);
  if (!isNumericId(id)) return create(event, rt, d);
  let rec = (await rt.journal.records<PipelineDoc>(key)).find((r) => r.physicalId === id && !DONE.has(r.state));
  // The recorded identity and account type, not the previous properties: in a rollback they are the failed declaration's.
  const accountType = rec?.doc.applied?.accountType ?? rec?.doc.selection?.accountType;
  const recorded = rec ? { identity: rec.doc.identity, ...(accountType ? { accountType } : {}) } : undefined;
  const decision = pipelineUpdateDecision(event.OldResourceProperties, d, id, recorded);
  if (decision.refusal !== undefined) throw new HandlerError(decision.refusal);
  if (decision.replace !== undefined) {
    log({ msg: `replacement: ${decision.replace}`, old: id, ...(d.adoptId !== undefined && d.adoptId !== id ? { adopt: d.adoptId } : {}) });
    return create(event, rt, d);
  }
  const status = await statusOrGone(rt, id);
  if (status === undefined || status === 'invalid') {
    log({ msg: 'replacement: the subscription is gone or invalid', old: id });
    if (rec) await rt.journal.save(rec, 'deleted', rec.doc);
    return create(event, rt, d);
  }
  if (!rec) {
    // A pipeline deployed before the journal existed: its previous selection is the old properties; the
    // unified PATCH (full body) converges it and returns the result the journal then keeps.
    log({ msg: 'no journal record for this pipeline: recording it from the previous properties', subscriptionId: id });
    const prev = pipelineDesired(event.OldResourceProperties);
    const owner = await rt.journal.claim('sub', id, key);
    if (owner !== key) throw new HandlerError(`subscription ${id} is managed by ${owner} in the lifecycle journal; nothing was changed`);
    rec = await rt.journal.create<PipelineDoc, NotificationPipelineState>(key, 'updating', {
      identity: d.remoteIdentityId,
      selection: selectionOf(prev),
      applied: selectionOf(prev),
      subscriptionId: id,
      // Declared as an adoption (before or now), or nothing proves the stack made it (a journal table changed without
      // its records): the user's to keep, ended only by an explicit destroy declared next to the adoption.
      ...(typeof event.OldResourceProperties?.AdoptId === 'string' || d.adoptId === id || rt.journalUnproven !== undefined ? { adopted: true } : {}),
      ...(rt.journalUnproven !== undefined ? { unprovenFrom: rt.journalUnproven.from } : {}),
    }, id);
  }
  return converge(rt, rec, d, event);
}

async function remove(event: CfnEvent, rt: Runtime): Promise<OnEventResult> {
  const id = event.PhysicalResourceId ?? '';
  const key = resourceKey(event);
  const recs = await rt.journal.records<PipelineDoc>(key);
  if (!isNumericId(id)) {
    // The rollback of a failed Create (placeholder physical ID): finish and remove what its attempts made.
    for (const r of recs.filter((x) => x.physicalId === undefined && !DONE.has(x.state))) await removeAttempt(rt, r);
    // A Create that CloudFormation stopped waiting for (cancelled when another resource failed) may have finished:
    // the pipeline it made is removed (an adoption released); records of earlier operations are not touched.
    for (const r of await madeByCancelledCreate(rt, 'sub', recs, new Set())) {
      // As CloudFormation keeps a resource with DeletionPolicy Retain when the rollback of its creation removes it.
      if (r.doc.adopted === true || r.doc.removalPolicy === 'retain') {
        await release(rt, r);
        continue;
      }
      log({ msg: 'removing the pipeline of a Create that CloudFormation stopped waiting for', subscriptionId: r.physicalId });
      await undo(rt, r);
    }
    return { PhysicalResourceId: id };
  }
  const rec = recs.find((r) => r.physicalId === id && !DONE.has(r.state)) ?? recs.find((r) => r.physicalId === id);
  if (removalPolicyOf(event.ResourceProperties, rec?.doc) === 'retain') {
    await release(rt, rec);
    return { PhysicalResourceId: id };
  }
  if (!rec && !await deleteProven(rt, 'sub', id, key)) return { PhysicalResourceId: id };
  const status = await statusOrGone(rt, id);
  if (status === undefined || status === 'invalid') {
    log({ msg: 'nothing to delete', physicalResourceId: id, status });
    if (rec && !DONE.has(rec.state)) await rt.journal.save(rec, 'deleted', rec.doc);
    return { PhysicalResourceId: id };
  }
  const identity = rec?.doc.identity ?? new Props(event.ResourceProperties, 'NotificationPipeline').optString('RemoteIdentityId') ?? '';
  const r = rec ?? await rt.journal.create<PipelineDoc, NotificationPipelineState>(key, 'deleting', {
    identity, selection: selectionOf(pipelineDesired(event.ResourceProperties)), subscriptionId: id,
  }, id);
  await undo(rt, r);
  return { PhysicalResourceId: id };
}

/** Removes what a failed Create's attempt made (rollback Delete with a placeholder physical ID). */
async function removeAttempt(rt: Runtime, rec: PipelineRecord): Promise<void> {
  if (rec.state === 'posting') {
    // Whether the POST was applied is unknowable through the service (its result is the only handle).
    log({
      level: 'WARNING',
      msg: 'an attempt of this resource sent the unified create without a known outcome; if it was applied, its pipeline remains '
        + '(the journal keeps the record: a later deploy of this resource reuses it)',
      remoteIdentityId: rec.doc.identity,
      region: rec.doc.selection.region,
      types: rec.doc.selection.types,
    });
    return;
  }
  log({ msg: 'removing what a failed create made', record: rec.id, state: rec.state });
  let r = rec;
  if (r.state === 'posted' || r.state === 'recording') r = await recordSubscription(rt, r);
  await undo(rt, r);
}
/**
 * An Update that follows another Update CloudFormation moved on from (an UPDATE_ROLLBACK while a replacing Update still
 * continued in isComplete): the pipeline that Update made under another physical ID is known to nobody and no Delete
 * will come for it, so it is removed (an adopted or retained one released) before this Update runs.
 */
async function endMovedOnUpdate(rt: Runtime, key: string, physicalId: string | undefined): Promise<void> {
  const { made, attempts } = await madeByMovedOnUpdate(rt, 'sub', await rt.journal.records<PipelineDoc>(key), physicalId);
  for (const r of made) {
    if (r.doc.adopted === true || r.doc.removalPolicy === 'retain') {
      await release(rt, r);
      continue;
    }
    log({ msg: 'removing the pipeline of an Update that CloudFormation moved on from', subscriptionId: r.physicalId, record: r.id });
    await undo(rt, r);
  }
  for (const r of attempts) await removeAttempt(rt, r);
}

/** Handles `Custom::DpiNotificationPipeline`. */
export async function notificationPipeline(event: CfnEvent, rt: Runtime): Promise<OnEventResult> {
  if (event.RequestType === 'Delete') return remove(event, rt);
  const d = pipelineDesired(event.ResourceProperties);
  const out = event.RequestType === 'Create' ? await create(event, rt, d) : await update(event, rt, d);
  const key = resourceKey(event);
  await undoIfCancelled(rt, key, out.PhysicalResourceId, 'sub', () => rt.journal.records<PipelineDoc>(key), async (r) => {
    if (r.doc.adopted === true || r.doc.removalPolicy === 'retain') return release(rt, r);
    await undo(rt, r);
  });
  return out;
}

