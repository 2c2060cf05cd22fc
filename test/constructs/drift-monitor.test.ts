import { App, Duration, NestedStack, Stack } from 'aws-cdk-lib';
import { Match, Template } from 'aws-cdk-lib/assertions';
import * as cloudwatch from 'aws-cdk-lib/aws-cloudwatch';
import * as secretsmanager from 'aws-cdk-lib/aws-secretsmanager';
import * as sns from 'aws-cdk-lib/aws-sns';
import { HIPAASecurityChecks, NIST80053R5Checks, ServerlessChecks, AwsSolutionsChecks } from 'cdk-nag';
import { fixture, SECRET_ARN } from './helpers';
import { DriftMonitor, LifecycleJournal, ServiceConnection, ServiceEndpoints, Subscription } from '../../src';
import { DECLARED_JOURNAL_TABLES_ENV, PROVIDED_JOURNAL_TABLES_ENV } from '../../src/contract';

describe('DriftMonitor', () => {
  test('one scheduled function (index.drift), hourly by default; the rule input carries the connection and the stack ARN, never the secret value', () => {
    const f = fixture();
    new Subscription(f.stack, 'Orders', { connection: f.connection, productId: 3001, remoteIdentityId: 362, productParameters: { marketplace_id: 'A1' } });
    new DriftMonitor(f.stack, 'Drift', { connection: f.connection });
    const t = Template.fromStack(f.stack);
    expect(Object.keys(t.findResources('AWS::Lambda::Function', { Properties: { Handler: 'index.drift' } }))).toHaveLength(1);
    t.hasResourceProperties('AWS::Lambda::Function', { Handler: 'index.drift', Runtime: 'nodejs24.x', Architectures: ['arm64'] });
    t.hasResourceProperties('AWS::Events::Rule', { ScheduleExpression: 'rate(1 hour)' });
    const rule = Object.values(t.findResources('AWS::Events::Rule'))[0];
    const input = JSON.stringify(f.stack.resolve(rule.Properties.Targets[0].Input));
    expect(input).toContain('RefreshTokenSecretArn');
    expect(input).toContain(SECRET_ARN);
    expect(input).toContain('"StackId\\":\\"",{"Ref":"AWS::StackId"}');
    expect(input).toContain('JournalTableName');
  });

  test('least privilege: its own stack\'s resource list, the journal table (describe and query only), the secret', () => {
    const f = fixture();
    new DriftMonitor(f.stack, 'Drift', { connection: f.connection });
    const t = Template.fromStack(f.stack);
    const policies = Object.values(t.findResources('AWS::IAM::Policy', { Properties: { Roles: [{ Ref: Match.stringLikeRegexp('^DriftRole') }] } }));
    expect(policies).toHaveLength(1);
    type Statement = { Sid?: string; Action: unknown; Resource: unknown };
    const statements = f.stack.resolve(policies[0].Properties.PolicyDocument.Statement) as Statement[];
    expect(statements.find((s) => s.Sid === 'ListOwnStackResources')).toEqual(expect.objectContaining({
      Action: 'cloudformation:ListStackResources', Resource: { Ref: 'AWS::StackId' },
    }));
    // No nested stacks: nothing to read beyond its own stack.
    expect(statements.find((s) => s.Sid === 'ReadNestedStacks')).toBeUndefined();
    expect(statements.find((s) => s.Sid === 'ReadLifecycleJournal')).toEqual(expect.objectContaining({
      Action: ['dynamodb:DescribeTable', 'dynamodb:Query'],
      Resource: { 'Fn::Join': ['', ['arn:', { Ref: 'AWS::Partition' }, ':dynamodb:us-east-1:123456789012:table/dpi-lifecycle-journal']] },
    }));
    expect(statements.some((s) => JSON.stringify(s.Action).includes('secretsmanager:GetSecretValue') && s.Resource === SECRET_ARN)).toBe(true);
    const all = JSON.stringify(statements);
    expect(all).not.toMatch(/dynamodb:(PutItem|CreateTable|UpdateItem|DeleteItem)/);
    expect(all).not.toContain('"*"');
  });

  test('with a declared journal: it checks the journal as the provider does (its lists in the environment, tags and policy readable)', () => {
    const app = new App();
    const stack = new Stack(app, 'MyStack', { env: { account: '123456789012', region: 'us-east-1' } });
    const connection = new ServiceConnection(stack, 'Dpi', {
      endpoints: ServiceEndpoints.singleOrigin('https://api.example-dpi.com'),
      refreshToken: secretsmanager.Secret.fromSecretCompleteArn(stack, 'Token', SECRET_ARN),
      journal: LifecycleJournal.fromTableName(stack, 'Journal', 'team-journal'),
    });
    new DriftMonitor(stack, 'Drift', { connection });
    const t = Template.fromStack(stack);
    t.hasResourceProperties('AWS::Lambda::Function', {
      Handler: 'index.drift',
      Environment: { Variables: Match.objectLike({ [DECLARED_JOURNAL_TABLES_ENV]: 'team-journal', [PROVIDED_JOURNAL_TABLES_ENV]: 'team-journal' }) },
    });
    const policies = Object.values(t.findResources('AWS::IAM::Policy', { Properties: { Roles: [{ Ref: Match.stringLikeRegexp('^DriftRole') }] } }));
    const statements = stack.resolve(policies[0].Properties.PolicyDocument.Statement) as Array<{ Sid?: string; Action: unknown }>;
    expect(statements.find((s) => s.Sid === 'ReadLifecycleJournal')?.Action)
      .toEqual(['dynamodb:DescribeTable', 'dynamodb:Query', 'dynamodb:ListTagsOfResource', 'dynamodb:GetResourcePolicy']);
  });

  test('its nested stacks, at any depth and also those added after it, each by its own stack ID (no <stack>-* wildcard)', () => {
    const f = fixture();
    new DriftMonitor(f.stack, 'Drift', { connection: f.connection });
    const outer = new NestedStack(f.stack, 'Sellers');
    new sns.Topic(outer, 'T');
    const inner = new NestedStack(outer, 'Inner');
    new sns.Topic(inner, 'T');
    const t = Template.fromStack(f.stack);
    const policies = Object.values(t.findResources('AWS::IAM::Policy', { Properties: { Roles: [{ Ref: Match.stringLikeRegexp('^DriftRole') }] } }));
    type Statement = { Sid?: string; Action: unknown; Resource: unknown };
    const statements = f.stack.resolve(policies[0].Properties.PolicyDocument.Statement) as Statement[];
    const outerId = f.stack.getLogicalId(outer.nestedStackResource!);
    const read = statements.find((s) => s.Sid === 'ReadNestedStacks')!;
    expect(read.Action).toEqual(['cloudformation:ListStackResources', 'cloudformation:GetTemplate']);
    const resources = read.Resource as unknown[];
    expect(resources).toHaveLength(2);
    // The outer one by its Ref; the inner one through an output of the outer one (its Ref there).
    expect(resources).toContainEqual({ Ref: outerId });
    expect(resources).toContainEqual({ 'Fn::GetAtt': [outerId, expect.stringMatching(/^Outputs\..*Inner/)] });
    expect(JSON.stringify(statements)).not.toMatch(/stack\/[^"]*-\*/);
  });

  test('alarms: drifted >= 1, check failed twice, the function\'s errors; the topic as alarm and OK action; the interval sets the period', () => {
    const f = fixture();
    const topic = new sns.Topic(f.stack, 'Topic');
    const m = new DriftMonitor(f.stack, 'Drift', { connection: f.connection, alarmTopic: topic, interval: Duration.hours(6) });
    const t = Template.fromStack(f.stack);
    t.resourceCountIs('AWS::CloudWatch::Alarm', 3);
    t.hasResourceProperties('AWS::Events::Rule', { ScheduleExpression: 'rate(6 hours)' });
    t.hasResourceProperties('AWS::CloudWatch::Alarm', {
      MetricName: 'DriftedResources',
      Namespace: 'DataPipelineIntegration',
      Dimensions: [{ Name: 'StackName', Value: 'MyStack' }],
      Threshold: 1,
      Period: 21600,
      ComparisonOperator: 'GreaterThanOrEqualToThreshold',
      TreatMissingData: 'notBreaching',
      AlarmActions: [{ Ref: Match.stringLikeRegexp('^Topic') }],
      OKActions: [{ Ref: Match.stringLikeRegexp('^Topic') }],
    });
    t.hasResourceProperties('AWS::CloudWatch::Alarm', { MetricName: 'DriftCheckFailed', EvaluationPeriods: 2, AlarmActions: [{ Ref: Match.stringLikeRegexp('^Topic') }] });
    t.hasResourceProperties('AWS::CloudWatch::Alarm', { MetricName: 'Errors', Namespace: 'AWS/Lambda' });
    expect((m.driftAlarm.metric as cloudwatch.Metric).metricName).toBe('DriftedResources');
    expect((m.checkFailedAlarm.metric as cloudwatch.Metric).metricName).toBe('DriftCheckFailed');
  });

  test('synth errors: a second monitor in the stack; an interval outside 5 minutes to 12 hours', () => {
    const f = fixture();
    new DriftMonitor(f.stack, 'Drift', { connection: f.connection });
    expect(() => new DriftMonitor(f.stack, 'Again', { connection: f.connection }))
      .toThrow(/^MyStack\/Again: a second DriftMonitor in stack MyStack \(the first is 'MyStack\/Drift'\)/);
    const g = fixture();
    expect(() => new DriftMonitor(g.stack, 'Drift', { connection: g.connection, interval: Duration.minutes(1) }))
      .toThrow(/MyStack\/Drift: interval '1 minute' is outside 5 minutes to 12 hours/);
  });

  for (const withTopic of [true, false]) {
    test(`cdk-nag: no unacknowledged finding on the monitor's resources in any of the four packs (${withTopic ? 'with' : 'without'} alarmTopic)`, () => {
      const f = fixture();
      new DriftMonitor(f.stack, 'Drift', { connection: f.connection, alarmTopic: withTopic ? new sns.Topic(f.stack, 'Topic') : undefined });
      f.app.synth();
      for (const pack of [new AwsSolutionsChecks(), new HIPAASecurityChecks(), new NIST80053R5Checks(), new ServerlessChecks()]) {
        const found = pack.validateScope(f.app).violations
          .flatMap((v) => v.violatingResources.map((r) => `${v.ruleName} ${r.constructPath}`))
          .filter((x) => x.includes('/Drift/'));
        expect([pack.readPackName, found]).toEqual([pack.readPackName, []]);
      }
    });
  }
});
