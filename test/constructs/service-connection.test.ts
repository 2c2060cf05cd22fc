import * as path from 'path';
import { App, FileSystem, Stack } from 'aws-cdk-lib';
import { Match, Template } from 'aws-cdk-lib/assertions';
import * as secretsmanager from 'aws-cdk-lib/aws-secretsmanager';
import { countOf, fixture, roles, SECRET_ARN, sellerPipeline, template } from './helpers';
import { HistoryRequest, NotificationType, ServiceConnection, ServiceEndpoints, Subscription } from '../../src';

describe('ServiceConnection and the stack provider', () => {
  test('one provider Lambda (+ framework) serves three pipelines and a subscription', () => {
    const f = fixture();
    const r = roles(f.stack);
    sellerPipeline(f, r, 'A');
    sellerPipeline(f, r, 'B', { remoteIdentityId: 364 });
    sellerPipeline(f, r, 'C', { remoteIdentityId: 365 });
    new Subscription(f.stack, 'Sub', { connection: f.connection, productId: 3001 });
    const t = template(f.stack);
    // onEvent + isComplete + the framework's onEvent, isComplete and onTimeout (one waiter state machine).
    expect(countOf(t, 'AWS::Lambda::Function')).toBe(5);
    expect(countOf(t, 'Custom::DpiNotificationPipeline')).toBe(3);
    expect(countOf(t, 'AWS::StepFunctions::StateMachine')).toBe(1);
    // every custom resource uses the same service token
    const tokens = new Set(Object.values(t.toJSON().Resources as Record<string, { Type: string; Properties: { ServiceToken: unknown } }>)
      .filter((res) => res.Type.startsWith('Custom::'))
      .map((res) => JSON.stringify(res.Properties.ServiceToken)));
    expect(tokens.size).toBe(1);
  });

  test('the handler: bundled asset, index.onEvent, Node >= 22, ARM64, 256 MB, 10 min, log group with retention', () => {
    const f = fixture();
    new Subscription(f.stack, 'Sub', { connection: f.connection, productId: 3001 });
    const t = template(f.stack);
    const fns = t.findResources('AWS::Lambda::Function', { Properties: { Handler: 'index.onEvent' } });
    expect(Object.keys(fns)).toHaveLength(1);
    const props = Object.values(fns)[0].Properties;
    expect(Number(/^nodejs(\d+)\.x$/.exec(props.Runtime)![1])).toBeGreaterThanOrEqual(22);
    expect(props.Architectures).toEqual(['arm64']);
    expect(props.MemorySize).toBe(256);
    expect(props.Timeout).toBe(600);
    expect(props.LoggingConfig.LogGroup.Ref).toMatch(/^DpiProviderHandlerLogs/);
    t.hasResourceProperties('AWS::Logs::LogGroup', { RetentionInDays: 30 });
    // no managed policies on the library's roles
    for (const role of Object.values(t.findResources('AWS::IAM::Role'))) {
      expect(role.Properties.ManagedPolicyArns).toBeUndefined();
    }
  });

  test('the secret is granted to the handler role; only its ARN is in the template', () => {
    process.env.DPI_TEST_REFRESH_TOKEN = 'rt-NEVER-IN-TEMPLATE-7f3a9c';
    const f = fixture();
    new Subscription(f.stack, 'Sub', { connection: f.connection, productId: 3001 });
    const t = template(f.stack);
    t.hasResourceProperties('AWS::IAM::Policy', {
      PolicyDocument: {
        Statement: Match.arrayWith([Match.objectLike({
          Action: ['secretsmanager:GetSecretValue', 'secretsmanager:DescribeSecret'],
          Resource: SECRET_ARN,
        })]),
      },
      Roles: [{ Ref: Match.stringLikeRegexp('^DpiProviderHandlerRole') }],
    });
    t.hasResourceProperties('Custom::DpiSubscription', {
      Connection: Match.objectLike({ RefreshTokenSecretArn: SECRET_ARN }),
    });
    const json = JSON.stringify(t.toJSON());
    expect(json).not.toContain('rt-NEVER-IN-TEMPLATE');
    // no property named like a token/refresh/secret other than the ARN reference and the service token
    const offending: string[] = [];
    const walk = (node: unknown, pathText: string) => {
      if (node && typeof node === 'object') {
        for (const [k, v] of Object.entries(node as Record<string, unknown>)) {
          if (/token|refresh|secret/i.test(k) && !['ServiceToken', 'RefreshTokenSecretArn'].includes(k)) {
            offending.push(`${pathText}.${k}`);
          }
          walk(v, `${pathText}.${k}`);
        }
      }
    };
    for (const [id, res] of Object.entries(t.findResources('Custom::DpiSubscription'))) {
      walk(res.Properties, id);
    }
    expect(offending).toEqual([]);
    delete process.env.DPI_TEST_REFRESH_TOKEN;
  });

  test('a generated secret: the template references it, no SecretString', () => {
    const app = new App();
    const stack = new Stack(app, 'S', { env: { account: '123456789012', region: 'us-east-1' } });
    const secret = new secretsmanager.Secret(stack, 'Token');
    const connection = new ServiceConnection(stack, 'Dpi', { endpoints: ServiceEndpoints.singleOrigin('https://x.example.com'), refreshToken: secret, journalTableName: 'dpi-lifecycle-journal' });
    new Subscription(stack, 'Sub', { connection, productId: 3001 });
    const t = Template.fromStack(stack);
    t.hasResourceProperties('Custom::DpiSubscription', {
      Connection: Match.objectLike({ RefreshTokenSecretArn: { Ref: Match.stringLikeRegexp('^Token') } }),
    });
    t.hasResourceProperties('AWS::SecretsManager::Secret', Match.not(Match.objectLike({ SecretString: Match.anyValue() })));
  });

  test('singleOriginUrl sets every endpoint; six explicit endpoints, IDs, journal and metadata keys are carried', () => {
    const f = fixture();
    const c2 = new ServiceConnection(f.stack, 'Dpi2', {
      baseUrl: 'https://gw.example.com',
      subscriptionsUrl: 'https://subs.example.com',
      accountUrl: 'https://account.example.com',
      userUrl: 'https://user.example.com',
      remoteIdentityUrl: 'https://ri.example.com',
      authUrl: 'https://auth.example.com/oauth',
      refreshToken: f.connection.refreshToken,
      accountId: 1001,
      userId: 2001,
      journalTableName: 'team-dpi-journal',
      pipelineMetadataKeys: { subscriptions: 'upstream_subscriptions' },
    });
    new Subscription(f.stack, 'A', { connection: f.connection, productId: 3001 });
    new Subscription(f.stack, 'B', { connection: c2, productId: 3001 });
    const t = template(f.stack);
    t.hasResourceProperties('Custom::DpiSubscription', {
      Connection: {
        BaseUrl: 'https://api.example-dpi.com',
        SubscriptionsUrl: 'https://api.example-dpi.com',
        AccountUrl: 'https://api.example-dpi.com',
        UserUrl: 'https://api.example-dpi.com',
        RemoteIdentityUrl: 'https://api.example-dpi.com',
        AuthUrl: 'https://api.example-dpi.com',
        RefreshTokenSecretArn: SECRET_ARN,
        AccountId: Match.absent(),
        UserId: Match.absent(),
        JournalTableName: 'dpi-lifecycle-journal',
        PipelineSubscriptionsKey: Match.absent(),
        PipelineMetaKey: Match.absent(),
      },
    });
    t.hasResourceProperties('Custom::DpiSubscription', {
      Connection: {
        BaseUrl: 'https://gw.example.com',
        SubscriptionsUrl: 'https://subs.example.com',
        AccountUrl: 'https://account.example.com',
        UserUrl: 'https://user.example.com',
        RemoteIdentityUrl: 'https://ri.example.com',
        AuthUrl: 'https://auth.example.com/oauth',
        RefreshTokenSecretArn: SECRET_ARN,
        AccountId: '1001',
        UserId: '2001',
        JournalTableName: 'team-dpi-journal',
        PipelineSubscriptionsKey: 'upstream_subscriptions',
        PipelineMetaKey: Match.absent(),
      },
    });
    // still one provider for two connections
    expect(countOf(t, 'AWS::Lambda::Function')).toBe(5);
  });

  test('the provider may use each connection\'s journal table (exact ARN) and nothing else in DynamoDB', () => {
    const f = fixture();
    new ServiceConnection(f.stack, 'Dpi2', { endpoints: ServiceEndpoints.singleOrigin('https://x.example.com'), refreshToken: f.connection.refreshToken, journalTableName: 'other-journal' });
    new Subscription(f.stack, 'A', { connection: f.connection, productId: 3001 });
    const t = template(f.stack);
    const actions = [
      'dynamodb:CreateTable', 'dynamodb:DescribeTable', 'dynamodb:UpdateContinuousBackups', 'dynamodb:DescribeContinuousBackups',
      'dynamodb:TagResource', 'dynamodb:GetItem', 'dynamodb:BatchGetItem', 'dynamodb:PutItem', 'dynamodb:UpdateItem',
      'dynamodb:DeleteItem', 'dynamodb:Query',
    ];
    const policies = t.findResources('AWS::IAM::Policy');
    const statements = Object.values(policies).flatMap((p: any) => p.Properties.PolicyDocument.Statement);
    const dynamo = statements.filter((s: any) => [s.Action].flat().some((a: string) => a.startsWith('dynamodb:')));
    expect(dynamo).toHaveLength(2);
    for (const [s, name] of [[dynamo[0], 'dpi-lifecycle-journal'], [dynamo[1], 'other-journal']]) {
      expect(s.Action).toEqual(actions);
      expect(JSON.stringify(s.Resource)).toContain(`:table/${name}`);
      expect(JSON.stringify(s.Resource)).not.toContain('*');
    }
  });

  test('http is accepted for loopback hosts only', () => {
    const f = fixture();
    for (const url of ['http://127.0.0.1:4010', 'http://localhost:8080/base', 'http://[::1]:9000']) {
      expect(() => new ServiceConnection(f.stack, `L${url.length}${url.charCodeAt(8)}`, { endpoints: ServiceEndpoints.singleOrigin(url), refreshToken: f.connection.refreshToken, journalTableName: 'dpi-lifecycle-journal' }))
        .not.toThrow();
    }
    expect(() => new ServiceConnection(f.stack, 'Remote', { endpoints: ServiceEndpoints.singleOrigin('http://api.example-dpi.com'), refreshToken: f.connection.refreshToken, journalTableName: 'dpi-lifecycle-journal' }))
      .toThrow("MyStack/Remote: endpoints (ServiceEndpoints.singleOrigin) 'http://api.example-dpi.com' is not accepted; use an https:// URL");
  });

  test('the second waiting provider exists only with a HistoryRequest', () => {
    const f = fixture();
    const r = roles(f.stack);
    sellerPipeline(f, r, 'A');
    const sub = new Subscription(f.stack, 'Sub', { connection: f.connection, productId: 3001 });
    expect(countOf(template(f.stack), 'AWS::Lambda::Function')).toBe(5);
    expect(countOf(template(f.stack), 'AWS::StepFunctions::StateMachine')).toBe(1);

    const f2 = fixture();
    sellerPipeline(f2, roles(f2.stack), 'A');
    const sub2 = new Subscription(f2.stack, 'Sub', { connection: f2.connection, productId: 3001 });
    new HistoryRequest(f2.stack, 'H1', { connection: f2.connection, subscription: sub2, startDate: '2026-11-15', endDate: '2026-11-17' });
    new HistoryRequest(f2.stack, 'H2', { connection: f2.connection, subscription: sub2, dates: ['2026-11-10'] });
    const t = template(f2.stack);
    const fnCount = countOf(t, 'AWS::Lambda::Function');
    expect(fnCount).toBeGreaterThanOrEqual(4);
    expect(fnCount).toBe(8); // onEvent + isComplete (shared) + 3 framework functions of each provider
    expect(countOf(t, 'AWS::StepFunctions::StateMachine')).toBe(2);
    expect(Object.keys(t.findResources('AWS::Lambda::Function', { Properties: { Handler: 'index.isComplete' } }))).toHaveLength(1);
    t.hasResourceProperties('AWS::Lambda::Function', { Handler: 'index.isComplete', Architectures: ['arm64'] });
    // history requests use the waiter's service token; the pipeline does not
    const res = t.toJSON().Resources as Record<string, { Type: string; Properties: { ServiceToken: unknown } }>;
    const tokenOf = (type: string) => JSON.stringify(Object.values(res).find((x) => x.Type === type)!.Properties.ServiceToken);
    expect(tokenOf('Custom::DpiHistoryRequest')).not.toEqual(tokenOf('Custom::DpiNotificationPipeline'));
    expect(tokenOf('Custom::DpiHistoryRequest')).toMatch(/WaiterProvider/);
    t.hasResourceProperties('AWS::StepFunctions::StateMachine', {
      LoggingConfiguration: Match.objectLike({ Level: 'ALL' }),
    });
    expect(sub).toBeDefined();
  });

  test('resources in another stack get that stack\'s own provider with the secret grant', () => {
    const f = fixture();
    const other = new Stack(f.app, 'Other', { env: { account: '123456789012', region: 'us-east-1' } });
    new Subscription(other, 'Sub', { connection: f.connection, productId: 3001, storageGroupId: 501 });
    const t = Template.fromStack(other);
    expect(countOf(t, 'AWS::Lambda::Function')).toBe(5);
    t.hasResourceProperties('AWS::IAM::Policy', {
      PolicyDocument: { Statement: Match.arrayWith([Match.objectLike({ Resource: SECRET_ARN })]) },
    });
  });

  test('NotificationType.of returns catalogue members and validates names', () => {
    expect(NotificationType.of('ORDER_CHANGE')).toBe(NotificationType.ORDER_CHANGE);
    const custom = NotificationType.of('ANY_OFFER_CHANGED', { validForVendor: false });
    expect(custom.validForSeller).toBe(true);
    expect(custom.validForVendor).toBe(false);
    expect(() => NotificationType.of('order_change')).toThrow("name 'order_change'");
  });
});

describe('handler code', () => {
  test('the handler functions run the esbuild bundle in assets/handler/index', () => {
    const f = fixture();
    const sub = new Subscription(f.stack, 'Sub', { connection: f.connection, productId: 3001 });
    new HistoryRequest(f.stack, 'H', { connection: f.connection, subscription: sub, dates: ['2026-11-10'] });
    const t = template(f.stack);
    const hash = FileSystem.fingerprint(path.join(__dirname, '..', '..', 'assets', 'handler', 'index'));
    for (const handler of ['index.onEvent', 'index.isComplete']) {
      const fn = Object.values(t.findResources('AWS::Lambda::Function', { Properties: { Handler: handler } }));
      expect(fn).toHaveLength(1);
      expect(fn[0].Properties.Code.S3Key).toBe(`${hash}.zip`);
    }
  });
});
