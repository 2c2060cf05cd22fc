/**
 * Tiny CDK apps synthesized in-process with the real constructs, for the runner's tests against the emulator.
 */
import { App, RemovalPolicy, Stack } from 'aws-cdk-lib';
import * as secretsmanager from 'aws-cdk-lib/aws-secretsmanager';
import {
  AccountType, NotificationPipeline, NotificationPipelineRoles, NotificationType, ProviderOptions, ServiceConnection, Subscription,
} from '../../src';

/** What the tiny app declares. */
export interface TinyAppOptions {
  /** Seller pipeline types (identity 362). */
  readonly types?: string[];
  /** Make it a vendor pipeline of identity 363 instead (a change of remote identity). */
  readonly vendor?: boolean;
  readonly retainPipeline?: boolean;
  /** Add an orders subscription (product 3001) that depends on the pipeline (so it is the second resource). */
  readonly subscriptionName?: string;
}

/** A test stack in account 123456789012 / us-east-1 with the connection and pipeline roles every local app shares. */
export function connectedStack(app: App, id: string, provider?: ProviderOptions):
{ stack: Stack; connection: ServiceConnection; roles: NotificationPipelineRoles } {
  const stack = new Stack(app, id, { env: { account: '123456789012', region: 'us-east-1' } });
  const connection = new ServiceConnection(stack, 'Dpi', {
    singleOriginUrl: 'https://api.example-dpi.com',
    refreshToken: secretsmanager.Secret.fromSecretNameV2(stack, 'Token', 'dpi/refresh-token'),
    journalTableName: 'dpi-lifecycle-journal',
    provider,
  });
  const roles = new NotificationPipelineRoles(stack, 'Roles', { serviceAccountId: '111122223333', externalId: 'ext-1' });
  return { stack, connection, roles };
}

/** Synthesizes the tiny app into `outdir` and returns it. */
export function synthTinyApp(outdir: string, o: TinyAppOptions = {}): string {
  const app = new App({ outdir });
  const { stack, connection, roles } = connectedStack(app, 'Tiny');
  const pipeline = new NotificationPipeline(stack, 'Pipeline', {
    connection,
    roles,
    remoteIdentityId: o.vendor ? 363 : 362,
    accountType: o.vendor ? AccountType.VENDOR : AccountType.SELLER,
    notificationTypes: o.vendor
      ? [NotificationType.ITEM_SALES_EVENT_CHANGE]
      : (o.types ?? ['ORDER_CHANGE', 'REPORT_PROCESSING_FINISHED']).map((t) => NotificationType.of(t)),
    removalPolicy: o.retainPipeline ? RemovalPolicy.RETAIN : undefined,
  });
  if (o.subscriptionName) {
    const sub = new Subscription(stack, 'Orders', {
      connection,
      productId: 3001,
      storageGroupId: 501,
      remoteIdentityId: 362,
      productParameters: { marketplace_id: 'ATVPDKIKX0DER' },
      stageIds: [1001],
      name: o.subscriptionName,
    });
    sub.node.addDependency(pipeline);
  }
  app.synth();
  return outdir;
}
