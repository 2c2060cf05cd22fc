/**
 * `Custom::DpiNotificationPipeline`: the desired state, the journal document, the unified call's helpers, `converge`
 * (the unified PATCH that brings an existing pipeline to the desired selection), the identity claim and the release
 * of a pipeline the resource no longer manages. The events are handled in notification-pipeline.ts.
 */
import type { PipelineDesired, Selection } from './handler-types';
import { UnifiedPipelineRequest, UnifiedPipelineResult } from '../../../client';
import { NotificationPipelineAttributes as A } from '../../../contract';
import { declaredRemovalPolicy, OwnsSubscription, recordedRemovalPolicy, RELEASED_OR_DONE, statusOrGone } from '../../../handler/common';
import { fitData } from '../../../handler/data';
import { HandlerError, isStatus, messageOf, statusOf } from '../../../handler/errors';
import { JournalRecord } from '../../../handler/journal';
import { log } from '../../../handler/log';
import { isResultMetaField, metaString, SERVICE_FILLED_KEYS, storedParameters } from '../../../handler/metadata';
import { pipelineConvergence, sameSelectionOf } from '../../../handler/plan-decisions';
import { accountOfArn, readProps } from '../../../handler/props';
import { Runtime } from '../../../handler/runtime';
import { CfnEvent, OnEventResult } from '../../../handler/types';
import { NOTIFICATION_PIPELINE_FIELDS, NotificationPipelineKind } from '../wire';

export const PRODUCT = 107;

export type { PipelineDesired, Selection } from './handler-types';

/** Parses the properties of `Custom::DpiNotificationPipeline`. */
export function pipelineDesired(raw: Record<string, unknown> | undefined): PipelineDesired {
  const w = readProps(raw, NOTIFICATION_PIPELINE_FIELDS, NotificationPipelineKind.shortName);
  const pf = (w.PartialFailure ?? 'FAIL').toUpperCase();
  if (pf !== 'FAIL' && pf !== 'ALLOW') throw new HandlerError(`NotificationPipeline: PartialFailure must be FAIL or ALLOW, got ${pf}`);
  const types = w.NotificationTypes;
  if (types.length === 0) throw new HandlerError('NotificationPipeline: NotificationTypes must name at least one notification type');
  return {
    remoteIdentityId: w.RemoteIdentityId,
    accountType: w.AccountType,
    types,
    roleArn: w.RoleArn,
    ebRoleArn: w.EbToFhRoleArn,
    region: w.DeploymentRegion,
    storageGroupId: w.StorageGroupId,
    name: w.Name,
    partialFailure: pf,
    adoptId: w.AdoptId,
    rebuildOnAdoption: w.RebuildOnAdoption === 'true',
    removalPolicy: declaredRemovalPolicy(raw),
  };
}

export function body(d: PipelineDesired): UnifiedPipelineRequest {
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

export function failedReasons(failed: Record<string, unknown>): string {
  return Object.entries(failed).map(([t, f]) => {
    const o = f as { message?: unknown; code?: unknown } | string;
    const m = typeof o === 'string' ? o : typeof o?.message === 'string' ? o.message : JSON.stringify(o);
    return `${t}: ${m}`;
  }).join('; ');
}

/** The journal document of a notification pipeline. */
export interface PipelineDoc extends OwnsSubscription {
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
  /** Released while the stored result may not describe the pipeline (an update's outcome unconfirmed or not stored). */
  staleMetadata?: boolean;
}

/**
 * States of a pipeline record: `posting` (unified POST sent, outcome unknown), `posted` (result known, no
 * subscription yet), `recording` (subscription POST sent), `active`, `updating` (unified PATCH sent or its result
 * not stored: the service may differ from `applied`), `deleting`, `deleted`, `abandoned` (nothing was made).
 */
export type PipelineRecord = JournalRecord<PipelineDoc>;
export const DONE = RELEASED_OR_DONE;

export function selectionOf(d: PipelineDesired): Selection {
  return { types: d.types, roleArn: d.roleArn, ebRoleArn: d.ebRoleArn, region: d.region, accountType: d.accountType };
}

export function sameSelection(a: Selection | undefined, b: Selection): boolean {
  return sameSelectionOf(a, b);
}

/**
 * The pipeline's key prefix as the `Prefix` attribute gives it: ending with `/`. The vendor's documentation shows the
 * service's `s3_notification_prefix` with it (`0123456789abcdef/`); when an answer lacks it the library adds it, so that
 * `grantReadNotifications`' `<prefix>*` never covers another pipeline whose prefix merely starts with the same
 * characters (`abc` would also cover `abcd/...`). A prefix without the delimiter then denies reads rather than
 * widening them.
 */
export function keyPrefix(servicePrefix: string): string {
  return servicePrefix === '' || servicePrefix.endsWith('/') ? servicePrefix : `${servicePrefix}/`;
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
    [A.PREFIX]: keyPrefix(str(meta.s3_notification_prefix)),
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
export function dataOf(rec: PipelineRecord): OnEventResult {
  const id = rec.doc.subscriptionId ?? rec.physicalId ?? '';
  const r = rec.doc.result ?? { subscriptions: {}, failed: {}, meta: {} };
  const types = (rec.doc.applied ?? rec.doc.selection).types;
  return { PhysicalResourceId: id, Data: pipelineData(id, types, r.subscriptions, Object.keys(r.failed ?? {}), r.meta) };
}

/** The product parameters that store a result, under product 107's `required_meta_fields` and the default mapping. */
export async function parametersOf(rt: Runtime, result: UnifiedPipelineResult): Promise<Record<string, string>> {
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
export async function precheckParameters(rt: Runtime): Promise<void> {
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
export async function withRolePropagation<T>(rt: Runtime, d: PipelineDesired, call: () => Promise<T>): Promise<T> {
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

export async function youngestRoleCreation(rt: Runtime, d: PipelineDesired): Promise<number | undefined> {
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

/**
 * One pipeline per remote identity: the identity is claimed in the journal before the first unified POST. A claim
 * held by another resource with an unfinished record refuses the create (the service would let the second pipeline
 * take over the first one's upstream subscriptions); a claim whose owner's pipeline is gone is taken over.
 */
export async function claimIdentity(rt: Runtime, identity: string, key: string, adopting?: string): Promise<void> {
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
 * Releases a pipeline record (a Delete with the `retain` policy, a failed adoption): the pipeline and its
 * subscription are kept in the service and the claims are handed back. What an adoption's unified PATCH changed
 * cannot be restored (no read shows the selection before it); that is logged and kept in the record.
 */
export async function release(rt: Runtime, rec: PipelineRecord | undefined): Promise<void> {
  if (!rec || DONE.has(rec.state)) return;
  let stale = false;
  if (rec.state === 'updating') {
    // The service's PATCH and DELETE (and whoever adopts the pipeline next) read the stored result: the last one the
    // service confirmed is stored first; an update whose outcome is unknown leaves it stale, which the record says.
    stale = rec.doc.result === undefined || rec.doc.applied === undefined || !sameSelection(rec.doc.applied, rec.doc.selection);
    if (!stale) {
      try {
        const params = await parametersOf(rt, rec.doc.result as UnifiedPipelineResult);
        await rt.client.subscriptions.update(rec.doc.subscriptionId!, { product_parameters: params });
      } catch (e) {
        log({ level: 'WARNING', msg: 'the pipeline\'s last confirmed result could not be stored before its release', error: messageOf(e) });
        stale = true;
      }
    }
  }
  const unrestored = [
    ...(rec.doc.adopted === true && rec.doc.adoptionPatched === true
      ? ['notificationTypes, roles and region as the adoption\'s unified PATCH set them (no read shows what they were before)'] : []),
    ...(stale ? ['the stored result: an update of the pipeline has no confirmed, stored outcome (the stored metadata may not describe it)'] : []),
  ];
  log({
    level: unrestored.length > 0 ? 'WARNING' : 'INFO',
    msg: 'released the notification pipeline: it is kept in the service and no longer managed by this resource',
    subscriptionId: rec.doc.subscriptionId,
    ...(unrestored.length > 0 ? { unrestored } : {}),
  });
  await rt.journal.save(rec, 'released', { ...rec.doc, ...(unrestored.length > 0 ? { unrestored } : {}), ...(stale ? { staleMetadata: true } : {}) });
}

/**
 * Brings an existing pipeline to the desired state: a unified PATCH when the selection differs from what the service
 * confirmed last, or when an earlier PATCH's outcome is not known (`updating`: this is also what makes an
 * UPDATE_ROLLBACK restore the previous selection); then the subscription's stored metadata and attributes.
 */
export async function converge(rt: Runtime, rec: PipelineRecord, d: PipelineDesired, event: CfnEvent): Promise<OnEventResult> {
  const id = rec.doc.subscriptionId!;
  const sel = selectionOf(d);
  const { unified: dirty, changes } = pipelineConvergence(rec.doc.applied, rec.doc, d, sel, rec.state === 'updating');
  const policy = recordedRemovalPolicy(d.removalPolicy, d.adoptId, rec.doc);
  if (policy !== undefined && policy !== rec.doc.removalPolicy) {
    rec = await rt.journal.save(rec, rec.state, { ...rec.doc, removalPolicy: policy });
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
