import { Duration, Stack } from 'aws-cdk-lib';
import * as cloudwatch from 'aws-cdk-lib/aws-cloudwatch';
import * as sns from 'aws-cdk-lib/aws-sns';
import { Construct } from 'constructs';
import { DriftMonitor } from './drift-monitor';
import { MonitorSource } from './monitor-source';
import { MonitoredSubscriptionOptions, SubscriptionMonitor } from './subscription-monitor';
import { IServiceConnection } from '../connection/service-connection-ref';
import { invalid } from '../connection/validation';
import type { NotificationPipeline } from '../kinds/notification-pipeline/construct';
import type { NotificationPipelineAlarmThresholds } from '../kinds/notification-pipeline/construct-props';
import type { ISubscription } from '../kinds/subscription/construct';
import type { FleetMonitoringOptions } from '../notifications/fleet-alarms';
import type { NotificationPipelineFleet } from '../notifications/notification-pipeline-fleet';

/** Properties of a `DpiMonitoring`. */
export interface DpiMonitoringProps {
  /** Connection to the service (the subscription monitor and the drift check read its secret at run time). */
  readonly connection: IServiceConnection;

  /**
   * The one topic every alarm of the facade notifies (alarm and OK): subscriptions, pipelines, fleets, drift, and the
   * monitors' own failures.
   *
   * @default - no alarm action: the alarms show their state on the dashboard (add actions through `createdAlarms()`)
   */
  readonly alarmTopic?: sns.ITopic;

  /**
   * Create the one CloudWatch dashboard every `monitorX()` adds its rows to.
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
   * Where the subscription monitor reads the subscriptions' health from (`SubscriptionMonitorProps.source`).
   *
   * @default MonitorSource.TRANSACTIONS
   */
  readonly subscriptionSource?: MonitorSource;

  /**
   * How often the subscription monitor runs (`SubscriptionMonitorProps.interval`).
   *
   * @default Duration.minutes(15)
   */
  readonly subscriptionInterval?: Duration;

  /**
   * The freshness threshold of the subscriptions (`SubscriptionMonitorProps.freshnessThreshold`); one subscription's
   * own is given to `monitorSubscription()`.
   *
   * @default Duration.hours(36)
   */
  readonly freshnessThreshold?: Duration;
}

/** Options of `DpiMonitoring.monitorPipeline()`. */
export interface PipelineMonitoringOptions extends NotificationPipelineAlarmThresholds {
  /**
   * Label of the pipeline's dashboard row.
   *
   * @default - the construct path of the pipeline
   */
  readonly label?: string;
}

/** Options of `DpiMonitoring.monitorDrift()`. */
export interface DriftMonitoringOptions {
  /**
   * How often the stack's resources are checked (`DriftMonitorProps.interval`).
   *
   * @default Duration.hours(1)
   */
  readonly interval?: Duration;
}

/**
 * The one entry point of the library's monitoring: one alarm topic, one dashboard, and a `monitorX()` per thing to
 * watch, each built over the construct that owns the alarms (`SubscriptionMonitor`, `NotificationPipeline.addAlarms()`,
 * `NotificationPipelineFleet.addAlarms()`, `DriftMonitor`), so the alarms are the same as theirs.
 *
 * The scheduled functions are made on first need: the subscription monitor by the first `monitorSubscription()`,
 * `monitorPipeline()` or `monitorFleet()` (it also counts the pipelines' invalid identities), the drift check by
 * `monitorDrift()`. Like the constructs it builds on, it is one per stack: a `SubscriptionMonitor` or `DriftMonitor`
 * declared beside it in the same stack is a synth error.
 *
 * @example
 * declare const connection: ServiceConnection;
 * declare const orders: Subscription;
 * declare const pipeline: NotificationPipeline;
 * declare const topic: sns.ITopic;
 *
 * new DpiMonitoring(this, 'Monitoring', { connection, alarmTopic: topic })
 *   .monitorSubscription(orders, { freshnessThreshold: Duration.hours(30) })
 *   .monitorPipeline(pipeline)
 *   .monitorDrift();
 */
export class DpiMonitoring extends Construct {
  /** The dashboard (when `dashboard` is not false). */
  public readonly dashboard?: cloudwatch.Dashboard;

  private readonly props: DpiMonitoringProps;
  private subscriptions?: SubscriptionMonitor;
  private drift?: DriftMonitor;
  private readonly alarms: cloudwatch.Alarm[] = [];
  private readonly pipelines = new Set<NotificationPipeline>();

  constructor(scope: Construct, id: string, props: DpiMonitoringProps) {
    super(scope, id);
    if (props.connection === undefined || props.connection === null) {
      throw invalid(this, 'connection', props.connection, 'is missing', 'pass the ServiceConnection of the monitored resources');
    }
    this.props = props;
    if (props.dashboard ?? true) {
      this.dashboard = new cloudwatch.Dashboard(this, 'Dashboard', {
        dashboardName: props.dashboardName ?? `${Stack.of(this).stackName}-data-pipeline-integration`,
      });
    }
  }

  /** The subscription monitor, once a subscription, pipeline or fleet is monitored. */
  public get subscriptionMonitor(): SubscriptionMonitor | undefined {
    return this.subscriptions;
  }

  /** The drift check, once `monitorDrift()` was called. */
  public get driftMonitor(): DriftMonitor | undefined {
    return this.drift;
  }

  /** Every alarm the facade made so far (a new array), e.g. to add another action or a composite alarm. */
  public createdAlarms(): cloudwatch.Alarm[] {
    return [...this.alarms];
  }

  /**
   * Monitor a subscription (`SubscriptionMonitor.addSubscription()`): errors, freshness and monitor failure alarms,
   * and its dashboard row.
   */
  public monitorSubscription(subscription: ISubscription, options: MonitoredSubscriptionOptions = {}): DpiMonitoring {
    const alarms = this.subscriptionMonitorOrNew().addSubscription(subscription, options);
    this.alarms.push(alarms.errors, alarms.freshness, alarms.monitorFailed);
    return this;
  }

  /**
   * Monitor a notification pipeline: its alarms (`NotificationPipeline.addAlarms()`: oldest queue message, and with a
   * queue notification type deliveries failing and late), its dashboard row and its identity in the invalid-identities
   * alarm. For the pipelines of a fleet, use `monitorFleet()`.
   */
  public monitorPipeline(pipeline: NotificationPipeline, options: PipelineMonitoringOptions = {}): DpiMonitoring {
    if (this.pipelines.has(pipeline)) {
      throw invalid(this, 'monitorPipeline', pipeline.node.path, 'is monitored already', 'monitor each pipeline once');
    }
    this.pipelines.add(pipeline);
    const monitor = this.subscriptionMonitorOrNew();
    monitor.addPipeline(pipeline, { label: options.label });
    this.identitiesAlarm(monitor);
    const alarms = pipeline.addAlarms({
      maxMessageAge: options.maxMessageAge,
      maxDeliveryDelay: options.maxDeliveryDelay,
      alarmTopic: this.props.alarmTopic,
    });
    this.alarms.push(...alarms);
    this.dashboard?.addWidgets(new cloudwatch.AlarmStatusWidget({
      title: `${options.label ?? pipeline.node.path}: alarms`, alarms, width: 24, height: 2,
    }));
    return this;
  }

  /**
   * Monitor a fleet: its alarms and dashboard row (`NotificationPipelineFleet.addAlarms()`, Metrics Insights over
   * every queue and delivery stream; per identity with `perIdentity`) and its identities in the invalid-identities
   * alarm.
   */
  public monitorFleet(fleet: NotificationPipelineFleet, options: FleetMonitoringOptions = {}): DpiMonitoring {
    const monitor = this.subscriptionMonitorOrNew();
    const alarms = fleet.addAlarms({ ...options, alarmTopic: this.props.alarmTopic, dashboard: this.dashboard });
    monitor.addFleet(fleet);
    this.identitiesAlarm(monitor);
    this.alarms.push(...alarms);
    return this;
  }

  /**
   * Check the stack's resources for drift (`DriftMonitor`): drifted resources, a check that could not run and the
   * function's own errors, and a dashboard row. Once per stack.
   */
  public monitorDrift(options: DriftMonitoringOptions = {}): DpiMonitoring {
    if (this.drift) {
      throw invalid(this, 'monitorDrift', '(second call)', 'was already called', 'call monitorDrift() once: one check covers every resource of the stack');
    }
    const drift = new DriftMonitor(this, 'Drift', {
      connection: this.props.connection, interval: options.interval, alarmTopic: this.props.alarmTopic,
    });
    this.drift = drift;
    const alarms = [drift.driftAlarm, drift.checkFailedAlarm, drift.functionErrorsAlarm];
    this.alarms.push(...alarms);
    this.dashboard?.addWidgets(
      new cloudwatch.GraphWidget({
        title: 'Drift: resources changed behind the stack\'s back',
        left: [drift.metricDriftedResources({ label: 'drifted resources' })],
        right: [drift.metricDriftCheckFailed({ label: 'check failed' })],
        width: 18,
        height: 6,
      }),
      new cloudwatch.AlarmStatusWidget({ title: 'Drift: alarms', alarms, width: 6, height: 6 }),
    );
    return this;
  }

  private subscriptionMonitorOrNew(): SubscriptionMonitor {
    if (!this.subscriptions) {
      this.subscriptions = new SubscriptionMonitor(this, 'Subscriptions', {
        connection: this.props.connection,
        source: this.props.subscriptionSource,
        interval: this.props.subscriptionInterval,
        freshnessThreshold: this.props.freshnessThreshold,
        alarmTopic: this.props.alarmTopic,
        dashboard: this.dashboard !== undefined,
        existingDashboard: this.dashboard,
      });
      this.alarms.push(this.subscriptions.functionErrorsAlarm);
    }
    return this.subscriptions;
  }

  /** The monitor's one invalid-identities alarm, counted once. */
  private identitiesAlarm(monitor: SubscriptionMonitor): void {
    const alarm = monitor.invalidIdentitiesAlarm;
    if (alarm && !this.alarms.includes(alarm)) this.alarms.push(alarm);
  }
}
