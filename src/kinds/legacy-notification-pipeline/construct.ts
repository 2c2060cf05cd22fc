import { CustomResource, RemovalPolicy, Token } from 'aws-cdk-lib';
import { Construct } from 'constructs';
import { LegacyNotificationPipelineKind, LegacyNotificationPipelineWire } from './wire';
import { IServiceConnection } from '../../connection/service-connection-ref';
import { invalid, numStr, requirePositiveInteger } from '../../connection/validation';
import { NotificationType } from '../../notifications/notification-type';

/**
 * Properties of a `LegacyNotificationPipeline`.
 */
export interface LegacyNotificationPipelineProps {
  /** Connection to the service. */
  readonly connection: IServiceConnection;

  /** The service's subscription ID (product 86) of the existing legacy pipeline. */
  readonly subscriptionId: number;

  /** The remote identity of the legacy pipeline. */
  readonly remoteIdentityId: number;

  /** ARN of the customer queue that receives the notifications. */
  readonly queueArn: string;

  /** The notification types (non-empty, no duplicates). */
  readonly notificationTypes: NotificationType[];

  /**
   * Retire the legacy pipeline: when `true`, the deploy deletes the legacy
   * pipeline (as an update of this resource), so a unified pipeline that
   * depends on it (`NotificationPipeline.migrateFrom()`) can be created in
   * the same deploy.
   *
   * @default false
   */
  readonly retired?: boolean;

  /**
   * What happens to the legacy pipeline when the resource leaves the stack
   * (removed from the app, the stack deleted, the resource replaced). `RETAIN`
   * and `DESTROY` are accepted.
   *
   * - `RETAIN` (the default: the legacy pipeline existed before the stack)
   *   keeps it as it is in the service and releases it: the resource is still
   *   rendered with DeletionPolicy `Delete`, so CloudFormation shows it
   *   deleted, while the handler only marks its lifecycle journal record
   *   `released` and restores what the adoption changed where it can. Another
   *   stack may then adopt it, and `dpi orphans` never lists it.
   * - `DESTROY` is an explicit choice: the legacy pipeline is deleted upstream
   *   and its subscription set `invalid` when the stack is deleted, when the
   *   resource is replaced, and when the deploy that adopted it rolls back.
   *   A retired pipeline (`retired: true`) was already deleted by its update.
   *
   * A Delete uses the properties of the last successful deploy: change the
   * removal policy in a deploy before the one that removes the resource.
   *
   * @default RemovalPolicy.RETAIN
   */
  readonly removalPolicy?: RemovalPolicy;
}

/**
 * An existing legacy notification pipeline (product 86), adopted by its
 * subscription ID. It can never be created: the first deploy adopts it and
 * applies the queue ARN and types (PATCH); later updates PATCH it; removal
 * releases it (removal policy `RETAIN`, the default) or deletes it (`DESTROY`).
 * Use `retired: true` together with
 * `NotificationPipeline.migrateFrom()` to move to a unified pipeline.
 *
 * @example
 * declare const connection: ServiceConnection;
 *
 * new LegacyNotificationPipeline(this, 'LegacyOrders', {
 *   connection,
 *   subscriptionId: 8601,
 *   remoteIdentityId: 364,
 *   queueArn: 'arn:aws:sqs:us-east-1:123456789012:legacy-notifications',
 *   notificationTypes: [NotificationType.ORDER_CHANGE],
 * });
 */
export class LegacyNotificationPipeline extends Construct {
  /** The adopted subscription ID (the resource's physical ID). */
  public readonly subscriptionId: string;
  /** The remote identity of the legacy pipeline. */
  public readonly remoteIdentityId: number;
  /** Whether the legacy pipeline is retired (deleted by the deploy). */
  public readonly retired: boolean;

  constructor(scope: Construct, id: string, props: LegacyNotificationPipelineProps) {
    super(scope, id);

    if (props.subscriptionId === undefined) {
      throw invalid(this, 'subscriptionId', props.subscriptionId, 'is missing', 'give the subscription ID of the existing legacy pipeline (a legacy pipeline cannot be created)');
    }
    requirePositiveInteger(this, 'subscriptionId', props.subscriptionId);
    if (props.remoteIdentityId === undefined) {
      throw invalid(this, 'remoteIdentityId', props.remoteIdentityId, 'is missing', 'give the remote identity of the legacy pipeline');
    }
    requirePositiveInteger(this, 'remoteIdentityId', props.remoteIdentityId);
    if (!Token.isUnresolved(props.queueArn) && !/^arn:aws[a-z-]*:sqs:[a-z0-9-]+:\d{12}:[\w-]{1,80}(\.fifo)?$/.test(props.queueArn ?? '')) {
      throw invalid(this, 'queueArn', props.queueArn, 'is not an SQS queue ARN', 'use arn:aws:sqs:<region>:<account>:<queue name>');
    }
    const types = props.notificationTypes ?? [];
    if (types.length === 0) {
      throw invalid(this, 'notificationTypes', '', 'is empty', 'select at least one NotificationType');
    }
    const names = types.map((t) => t.name);
    const duplicates = names.filter((n, i) => names.indexOf(n) !== i);
    if (duplicates.length > 0) {
      throw invalid(this, 'notificationTypes', [...new Set(duplicates)], 'contains duplicates', 'list each type once');
    }

    // Always an adopted record: RETAIN by default.
    const policy = props.removalPolicy ?? RemovalPolicy.RETAIN;
    if (policy !== RemovalPolicy.RETAIN && policy !== RemovalPolicy.DESTROY) {
      throw invalid(this, 'removalPolicy', policy, 'is not accepted',
        'use RemovalPolicy.RETAIN (the legacy pipeline is kept and released) or RemovalPolicy.DESTROY (it is deleted)');
    }

    this.retired = props.retired ?? false;
    this.remoteIdentityId = props.remoteIdentityId;

    const binding = props.connection._bind(this);
    const properties: Omit<LegacyNotificationPipelineWire, 'ServiceToken'> = {
      Connection: binding.connection,
      SubscriptionId: numStr(props.subscriptionId),
      RemoteIdentityId: numStr(props.remoteIdentityId),
      QueueArn: props.queueArn,
      NotificationTypes: names,
      Retired: this.retired ? 'true' : 'false',
      RemovalPolicy: policy === RemovalPolicy.RETAIN ? 'retain' : 'destroy',
    };
    const resource = new CustomResource(this, 'Resource', {
      serviceToken: binding.serviceToken,
      resourceType: LegacyNotificationPipelineKind.type,
      properties: { ...properties },
      // Always Delete: CloudFormation sends every Delete and the handler applies `RemovalPolicy` (RETAIN releases).
      removalPolicy: RemovalPolicy.DESTROY,
    });
    this.subscriptionId = resource.ref;
  }
}
