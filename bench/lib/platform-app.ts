/**
 * A platform team's app as a new user writes it from the README and docs/: a `NotificationPipelineFleet` of N seller
 * identities with fleet alarms to an on-call topic in the parent stack, three single pipelines, 20 subscriptions, a
 * backfill, 250 order IDs, a `SubscriptionMonitor` and a `DriftMonitor`. Used by `bench/fleet-ops.ts` (the fleet
 * operations scenario: deploy, drift twice, drift --fix, destroy at the service's default rate limit).
 */
import { App, Stack } from 'aws-cdk-lib';
import * as kms from 'aws-cdk-lib/aws-kms';
import * as secretsmanager from 'aws-cdk-lib/aws-secretsmanager';
import * as sns from 'aws-cdk-lib/aws-sns';
import { identityFixtures } from './pipelines';
import {
  AccountType, DriftMonitor, HistoryRequest, NotificationPipeline, NotificationPipelineFleet, NotificationPipelineRoles,
  NotificationType, ProductOrderJobs, ServiceConnection, Subscription, SubscriptionMonitor,
} from '../../src';
import type { EmulatorFixtures } from '../../src/emulator';

/** First seller identity of the fleet; the single pipelines use the next three after the fleet. */
export const PLATFORM_FIRST_IDENTITY = 200_000;

/** Counts of what the platform app declares. */
export interface PlatformAppShape {
  readonly fleet: number;
  readonly singles: number;
  readonly subscriptions: number;
  /**
   * The one-identity update: the fleet's first seller also gets `FEED_PROCESSING_FINISHED` (one nested stack, one
   * pipeline changes). Default: false.
   */
  readonly changed?: boolean;
}

/** The default shape: the app (300 sellers, 3 single pipelines, 20 subscriptions). */
export const PLATFORM_APP: PlatformAppShape = { fleet: 300, singles: 3, subscriptions: 20 };

/** The emulator identities the app needs (all sellers of account 1001), as a `--fixtures` file holds them. */
export function platformFixtures(shape: PlatformAppShape = PLATFORM_APP): EmulatorFixtures {
  return identityFixtures(Math.max(shape.fleet + shape.singles, shape.subscriptions), PLATFORM_FIRST_IDENTITY);
}

/** Synthesizes the platform app (stack `Platform`) into `outdir`. */
export function synthPlatformApp(outdir: string, shape: PlatformAppShape = PLATFORM_APP): void {
  const app = new App({ outdir });
  const stack = new Stack(app, 'Platform', { env: { account: '123456789012', region: 'us-east-1' } });
  const onCall = new sns.Topic(stack, 'OnCall', { masterKey: new kms.Key(stack, 'OnCallKey', { enableKeyRotation: true }) });
  const connection = new ServiceConnection(stack, 'Dpi', {
    singleOriginUrl: 'https://api.example-dpi.com',
    refreshToken: secretsmanager.Secret.fromSecretNameV2(stack, 'Token', 'dpi/refresh-token'),
    journalTableName: 'dpi-lifecycle-journal',
  });
  const roles = new NotificationPipelineRoles(stack, 'Roles', { serviceAccountId: '111122223333' });
  const fleet = new NotificationPipelineFleet(stack, 'Sellers', {
    connection,
    roles,
    identities: Array.from({ length: shape.fleet }, (_, i) => ({
      remoteIdentityId: PLATFORM_FIRST_IDENTITY + i,
      accountType: AccountType.SELLER,
      notificationTypes: [NotificationType.ORDER_CHANGE, NotificationType.REPORT_PROCESSING_FINISHED,
        ...(i === 0 && shape.changed === true ? [NotificationType.FEED_PROCESSING_FINISHED] : [])],
    })),
  });
  fleet.addAlarms({ alarmTopic: onCall });
  for (let i = 0; i < shape.singles; i++) {
    const p = new NotificationPipeline(stack, `Single${i}`, {
      connection,
      roles,
      remoteIdentityId: PLATFORM_FIRST_IDENTITY + shape.fleet + i,
      accountType: AccountType.SELLER,
      notificationTypes: [NotificationType.LISTINGS_ITEM_STATUS_CHANGE],
    });
    p.addAlarms({ alarmTopic: onCall });
  }
  const monitor = new SubscriptionMonitor(stack, 'DataMonitor', { connection });
  let first: Subscription | undefined;
  for (let i = 0; i < shape.subscriptions; i++) {
    const s = new Subscription(stack, `Orders${i}`, {
      connection,
      productId: 3001,
      storageGroupId: 501,
      remoteIdentityId: PLATFORM_FIRST_IDENTITY + i,
      productParameters: { marketplace_id: 'ATVPDKIKX0DER' },
      stageIds: [1001],
      name: `orders-${i}`,
    });
    monitor.addSubscription(s, { label: `orders-${i}` });
    first ??= s;
  }
  if (first) {
    new HistoryRequest(stack, 'Backfill', { connection, subscription: first, startDate: '2026-11-15', endDate: '2026-11-17', stageId: 1001 });
    const orderIds = Array.from({ length: 250 }, (_, i) => `111-${String(1000000 + i).padStart(7, '0')}-${String(7000000 + i * 13).padStart(7, '0')}`);
    new ProductOrderJobs(stack, 'Reprocess', { connection, subscription: first, orderIds, stageId: 1001 });
  }
  new DriftMonitor(stack, 'Drift', { connection, alarmTopic: onCall });
  app.synth();
}
