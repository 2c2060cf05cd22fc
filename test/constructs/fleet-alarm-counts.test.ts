import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { CfnResource } from 'aws-cdk-lib';
import { Template } from 'aws-cdk-lib/assertions';
import * as cloudwatch from 'aws-cdk-lib/aws-cloudwatch';
import { fixture, roles } from './helpers';
import { AccountType, NotificationPipelineFleet, NotificationType } from '../../src';

/** The rows of the alarm count table in docs/constructs.md ("Fleet monitoring"): identities, kind, alarm count. */
function documentedCounts(): Array<{ identities: number; kind: string; alarms: number }> {
  const doc = readFileSync(join(__dirname, '..', '..', 'docs', 'constructs.md'), 'utf8');
  const section = doc.slice(doc.indexOf('### Alarm count and cost'));
  const rows = [...section.matchAll(/^\| ([\d,]+) \| (fleet|per identity) \| ([\d,]+) \|/gm)];
  const num = (x: string): number => Number(x.replace(/,/g, ''));
  return rows.map((m) => ({
    identities: num(m[1]),
    kind: m[2],
    alarms: num(m[3]),
  }));
}

/** A fleet of `n` sellers with a queue type (three signals), its alarms added. */
function build(n: number, perIdentity: boolean, nestedStackCount?: number) {
  const f = fixture();
  const fleet = new NotificationPipelineFleet(f.stack, 'Fleet', {
    connection: f.connection,
    roles: roles(f.stack),
    nestedStackCount,
    identities: Array.from({ length: n }, (_, i) => ({
      remoteIdentityId: 10_000 + i, accountType: AccountType.SELLER, notificationTypes: [NotificationType.REPORT_PROCESSING_FINISHED],
    })),
  });
  const returned = fleet.addAlarms({ perIdentity });
  return { f, fleet, returned };
}

describe('the alarm counts that docs/constructs.md states', () => {
  const rows = documentedCounts();

  test('the table has the four rows (300 and 2,000 identities, fleet and per-identity alarms)', () => {
    expect(rows.map((r) => `${r.identities} ${r.kind}`)).toEqual(['300 fleet', '300 per identity', '2000 fleet', '2000 per identity']);
  });

  test.each([false, true])('300 identities, perIdentity %s: synthesized alarm resources (parent + nested stacks)', (perIdentity) => {
    const { f, fleet, returned } = build(300, perIdentity);
    f.app.synth();
    let count = Object.keys(Template.fromStack(f.stack).findResources('AWS::CloudWatch::Alarm')).length;
    for (const n of fleet.nestedStacks) count += Object.keys(Template.fromStack(n).findResources('AWS::CloudWatch::Alarm')).length;
    const row = rows.find((r) => r.identities === 300 && r.kind === (perIdentity ? 'per identity' : 'fleet'))!;
    expect(count).toBe(row.alarms);
    expect(returned).toHaveLength(row.alarms);
  }, 120_000);

  test.each([false, true])('2,000 identities, perIdentity %s: alarm resources in the construct tree (same code path, no template synthesis)', (perIdentity) => {
    // With per-identity alarms the default 16 nested stacks pass CloudFormation's 500 resources (docs): use 32.
    const { f, returned } = build(2000, perIdentity, perIdentity ? 32 : undefined);
    const isAlarm = (c: unknown): boolean => CfnResource.isCfnResource(c) && c.cfnResourceType === cloudwatch.CfnAlarm.CFN_RESOURCE_TYPE_NAME;
    const inTree = f.app.node.findAll().filter(isAlarm).length;
    const row = rows.find((r) => r.identities === 2000 && r.kind === (perIdentity ? 'per identity' : 'fleet'))!;
    expect(inTree).toBe(row.alarms);
    expect(returned).toHaveLength(row.alarms);
  }, 120_000);
});
