/**
 * The lifecycle journal, declared (`LifecycleJournal`, issue 31): a table that outlives the stacks, a resource policy
 * that lets only the providers' roles (and named maintainers) write items, the provider role tagged as its writer, and
 * a handler that never creates it.
 */
import { App, LegacyStackSynthesizer, NestedStack, Stack } from 'aws-cdk-lib';
import { Annotations, Match, Template } from 'aws-cdk-lib/assertions';
import * as dynamodb from 'aws-cdk-lib/aws-dynamodb';
import * as iam from 'aws-cdk-lib/aws-iam';
import * as secretsmanager from 'aws-cdk-lib/aws-secretsmanager';
import { AwsSolutionsChecks, HIPAASecurityChecks, NIST80053R5Checks, ServerlessChecks } from 'cdk-nag';
import { SECRET_ARN } from './helpers';
import { ILifecycleJournal, LifecycleJournal, ServiceConnection, ServiceEndpoints, Subscription } from '../../src';
import { DECLARED_JOURNAL_TABLES_ENV } from '../../src/contract';

const ENV = { account: '123456789012', region: 'us-east-1' };

type Built = { app: App; stack: Stack; journalStack: Stack };
function app(journalOf: (app: App, stack: Stack) => ILifecycleJournal, provider?: (s: Stack) => { role: iam.IRole }): Built {
  const a = new App();
  const journalStack = new Stack(a, 'DpiJournal', { env: ENV, terminationProtection: true });
  const stack = new Stack(a, 'MyStack', { env: ENV });
  const journal = journalOf(a, stack);
  const connection = new ServiceConnection(stack, 'Dpi', {
    endpoints: ServiceEndpoints.singleOrigin('https://api.example-dpi.com'),
    refreshToken: secretsmanager.Secret.fromSecretCompleteArn(stack, 'Token', SECRET_ARN),
    journal,
    ...(provider ? { provider: provider(stack) } : {}),
  });
  new Subscription(stack, 'Orders', { connection, productId: 3001, remoteIdentityId: 362, productParameters: { marketplace_id: 'ATVPDKIKX0DER' } });
  return { app: a, stack, journalStack };
}

describe('LifecycleJournal', () => {
  test('the table: pk/sk on demand, point-in-time recovery, deletion protection, RETAIN, the journal tag, the write fence', () => {
    const a = new App();
    const s = new Stack(a, 'DpiJournal', { env: ENV, terminationProtection: true });
    new LifecycleJournal(s, 'Journal', { maintainerArns: ['arn:aws:iam::123456789012:role/Operators'] });
    const t = Template.fromStack(s);
    t.hasResource('AWS::DynamoDB::Table', { DeletionPolicy: 'Retain', UpdateReplacePolicy: 'Retain' });
    t.hasResourceProperties('AWS::DynamoDB::Table', {
      TableName: 'dpi-lifecycle-journal',
      BillingMode: 'PAY_PER_REQUEST',
      KeySchema: [{ AttributeName: 'pk', KeyType: 'HASH' }, { AttributeName: 'sk', KeyType: 'RANGE' }],
      DeletionProtectionEnabled: true,
      PointInTimeRecoverySpecification: { PointInTimeRecoveryEnabled: true },
      Tags: [{ Key: 'dpi:lifecycle-journal', Value: 'v1' }],
    });
    const [table] = Object.values(t.findResources('AWS::DynamoDB::Table'));
    const statements = s.resolve(table.Properties.ResourcePolicy.PolicyDocument.Statement) as Array<Record<string, any>>;
    expect(statements.map((x) => [x.Sid, x.Effect, x.Principal, x.Resource])).toEqual([
      ['DpiJournalWritersOnly', 'Deny', { AWS: '*' }, '*'], ['DpiJournalTableGuard', 'Deny', { AWS: '*' }, '*'],
    ]);
    expect(statements[0].Action).toEqual(expect.arrayContaining(['dynamodb:PutItem', 'dynamodb:UpdateItem', 'dynamodb:DeleteItem', 'dynamodb:BatchWriteItem',
      'dynamodb:PartiQLInsert', 'dynamodb:PartiQLUpdate', 'dynamodb:PartiQLDelete']));
    expect(statements[1].Action).toEqual(expect.arrayContaining(['dynamodb:PutResourcePolicy', 'dynamodb:DeleteResourcePolicy', 'dynamodb:UpdateTable',
      'dynamodb:DeleteTable', 'dynamodb:UpdateContinuousBackups', 'dynamodb:TagResource', 'dynamodb:UntagResource', 'dynamodb:CreateTableReplica']));
    // Writers: the providers' roles by their IAM path, and the maintainers; the table: the maintainers and CloudFormation's role.
    const except = statements.map((x) => JSON.stringify(x.Condition));
    expect(statements.map((x) => Object.keys(x.Condition))).toEqual([['ArnNotLike'], ['ArnNotLike']]);
    expect(except[0]).toContain(':iam::123456789012:role/dpi-journal/dpi-lifecycle-journal/*');
    expect(except[0]).toContain('arn:aws:iam::123456789012:role/Operators');
    expect(except[1]).toContain('arn:aws:iam::123456789012:role/Operators');
    expect(except[1]).toContain('cdk-hnb659fds-cfn-exec-role-');
    expect(except[1]).not.toContain('dpi-journal/');
    expect(Annotations.fromStack(s).findWarning('*', Match.anyValue())).toEqual([]);
  });

  test('bad names are synth errors naming the path and the value; a stack without termination protection is warned', () => {
    const s = new Stack(new App(), 'DpiJournal');
    expect(() => new LifecycleJournal(s, 'Bad', { tableName: 'a b' })).toThrow(/DpiJournal\/Bad: tableName 'a b' is not a DynamoDB table name/);
    expect(() => new LifecycleJournal(s, 'Ops', { maintainerArns: ['Operators'] })).toThrow(/DpiJournal\/Ops: maintainerArns 'Operators' is not an IAM role or user ARN without wildcards/);
    expect(() => new LifecycleJournal(s, 'Wild', { maintainerArns: ['arn:aws:iam::*:*'] })).toThrow(/maintainerArns 'arn:aws:iam::\*:\*' is not/);
    // Without the bootstrap's CloudFormation role and without maintainers, nobody could change the table again.
    const legacy = new Stack(new App(), 'Legacy', { synthesizer: new LegacyStackSynthesizer() });
    expect(() => new LifecycleJournal(legacy, 'Journal')).toThrow(/Legacy\/Journal: maintainerArns '\[\]' is empty and the stack's synthesizer names no CloudFormation execution role/);
    expect(() => new LifecycleJournal(legacy, 'Named', { maintainerArns: ['arn:aws:iam::123456789012:role/Deployer'] })).not.toThrow();
    new LifecycleJournal(s, 'Journal');
    expect(Annotations.fromStack(s).findWarning('/DpiJournal/Journal', Match.stringLikeRegexp('termination protection is off'))).toHaveLength(1);
  });

  test('given to a connection: the provider role is under the journal\'s writers\' path, may read its tags and policy, never creates a table', () => {
    const { stack } = app((a) => new LifecycleJournal(a.node.findChild('DpiJournal'), 'Journal'));
    const t = Template.fromStack(stack);
    t.hasResourceProperties('AWS::IAM::Role', { Path: '/dpi-journal/dpi-lifecycle-journal/' });
    t.hasResourceProperties('AWS::Lambda::Function', {
      Handler: 'index.onEvent',
      Environment: { Variables: Match.objectLike({ [DECLARED_JOURNAL_TABLES_ENV]: 'dpi-lifecycle-journal' }) },
    });
    const actions = Object.values(t.findResources('AWS::IAM::Policy')).flatMap((p) => p.Properties.PolicyDocument.Statement)
      .flatMap((s: { Action: string | string[] }) => [s.Action].flat());
    expect(actions).toEqual(expect.arrayContaining(['dynamodb:PutItem', 'dynamodb:ListTagsOfResource', 'dynamodb:GetResourcePolicy']));
    expect(actions).not.toContain('dynamodb:CreateTable');
    // Exactly what the handler calls: no stream reads, no condition checks, no table changes.
    for (const a of ['dynamodb:GetShardIterator', 'dynamodb:ConditionCheckItem', 'dynamodb:UpdateTable', 'dynamodb:PutResourcePolicy']) expect(actions).not.toContain(a);
  });

  test('a journal of another stack is reached by name: no export pins the journal\'s stack, which deploys first', () => {
    const { app: a, stack } = app((x) => new LifecycleJournal(x.node.findChild('DpiJournal'), 'Journal'));
    const assembly = a.synth();
    expect(JSON.stringify(assembly.getStackByName('MyStack').template)).not.toContain('Fn::ImportValue');
    expect(assembly.getStackByName('DpiJournal').template.Outputs).toBeUndefined();
    expect(assembly.getStackByName('MyStack').dependencies.map((d) => d.id)).toContain('DpiJournal');
    const arns = JSON.stringify(stack.resolve(Object.values(Template.fromStack(stack).findResources('AWS::IAM::Policy'))));
    expect(arns).toContain(':table/dpi-lifecycle-journal');
  });

  test('a journal of another account or region: a synth error naming both', () => {
    const a = new App();
    const journal = new LifecycleJournal(new Stack(a, 'DpiJournal', { env: { ...ENV, region: 'eu-west-1' }, terminationProtection: true }), 'Journal');
    const s = new Stack(a, 'MyStack', { env: ENV });
    expect(() => new ServiceConnection(s, 'Dpi', {
      endpoints: ServiceEndpoints.singleOrigin('https://api.example-dpi.com'),
      refreshToken: secretsmanager.Secret.fromSecretCompleteArn(s, 'Token', SECRET_ARN),
      journal,
    })).toThrow(/MyStack\/Dpi: journal 'DpiJournal\/Journal' is in region eu-west-1, not in this stack's region us-east-1/);
  });

  test('a journal in a nested stack (or a connection in one, with the journal elsewhere): a synth error, as nothing would order them', () => {
    const a = new App();
    const top = new Stack(a, 'DpiJournal', { env: ENV, terminationProtection: true });
    const journal = new LifecycleJournal(new NestedStack(top, 'Nested'), 'Journal');
    const s = new Stack(a, 'MyStack', { env: ENV });
    expect(() => new ServiceConnection(s, 'Dpi', {
      endpoints: ServiceEndpoints.singleOrigin('https://api.example-dpi.com'),
      refreshToken: secretsmanager.Secret.fromSecretCompleteArn(s, 'Token', SECRET_ARN),
      journal,
    })).toThrow(/MyStack\/Dpi: journal 'DpiJournal\/Nested\/Journal' is in stack DpiJournal\/Nested, and the journal's stack is nested/);
  });

  test('fromTableName in another app: the same grants and checks by name', () => {
    const { stack } = app((_a, s) => LifecycleJournal.fromTableName(s, 'Journal', 'team-journal'));
    const t = Template.fromStack(stack);
    t.hasResourceProperties('AWS::IAM::Role', { Path: '/dpi-journal/team-journal/' });
    t.hasResourceProperties('Custom::DpiSubscription', { Connection: Match.objectLike({ JournalTableName: 'team-journal' }) });
    expect(() => LifecycleJournal.fromTableName(stack, 'Bad', 'x')).toThrow(/MyStack\/Bad: tableName 'x' is not a DynamoDB table name/);
  });

  test('a provider role the app does not make cannot be placed: a warning names the IAM path it needs', () => {
    const { stack } = app((_a, s) => LifecycleJournal.fromTableName(s, 'Journal', 'team-journal'),
      (s) => ({ role: iam.Role.fromRoleArn(s, 'ProviderRole', 'arn:aws:iam::123456789012:role/provider', { mutable: false }) }));
    expect(Annotations.fromStack(stack).findWarning('*', Match.stringLikeRegexp('it must be under the IAM path /dpi-journal/team-journal/'))).toHaveLength(1);
  });

  test('journal with journalTable or journalTableName: a synth error naming both', () => {
    const s = new Stack(new App(), 'MyStack', { env: ENV });
    const journal = LifecycleJournal.fromTableName(s, 'Journal', 'team-journal');
    expect(() => new ServiceConnection(s, 'Dpi', {
      endpoints: ServiceEndpoints.singleOrigin('https://api.example-dpi.com'),
      refreshToken: secretsmanager.Secret.fromSecretCompleteArn(s, 'Token', SECRET_ARN),
      journal,
      journalTableName: 'other',
    })).toThrow(/MyStack\/Dpi: journalTableName 'other' cannot be combined with journal \(MyStack\/Journal\)/);
  });

  test('one table as a declared journal of one connection and journalTableName or journalTable of another: a synth error naming both ways', () => {
    for (const other of [{ journalTableName: 'team-journal' }, { journalTable: dynamodb.Table.fromTableName(new Stack(new App(), 'X'), 'T', 'team-journal') }]) {
      const s = new Stack(new App(), 'MyStack', { env: ENV });
      const token = secretsmanager.Secret.fromSecretCompleteArn(s, 'Token', SECRET_ARN);
      const first = new ServiceConnection(s, 'Dpi', {
        endpoints: ServiceEndpoints.singleOrigin('https://api.example-dpi.com'), refreshToken: token, journal: LifecycleJournal.fromTableName(s, 'Journal', 'team-journal'),
      });
      new Subscription(s, 'A', { connection: first, productId: 3001, remoteIdentityId: 362, productParameters: { marketplace_id: 'ATVPDKIKX0DER' } });
      const kind = 'journalTableName' in other ? 'journalTableName \\(a table the handler creates\\)' : 'journalTable \\(a table you manage\\)';
      expect(() => {
        const second = new ServiceConnection(s, 'Second', { endpoints: ServiceEndpoints.singleOrigin('https://second.example-dpi.com'), refreshToken: token, ...other });
        new Subscription(s, 'B', { connection: second, productId: 3001, remoteIdentityId: 363, productParameters: { marketplace_id: 'ATVPDKIKX0DER' } });
      })
        .toThrow(new RegExp(`^MyStack/Second: the journal table 'team-journal' is given as ${kind} here and as journal \\(a declared LifecycleJournal\\) `
          + 'by another ServiceConnection of stack MyStack'));
    }
  });

  test('cdk-nag: no finding on the journal stack in any of the four packs', () => {
    const { app: a } = app((x) => new LifecycleJournal(x.node.findChild('DpiJournal'), 'Journal'));
    a.synth();
    for (const pack of [new AwsSolutionsChecks(), new HIPAASecurityChecks(), new NIST80053R5Checks(), new ServerlessChecks()]) {
      const found = pack.validateScope(a).violations
        .flatMap((v) => v.violatingResources.map((r) => `${v.ruleName} ${r.constructPath}`))
        .filter((x) => x.includes('DpiJournal/'));
      expect([pack.readPackName, found]).toEqual([pack.readPackName, []]);
    }
  });
});
