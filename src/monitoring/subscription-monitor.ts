import { createHash } from 'crypto';
import * as path from 'path';
import { Duration, Lazy, RemovalPolicy, Stack } from 'aws-cdk-lib';
import * as cloudwatch from 'aws-cdk-lib/aws-cloudwatch';
import * as events from 'aws-cdk-lib/aws-events';
import * as targets from 'aws-cdk-lib/aws-events-targets';
import * as iam from 'aws-cdk-lib/aws-iam';
import * as lambda from 'aws-cdk-lib/aws-lambda';
import * as logs from 'aws-cdk-lib/aws-logs';
import * as sns from 'aws-cdk-lib/aws-sns';
import { Construct } from 'constructs';
import { notifyOrAcknowledge } from '../alarm-actions';
import { BOUND_RUN_ENV } from '../contract';
import { invalidIdentitiesAlarm, invalidIdentitiesMetric } from './identity-health';
import { acknowledgeMonitor } from './monitor-nag';
import { MonitorSource } from './monitor-source';
import { acknowledge } from '../connection/nag';
import { HANDLER_RUNTIME } from '../connection/provider';
import { IServiceConnection } from '../connection/service-connection-ref';
import { invalid } from '../connection/validation';
import { NotificationPipeline } from '../kinds/notification-pipeline/construct';
import { ISubscription } from '../kinds/subscription/construct';
import { MONITOR_METRICS_NAMESPACE, subscriptionMetric } from '../kinds/subscription/construct-metrics';
import type { NotificationPipelineFleet } from '../notifications/notification-pipeline-fleet';
import { NotificationDelivery } from '../notifications/notification-type';

/** The namespace of the monitor's metrics. */
export const SUBSCRIPTION_MONITOR_NAMESPACE = MONITOR_METRICS_NAMESPACE;

/**
 * Properties of a `SubscriptionMonitor`.
 */
export interface SubscriptionMonitorProps {
  /** Connection to the service (the monitor reads the refresh token secret at run time). */
  readonly connection: IServiceConnection;

  /**
   * Subscriptions to monitor; more with `addSubscription()`.
   *
   * @default - none
   */
  readonly subscriptions?: ISubscription[];

  /**
   * Where each run reads the subscriptions' health from. `MonitorSource.TRANSACTIONS`: every transaction record of
   * each subscription in the three-day window, classified as `dpi status` does (an ERROR record counts until it ages
   * out or is retried; fresh = an attribution date loaded); one call per page of 200 records per subscription.
   * `MonitorSource.HEALTHCHECKS`: the account's healthchecks listing once per run (the latest status per subscription
   * and payload: a later OK run clears an ERROR, a run with no new data counts as fresh, no in-progress count),
   * one call per 100 records of the whole account, falling back to transactions for a subscription the listing has
   * no record of and where the service does not serve it (404) or it fails. Both are far under the service's 1,000
   * requests per 5 minutes at the default interval; docs/constructs.md compares them metric by metric.
   *
   * @default MonitorSource.TRANSACTIONS
   */
  readonly source?: MonitorSource;

  /**
   * How often the monitor runs. Each run makes one token exchange (per warm container) and the calls of its
   * `source`.
   *
   * @default Duration.minutes(15)
   */
  readonly interval?: Duration;

  /**
   * The freshness alarm fires when the subscription's `FreshnessHours` is above this: with `MonitorSource.TRANSACTIONS`,
   * the hours since the end of its newest loaded attribution date; with `MonitorSource.HEALTHCHECKS`, the hours since
   * its newest OK healthcheck.
   *
   * @default Duration.hours(36)
   */
  readonly freshnessThreshold?: Duration;

  /**
   * A topic every alarm of the monitor notifies (alarm and OK).
   *
   * @default - no alarm action (add your own through `alarms`)
   */
  readonly alarmTopic?: sns.ITopic;

  /**
   * Create a CloudWatch dashboard with a row per monitored subscription.
   *
   * @default true
   */
  readonly dashboard?: boolean;

  /**
   * Name of the dashboard.
   *
   * @default - `<stack name>-data-pipeline-integration`
   */
  readonly dashboardName?: string;

  /**
   * Add the monitor's rows to this dashboard instead of creating one (`dashboard` and `dashboardName` then do not
   * apply). `DpiMonitoring` uses it to keep one dashboard.
   *
   * @default - a dashboard of the monitor's own (when `dashboard` is not false)
   */
  readonly existingDashboard?: cloudwatch.Dashboard;
}

/** Options of `SubscriptionMonitor.addSubscription()`. */
export interface MonitoredSubscriptionOptions {
  /**
   * Label in the dashboard and the alarm descriptions.
   *
   * @default - the construct path of the subscription
   */
  readonly label?: string;

  /**
   * Freshness threshold of this subscription.
   *
   * @default - the monitor's `freshnessThreshold`
   */
  readonly freshnessThreshold?: Duration;
}

/** Options of `SubscriptionMonitor.addPipeline()`. */
export interface MonitoredPipelineOptions {
  /**
   * Label of the pipeline's row.
   *
   * @default - the construct path of the pipeline
   */
  readonly label?: string;
}

/** The alarms of one monitored subscription. */
export interface MonitoredSubscriptionAlarms {
  /** Something of the subscription in ERROR: a record in ERROR (transactions), or a payload whose latest healthcheck is ERROR (healthchecks). */
  readonly errors: cloudwatch.Alarm;
  /** `FreshnessHours` above the threshold: no loaded attribution date (transactions) or no OK healthcheck (healthchecks) recently enough. */
  readonly freshness: cloudwatch.Alarm;
  /** The monitor could not read the subscription's records. */
  readonly monitorFailed: cloudwatch.Alarm;
}

const monitors = new WeakMap<Stack, string>();

/**
 * Is my data arriving? One scheduled Lambda per stack reads the transaction records of every monitored subscription
 * (the service's three-day window, every page), classifies them exactly as `dpi status` does and publishes, per
 * subscription and per payload, `ErrorRecords`, `InProgressRecords` and `FreshnessHours` (age of the newest loaded
 * attribution date) in CloudWatch embedded metric format (no PutMetricData). With `source:
 * MonitorSource.HEALTHCHECKS` it reads the account's healthchecks listing once per run instead (cheaper, but it
 * measures the latest run of each payload, not every record: see `MonitorSource`). Each subscription gets an error alarm,
 * a freshness alarm and a monitor-failure alarm; the function has an alarm on its own errors; a dashboard shows a
 * row per subscription and, with `addPipeline()`, per notification pipeline.
 *
 * A subscription's alarms are named after the subscription (its construct ID and a hash of its construct path), so
 * adding or removing another subscription keeps them. Upgrading from a release that numbered them by insertion order
 * (`Errors1`, ...) replaces the existing monitor alarms once (docs/constructs.md, "SubscriptionMonitor").
 *
 * @example
 * declare const connection: ServiceConnection;
 * declare const orders: Subscription;
 * declare const topic: sns.ITopic;
 *
 * const monitor = new SubscriptionMonitor(this, 'Monitor', { connection, alarmTopic: topic });
 * monitor.addSubscription(orders, { label: 'orders-us', freshnessThreshold: Duration.hours(30) });
 */
export class SubscriptionMonitor extends Construct {
  /** The scheduled function. */
  public readonly function: lambda.Function;
  /** The schedule. */
  public readonly rule: events.Rule;
  /** The alarm on the function's own errors (a run that crashed). */
  public readonly functionErrorsAlarm: cloudwatch.Alarm;
  /** The dashboard (`existingDashboard`, or its own when `dashboard` is not false). */
  public readonly dashboard?: cloudwatch.Dashboard;

  private readonly freshnessThreshold: Duration;
  private readonly topic?: sns.ITopic;
  private readonly healthchecks: boolean;
  private readonly entries: Array<{ subscription: ISubscription; label: string; alarms: MonitoredSubscriptionAlarms }> = [];
  private readonly identities = new Set<string>();
  private identitiesAlarm?: cloudwatch.Alarm;

  constructor(scope: Construct, id: string, props: SubscriptionMonitorProps) {
    super(scope, id);
    const stack = Stack.of(this);
    const first = monitors.get(stack);
    if (first !== undefined) {
      throw new Error(`${this.node.path}: a second SubscriptionMonitor in stack ${stack.stackName} (the first is '${first}'); `
        + 'one scheduled function per stack monitors every subscription: add the subscriptions to the first');
    }
    monitors.set(stack, this.node.path);
    const interval = props.interval ?? Duration.minutes(15);
    if (interval.toMinutes({ integral: false }) < 1) {
      throw invalid(this, 'interval', interval.toHumanString(), 'is shorter than a minute', 'use Duration.minutes(1) or longer');
    }
    this.freshnessThreshold = props.freshnessThreshold ?? Duration.hours(36);
    this.topic = props.alarmTopic;
    const source = props.source ?? MonitorSource.TRANSACTIONS;
    if (!Object.values(MonitorSource).includes(source)) {
      throw invalid(this, 'source', String(source), 'is not a MonitorSource', 'use MonitorSource.TRANSACTIONS or MonitorSource.HEALTHCHECKS');
    }
    this.healthchecks = source === MonitorSource.HEALTHCHECKS;

    // Only when asked: the default input (transactions) stays what it was before the choice existed.
    const run = {
      Connection: props.connection._connectionProperties(),
      Namespace: SUBSCRIPTION_MONITOR_NAMESPACE,
      ...(this.healthchecks ? { Source: MonitorSource.HEALTHCHECKS } : {}),
    };
    const logGroup = new logs.LogGroup(this, 'Logs', { retention: logs.RetentionDays.ONE_MONTH, removalPolicy: RemovalPolicy.DESTROY });
    const role = new iam.Role(this, 'Role', {
      assumedBy: new iam.ServicePrincipal('lambda.amazonaws.com'),
      description: 'Data pipeline integration subscription monitor',
    });
    logGroup.grantWrite(role);
    props.connection.refreshToken.grantRead(role);
    this.function = new lambda.Function(this, 'Function', {
      code: lambda.Code.fromAsset(path.join(__dirname, '..', '..', 'assets', 'handler', 'index')),
      handler: 'index.monitor',
      runtime: HANDLER_RUNTIME,
      architecture: lambda.Architecture.ARM_64,
      memorySize: 256,
      timeout: Duration.minutes(5),
      role,
      logGroup,
      description: 'Data pipeline integration subscription monitor (embedded metric format)',
      // The run its rule sends (all but the subscription list): any other run is refused before the secret is read.
      environment: { [BOUND_RUN_ENV]: stack.toJsonString(run) },
    });
    this.rule = new events.Rule(this, 'Schedule', { schedule: events.Schedule.rate(interval) });
    this.rule.addTarget(new targets.LambdaFunction(this.function, {
      event: events.RuleTargetInput.fromObject({
        Connection: run.Connection,
        // Resolved at synthesis, after every addSubscription().
        Subscriptions: Lazy.any({ produce: () => this.entries.map((e) => ({ id: e.subscription.subscriptionId, label: e.label })) }),
        Namespace: run.Namespace,
        ...(run.Source ? { Source: run.Source } : {}),
        // Only with identities (addPipeline, addFleet): the input of a monitor without them stays what it was.
        Identities: Lazy.any({ produce: () => (this.identities.size > 0 ? [...this.identities] : undefined) }),
        Monitor: Lazy.any({ produce: () => (this.identities.size > 0 ? this.node.path : undefined) }),
      }),
      retryAttempts: 0,
    }));
    this.functionErrorsAlarm = this.function.metricErrors({ period: Duration.minutes(15) }).createAlarm(this, 'FunctionErrors', {
      threshold: 1,
      evaluationPeriods: 1,
      comparisonOperator: cloudwatch.ComparisonOperator.GREATER_THAN_OR_EQUAL_TO_THRESHOLD,
      treatMissingData: cloudwatch.TreatMissingData.NOT_BREACHING,
      alarmDescription: `The subscription monitor of ${stack.stackName} failed a run (see its log group).`,
    });
    this.notify(this.functionErrorsAlarm);
    acknowledgeMonitor(this.function, logGroup, role);
    acknowledge(this.rule, 'Serverless-EventBusDLQ', 'A schedule: a run that could not be delivered is repeated by the next one (every interval); '
      + 'a dead-letter queue would keep stale triggers nothing needs.');

    if (props.existingDashboard || (props.dashboard ?? true)) {
      this.dashboard = props.existingDashboard ?? new cloudwatch.Dashboard(this, 'Dashboard', {
        dashboardName: props.dashboardName ?? `${stack.stackName}-data-pipeline-integration`,
      });
      this.dashboard.addWidgets(new cloudwatch.TextWidget({
        markdown: this.healthchecks
          ? '# Data pipeline integration\nOne row per monitored subscription, from the account\'s healthchecks listing: its payloads '
            + 'whose latest healthcheck is ERROR, the hours since its newest OK healthcheck, and its alarms.'
          : '# Data pipeline integration\nOne row per monitored subscription: its records as `dpi status` classifies them '
            + '(in ERROR, in progress), the hours since its newest loaded attribution date, and its alarms.',
        width: 18,
        height: 2,
      }), new cloudwatch.AlarmStatusWidget({ title: 'Monitor runs', alarms: [this.functionErrorsAlarm], width: 6, height: 2 }));
    }
    for (const s of props.subscriptions ?? []) this.addSubscription(s);
  }

  /** Monitor a subscription: its metrics are published from the next run on; returns its three alarms. */
  public addSubscription(subscription: ISubscription, options: MonitoredSubscriptionOptions = {}): MonitoredSubscriptionAlarms {
    if (this.entries.some((e) => e.subscription === subscription)) {
      throw invalid(this, 'addSubscription', subscription.node.path, 'is monitored already', 'add each subscription once');
    }
    const label = options.label ?? subscription.node.path;
    const threshold = (options.freshnessThreshold ?? this.freshnessThreshold).toHours({ integral: false });
    // Named after the subscription, not its position: adding or removing another subscription keeps these alarms.
    const key = alarmKey(subscription);
    const errors = this.metricErrorRecords(subscription).createAlarm(this, `Errors-${key}`, {
      threshold: 1,
      evaluationPeriods: 1,
      comparisonOperator: cloudwatch.ComparisonOperator.GREATER_THAN_OR_EQUAL_TO_THRESHOLD,
      treatMissingData: cloudwatch.TreatMissingData.NOT_BREACHING,
      alarmDescription: this.healthchecks
        ? `${label}: a payload whose latest healthcheck is ERROR (dpi status shows them).`
        : `${label}: records in ERROR (dpi status --subscription <id> shows them).`,
    });
    const freshness = this.metricFreshnessHours(subscription).createAlarm(this, `Freshness-${key}`, {
      threshold,
      evaluationPeriods: 1,
      comparisonOperator: cloudwatch.ComparisonOperator.GREATER_THAN_THRESHOLD,
      treatMissingData: cloudwatch.TreatMissingData.NOT_BREACHING,
      alarmDescription: this.healthchecks
        ? `${label}: no OK healthcheck in the last ${threshold} hours.`
        : `${label}: no attribution date loaded in the last ${threshold} hours.`,
    });
    const monitorFailed = this.metricMonitorFailed(subscription).createAlarm(this, `MonitorFailed-${key}`, {
      threshold: 1,
      evaluationPeriods: 2,
      comparisonOperator: cloudwatch.ComparisonOperator.GREATER_THAN_OR_EQUAL_TO_THRESHOLD,
      treatMissingData: cloudwatch.TreatMissingData.NOT_BREACHING,
      alarmDescription: `${label}: the monitor could not read the subscription's transactions twice in a row.`,
    });
    for (const a of [errors, freshness, monitorFailed]) this.notify(a);
    const alarms = { errors, freshness, monitorFailed };
    this.entries.push({ subscription, label, alarms });
    this.dashboard?.addWidgets(
      new cloudwatch.GraphWidget({
        title: `${label}: records`,
        left: [this.metricErrorRecords(subscription, { label: 'in ERROR' }), this.metricInProgressRecords(subscription, { label: 'in progress' })],
        width: 9,
        height: 6,
      }),
      new cloudwatch.GraphWidget({
        title: `${label}: hours since the newest loaded date`,
        left: [this.metricFreshnessHours(subscription, { label: 'freshness' })],
        leftAnnotations: [{ value: threshold, label: 'alarm', color: cloudwatch.Color.RED }],
        width: 9,
        height: 6,
      }),
      new cloudwatch.AlarmStatusWidget({ title: `${label}: alarms`, alarms: [errors, freshness, monitorFailed], width: 6, height: 6 }),
    );
    return alarms;
  }

  /**
   * Add a row for a notification pipeline to the dashboard: its object-notification queue (oldest message, messages
   * waiting) and, with a queue notification type, its delivery stream (successful deliveries, delivery delay).
   * Alarms on them: `pipeline.addAlarms()`.
   */
  public addPipeline(pipeline: NotificationPipeline, options: MonitoredPipelineOptions = {}): void {
    this.watchIdentities([pipeline]);
    if (!this.dashboard) return;
    const label = options.label ?? pipeline.node.path;
    const hasStream = pipeline.notificationTypes.some((t) => t.delivery === NotificationDelivery.QUEUE);
    this.dashboard.addWidgets(
      new cloudwatch.GraphWidget({
        title: `${label}: notification queue`,
        left: [pipeline.metricOldestMessageAge({ label: 'oldest message (s)' })],
        right: [pipeline.metricMessagesVisible({ label: 'messages waiting' })],
        width: hasStream ? 12 : 24,
        height: 6,
      }),
      ...(hasStream ? [new cloudwatch.GraphWidget({
        title: `${label}: delivery to the bucket`,
        left: [pipeline.metricDeliveryToS3Success({ label: 'success' })],
        right: [pipeline.metricDeliveryToS3DataFreshness({ label: 'delay (s)' })],
        width: 12,
        height: 6,
      })] : []),
    );
  }

  /**
   * Count the fleet's identities in `InvalidIdentities` (no dashboard row per pipeline: the fleet's own alarms and
   * dashboard row are `fleet.addAlarms()`). Returns the monitor's one alarm on invalid identities.
   */
  public addFleet(fleet: NotificationPipelineFleet): cloudwatch.Alarm {
    return this.watchIdentities(fleet.pipelines);
  }

  /**
   * The one alarm on the app's invalid identities (`InvalidIdentities` >= 1), created by the first `addPipeline()` or
   * `addFleet()`; undefined without pipelines.
   */
  public get invalidIdentitiesAlarm(): cloudwatch.Alarm | undefined {
    return this.identitiesAlarm;
  }

  /**
   * The number of identities of the pipelines added with `addPipeline()` and `addFleet()` that the service marks invalid
   * (`invalid_identity` 1: the seller revoked access or its token expired), one value per run, dimension `Monitor` = this
   * construct's path (maximum over 15 minutes). Needs the vendor read field: not published where the reads lack it.
   */
  public metricInvalidIdentities(props: cloudwatch.MetricOptions = {}): cloudwatch.Metric {
    return invalidIdentitiesMetric(SUBSCRIPTION_MONITOR_NAMESPACE, this.node.path, props);
  }

  private watchIdentities(pipelines: NotificationPipeline[]): cloudwatch.Alarm {
    for (const p of pipelines) this.identities.add(String(p.remoteIdentityId));
    if (!this.identitiesAlarm) {
      this.identitiesAlarm = invalidIdentitiesAlarm(this, this.metricInvalidIdentities(), () => this.identities.size);
      this.notify(this.identitiesAlarm);
      this.dashboard?.addWidgets(new cloudwatch.AlarmStatusWidget({ title: 'Remote identities', alarms: [this.identitiesAlarm], width: 6, height: 2 }));
    }
    return this.identitiesAlarm;
  }

  /** Records in ERROR (transactions), or payloads whose latest healthcheck is ERROR (healthchecks) (maximum over 15 minutes). */
  public metricErrorRecords(subscription: ISubscription, props: cloudwatch.MetricOptions = {}): cloudwatch.Metric {
    return this.metric('ErrorRecords', subscription, props);
  }

  /** Records still in progress or retrying; published only for a subscription read from transactions (maximum over 15 minutes). */
  public metricInProgressRecords(subscription: ISubscription, props: cloudwatch.MetricOptions = {}): cloudwatch.Metric {
    return this.metric('InProgressRecords', subscription, props);
  }

  /**
   * Hours since the end of the newest loaded attribution date (transactions), or since the newest OK healthcheck
   * (healthchecks); 72, the transactions' window, when none.
   */
  public metricFreshnessHours(subscription: ISubscription, props: cloudwatch.MetricOptions = {}): cloudwatch.Metric {
    return this.metric('FreshnessHours', subscription, props);
  }

  /** 1 when the monitor could not read the subscription's transactions in a run. */
  public metricMonitorFailed(subscription: ISubscription, props: cloudwatch.MetricOptions = {}): cloudwatch.Metric {
    return this.metric('MonitorFailed', subscription, props);
  }

  private metric(name: string, subscription: ISubscription, props: cloudwatch.MetricOptions): cloudwatch.Metric {
    return subscriptionMetric(name, subscription.subscriptionId, props);
  }

  private notify(alarm: cloudwatch.Alarm): void {
    notifyOrAcknowledge(alarm, this.topic);
  }

}

/**
 * The stable part of the construct IDs of a subscription's alarms: its construct ID (letters and digits) and a hash
 * of its construct path, so that two subscriptions with the same ID under different scopes do not collide and the
 * key does not depend on the other monitored subscriptions.
 */
function alarmKey(subscription: ISubscription): string {
  const readable = subscription.node.id.replace(/[^A-Za-z0-9]/g, '').slice(0, 48);
  const hash = createHash('sha256').update(subscription.node.path).digest('hex').slice(0, 8);
  return `${readable}-${hash}`;
}
