import { Annotations, Duration, Stack, Token } from 'aws-cdk-lib';
import * as cloudwatch from 'aws-cdk-lib/aws-cloudwatch';
import * as sns from 'aws-cdk-lib/aws-sns';
import { Construct } from 'constructs';
import { NotificationDelivery } from './notification-type';
import { notifyOrAcknowledge } from '../alarm-actions';
import { invalid } from '../connection/validation';
import type { NotificationPipeline } from '../kinds/notification-pipeline/construct';

/**
 * What a fleet's alarms watch and how, shared by `NotificationPipelineFleet.addAlarms()` and
 * `DpiMonitoring.monitorFleet()` (which gives the alarm topic and the dashboard itself).
 */
export interface FleetMonitoringOptions {
  /**
   * Alarm when the oldest message of any queue watched by the fleet alarm is older than this (a consumer that
   * stopped). The same threshold is given to the per-identity alarms (`perIdentity`).
   *
   * @default Duration.hours(1)
   */
  readonly maxMessageAge?: Duration;

  /**
   * Alarm when records of any delivery stream watched by the fleet alarm wait longer than this before they reach the
   * bucket (only when an identity has a queue notification type). Also given to the per-identity alarms.
   *
   * @default Duration.minutes(15)
   */
  readonly maxDeliveryDelay?: Duration;

  /**
   * Create the two delivery-stream alarms (deliveries failing, deliveries late) besides the queue alarm.
   *
   * A Metrics Insights alarm is billed by the metrics its query analyzes (see docs/constructs.md, "Fleet
   * monitoring"): without the delivery alarms the fleet's alarms analyze the queues' metrics only.
   *
   * @default true
   */
  readonly deliveryAlarms?: boolean;

  /**
   * Also give every pipeline its own alarms (`NotificationPipeline.addAlarms()`): up to three alarms per identity,
   * in the identity's nested stack, each naming the identity's pipeline.
   *
   * @default false
   */
  readonly perIdentity?: boolean;

  /**
   * How many queues (and delivery streams) the top widgets of the dashboard row list (1 to 100).
   *
   * @default 10
   */
  readonly topCount?: number;
}

/** Options of `NotificationPipelineFleet.addAlarms()`. */
export interface NotificationPipelineFleetAlarmOptions extends FleetMonitoringOptions {
  /**
   * A topic the alarms notify (alarm and OK). It may live in the fleet's stack or anywhere a parent-to-nested
   * reference reaches (the per-identity alarms live in the nested stacks and get its ARN as a parameter).
   *
   * @default - no action
   */
  readonly alarmTopic?: sns.ITopic;

  /**
   * A dashboard to which a fleet row is added: the fleet aggregates, the top queues and delivery streams (Metrics
   * Insights `GROUP BY ... ORDER BY MAX() DESC LIMIT topCount`), and the alarms' states. Its size does not depend on
   * the number of identities.
   *
   * @default - no dashboard row
   */
  readonly dashboard?: cloudwatch.Dashboard;
}

/** The Metrics Insights queries of the fleet alarms (internal; exported for the tests). */
export const FLEET_QUERIES = {
  oldestMessage: 'SELECT MAX(ApproximateAgeOfOldestMessage) FROM SCHEMA("AWS/SQS", QueueName)',
  messagesVisible: 'SELECT SUM(ApproximateNumberOfMessagesVisible) FROM SCHEMA("AWS/SQS", QueueName)',
  deliverySuccess: 'SELECT MIN("DeliveryToS3.Success") FROM SCHEMA("AWS/Firehose", DeliveryStreamName)',
  deliveryFreshness: 'SELECT MAX("DeliveryToS3.DataFreshness") FROM SCHEMA("AWS/Firehose", DeliveryStreamName)',
};

/** Top-N form of a fleet query: one time series per queue (or stream), highest first. */
export function topQuery(fleetQuery: string, count: number): string {
  const key = fleetQuery.includes('"AWS/SQS"') ? 'QueueName' : 'DeliveryStreamName';
  return `${fleetQuery} GROUP BY ${key} ORDER BY MAX() DESC LIMIT ${count}`;
}

const PERIOD = Duration.minutes(5);
const MAX_TOP_COUNT = 100;

/**
 * Create the fleet alarms (internal: `NotificationPipelineFleet.addAlarms()`).
 *
 * One alarm per signal, each on a Metrics Insights query that aggregates the metric over every queue (or delivery
 * stream) of the account in the region the alarm is deployed to: the number of alarms does not depend on the number
 * of identities. They live in `fleet`'s stack (the parent of the nested stacks).
 */
export function addFleetAlarms(
  fleet: Construct, pipelines: NotificationPipeline[], options: NotificationPipelineFleetAlarmOptions,
): cloudwatch.Alarm[] {
  if (fleet.node.tryFindChild('FleetAlarms')) {
    throw invalid(fleet, 'addAlarms', '(second call)', 'was already called for this fleet', 'call addAlarms() once, with every option');
  }
  const topCount = options.topCount ?? 10;
  if (Token.isUnresolved(topCount) || !Number.isInteger(topCount) || topCount < 1 || topCount > MAX_TOP_COUNT) {
    throw invalid(fleet, 'topCount', topCount, 'is not accepted', `use an integer from 1 to ${MAX_TOP_COUNT}`);
  }
  const regions = checkRegions(fleet, pipelines);
  const scope = new Construct(fleet, 'FleetAlarms');
  const age = (options.maxMessageAge ?? Duration.hours(1)).toSeconds();
  const delay = (options.maxDeliveryDelay ?? Duration.minutes(15)).toSeconds();
  const path = fleet.node.path;
  const where = `every queue of the account in ${regions}`;
  const findWorst = (widget: string): string => options.dashboard
    ? ` The worst one: widget '${widget}' of the dashboard row of ${path}.`
    : ` The worst one: run '${topQuery(widget === TOP_QUEUES ? FLEET_QUERIES.oldestMessage : FLEET_QUERIES.deliveryFreshness, 5)}' in Metrics Insights.`;

  const alarms: cloudwatch.Alarm[] = [];
  alarms.push(query(FLEET_QUERIES.oldestMessage, 'Fleet oldest message (s)').createAlarm(scope, 'OldestMessageAlarm', {
    threshold: age,
    evaluationPeriods: 1,
    comparisonOperator: cloudwatch.ComparisonOperator.GREATER_THAN_THRESHOLD,
    treatMissingData: cloudwatch.TreatMissingData.NOT_BREACHING,
    alarmDescription: `${path} (${pipelines.length} identities): a message has waited more than ${age} s in a queue `
      + `(Metrics Insights over ${where}; is a consumer stopped?).${findWorst(TOP_QUEUES)}`,
  }));
  const queuePath = pipelines.some((p) => p.notificationTypes.some((t) => t.delivery === NotificationDelivery.QUEUE));
  if (queuePath && (options.deliveryAlarms ?? true)) {
    const streams = `every delivery stream of the account in ${regions}`;
    alarms.push(query(FLEET_QUERIES.deliverySuccess, 'Fleet delivery success (min)').createAlarm(scope, 'DeliveryFailureAlarm', {
      threshold: 1,
      evaluationPeriods: 2,
      comparisonOperator: cloudwatch.ComparisonOperator.LESS_THAN_THRESHOLD,
      treatMissingData: cloudwatch.TreatMissingData.NOT_BREACHING,
      alarmDescription: `${path} (${pipelines.length} identities): deliveries of notifications to the bucket are failing `
        + `(Metrics Insights over ${streams}).${findWorst(TOP_STREAMS)}`,
    }));
    alarms.push(query(FLEET_QUERIES.deliveryFreshness, 'Fleet delivery delay (s)').createAlarm(scope, 'DeliveryDelayAlarm', {
      threshold: delay,
      evaluationPeriods: 2,
      comparisonOperator: cloudwatch.ComparisonOperator.GREATER_THAN_THRESHOLD,
      treatMissingData: cloudwatch.TreatMissingData.NOT_BREACHING,
      alarmDescription: `${path} (${pipelines.length} identities): notifications wait more than ${delay} s before they reach `
        + `the bucket (Metrics Insights over ${streams}).${findWorst(TOP_STREAMS)}`,
    }));
  }
  for (const a of alarms) notifyOrAcknowledge(a, options.alarmTopic);

  // The row shows the fleet alarms only (a copy: the per-identity alarms are added below).
  if (options.dashboard) addDashboardRow(options.dashboard, path, pipelines.length, [...alarms], topCount, queuePath, age, delay);

  if (options.perIdentity) {
    for (const p of pipelines) {
      const { maxMessageAge, maxDeliveryDelay, alarmTopic } = options;
      alarms.push(...p.addAlarms({ maxMessageAge, maxDeliveryDelay, alarmTopic }));
    }
  }
  return alarms;
}

const TOP_QUEUES = 'Top queues: oldest message (s)';
const TOP_STREAMS = 'Top delivery streams: delay (s)';

function query(expression: string, label: string): cloudwatch.MathExpression {
  return new cloudwatch.MathExpression({ expression, label, period: PERIOD });
}

/** A top-N query for a graph: no label, so that CloudWatch labels each series with its queue (or stream) name. */
function topExpression(fleetQuery: string, count: number): cloudwatch.MathExpression {
  return new cloudwatch.MathExpression({ expression: topQuery(fleetQuery, count), label: '', period: PERIOD });
}

/**
 * A Metrics Insights query (like an alarm) runs in the region of the stack that holds it: the fleet's pipelines must
 * all be deployed there. Returns the region for the descriptions.
 */
function checkRegions(fleet: Construct, pipelines: NotificationPipeline[]): string {
  const regions = [...new Set(pipelines.map((p) => p.deploymentRegion))];
  const stackRegion = Stack.of(fleet).region;
  const fix = 'declare one fleet per deployment region, in a stack of that region (or use perIdentity alarms only)';
  if (regions.length > 1) {
    throw invalid(fleet, 'addAlarms', regions.join(', '), 'are several deployment regions: a fleet alarm watches the metrics of its '
      + 'own region only', fix);
  }
  const [region] = regions;
  if (Token.isUnresolved(stackRegion)) {
    Annotations.of(fleet).addWarningV2('dpi:fleetAlarmRegion', 'The fleet alarms watch the region the stack is deployed to: deploy it to '
      + `${region} (the pipelines' deployment region)`);
    return region;
  }
  if (!Token.isUnresolved(region) && region !== stackRegion) {
    throw invalid(fleet, 'addAlarms', region, `is the pipelines' deployment region but the stack's region is ${stackRegion}: a fleet alarm `
      + 'watches the metrics of its own region only', fix);
  }
  return stackRegion;
}

function addDashboardRow(
  dashboard: cloudwatch.Dashboard, path: string, count: number, alarms: cloudwatch.Alarm[], top: number, queuePath: boolean,
  age: number, delay: number,
): void {
  dashboard.addWidgets(new cloudwatch.TextWidget({
    markdown: `### Notification pipeline fleet ${path} (${count} identities)\n`
      + 'Aggregates over every queue and delivery stream of the account in this region (Metrics Insights). The top widgets name '
      + 'the queues and streams with the highest values; each pipeline\'s queue is its `notificationQueueArn`.',
    width: 24,
    height: 2,
  }));
  const widgets: cloudwatch.IWidget[] = [
    new cloudwatch.GraphWidget({
      title: 'Fleet: oldest message (s) and messages visible',
      left: [query(FLEET_QUERIES.oldestMessage, 'Oldest message, max over queues (s)')],
      right: [query(FLEET_QUERIES.messagesVisible, 'Messages visible, sum over queues')],
      leftAnnotations: [{ value: age, label: 'alarm' }],
      width: 8,
    }),
    new cloudwatch.GraphWidget({
      title: TOP_QUEUES,
      left: [topExpression(FLEET_QUERIES.oldestMessage, top)],
      legendPosition: cloudwatch.LegendPosition.RIGHT,
      width: 8,
    }),
  ];
  if (queuePath) {
    widgets.push(new cloudwatch.GraphWidget({
      title: TOP_STREAMS,
      left: [topExpression(FLEET_QUERIES.deliveryFreshness, top)],
      leftAnnotations: [{ value: delay, label: 'alarm' }],
      legendPosition: cloudwatch.LegendPosition.RIGHT,
      width: 8,
    }));
  }
  dashboard.addWidgets(...widgets);
  dashboard.addWidgets(new cloudwatch.AlarmStatusWidget({ title: `Fleet alarms of ${path}`, alarms, width: 24, height: 2 }));
}
