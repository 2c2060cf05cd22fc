/** The desired and applied state of a subscription (apart, so that the shared decisions can name them). */
import type { RemovalPolicyValue } from '../../../handler/common';

export interface SubscriptionDesired {
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
  /** The declared removal policy (undefined: a template from before the property). */
  removalPolicy?: RemovalPolicyValue;
}

/** What the service confirmed last for the subscription. */
export interface Applied {
  params: Record<string, string>;
  status: 'active' | 'paused';
  name?: string;
  storageGroupId?: number;
  dateStart?: string;
}
