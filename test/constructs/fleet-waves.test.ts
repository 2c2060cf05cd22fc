/**
 * A fleet deploys in waves when its pipelines' calls cannot all be served within one handler invocation at the
 * service's rate limit (src/notifications/fleet-waves.ts): the nested stacks of a wave depend on those of the wave
 * before, each wave within its budget; a fleet that fits one wave is left without dependencies.
 */
import { App, Duration, Stack } from 'aws-cdk-lib';
import { Annotations, Match, Template } from 'aws-cdk-lib/assertions';
import * as secretsmanager from 'aws-cdk-lib/aws-secretsmanager';
import { roles, SECRET_ARN } from './helpers';
import { AccountType, NotificationPipelineFleet, NotificationType, ProviderOptions, ServiceConnection, ServiceEndpoints } from '../../src';
import { fleetBucketOf } from '../../src/notifications/fleet-hash';
import { CALLS_PER_PIPELINE, pipelinesPerWave, planWaves } from '../../src/notifications/fleet-waves';

function fleetOf(n: number, provider?: ProviderOptions, nestedStackCount = 8): { stack: Stack; fleet: NotificationPipelineFleet } {
  const stack = new Stack(new App(), 'MyStack', { env: { account: '123456789012', region: 'us-east-1' } });
  const connection = new ServiceConnection(stack, 'Dpi', {
    endpoints: ServiceEndpoints.singleOrigin('https://api.example-dpi.com'),
    refreshToken: secretsmanager.Secret.fromSecretCompleteArn(stack, 'Token', SECRET_ARN),
    journalTableName: 'dpi-lifecycle-journal',
    provider,
  });
  const fleet = new NotificationPipelineFleet(stack, 'Sellers', {
    connection,
    roles: roles(stack),
    nestedStackCount,
    identities: Array.from({ length: n }, (_, i) => ({
      remoteIdentityId: 5_000 + i, accountType: AccountType.SELLER, notificationTypes: [NotificationType.ORDER_CHANGE],
    })),
  });
  return { stack, fleet };
}

/** The parent's nested stack resources: logical ID -> the nested stack resources it depends on. */
function dependsOn(stack: Stack): Map<string, string[]> {
  const nested = Template.fromStack(stack).findResources('AWS::CloudFormation::Stack');
  return new Map(Object.entries(nested).map(([id, r]) => [id, ((r.DependsOn ?? []) as string[]).filter((d) => d in nested).sort()]));
}

test('the pipelines one wave holds: the calls of one handler invocation at the rate limit, four per pipeline create, three quarters planned', () => {
  // 1,000 per 5 minutes, a 10-minute handler: two windows' worth, 1,500 planned, 4 calls per create.
  expect(CALLS_PER_PIPELINE).toBe(4);
  expect(pipelinesPerWave(undefined)).toBe(375);
  expect(pipelinesPerWave({ timeout: Duration.minutes(15) })).toBe(562);
  expect(pipelinesPerWave({ rateLimitRequests: 100 })).toBe(37);
  expect(pipelinesPerWave({ rateLimitRequests: 1000, rateLimitWindow: Duration.hours(1) })).toBe(187);
  expect(pipelinesPerWave({ rateLimitRequests: 0 })).toBeUndefined();
});

test('a fleet that fits one wave has no dependency between its nested stacks', () => {
  const { stack, fleet } = fleetOf(120);
  expect(fleet.deployWaves).toBe(1);
  expect([...dependsOn(stack).values()].every((d) => d.length === 0)).toBe(true);
  expect(Annotations.fromStack(stack).findInfo('*', Match.stringLikeRegexp('waves'))).toEqual([]);
});

test('a fleet over one wave: each wave\'s nested stacks depend on every nested stack of the wave before, and each wave fits', () => {
  // 134 requests per 5 minutes: 50 pipelines per wave; 200 pipelines over 8 nested stacks.
  const { stack, fleet } = fleetOf(200, { rateLimitRequests: 134 });
  const deps = dependsOn(stack);
  const perStack = new Map<number, number>();
  for (let i = 0; i < 200; i++) perStack.set(fleetBucketOf(5_000 + i, 8), (perStack.get(fleetBucketOf(5_000 + i, 8)) ?? 0) + 1);
  const { waves } = planWaves(perStack, 50);
  expect(fleet.deployWaves).toBe(waves.length);
  expect(waves.length).toBeGreaterThanOrEqual(4);
  for (const w of waves) expect(w.reduce((sum, i) => sum + perStack.get(i)!, 0)).toBeLessThanOrEqual(50);
  const logicalIdOf = (index: number): string => Stack.of(fleet.nestedStacks.find((n) => n.node.id === `Pipelines${index}`)!).resolve(
    fleet.nestedStacks.find((n) => n.node.id === `Pipelines${index}`)!.nestedStackResource!.logicalId) as string;
  for (let w = 0; w < waves.length; w++) {
    const expected = w === 0 ? [] : waves[w - 1].map(logicalIdOf).sort();
    for (const index of waves[w]) expect(deps.get(logicalIdOf(index))).toEqual(expected);
  }
  expect(Annotations.fromStack(stack).findInfo('/MyStack/Sellers', Match.stringLikeRegexp('^200 pipelines deploy in \\d+ waves of at most 50 '))).toHaveLength(1);
});

test('without a shared budget there are no waves; a nested stack over one wave alone is a synth error naming it and the fix', () => {
  expect(fleetOf(200, { rateLimitRequests: 0 }).fleet.deployWaves).toBe(1);
  expect(() => fleetOf(60, { rateLimitRequests: 40 }, 1)).toThrow(/MyStack\/Sellers: nestedStackCount '1' puts 60 pipelines in nested stack 0, more than one deploy wave holds \(15: .*\); raise nestedStackCount/);
});
