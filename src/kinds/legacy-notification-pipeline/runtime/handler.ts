import { Subscription } from '../../../client';
import {
  claimForAdoption, contradicts, declaredRemovalPolicy, deleteProven, RELEASED_OR_DONE, removalPolicyOf, RemovalPolicyValue, statusOrGone,
} from '../../../handler/common';
import { HandlerError, isStatus, messageOf } from '../../../handler/errors';
import { JournalRecord, resourceKey } from '../../../handler/journal';
import { log } from '../../../handler/log';
import { storedParameters } from '../../../handler/metadata';
import { legacyRepoints, legacyRevival } from '../../../handler/plan-decisions';
import { isNumericId, Props, readProps } from '../../../handler/props';
import { Runtime } from '../../../handler/runtime';
import { CfnEvent, OnEventResult } from '../../../handler/types';
import { LEGACY_NOTIFICATION_PIPELINE_FIELDS, LegacyNotificationPipelineKind, LegacyNotificationPipelineState } from '../wire';

const PRODUCT = 86;

export interface LegacyDesired {
  subscriptionId: string;
  remoteIdentityId: string;
  queueArn: string;
  types: string[];
  retired: boolean;
  removalPolicy?: RemovalPolicyValue;
}

export function legacyDesiredOf(raw: Record<string, unknown> | undefined): LegacyDesired {
  const w = readProps(raw, LEGACY_NOTIFICATION_PIPELINE_FIELDS, LegacyNotificationPipelineKind.shortName);
  return {
    subscriptionId: w.SubscriptionId,
    remoteIdentityId: w.RemoteIdentityId,
    queueArn: w.QueueArn,
    types: w.NotificationTypes,
    retired: w.Retired,
    removalPolicy: declaredRemovalPolicy(raw),
  };
}

/** The journal document of an adopted legacy pipeline. */
interface LegacyDoc {
  identity: string;
  /** The queue and types the service has (as declared when adopted, then as confirmed by each PATCH). */
  applied: { queueArn: string; types: string[] };
  /** The upstream result of the last PATCH. */
  result?: { subscriptions: Record<string, string>; destinationId?: string };
  /** Always true: a legacy pipeline existed before the stack (it can only be adopted). */
  adopted?: boolean;
  removalPolicy?: RemovalPolicyValue;
  /** The queue and types of a PATCH sent without a recorded outcome (state `updating`). */
  pending?: { queueArn: string; types: string[] };
}

type LegacyRecord = JournalRecord<LegacyDoc>;

/** Checks the adopted subscription: it must exist and belong to the account (a product it shows must be 86). Returns its status. */
async function adopt(rt: Runtime, d: LegacyDesired, checkProduct: boolean): Promise<string> {
  if (!isNumericId(d.subscriptionId)) throw new HandlerError(`LegacyNotificationPipeline: SubscriptionId ${d.subscriptionId} is not a subscription ID`);
  let sub: Subscription;
  try {
    sub = await rt.client.subscriptions.get(d.subscriptionId);
  } catch (e) {
    if (isStatus(e, 404)) {
      throw new HandlerError(`legacy subscription ${d.subscriptionId} does not exist; a LegacyNotificationPipeline can only adopt an existing product-86 subscription`);
    }
    if (isStatus(e, 403)) {
      throw new HandlerError(`legacy subscription ${d.subscriptionId} belongs to another account (${messageOf(e)}); use the connection of the account that owns it`);
    }
    throw e;
  }
  // The product is not shown by reads; the listing filtered by product (a query the spec documents) tells.
  // Checked once, when the journal first records the adoption.
  const legacy = checkProduct ? await rt.client.subscriptions.list({ product: PRODUCT }) : [sub];
  if (contradicts(sub.product, PRODUCT) || !legacy.some((s) => s.id === sub.id)) {
    throw new HandlerError(`subscription ${sub.id} is not a legacy notification pipeline (product 86)`
      + `${sub.product !== undefined ? ` but a product ${String(sub.product)} subscription` : ''}; LegacyNotificationPipeline adopts product-86 subscriptions only`);
  }
  return sub.status;
}

async function retire(rt: Runtime, id: string, status: string | undefined, ri: string): Promise<void> {
  if (status === undefined || status === 'invalid') {
    log({ msg: 'legacy pipeline already retired', subscriptionId: id });
    return;
  }
  try {
    await rt.client.legacyNotifications.delete(ri, id);
  } catch (e) {
    if (!isStatus(e, 404)) throw e;
  }
  await rt.client.subscriptions.update(id, { status: 'invalid' });
}

/**
 * The legacy PATCH (the service replaces the pipeline) and then the subscription's stored parameters, under
 * product 86's `required_meta_fields` and the default keys (`subscriptions`, `destination_id`): two calls.
 */
async function repoint(rt: Runtime, rec: LegacyRecord, d: LegacyDesired): Promise<LegacyRecord> {
  // Every read and mapping that can fail comes before the PATCH, which deletes and re-creates the upstream pipeline.
  const product = await rt.product(PRODUCT);
  const required = product.required_meta_fields ?? [];
  const plan = (subscriptions: string, destination: string): Record<string, string> => storedParameters(PRODUCT, required, {
    parts: {
      [rt.metadataKeys.subscriptions]: subscriptions, destination_id: destination, queue_arn: d.queueArn, notification_types: JSON.stringify(d.types),
    },
    defaults: { [rt.metadataKeys.subscriptions]: subscriptions, ...(destination ? { destination_id: destination } : {}) },
  });
  plan('{}', 'destination');
  const intent = await rt.journal.save(rec, 'updating', { ...rec.doc, pending: { queueArn: d.queueArn, types: d.types } });
  let result;
  try {
    result = await rt.client.legacyNotifications.update(d.remoteIdentityId, d.subscriptionId, { queue_arn: d.queueArn, notification_types: d.types });
  } catch (e) {
    if (isStatus(e, 400, 403)) {
      throw new HandlerError(`the service rejected the legacy pipeline update of subscription ${d.subscriptionId}: ${messageOf(e)}; `
        + 'check the queue ARN and that every type is valid for the identity\'s account type');
    }
    throw e;
  }
  const destination = result.destination_id ?? '';
  // What the service has now is recorded before anything else can fail.
  const next = await rt.journal.save(intent, 'updating', {
    ...intent.doc,
    applied: { queueArn: d.queueArn, types: d.types },
    result: { subscriptions: result.subscriptions ?? {}, destinationId: destination },
  });
  await rt.client.subscriptions.update(d.subscriptionId, { product_parameters: plan(JSON.stringify(result.subscriptions ?? {}), destination) });
  return rt.journal.save(next, 'active', { ...next.doc, pending: undefined });
}

async function apply(event: CfnEvent, rt: Runtime, d: LegacyDesired, old: LegacyDesired | undefined): Promise<OnEventResult> {
  const key = resourceKey(event);
  let rec = (await rt.journal.records<LegacyDoc>(key)).find((r) => r.physicalId === d.subscriptionId && !RELEASED_OR_DONE.has(r.state));
  const status = await adopt(rt, d, rec === undefined);
  const data = { SubscriptionId: d.subscriptionId };
  if (!rec) {
    // Adoption changes nothing on the service: the declared queue and types are taken as what it has.
    const was = old && old.subscriptionId === d.subscriptionId ? old : d;
    const applied = { queueArn: was.queueArn, types: was.types };
    // Refused, naming the owner, while another resource manages it (a second adopter could retire or re-point it).
    await claimForAdoption(rt, 'sub', d.subscriptionId, key, 'legacy subscription');
    rec = await rt.journal.create<LegacyDoc, LegacyNotificationPipelineState>(key, 'active', {
      identity: d.remoteIdentityId, applied, adopted: true, removalPolicy: d.removalPolicy ?? 'retain',
    }, d.subscriptionId);
  }
  if (d.retired) {
    await retire(rt, d.subscriptionId, status, d.remoteIdentityId);
    await rt.journal.save(rec, 'retired', rec.doc);
    return { PhysicalResourceId: d.subscriptionId, Data: { ...data, Retired: 'true' } };
  }
  const revival = legacyRevival(status, rec.state === 'retired' || old?.retired === true);
  if (revival === 'refuse') {
    throw new HandlerError(`legacy subscription ${d.subscriptionId} is invalid (deleted); it cannot be adopted: remove the LegacyNotificationPipeline from the app`);
  }
  if (revival === 'revive') {
    // A rollback (or an explicit un-retire) restores the retired pipeline.
    await rt.client.subscriptions.update(d.subscriptionId, { status: 'active' });
  }
  const revived = revival === 'revive';
  if (d.removalPolicy !== undefined && d.removalPolicy !== rec.doc.removalPolicy) {
    rec = await rt.journal.save(rec, rec.state, { ...rec.doc, removalPolicy: d.removalPolicy });
  }
  // `updating`: an earlier PATCH has no recorded outcome; the service may be on its queue, so it is sent again.
  if (legacyRepoints(rec.doc.applied, d, revived, rec.state === 'updating')) {
    await repoint(rt, rec, d);
  } else {
    log({ msg: 'legacy pipeline unchanged', subscriptionId: d.subscriptionId });
    if (rec.state !== 'active') await rt.journal.save(rec, 'active', rec.doc);
  }
  return { PhysicalResourceId: d.subscriptionId, Data: { ...data, Retired: 'false' } };
}

async function remove(event: CfnEvent, rt: Runtime): Promise<OnEventResult> {
  const id = event.PhysicalResourceId ?? '';
  if (!isNumericId(id)) return { PhysicalResourceId: id };
  const rec = (await rt.journal.records<LegacyDoc>(resourceKey(event))).find((r) => r.physicalId === id && !RELEASED_OR_DONE.has(r.state));
  // A legacy pipeline always existed before the stack: it is retired only under an explicit `destroy` policy.
  if (removalPolicyOf(event.ResourceProperties, { adopted: true, ...rec?.doc }, false) === 'retain') {
    log({ msg: 'released the legacy pipeline: it is kept in the service and no longer managed by this resource', subscriptionId: id });
    if (rec) await rt.journal.save(rec, 'released', rec.doc);
    return { PhysicalResourceId: id };
  }
  if (!rec && !await deleteProven(rt, 'sub', id, resourceKey(event))) return { PhysicalResourceId: id };
  const status = await statusOrGone(rt, id);
  const ri = rec?.doc.identity ?? new Props(event.ResourceProperties, 'LegacyNotificationPipeline').optString('RemoteIdentityId') ?? '';
  await retire(rt, id, status, ri);
  if (rec) await rt.journal.save(rec, 'deleted', rec.doc);
  return { PhysicalResourceId: id };
}

/** Handles `Custom::DpiLegacyNotificationPipeline` (adopt only). */
export async function legacyNotificationPipeline(event: CfnEvent, rt: Runtime): Promise<OnEventResult> {
  if (event.RequestType === 'Delete') return remove(event, rt);
  const d = legacyDesiredOf(event.ResourceProperties);
  const old = event.RequestType === 'Update' ? legacyDesiredOf(event.OldResourceProperties) : undefined;
  return apply(event, rt, d, old);
}
