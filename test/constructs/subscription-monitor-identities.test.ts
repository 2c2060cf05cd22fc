import { Template } from 'aws-cdk-lib/assertions';
import { fixture, roles, sellerPipeline } from './helpers';
import { AccountType, NotificationPipelineFleet, NotificationType, SubscriptionMonitor } from '../../src';

describe('SubscriptionMonitor: InvalidIdentities', () => {
  test('a fleet of 30 identities and a pipeline: ONE alarm on the fleet-level metric; the rule input names every identity and the dimension', () => {
    const f = fixture();
    const r = roles(f.stack);
    const fleet = new NotificationPipelineFleet(f.stack, 'Fleet', {
      connection: f.connection,
      roles: r,
      nestedStackCount: 2,
      identities: Array.from({ length: 30 }, (_, i) => ({
        remoteIdentityId: 4001 + i, accountType: AccountType.SELLER, notificationTypes: [NotificationType.ORDER_CHANGE],
      })),
    });
    const m = new SubscriptionMonitor(f.stack, 'Monitor', { connection: f.connection });
    expect(m.invalidIdentitiesAlarm).toBeUndefined();
    const alarm = m.addFleet(fleet);
    m.addPipeline(sellerPipeline(f, r, 'Seller'));
    expect(m.invalidIdentitiesAlarm).toBe(alarm);
    const t = Template.fromStack(f.stack);
    const alarms = Object.values(t.findResources('AWS::CloudWatch::Alarm')).filter((a) => a.Properties.MetricName === 'InvalidIdentities');
    expect(alarms).toHaveLength(1);
    expect(alarms[0].Properties).toMatchObject({
      Namespace: 'DataPipelineIntegration',
      Dimensions: [{ Name: 'Monitor', Value: 'MyStack/Monitor' }],
      Statistic: 'Maximum',
      Threshold: 1,
      ComparisonOperator: 'GreaterThanOrEqualToThreshold',
      TreatMissingData: 'notBreaching',
    });
    expect(JSON.stringify(f.stack.resolve(alarms[0].Properties.AlarmDescription))).toContain('Watches 31 identities');
    const rule = Object.values(t.findResources('AWS::Events::Rule'))[0];
    const input = f.stack.resolve(rule.Properties.Targets[0].Input);
    const doc = JSON.parse(typeof input === 'string' ? input : JSON.stringify(input));
    expect(doc.Monitor).toBe('MyStack/Monitor');
    expect(doc.Identities).toHaveLength(31);
    expect(doc.Identities).toEqual(expect.arrayContaining(['4001', '4030', '362']));
    expect(m.metricInvalidIdentities().metricName).toBe('InvalidIdentities');
  });

  test('without pipelines: no alarm, and the rule input has neither Identities nor Monitor (as before)', () => {
    const f = fixture();
    new SubscriptionMonitor(f.stack, 'Monitor', { connection: f.connection });
    const t = Template.fromStack(f.stack);
    expect(Object.values(t.findResources('AWS::CloudWatch::Alarm')).filter((a) => a.Properties.MetricName === 'InvalidIdentities')).toHaveLength(0);
    const input = JSON.stringify(f.stack.resolve(Object.values(t.findResources('AWS::Events::Rule'))[0].Properties.Targets[0].Input));
    expect(input).not.toContain('Identities');
    expect(input).not.toContain('"Monitor');
  });
});
