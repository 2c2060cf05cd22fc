/**
 * The metrics `SubscriptionMonitor`'s Lambda publishes per subscription (namespace `DataPipelineIntegration`, dimension
 * `SubscriptionId`), defined once: `subscription.metricX()` and `monitor.metricX(subscription)` both use them.
 */
import { Duration } from 'aws-cdk-lib';
import * as cloudwatch from 'aws-cdk-lib/aws-cloudwatch';

/** The namespace of the monitors' metrics. */
export const MONITOR_METRICS_NAMESPACE = 'DataPipelineIntegration';

/** A subscription's metric `name` (maximum over 15 minutes). */
export function subscriptionMetric(name: string, subscriptionId: string, props: cloudwatch.MetricOptions = {}): cloudwatch.Metric {
  return new cloudwatch.Metric({
    namespace: MONITOR_METRICS_NAMESPACE,
    metricName: name,
    dimensionsMap: { SubscriptionId: subscriptionId },
    statistic: cloudwatch.Stats.MAXIMUM,
    period: Duration.minutes(15),
    ...props,
  });
}
