/**
 * Removal policies ("do no harm"): every resource is rendered with DeletionPolicy/UpdateReplacePolicy Delete, so
 * CloudFormation always sends the Delete, and the `RemovalPolicy` property tells the handler whether to end the record
 * (`destroy`) or to keep and release it (`retain`). Records that existed before the stack (adopted ones, legacy
 * pipelines) are retained unless the user asks otherwise.
 */
import { RemovalPolicy, Stack } from 'aws-cdk-lib';
import { Template } from 'aws-cdk-lib/assertions';
import { Fixture, fixture, legacyPipeline, roles, sellerPipeline } from './helpers';
import { AccountType, NotificationPipelineFleet, NotificationType, Subscription } from '../../src';

type Build = (f: Fixture, removalPolicy: RemovalPolicy | undefined) => unknown;

const TYPES = {
  subscription: 'Custom::DpiSubscription',
  pipeline: 'Custom::DpiNotificationPipeline',
  legacy: 'Custom::DpiLegacyNotificationPipeline',
} as const;

const subscription = (adopt: boolean): Build => (f, removalPolicy) => new Subscription(f.stack, 'Orders', {
  connection: f.connection, productId: 3001, ...(adopt ? { existingSubscriptionId: 9123 } : {}), removalPolicy,
});
const pipeline = (adopt: boolean): Build => (f, removalPolicy) =>
  sellerPipeline(f, roles(f.stack), 'Orders', { ...(adopt ? { existingSubscriptionId: 9200 } : {}), removalPolicy });
const legacy: Build = (f, removalPolicy) => legacyPipeline(f, 'Orders', { removalPolicy });

/** The one resource of `type` in the stack: its policies and its RemovalPolicy property. */
function rendered(stack: Stack, type: string): { DeletionPolicy?: string; UpdateReplacePolicy?: string; RemovalPolicy?: unknown } {
  const resources = Object.values(Template.fromStack(stack).findResources(type));
  expect(resources).toHaveLength(1);
  const r = resources[0] as { DeletionPolicy?: string; UpdateReplacePolicy?: string; Properties: Record<string, unknown> };
  return { DeletionPolicy: r.DeletionPolicy, UpdateReplacePolicy: r.UpdateReplacePolicy, RemovalPolicy: r.Properties.RemovalPolicy };
}

// [construct, build, resource type, the default's property]
const defaults: Array<[string, Build, string, 'retain' | 'destroy']> = [
  ['Subscription (created)', subscription(false), TYPES.subscription, 'destroy'],
  ['Subscription (existingSubscriptionId)', subscription(true), TYPES.subscription, 'retain'],
  ['NotificationPipeline (created)', pipeline(false), TYPES.pipeline, 'destroy'],
  ['NotificationPipeline (existingSubscriptionId)', pipeline(true), TYPES.pipeline, 'retain'],
  ['LegacyNotificationPipeline (always adopted)', legacy, TYPES.legacy, 'retain'],
];

describe('removalPolicy', () => {
  test.each(defaults)('%s: the default RemovalPolicy property is rendered, the resource is DeletionPolicy Delete', (_name, build, type, expected) => {
    const f = fixture();
    build(f, undefined);
    expect(rendered(f.stack, type)).toEqual({ DeletionPolicy: 'Delete', UpdateReplacePolicy: 'Delete', RemovalPolicy: expected });
  });

  test.each(defaults)('%s: RETAIN and DESTROY are rendered as the property, the resource stays Delete', (_name, build, type) => {
    for (const [policy, value] of [[RemovalPolicy.RETAIN, 'retain'], [RemovalPolicy.DESTROY, 'destroy']] as const) {
      const f = fixture();
      build(f, policy);
      expect(rendered(f.stack, type)).toEqual({ DeletionPolicy: 'Delete', UpdateReplacePolicy: 'Delete', RemovalPolicy: value });
    }
  });

  test.each(defaults)('%s: SNAPSHOT and RETAIN_ON_UPDATE_OR_DELETE are refused naming the path and the value', (_name, build) => {
    for (const policy of [RemovalPolicy.RETAIN_ON_UPDATE_OR_DELETE, RemovalPolicy.SNAPSHOT]) {
      const f = fixture();
      expect(() => build(f, policy)).toThrow(`MyStack/Orders: removalPolicy '${policy}' is not accepted; use RemovalPolicy.RETAIN (`);
    }
  });

  test('NotificationPipelineFleet: per identity, the fleet\'s default DESTROY; RETAIN kept as the property; every resource Delete', () => {
    const f = fixture();
    const seller = (id: number, removalPolicy?: RemovalPolicy) =>
      ({ remoteIdentityId: id, accountType: AccountType.SELLER, notificationTypes: [NotificationType.ORDER_CHANGE], removalPolicy });
    const fleet = new NotificationPipelineFleet(f.stack, 'Fleet', {
      connection: f.connection, roles: roles(f.stack), nestedStackCount: 1, identities: [seller(362), seller(363, RemovalPolicy.RETAIN)],
    });
    const nested = fleet.nestedStacks[0];
    const resources = Object.values(Template.fromStack(nested).findResources(TYPES.pipeline)) as Array<{
      DeletionPolicy: string; UpdateReplacePolicy: string; Properties: Record<string, unknown>;
    }>;
    expect(resources.map((r) => [r.Properties.RemoteIdentityId, r.Properties.RemovalPolicy, r.DeletionPolicy, r.UpdateReplacePolicy]))
      .toEqual([['362', 'destroy', 'Delete', 'Delete'], ['363', 'retain', 'Delete', 'Delete']]);
  });

  test('NotificationPipelineFleet: SNAPSHOT / RETAIN_ON_UPDATE_OR_DELETE refused for the fleet and per identity', () => {
    const build = (fleetPolicy?: RemovalPolicy, identityPolicy?: RemovalPolicy) => {
      const f = fixture();
      return () => new NotificationPipelineFleet(f.stack, 'Fleet', {
        connection: f.connection,
        roles: roles(f.stack),
        removalPolicy: fleetPolicy,
        identities: [
          { remoteIdentityId: 362, accountType: AccountType.SELLER, notificationTypes: [NotificationType.ORDER_CHANGE] },
          {
            remoteIdentityId: 363, accountType: AccountType.SELLER, notificationTypes: [NotificationType.ORDER_CHANGE], removalPolicy: identityPolicy,
          },
        ],
      });
    };
    expect(build(RemovalPolicy.SNAPSHOT)).toThrow("MyStack/Fleet: removalPolicy 'snapshot' is not accepted; use RemovalPolicy.RETAIN");
    expect(build(undefined, RemovalPolicy.RETAIN_ON_UPDATE_OR_DELETE))
      .toThrow("MyStack/Fleet: identities[1].removalPolicy 'retain-on-update-or-delete' is not accepted; use RemovalPolicy.RETAIN");
  });
});
