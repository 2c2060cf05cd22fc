/**
 * `NotificationPipelineFleetIdentity.existingSubscriptionId`: a fleet adopts existing unified pipelines. The adopt ID
 * reaches each pipeline's resource (AdoptId), adopted pipelines default to RETAIN (the fleet's removalPolicy is for the
 * pipelines it creates), bad and repeated IDs are synth errors naming the construct path and the value, and adding
 * the prop moves no identity to another nested stack (same nested stack, same logical ID, same journal key).
 */
import { RemovalPolicy } from 'aws-cdk-lib';
import { Template } from 'aws-cdk-lib/assertions';
import { fixture, roles } from './helpers';
import { AccountType, NotificationPipelineFleet, NotificationPipelineFleetIdentity, NotificationType } from '../../src';
import { fleetBucketOf } from '../../src/notifications/fleet-hash';

const seller = (remoteIdentityId: number, extra: Partial<NotificationPipelineFleetIdentity> = {}): NotificationPipelineFleetIdentity => ({
  remoteIdentityId, accountType: AccountType.SELLER, notificationTypes: [NotificationType.ORDER_CHANGE], ...extra,
});
const IDS = Array.from({ length: 40 }, (_, i) => 3001 + i);

interface Placed { nested: string; logicalId: string; journalKey: string; adoptId?: string; removalPolicy: string }

/** Every pipeline of the fleet by remote identity: its nested stack, logical ID, journal key, AdoptId and RemovalPolicy. */
function placement(identities: NotificationPipelineFleetIdentity[], extra: { removalPolicy?: RemovalPolicy } = {}): Map<number, Placed> {
  const f = fixture();
  const fleet = new NotificationPipelineFleet(f.stack, 'Fleet', {
    connection: f.connection, roles: roles(f.stack), nestedStackCount: 5, identities, ...extra,
  });
  const out = new Map<number, Placed>();
  for (const nested of fleet.nestedStacks) {
    for (const [logicalId, res] of Object.entries(Template.fromStack(nested).findResources('Custom::DpiNotificationPipeline'))) {
      const p = res.Properties as Record<string, string>;
      out.set(Number(p.RemoteIdentityId), {
        nested: nested.node.id, logicalId, journalKey: p.JournalKey, adoptId: p.AdoptId, removalPolicy: p.RemovalPolicy,
      });
    }
  }
  return out;
}

describe('NotificationPipelineFleet adoption (existingSubscriptionId)', () => {
  test('the adopt ID reaches each adopted pipeline; adopted ones default to RETAIN, created ones keep the fleet\'s default', () => {
    const placed = placement([seller(3001, { existingSubscriptionId: 70001 }), seller(3002), seller(3003, { existingSubscriptionId: 70003 })]);
    expect(placed.get(3001)).toMatchObject({ adoptId: '70001', removalPolicy: 'retain' });
    expect(placed.get(3003)).toMatchObject({ adoptId: '70003', removalPolicy: 'retain' });
    expect(placed.get(3002)).toMatchObject({ removalPolicy: 'destroy' });
    expect(placed.get(3002)!.adoptId).toBeUndefined();
  });

  test('an adopted identity\'s own DESTROY is honoured; the fleet\'s DESTROY does not reach adopted pipelines, its RETAIN reaches the others', () => {
    const own = placement([seller(3001, { existingSubscriptionId: 70001, removalPolicy: RemovalPolicy.DESTROY })]);
    expect(own.get(3001)).toMatchObject({ adoptId: '70001', removalPolicy: 'destroy' });
    const fleetDestroy = placement([seller(3001, { existingSubscriptionId: 70001 }), seller(3002)], { removalPolicy: RemovalPolicy.DESTROY });
    expect(fleetDestroy.get(3001)!.removalPolicy).toBe('retain');
    expect(fleetDestroy.get(3002)!.removalPolicy).toBe('destroy');
    const fleetRetain = placement([seller(3002)], { removalPolicy: RemovalPolicy.RETAIN });
    expect(fleetRetain.get(3002)!.removalPolicy).toBe('retain');
  });

  test('adding existingSubscriptionId moves no identity: same nested stack, logical ID and journal key', () => {
    const plain = placement(IDS.map((id) => seller(id)));
    const adopted = placement(IDS.map((id, i) => seller(id, i % 2 === 0 ? { existingSubscriptionId: 90000 + i } : {})));
    expect(plain.size).toBe(IDS.length);
    expect(new Set([...plain.values()].map((p) => p.nested)).size).toBeGreaterThan(1);
    for (const id of IDS) {
      const a = adopted.get(id)!;
      const p = plain.get(id)!;
      expect([a.nested, a.logicalId, a.journalKey]).toEqual([p.nested, p.logicalId, p.journalKey]);
      expect(a.nested).toBe(`Pipelines${fleetBucketOf(id, 5)}`);
    }
  });

  test.each([
    [0, 'is not a positive integer subscription ID'],
    [-4, 'is not a positive integer subscription ID'],
    [1.5, 'is not a positive integer subscription ID'],
    [Number.MAX_SAFE_INTEGER + 2, 'is not a positive integer subscription ID'],
  ])('existingSubscriptionId %p is a synth error naming the path and the value', (bad, problem) => {
    const f = fixture();
    expect(() => new NotificationPipelineFleet(f.stack, 'Fleet', {
      connection: f.connection, roles: roles(f.stack), identities: [seller(3001), seller(3002, { existingSubscriptionId: bad })],
    })).toThrow(`MyStack/Fleet: identities[1].existingSubscriptionId '${bad}' (remote identity 3002) ${problem}`);
  });

  test('an adopt ID given to two identities is a synth error naming both; nothing is created', () => {
    const f = fixture();
    expect(() => new NotificationPipelineFleet(f.stack, 'Fleet', {
      connection: f.connection,
      roles: roles(f.stack),
      identities: [seller(3001, { existingSubscriptionId: 70001 }), seller(3002), seller(3003, { existingSubscriptionId: 70001 })],
    })).toThrow("MyStack/Fleet: identities[2].existingSubscriptionId '70001' (remote identity 3003) is also the existingSubscriptionId of "
      + 'identities[0] (remote identity 3001); adopt each existing pipeline once');
    expect(f.stack.node.findAll().filter((c) => c.node.id.startsWith('Pipelines'))).toEqual([]);
  });
});
