/**
 * The monitor's identity health (internal helpers of `SubscriptionMonitor`): the fleet-level metric
 * `InvalidIdentities` (namespace `DataPipelineIntegration`, dimension `Monitor` = the monitor's construct path) that
 * the monitor Lambda publishes each run, and the one alarm on it.
 */
import { Duration, Lazy } from 'aws-cdk-lib';
import * as cloudwatch from 'aws-cdk-lib/aws-cloudwatch';
import { Construct } from 'constructs';

/** The metric's name. */
export const INVALID_IDENTITIES_METRIC = 'InvalidIdentities';

/** The metric of a monitor (maximum over 15 minutes). */
export function invalidIdentitiesMetric(namespace: string, monitorPath: string, props: cloudwatch.MetricOptions = {}): cloudwatch.Metric {
  return new cloudwatch.Metric({
    namespace,
    metricName: INVALID_IDENTITIES_METRIC,
    dimensionsMap: { Monitor: monitorPath },
    statistic: cloudwatch.Stats.MAXIMUM,
    period: Duration.minutes(15),
    ...props,
  });
}

/** The one alarm: at least one of the app's identities is invalid. Missing data (minimal reads) is not breaching. */
export function invalidIdentitiesAlarm(scope: Construct, metric: cloudwatch.Metric, count: () => number): cloudwatch.Alarm {
  return metric.createAlarm(scope, 'InvalidIdentities', {
    threshold: 1,
    evaluationPeriods: 1,
    comparisonOperator: cloudwatch.ComparisonOperator.GREATER_THAN_OR_EQUAL_TO_THRESHOLD,
    treatMissingData: cloudwatch.TreatMissingData.NOT_BREACHING,
    alarmDescription: Lazy.string({
      produce: () => `${scope.node.path}: at least one of the app's remote identities is invalid (the seller revoked access or its `
      + 'token expired; its pipelines and subscriptions get no data). Run dpi identities to name it; the seller must re-authorize it in '
      + 'the service\'s UI. Needs the vendor read field invalid_identity: without it the metric is not published and this alarm stays OK.'
      + ` Watches ${count()} identit${count() === 1 ? 'y' : 'ies'}.`,
    }),
  });
}
