/**
 * What a consumer of a notification pipeline uses (read grants, the SQS event source), shared by `NotificationPipeline`
 * and the pipeline that `NotificationPipeline.fromPipelineAttributes()` imports. Internal: not exported from index.ts.
 */
import { Stack, Token } from 'aws-cdk-lib';
import * as cloudwatch from 'aws-cdk-lib/aws-cloudwatch';
import * as iam from 'aws-cdk-lib/aws-iam';
import * as lambda from 'aws-cdk-lib/aws-lambda';
import { SqsEventSource } from 'aws-cdk-lib/aws-lambda-event-sources';
import * as s3 from 'aws-cdk-lib/aws-s3';
import * as sqs from 'aws-cdk-lib/aws-sqs';
import { Construct } from 'constructs';
import { INotificationPipeline, NotificationConsumerOptions, NotificationPipelineAttributes } from './construct-props';
import { acknowledge, acknowledgeWildcards, WildcardRule } from '../../connection/nag';
import { invalid } from '../../connection/validation';

/** A pipeline's read surface: the shared bucket's name, the pipeline's prefix and its object-notification queue. */
export interface PipelineReadTarget {
  readonly scope: Construct;
  readonly bucketName: string;
  readonly prefix: string;
  readonly queue: sqs.IQueue;
}

/** The cdk-nag form of the object grant's resource of a pipeline declared in the grantee's stack. */
const OWN_STACK_OBJECTS = /^arn:<AWS::Partition>:s3:::<[A-Za-z0-9]+\.BucketName>\/<[A-Za-z0-9]+\.Prefix>\*$/;
const OBJECTS_REASON = 'Notification objects have names the delivery stream generates under the pipeline prefix; read access is limited to that prefix.';

/**
 * `s3:GetObject` on `<bucket>/<prefix>*`, `s3:ListBucket` limited to the prefix, and consuming the queue. The object
 * keys are generated under the pipeline's prefix: the `<prefix>*` wildcard is the narrowest grant there is, so the
 * grantee's cdk-nag finding on it is acknowledged (for literal attributes, that exact resource only).
 */
export function grantRead(target: PipelineReadTarget, grantee: iam.IGrantable): iam.Grant {
  const partition = Stack.of(target.scope).partition;
  const objects = iam.Grant.addToPrincipal({
    grantee,
    actions: ['s3:GetObject'],
    resourceArns: [`arn:${partition}:s3:::${target.bucketName}/${target.prefix}*`],
  });
  const list = iam.Grant.addToPrincipal({
    grantee,
    actions: ['s3:ListBucket'],
    resourceArns: [`arn:${partition}:s3:::${target.bucketName}`],
    conditions: { StringLike: { 's3:prefix': [`${target.prefix}*`] } },
  });
  const queue = target.queue.grantConsumeMessages(grantee);
  if (Construct.isConstruct(grantee.grantPrincipal)) {
    const rules: WildcardRule[] = [{ pattern: OWN_STACK_OBJECTS, reason: OBJECTS_REASON }];
    if (!Token.isUnresolved(target.bucketName) && !Token.isUnresolved(target.prefix)) {
      rules.push({ pattern: new RegExp(`^arn:<AWS::Partition>:s3:::${escape(target.bucketName)}\\/${escape(target.prefix)}\\*$`), reason: OBJECTS_REASON });
    }
    acknowledgeWildcards(grantee.grantPrincipal, rules);
  }
  return objects.combine(list).combine(queue);
}

/** `fn` invoked for the queue (an SQS event source), with the read grants. */
export function addQueueConsumer(target: PipelineReadTarget, fn: lambda.IFunction, options: NotificationConsumerOptions): void {
  const before = new Set(fn.node.findAll());
  fn.addEventSource(new SqsEventSource(target.queue, {
    batchSize: options.batchSize ?? 10,
    maxBatchingWindow: options.maxBatchingWindow,
    reportBatchItemFailures: options.reportBatchItemFailures ?? true,
  }));
  for (const c of fn.node.findAll()) {
    if (!before.has(c) && c instanceof lambda.EventSourceMapping) {
      acknowledge(c, 'Serverless-LambdaEventSourceMappingDestination', 'An SQS event source: a message that fails stays in the queue until it '
        + 'succeeds or expires (with reportBatchItemFailures only the failed ones); on-failure destinations apply to stream and Kafka '
        + 'sources only.');
    }
  }
  grantRead(target, fn);
}

/** Age of the oldest message in the queue (maximum over 5 minutes). */
export function oldestMessageAge(queue: sqs.IQueue, props: cloudwatch.MetricOptions): cloudwatch.Metric {
  return queue.metricApproximateAgeOfOldestMessage({ statistic: cloudwatch.Stats.MAXIMUM, ...props });
}

/** Messages waiting in the queue (maximum over 5 minutes). */
export function messagesVisible(queue: sqs.IQueue, props: cloudwatch.MetricOptions): cloudwatch.Metric {
  return queue.metricApproximateNumberOfMessagesVisible({ statistic: cloudwatch.Stats.MAXIMUM, ...props });
}

function escape(s: string): string {
  return s.replace(/[.*+?^${}()|[\]\\/]/g, '\\$&');
}

/** A pipeline of another stack or app, from its attributes. */
class ImportedNotificationPipeline extends Construct implements INotificationPipeline {
  public readonly subscriptionId: string;
  public readonly bucket: s3.IBucket;
  public readonly prefix: string;
  public readonly notificationQueue: sqs.IQueue;
  private readonly target: PipelineReadTarget;

  constructor(scope: Construct, id: string, attrs: NotificationPipelineAttributes) {
    super(scope, id);
    const missing = (['subscriptionId', 'bucketName', 'prefix', 'notificationQueueArn'] as const)
      .filter((k) => typeof attrs?.[k] !== 'string' || attrs[k] === '');
    if (missing.length > 0) {
      throw invalid(this, missing[0], attrs?.[missing[0]], 'is missing', 'give every attribute of the pipeline (pipeline.subscriptionId, '
        + 'pipeline.bucket.bucketName, pipeline.prefix, pipeline.notificationQueue.queueArn, or the deployed pipeline\'s values)');
    }
    if (!Token.isUnresolved(attrs.prefix) && !attrs.prefix.endsWith('/')) {
      throw invalid(this, 'prefix', attrs.prefix, 'does not end with /', 'give the pipeline\'s prefix as the service reports it (it ends with /)');
    }
    if (!Token.isUnresolved(attrs.notificationQueueArn) && !/^arn:[a-z-]+:sqs:[a-z0-9-]+:\d{12}:[A-Za-z0-9_-]+$/.test(attrs.notificationQueueArn)) {
      throw invalid(this, 'notificationQueueArn', attrs.notificationQueueArn, 'is not an SQS queue ARN',
        'give the ARN of the pipeline\'s object-notification queue (arn:aws:sqs:<region>:<account>:<name>)');
    }
    this.subscriptionId = attrs.subscriptionId;
    this.prefix = attrs.prefix;
    this.bucket = s3.Bucket.fromBucketName(this, 'Bucket', attrs.bucketName);
    this.notificationQueue = sqs.Queue.fromQueueArn(this, 'NotificationQueue', attrs.notificationQueueArn);
    this.target = { scope: this, bucketName: attrs.bucketName, prefix: attrs.prefix, queue: this.notificationQueue };
  }

  public grantReadNotifications(grantee: iam.IGrantable): iam.Grant {
    return grantRead(this.target, grantee);
  }

  public addConsumer(fn: lambda.IFunction, options: NotificationConsumerOptions = {}): void {
    addQueueConsumer(this.target, fn, options);
  }

  public metricOldestMessageAge(props: cloudwatch.MetricOptions = {}): cloudwatch.Metric {
    return oldestMessageAge(this.notificationQueue, props);
  }

  public metricMessagesVisible(props: cloudwatch.MetricOptions = {}): cloudwatch.Metric {
    return messagesVisible(this.notificationQueue, props);
  }
}

/** `NotificationPipeline.fromPipelineAttributes()`. */
export function importPipeline(scope: Construct, id: string, attrs: NotificationPipelineAttributes): INotificationPipeline {
  return new ImportedNotificationPipeline(scope, id, attrs);
}
