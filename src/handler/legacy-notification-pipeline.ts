import { Subscription } from '../client';
import { HandlerError, isStatus, messageOf } from './errors';
import { log } from './log';
import { isNumericId, Props, sameSet } from './props';
import { Runtime } from './runtime';
import { CfnEvent, OnEventResult } from './types';

const PRODUCT = 86;

interface LegacyDesired {
  subscriptionId: string;
  remoteIdentityId: string;
  queueArn: string;
  types: string[];
  retired: boolean;
}

function desiredOf(raw: Record<string, unknown> | undefined): LegacyDesired {
  const p = new Props(raw, 'LegacyNotificationPipeline');
  return {
    subscriptionId: p.string('SubscriptionId'),
    remoteIdentityId: p.string('RemoteIdentityId'),
    queueArn: p.string('QueueArn'),
    types: p.list('NotificationTypes'),
    retired: p.bool('Retired'),
  };
}

/** Reads the adopted subscription: it must exist, belong to the account and be a product-86 subscription. */
async function adopt(rt: Runtime, d: LegacyDesired): Promise<Subscription> {
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
  if (Number(sub.product) !== PRODUCT) {
    throw new HandlerError(`subscription ${sub.id} is a product ${String(sub.product)} subscription, not a legacy notification pipeline (product 86)`);
  }
  return sub;
}

async function retire(rt: Runtime, sub: Subscription, ri: string): Promise<void> {
  if (sub.status === 'invalid') {
    log({ msg: 'legacy pipeline already retired', subscriptionId: sub.id });
    return;
  }
  try {
    await rt.client.legacyNotifications.delete(ri, sub.id);
  } catch (e) {
    if (!isStatus(e, 404)) throw e;
  }
  await rt.client.subscriptions.update(sub.id, { status: 'invalid' });
}

async function apply(rt: Runtime, d: LegacyDesired, old: LegacyDesired | undefined): Promise<OnEventResult> {
  const sub = await adopt(rt, d);
  const data = { SubscriptionId: sub.id };
  if (d.retired) {
    await retire(rt, sub, d.remoteIdentityId);
    return { PhysicalResourceId: sub.id, Data: { ...data, Retired: 'true' } };
  }
  let revived = false;
  if (sub.status === 'invalid') {
    if (!old?.retired) {
      throw new HandlerError(`legacy subscription ${sub.id} is invalid (deleted); it cannot be adopted: remove the LegacyNotificationPipeline from the app`);
    }
    // A rollback (or an explicit un-retire) restores the retired pipeline.
    await rt.client.subscriptions.update(sub.id, { status: 'active' });
    revived = true;
  }
  const changed = revived || !old || old.retired || old.queueArn !== d.queueArn || !sameSet(old.types, d.types)
    || old.remoteIdentityId !== d.remoteIdentityId || old.subscriptionId !== d.subscriptionId;
  if (changed) {
    try {
      await rt.client.legacyNotifications.update(d.remoteIdentityId, sub.id, { queue_arn: d.queueArn, notification_types: d.types });
    } catch (e) {
      if (isStatus(e, 400, 403)) {
        throw new HandlerError(`the service rejected the legacy pipeline update of subscription ${sub.id}: ${messageOf(e)}; `
          + 'check the queue ARN and that every type is valid for the identity\'s account type');
      }
      throw e;
    }
  } else {
    log({ msg: 'legacy pipeline unchanged', subscriptionId: sub.id });
  }
  return { PhysicalResourceId: sub.id, Data: { ...data, Retired: 'false' } };
}

async function remove(event: CfnEvent, rt: Runtime): Promise<OnEventResult> {
  const id = event.PhysicalResourceId ?? '';
  if (!isNumericId(id)) return { PhysicalResourceId: id };
  let sub: Subscription;
  try {
    sub = await rt.client.subscriptions.get(id);
  } catch (e) {
    if (isStatus(e, 404, 403)) return { PhysicalResourceId: id };
    throw e;
  }
  if (Number(sub.product) !== PRODUCT || sub.status === 'invalid') return { PhysicalResourceId: id };
  const ri = String(sub.remote_identity ?? sub.product_parameters?.remote_identity_id
    ?? new Props(event.ResourceProperties, 'LegacyNotificationPipeline').optString('RemoteIdentityId') ?? '');
  await retire(rt, sub, ri);
  return { PhysicalResourceId: id };
}

/** Handles `Custom::DpiLegacyNotificationPipeline` (adopt only). */
export async function legacyNotificationPipeline(event: CfnEvent, rt: Runtime): Promise<OnEventResult> {
  if (event.RequestType === 'Delete') return remove(event, rt);
  const d = desiredOf(event.ResourceProperties);
  const old = event.RequestType === 'Update' ? desiredOf(event.OldResourceProperties) : undefined;
  return apply(rt, d, old);
}
