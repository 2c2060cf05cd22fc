/** The desired state and the selection of a notification pipeline (apart, so that the shared decisions can name them). */
import type { RemovalPolicyValue } from '../../../handler/common';

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
  /** An adoption may send the unified PATCH (`RebuildOnAdoption`; see `adoptPipeline`). */
  rebuildOnAdoption: boolean;
  /** The declared removal policy (undefined: a template from before the property). */
  removalPolicy?: RemovalPolicyValue;
}

/** What the service was asked for (the unified body's selection and the identity's account type). */
export interface Selection {
  types: string[];
  roleArn: string;
  ebRoleArn?: string;
  region: string;
  accountType: string;
}
