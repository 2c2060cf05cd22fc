/**
 * The props and option interfaces of `NotificationPipeline` (kept apart from the construct to keep files small).
 */
import { Duration, RemovalPolicy } from 'aws-cdk-lib';
import * as cloudwatch from 'aws-cdk-lib/aws-cloudwatch';
import * as iam from 'aws-cdk-lib/aws-iam';
import * as lambda from 'aws-cdk-lib/aws-lambda';
import * as s3 from 'aws-cdk-lib/aws-s3';
import * as sns from 'aws-cdk-lib/aws-sns';
import * as sqs from 'aws-cdk-lib/aws-sqs';
import { IConstruct } from 'constructs';
import { IServiceConnection } from '../../connection/service-connection-ref';
import { INotificationPipelineRoles } from '../../notifications/notification-pipeline-roles';
import { AccountType, NotificationType, PartialFailure } from '../../notifications/notification-type';

/**
 * A unified notification pipeline as its consumers see it: a `NotificationPipeline` of this stack, or one of another
 * stack or app imported with `NotificationPipeline.fromPipelineAttributes()`.
 */
export interface INotificationPipeline extends IConstruct {
  /** The service's subscription ID of the pipeline (product 107). */
  readonly subscriptionId: string;

  /** The shared bucket the pipeline's delivery stream writes into (imported handle). */
  readonly bucket: s3.IBucket;

  /** The pipeline's key prefix in the shared bucket, ending with `/` (so `<prefix>*` covers this pipeline's keys only). */
  readonly prefix: string;

  /** The object-notification queue of the pipeline's prefix (imported handle). */
  readonly notificationQueue: sqs.IQueue;

  /**
   * Let `grantee` read the pipeline's notifications: `s3:GetObject` on the pipeline's prefix in the shared bucket,
   * `s3:ListBucket` limited to that prefix, and consuming the object-notification queue.
   */
  grantReadNotifications(grantee: iam.IGrantable): iam.Grant;

  /** Invoke `fn` for the object-notification queue (an SQS event source) and let it read the notification objects. */
  addConsumer(fn: lambda.IFunction, options?: NotificationConsumerOptions): void;

  /** Age of the oldest message in the object-notification queue (maximum over 5 minutes): a consumer falling behind. */
  metricOldestMessageAge(props?: cloudwatch.MetricOptions): cloudwatch.Metric;

  /** Messages waiting in the object-notification queue (maximum over 5 minutes). */
  metricMessagesVisible(props?: cloudwatch.MetricOptions): cloudwatch.Metric;
}

/**
 * The attributes of a deployed unified notification pipeline, to use it from another stack or app
 * (`NotificationPipeline.fromPipelineAttributes()`). In the same app, pass the pipeline's own values
 * (`pipeline.subscriptionId`, `pipeline.bucket.bucketName`, `pipeline.prefix`, `pipeline.notificationQueue.queueArn`):
 * aws-cdk-lib turns them into cross-stack references. From another app, give the deployed pipeline's values (for example
 * `CfnOutput`s of its stack).
 */
export interface NotificationPipelineAttributes {
  /** The service's subscription ID of the pipeline (product 107). */
  readonly subscriptionId: string;

  /** Name of the shared bucket. */
  readonly bucketName: string;

  /** The pipeline's key prefix in the shared bucket, ending with `/`. */
  readonly prefix: string;

  /** ARN of the pipeline's object-notification queue. */
  readonly notificationQueueArn: string;
}

/**
 * The thresholds of a pipeline's alarms, shared by `NotificationPipeline.addAlarms()` and
 * `DpiMonitoring.monitorPipeline()`.
 */
export interface NotificationPipelineAlarmThresholds {
  /**
   * Alarm when the oldest message of the object-notification queue is older than this.
   *
   * @default Duration.hours(1)
   */
  readonly maxMessageAge?: Duration;

  /**
   * Alarm when records wait longer than this before the delivery stream writes them (queue types only).
   *
   * @default Duration.minutes(15)
   */
  readonly maxDeliveryDelay?: Duration;
}

/** Options of `NotificationPipeline.addAlarms()`. */
export interface NotificationPipelineAlarmOptions extends NotificationPipelineAlarmThresholds {
  /**
   * A topic the alarms notify (alarm and OK).
   *
   * @default - no action
   */
  readonly alarmTopic?: sns.ITopic;
}

/**
 * The settings of one unified notification pipeline, shared by `NotificationPipelineProps` and by each identity of a
 * `NotificationPipelineFleet` (`NotificationPipelineFleetIdentity`). In a fleet, an optional setting left out takes
 * the fleet's default of the same name.
 */
export interface NotificationPipelineOptions {
  /**
   * The remote identity (seller: type 17, vendor: type 18) whose notifications
   * the pipeline delivers. Changing it replaces the pipeline. In a fleet it
   * also decides the nested stack that holds the pipeline and the pipeline's
   * logical ID (a literal ID, unique in the app).
   */
  readonly remoteIdentityId: number;

  /**
   * The account type of the remote identity; it decides which notification
   * types are allowed. Changing it replaces the pipeline.
   */
  readonly accountType: AccountType;

  /** The notification types to subscribe (non-empty, no duplicates, valid for the account type). */
  readonly notificationTypes: NotificationType[];

  /**
   * The AWS region in which the service provisions the pipeline's delivery
   * resources; one of `NotificationPipeline.acceptedDeploymentRegions()`
   * (us-east-1, us-east-2, us-west-1, us-west-2, af-south-1, ap-east-1).
   *
   * @default - in a fleet, the fleet's `deploymentRegion`; otherwise the stack's region (required when the stack is
   * environment-agnostic)
   */
  readonly deploymentRegion?: string;

  /**
   * Destination (storage group) ID recorded with the pipeline's subscription.
   *
   * @default - in a fleet, the fleet's `storageGroupId`; otherwise none
   */
  readonly storageGroupId?: number;

  /**
   * Display name of the pipeline's subscription.
   *
   * @default - the service's default name
   */
  readonly name?: string;

  /**
   * What to do when some types fail to subscribe.
   *
   * @default - in a fleet, the fleet's `partialFailure`; otherwise PartialFailure.FAIL
   */
  readonly partialFailure?: PartialFailure;

  /**
   * What happens to the pipeline when the resource leaves the stack (removed
   * from the app, the stack deleted, the resource replaced). `RETAIN` and
   * `DESTROY` are accepted.
   *
   * - `DESTROY` deletes the pipeline (upstream subscriptions and the
   *   pipeline-specific delivery resources) and marks its subscription invalid.
   * - `RETAIN` keeps the pipeline running and releases it: the resource is
   *   still rendered with DeletionPolicy `Delete`, so CloudFormation shows it
   *   deleted, while the handler only marks its lifecycle journal record
   *   `released` (for an adopted pipeline it restores what the adoption
   *   changed where it can). Another stack may then adopt it
   *   (`existingSubscriptionId`), and `dpi orphans` never lists it.
   *
   * `DESTROY` on an adopted pipeline (`existingSubscriptionId`) is an explicit
   * choice: the pipeline that existed before the stack is then deleted when
   * the stack is deleted, when the resource is replaced, and when the deploy
   * that adopted it rolls back.
   *
   * A Delete uses the properties of the last successful deploy: change the
   * removal policy in a deploy before the one that removes the resource.
   *
   * In a fleet, the fleet's `removalPolicy` applies only to the pipelines the fleet creates.
   *
   * @default - RemovalPolicy.RETAIN when existingSubscriptionId is set; otherwise, in a fleet, the fleet's
   * `removalPolicy`, and RemovalPolicy.DESTROY for a pipeline of its own
   */
  readonly removalPolicy?: RemovalPolicy;

  /**
   * The ID of the existing product-107 subscription of a unified pipeline
   * to adopt instead of creating a pipeline.
   *
   * Create then makes no new pipeline: it checks that the subscription exists
   * and is live, and that the pipeline the service stores (the subscription's
   * stored parameters: the types that subscribed, and the region and AWS
   * account of its delivery resources) is the declared one; it claims the
   * subscription and the remote identity for this resource (refused, naming
   * the owner, when another resource manages either) and takes the pipeline
   * over as it is, with no changing call but a differing `name` or
   * `storageGroupId`. When the pipeline differs from the declaration, or the
   * service's reads do not show it, the deploy fails before any change unless
   * `rebuildOnAdoption` is set. `removalPolicy` then defaults to `RETAIN`: a
   * delete releases the pipeline and leaves it running.
   *
   * In a fleet, setting it does not move the identity to another nested
   * stack (the nested stack depends on the remote identity ID only), and
   * each ID is adopted once across the identities.
   *
   * @default - a new pipeline is created
   */
  readonly existingSubscriptionId?: number;

  /**
   * Whether adopting the pipeline (`existingSubscriptionId`) rebuilds it.
   *
   * Without this option an adoption takes the pipeline over as the service
   * stores it, with no changing call, when its stored types, region and
   * account are the declared ones and its stored result is complete and
   * well-formed; otherwise it fails before any change, naming what differs
   * or is not shown (reads without the vendor's parameter read show
   * nothing). With it, the adoption always sends the unified update (which
   * disables the pipeline's upstream subscriptions and makes them anew; not
   * atomic: a failure can leave them disabled) and keeps the service's
   * answer as the pipeline's result, not the stored values, which whoever
   * holds the service account can write. It has no effect once the
   * pipeline is adopted.
   *
   * @default false
   */
  readonly rebuildOnAdoption?: boolean;
}

/**
 * Properties of a `NotificationPipeline`.
 */
export interface NotificationPipelineProps extends NotificationPipelineOptions {
  /** Connection to the service. */
  readonly connection: IServiceConnection;

  /** The customer-side roles (`NotificationPipelineRoles` or `NotificationPipelineRoles.fromRoleArns()`). */
  readonly roles: INotificationPipelineRoles;
}

/**
 * Options of `NotificationPipeline.addConsumer()`.
 */
export interface NotificationConsumerOptions {
  /**
   * Maximum number of queue messages per invocation.
   *
   * @default 10
   */
  readonly batchSize?: number;

  /**
   * Maximum time to gather messages before invoking.
   *
   * @default - no batching window
   */
  readonly maxBatchingWindow?: Duration;

  /**
   * Whether the function reports individual failed messages.
   *
   * @default true
   */
  readonly reportBatchItemFailures?: boolean;
}
