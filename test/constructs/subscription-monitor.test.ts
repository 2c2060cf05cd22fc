import { Duration, Stack } from 'aws-cdk-lib';
import { Match, Template } from 'aws-cdk-lib/assertions';
import * as cloudwatch from 'aws-cdk-lib/aws-cloudwatch';
import * as sns from 'aws-cdk-lib/aws-sns';
import { HIPAASecurityChecks, NIST80053R5Checks, ServerlessChecks, AwsSolutionsChecks } from 'cdk-nag';
import { fixture, roles, SECRET_ARN, sellerPipeline } from './helpers';
import { MonitorSource, Subscription, SubscriptionMonitor } from '../../src';

function subscription(stack: Stack, connection: ReturnType<typeof fixture>['connection'], id: string): Subscription {
  return new Subscription(stack, id, { connection, productId: 3001, remoteIdentityId: 362, productParameters: { marketplace_id: 'ATVPDKIKX0DER' } });
}

describe('SubscriptionMonitor', () => {
  test('one scheduled function for every subscription; the rule input carries the connection and the subscription IDs, never the secret value', () => {
    const f = fixture();
    const a = subscription(f.stack, f.connection, 'Orders');
    const b = subscription(f.stack, f.connection, 'Returns');
    const m = new SubscriptionMonitor(f.stack, 'Monitor', { connection: f.connection, subscriptions: [a] });
    m.addSubscription(b, { label: 'returns' });
    const t = Template.fromStack(f.stack);
    const fns = t.findResources('AWS::Lambda::Function', { Properties: { Handler: 'index.monitor' } });
    expect(Object.keys(fns)).toHaveLength(1);
    t.hasResourceProperties('AWS::Lambda::Function', { Handler: 'index.monitor', Runtime: 'nodejs24.x', Architectures: ['arm64'] });
    t.hasResourceProperties('AWS::Events::Rule', { ScheduleExpression: 'rate(15 minutes)' });
    const rule = Object.values(t.findResources('AWS::Events::Rule'))[0];
    const input = JSON.stringify(f.stack.resolve(rule.Properties.Targets[0].Input));
    expect(input).toContain('RefreshTokenSecretArn');
    expect(input).toContain(SECRET_ARN);
    expect(input).toContain('Subscriptions');
    const subIds = Object.keys(t.findResources('Custom::DpiSubscription'));
    for (const id of subIds) expect(input).toContain(id);
    expect(input).toContain('returns');
    // The function may read the secret (and nothing of the journal: it only reads transactions).
    t.hasResourceProperties('AWS::IAM::Policy', {
      PolicyDocument: { Statement: Match.arrayWith([Match.objectLike({ Action: ['secretsmanager:GetSecretValue', 'secretsmanager:DescribeSecret'], Resource: SECRET_ARN })]) },
      Roles: [{ Ref: Match.stringLikeRegexp('^MonitorRole') }],
    });
  });

  test('three alarms per subscription plus the function\'s own, with the topic as alarm and OK action; freshness from the threshold', () => {
    const f = fixture();
    const topic = new sns.Topic(f.stack, 'Topic');
    const m = new SubscriptionMonitor(f.stack, 'Monitor', { connection: f.connection, alarmTopic: topic, freshnessThreshold: Duration.hours(30) });
    const alarms = m.addSubscription(subscription(f.stack, f.connection, 'Orders'));
    m.addSubscription(subscription(f.stack, f.connection, 'Returns'), { freshnessThreshold: Duration.hours(48) });
    const t = Template.fromStack(f.stack);
    t.resourceCountIs('AWS::CloudWatch::Alarm', 7);
    t.hasResourceProperties('AWS::CloudWatch::Alarm', {
      MetricName: 'FreshnessHours',
      Namespace: 'DataPipelineIntegration',
      Threshold: 30,
      ComparisonOperator: 'GreaterThanThreshold',
      AlarmActions: [{ Ref: Match.stringLikeRegexp('^Topic') }],
      OKActions: [{ Ref: Match.stringLikeRegexp('^Topic') }],
    });
    t.hasResourceProperties('AWS::CloudWatch::Alarm', { MetricName: 'FreshnessHours', Threshold: 48 });
    t.hasResourceProperties('AWS::CloudWatch::Alarm', { MetricName: 'ErrorRecords', Threshold: 1, ComparisonOperator: 'GreaterThanOrEqualToThreshold', TreatMissingData: 'notBreaching' });
    t.hasResourceProperties('AWS::CloudWatch::Alarm', { MetricName: 'MonitorFailed', EvaluationPeriods: 2 });
    t.hasResourceProperties('AWS::CloudWatch::Alarm', { MetricName: 'Errors', Namespace: 'AWS/Lambda' });
    // The returned handles are the alarms of that subscription.
    expect((alarms.errors.metric as cloudwatch.Metric).metricName).toBe('ErrorRecords');
    expect((alarms.freshness.metric as cloudwatch.Metric).metricName).toBe('FreshnessHours');
    expect((alarms.monitorFailed.metric as cloudwatch.Metric).metricName).toBe('MonitorFailed');
  });

  test('a dashboard with a header and a row per subscription (records, freshness with the alarm line, alarm status)', () => {
    const f = fixture();
    const m = new SubscriptionMonitor(f.stack, 'Monitor', { connection: f.connection, dashboardName: 'orders-health' });
    m.addSubscription(subscription(f.stack, f.connection, 'Orders'), { label: 'orders-us' });
    const t = Template.fromStack(f.stack);
    const dash = Object.values(t.findResources('AWS::CloudWatch::Dashboard'))[0];
    expect(dash.Properties.DashboardName).toBe('orders-health');
    const body = JSON.stringify(f.stack.resolve(dash.Properties.DashboardBody));
    expect(body).toContain('# Data pipeline integration');
    expect(body).toContain('orders-us: records');
    expect(body).toContain('orders-us: hours since the newest loaded date');
    expect(body).toContain('orders-us: alarms');
    expect(body).toContain('\\"value\\":36');
    // no dashboard when asked
    const g = fixture();
    new SubscriptionMonitor(g.stack, 'Monitor', { connection: g.connection, dashboard: false });
    Template.fromStack(g.stack).resourceCountIs('AWS::CloudWatch::Dashboard', 0);
  });

  test('addPipeline adds a row for a pipeline (queue; and the delivery stream when the selection has a queue type)', () => {
    const f = fixture();
    const m = new SubscriptionMonitor(f.stack, 'Monitor', { connection: f.connection });
    m.addPipeline(sellerPipeline(f, roles(f.stack), 'Seller'), { label: 'seller' });
    const dash = Object.values(Template.fromStack(f.stack).findResources('AWS::CloudWatch::Dashboard'))[0];
    const body = JSON.stringify(f.stack.resolve(dash.Properties.DashboardBody));
    expect(body).toContain('seller: notification queue');
    expect(body).toContain('ApproximateAgeOfOldestMessage');
    expect(body).toContain('seller: delivery to the bucket');
    expect(body).toContain('DeliveryToS3.Success');
  });

  test('synth errors: a second monitor in the stack, a subscription added twice, an interval under a minute', () => {
    const f = fixture();
    const m = new SubscriptionMonitor(f.stack, 'Monitor', { connection: f.connection });
    expect(() => new SubscriptionMonitor(f.stack, 'Again', { connection: f.connection }))
      .toThrow(/^MyStack\/Again: a second SubscriptionMonitor in stack MyStack \(the first is 'MyStack\/Monitor'\)/);
    const s = subscription(f.stack, f.connection, 'Orders');
    m.addSubscription(s);
    expect(() => m.addSubscription(s)).toThrow(/MyStack\/Monitor: addSubscription 'MyStack\/Orders' is monitored already/);
    const g = fixture();
    expect(() => new SubscriptionMonitor(g.stack, 'Monitor', { connection: g.connection, interval: Duration.seconds(30) }))
      .toThrow(/interval '30 seconds' is shorter than a minute/);
  });

  test('source: transactions by default (the rule input has no Source, as before the choice existed); HEALTHCHECKS only when asked', () => {
    // The input is a Fn::Join around the secret ARN and the subscription IDs: compared as its resolved JSON text.
    const inputOf = (source?: MonitorSource): { input: string; t: Template } => {
      const f = fixture();
      const m = new SubscriptionMonitor(f.stack, 'Monitor', { connection: f.connection, ...(source ? { source } : {}) });
      m.addSubscription(subscription(f.stack, f.connection, 'Orders'), { label: 'orders-us' });
      const t = Template.fromStack(f.stack);
      const rule = Object.values(t.findResources('AWS::Events::Rule'))[0];
      return { input: JSON.stringify(f.stack.resolve(rule.Properties.Targets[0].Input)), t };
    };
    const byDefault = inputOf();
    expect(byDefault.input).toContain('Subscriptions');
    expect(byDefault.input).not.toContain('Source');
    const explicit = inputOf(MonitorSource.TRANSACTIONS);
    expect(explicit.t.toJSON()).toEqual(byDefault.t.toJSON());
    byDefault.t.hasResourceProperties('AWS::CloudWatch::Alarm', { MetricName: 'ErrorRecords', AlarmDescription: 'orders-us: records in ERROR (dpi status --subscription <id> shows them).' });

    const listing = inputOf(MonitorSource.HEALTHCHECKS);
    expect(listing.input).toContain('\\"Source\\":\\"HEALTHCHECKS\\"');
    // Nothing else of the input differs.
    expect(listing.input.replace(',\\"Source\\":\\"HEALTHCHECKS\\"', '')).toBe(byDefault.input);
    listing.t.hasResourceProperties('AWS::CloudWatch::Alarm', { MetricName: 'ErrorRecords', AlarmDescription: Match.stringLikeRegexp('latest healthcheck is ERROR') });
    listing.t.hasResourceProperties('AWS::CloudWatch::Alarm', { MetricName: 'FreshnessHours', AlarmDescription: Match.stringLikeRegexp('no OK healthcheck in the last 36 hours') });

    const g = fixture();
    expect(() => new SubscriptionMonitor(g.stack, 'Monitor', { connection: g.connection, source: 'LISTING' as MonitorSource }))
      .toThrow(/MyStack\/Monitor: source 'LISTING' is not a MonitorSource/);
  });

  test('cdk-nag: no unacknowledged finding on the monitor\'s resources in any of the four packs', () => {
    const f = fixture();
    const m = new SubscriptionMonitor(f.stack, 'Monitor', { connection: f.connection, alarmTopic: new sns.Topic(f.stack, 'Topic') });
    m.addSubscription(subscription(f.stack, f.connection, 'Orders'));
    f.app.synth();
    for (const pack of [new AwsSolutionsChecks(), new HIPAASecurityChecks(), new NIST80053R5Checks(), new ServerlessChecks()]) {
      const found = pack.validateScope(f.app).violations
        .flatMap((v) => v.violatingResources.map((r) => `${v.ruleName} ${r.constructPath}`))
        .filter((x) => x.includes('/Monitor/'));
      expect([pack.readPackName, found]).toEqual([pack.readPackName, []]);
    }
  });
});
