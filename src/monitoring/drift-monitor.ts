import * as path from 'path';
import { Aspects, Aws, Duration, IAspect, NestedStack, RemovalPolicy, Stack } from 'aws-cdk-lib';
import * as cloudwatch from 'aws-cdk-lib/aws-cloudwatch';
import * as events from 'aws-cdk-lib/aws-events';
import * as targets from 'aws-cdk-lib/aws-events-targets';
import * as iam from 'aws-cdk-lib/aws-iam';
import * as lambda from 'aws-cdk-lib/aws-lambda';
import * as logs from 'aws-cdk-lib/aws-logs';
import * as sns from 'aws-cdk-lib/aws-sns';
import { Construct, IConstruct } from 'constructs';
import { notifyOrAcknowledge } from '../alarm-actions';
import { SUBSCRIPTION_MONITOR_NAMESPACE } from './subscription-monitor';
import { acknowledge, acknowledgeCompliance } from '../connection/nag';
import { HANDLER_RUNTIME } from '../connection/provider';
import { IServiceConnection } from '../connection/service-connection-ref';
import { invalid } from '../connection/validation';
import { BOUND_RUN_ENV, DECLARED_JOURNAL_TABLES_ENV, PROVIDED_JOURNAL_TABLES_ENV } from '../contract';

/**
 * Properties of a `DriftMonitor`.
 */
export interface DriftMonitorProps {
  /** Connection to the service (the check reads the refresh token secret at run time and uses its journal table). */
  readonly connection: IServiceConnection;

  /**
   * How often the stack's resources are checked. Each run makes one token exchange (per warm container), one
   * CloudFormation call per page of 100 resources, one journal query and one or two service reads per `Custom::Dpi*`
   * resource, and one stored-parameter read per 100 subscriptions and pipelines (where the service serves it).
   *
   * @default Duration.hours(1)
   */
  readonly interval?: Duration;

  /**
   * A topic every alarm of the monitor notifies (alarm and OK).
   *
   * @default - no alarm action (add your own to the alarms)
   */
  readonly alarmTopic?: sns.ITopic;
}

const driftMonitors = new WeakMap<Stack, string>();

/**
 * Drift in the cloud: one scheduled function per stack lists the stack's own resources (CloudFormation
 * `ListStackResources` on its ARN) and those of its nested stacks, recursively (a `NotificationPipelineFleet`'s
 * pipelines; their journal keys from the nested templates, `GetTemplate`; the role may read the stacks named
 * `<stack name>-*`, the names CloudFormation gives nested stacks), checks every `Custom::Dpi*` resource exactly as `dpi drift` does (the state the
 * handler applied at the last deploy, from the lifecycle journal, against what the service's reads show) and publishes
 * `DriftedResources` and `DriftCheckFailed` (dimension `StackName`) in CloudWatch embedded metric format. An alarm fires
 * when a resource drifted, another when a check could not run, and one on the function's own errors. It reuses the
 * bundled handler code and the stack's connection; it makes no changing call.
 *
 * What it can see is what the service's reads show: under the interface specification a subscription's status (paused
 * or invalidated behind the stack's back), a history request's status (cancelled) and a job listing's IDs; see
 * docs/handler.md ("Drift").
 *
 * @example
 * declare const connection: ServiceConnection;
 * declare const topic: sns.ITopic;
 *
 * new DriftMonitor(this, 'Drift', { connection, interval: Duration.hours(6), alarmTopic: topic });
 */
export class DriftMonitor extends Construct {
  /** The scheduled function (`index.drift` of the bundled handler). */
  public readonly function: lambda.Function;
  /** The schedule. */
  public readonly rule: events.Rule;
  /** At least one resource of the stack drifted (the latest run). */
  public readonly driftAlarm: cloudwatch.Alarm;
  /** The check could not run (connection, journal or CloudFormation failure) twice in a row. */
  public readonly checkFailedAlarm: cloudwatch.Alarm;
  /** The function itself failed a run. */
  public readonly functionErrorsAlarm: cloudwatch.Alarm;

  private readonly stackName: string;
  private readonly period: Duration;

  constructor(scope: Construct, id: string, props: DriftMonitorProps) {
    super(scope, id);
    const stack = Stack.of(this);
    const first = driftMonitors.get(stack);
    if (first !== undefined) {
      throw new Error(`${this.node.path}: a second DriftMonitor in stack ${stack.stackName} (the first is '${first}'); `
        + 'one scheduled check per stack covers every resource of the stack');
    }
    driftMonitors.set(stack, this.node.path);
    const interval = props.interval ?? Duration.hours(1);
    const minutes = interval.toMinutes({ integral: false });
    if (minutes < 5 || minutes > 12 * 60) {
      throw invalid(this, 'interval', interval.toHumanString(), 'is outside 5 minutes to 12 hours', 'use Duration.minutes(5) to Duration.hours(12) (the failure alarm spans two intervals)');
    }
    this.stackName = stack.stackName;
    this.period = interval;

    const logGroup = new logs.LogGroup(this, 'Logs', { retention: logs.RetentionDays.ONE_MONTH, removalPolicy: RemovalPolicy.DESTROY });
    const role = new iam.Role(this, 'Role', {
      assumedBy: new iam.ServicePrincipal('lambda.amazonaws.com'),
      description: 'Data pipeline integration drift check',
    });
    logGroup.grantWrite(role);
    props.connection.refreshToken.grantRead(role);
    role.addToPrincipalPolicy(new iam.PolicyStatement({
      sid: 'ListOwnStackResources',
      actions: ['cloudformation:ListStackResources'],
      resources: [stack.stackId],
    }));
    // Its nested stacks (a NotificationPipelineFleet's), each by its own stack ID: a stack of the account that is merely
    // named like one (`<stack>-...`) is not readable. Nested stacks may be added after the monitor: an aspect names
    // them at synth.
    Aspects.of(stack).add(new NestedStackReads(stack, role));
    const journalTable = props.connection.journalTable;
    // A declared journal is checked as the provider checks it (tag, deletion protection, write fence) before its
    // records are believed: planted records would make false drift reports.
    const declared = props.connection.journal !== undefined;
    role.addToPrincipalPolicy(new iam.PolicyStatement({
      sid: 'ReadLifecycleJournal',
      actions: ['dynamodb:DescribeTable', 'dynamodb:Query', ...(declared ? ['dynamodb:ListTagsOfResource', 'dynamodb:GetResourcePolicy'] : [])],
      // A supplied table (`journalTable`) by its own ARN (it may be imported from elsewhere); else the named table of this account and region.
      resources: [journalTable?.tableArn ?? stack.formatArn({ service: 'dynamodb', resource: 'table', resourceName: props.connection.journalTableName })],
    }));
    journalTable?.encryptionKey?.grantDecrypt(role);
    const run = { Connection: props.connection._connectionProperties(), StackId: Aws.STACK_ID, Namespace: SUBSCRIPTION_MONITOR_NAMESPACE };
    this.function = new lambda.Function(this, 'Function', {
      code: lambda.Code.fromAsset(path.join(__dirname, '..', '..', 'assets', 'handler', 'index')),
      handler: 'index.drift',
      runtime: HANDLER_RUNTIME,
      architecture: lambda.Architecture.ARM_64,
      memorySize: 256,
      timeout: Duration.minutes(10),
      role,
      logGroup,
      description: 'Data pipeline integration drift check (embedded metric format)',
      // The run its rule sends: any other run is refused before the secret is read.
      environment: {
        [BOUND_RUN_ENV]: stack.toJsonString(run),
        ...(declared ? {
          [DECLARED_JOURNAL_TABLES_ENV]: props.connection.journalTableName,
          [PROVIDED_JOURNAL_TABLES_ENV]: props.connection.journalTableName,
        } : {}),
      },
    });
    this.rule = new events.Rule(this, 'Schedule', { schedule: events.Schedule.rate(interval) });
    this.rule.addTarget(new targets.LambdaFunction(this.function, {
      event: events.RuleTargetInput.fromObject(run),
      retryAttempts: 0,
    }));

    this.driftAlarm = this.metricDriftedResources().createAlarm(this, 'Drifted', {
      threshold: 1,
      evaluationPeriods: 1,
      comparisonOperator: cloudwatch.ComparisonOperator.GREATER_THAN_OR_EQUAL_TO_THRESHOLD,
      treatMissingData: cloudwatch.TreatMissingData.NOT_BREACHING,
      alarmDescription: `${stack.stackName}: resources changed behind the stack's back (dpi drift --stack ${stack.stackName} lists them).`,
    });
    this.checkFailedAlarm = this.metricDriftCheckFailed().createAlarm(this, 'CheckFailed', {
      threshold: 1,
      evaluationPeriods: 2,
      comparisonOperator: cloudwatch.ComparisonOperator.GREATER_THAN_OR_EQUAL_TO_THRESHOLD,
      treatMissingData: cloudwatch.TreatMissingData.NOT_BREACHING,
      alarmDescription: `${stack.stackName}: the drift check could not run twice in a row (see its log group).`,
    });
    this.functionErrorsAlarm = this.function.metricErrors({ period: interval }).createAlarm(this, 'FunctionErrors', {
      threshold: 1,
      evaluationPeriods: 1,
      comparisonOperator: cloudwatch.ComparisonOperator.GREATER_THAN_OR_EQUAL_TO_THRESHOLD,
      treatMissingData: cloudwatch.TreatMissingData.NOT_BREACHING,
      alarmDescription: `The drift check of ${stack.stackName} failed a run (see its log group).`,
    });
    for (const a of [this.driftAlarm, this.checkFailedAlarm, this.functionErrorsAlarm]) notifyOrAcknowledge(a, props.alarmTopic);
    acknowledgeDriftCheck(this.function, logGroup, role);
    acknowledge(this.rule, 'Serverless-EventBusDLQ', 'A schedule: a run that could not be delivered is repeated by the next one (every interval); '
      + 'a dead-letter queue would keep stale triggers nothing needs.');
  }

  /** Resources of the stack that drifted in a run (maximum over the interval). */
  public metricDriftedResources(props: cloudwatch.MetricOptions = {}): cloudwatch.Metric {
    return this.metric('DriftedResources', props);
  }

  /** 1 when a run could not check the stack (maximum over the interval). */
  public metricDriftCheckFailed(props: cloudwatch.MetricOptions = {}): cloudwatch.Metric {
    return this.metric('DriftCheckFailed', props);
  }

  private metric(name: string, props: cloudwatch.MetricOptions): cloudwatch.Metric {
    return new cloudwatch.Metric({
      namespace: SUBSCRIPTION_MONITOR_NAMESPACE,
      metricName: name,
      dimensionsMap: { StackName: this.stackName },
      statistic: cloudwatch.Stats.MAXIMUM,
      period: this.period,
      ...props,
    });
  }
}

/**
 * Grants the drift check's role the reading of each nested stack of the monitored stack, at any depth, by its stack ID
 * (the `Ref` of its `AWS::CloudFormation::Stack` resource, passed up through the nested stacks between): one statement,
 * `ReadNestedStacks`, made when the first nested stack is visited; none for a stack without nested stacks.
 */
class NestedStackReads implements IAspect {
  private statement?: iam.PolicyStatement;
  constructor(private readonly stack: Stack, private readonly role: iam.IRole) {}

  public visit(node: IConstruct): void {
    if (!NestedStack.isNestedStack(node) || !this.nestedIn(node)) return;
    if (!this.statement) {
      this.statement = new iam.PolicyStatement({ sid: 'ReadNestedStacks', actions: ['cloudformation:ListStackResources', 'cloudformation:GetTemplate'] });
      this.role.addToPrincipalPolicy(this.statement);
    }
    this.statement.addResources(node.stackId);
  }

  /** True when `nested` lies under the monitored stack (its parent, or its parent's parent, ...). */
  private nestedIn(nested: NestedStack): boolean {
    for (let s: Stack | undefined = nested.nestedStackParent; s !== undefined; s = NestedStack.isNestedStack(s) ? s.nestedStackParent : undefined) {
      if (s === this.stack) return true;
    }
    return false;
  }
}

/** cdk-nag acknowledgements of the drift check's function, log group and role. */
function acknowledgeDriftCheck(fn: IConstruct, logGroup: IConstruct, role: IConstruct): void {
  acknowledgeCompliance(fn, 'LambdaDLQ', 'Invoked by its schedule: a failed run raises the FunctionErrors alarm and the next run repeats the check; a dead-letter queue would hold nothing to redeliver.');
  acknowledgeCompliance(fn, 'LambdaConcurrency', 'One run per interval; reserved concurrency would take capacity from the account for a function idle between runs.');
  acknowledgeCompliance(fn, 'LambdaInsideVPC', 'It calls the service\'s public HTTPS interface, Secrets Manager, CloudFormation and DynamoDB; nothing inside a VPC.');
  acknowledgeCompliance(logGroup, 'CloudWatchLogGroupEncrypted', 'Encrypted at rest with service-managed keys; the lines hold metrics and drift findings, no secret.');
  acknowledgeCompliance(role, 'IAMNoInlinePolicy', 'Grants made for this role alone (its log group, the refresh token secret, its own stack\'s resource list and the journal table).');
  acknowledge(fn, 'Serverless-LambdaDLQ', 'Invoked by its schedule: a failed run raises the FunctionErrors alarm and the next run repeats the check.');
  acknowledge(fn, 'Serverless-LambdaTracing', 'Every run and every service call is one JSON log line, next to the metric line.');
}
