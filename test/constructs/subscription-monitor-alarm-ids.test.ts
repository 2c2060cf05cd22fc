import { Stack } from 'aws-cdk-lib';
import { Template } from 'aws-cdk-lib/assertions';
import { Construct } from 'constructs';
import { fixture } from './helpers';
import { Subscription, SubscriptionMonitor } from '../../src';

type Connection = ReturnType<typeof fixture>['connection'];

function subscription(scope: Construct, connection: Connection, id: string, productId = 3001): Subscription {
  return new Subscription(scope, id, { connection, productId, remoteIdentityId: 362, productParameters: { marketplace_id: 'ATVPDKIKX0DER' } });
}

/** Logical ID of each alarm of the monitor, keyed by `<metric name>|<subscription logical ID>`. */
function alarmIds(stack: Stack): Map<string, string> {
  const out = new Map<string, string>();
  for (const [logicalId, res] of Object.entries(Template.fromStack(stack).findResources('AWS::CloudWatch::Alarm'))) {
    const props = res.Properties as { MetricName: string; Dimensions?: Array<{ Name: string; Value: unknown }> };
    const dim = props.Dimensions?.find((d) => d.Name === 'SubscriptionId');
    if (!dim) continue;
    const ref = JSON.stringify(stack.resolve(dim.Value));
    out.set(`${props.MetricName}|${ref}`, logicalId);
  }
  return out;
}

/** A stack with the monitored subscriptions `names` (in that order). */
function monitored(names: string[]): Map<string, string> {
  const f = fixture();
  const subs = names.map((n) => subscription(f.stack, f.connection, n));
  new SubscriptionMonitor(f.stack, 'Monitor', { connection: f.connection, subscriptions: subs });
  return alarmIds(f.stack);
}

describe('SubscriptionMonitor alarm IDs', () => {
  test('removing the first of three subscriptions leaves the alarms of the others unchanged', () => {
    const before = monitored(['Orders', 'Returns', 'Refunds']);
    const after = monitored(['Returns', 'Refunds']);
    expect(before.size).toBe(9);
    expect(after.size).toBe(6);
    for (const [key, logicalId] of after) {
      expect(before.get(key)).toBe(logicalId);
    }
    // The removed subscription's alarms are gone, not renamed onto another one.
    const removed = [...before.entries()].filter(([key]) => !after.has(key)).map(([, id]) => id);
    expect(removed).toHaveLength(3);
    for (const id of removed) expect([...after.values()]).not.toContain(id);
  });

  test('the order in which subscriptions are added does not change their alarm IDs', () => {
    const a = monitored(['Orders', 'Returns']);
    const b = monitored(['Returns', 'Orders']);
    expect(new Map([...b].sort())).toEqual(new Map([...a].sort()));
  });

  test('two subscriptions with the same construct ID under different scopes get distinct alarms', () => {
    const f = fixture();
    const us = subscription(new Construct(f.stack, 'Us'), f.connection, 'Orders');
    const eu = subscription(new Construct(f.stack, 'Eu'), f.connection, 'Orders', 3002);
    const m = new SubscriptionMonitor(f.stack, 'Monitor', { connection: f.connection });
    const a = m.addSubscription(us);
    const b = m.addSubscription(eu);
    expect(a.errors.node.id).not.toBe(b.errors.node.id);
    expect(a.errors.node.id).toContain('Orders');
    expect(alarmIds(f.stack).size).toBe(6);
  });
});
