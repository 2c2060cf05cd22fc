import { Duration } from 'aws-cdk-lib';
import * as cloudwatch from 'aws-cdk-lib/aws-cloudwatch';
import { fixture } from './helpers';
import { Subscription, SubscriptionMonitor } from '../../src';

describe('Subscription metrics (metricX() on the thing measured)', () => {
  test('each equals the monitor\'s metric of the subscription: namespace, name, dimension, statistic, period', () => {
    const f = fixture();
    const sub = new Subscription(f.stack, 'Orders', { connection: f.connection, productId: 3001, remoteIdentityId: 362 });
    const monitor = new SubscriptionMonitor(f.stack, 'Monitor', { connection: f.connection, subscriptions: [sub] });
    const pairs: Array<[string, cloudwatch.Metric, cloudwatch.Metric]> = [
      ['ErrorRecords', sub.metricErrorRecords(), monitor.metricErrorRecords(sub)],
      ['InProgressRecords', sub.metricInProgressRecords(), monitor.metricInProgressRecords(sub)],
      ['FreshnessHours', sub.metricFreshnessHours(), monitor.metricFreshnessHours(sub)],
      ['MonitorFailed', sub.metricMonitorFailed(), monitor.metricMonitorFailed(sub)],
    ];
    for (const [name, own, viaMonitor] of pairs) {
      expect(own.metricName).toBe(name);
      expect(own.namespace).toBe('DataPipelineIntegration');
      expect(own.statistic).toBe('Maximum');
      expect(own.period.toMinutes()).toBe(15);
      expect(f.stack.resolve(own.dimensions)).toEqual({ SubscriptionId: f.stack.resolve(sub.subscriptionId) });
      expect(f.stack.resolve(own.toMetricConfig())).toEqual(f.stack.resolve(viaMonitor.toMetricConfig()));
    }
  });

  test('options override the defaults', () => {
    const f = fixture();
    const sub = new Subscription(f.stack, 'Orders', { connection: f.connection, productId: 3001, remoteIdentityId: 362 });
    const m = sub.metricErrorRecords({ period: Duration.hours(1), label: 'errors' });
    expect(m.period.toHours()).toBe(1);
    expect(m.label).toBe('errors');
  });
});
