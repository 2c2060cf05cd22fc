import { App, Duration, Stack } from 'aws-cdk-lib';
import { Match, Template } from 'aws-cdk-lib/assertions';
import * as ec2 from 'aws-cdk-lib/aws-ec2';
import * as iam from 'aws-cdk-lib/aws-iam';
import * as logs from 'aws-cdk-lib/aws-logs';
import * as secretsmanager from 'aws-cdk-lib/aws-secretsmanager';
import { AwsSolutionsChecks, HIPAASecurityChecks, NIST80053R5Checks, ServerlessChecks } from 'cdk-nag';
import { SECRET_ARN } from './helpers';
import { HistoryRequest, ProviderOptions, ServiceConnection, ServiceEndpoints, Subscription } from '../../src';
import { HANDLER_LOG_GROUP_ENV as CONSTRUCT_ENV } from '../../src/connection/provider';
import { REQUEST_BUDGET_ENV } from '../../src/contract';
import { HANDLER_LOG_GROUP_ENV as HANDLER_ENV } from '../../src/handler/errors';

const ON_EVENT = { Handler: 'index.onEvent' };

function stackWith(provider?: ProviderOptions, setup?: (stack: Stack) => ProviderOptions): { stack: Stack; connection: ServiceConnection } {
  const app = new App();
  const stack = new Stack(app, 'MyStack', { env: { account: '123456789012', region: 'us-east-1' } });
  const options = setup ? setup(stack) : provider;
  const connection = new ServiceConnection(stack, 'Dpi', {
    endpoints: ServiceEndpoints.singleOrigin('https://api.example-dpi.com'),
    refreshToken: secretsmanager.Secret.fromSecretCompleteArn(stack, 'Token', SECRET_ARN),
    provider: options,
    journalTableName: 'dpi-lifecycle-journal',
  });
  return { stack, connection };
}

function subscription(stack: Stack, connection: ServiceConnection, id = 'Orders'): Subscription {
  return new Subscription(stack, id, { connection, productId: 3001, remoteIdentityId: 362, productParameters: { marketplace_id: 'ATVPDKIKX0DER' } });
}

function vpcOf(stack: Stack): ec2.Vpc {
  return new ec2.Vpc(stack, 'Vpc', { maxAzs: 2, natGateways: 1 });
}

describe('ServiceConnection provider options', () => {
  test('defaults: the template keeps today\'s provider (library role and log group, 256 MB, 10 minutes) plus the log group variable', () => {
    const { stack, connection } = stackWith();
    subscription(stack, connection);
    const t = Template.fromStack(stack);
    t.hasResourceProperties('AWS::Lambda::Function', {
      ...ON_EVENT,
      MemorySize: 256,
      Timeout: 600,
      VpcConfig: Match.absent(),
      Role: { 'Fn::GetAtt': [Match.stringLikeRegexp('^DpiProviderHandlerRole'), 'Arn'] },
      LoggingConfig: { LogGroup: { Ref: Match.stringLikeRegexp('^DpiProviderHandlerLogs') } },
      Environment: { Variables: { [CONSTRUCT_ENV]: { Ref: Match.stringLikeRegexp('^DpiProviderHandlerLogs') } } },
    });
    t.hasResourceProperties('AWS::Logs::LogGroup', { RetentionInDays: 30 });
    expect(CONSTRUCT_ENV).toBe(HANDLER_ENV);
    const roles = t.findResources('AWS::IAM::Role');
    for (const r of Object.values(roles)) expect(r.Properties.PermissionsBoundary).toBeUndefined();
  });

  test('vpc, subnets and security groups reach the handler and the framework functions, with network-interface permissions', () => {
    const { stack, connection } = stackWith(undefined, (s) => {
      const vpc = vpcOf(s);
      const sg = new ec2.SecurityGroup(s, 'Sg', { vpc });
      return { vpc, vpcSubnets: { subnetType: ec2.SubnetType.PRIVATE_WITH_EGRESS }, securityGroups: [sg] };
    });
    new HistoryRequest(stack, 'History', { connection, subscription: subscription(stack, connection), startDate: '2024-01-01', endDate: '2024-01-31' });
    const t = Template.fromStack(stack);
    const fns = t.findResources('AWS::Lambda::Function', { Properties: { VpcConfig: Match.anyValue() } });
    // onEvent, isComplete, the framework's onEvent, isComplete and onTimeout functions of both providers.
    const handlers = Object.values(fns).map((f) => f.Properties.Handler);
    expect(handlers).toEqual(expect.arrayContaining(['index.onEvent', 'index.isComplete', 'framework.onEvent', 'framework.isComplete', 'framework.onTimeout']));
    for (const f of Object.values(fns)) {
      expect(f.Properties.VpcConfig.SecurityGroupIds).toEqual([{ 'Fn::GetAtt': [expect.stringMatching(/^Sg/), 'GroupId'] }]);
      expect(f.Properties.VpcConfig.SubnetIds).toHaveLength(2);
    }
    const unplaced = t.findResources('AWS::Lambda::Function', { Properties: { Handler: Match.stringLikeRegexp('^(index\\.(onEvent|isComplete)|framework\\.)'), VpcConfig: Match.absent() } });
    expect(Object.keys(unplaced)).toEqual([]);
    t.hasResourceProperties('AWS::IAM::Policy', {
      PolicyDocument: { Statement: Match.arrayWith([Match.objectLike({ Sid: 'VpcNetworkInterfaces', Action: Match.arrayWith(['ec2:CreateNetworkInterface']), Resource: '*' })]) },
      Roles: [{ Ref: Match.stringLikeRegexp('^DpiProviderHandlerRole') }],
    });
    t.hasResourceProperties('AWS::IAM::Policy', {
      PolicyDocument: { Statement: Match.arrayWith([Match.objectLike({ Sid: 'VpcNetworkInterfaces' })]) },
      Roles: [{ Ref: Match.stringLikeRegexp('^DpiProviderFrameworkRole') }],
    });
  });

  test('an existing role: no handler role is made, the library\'s statements are added to it', () => {
    const { stack, connection } = stackWith(undefined, (s) => ({
      role: new iam.Role(s, 'MyHandlerRole', { assumedBy: new iam.ServicePrincipal('lambda.amazonaws.com') }),
    }));
    subscription(stack, connection);
    const t = Template.fromStack(stack);
    expect(Object.keys(t.findResources('AWS::IAM::Role')).filter((id) => id.startsWith('DpiProviderHandlerRole'))).toEqual([]);
    t.hasResourceProperties('AWS::Lambda::Function', { ...ON_EVENT, Role: { 'Fn::GetAtt': [Match.stringLikeRegexp('^MyHandlerRole'), 'Arn'] } });
    t.hasResourceProperties('AWS::IAM::Policy', {
      PolicyDocument: { Statement: Match.arrayWith([Match.objectLike({ Action: ['secretsmanager:GetSecretValue', 'secretsmanager:DescribeSecret'], Resource: SECRET_ARN })]) },
      Roles: [{ Ref: Match.stringLikeRegexp('^MyHandlerRole') }],
    });
    t.hasResourceProperties('AWS::IAM::Policy', {
      PolicyDocument: { Statement: Match.arrayWith([Match.objectLike({ Sid: 'LifecycleJournal1' })]) },
      Roles: [{ Ref: Match.stringLikeRegexp('^MyHandlerRole') }],
    });
  });

  test('a permissions boundary on every role the library makes for the provider, not on a given role', () => {
    const { stack, connection } = stackWith(undefined, (s) => ({
      permissionsBoundary: iam.ManagedPolicy.fromManagedPolicyName(s, 'Boundary', 'dpi-boundary'),
    }));
    new HistoryRequest(stack, 'History', { connection, subscription: subscription(stack, connection), startDate: '2024-01-01', endDate: '2024-01-31' });
    const t = Template.fromStack(stack);
    const roles = Object.entries(t.findResources('AWS::IAM::Role')).filter(([id]) => id.startsWith('DpiProvider'));
    expect(roles.length).toBeGreaterThanOrEqual(4);
    for (const [, r] of roles) {
      expect(JSON.stringify(r.Properties.PermissionsBoundary)).toContain('policy/dpi-boundary');
    }
  });

  test('log retention of the library\'s log group; or an existing log group, which the handler writes to and names in its reasons', () => {
    const a = stackWith({ logRetention: logs.RetentionDays.ONE_YEAR });
    subscription(a.stack, a.connection);
    Template.fromStack(a.stack).hasResourceProperties('AWS::Logs::LogGroup', { RetentionInDays: 365 });

    const b = stackWith(undefined, (s) => ({ logGroup: new logs.LogGroup(s, 'MyLogs', { logGroupName: '/my/dpi-handler' }) }));
    subscription(b.stack, b.connection);
    const t = Template.fromStack(b.stack);
    expect(Object.keys(t.findResources('AWS::Logs::LogGroup')).filter((id) => id.startsWith('DpiProviderHandlerLogs'))).toEqual([]);
    t.hasResourceProperties('AWS::Lambda::Function', {
      ...ON_EVENT,
      LoggingConfig: { LogGroup: { Ref: Match.stringLikeRegexp('^MyLogs') } },
      Environment: { Variables: { [CONSTRUCT_ENV]: { Ref: Match.stringLikeRegexp('^MyLogs') } } },
    });
    t.hasResourceProperties('AWS::IAM::Policy', {
      PolicyDocument: { Statement: Match.arrayWith([Match.objectLike({ Action: ['logs:CreateLogStream', 'logs:PutLogEvents'], Resource: { 'Fn::GetAtt': [Match.stringLikeRegexp('^MyLogs'), 'Arn'] } })]) },
      Roles: [{ Ref: Match.stringLikeRegexp('^DpiProviderHandlerRole') }],
    });
  });

  test('memory and timeout of the handler functions', () => {
    const { stack, connection } = stackWith({ memorySize: 1024, timeout: Duration.minutes(14) });
    subscription(stack, connection);
    Template.fromStack(stack).hasResourceProperties('AWS::Lambda::Function', { ...ON_EVENT, MemorySize: 1024, Timeout: 840 });
  });

  test('the shared request budget: the vendor\'s documented limit by default, another limit or none when set', () => {
    const budgetOf = (provider?: ProviderOptions): unknown[] => {
      const { stack, connection } = stackWith(provider);
      subscription(stack, connection);
      const fns = Template.fromStack(stack).findResources('AWS::Lambda::Function', { Properties: { Handler: 'index.onEvent' } });
      return Object.values(fns).map((f) => f.Properties.Environment.Variables[REQUEST_BUDGET_ENV]);
    };
    expect(budgetOf()).toEqual(['1000/300']);
    expect(budgetOf({ rateLimitRequests: 3000, rateLimitWindow: Duration.minutes(10) })).toEqual(['3000/600']);
    expect(budgetOf({ rateLimitRequests: 0 })).toEqual(['off']);
    expect(() => stackWith({ rateLimitRequests: -1 })).toThrow("MyStack/Dpi: provider.rateLimitRequests '-1' is not a request limit");
    expect(() => stackWith({ rateLimitRequests: 2.5 })).toThrow("MyStack/Dpi: provider.rateLimitRequests '2.5' is not a request limit");
    expect(() => stackWith({ rateLimitWindow: Duration.millis(1500) })).toThrow("MyStack/Dpi: provider.rateLimitWindow '1 second 500 millis' is not accepted");
    expect(() => stackWith({ rateLimitWindow: Duration.hours(2) })).toThrow("MyStack/Dpi: provider.rateLimitWindow '2 hours' is not accepted");
    expect(() => stackWith({ rateLimitRequests: 0, rateLimitWindow: Duration.minutes(1) }))
      .toThrow("MyStack/Dpi: provider.rateLimitWindow '1 minute' is given with rateLimitRequests: 0");
  });

  test('synth-time errors name the construct path and the bad value', () => {
    expect(() => stackWith({ vpcSubnets: { subnetType: ec2.SubnetType.PRIVATE_ISOLATED } }))
      .toThrow("MyStack/Dpi: provider.vpcSubnets '{ subnetType Isolated }' is given without provider.vpc");
    expect(() => stackWith(undefined, (s) => ({ securityGroups: [ec2.SecurityGroup.fromSecurityGroupId(s, 'Sg', 'sg-123')] })))
      .toThrow("MyStack/Dpi: provider.securityGroups 'MyStack/Sg' is given without provider.vpc");
    expect(() => stackWith(undefined, (s) => ({ logGroup: new logs.LogGroup(s, 'L'), logRetention: logs.RetentionDays.ONE_DAY })))
      .toThrow("MyStack/Dpi: provider.logRetention '1' cannot be combined with provider.logGroup (MyStack/L)");
    expect(() => stackWith({ memorySize: 64 })).toThrow("MyStack/Dpi: provider.memorySize '64' is not a Lambda memory size");
    expect(() => stackWith({ timeout: Duration.minutes(20) })).toThrow("MyStack/Dpi: provider.timeout '20 minutes' is not accepted");
  });

  test('one provider per stack: a second connection with other options fails naming both; the same objects or none are fine', () => {
    const { stack } = stackWith(undefined, (s) => ({ vpc: vpcOf(s), memorySize: 512 }));
    const first = stack.node.findChild('Dpi') as ServiceConnection;
    const second = (id: string, provider?: ProviderOptions): ServiceConnection => new ServiceConnection(stack, id, {
      endpoints: ServiceEndpoints.singleOrigin('https://api.example-dpi.com'),
      refreshToken: secretsmanager.Secret.fromSecretCompleteArn(stack, `${id}Token`, SECRET_ARN),
      provider,
      journalTableName: 'dpi-lifecycle-journal',
    });
    expect(() => second('NoOptions')).not.toThrow();
    expect(() => second('Same', { vpc: first.providerOptions!.vpc, memorySize: 512 })).not.toThrow();
    expect(() => second('Other', { vpc: first.providerOptions!.vpc, memorySize: 1024 }))
      .toThrow('MyStack/Other: provider options differ from those of MyStack/Dpi (memorySize: 512 vs 1024), which made the provider MyStack/DpiProvider of the stack');
    expect(() => second('OtherVpc', { vpc: new ec2.Vpc(stack, 'Vpc2'), memorySize: 512 })).toThrow(/provider options differ from those of MyStack\/Dpi \(vpc: MyStack\/Vpc vs MyStack\/Vpc2\)/);
  });

  test('options on a second connection when the first made the provider without them fail too', () => {
    const { stack } = stackWith();
    expect(() => new ServiceConnection(stack, 'Dpi2', {
      endpoints: ServiceEndpoints.singleOrigin('https://api.example-dpi.com'),
      refreshToken: secretsmanager.Secret.fromSecretCompleteArn(stack, 'Token2', SECRET_ARN),
      provider: { memorySize: 512 },
      journalTableName: 'dpi-lifecycle-journal',
    })).toThrow('MyStack/Dpi2: provider options differ from those of MyStack/Dpi (memorySize: default vs 512)');
  });

  test('cdk-nag: no unacknowledged finding with a VPC, a boundary and a retention', () => {
    const { stack, connection } = stackWith(undefined, (s) => ({
      vpc: vpcOf(s),
      permissionsBoundary: iam.ManagedPolicy.fromManagedPolicyName(s, 'Boundary', 'dpi-boundary'),
      logRetention: logs.RetentionDays.ONE_YEAR,
    }));
    new HistoryRequest(stack, 'History', { connection, subscription: subscription(stack, connection), startDate: '2024-01-01', endDate: '2024-01-31' });
    const app = stack.node.root as App;
    app.synth();
    for (const pack of [new AwsSolutionsChecks(), new HIPAASecurityChecks(), new NIST80053R5Checks(), new ServerlessChecks()]) {
      const found = pack.validateScope(app).violations
        .flatMap((v) => v.violatingResources.map((r) => `${v.ruleName} ${r.constructPath}`))
        .filter((x) => x.includes('/DpiProvider/'));
      expect([pack.readPackName, found]).toEqual([pack.readPackName, []]);
    }
  });
});
