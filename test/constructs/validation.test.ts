import { App, Duration, Stack } from 'aws-cdk-lib';
import * as secretsmanager from 'aws-cdk-lib/aws-secretsmanager';
import { Fixture, fixture, legacyPipeline, roles, SECRET_ARN } from './helpers';
import {
  AccountType,
  HistoryRequest,
  HistoryRequestProps,
  LegacyNotificationPipelineProps,
  NotificationPipeline,
  NotificationPipelineProps,
  NotificationPipelineRoles,
  NotificationType,
  ProductOrderJobs,
  ProductOrderJobsProps,
  ServiceConnection,
  ServiceEndpoints,
  ServiceEndpointUrls,
  Subscription,
  SubscriptionProps,
  SubscriptionStatus,
  PartialFailure,
} from '../../src';

type Build = (f: Fixture) => unknown;

const pipeline = (extra: Partial<NotificationPipelineProps>): Build => (f) => new NotificationPipeline(f.stack, 'Orders', {
  connection: f.connection,
  remoteIdentityId: 362,
  accountType: AccountType.SELLER,
  notificationTypes: [NotificationType.ORDER_CHANGE],
  ...extra,
  roles: extra.roles ?? roles(f.stack),
});
const subscription = (extra: Partial<SubscriptionProps>): Build => (f) => new Subscription(f.stack, 'Sub', {
  connection: f.connection, productId: 3001, ...extra,
});
const history = (extra: Partial<HistoryRequestProps>): Build => (f) => new HistoryRequest(f.stack, 'Backfill', {
  connection: f.connection, subscription: Subscription.fromSubscriptionId(f.stack, 'S', '77'), ...extra,
});
const jobs = (extra: Partial<ProductOrderJobsProps>): Build => (f) => new ProductOrderJobs(f.stack, 'Jobs', {
  connection: f.connection, subscription: Subscription.fromSubscriptionId(f.stack, 'S', '77'), orderIds: ['111-1234567-1234567'], ...extra,
});
const legacy = (extra: Partial<LegacyNotificationPipelineProps>): Build => (f) =>
  legacyPipeline(f, 'Legacy', { queueArn: 'arn:aws:sqs:us-east-1:123456789012:q', ...extra });
const URLS = {
  subscriptionsUrl: 'https://subscriptions.example.com',
  accountUrl: 'https://account.example.com',
  userUrl: 'https://user.example.com',
  remoteIdentityUrl: 'https://remote-identity.example.com',
  authUrl: 'https://authentication.example.com',
};
const URL_KEYS = new Set(['subscriptionsUrl', 'accountUrl', 'userUrl', 'remoteIdentityUrl', 'authUrl']);
/** A connection with `endpoints: ServiceEndpoints.of(...)`; URL keys of `extra` go into the endpoints, the rest into the props. */
const connection = (baseUrl: string, extra: Record<string, string | undefined> = {}): Build => (f) => {
  const urls = Object.fromEntries(Object.entries(extra).filter(([k]) => URL_KEYS.has(k)));
  const rest = Object.fromEntries(Object.entries(extra).filter(([k]) => !URL_KEYS.has(k)));
  return new ServiceConnection(f.stack, 'Conn', {
    endpoints: ServiceEndpoints.of({ baseUrl, ...URLS, ...urls } as ServiceEndpointUrls),
    refreshToken: secretsmanager.Secret.fromSecretCompleteArn(f.stack, 'T2', SECRET_ARN),
    journalTableName: 'dpi-lifecycle-journal',
    ...rest,
  });
};

// [rule, build, expected message fragments (construct path, bad value, what to do)]
const cases: Array<[string, Build, string[], { region?: string | null }?]> = [
  // ServiceConnection
  ['baseUrl not https', connection('ftp://api.example.com'), ['MyStack/Conn: endpoints.baseUrl \'ftp://api.example.com\' is not accepted', 'https://']],
  ['baseUrl http to a remote host', connection('http://10.0.0.5:8080'), ['MyStack/Conn: endpoints.baseUrl \'http://10.0.0.5:8080\'', 'localhost']],
  ['baseUrl not a URL', connection('api.example.com'), ['MyStack/Conn: endpoints.baseUrl \'api.example.com\' is not a URL']],
  ['authUrl not https', connection('https://ok.example.com', { authUrl: 'http://auth.example.com' }), ['MyStack/Conn: endpoints.authUrl \'http://auth.example.com\'']],
  ['url with credentials', connection('https://user:pw@api.example.com'), ['MyStack/Conn: endpoints.baseUrl', 'must not carry credentials']],
  ['a service URL missing', connection('https://api.example.com', { userUrl: undefined, authUrl: undefined }),
    ['MyStack/Conn: endpoints: userUrl, authUrl are missing', 'separate hosts', 'ServiceEndpoints.singleOrigin(url)']],
  ['a service URL missing (deprecated URL props)', (f) => new ServiceConnection(f.stack, 'Conn', {
    baseUrl: 'https://api.example.com', ...URLS, authUrl: undefined, refreshToken: f.connection.refreshToken, journalTableName: 'dpi-lifecycle-journal',
  }), ['MyStack/Conn: authUrl is missing', 'separate hosts', 'ServiceEndpoints.of']],
  ['deprecated baseUrl not https', (f) => new ServiceConnection(f.stack, 'Conn', {
    baseUrl: 'ftp://api.example.com', ...URLS, refreshToken: f.connection.refreshToken, journalTableName: 'dpi-lifecycle-journal',
  }), ['MyStack/Conn: baseUrl \'ftp://api.example.com\' is not accepted']],
  ['no URL at all', (f) => new ServiceConnection(f.stack, 'Conn', { refreshToken: f.connection.refreshToken, journalTableName: 'dpi-lifecycle-journal' }),
    ['MyStack/Conn: endpoints is missing', 'ServiceEndpoints.of', 'ServiceEndpoints.singleOrigin(url)']],
  ['single origin endpoints not https', (f) => new ServiceConnection(f.stack, 'Conn', {
    endpoints: ServiceEndpoints.singleOrigin('http://10.1.1.1'), refreshToken: f.connection.refreshToken, journalTableName: 'dpi-lifecycle-journal',
  }), ['MyStack/Conn: endpoints (ServiceEndpoints.singleOrigin) \'http://10.1.1.1\' is not accepted', 'https://']],
  ['endpoints combined with a deprecated URL prop', (f) => new ServiceConnection(f.stack, 'Conn', {
    endpoints: ServiceEndpoints.singleOrigin('http://127.0.0.1:4010'),
    authUrl: 'https://authentication.example.com',
    refreshToken: f.connection.refreshToken,
    journalTableName: 'dpi-lifecycle-journal',
  }), ['MyStack/Conn: endpoints \'http://127.0.0.1:4010\' cannot be combined with authUrl', 'give the addresses once']],
  ['single origin combined with a service URL', (f) => new ServiceConnection(f.stack, 'Conn', {
    singleOriginUrl: 'http://127.0.0.1:4010',
    authUrl: 'https://authentication.example.com',
    refreshToken: f.connection.refreshToken,
    journalTableName: 'dpi-lifecycle-journal',
  }), ['MyStack/Conn: singleOriginUrl \'http://127.0.0.1:4010\' cannot be combined with authUrl', 'ServiceEndpoints.singleOrigin(url)']],
  ['single origin not https', (f) => new ServiceConnection(f.stack, 'Conn', { singleOriginUrl: 'http://10.1.1.1', refreshToken: f.connection.refreshToken, journalTableName: 'dpi-lifecycle-journal' }),
    ['MyStack/Conn: singleOriginUrl \'http://10.1.1.1\' is not accepted']],
  ['journal table name', connection('https://api.example.com', { journalTableName: 'x' }),
    ['MyStack/Conn: journalTableName \'x\' is not a DynamoDB table name', '3 to 255']],
  ['no journal', connection('https://api.example.com', { journalTableName: undefined }),
    ['MyStack/Conn: no lifecycle journal (journal, journalTable or journalTableName)', 'new LifecycleJournal', 'journalTableName: \'dpi-lifecycle-journal\'']],
  ['pipeline metadata key with a space', (f) => new ServiceConnection(f.stack, 'Conn', {
    singleOriginUrl: 'https://api.example.com',
    refreshToken: f.connection.refreshToken,
    pipelineMetadataKeys: { meta: 'pipeline meta' },
    journalTableName: 'dpi-lifecycle-journal',
  }), ['MyStack/Conn: pipelineMetadataKeys.meta \'pipeline meta\' is not a product parameter key']],
  ['pipeline metadata keys the same', (f) => new ServiceConnection(f.stack, 'Conn', {
    singleOriginUrl: 'https://api.example.com',
    refreshToken: f.connection.refreshToken,
    pipelineMetadataKeys: { meta: 'm', subscriptions: 'm' },
    journalTableName: 'dpi-lifecycle-journal',
  }), ['MyStack/Conn: pipelineMetadataKeys \'m\' names the same key for subscriptions and meta']],
  // NotificationPipeline
  ['region not accepted', pipeline({ deploymentRegion: 'eu-west-1' }), ['MyStack/Orders: deploymentRegion \'eu-west-1\' is not accepted; use one of us-east-1, us-east-2, us-west-1, us-west-2, af-south-1, ap-east-1']],
  // The roles are declared elsewhere: roles in this stack would refuse its region first (next case).
  ['stack region not accepted', (f) => pipeline({
    roles: NotificationPipelineRoles.fromRoleArns(f.stack, 'R', {
      managementRoleArn: 'arn:aws:iam::123456789012:role/m', eventBusRoleArn: 'arn:aws:iam::123456789012:role/e',
    }),
  })(f), ['MyStack/Orders: deploymentRegion \'eu-central-1\'', 'give deploymentRegion explicitly'], { region: 'eu-central-1' }],
  ['roles in a stack region not accepted', (f) => roles(f.stack), ['MyStack/Roles: region \'eu-central-1\' (the stack\'s region) is not an accepted deployment region'], { region: 'eu-central-1' }],
  ['stack region is a token', pipeline({}), ['MyStack/Orders: deploymentRegion', 'environment-agnostic', 'give deploymentRegion explicitly'], { region: null }],
  ['empty types', pipeline({ notificationTypes: [] }), ['MyStack/Orders: notificationTypes \'\' is empty', 'select at least one']],
  ['duplicate types', pipeline({ notificationTypes: [NotificationType.ORDER_CHANGE, NotificationType.of('ORDER_CHANGE')] }), ['MyStack/Orders: notificationTypes \'ORDER_CHANGE\' contains duplicates']],
  ['vendor type for a seller', pipeline({ notificationTypes: [NotificationType.ORDER_CHANGE, NotificationType.ITEM_SALES_EVENT_CHANGE] }), ['MyStack/Orders: notificationTypes \'ITEM_SALES_EVENT_CHANGE\' is not valid for account type seller', 'ORDER_CHANGE']],
  ['seller type for a vendor', pipeline({ accountType: AccountType.VENDOR, notificationTypes: [NotificationType.FEED_PROCESSING_FINISHED] }), ['MyStack/Orders: notificationTypes \'FEED_PROCESSING_FINISHED\' is not valid for account type vendor']],
  ['event-bus type without event-bus role', (f) => new NotificationPipeline(f.stack, 'Orders', {
    connection: f.connection,
    remoteIdentityId: 362,
    accountType: AccountType.SELLER,
    notificationTypes: [NotificationType.ORDER_CHANGE],
    roles: NotificationPipelineRoles.fromRoleArns(f.stack, 'R', { managementRoleArn: 'arn:aws:iam::123456789012:role/m' }),
  }), ['MyStack/Orders: notificationTypes \'ORDER_CHANGE\' use the event-bus path', 'eventBusRoleArn']],
  ['remote identity not an integer', pipeline({ remoteIdentityId: 36.2 }), ['MyStack/Orders: remoteIdentityId \'36.2\' is not a positive integer ID']],
  ['bad account type', pipeline({ accountType: 'buyer' as AccountType }), ['MyStack/Orders: accountType \'buyer\' is not accepted']],
  ['bad partial failure', pipeline({ partialFailure: 'SOME' as PartialFailure }), ['MyStack/Orders: partialFailure \'SOME\' is not accepted']],
  // LegacyNotificationPipeline
  ['legacy queue ARN', legacy({ queueArn: 'my-queue' }), ['MyStack/Legacy: queueArn \'my-queue\' is not an SQS queue ARN']],
  ['legacy empty types', legacy({ notificationTypes: [] }), ['MyStack/Legacy: notificationTypes \'\' is empty']],
  ['legacy subscription ID', legacy({ subscriptionId: -4 }), ['MyStack/Legacy: subscriptionId \'-4\' is not a positive integer ID']],
  // Subscription
  ['stage ID below 1000', subscription({ stageIds: [1001, 999] }), ['MyStack/Sub: stageIds \'999\' contains values that are not named stage IDs', '>= 1000']],
  ['stage ID not an integer', subscription({ stageIds: [1001.5] }), ['MyStack/Sub: stageIds \'1001.5\'']],
  ['duplicate stage IDs', subscription({ stageIds: [1001, 1001] }), ['MyStack/Sub: stageIds \'1001\' contains duplicates']],
  ['parameter not a string', subscription({ productParameters: { profile_id: 12 as unknown as string } }), ['MyStack/Sub: productParameters.profile_id \'12\' is a number, not a string']],
  ['stage_ids in parameters', subscription({ stageIds: [1001], productParameters: { stage_ids: '[1001]' } }), ['MyStack/Sub: productParameters.stage_ids \'[1001]\' is not accepted here', 'stageIds']],
  ['conflicting remote_identity_id', subscription({ remoteIdentityId: 362, productParameters: { remote_identity_id: '363' } }), ['MyStack/Sub: productParameters.remote_identity_id \'363\' conflicts with remoteIdentityId 362']],
  ['status not allowed', subscription({ status: SubscriptionStatus.CANCELLED }), ['MyStack/Sub: status \'cancelled\' is not accepted', 'ACTIVE or SubscriptionStatus.PAUSED']],
  ['onDelete not allowed', subscription({ onDelete: SubscriptionStatus.PAUSED }), ['MyStack/Sub: onDelete \'paused\' is not accepted', 'INVALID or SubscriptionStatus.CANCELLED']],
  ['dateStart not ISO', subscription({ dateStart: '01/11/2026' }), ['MyStack/Sub: dateStart \'01/11/2026\' is not an ISO 8601 datetime']],
  ['product ID', subscription({ productId: 0 }), ['MyStack/Sub: productId \'0\' is not a positive integer ID']],
  // HistoryRequest
  ['not a calendar date', history({ startDate: '2026-02-30', endDate: '2026-03-01' }), ['MyStack/Backfill: startDate \'2026-02-30\' is not a calendar date', 'YYYY-MM-DD']],
  ['wrong date format', history({ startDate: '2026-11-15', endDate: '17.11.2026' }), ['MyStack/Backfill: endDate \'17.11.2026\' is not a calendar date']],
  ['start after end', history({ startDate: '2026-11-18', endDate: '2026-11-17' }), ['MyStack/Backfill: startDate \'2026-11-18\' is after endDate \'2026-11-17\'']],
  ['range and dates', history({ startDate: '2026-11-15', endDate: '2026-11-17', dates: ['2026-11-16'] }), ['MyStack/Backfill: dates \'2026-11-16\' is given together with startDate/endDate', 'not both']],
  ['neither range nor dates', history({}), ['MyStack/Backfill: startDate', 'either startDate + endDate or dates']],
  ['start without end', history({ startDate: '2026-11-15' }), ['MyStack/Backfill: endDate \'\' is missing']],
  ['bad day in dates', history({ dates: ['2026-11-01', '2026-13-01'] }), ['MyStack/Backfill: dates \'2026-13-01\' is not a calendar date']],
  ['duplicate dates', history({ dates: ['2026-11-01', '2026-11-01'] }), ['MyStack/Backfill: dates \'2026-11-01\' contains duplicates']],
  ['start time format', history({ dates: ['2026-11-01'], startTime: '2026-11-20T02:00:00' }), ['MyStack/Backfill: startTime \'2026-11-20T02:00:00\' is not a date and time', 'YYYY-MM-DD HH:MM:SS']],
  ['timeout above 2 h', history({ dates: ['2026-11-01'], timeout: Duration.hours(3) }), ['MyStack/Backfill: timeout \'3 hours\' is out of range']],
  ['stage ID of history', history({ dates: ['2026-11-01'], stageId: 5 }), ['MyStack/Backfill: stageId \'5\' is not a named stage ID']],
  // ProductOrderJobs
  ['bad order IDs listed', jobs({ orderIds: ['111-1234567-1234567', '12-1234567-1234567', 'abc'] }), ['MyStack/Jobs: orderIds \'12-1234567-1234567, abc\' are not order IDs']],
  ['duplicate order IDs', jobs({ orderIds: ['111-1234567-1234567', '111-1234567-1234567'] }), ['MyStack/Jobs: orderIds \'111-1234567-1234567\' contains duplicates']],
  ['no order IDs', jobs({ orderIds: [] }), ['MyStack/Jobs: orderIds \'\' is empty']],
  ['order job stage', jobs({ stageId: 10 }), ['MyStack/Jobs: stageId \'10\' is not a named stage ID']],
  // NotificationPipelineRoles
  ['service account ID', (f) => new NotificationPipelineRoles(f.stack, 'Roles', { serviceAccountId: '1111', externalId: 'e-1' }), ['MyStack/Roles: serviceAccountId \'1111\' is not an AWS account ID']],
  ['resource prefix wildcard', (f) => new NotificationPipelineRoles(f.stack, 'Roles', { serviceAccountId: '111122223333', externalId: 'e-1', resourceNamePrefix: 'sp*' }), ['MyStack/Roles: resourceNamePrefix \'sp*\' is not accepted']],
];

describe('synth-time validation', () => {
  // every row gets four arguments (a shorter row would make jest pass a `done` callback)
  test.each(cases.map(([rule, build, fragments, env]) => [rule, build, fragments, env ?? {}] as const))('%s', (_rule, build, fragments, env) => {
    const f = fixture(env);
    let message = '';
    try {
      build(f);
    } catch (e) {
      message = (e as Error).message;
    }
    expect(message).not.toBe('');
    for (const fragment of fragments) {
      expect(message).toContain(fragment);
    }
  });

  test('valid props pass (the table is not vacuous)', () => {
    expect(() => pipeline({})(fixture())).not.toThrow();
    expect(() => subscription({ stageIds: [1001], productParameters: { remote_identity_id: '362' }, remoteIdentityId: 362, dateStart: '2026-11-01T00:00:00+01:00' })(fixture())).not.toThrow();
    expect(() => history({ startDate: '2024-02-29', endDate: '2024-02-29', startTime: '2026-11-20 23:59:59' })(fixture())).not.toThrow();
    expect(() => jobs({})(fixture())).not.toThrow();
    expect(() => legacy({})(fixture())).not.toThrow();
    expect(() => connection('http://127.0.0.1:4010')(fixture())).not.toThrow();
  });

  test('the error never contains the refresh token value', () => {
    const app = new App();
    const stack = new Stack(app, 'S');
    expect(() => new ServiceConnection(stack, 'C', {
      baseUrl: 'https://user:rt-SECRET-VALUE@api.example.com',
      refreshToken: secretsmanager.Secret.fromSecretCompleteArn(stack, 'T', SECRET_ARN),
      journalTableName: 'dpi-lifecycle-journal',
    })).toThrow(/^((?!rt-SECRET-VALUE).)*$/);
  });
});
