/** `Custom::DpiLegacyNotificationPipeline`: an adopted legacy notification pipeline (a product-86 subscription). */
import type { ClosedState, KindDefinition, WireBase, WireSpec } from '../types';

/** Wire properties of `Custom::DpiLegacyNotificationPipeline` (product 86, adopt only). Physical ID = the subscription ID. */
export interface LegacyNotificationPipelineWire extends WireBase {
  readonly SubscriptionId: string;
  readonly RemoteIdentityId: string;
  readonly QueueArn: string;
  readonly NotificationTypes: string[];
  /**
   * `true` | `false`. When `true`, the resource's Create/Update DELETEs the legacy
   * pipeline (so a unified pipeline that depends on it can be created in the
   * same deploy); Delete of a retired resource does nothing remotely.
   */
  readonly Retired: string;
  /**
   * `retain` | `destroy`: what the handler does on Delete (the constructs always render the resource with
   * DeletionPolicy and UpdateReplacePolicy `Delete`, so CloudFormation always sends it). `retain` releases the
   * record (journal state `released`, no call that ends it); `destroy` ends it. Absent in templates of older
   * versions: `destroy`.
   */
  readonly RemovalPolicy?: string;
}

/** Journal states: `active`, `updating` (a re-point is being applied), `retired` (deleted for a unified pipeline), closed. */
export type LegacyNotificationPipelineState = 'active' | 'updating' | 'retired' | ClosedState;

/** How the handler reads the properties. */
export const LEGACY_NOTIFICATION_PIPELINE_FIELDS = {
  SubscriptionId: 'string',
  RemoteIdentityId: 'string',
  QueueArn: 'string',
  NotificationTypes: 'list',
  Retired: 'bool',
  RemovalPolicy: 'string?',
} as const satisfies WireSpec<LegacyNotificationPipelineWire>;

export const LegacyNotificationPipelineKind: KindDefinition<
  'Custom::DpiLegacyNotificationPipeline', LegacyNotificationPipelineWire, LegacyNotificationPipelineState> = {
  type: 'Custom::DpiLegacyNotificationPipeline',
  shortName: 'LegacyNotificationPipeline',
  description: 'legacy notification pipeline (product 86, adopted)',
  record: 'legacy pipeline subscription',
  fields: LEGACY_NOTIFICATION_PIPELINE_FIELDS,
  attributes: ['SubscriptionId', 'Retired'],
  states: ['active', 'updating', 'retired', 'deleted', 'abandoned', 'released'],
  unconfirmedStates: [],
  undecidedStates: [],
  removalPolicy: true,
  claim: 'sub',
  polled: false,
  alwaysAdopted: true,
  readsParameters: false,
  fixOrder: 3,
};
