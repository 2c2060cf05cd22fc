import { App, Duration, Stack } from 'aws-cdk-lib';
import { Annotations, Match, Template } from 'aws-cdk-lib/assertions';
import * as cloudwatch from 'aws-cdk-lib/aws-cloudwatch';
import * as secretsmanager from 'aws-cdk-lib/aws-secretsmanager';
import * as sns from 'aws-cdk-lib/aws-sns';
import { AwsSolutionsChecks, HIPAASecurityChecks, NIST80053R5Checks, ServerlessChecks } from 'cdk-nag';
import { Fixture, fixture, roles, SECRET_ARN } from './helpers';
import {
  AccountType, NotificationPipelineFleet, NotificationPipelineFleetAlarmOptions,
  NotificationPipelineFleetIdentity, NotificationType, ServiceConnection, ServiceEndpoints,
} from '../../src';
import { FLEET_QUERIES } from '../../src/notifications/fleet-alarms';

const ids = (from: number, count: number): number[] => Array.from({ length: count }, (_, i) => from + i);
/** A seller with a queue type (so the delivery-stream alarms apply) and an event-bus type. */
const seller = (remoteIdentityId: number): NotificationPipelineFleetIdentity => ({
  remoteIdentityId,
  accountType: AccountType.SELLER,
  notificationTypes: [NotificationType.REPORT_PROCESSING_FINISHED, NotificationType.ORDER_CHANGE],
});
/** A seller with event-bus types only. */
const eventBusSeller = (remoteIdentityId: number): NotificationPipelineFleetIdentity => ({
  remoteIdentityId, accountType: AccountType.SELLER, notificationTypes: [NotificationType.ORDER_CHANGE],
});

function fleetOf(f: Fixture, identities: NotificationPipelineFleetIdentity[], nestedStackCount?: number): NotificationPipelineFleet {
  return new NotificationPipelineFleet(f.stack, 'Fleet', { connection: f.connection, roles: roles(f.stack), identities, nestedStackCount });
}

type Resources = Record<string, { Properties: Record<string, unknown> }>;

/** The alarms of the parent stack and of every nested stack of the fleet. */
function allAlarms(f: Fixture, fleet: NotificationPipelineFleet): { parent: Resources; nested: Resources } {
  const parent = Template.fromStack(f.stack).findResources('AWS::CloudWatch::Alarm') as Resources;
  const nested: Resources = {};
  for (const n of fleet.nestedStacks) {
    for (const [id, r] of Object.entries(Template.fromStack(n).findResources('AWS::CloudWatch::Alarm'))) nested[`${n.node.id}/${id}`] = r as Resources[string];
  }
  return { parent, nested };
}

function alarmCount(f: Fixture, fleet: NotificationPipelineFleet): number {
  const { parent, nested } = allAlarms(f, fleet);
  return Object.keys(parent).length + Object.keys(nested).length;
}

describe('NotificationPipelineFleet.addAlarms()', () => {
  test('the number of fleet alarms does not depend on the number of identities (10 vs 300)', () => {
    const counts: number[] = [];
    for (const n of [10, 300]) {
      const f = fixture();
      const fleet = fleetOf(f, ids(1000, n).map(seller));
      const alarms = fleet.addAlarms();
      expect(alarms).toHaveLength(3);
      counts.push(alarmCount(f, fleet));
      // All of them in the parent stack, none in a nested stack.
      expect(Object.keys(allAlarms(f, fleet).nested)).toEqual([]);
      expect(alarms.every((a) => Stack.of(a) === f.stack)).toBe(true);
    }
    expect(counts).toEqual([3, 3]);
  });

  test('each fleet alarm is one Metrics Insights query over every queue (or delivery stream) of the region, with no per-queue metric', () => {
    const f = fixture();
    const fleet = fleetOf(f, ids(1, 40).map(seller), 4);
    fleet.addAlarms();
    const { parent } = allAlarms(f, fleet);
    const byName = (suffix: string): Record<string, unknown> => {
      const found = Object.entries(parent).filter(([id]) => id.startsWith(`FleetFleetAlarms${suffix}`));
      expect(found).toHaveLength(1);
      return found[0][1].Properties;
    };
    const expected: Array<[string, string, string, number]> = [
      ['OldestMessageAlarm', FLEET_QUERIES.oldestMessage, 'GreaterThanThreshold', 3600],
      ['DeliveryFailureAlarm', FLEET_QUERIES.deliverySuccess, 'LessThanThreshold', 1],
      ['DeliveryDelayAlarm', FLEET_QUERIES.deliveryFreshness, 'GreaterThanThreshold', 900],
    ];
    for (const [name, query, op, threshold] of expected) {
      const p = byName(name);
      expect(p.Metrics).toEqual([{ Id: expect.any(String), Expression: query, Label: expect.any(String), Period: 300, ReturnData: true }]);
      expect(p.MetricName).toBeUndefined();
      expect(p.ComparisonOperator).toBe(op);
      expect(p.Threshold).toBe(threshold);
      // The query covers the identities by the dimension schema alone: no WHERE clause that could leave a queue out.
      expect(query).toMatch(/^SELECT (MAX|MIN)\(.+\) FROM SCHEMA\("AWS\/(SQS", QueueName|Firehose", DeliveryStreamName)\)$/);
      expect(String(p.AlarmDescription)).toMatch(/^MyStack\/Fleet \(40 identities\): .*Metrics Insights over every (queue|delivery stream) of the account in us-east-1/);
      expect(String(p.AlarmDescription)).toMatch(/The worst one: run 'SELECT .* GROUP BY (QueueName|DeliveryStreamName) ORDER BY MAX\(\) DESC LIMIT 5' in Metrics Insights\./);
      expect(String(p.AlarmDescription).length).toBeLessThanOrEqual(1024);
    }
    // The fleet alarms reference nothing of the nested stacks: no outputs are added for them.
    for (const n of fleet.nestedStacks) expect(Template.fromStack(n).toJSON().Outputs ?? {}).toEqual({});
  });

  test('options: thresholds, no delivery alarms, event-bus-only fleets', () => {
    const f = fixture();
    const fleet = fleetOf(f, ids(1, 5).map(seller));
    const alarms = fleet.addAlarms({ maxMessageAge: Duration.minutes(2), deliveryAlarms: false });
    expect(alarms).toHaveLength(1);
    const found = Object.values(Template.fromStack(f.stack).findResources('AWS::CloudWatch::Alarm'));
    expect(found.map((a) => [a.Properties.Threshold, a.Properties.Metrics[0].Expression])).toEqual([[120, FLEET_QUERIES.oldestMessage]]);
    const d = fixture();
    fleetOf(d, ids(1, 5).map(seller)).addAlarms({ maxDeliveryDelay: Duration.minutes(3) });
    const delay = Object.values(Template.fromStack(d.stack).findResources('AWS::CloudWatch::Alarm'))
      .filter((a) => a.Properties.Metrics[0].Expression === FLEET_QUERIES.deliveryFreshness);
    expect(delay.map((a) => a.Properties.Threshold)).toEqual([180]);
    const g = fixture();
    expect(fleetOf(g, ids(1, 5).map(eventBusSeller)).addAlarms()).toHaveLength(1);
  });

  test('alarm actions go to a topic of the parent stack; perIdentity adds the pipelines\' alarms, wired through nested stack parameters', () => {
    const f = fixture();
    const topic = new sns.Topic(f.stack, 'Alerts');
    const fleet = fleetOf(f, ids(500, 12).map(seller), 3);
    const alarms = fleet.addAlarms({ alarmTopic: topic, perIdentity: true });
    expect(alarms).toHaveLength(3 + 12 * 3);
    const { parent, nested } = allAlarms(f, fleet);
    expect(Object.keys(parent)).toHaveLength(3);
    expect(Object.keys(nested)).toHaveLength(36);
    const topicRef = { Ref: Template.fromStack(f.stack).getResourceId('AWS::SNS::Topic') };
    for (const a of Object.values(parent)) {
      expect(a.Properties.AlarmActions).toEqual([topicRef]);
      expect(a.Properties.OKActions).toEqual([topicRef]);
    }
    for (const [id, a] of Object.entries(nested)) {
      // The topic's ARN reaches the nested stack as a parameter.
      expect(a.Properties.AlarmActions).toEqual([{ Ref: expect.stringMatching(/^referencetoMyStackAlerts/) }]);
      expect(a.Properties.OKActions).toEqual([{ Ref: expect.stringMatching(/^referencetoMyStackAlerts/) }]);
      const rid = /\/Identity(\d+)/.exec(id)![1];
      expect(String(a.Properties.AlarmDescription)).toContain(`/Identity${rid}:`);
    }
    for (const res of Object.values(Template.fromStack(f.stack).findResources('AWS::CloudFormation::Stack'))) {
      expect(Object.entries(res.Properties.Parameters as Record<string, unknown>)).toEqual(expect.arrayContaining([
        [expect.stringMatching(/^referencetoMyStackAlerts/), topicRef],
      ]));
    }
    // The whole app synthesizes (parent and nested templates).
    expect(() => f.app.synth()).not.toThrow();
    // perIdentity defaults to false.
    const g = fixture();
    const other = fleetOf(g, ids(500, 12).map(seller), 3);
    other.addAlarms({ alarmTopic: new sns.Topic(g.stack, 'Alerts') });
    expect(alarmCount(g, other)).toBe(3);
  });

  test('dashboard row: fleet aggregates, top queues and streams, the fleet alarms; same size for 10 and 300 identities', () => {
    const bodies: Array<{ widgets: Array<{ type: string; properties: Record<string, unknown> }> }> = [];
    for (const n of [10, 300]) {
      const f = fixture();
      const fleet = fleetOf(f, ids(1, n).map(seller));
      const dashboard = new cloudwatch.Dashboard(f.stack, 'Dash');
      fleet.addAlarms({ dashboard, perIdentity: n === 10, topCount: 7 });
      const [res] = Object.values(Template.fromStack(f.stack).findResources('AWS::CloudWatch::Dashboard'));
      const joined = f.stack.resolve(res.Properties.DashboardBody) as { 'Fn::Join': [string, unknown[]] };
      const text = joined['Fn::Join'][1].map((x) => (typeof x === 'string' ? x : JSON.stringify(JSON.stringify(x)).slice(1, -1))).join('');
      bodies.push(JSON.parse(text));
      // The row references no per-identity alarm (no nested stack output), even with perIdentity.
      expect(JSON.stringify(res.Properties.DashboardBody)).not.toContain('Outputs.');
    }
    expect(bodies[0].widgets.map((w) => w.type)).toEqual(bodies[1].widgets.map((w) => w.type));
    expect(bodies[1].widgets.map((w) => w.type)).toEqual(['text', 'metric', 'metric', 'metric', 'alarm']);
    const metrics = bodies[1].widgets.filter((w) => w.type === 'metric').map((w) => w.properties.metrics as Array<Array<Record<string, string>>>);
    expect(metrics[1]).toEqual([[{ expression: `${FLEET_QUERIES.oldestMessage} GROUP BY QueueName ORDER BY MAX() DESC LIMIT 7` }]]);
    expect(metrics[2]).toEqual([[{ expression: `${FLEET_QUERIES.deliveryFreshness} GROUP BY DeliveryStreamName ORDER BY MAX() DESC LIMIT 7` }]]);
    const alarmWidget = bodies[1].widgets.find((w) => w.type === 'alarm')!;
    expect(alarmWidget.properties.alarms).toHaveLength(3);
  });

  test('the fleet alarm description points to the dashboard widget when a dashboard is given', () => {
    const f = fixture();
    fleetOf(f, ids(1, 3).map(seller)).addAlarms({ dashboard: new cloudwatch.Dashboard(f.stack, 'Dash') });
    const descriptions = Object.values(Template.fromStack(f.stack).findResources('AWS::CloudWatch::Alarm')).map((a) => String(a.Properties.AlarmDescription));
    expect(descriptions).toEqual(expect.arrayContaining([expect.stringContaining("The worst one: widget 'Top queues: oldest message (s)' of the dashboard row of MyStack/Fleet.")]));
  });

  test('refuses what the alarms cannot watch, and a second call', () => {
    const f = fixture();
    const fleet = new NotificationPipelineFleet(f.stack, 'Fleet', {
      connection: f.connection, roles: roles(f.stack), identities: [seller(1), seller(2)], deploymentRegion: 'us-west-2',
    });
    expect(() => fleet.addAlarms()).toThrow(/MyStack\/Fleet.*us-west-2.*stack's region is us-east-1/);
    const g = fixture();
    const mixed = new NotificationPipelineFleet(g.stack, 'Fleet', {
      connection: g.connection, roles: roles(g.stack), identities: [seller(1), { ...seller(2), deploymentRegion: 'us-west-2' }],
    });
    expect(() => mixed.addAlarms()).toThrow(/MyStack\/Fleet.*us-east-1, us-west-2.*several deployment regions/);
    const h = fixture();
    const ok = fleetOf(h, [seller(1)]);
    expect(() => ok.addAlarms({ topCount: 0 })).toThrow(/MyStack\/Fleet.*topCount.*0/);
    ok.addAlarms();
    expect(() => ok.addAlarms()).toThrow(/MyStack\/Fleet.*already called/);
  });

  test('an environment-agnostic stack gets a warning naming the region to deploy to', () => {
    const app = new App();
    const stack = new Stack(app, 'Agnostic');
    const connection = new ServiceConnection(stack, 'Dpi', {
      endpoints: ServiceEndpoints.singleOrigin('https://api.example-dpi.com'),
      refreshToken: secretsmanager.Secret.fromSecretCompleteArn(stack, 'T', SECRET_ARN),
      journalTableName: 'dpi-lifecycle-journal',
    });
    const fleet = new NotificationPipelineFleet(stack, 'Fleet', {
      connection, roles: roles(stack), identities: [seller(1)], deploymentRegion: 'us-east-2',
    });
    fleet.addAlarms();
    Annotations.fromStack(stack).hasWarning('/Agnostic/Fleet', Match.stringLikeRegexp('The fleet alarms watch the region the stack is deployed to: deploy it to us-east-2'));
  });

  test('cdk-nag: no unacknowledged finding on the fleet alarms in any of the four packs (with and without a topic)', () => {
    for (const options of [{}, { perIdentity: true }] as NotificationPipelineFleetAlarmOptions[]) {
      const f = fixture();
      const fleet = fleetOf(f, ids(1, 6).map(seller), 2);
      fleet.addAlarms(options);
      f.app.synth();
      for (const pack of [new AwsSolutionsChecks(), new HIPAASecurityChecks(), new NIST80053R5Checks(), new ServerlessChecks()]) {
        const found = pack.validateScope(f.app).violations
          .flatMap((v) => v.violatingResources.map((r) => `${v.ruleName} ${r.constructPath}`))
          .filter((x) => x.includes('/Fleet/'));
        expect([pack.readPackName, found]).toEqual([pack.readPackName, []]);
      }
    }
  });
});
