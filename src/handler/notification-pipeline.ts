import { ServiceError, UnifiedPipelineRequest, UnifiedPipelineResult } from '../client';
import { NotificationPipelineAttributes as A } from '../contract';
import {
  claimForAdoption, contradicts, declaredRemovalPolicy, newSubscriptionAttributes, OwnsSubscription, RELEASED_OR_DONE, removalPolicyOf,
  RemovalPolicyValue, startAdoption, statusOrGone,
} from './common';
import { createRecordedSubscription } from './creates';
import { fitData } from './data';
import { HandlerError, isDefiniteFailure, isStatus, messageOf, statusOf } from './errors';
import { JournalRecord, resourceKey } from './journal';
import { log } from './log';
import { isResultMetaField, metaString, SERVICE_FILLED_KEYS, storedParameters } from './metadata';
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
  /** An existing product-107 subscription to adopt (`existingSubscriptionId`). */
  adoptId?: string;
  /** The declared removal policy (undefined: a template from before the property). */
  removalPolicy?: RemovalPolicyValue;
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
    adoptId: p.optString('AdoptId'),
    removalPolicy: declaredRemovalPolicy(raw),
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
      + `role assumption failed: check that ${d.roleArn} exists and its trust policy allows the service's account (and the sts:ExternalId, if you set one)`);
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

/** What the service was asked for (the unified body's selection and the identity's account type). */
interface Selection {
  types: string[];
  roleArn: string;
  ebRoleArn?: string;
  region: string;
  accountType: string;
}

/** The journal document of a notification pipeline. */
interface PipelineDoc extends OwnsSubscription {
  /** The remote identity. */
  identity: string;
  /** The selection of the call in flight (state posting/updating) or last confirmed. */
  selection: Selection;
  /** The selection the service confirmed last (absent before the first confirmed call). */
  applied?: Selection;
  /** The service's last confirmed result. */
  result?: { subscriptions: Record<string, string>; failed: Record<string, unknown>; meta: Record<string, unknown> };
  name?: string;
  storageGroupId?: number;
  /** Why the unified POST had no clear outcome (it may have made a pipeline that cannot be found). */
  postUnclear?: string;
  /** A unified DELETE was sent without a clear outcome (it may have removed the pipeline). */
  deleteUnclear?: boolean;
  /** The service answered the last unified DELETE with a refusal (so a `deleting` record is not an unclear one). */
  deleteAnswered?: boolean;
  /** An adopted pipeline on which a unified PATCH was sent (what it changed cannot be restored on release). */
  adoptionPatched?: boolean;
  /** What a release could not restore. */
  unrestored?: string[];
}

/**
 * States of a pipeline record: `posting` (unified POST sent, outcome unknown), `posted` (result known, no
 * subscription yet), `recording` (subscription POST sent), `active`, `updating` (unified PATCH sent or its result
 * not stored: the service may differ from `applied`), `deleting`, `deleted`, `abandoned` (nothing was made).
 */
type PipelineRecord = JournalRecord<PipelineDoc>;
const DONE = RELEASED_OR_DONE;

function selectionOf(d: PipelineDesired): Selection {
  return { types: d.types, roleArn: d.roleArn, ebRoleArn: d.ebRoleArn, region: d.region, accountType: d.accountType };
}

function sameSelection(a: Selection | undefined, b: Selection): boolean {
  return a !== undefined && sameSet(a.types, b.types) && a.roleArn === b.roleArn && (a.ebRoleArn ?? '') === (b.ebRoleArn ?? '')
    && a.region === b.region;
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
    [A.EVENT_BUS_NAME]: str(meta.event_bus_name),
    [A.EVENT_BRIDGE_RULE_ID]: str(meta.eventbridge_rule_id),
    [A.EVENT_BRIDGE_DESTINATION_ID]: str(meta.eventbridge_destination_id),
    [A.SQS_DESTINATION_ID]: str(meta.sqs_destination_id),
    [A.SUBSCRIBED_TYPES]: subscribedTypes.join(','),
    [A.FAILED_TYPES]: failed.join(','),
  });
}

/** The attributes from the journal (what the service confirmed last). */
function dataOf(rec: PipelineRecord): OnEventResult {
  const id = rec.doc.subscriptionId ?? rec.physicalId ?? '';
  const r = rec.doc.result ?? { subscriptions: {}, failed: {}, meta: {} };
  const types = (rec.doc.applied ?? rec.doc.selection).types;
  return { PhysicalResourceId: id, Data: pipelineData(id, types, r.subscriptions, Object.keys(r.failed ?? {}), r.meta) };
}

/** The product parameters that store a result, under product 107's `required_meta_fields` and the default mapping. */
async function parametersOf(rt: Runtime, result: UnifiedPipelineResult): Promise<Record<string, string>> {
  const product = await rt.product(PRODUCT);
  const subscriptions = JSON.stringify(result.subscriptions ?? {});
  const meta = JSON.stringify(result.meta ?? {});
  const parts: Record<string, string> = { [rt.metadataKeys.subscriptions]: subscriptions, [rt.metadataKeys.meta]: meta };
  for (const [k, v] of Object.entries(result.meta ?? {})) {
    const s = metaString(v);
    if (s !== undefined && parts[k] === undefined) parts[k] = s;
  }
  const required = product.required_meta_fields ?? [];
  const defaults = { [rt.metadataKeys.subscriptions]: subscriptions, [rt.metadataKeys.meta]: meta };
  const params = storedParameters(PRODUCT, required, { parts, defaults });
  if (!loggedMappings.has(JSON.stringify(required))) {
    loggedMappings.add(JSON.stringify(required));
    log({
      msg: 'pipeline metadata mapping',
      requiredMetaFields: required,
      stored: Object.keys(params).sort(),
      defaultKeys: { subscriptions: rt.metadataKeys.subscriptions, meta: rt.metadataKeys.meta },
    });
  }
  return params;
}

/** Mappings already logged by this container (one line per product-107 record). */
const loggedMappings = new Set<string>();

/** Fails before any change when product 107 requires a stored key that no result can fill. */
async function precheckParameters(rt: Runtime): Promise<void> {
  const product = await rt.product(PRODUCT);
  const unfillable = (product.required_meta_fields ?? []).filter((k) => !SERVICE_FILLED_KEYS.has(k)
    && k !== rt.metadataKeys.subscriptions && k !== rt.metadataKeys.meta && !isResultMetaField(k));
  if (unfillable.length > 0) {
    throw new HandlerError(`product ${PRODUCT} requires the stored parameter${unfillable.length > 1 ? 's' : ''} ${unfillable.join(', ')}, `
      + 'which no unified result fills: map them with the connection\'s pipelineMetadataKeys (subscriptions, meta), '
      + 'or report the product record to the service; nothing was created');
  }
}

/** The unified call's role-propagation retry: a 403 while a role is younger than this is retried. */
export const ROLE_PROPAGATION_MS = 5 * 60_000;

/**
 * Runs a unified POST or PATCH; a 403 is retried (every 20 s) only while one of the roles is younger than
 * `ROLE_PROPAGATION_MS` (IAM propagation), within the deadline.
 */
async function withRolePropagation<T>(rt: Runtime, d: PipelineDesired, call: () => Promise<T>): Promise<T> {
  for (;;) {
    try {
      return await call();
    } catch (e) {
      if (!isStatus(e, 403)) throw e;
      const youngest = await youngestRoleCreation(rt, d);
      const until = youngest === undefined ? 0 : youngest + ROLE_PROPAGATION_MS;
      if (Date.now() >= until || Date.now() + 20_000 > rt.deadline) throw e;
      log({ msg: 'the service could not assume a role that was created minutes ago (IAM propagation): retrying in 20 s', until: new Date(until).toISOString() });
      await rt.sleep(20_000);
    }
  }
}

async function youngestRoleCreation(rt: Runtime, d: PipelineDesired): Promise<number | undefined> {
  let youngest: number | undefined;
  for (const arn of [d.roleArn, d.ebRoleArn]) {
    if (!arn) continue;
    const t = await rt.roleCreatedAt(arn).catch((e) => {
      log({ level: 'WARNING', msg: 'could not read the role creation time', roleArn: arn, error: messageOf(e) });
      return undefined;
    });
    if (t !== undefined && (youngest === undefined || t > youngest)) youngest = t;
  }
  return youngest;
}

async function create(event: CfnEvent, rt: Runtime, d: PipelineDesired): Promise<OnEventResult> {
  await preflightRoles(rt, d);
  if (d.adoptId !== undefined) return adopt(event, rt, d, d.adoptId);
  const key = resourceKey(event);
  const recs = await rt.journal.records<PipelineDoc>(key);
  // The latest unfinished record of this identity (an earlier delivery, a failed deploy, a killed runner);
  // a replacement's old record (another identity) is never taken.
  const others = (r: PipelineRecord): boolean => event.PhysicalResourceId === undefined || r.physicalId !== event.PhysicalResourceId;
  let rec = recs.filter((r) => r.doc.identity === d.remoteIdentityId && !DONE.has(r.state) && others(r))
    .sort((a, b) => (a.id < b.id ? 1 : -1))[0];
  if (rec) log({ msg: 'found an earlier attempt of this resource in the journal', record: rec.id, state: rec.state, subscriptionId: rec.doc.subscriptionId });
  if (rec && (rec.state === 'active' || rec.state === 'updating')) {
    return converge(rt, rec, d, event);
  }
  await precheckParameters(rt);
  if (!rec) {
    await claimIdentity(rt, d.remoteIdentityId, key);
    rec = await rt.journal.create<PipelineDoc>(key, 'posting', {
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
 * Adopts an existing unified pipeline through its product-107 subscription: no creating call. The subscription must
 * exist and be active or paused (a read showing another product or identity refuses it); the identity and the
 * subscription are claimed for the resource (refused, naming the owner, when another resource manages either).
 * No read of the service shows a pipeline's types, roles, region or its result (the upstream subscriptions and
 * `meta` that later updates, deletes and the attributes rely on), so the pipeline is reconciled with the unified
 * PATCH (full body, idempotent) exactly as an Update of an unconfirmed record: its result is stored in the
 * subscription and the journal, whose record then has a Create's shape.
 */
async function adopt(event: CfnEvent, rt: Runtime, d: PipelineDesired, id: string): Promise<OnEventResult> {
  const start = await startAdoption<PipelineDoc>(event, rt, 'NotificationPipeline', id, isNumericId, DONE);
  const key = start.key;
  let rec = start.rec;
  const sub = start.sub;
  if (rec && (rec.state === 'active' || rec.state === 'updating')) return converge(rt, rec, d, event);
  const wrong: string[] = [];
  if (contradicts(sub.product, PRODUCT)) wrong.push(`is a product-${sub.product} subscription, not a unified pipeline's (product ${PRODUCT})`);
  if (contradicts(sub.remote_identity, d.remoteIdentityId)) wrong.push(`belongs to remote identity ${sub.remote_identity} (declared ${d.remoteIdentityId})`);
  if (wrong.length > 0) throw new HandlerError(`NotificationPipeline: existingSubscriptionId ${id} ${wrong.join(' and ')}; nothing was changed`);
  await claimIdentity(rt, d.remoteIdentityId, key, id);
  await claimForAdoption(rt, 'sub', id, key, 'subscription');
  const doc: PipelineDoc = {
    identity: d.remoteIdentityId,
    selection: selectionOf(d),
    subscriptionId: id,
    adopted: true,
    removalPolicy: d.removalPolicy ?? 'retain',
    // What a read shows is what the service has (vendor reads); otherwise the declared name / storage are sent.
    ...(typeof sub.name === 'string' ? { name: sub.name } : {}),
    ...(sub.storage_group !== undefined && sub.storage_group !== null ? { storageGroupId: Number(sub.storage_group) } : {}),
  };
  // `updating` without a confirmed selection: converge sends the unified PATCH (no read shows the selection).
  rec = rec ? await rt.journal.save(rec, 'updating', doc) : await rt.journal.create<PipelineDoc>(key, 'updating', doc, id);
  log({ msg: 'adopting an existing notification pipeline', subscriptionId: id, remoteIdentityId: d.remoteIdentityId });
  try {
    return await converge(rt, rec, d, event);
  } catch (e) {
    // A failed adoption hands the pipeline back (the provider framework ignores the rollback Delete of a failed Create).
    await release(rt, (await rt.journal.records<PipelineDoc>(key)).find((r) => r.id === rec!.id));
    throw e;
  }
}

/**
 * Releases a pipeline record (a Delete with the `retain` policy, a failed adoption): the pipeline and its
 * subscription are kept in the service and the claims are handed back. What an adoption's unified PATCH changed
 * cannot be restored (no read shows the selection before it); that is logged and kept in the record.
 */
async function release(rt: Runtime, rec: PipelineRecord | undefined): Promise<void> {
  if (!rec || DONE.has(rec.state)) return;
  const unrestored = rec.doc.adopted === true && rec.doc.adoptionPatched === true
    ? ['notificationTypes, roles and region as the adoption\'s unified PATCH set them (no read shows what they were before)'] : [];
  log({
    level: unrestored.length > 0 ? 'WARNING' : 'INFO',
    msg: 'released the notification pipeline: it is kept in the service and no longer managed by this resource',
    subscriptionId: rec.doc.subscriptionId,
    ...(unrestored.length > 0 ? { unrestored } : {}),
  });
  await rt.journal.save(rec, 'released', { ...rec.doc, ...(unrestored.length > 0 ? { unrestored } : {}) });
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
 * One pipeline per remote identity: the identity is claimed in the journal before the first unified POST. A claim
 * held by another resource with an unfinished record refuses the create (the service would let the second pipeline
 * take over the first one's upstream subscriptions); a claim whose owner's pipeline is gone is taken over.
 */
async function claimIdentity(rt: Runtime, identity: string, key: string, adopting?: string): Promise<void> {
  for (let round = 0; round < 3; round++) {
    const owner = await rt.journal.claim('identity', identity, key);
    if (owner === key) return;
    const records = await rt.journal.records<PipelineDoc>(owner);
    // A released pipeline still runs in the service: only its adoption may take the identity over.
    const kept = records.find((r) => String(r.doc.identity) === identity && r.state === 'released' && r.doc.subscriptionId !== adopting);
    const keptStatus = kept?.doc.subscriptionId !== undefined ? await statusOrGone(rt, kept.doc.subscriptionId) : undefined;
    if (kept && keptStatus !== undefined && keptStatus !== 'invalid') {
      throw new HandlerError(`remote identity ${identity} has a notification pipeline that ${owner} released (removal policy retain; subscription `
        + `${kept.doc.subscriptionId}); it still runs in the service, and a second pipeline would take over its upstream subscriptions: adopt it `
        + `with existingSubscriptionId ${kept.doc.subscriptionId}, or remove it in the service first; nothing was changed`);
    }
    const live = records.filter((r) => String(r.doc.identity) === identity && !DONE.has(r.state));
    if (live.length > 0) {
      const r = live[0];
      throw new HandlerError(`remote identity ${identity} already has a notification pipeline, managed by ${owner} (journal record ${r.id}, `
        + `${r.state}${r.doc.subscriptionId ? `, subscription ${r.doc.subscriptionId}` : ''}); an identity has one pipeline, and a second `
        + 'one would take over its upstream subscriptions: remove that resource first, or declare the notification types there; nothing was changed');
    }
    if (await rt.journal.transfer('identity', identity, owner, key)) {
      log({ msg: 'took over the identity from a removed pipeline', remoteIdentityId: identity, previousOwner: owner });
      return;
    }
  }
  throw new HandlerError(`remote identity ${identity} is being claimed by another resource at the same time; deploy again`);
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
      (s) => !contradicts(s.remote_identity, rec.doc.identity) && !contradicts(s.product, PRODUCT) && !contradicts(s.name, rec.doc.name));
  } catch (e) {
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

/**
 * Brings an existing pipeline to the desired state: a unified PATCH when the selection differs from what the service
 * confirmed last, or when an earlier PATCH's outcome is not known (`updating`: this is also what makes an
 * UPDATE_ROLLBACK restore the previous selection); then the subscription's stored metadata and attributes.
 */
async function converge(rt: Runtime, rec: PipelineRecord, d: PipelineDesired, event: CfnEvent): Promise<OnEventResult> {
  const id = rec.doc.subscriptionId!;
  const sel = selectionOf(d);
  const changes: { name?: string; storage_group?: number } = {};
  if (d.name !== undefined && d.name !== (rec.doc.name ?? '')) changes.name = d.name;
  if (d.storageGroupId !== undefined && d.storageGroupId !== rec.doc.storageGroupId) changes.storage_group = d.storageGroupId;
  const dirty = rec.state === 'updating' || !sameSelection(rec.doc.applied, sel);
  if (d.removalPolicy !== undefined && d.removalPolicy !== rec.doc.removalPolicy) {
    rec = await rt.journal.save(rec, rec.state, { ...rec.doc, removalPolicy: d.removalPolicy });
  }
  if (!dirty) {
    if (Object.keys(changes).length > 0) {
      await rt.client.subscriptions.update(id, changes);
      rec = await rt.journal.save(rec, 'active', { ...rec.doc, name: d.name ?? rec.doc.name, storageGroupId: d.storageGroupId ?? rec.doc.storageGroupId });
    }
    return dataOf(rec);
  }
  await preflightRoles(rt, d);
  if (rec.state === 'updating') {
    log({
      msg: 'an earlier update of this pipeline has no confirmed outcome: storing the last confirmed result, then applying the desired selection',
      subscriptionId: id,
      event: event.RequestType,
    });
    // The service's PATCH and DELETE read the stored metadata: it must describe what the service has now (the
    // journal's last confirmed result) before anything else; the PATCH is idempotent.
    if (rec.doc.result) {
      await rt.client.subscriptions.update(id, { product_parameters: await parametersOf(rt, rec.doc.result as UnifiedPipelineResult) });
    }
  }
  rec = await rt.journal.save(rec, 'updating', { ...rec.doc, selection: sel, ...(rec.doc.adopted ? { adoptionPatched: true } : {}) });
  let result: UnifiedPipelineResult;
  try {
    result = await withRolePropagation(rt, d, () => rt.client.notifications.update(rec.doc.identity, id, body(d)));
  } catch (e) {
    throw pipelineError(e, d, 'update');
  }
  const stored = { subscriptions: result.subscriptions ?? {}, failed: result.failed ?? {}, meta: result.meta ?? {} };
  // What the service has now, even if storing it below fails (the record stays `updating`: the next event re-applies).
  rec = await rt.journal.save(rec, 'updating', { ...rec.doc, applied: sel, result: stored });
  const params = await parametersOf(rt, result);
  await rt.client.subscriptions.update(id, { ...changes, product_parameters: params });
  rec = await rt.journal.save(rec, 'active', { ...rec.doc, name: d.name ?? rec.doc.name, storageGroupId: d.storageGroupId ?? rec.doc.storageGroupId });
  const failedTypes = Object.keys(stored.failed);
  if (failedTypes.length > 0 && d.partialFailure === 'FAIL') {
    throw new HandlerError(`notification types failed: ${failedReasons(stored.failed)} (PartialFailure FAIL); `
      + 'the rollback restores the previous types: fix the cause, drop those types, or set partialFailure ALLOW');
  }
  return dataOf(rec);
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
  if (d.adoptId !== undefined && d.adoptId !== id) {
    log({ msg: 'replacement: another existing pipeline is adopted', old: id, adopt: d.adoptId });
    return create(event, rt, d);
  }
  const key = resourceKey(event);
  let rec = (await rt.journal.records<PipelineDoc>(key)).find((r) => r.physicalId === id && !DONE.has(r.state));
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
    rec = await rt.journal.create<PipelineDoc>(key, 'updating', {
      identity: d.remoteIdentityId, selection: selectionOf(prev), applied: selectionOf(prev), subscriptionId: id,
    }, id);
    await rt.journal.claim('sub', id, key);
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
    return { PhysicalResourceId: id };
  }
  const rec = recs.find((r) => r.physicalId === id && !DONE.has(r.state)) ?? recs.find((r) => r.physicalId === id);
  if (removalPolicyOf(event.ResourceProperties, rec?.doc) === 'retain') {
    await release(rt, rec);
    return { PhysicalResourceId: id };
  }
  const status = await statusOrGone(rt, id);
  if (status === undefined || status === 'invalid') {
    log({ msg: 'nothing to delete', physicalResourceId: id, status });
    if (rec && !DONE.has(rec.state)) await rt.journal.save(rec, 'deleted', rec.doc);
    return { PhysicalResourceId: id };
  }
  const identity = rec?.doc.identity ?? new Props(event.ResourceProperties, 'NotificationPipeline').optString('RemoteIdentityId') ?? '';
  const r = rec ?? await rt.journal.create<PipelineDoc>(key, 'deleting', {
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
/** Handles `Custom::DpiNotificationPipeline`. */
export async function notificationPipeline(event: CfnEvent, rt: Runtime): Promise<OnEventResult> {
  if (event.RequestType === 'Delete') return remove(event, rt);
  const d = pipelineDesired(event.ResourceProperties);
  return event.RequestType === 'Create' ? create(event, rt, d) : update(event, rt, d);
}
