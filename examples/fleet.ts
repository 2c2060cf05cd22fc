import { App, Stack, StackProps } from 'aws-cdk-lib';
import * as secretsmanager from 'aws-cdk-lib/aws-secretsmanager';
import { Construct } from 'constructs';
import { SERVICE_ENDPOINTS } from './app';
import {
  AccountType, NotificationPipelineFleet, NotificationPipelineRoles, NotificationType, ServiceConnection,
} from 'data-pipeline-integration-cdk';

/*
 * A fleet: one notification pipeline per seller identity, spread over nested stacks.
 *   npx cdk synth --app 'npx ts-node --transpile-only -r ../scripts/package-alias.ts fleet.ts' -c sellers=200001,200002
 * Context: `sellers`, comma-separated remote identity IDs (default 200001 to 200020).
 */

/** The seller identities of the `sellers` context value (default 200001 to 200020). */
export function fleetSellers(scope: Construct): number[] {
  const value = scope.node.tryGetContext('sellers');
  if (value === undefined || value === null || value === '') return Array.from({ length: 20 }, (_, i) => 200_001 + i);
  return String(value).split(',').map((s) => Number(s.trim()));
}

/** A stack with the service connection, the pipeline roles and a fleet of seller pipelines. */
export class SellerFleetStack extends Stack {
  /** The fleet. */
  public readonly fleet: NotificationPipelineFleet;

  constructor(scope: Construct, id: string, props?: StackProps) {
    super(scope, id, props);
    const connection = new ServiceConnection(this, 'Dpi', {
      endpoints: SERVICE_ENDPOINTS,
      refreshToken: secretsmanager.Secret.fromSecretNameV2(this, 'RefreshToken', 'dpi/refresh-token'),
      journalTableName: 'dpi-lifecycle-journal',
    });
    const roles = new NotificationPipelineRoles(this, 'PipelineRoles', { serviceAccountId: '111122223333' });
    this.fleet = new NotificationPipelineFleet(this, 'Sellers', {
      connection,
      roles,
      identities: fleetSellers(this).map((remoteIdentityId) => ({
        remoteIdentityId,
        accountType: AccountType.SELLER,
        notificationTypes: [NotificationType.ORDER_CHANGE, NotificationType.REPORT_PROCESSING_FINISHED],
      })),
    });
  }
}

/** Build the fleet app (`cdk --app ... fleet.ts`, or in code with context and an output directory). */
export function buildFleetApp(options: { context?: Record<string, string>; outdir?: string } = {}): App {
  const app = new App({ outdir: options.outdir, context: options.context });
  new SellerFleetStack(app, 'Platform', { env: { account: '123456789012', region: 'us-east-1' } });
  return app;
}

if (require.main === module) buildFleetApp().synth();
