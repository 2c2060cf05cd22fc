/** `Custom::DpiNotificationPipeline`: a unified notification pipeline (a product-107 subscription). */
import { NotificationPipelineAttributes } from '../../contract';
import type { ClosedState, KindDefinition, WireBase, WireSpec } from '../types';

/** Wire properties of `Custom::DpiNotificationPipeline` (product 107). Physical ID = the product-107 subscription ID. */
export interface NotificationPipelineWire extends WireBase {
  readonly RemoteIdentityId: string;
  /** `seller` | `vendor` */
  readonly AccountType: string;
  readonly NotificationTypes: string[];
  readonly RoleArn: string;
  readonly EbToFhRoleArn?: string;
  readonly DeploymentRegion: string;
  readonly StorageGroupId?: string;
  readonly Name?: string;
  /** `FAIL` | `ALLOW` */
  readonly PartialFailure: string;
  /** An existing product-107 subscription (pipeline) to adopt instead of creating one. */
  readonly AdoptId?: string;
  /**
   * `true`: an adoption (`AdoptId`) may send the unified PATCH when the pipeline the service stores differs from the
   * declaration or the reads do not show it (the PATCH disables the pipeline's upstream subscriptions and makes them
   * anew). Absent: such an adoption fails before any change.
   */
  readonly RebuildOnAdoption?: string;
  /**
   * `retain` | `destroy`: what the handler does on Delete (the constructs always render the resource with
   * DeletionPolicy and UpdateReplacePolicy `Delete`, so CloudFormation always sends it). `retain` releases the
   * record (journal state `released`, no call that ends it); `destroy` ends it. Absent in templates of older
   * versions: `destroy`.
   */
  readonly RemovalPolicy?: string;
}

/**
 * Journal states: `posting` (the create call is under way or got no answer), `posted` (created, not yet complete),
 * `recording` (its product-107 subscription is being recorded: the shared create of src/handler/creates.ts),
 * `updating` (a change or an adoption is being applied), `active`, `deleting` (the delete call is under way), and
 * the closed states.
 */
export type NotificationPipelineState = 'posting' | 'posted' | 'recording' | 'updating' | 'active' | 'deleting' | ClosedState;

/** How the handler reads the properties (`PartialFailure` is lenient: default `FAIL`). */
export const NOTIFICATION_PIPELINE_FIELDS = {
  RemoteIdentityId: 'string',
  AccountType: 'string',
  NotificationTypes: 'list',
  RoleArn: 'string',
  EbToFhRoleArn: 'string?',
  DeploymentRegion: 'string',
  StorageGroupId: 'int?',
  Name: 'string?',
  PartialFailure: 'string?',
  AdoptId: 'string?',
  RebuildOnAdoption: 'string?',
  RemovalPolicy: 'string?',
} as const satisfies WireSpec<NotificationPipelineWire>;

export const NotificationPipelineKind: KindDefinition<
  'Custom::DpiNotificationPipeline', NotificationPipelineWire, NotificationPipelineState> = {
  type: 'Custom::DpiNotificationPipeline',
  shortName: 'NotificationPipeline',
  description: 'notification pipeline (unified, product 107)',
  record: 'pipeline subscription',
  fields: NOTIFICATION_PIPELINE_FIELDS,
  attributes: Object.values(NotificationPipelineAttributes),
  states: ['posting', 'posted', 'recording', 'updating', 'active', 'deleting', 'deleted', 'abandoned', 'released'],
  unconfirmedStates: ['posting', 'recording'],
  undecidedStates: ['posting', 'recording'],
  removalPolicy: true,
  claim: 'sub',
  polled: false,
  alwaysAdopted: false,
  readsParameters: true,
  fixOrder: 2,
};
