import { Duration } from 'aws-cdk-lib';
import { Template } from 'aws-cdk-lib/assertions';
import * as sns from 'aws-cdk-lib/aws-sns';
import { fixture, roles, sellerPipeline } from './helpers';
import {
  AccountType, DpiMonitoring, NotificationPipelineFleet, NotificationType, Subscription, SubscriptionMonitor,
} from '../../src';
import { FLEET_QUERIES } from '../../src/notifications/fleet-alarms';

type Resources = Record<string, { Properties: Record<string, unknown> }>;

/** The dashboard's body as one string (its `Fn::Join` parts resolved to text, tokens kept as JSON). */
function dashboardBody(t: Template): string {
  const dashboards = Object.values(t.findResources('AWS::CloudWatch::Dashboard')) as Resources[string][];
  expect(dashboards).toHaveLength(1);
  const body = dashboards[0].Properties.DashboardBody as { 'Fn::Join': [string, unknown[]] };
  return body['Fn::Join'][1].map((p) => (typeof p === 'string' ? p : JSON.stringify(p))).join('');
}

function topicRefs(alarm: Resources[string], topicId: string): boolean {
  const actions = JSON.stringify(alarm.Properties.AlarmActions ?? []);
  return actions.includes(topicId) && JSON.stringify(alarm.Properties.OKActions ?? []).includes(topicId);
}

describe('DpiMonitoring', () => {
  test('subscription, pipeline and drift: every alarm on the one topic, one dashboard with a row each', () => {
    const f = fixture();
    const topic = new sns.Topic(f.stack, 'Alarms');
    const orders = new Subscription(f.stack, 'Orders', { connection: f.connection, productId: 3001 });
    const pipeline = sellerPipeline(f, roles(f.stack), 'Seller'); // a queue type: three pipeline alarms
    const monitoring = new DpiMonitoring(f.stack, 'Monitoring', { connection: f.connection, alarmTopic: topic, dashboardName: 'ops' })
      .monitorSubscription(orders, { label: 'orders-us', freshnessThreshold: Duration.hours(30) })
      .monitorPipeline(pipeline, { label: 'seller-362', maxMessageAge: Duration.minutes(30) })
      .monitorDrift();

    const t = Template.fromStack(f.stack);
    const alarms = t.findResources('AWS::CloudWatch::Alarm') as Resources;
    // monitor function errors, 3 of the subscription, invalid identities, 3 of the pipeline, 3 of the drift check
    expect(Object.keys(alarms)).toHaveLength(11);
    expect(monitoring.createdAlarms()).toHaveLength(11);
    const topicId = Object.keys(t.findResources('AWS::SNS::Topic'))[0];
    expect(Object.entries(alarms).filter(([, a]) => !topicRefs(a, topicId)).map(([id]) => id)).toEqual([]);
    // the thresholds given reach the alarms of the constructs underneath
    const byId = (prefix: string) => Object.entries(alarms).find(([id]) => id.includes(prefix))![1].Properties;
    expect(byId('SellerOldestMessageAlarm').Threshold).toBe(1800);
    expect(byId('FreshnessOrders').Threshold).toBe(30);

    // one dashboard, named as given, with the subscription's, the pipeline's and the drift rows
    t.resourceCountIs('AWS::CloudWatch::Dashboard', 1);
    t.hasResourceProperties('AWS::CloudWatch::Dashboard', { DashboardName: 'ops' });
    const body = dashboardBody(t);
    for (const title of ['orders-us: records', 'orders-us: alarms', 'seller-362: notification queue', 'seller-362: alarms',
      'Remote identities', 'Drift: alarms', 'Monitor runs']) {
      expect(body).toContain(`"title":"${title}"`);
    }
    // one scheduled function per purpose
    t.resourceCountIs('AWS::Events::Rule', 2);
    expect(monitoring.subscriptionMonitor?.dashboard).toBe(monitoring.dashboard);
    expect(monitoring.driftMonitor?.driftAlarm).toBeDefined();
  });

  test('a fleet: its Metrics Insights alarms on the topic and its row in the same dashboard', () => {
    const f = fixture();
    const topic = new sns.Topic(f.stack, 'Alarms');
    const fleet = new NotificationPipelineFleet(f.stack, 'Fleet', {
      connection: f.connection,
      roles: roles(f.stack),
      identities: [362, 363].map((remoteIdentityId) => ({
        remoteIdentityId, accountType: AccountType.SELLER, notificationTypes: [NotificationType.REPORT_PROCESSING_FINISHED],
      })),
    });
    const monitoring = new DpiMonitoring(f.stack, 'Monitoring', { connection: f.connection, alarmTopic: topic })
      .monitorFleet(fleet, { deliveryAlarms: false, topCount: 5 });
    const t = Template.fromStack(f.stack);
    const alarms = t.findResources('AWS::CloudWatch::Alarm') as Resources;
    // monitor function errors, invalid identities, the fleet's queue alarm (no delivery alarms)
    expect(Object.keys(alarms)).toHaveLength(3);
    expect(monitoring.createdAlarms()).toHaveLength(3);
    const topicId = Object.keys(t.findResources('AWS::SNS::Topic'))[0];
    expect(Object.values(alarms).every((a) => topicRefs(a, topicId))).toBe(true);
    expect(JSON.stringify(alarms)).toContain(FLEET_QUERIES.oldestMessage.replace(/"/g, '\\"'));
    t.resourceCountIs('AWS::CloudWatch::Dashboard', 1);
    expect(dashboardBody(t)).toContain('LIMIT 5');
  });

  test('without dashboard or topic: no dashboard, alarms without actions; one facade per stack', () => {
    const f = fixture();
    const orders = new Subscription(f.stack, 'Orders', { connection: f.connection, productId: 3001 });
    const monitoring = new DpiMonitoring(f.stack, 'Monitoring', { connection: f.connection, dashboard: false })
      .monitorSubscription(orders)
      .monitorDrift({ interval: Duration.hours(2) });
    const t = Template.fromStack(f.stack);
    t.resourceCountIs('AWS::CloudWatch::Dashboard', 0);
    expect(monitoring.dashboard).toBeUndefined();
    const alarms = Object.values(t.findResources('AWS::CloudWatch::Alarm')) as Resources[string][];
    expect(alarms).toHaveLength(7);
    expect(alarms.every((a) => a.Properties.AlarmActions === undefined)).toBe(true);
    t.hasResourceProperties('AWS::Events::Rule', { ScheduleExpression: 'rate(2 hours)' });

    expect(() => monitoring.monitorDrift()).toThrow(/Monitoring: monitorDrift '\(second call\)' was already called/);
    expect(() => monitoring.monitorSubscription(orders)).toThrow(/Orders' is monitored already/);
    // the monitors underneath stay one per stack
    expect(() => new SubscriptionMonitor(f.stack, 'Other', { connection: f.connection }))
      .toThrow(/a second SubscriptionMonitor in stack MyStack \(the first is 'MyStack\/Monitoring\/Subscriptions'\)/);
  });

  test('a pipeline monitored twice is refused, naming it', () => {
    const f = fixture();
    const pipeline = sellerPipeline(f, roles(f.stack), 'Seller');
    const monitoring = new DpiMonitoring(f.stack, 'Monitoring', { connection: f.connection }).monitorPipeline(pipeline);
    expect(() => monitoring.monitorPipeline(pipeline)).toThrow(/MyStack\/Seller' is monitored already/);
  });
});
