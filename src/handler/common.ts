import { Subscription, SubscriptionCreateV2 } from '../client';
import { PipelineParameterKeys } from '../contract';
import { isStatus } from './errors';
import { isNumericId } from './props';
import { Runtime } from './runtime';
import { CfnEvent } from './types';

/** The idempotency marker of a resource: `<StackId>/<LogicalResourceId>`. */
export function markerOf(event: CfnEvent): string {
  return `${event.StackId}/${event.LogicalResourceId}`;
}

/** A subscription of `product` carrying the marker of this resource and not invalid (a previous delivery's). */
export async function findByMarker(rt: Runtime, product: number, marker: string,
  also: (s: Subscription) => boolean = () => true): Promise<Subscription | undefined> {
  const subs = await rt.client.subscriptions.list({ product });
  return subs.find((s) => s.product_parameters?.[PipelineParameterKeys.RESOURCE_MARKER] === marker && s.status !== 'invalid'
    && (s.product === undefined || Number(s.product) === product) && also(s));
}

/**
 * Reads a subscription for Delete: undefined when the physical ID is a placeholder, or the service
 * does not know it (404) or it belongs to another account (403).
 */
export async function readForDelete(rt: Runtime, physicalId: string | undefined): Promise<Subscription | undefined> {
  if (!isNumericId(physicalId)) return undefined;
  try {
    return await rt.client.subscriptions.get(physicalId);
  } catch (e) {
    if (isStatus(e, 404, 403)) return undefined;
    throw e;
  }
}

/** Reads a subscription; undefined on 404. */
export async function readOrUndefined(rt: Runtime, id: string): Promise<Subscription | undefined> {
  try {
    return await rt.client.subscriptions.get(id);
  } catch (e) {
    if (isStatus(e, 404)) return undefined;
    throw e;
  }
}

/** ISO 8601 now without milliseconds. */
export function nowIso(): string {
  return new Date().toISOString().replace(/\.\d{3}Z$/, 'Z');
}

/** The subscription a resource creates; fields left undefined are not sent. */
export interface NewSubscription {
  product: number;
  /** Default: now. */
  dateStart?: string;
  remoteIdentityId?: string;
  storageGroupId?: number;
  name?: string;
  params: Record<string, string>;
}

/** The `POST /v2/sub` attributes of an active subscription of the deploying account and user. */
export async function newSubscriptionAttributes(rt: Runtime, s: NewSubscription): Promise<SubscriptionCreateV2> {
  const { accountId, userId } = await rt.ids();
  return {
    account: accountId,
    user: userId,
    product: s.product,
    status: 'active',
    date_start: s.dateStart ?? nowIso(),
    ...(s.remoteIdentityId !== undefined ? { remote_identity: s.remoteIdentityId } : {}),
    ...(s.storageGroupId !== undefined ? { storage_group: s.storageGroupId } : {}),
    ...(s.name !== undefined ? { name: s.name } : {}),
    product_parameters: s.params,
  };
}
