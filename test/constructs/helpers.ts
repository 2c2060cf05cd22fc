import { App, Stack } from 'aws-cdk-lib';
import { Template } from 'aws-cdk-lib/assertions';
import * as secretsmanager from 'aws-cdk-lib/aws-secretsmanager';
import {
  AccountType,
  LegacyNotificationPipeline,
  LegacyNotificationPipelineProps,
  NotificationPipeline,
  NotificationPipelineProps,
  NotificationPipelineRoles,
  NotificationType,
  ServiceConnection,
  ServiceEndpoints,
} from '../../src';

export const SECRET_ARN = 'arn:aws:secretsmanager:us-east-1:123456789012:secret:dpi/refresh-token-AbCdEf';

export interface Fixture {
  readonly app: App;
  readonly stack: Stack;
  readonly connection: ServiceConnection;
}

/** A stack in us-east-1 with a connection whose secret is imported by ARN (no value in the template). */
export function fixture(stackProps: { region?: string | null } = {}): Fixture {
  const app = new App();
  const region = stackProps.region === null ? undefined : (stackProps.region ?? 'us-east-1');
  const stack = new Stack(app, 'MyStack', region ? { env: { account: '123456789012', region } } : {});
  const connection = new ServiceConnection(stack, 'Dpi', {
    endpoints: ServiceEndpoints.singleOrigin('https://api.example-dpi.com'),
    refreshToken: secretsmanager.Secret.fromSecretCompleteArn(stack, 'Token', SECRET_ARN),
    journalTableName: 'dpi-lifecycle-journal',
  });
  return { app, stack, connection };
}

export function roles(stack: Stack, id = 'Roles'): NotificationPipelineRoles {
  return new NotificationPipelineRoles(stack, id, { serviceAccountId: '111122223333', externalId: 'ext-123' });
}

export function sellerPipeline(
  f: Fixture, r: NotificationPipelineRoles, id: string, extra: Partial<NotificationPipelineProps> = {},
): NotificationPipeline {
  return new NotificationPipeline(f.stack, id, {
    connection: f.connection,
    remoteIdentityId: 362,
    accountType: AccountType.SELLER,
    notificationTypes: [NotificationType.ORDER_CHANGE, NotificationType.REPORT_PROCESSING_FINISHED],
    roles: r,
    ...extra,
  });
}

export const LEGACY_QUEUE_ARN = 'arn:aws:sqs:us-east-1:123456789012:legacy-notifications';

/** A legacy pipeline of subscription 9001 / identity 362 (ORDER_CHANGE to LEGACY_QUEUE_ARN). */
export function legacyPipeline(f: Fixture, id: string, extra: Partial<LegacyNotificationPipelineProps> = {}): LegacyNotificationPipeline {
  return new LegacyNotificationPipeline(f.stack, id, {
    connection: f.connection,
    subscriptionId: 9001,
    remoteIdentityId: 362,
    queueArn: LEGACY_QUEUE_ARN,
    notificationTypes: [NotificationType.ORDER_CHANGE],
    ...extra,
  });
}

export function template(stack: Stack): Template {
  return Template.fromStack(stack);
}

export function countOf(t: Template, type: string): number {
  return Object.keys(t.findResources(type)).length;
}

/** Snapshot serializer that replaces asset hashes (64 hex characters) so snapshots survive handler rebuilds. */
export const assetHashSerializer = {
  test: (value: unknown): boolean => typeof value === 'string' && /[0-9a-f]{64}/.test(value),
  print: (value: unknown): string => JSON.stringify(String(value).replace(/[0-9a-f]{64}/g, '[ASSET HASH]')),
};
