import { App, Duration, RemovalPolicy, Stack, StackProps, Validations } from 'aws-cdk-lib';
import * as iam from 'aws-cdk-lib/aws-iam';
import * as lambda from 'aws-cdk-lib/aws-lambda';
import * as logs from 'aws-cdk-lib/aws-logs';
import * as secretsmanager from 'aws-cdk-lib/aws-secretsmanager';
import { Construct } from 'constructs';
import { NagPlugin } from './nag';
import {
  AccountType,
  HistoryRequest,
  ILifecycleJournal,
  LifecycleJournal,
  NotificationPipeline,
  NotificationPipelineRoles,
  NotificationType,
  ProductOrderJobs,
  ServiceConnection,
  ServiceEndpoints,
  Subscription,
  SubscriptionMonitor,
} from 'data-pipeline-integration-cdk';

/*
 * Context keys (`cdk synth -c key=value`, or `buildExampleApp({ context })`):
 *   singleOriginUrl         one origin for every service (e.g. a proxy or the emulator; http only for loopback);
 *                           default: the service's six hosts (SERVICE_ENDPOINTS)
 *   refreshTokenSecretName  Secrets Manager secret holding the refresh token (default dpi/refresh-token)
 *   serviceAccountId        the service's AWS account allowed to assume the management role (default 111122223333)
 *   externalId              sts:ExternalId the management role's trust requires (default: none; set it only when
 *                           the service gave you one)
 *   sellerTypes             comma-separated seller notification types
 *                           (default ORDER_CHANGE,LISTINGS_ITEM_STATUS_CHANGE,REPORT_PROCESSING_FINISHED)
 *   historyStart/historyEnd backfill range (default 2026-11-15..2026-11-17)
 *   orderCount              number of generated order IDs (default 250)
 *   nag                     'true' runs cdk-nag AwsSolutions checks at synth
 */

/** Options of the example app (tests and the local runner pass them; `cdk -c key=value` too). */
export interface ExampleAppOptions {
  /** Context values (same keys as `cdk -c`). */
  readonly context?: Record<string, string>;
  /** Output directory of the cloud assembly. */
  readonly outdir?: string;
  /** Run cdk-nag's AwsSolutions checks at synth (also with `-c nag=true`). */
  readonly nag?: boolean;
}

/** The service's endpoints: separate hosts for the gateway, subscriptions, account, user, remote identities and auth. */
export const SERVICE_ENDPOINTS = ServiceEndpoints.of({
  baseUrl: 'https://api.example-dpi.com',
  subscriptionsUrl: 'https://subscriptions.example-dpi.com',
  accountUrl: 'https://account.example-dpi.com',
  userUrl: 'https://user.example-dpi.com',
  remoteIdentityUrl: 'https://remote-identity.example-dpi.com',
  authUrl: 'https://authentication.example-dpi.com',
});

/** Order IDs for the order-level product jobs (250: three batches of at most 100). */
export function exampleOrderIds(count = 250): string[] {
  const ids: string[] = [];
  for (let i = 0; i < count; i++) {
    ids.push(`111-${String(1000000 + i).padStart(7, '0')}-${String(7000000 + i * 13).padStart(7, '0')}`);
  }
  return ids;
}

function context(scope: Construct, key: string, fallback: string): string {
  const value = scope.node.tryGetContext(key);
  return value === undefined || value === null || value === '' ? fallback : String(value);
}

function types(list: string): NotificationType[] {
  return list.split(',').map((s) => s.trim()).filter((s) => s.length > 0).map((name) => NotificationType.of(name));
}

/**
 * A customer's marketplace data stack: notification pipelines for a seller
 * and a vendor identity, a consumer Lambda, an orders subscription with a
 * history backfill and order-level jobs.
 */
/** Properties of the example's data stack. */
export interface MarketplaceDataStackProps extends StackProps {
  /** The account's lifecycle journal (declared once per account and region, in a stack of its own). */
  readonly journal: ILifecycleJournal;
}

/**
 * The lifecycle journal of the account and region, in a stack of its own: it outlives the application stacks (RETAIN,
 * deletion protection) and is shared by all of them.
 */
export class JournalStack extends Stack {
  public readonly journal: LifecycleJournal;
  constructor(scope: Construct, id: string, props?: StackProps) {
    super(scope, id, { terminationProtection: true, ...props });
    this.journal = new LifecycleJournal(this, 'Journal');
  }
}

export class MarketplaceDataStack extends Stack {
  constructor(scope: Construct, id: string, props: MarketplaceDataStackProps) {
    super(scope, id, props);

    // Connection: endpoints + the refresh token secret (only its ARN reaches the template).
    const connection = new ServiceConnection(this, 'Dpi', {
      // Every service URL (or `-c singleOriginUrl=...` for one origin, e.g. a proxy).
      endpoints: this.node.tryGetContext('singleOriginUrl')
        ? ServiceEndpoints.singleOrigin(String(this.node.tryGetContext('singleOriginUrl'))) : SERVICE_ENDPOINTS,
      refreshToken: secretsmanager.Secret.fromSecretNameV2(this, 'RefreshToken', context(this, 'refreshTokenSecretName', 'dpi/refresh-token')),
      // The journal of what the handler made: its stack is deployed first (one `cdk deploy --all`).
      journal: props.journal,
    });

    // The customer-side roles the service uses (once per AWS account).
    const roles = new NotificationPipelineRoles(this, 'PipelineRoles', {
      serviceAccountId: context(this, 'serviceAccountId', '111122223333'),
      ...(this.node.tryGetContext('externalId') ? { externalId: String(this.node.tryGetContext('externalId')) } : {}),
    });

    // Seller notifications (identity 362): event-bus and queue types.
    const seller = new NotificationPipeline(this, 'SellerNotifications', {
      connection,
      remoteIdentityId: 362,
      accountType: AccountType.SELLER,
      notificationTypes: types(context(this, 'sellerTypes', 'ORDER_CHANGE,LISTINGS_ITEM_STATUS_CHANGE,REPORT_PROCESSING_FINISHED')),
      roles,
      name: 'seller-notifications',
    });

    // Vendor notifications (identity 363).
    new NotificationPipeline(this, 'VendorNotifications', {
      connection,
      remoteIdentityId: 363,
      accountType: AccountType.VENDOR,
      notificationTypes: [NotificationType.ITEM_SALES_EVENT_CHANGE, NotificationType.DETAIL_PAGE_TRAFFIC_EVENT],
      roles,
    });

    // A consumer of the seller pipeline's object-notification queue.
    const consumerLogs = new logs.LogGroup(this, 'OrderNotificationConsumerLogs', {
      retention: logs.RetentionDays.ONE_MONTH,
      removalPolicy: RemovalPolicy.DESTROY,
    });
    const consumerRole = new iam.Role(this, 'OrderNotificationConsumerRole', {
      assumedBy: new iam.ServicePrincipal('lambda.amazonaws.com'),
    });
    consumerLogs.grantWrite(consumerRole);
    const consumer = new lambda.Function(this, 'OrderNotificationConsumer', {
      role: consumerRole,
      runtime: lambda.Runtime.NODEJS_24_X,
      architecture: lambda.Architecture.ARM_64,
      handler: 'index.handler',
      timeout: Duration.seconds(30),
      logGroup: consumerLogs,
      code: lambda.Code.fromInline([
        'exports.handler = async (event) => {',
        '  for (const record of event.Records) {',
        '    const body = JSON.parse(record.body);',
        '    for (const r of body.Records || []) console.log(JSON.stringify({ bucket: r.s3.bucket.name, key: r.s3.object.key }));',
        '  }',
        '  return { batchItemFailures: [] };',
        '};',
      ].join('\n')),
    });
    seller.addConsumer(consumer, { batchSize: 10 });
    // Orders source product for the seller identity, two datasets, into storage 501.
    const orders = new Subscription(this, 'Orders', {
      connection,
      productId: 3001,
      storageGroupId: 501,
      remoteIdentityId: 362,
      productParameters: { marketplace_id: 'ATVPDKIKX0DER' },
      stageIds: [1001, 1002],
      name: 'orders-us',
    });

    // Is the orders data arriving? One scheduled monitor per stack: metrics (records in ERROR, in progress, hours
    // since the newest loaded date), alarms and a dashboard.
    const monitor = new SubscriptionMonitor(this, 'DataMonitor', { connection });
    monitor.addSubscription(orders, { label: 'orders-us' });
    monitor.addPipeline(seller, { label: 'seller notifications' });
    seller.addAlarms();

    // Backfill a few days of orders (fixed dates: synth is stable).
    new HistoryRequest(this, 'OrdersBackfill', {
      connection,
      subscription: orders,
      startDate: context(this, 'historyStart', '2026-11-15'),
      endDate: context(this, 'historyEnd', '2026-11-17'),
      stageId: 1001,
    });

    // Re-process specific orders (250 IDs: 3 jobs of at most 100, 15 minutes apart).
    new ProductOrderJobs(this, 'OrderReprocessing', {
      connection,
      subscription: orders,
      orderIds: exampleOrderIds(Number(context(this, 'orderCount', '250'))),
      stageId: 1001,
    });

  }
}

/** Build the example app (used by `main.ts`, the tests and the local runner). */
export function buildExampleApp(options: ExampleAppOptions = {}): App {
  const app = new App({ outdir: options.outdir, context: options.context });
  const env = { account: '123456789012', region: 'us-east-1' };
  const { journal } = new JournalStack(app, 'DpiJournal', { env });
  new MarketplaceDataStack(app, 'MarketplaceData', { env, journal });
  if (options.nag ?? String(app.node.tryGetContext('nag')) === 'true') {
    Validations.of(app).addPlugins(new NagPlugin(app));
  }
  return app;
}
