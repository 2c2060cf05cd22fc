import { Arn, CustomResource, Duration, Fn, RemovalPolicy, Stack, Token } from 'aws-cdk-lib';
import * as cloudwatch from 'aws-cdk-lib/aws-cloudwatch';
import * as events from 'aws-cdk-lib/aws-events';
import * as iam from 'aws-cdk-lib/aws-iam';
import * as firehose from 'aws-cdk-lib/aws-kinesisfirehose';
import * as lambda from 'aws-cdk-lib/aws-lambda';
import * as s3 from 'aws-cdk-lib/aws-s3';
import * as sqs from 'aws-cdk-lib/aws-sqs';
import { Construct, IConstruct } from 'constructs';
import { addQueueConsumer, grantRead, importPipeline, messagesVisible, oldestMessageAge, PipelineReadTarget } from './construct-access';
import {
  INotificationPipeline, NotificationConsumerOptions, NotificationPipelineAlarmOptions, NotificationPipelineAttributes, NotificationPipelineProps,
} from './construct-props';
import { NotificationPipelineKind, NotificationPipelineWire } from './wire';
import { notifyOrAcknowledge } from '../../alarm-actions';
import { DpiProvider } from '../../connection/provider';
import { invalid, numStr, requireAdoptableId, requirePositiveInteger } from '../../connection/validation';
import { NotificationPipelineAttributes as Att } from '../../contract';
import { INotificationPipelineRoles } from '../../notifications/notification-pipeline-roles';
import { ACCEPTED_DEPLOYMENT_REGIONS } from '../../notifications/notification-pipeline-roles-policy';
import { AccountType, NotificationDelivery, NotificationType, PartialFailure } from '../../notifications/notification-type';
import { checkPipelineResourceLimit } from '../../notifications/resource-limit';
import { LegacyNotificationPipeline } from '../legacy-notification-pipeline/construct';

export * from './construct-props';


/** The unified pipelines of an app, by remote identity (construct path of the first). */
const pipelinesByIdentity = new WeakMap<IConstruct, Map<number, string>>();

/** The role ARNs (as given: tokens) each provider was already granted `iam:GetRole` on. */
const grantedRoleArns = new WeakMap<DpiProvider, Set<string>>();

/**
 * `provider.grantRoleRead(roleArns)` unless this exact list was granted already: the pipelines of a stack share
 * their roles, and the provider's own de-duplication resolves the list every time.
 */
function grantRoleReadOnce(provider: DpiProvider, roleArns: string[]): void {
  let granted = grantedRoleArns.get(provider);
  if (!granted) grantedRoleArns.set(provider, granted = new Set());
  const key = roleArns.join('\n');
  if (granted.has(key)) return;
  granted.add(key);
  provider.grantRoleRead(roleArns);
}

/**
 * A unified marketplace notification pipeline (product 107).
 *
 * The service subscribes the selected notification types upstream and
 * provisions, in the customer's account and `deploymentRegion`, a delivery
 * stream that writes into a shared bucket under a pipeline-specific prefix,
 * plus a queue that receives object-created notifications for that prefix.
 *
 * Update converges in place (PATCH with the full selection). A change of
 * `remoteIdentityId` or `accountType` creates a new pipeline and deletes the
 * old one (new physical ID).
 *
 * @example
 * declare const connection: ServiceConnection;
 * declare const roles: NotificationPipelineRoles;
 * declare const consumer: lambda.IFunction;
 *
 * const seller = new NotificationPipeline(this, 'SellerNotifications', {
 *   connection,
 *   roles,
 *   remoteIdentityId: 362,
 *   accountType: AccountType.SELLER,
 *   notificationTypes: [NotificationType.ORDER_CHANGE, NotificationType.REPORT_PROCESSING_FINISHED],
 * });
 * seller.addConsumer(consumer, { batchSize: 10 });
 */
export class NotificationPipeline extends Construct implements INotificationPipeline {
  /** The deployment regions the service accepts (`deploymentRegion`); a new array on every call. */
  public static acceptedDeploymentRegions(): string[] {
    return [...ACCEPTED_DEPLOYMENT_REGIONS];
  }

  /**
   * A pipeline declared in another stack or app, from its attributes: what its consumers need (`addConsumer()`,
   * `grantReadNotifications()`, the queue and bucket handles, the queue metrics). Errors at synth name the attribute
   * that is missing or malformed.
   */
  public static fromPipelineAttributes(scope: Construct, id: string, attrs: NotificationPipelineAttributes): INotificationPipeline {
    return importPipeline(scope, id, attrs);
  }

  /** The service's subscription ID of the pipeline (product 107). */
  public get subscriptionId(): string { return this.att(Att.SUBSCRIPTION_ID); }
  /** Comma-separated names of the types that were subscribed. */
  public get subscribedTypes(): string { return this.att(Att.SUBSCRIBED_TYPES); }
  /** Comma-separated names of the types that failed (only with `PartialFailure.ALLOW`). */
  public get failedTypes(): string { return this.att(Att.FAILED_TYPES); }
  /** The pipeline's key prefix in the shared bucket, ending with `/` (so `<prefix>*` covers this pipeline's keys only). */
  public get prefix(): string { return this.att(Att.PREFIX); }
  /** The object-notification queue of the pipeline's prefix (imported handle; its ARN is `notificationQueue.queueArn`). */
  public get notificationQueue(): sqs.IQueue {
    this._notificationQueue ??= sqs.Queue.fromQueueArn(this, 'NotificationQueue', this.att(Att.NOTIFICATION_QUEUE_ARN));
    return this._notificationQueue;
  }
  /** The shared bucket (imported handle; its name is `bucket.bucketName`). */
  public get bucket(): s3.IBucket {
    this._bucket ??= s3.Bucket.fromBucketName(this, 'Bucket', this.att(Att.BUCKET_NAME));
    return this._bucket;
  }
  /** The deployment region. */
  public readonly deploymentRegion: string;
  /** The remote identity. */
  public readonly remoteIdentityId: number;
  /** The selected notification types (a new array on every read). */
  public get notificationTypes(): NotificationType[] {
    return [...this.types];
  }
  /** ID (name) of the service's rule on that bus (event-bus types); `''` when the selection has none. */
  public get eventBridgeRuleId(): string { return this.att(Att.EVENT_BRIDGE_RULE_ID); }
  /** The event-bus destination the service registered upstream (event-bus types); `''` otherwise. */
  public get eventBridgeDestinationId(): string { return this.att(Att.EVENT_BRIDGE_DESTINATION_ID); }
  /** The queue destination the service registered upstream (queue types); `''` otherwise. */
  public get sqsDestinationId(): string { return this.att(Att.SQS_DESTINATION_ID); }

  private readonly resource: CustomResource;
  private readonly types: NotificationType[];
  /** The attribute tokens made so far (made on first use: most pipelines of a large app never read them). */
  private readonly atts: Partial<Record<string, string>> = {};
  private _notificationQueue?: sqs.IQueue;
  private _bucket?: s3.IBucket;
  private _eventBus?: events.IEventBus;
  private _rule?: events.IRule;
  private _deliveryStream?: firehose.IDeliveryStream;

  constructor(scope: Construct, id: string, props: NotificationPipelineProps) {
    super(scope, id);

    requirePositiveInteger(this, 'remoteIdentityId', props.remoteIdentityId);
    if (props.remoteIdentityId === undefined) {
      throw invalid(this, 'remoteIdentityId', props.remoteIdentityId, 'is missing', 'give the numeric remote identity ID (seller type 17 or vendor type 18)');
    }
    if (props.accountType !== AccountType.SELLER && props.accountType !== AccountType.VENDOR) {
      throw invalid(this, 'accountType', props.accountType, 'is not accepted', 'use AccountType.SELLER or AccountType.VENDOR');
    }
    const region = this.resolveRegion(props.deploymentRegion);
    const types = props.notificationTypes ?? [];
    this.validateTypes(types, props.accountType, props.roles);
    const partialFailure = props.partialFailure ?? PartialFailure.FAIL;
    if (partialFailure !== PartialFailure.FAIL && partialFailure !== PartialFailure.ALLOW) {
      throw invalid(this, 'partialFailure', partialFailure, 'is not accepted', 'use PartialFailure.FAIL or PartialFailure.ALLOW');
    }
    requirePositiveInteger(this, 'storageGroupId', props.storageGroupId);
    requireAdoptableId(this, 'existingSubscriptionId', props.existingSubscriptionId);
    if (props.rebuildOnAdoption === true && props.existingSubscriptionId === undefined) {
      throw invalid(this, 'rebuildOnAdoption', true, 'applies only to an adoption', 'set existingSubscriptionId, or drop rebuildOnAdoption');
    }
    // An adopted pipeline existed before the stack: RETAIN by default.
    const removalPolicy = props.removalPolicy ?? (props.existingSubscriptionId !== undefined ? RemovalPolicy.RETAIN : RemovalPolicy.DESTROY);
    if (removalPolicy !== RemovalPolicy.RETAIN && removalPolicy !== RemovalPolicy.DESTROY) {
      throw invalid(this, 'removalPolicy', removalPolicy, 'is not accepted',
        'use RemovalPolicy.RETAIN (the pipeline is kept and released) or RemovalPolicy.DESTROY (it is deleted)');
    }
    const needsEventBus = types.some((t) => t.delivery === NotificationDelivery.EVENT_BUS);

    // Every prop is valid: register the identity.
    if (!Token.isUnresolved(props.remoteIdentityId)) {
      // One unified pipeline per identity: a second one would take over the first one's upstream subscriptions
      // (the service reuses them), and deleting either would remove them for both.
      let byIdentity = pipelinesByIdentity.get(this.node.root);
      if (!byIdentity) pipelinesByIdentity.set(this.node.root, byIdentity = new Map());
      const first = byIdentity.get(props.remoteIdentityId);
      if (first !== undefined) {
        throw invalid(this, 'remoteIdentityId', props.remoteIdentityId, `already has a notification pipeline in this app ('${first}')`,
          'declare one NotificationPipeline per remote identity and select every notification type there');
      }
      byIdentity.set(props.remoteIdentityId, this.node.path);
    }
    const binding = props.connection._bind(this);
    const properties: Omit<NotificationPipelineWire, 'ServiceToken'> = {
      Connection: binding.connection,
      RemoteIdentityId: numStr(props.remoteIdentityId),
      AccountType: props.accountType,
      NotificationTypes: types.map((t) => t.name),
      RoleArn: props.roles.managementRoleArn,
      ...(needsEventBus ? { EbToFhRoleArn: props.roles.eventBusRoleArn } : {}),
      DeploymentRegion: region,
      ...(props.storageGroupId !== undefined ? { StorageGroupId: numStr(props.storageGroupId) } : {}),
      ...(props.name !== undefined ? { Name: props.name } : {}),
      PartialFailure: partialFailure,
      ...(props.existingSubscriptionId !== undefined ? { AdoptId: numStr(props.existingSubscriptionId) } : {}),
      ...(props.rebuildOnAdoption === true ? { RebuildOnAdoption: 'true' } : {}),
      RemovalPolicy: removalPolicy === RemovalPolicy.RETAIN ? 'retain' : 'destroy',
    };
    this.resource = new CustomResource(this, 'Resource', {
      serviceToken: binding.serviceToken,
      resourceType: NotificationPipelineKind.type,
      properties: { ...properties },
      // Always Delete: CloudFormation sends every Delete and the handler applies `RemovalPolicy` (RETAIN releases).
      removalPolicy: RemovalPolicy.DESTROY,
    });
    // The roles (and their inline policies) must exist before the service assumes them.
    this.resource.node.addDependency(props.roles);
    // A 403 of the unified create is retried only while a role is young (IAM propagation): the handler reads
    // the roles' creation time.
    const roleArns = [props.roles.managementRoleArn, ...(needsEventBus && props.roles.eventBusRoleArn ? [props.roles.eventBusRoleArn] : [])];
    grantRoleReadOnce(DpiProvider.of(this), roleArns);
    // Past CloudFormation's resource limit, say how many pipelines fit and point to the fleet (before aws-cdk-lib's error).
    checkPipelineResourceLimit(this, (c) => c instanceof NotificationPipeline);

    this.deploymentRegion = region;
    this.remoteIdentityId = props.remoteIdentityId;
    this.types = [...types];
  }

  /** The token of attribute `name` (one per attribute and pipeline, so a property reads the same string every time). */
  private att(name: string): string {
    return this.atts[name] ??= this.resource.getAttString(name);
  }

  /**
   * The event bus the service's rule is on (imported handle), for pipelines with an event-bus notification type.
   * A synth error for a selection of queue types only (the service makes no rule then).
   */
  public get eventBus(): events.IEventBus {
    this.requirePath(NotificationDelivery.EVENT_BUS, 'eventBus');
    this._eventBus ??= events.EventBus.fromEventBusName(this, 'EventBus', this.att(Att.EVENT_BUS_NAME));
    return this._eventBus;
  }

  /**
   * The service's rule on the event bus (imported handle; its name is `eventBridgeRuleId`), for pipelines with an
   * event-bus notification type. A synth error for a selection of queue types only.
   */
  public get rule(): events.IRule {
    this.requirePath(NotificationDelivery.EVENT_BUS, 'rule');
    if (!this._rule) {
      const arn = Arn.format({
        service: 'events',
        region: this.deploymentRegion,
        resource: 'rule',
        resourceName: `${this.att(Att.EVENT_BUS_NAME)}/${this.eventBridgeRuleId}`,
      }, Stack.of(this));
      this._rule = events.Rule.fromEventRuleArn(this, 'Rule', arn);
    }
    return this._rule;
  }

  /**
   * The delivery stream (imported handle) that writes the notifications under `prefix`. The service reports its ARN
   * for pipelines with a queue notification type (the queue path's identifiers); a synth error for a selection of
   * event-bus types only.
   */
  public get deliveryStream(): firehose.IDeliveryStream {
    this.requirePath(NotificationDelivery.QUEUE, 'deliveryStream');
    this._deliveryStream ??= firehose.DeliveryStream.fromDeliveryStreamArn(this, 'DeliveryStream', this.att(Att.DELIVERY_STREAM_ARN));
    return this._deliveryStream;
  }

  private requirePath(path: NotificationDelivery, handle: string): void {
    if (this.notificationTypes.some((t) => t.delivery === path)) return;
    const what = path === NotificationDelivery.EVENT_BUS ? 'an event-bus' : 'a queue';
    throw new Error(`${this.node.path}: ${handle} exists only for pipelines with ${what} notification type; the selection `
      + `(${this.notificationTypes.map((t) => t.name).join(', ')}) has none: add such a type, or use ${path === NotificationDelivery.EVENT_BUS ? 'the queue path\'s handles (notificationQueue, bucket, deliveryStream)' : 'the event-bus handles (eventBus, rule)'}`);
  }

  /**
   * Let `grantee` read the pipeline's notifications: `s3:GetObject` on the
   * pipeline's prefix in the shared bucket, `s3:ListBucket` limited to that
   * prefix, and consuming the object-notification queue.
   */
  public grantReadNotifications(grantee: iam.IGrantable): iam.Grant {
    return grantRead(this.readTarget(), grantee);
  }

  private readTarget(): PipelineReadTarget {
    return { scope: this, bucketName: this.att(Att.BUCKET_NAME), prefix: this.prefix, queue: this.notificationQueue };
  }

  /** Age of the oldest message in the object-notification queue (maximum over 5 minutes): a consumer falling behind. */
  public metricOldestMessageAge(props: cloudwatch.MetricOptions = {}): cloudwatch.Metric {
    return oldestMessageAge(this.notificationQueue, props);
  }

  /** Messages waiting in the object-notification queue (maximum over 5 minutes). */
  public metricMessagesVisible(props: cloudwatch.MetricOptions = {}): cloudwatch.Metric {
    return messagesVisible(this.notificationQueue, props);
  }

  /**
   * Share of successful deliveries of the delivery stream to the bucket (`DeliveryToS3.Success`, average over 5
   * minutes: 1 when every delivery succeeded). Needs `deliveryStream` (a queue notification type).
   */
  public metricDeliveryToS3Success(props: cloudwatch.MetricOptions = {}): cloudwatch.Metric {
    return this.firehoseMetric('DeliveryToS3.Success', cloudwatch.Stats.AVERAGE, props);
  }

  /** Age in seconds of the oldest record in the delivery stream not yet delivered to the bucket (maximum over 5 minutes). */
  public metricDeliveryToS3DataFreshness(props: cloudwatch.MetricOptions = {}): cloudwatch.Metric {
    return this.firehoseMetric('DeliveryToS3.DataFreshness', cloudwatch.Stats.MAXIMUM, props);
  }

  /**
   * Alarms with defaults on the pipeline's own resources: the oldest message of the object-notification queue older
   * than `maxMessageAge` (a consumer that stopped), and, with a queue notification type, deliveries to the bucket
   * failing (`DeliveryToS3.Success` below 1) and records waiting longer than `maxDeliveryDelay`.
   */
  public addAlarms(options: NotificationPipelineAlarmOptions = {}): cloudwatch.Alarm[] {
    const alarms: cloudwatch.Alarm[] = [];
    const age = (options.maxMessageAge ?? Duration.hours(1)).toSeconds();
    alarms.push(this.metricOldestMessageAge().createAlarm(this, 'OldestMessageAlarm', {
      threshold: age,
      evaluationPeriods: 1,
      comparisonOperator: cloudwatch.ComparisonOperator.GREATER_THAN_THRESHOLD,
      treatMissingData: cloudwatch.TreatMissingData.NOT_BREACHING,
      alarmDescription: `${this.node.path}: a notification object has waited more than ${age} s in the queue (is the consumer running?)`,
    }));
    if (this.notificationTypes.some((t) => t.delivery === NotificationDelivery.QUEUE)) {
      alarms.push(this.metricDeliveryToS3Success().createAlarm(this, 'DeliveryFailureAlarm', {
        threshold: 1,
        evaluationPeriods: 2,
        comparisonOperator: cloudwatch.ComparisonOperator.LESS_THAN_THRESHOLD,
        treatMissingData: cloudwatch.TreatMissingData.NOT_BREACHING,
        alarmDescription: `${this.node.path}: deliveries of notifications to the bucket are failing`,
      }));
      const delay = (options.maxDeliveryDelay ?? Duration.minutes(15)).toSeconds();
      alarms.push(this.metricDeliveryToS3DataFreshness().createAlarm(this, 'DeliveryDelayAlarm', {
        threshold: delay,
        evaluationPeriods: 2,
        comparisonOperator: cloudwatch.ComparisonOperator.GREATER_THAN_THRESHOLD,
        treatMissingData: cloudwatch.TreatMissingData.NOT_BREACHING,
        alarmDescription: `${this.node.path}: notifications wait more than ${delay} s before they reach the bucket`,
      }));
    }
    for (const a of alarms) notifyOrAcknowledge(a, options.alarmTopic);
    return alarms;
  }

  private firehoseMetric(name: string, statistic: string, props: cloudwatch.MetricOptions): cloudwatch.Metric {
    const arn = this.deliveryStream.deliveryStreamArn;
    return new cloudwatch.Metric({
      namespace: 'AWS/Firehose',
      metricName: name,
      // deliverystream/<name>
      dimensionsMap: { DeliveryStreamName: Fn.select(1, Fn.split('/', arn)) },
      region: this.deploymentRegion,
      statistic,
      period: Duration.minutes(5),
      ...props,
    });
  }

  /**
   * Invoke `fn` for the pipeline's object-notification queue (an SQS event
   * source) and let it read the notification objects.
   */
  public addConsumer(fn: lambda.IFunction, options: NotificationConsumerOptions = {}): void {
    addQueueConsumer(this.readTarget(), fn, options);
  }

  /**
   * Replace a legacy pipeline of the same remote identity in one deploy.
   *
   * An active legacy pipeline (product 86) blocks creating a unified one, so
   * the legacy pipeline must be declared with `retired: true` (its update
   * deletes it); this pipeline then depends on it and is created after it.
   */
  public migrateFrom(legacy: LegacyNotificationPipeline): void {
    if (!legacy.retired) {
      throw invalid(this, 'migrateFrom', legacy.node.path, 'is a legacy pipeline that is not retired', 'set retired: true on the LegacyNotificationPipeline so the deploy deletes it before this pipeline is created');
    }
    if (!Token.isUnresolved(legacy.remoteIdentityId) && !Token.isUnresolved(this.remoteIdentityId)
      && legacy.remoteIdentityId !== this.remoteIdentityId) {
      throw invalid(this, 'migrateFrom', legacy.node.path, `belongs to remote identity ${legacy.remoteIdentityId}, not ${this.remoteIdentityId}`, 'migrate from the legacy pipeline of the same remote identity');
    }
    this.resource.node.addDependency(legacy);
  }

  private resolveRegion(deploymentRegion: string | undefined): string {
    const fix = `use one of ${ACCEPTED_DEPLOYMENT_REGIONS.join(', ')}`;
    if (deploymentRegion !== undefined) {
      if (!Token.isUnresolved(deploymentRegion) && !ACCEPTED_DEPLOYMENT_REGIONS.includes(deploymentRegion)) {
        throw invalid(this, 'deploymentRegion', deploymentRegion, 'is not accepted', fix);
      }
      return deploymentRegion;
    }
    const stackRegion = Stack.of(this).region;
    if (Token.isUnresolved(stackRegion)) {
      throw invalid(this, 'deploymentRegion', '(the stack region, unknown at synth)', 'is required for an environment-agnostic stack', `give deploymentRegion explicitly, or set env.region on the stack; ${fix}`);
    }
    if (!ACCEPTED_DEPLOYMENT_REGIONS.includes(stackRegion)) {
      throw invalid(this, 'deploymentRegion', stackRegion, '(the stack region) is not accepted', `give deploymentRegion explicitly; ${fix}`);
    }
    return stackRegion;
  }

  private validateTypes(types: NotificationType[], accountType: AccountType, roles: INotificationPipelineRoles): void {
    if (!Array.isArray(types) || types.length === 0) {
      throw invalid(this, 'notificationTypes', '', 'is empty', 'select at least one NotificationType');
    }
    const names = types.map((t) => t.name);
    const duplicates = names.filter((n, i) => names.indexOf(n) !== i);
    if (duplicates.length > 0) {
      throw invalid(this, 'notificationTypes', [...new Set(duplicates)], 'contains duplicates', 'list each type once');
    }
    const wrong = types.filter((t) => !t.isValidFor(accountType)).map((t) => t.name);
    if (wrong.length > 0) {
      const valid = NotificationType.all().filter((t) => t.isValidFor(accountType)).map((t) => t.name);
      throw invalid(this, 'notificationTypes', wrong, `is not valid for account type ${accountType}`, `use types valid for ${accountType}: ${valid.join(', ')}`);
    }
    const eventBus = types.filter((t) => t.delivery === NotificationDelivery.EVENT_BUS).map((t) => t.name);
    if (eventBus.length > 0 && !roles.eventBusRoleArn) {
      throw invalid(this, 'notificationTypes', eventBus, 'use the event-bus path but roles.eventBusRoleArn is not set', 'give eventBusRoleArn to NotificationPipelineRoles.fromRoleArns(), or select queue types only');
    }
  }
}
