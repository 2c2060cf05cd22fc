/**
 * Apps of many notification pipelines (plain stacks of `NotificationPipeline`s, one remote identity each) and the
 * emulator fixtures their identities need: used by the deploy-growth benchmark and the local scale tests.
 */
import { App, Stack } from 'aws-cdk-lib';
import * as secretsmanager from 'aws-cdk-lib/aws-secretsmanager';
import {
  AccountType, NotificationPipeline, NotificationPipelineFleet, NotificationPipelineRoles, NotificationType, ProviderOptions, ServiceConnection,
} from '../../src';
import type { EmulatorFixtures } from '../../src/emulator';

/** Remote identity of pipeline `i` (0-based). */
export const FIRST_IDENTITY = 100_000;

/** Pipelines per stack: below CloudFormation's 500 resources (a pipeline is one resource; the stack adds a few). */
export const PIPELINES_PER_STACK = 400;

/** The remote identities (sellers of the emulator's account 1001) of `n` pipelines, from identity `first`. */
export function identityFixtures(n: number, first = FIRST_IDENTITY): EmulatorFixtures {
  return {
    remoteIdentities: Array.from({ length: n }, (_, i) => ({
      id: first + i,
      account: 1001,
      name: `Seller ${i}`,
      remote_identity_type_id: 17,
      remote_identity_type_name: 'Amazon Selling Partner',
      marketplaces: ['ATVPDKIKX0DER'],
    })),
  };
}

/**
 * Synthesizes an app of `n` seller pipelines (identities FIRST_IDENTITY...) into `outdir`, spread over plain stacks of
 * at most `perStack` pipelines, each with its own connection; the roles are the first stack's. Returns the stack count.
 */
export function synthPipelineApp(outdir: string, n: number, perStack = PIPELINES_PER_STACK, provider?: ProviderOptions): number {
  const app = new App({ outdir });
  const stacks = Math.max(1, Math.ceil(n / perStack));
  // The roles exist once per account: declared in the first stack, referenced by the others (cross-stack exports).
  let roles: NotificationPipelineRoles | undefined;
  for (let s = 0; s < stacks; s++) {
    const stack = new Stack(app, `Pipelines${s}`, { env: { account: '123456789012', region: 'us-east-1' } });
    const connection = new ServiceConnection(stack, 'Dpi', {
      singleOriginUrl: 'https://api.example-dpi.com',
      refreshToken: secretsmanager.Secret.fromSecretNameV2(stack, 'Token', 'dpi/refresh-token'),
      journalTableName: 'dpi-lifecycle-journal',
      provider,
    });
    roles ??= new NotificationPipelineRoles(stack, 'Roles', { serviceAccountId: '111122223333', externalId: 'ext-1' });
    for (let i = s * perStack; i < Math.min(n, (s + 1) * perStack); i++) {
      new NotificationPipeline(stack, `Seller${FIRST_IDENTITY + i}`, {
        connection,
        roles,
        remoteIdentityId: FIRST_IDENTITY + i,
        accountType: AccountType.SELLER,
        notificationTypes: [NotificationType.ORDER_CHANGE],
      });
    }
  }
  app.synth();
  return stacks;
}

/**
 * Synthesizes an app of one stack whose `NotificationPipelineFleet` declares `n` seller pipelines (identities
 * FIRST_IDENTITY...) over its nested stacks. Returns the stack count (the parent and its nested stacks).
 */
export function synthFleetApp(outdir: string, n: number, provider?: ProviderOptions, nestedStackCount?: number): number {
  const app = new App({ outdir });
  const stack = new Stack(app, 'Partners', { env: { account: '123456789012', region: 'us-east-1' } });
  const connection = new ServiceConnection(stack, 'Dpi', {
    singleOriginUrl: 'https://api.example-dpi.com',
    refreshToken: secretsmanager.Secret.fromSecretNameV2(stack, 'Token', 'dpi/refresh-token'),
    journalTableName: 'dpi-lifecycle-journal',
    provider,
  });
  const roles = new NotificationPipelineRoles(stack, 'Roles', { serviceAccountId: '111122223333', externalId: 'ext-1' });
  const fleet = new NotificationPipelineFleet(stack, 'Sellers', {
    connection,
    roles,
    identities: Array.from({ length: n }, (_, i) => ({
      remoteIdentityId: FIRST_IDENTITY + i,
      accountType: AccountType.SELLER,
      notificationTypes: [NotificationType.ORDER_CHANGE],
    })),
    ...(nestedStackCount !== undefined ? { nestedStackCount } : {}),
  });
  app.synth();
  return 1 + fleet.nestedStacks.length;
}
