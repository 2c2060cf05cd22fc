import { Subscription, UnifiedPipelineRequest, UnifiedPipelineResult } from '../client';
import { NotificationPipelineAttributes as A, PipelineParameterKeys as K } from '../contract';
import { findByMarker, markerOf, newSubscriptionAttributes, readForDelete, readOrUndefined } from './common';
import { fitData } from './data';
import { HandlerError, isDefiniteFailure, isStatus, messageOf, statusOf } from './errors';
import { log } from './log';
import { accountOfArn, isNumericId, Props, sameSet } from './props';
import { Runtime } from './runtime';
import { CfnEvent, OnEventResult } from './types';

const PRODUCT = 107;

/** The desired state of a unified notification pipeline, from the resource properties. */
export interface PipelineDesired {
  remoteIdentityId: string;
  accountType: string;
  types: string[];
  roleArn: string;
  ebRoleArn?: string;
  region: string;
  storageGroupId?: number;
  name?: string;
  partialFailure: 'FAIL' | 'ALLOW';
}

/** Parses the properties of `Custom::DpiNotificationPipeline`. */
export function pipelineDesired(raw: Record<string, unknown> | undefined): PipelineDesired {
  const p = new Props(raw, 'NotificationPipeline');
  const pf = (p.optString('PartialFailure') ?? 'FAIL').toUpperCase();
  if (pf !== 'FAIL' && pf !== 'ALLOW') throw new HandlerError(`NotificationPipeline: PartialFailure must be FAIL or ALLOW, got ${pf}`);
  const types = p.list('NotificationTypes');
  if (types.length === 0) throw new HandlerError('NotificationPipeline: NotificationTypes must name at least one notification type');
  return {
    remoteIdentityId: p.string('RemoteIdentityId'),
    accountType: p.string('AccountType'),
    types,
    roleArn: p.string('RoleArn'),
    ebRoleArn: p.optString('EbToFhRoleArn'),
    region: p.string('DeploymentRegion'),
    storageGroupId: p.optInt('StorageGroupId'),
    name: p.optString('Name'),
    partialFailure: pf,
  };
}

function body(d: PipelineDesired): UnifiedPipelineRequest {
  return {
    notification_types: d.types,
    role_arn: d.roleArn,
    ...(d.ebRoleArn ? { eb_to_fh_role_arn: d.ebRoleArn } : {}),
    aws_region: d.region,
  };
}

/** Fails before any service call when a role belongs to another AWS account than the one being deployed to. */
export async function preflightRoles(rt: Runtime, d: PipelineDesired): Promise<void> {
  const caller = await rt.callerAccountId();
  for (const [name, arn] of [['RoleArn', d.roleArn], ['EbToFhRoleArn', d.ebRoleArn]] as const) {
    if (!arn) continue;
    const acct = accountOfArn(arn);
    if (acct === undefined) throw new HandlerError(`${name} ${arn} is not an IAM role ARN; pass the roles of NotificationPipelineRoles`);
    if (acct !== caller) {
      throw new HandlerError(`${name} ${arn} belongs to AWS account ${acct} but the stack deploys to account ${caller}; `
        + `the service provisions the pipeline in the role's account: deploy NotificationPipelineRoles in account ${caller} and use its roles`);
    }
  }
}

/** Turns a unified create/update failure into an actionable sentence. */
export function pipelineError(e: unknown, d: PipelineDesired, action: 'create' | 'update'): Error {
  const status = statusOf(e);
  if (status === undefined || (status !== 400 && status !== 403)) return e as Error;
  const msg = messageOf(e);
  if (status === 403) {
    return new HandlerError(`the service could not ${action} the notification pipeline of identity ${d.remoteIdentityId}: ${msg}; `
      + `role assumption failed: check that ${d.roleArn} exists and its trust policy allows the service's account with the right sts:ExternalId`);
  }
  if (/legacy/i.test(msg)) {
    return new HandlerError(`identity ${d.remoteIdentityId} has an active legacy (product 86) notification pipeline; retire it first `
      + 'with LegacyNotificationPipeline retired: true and make the unified pipeline depend on it (service: ' + msg + ')');
  }
  if (/different destination/i.test(msg)) {
    return new HandlerError(`${msg} (identity ${d.remoteIdentityId}); another pipeline of this identity still subscribes that type: `
      + 'delete or retire it first, then deploy again');
  }
  return new HandlerError(`the service rejected the notification pipeline ${action} for identity ${d.remoteIdentityId}: ${msg}`);
}

function failedReasons(failed: Record<string, unknown>): string {
  return Object.entries(failed).map(([t, f]) => {
    const o = f as { message?: unknown; code?: unknown } | string;
    const m = typeof o === 'string' ? o : typeof o?.message === 'string' ? o.message : JSON.stringify(o);
    return `${t}: ${m}`;
  }).join('; ');
}

/** What the subscription records before the unified POST: the attempt, its selection and the marker. */
function recordParams(d: PipelineDesired, marker?: string): Record<string, string> {
  return {
    [K.NOTIFICATION_TYPES]: JSON.stringify(d.types),
    [K.ROLE_ARN]: d.roleArn,
    [K.EB_TO_FH_ROLE_ARN]: d.ebRoleArn ?? '',
    [K.AWS_REGION]: d.region,
    [K.ACCOUNT_TYPE]: d.accountType,
    ...(marker ? { [K.RESOURCE_MARKER]: marker } : {}),
  };
}

/** The product parameters after a unified create/update: the selection plus what the service returned. */
function storedParams(d: PipelineDesired, r: UnifiedPipelineResult): Record<string, string> {
  return {
    [K.SUBSCRIPTIONS]: JSON.stringify(r.subscriptions ?? {}),
    [K.META]: JSON.stringify(r.meta ?? {}),
    ...recordParams(d),
  };
}

/** True when the subscription holds pipeline metadata (absent: the unified POST's result was never stored). */
function hasStoredMeta(sub: Subscription): boolean {
  return sub.product_parameters?.[K.META] !== undefined;
}

function parseJson<T>(s: string | undefined, dflt: T): T {
  if (s === undefined) return dflt;
  try {
    return JSON.parse(s) as T;
  } catch {
    return dflt;
  }
}

/** The attributes of the resource. */
export function pipelineData(subscriptionId: string, types: string[], subscribed: Record<string, string>,
  failed: string[], meta: Record<string, unknown>): Record<string, string> {
  const str = (v: unknown): string => (typeof v === 'string' ? v : v === undefined || v === null ? '' : String(v));
  const subscribedTypes = types.filter((t) => subscribed[t] !== undefined);
  for (const t of Object.keys(subscribed)) if (!subscribedTypes.includes(t)) subscribedTypes.push(t);
  return fitData({
    [A.SUBSCRIPTION_ID]: subscriptionId,
    [A.BUCKET_NAME]: str(meta.s3_bucket_name),
    [A.PREFIX]: str(meta.s3_notification_prefix),
    [A.NOTIFICATION_QUEUE_ARN]: str(meta.s3_notification_queue_arn),
    [A.DELIVERY_STREAM_ARN]: str(meta.firehose_arn),
    [A.SHARED_PIPELINE_ID]: str(meta.shared_pipeline_id),
    [A.SUBSCRIBED_TYPES]: subscribedTypes.join(','),
    [A.FAILED_TYPES]: failed.join(','),
  });
}

function dataFromStored(sub: Subscription, d: PipelineDesired): Record<string, string> {
  const pp = sub.product_parameters ?? {};
  const subscribed = parseJson<Record<string, string>>(pp[K.SUBSCRIPTIONS], {});
  const meta = parseJson<Record<string, unknown>>(pp[K.META], {});
  return pipelineData(sub.id, d.types, subscribed, d.types.filter((t) => subscribed[t] === undefined), meta);
}

async function create(event: CfnEvent, rt: Runtime, d: PipelineDesired): Promise<OnEventResult> {
  await preflightRoles(rt, d);
  const marker = markerOf(event);
  // A replacement (new identity) shares the marker with the resource it replaces: match the identity too.
  const mine = (s: Subscription): boolean => s.id !== event.PhysicalResourceId
    && String(s.remote_identity ?? s.product_parameters?.remote_identity_id) === d.remoteIdentityId;
  const existing = await findByMarker(rt, PRODUCT, marker, mine);
  if (existing && hasStoredMeta(existing)) {
    log({ msg: 'create already done by an earlier delivery', subscriptionId: existing.id });
    return { PhysicalResourceId: existing.id, Data: dataFromStored(existing, d) };
  }
  let sub: Subscription;
  if (existing) {
    // An earlier attempt recorded itself but stopped before storing the unified result (crash, timeout,
    // failed metadata PATCH). POST again: the service reuses upstream subscriptions at the expected destination.
    log({
      level: 'WARNING',
      msg: 'an earlier attempt of this resource stopped before storing the pipeline metadata; creating the unified pipeline again',
      subscriptionId: existing.id,
      remoteIdentityId: d.remoteIdentityId,
      region: d.region,
    });
    sub = existing;
  } else {
    sub = await createRecord(rt, d, marker, mine);
  }
  return provision(rt, sub.id, d, {}, 'create', d.remoteIdentityId, existing !== undefined);
}

/**
 * Creates the product-107 subscription that records the attempt (no metadata yet). After an ambiguous
 * failure (response lost, timeout, 5xx) it looks the subscription up by the marker before giving up.
 */
async function createRecord(rt: Runtime, d: PipelineDesired, marker: string, mine: (s: Subscription) => boolean): Promise<Subscription> {
  const attrs = await newSubscriptionAttributes(rt, {
    product: PRODUCT,
    remoteIdentityId: d.remoteIdentityId,
    storageGroupId: d.storageGroupId,
    name: d.name,
    params: recordParams(d, marker),
  });
  try {
    return await rt.client.subscriptions.create(attrs);
  } catch (e) {
    if (isDefiniteFailure(e)) throw e;
    log({ msg: 'the subscription create had no clear outcome: looking it up by the marker', error: messageOf(e) });
    let found: Subscription | undefined;
    try {
      found = await findByMarker(rt, PRODUCT, marker, mine);
    } catch (e2) {
      throw new HandlerError(`creating the product-107 subscription of identity ${d.remoteIdentityId} had no clear outcome (${messageOf(e)}) `
        + `and the marker lookup failed too (${messageOf(e2)}); no pipeline was created: deploy again (a subscription made meanwhile is found by its marker)`);
    }
    if (found) {
      log({ msg: 'found the subscription by the marker after the ambiguous create', subscriptionId: found.id });
      return found;
    }
    throw new HandlerError(`creating the product-107 subscription of identity ${d.remoteIdentityId} failed (${messageOf(e)}) `
      + 'and no subscription carries this resource\'s marker: nothing was created; deploy again');
  }
}

/**
 * POSTs the unified pipeline for the recorded subscription `id`, then stores its result (partial merge,
 * with `changes`). With PartialFailure FAIL and failed types: a create undoes everything (the metadata is
 * stored first, so the DELETE finds it); an update fails and leaves the rollback to CloudFormation.
 */
async function provision(rt: Runtime, id: string, d: PipelineDesired, changes: { name?: string; storage_group?: number },
  action: 'create' | 'update', ri: string, recovering: boolean): Promise<OnEventResult> {
  let result: UnifiedPipelineResult;
  try {
    result = await rt.client.notifications.create(ri, body(d));
  } catch (e) {
    if (!isDefiniteFailure(e)) {
      throw new HandlerError(`the unified create of identity ${ri} had no clear outcome (${messageOf(e)}); subscription ${id} records the attempt: `
        + 'deploy again to finish it (a pipeline made meanwhile keeps its upstream subscriptions for the next attempt)');
    }
    // The service answered 4xx: no pipeline was made by this call. A Create's record is not known to
    // CloudFormation (the Create fails), so it is set invalid; an Update's record stays the resource.
    const err = pipelineError(e, d, 'create');
    if (action === 'create') {
      try {
        await rt.client.subscriptions.update(id, { status: 'invalid' });
      } catch (e2) {
        log({ level: 'WARNING', msg: 'could not set the unused subscription invalid', subscriptionId: id, error: messageOf(e2) });
      }
    }
    if (recovering && /different destination/i.test(messageOf(e))) {
      throw new HandlerError(`${err.message}; an earlier attempt (subscription ${id}) may have made a pipeline whose metadata was `
        + 'never stored: remove its upstream subscription and delivery resources by hand');
    }
    throw err;
  }
  // The result is logged before it is stored: if the Lambda dies now, an operator still finds the pipeline.
  log({ msg: 'unified pipeline created', subscriptionId: id, remoteIdentityId: ri, region: d.region, meta: result.meta, subscriptions: result.subscriptions });
  try {
    await rt.client.subscriptions.update(id, { ...changes, product_parameters: storedParams(d, result) });
  } catch (e) {
    const prefix = String(result.meta?.s3_notification_prefix ?? '?');
    log({ level: 'WARNING', msg: 'pipeline metadata not stored', subscriptionId: id, remoteIdentityId: ri, region: d.region, prefix, error: messageOf(e) });
    throw new HandlerError(`the notification pipeline of identity ${ri} was created (prefix ${prefix}) but its metadata could not be stored in `
      + `subscription ${id} (${messageOf(e)}); deploy again: the next attempt creates the pipeline again and stores it (the delivery resources `
      + `under prefix ${prefix} may then remain: remove them by hand)`);
  }
  const failedTypes = Object.keys(result.failed ?? {});
  if (failedTypes.length > 0 && d.partialFailure === 'FAIL') {
    if (action === 'create') {
      await undo(rt, id, ri);
      throw new HandlerError(`notification types failed: ${failedReasons(result.failed)}; the pipeline was removed again `
        + '(PartialFailure FAIL): fix the cause, drop those types, or set partialFailure ALLOW');
    }
    throw new HandlerError(`notification types failed: ${failedReasons(result.failed)} (PartialFailure FAIL); `
      + 'the rollback restores the previous types: fix the cause, drop those types, or set partialFailure ALLOW');
  }
  return { PhysicalResourceId: id, Data: pipelineData(id, d.types, result.subscriptions, failedTypes, result.meta ?? {}) };
}

/** Removes a pipeline and marks its subscription invalid (a Create's undo, and Delete). */
async function undo(rt: Runtime, subscriptionId: string, remoteIdentityId: string): Promise<void> {
  try {
    await rt.client.notifications.delete(remoteIdentityId, subscriptionId);
  } catch (e) {
    if (!isStatus(e, 404)) throw e;
  }
  await rt.client.subscriptions.update(subscriptionId, { status: 'invalid' });
}

async function update(event: CfnEvent, rt: Runtime, d: PipelineDesired): Promise<OnEventResult> {
  const id = event.PhysicalResourceId;
  const old = new Props(event.OldResourceProperties, 'NotificationPipeline');
  if (!isNumericId(id)) return create(event, rt, d);
  if (old.optString('RemoteIdentityId') !== d.remoteIdentityId) {
    log({ msg: 'replacement: remote identity changed', old: id });
    return create(event, rt, d);
  }
  if (old.optString('AccountType') !== d.accountType) {
    // A second pipeline of the same identity would take over (and later lose) the first one's upstream
    // subscriptions, so an account-type change of the same identity is refused instead of replaced.
    throw new HandlerError(`AccountType changed from ${old.optString('AccountType')} to ${d.accountType} for the same identity ${d.remoteIdentityId}; `
      + 'the account type follows the identity (type 17 seller, 18 vendor): change it back, or use another identity');
  }
  const sub = await readOrUndefined(rt, id);
  if (!sub || sub.status === 'invalid' || Number(sub.product) !== PRODUCT) {
    log({ msg: 'replacement: the subscription is gone or invalid', old: id });
    return create(event, rt, d);
  }
  const pp = sub.product_parameters ?? {};
  const storedTypes = parseJson<string[]>(pp[K.NOTIFICATION_TYPES], []);
  const pipelineChanged = !sameSet(storedTypes, d.types) || pp[K.ROLE_ARN] !== d.roleArn
    || (pp[K.EB_TO_FH_ROLE_ARN] ?? '') !== (d.ebRoleArn ?? '') || pp[K.AWS_REGION] !== d.region;
  const changes: { name?: string; storage_group?: number } = {};
  if (d.name !== undefined && d.name !== (sub.name ?? '')) changes.name = d.name;
  if (d.storageGroupId !== undefined && d.storageGroupId !== (sub.storage_group ?? undefined)) changes.storage_group = d.storageGroupId;

  if (!hasStoredMeta(sub)) {
    // The Create that made this subscription stopped before storing the unified result: finish it.
    log({
      level: 'WARNING',
      msg: 'the subscription has no stored pipeline metadata; creating the unified pipeline again',
      subscriptionId: id,
      remoteIdentityId: d.remoteIdentityId,
      region: d.region,
    });
    await preflightRoles(rt, d);
    return provision(rt, id, d, changes, 'update', String(sub.remote_identity ?? pp.remote_identity_id ?? d.remoteIdentityId), true);
  }
  if (!pipelineChanged) {
    if (Object.keys(changes).length > 0) await rt.client.subscriptions.update(id, changes);
    return { PhysicalResourceId: id, Data: dataFromStored(sub, d) };
  }
  await preflightRoles(rt, d);
  const ri = String(sub.remote_identity ?? pp.remote_identity_id ?? d.remoteIdentityId);
  let result: UnifiedPipelineResult;
  try {
    result = await rt.client.notifications.update(ri, id, body(d));
  } catch (e) {
    throw pipelineError(e, d, 'update');
  }
  // Store what the service now has, even when failing below: later updates and the delete rely on it.
  await rt.client.subscriptions.update(id, { ...changes, product_parameters: storedParams(d, result) });
  const failedTypes = Object.keys(result.failed ?? {});
  if (failedTypes.length > 0 && d.partialFailure === 'FAIL') {
    throw new HandlerError(`notification types failed: ${failedReasons(result.failed)} (PartialFailure FAIL); `
      + 'the rollback restores the previous types: fix the cause, drop those types, or set partialFailure ALLOW');
  }
  return { PhysicalResourceId: id, Data: pipelineData(id, d.types, result.subscriptions, failedTypes, result.meta ?? {}) };
}

async function remove(event: CfnEvent, rt: Runtime): Promise<OnEventResult> {
  const id = event.PhysicalResourceId ?? '';
  const sub = await readForDelete(rt, id);
  if (!sub || sub.status === 'invalid' || Number(sub.product) !== PRODUCT) {
    log({ msg: 'nothing to delete', physicalResourceId: id, status: sub?.status });
    return { PhysicalResourceId: id };
  }
  const ri = String(sub.remote_identity ?? sub.product_parameters?.remote_identity_id
    ?? new Props(event.ResourceProperties, 'NotificationPipeline').optString('RemoteIdentityId') ?? '');
  if (!hasStoredMeta(sub)) {
    // Recorded before the unified POST and never completed: whether that POST happened is not knowable
    // (only its lost response would tell). Nothing more can be deleted through the service.
    log({
      level: 'WARNING',
      msg: 'the subscription has no stored pipeline metadata: setting it invalid without a unified DELETE; if an interrupted create '
        + 'made a pipeline, its delivery resources remain: check the customer account',
      subscriptionId: sub.id,
      remoteIdentityId: ri,
      region: sub.product_parameters?.[K.AWS_REGION] ?? '',
    });
    await rt.client.subscriptions.update(sub.id, { status: 'invalid' });
    return { PhysicalResourceId: id };
  }
  try {
    await undo(rt, sub.id, ri);
  } catch (e) {
    if (isStatus(e, 400)) {
      throw new HandlerError(`the service cannot delete the notification pipeline of subscription ${sub.id}: ${messageOf(e)}; `
        + 'its stored metadata (product_parameters subscriptions/meta) must be intact: restore it or remove the pipeline resources by hand, '
        + 'then delete again (or keep the resource with removalPolicy RETAIN)');
    }
    throw e;
  }
  return { PhysicalResourceId: id };
}

/** Handles `Custom::DpiNotificationPipeline`. */
export async function notificationPipeline(event: CfnEvent, rt: Runtime): Promise<OnEventResult> {
  if (event.RequestType === 'Delete') return remove(event, rt);
  const d = pipelineDesired(event.ResourceProperties);
  return event.RequestType === 'Create' ? create(event, rt, d) : update(event, rt, d);
}
