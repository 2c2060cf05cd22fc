import { App, RemovalPolicy, Stack } from 'aws-cdk-lib';
import { Annotations, Match, Template } from 'aws-cdk-lib/assertions';
import * as dynamodb from 'aws-cdk-lib/aws-dynamodb';
import * as secretsmanager from 'aws-cdk-lib/aws-secretsmanager';
import { AwsSolutionsChecks, HIPAASecurityChecks, NIST80053R5Checks, ServerlessChecks } from 'cdk-nag';
import { SECRET_ARN } from './helpers';
import { DriftMonitor, ServiceConnection, ServiceEndpoints, Subscription } from '../../src';
import { PROVIDED_JOURNAL_TABLES_ENV as CONSTRUCT_ENV } from '../../src/connection/provider';
import { CREATED_JOURNAL_TABLES_ENV } from '../../src/contract';
import { PROVIDED_JOURNAL_TABLES_ENV as HANDLER_ENV } from '../../src/handler/journal-provided';

function setup(table?: (s: Stack) => dynamodb.ITable, extra: { journalTableName?: string } = {}): { stack: Stack; connection: ServiceConnection } {
  const app = new App();
  const stack = new Stack(app, 'MyStack', { env: { account: '123456789012', region: 'us-east-1' } });
  const connection = new ServiceConnection(stack, 'Dpi', {
    endpoints: ServiceEndpoints.singleOrigin('https://api.example-dpi.com'),
    refreshToken: secretsmanager.Secret.fromSecretCompleteArn(stack, 'Token', SECRET_ARN),
    journalTable: table?.(stack),
    ...extra,
  });
  new Subscription(stack, 'Orders', { connection, productId: 3001, remoteIdentityId: 362, productParameters: { marketplace_id: 'ATVPDKIKX0DER' } });
  return { stack, connection };
}

function journalTable(s: Stack): dynamodb.TableV2 {
  return new dynamodb.TableV2(s, 'Journal', {
    partitionKey: { name: 'pk', type: dynamodb.AttributeType.STRING },
    sortKey: { name: 'sk', type: dynamodb.AttributeType.STRING },
    billing: dynamodb.Billing.onDemand(),
    pointInTimeRecoverySpecification: { pointInTimeRecoveryEnabled: true },
    deletionProtection: true,
    removalPolicy: RemovalPolicy.RETAIN,
  });
}

/** Every statement of the handler role's policies. */
function handlerStatements(t: Template): Array<{ Action: string | string[]; Resource: unknown; Sid?: string }> {
  return Object.values(t.findResources('AWS::IAM::Policy'))
    .filter((p) => JSON.stringify(p.Properties.Roles).includes('DpiProviderHandlerRole'))
    .flatMap((p) => p.Properties.PolicyDocument.Statement);
}

describe('ServiceConnection journalTable', () => {
  test('a supplied table: its name in the Connection property and the handler environment, read/write on it only, never CreateTable', () => {
    const { stack } = setup(journalTable);
    const t = Template.fromStack(stack);
    t.hasResourceProperties('Custom::DpiSubscription', { Connection: Match.objectLike({ JournalTableName: { Ref: Match.stringLikeRegexp('^Journal') } }) });
    t.hasResourceProperties('AWS::Lambda::Function', {
      Handler: 'index.onEvent',
      Environment: { Variables: Match.objectLike({ [CONSTRUCT_ENV]: { Ref: Match.stringLikeRegexp('^Journal') } }) },
    });
    expect(CONSTRUCT_ENV).toBe(HANDLER_ENV);
    const dynamo = handlerStatements(t).filter((s) => [s.Action].flat().some((a) => a.startsWith('dynamodb:')));
    const actions = dynamo.flatMap((s) => [s.Action].flat());
    expect(actions).toEqual(expect.arrayContaining(['dynamodb:PutItem', 'dynamodb:Query', 'dynamodb:GetItem', 'dynamodb:DeleteItem', 'dynamodb:DescribeTable']));
    expect(actions).not.toContain('dynamodb:CreateTable');
    expect(actions).not.toContain('dynamodb:UpdateContinuousBackups');
    for (const s of dynamo) {
      const resources = JSON.stringify([s.Resource].flat());
      expect(resources).toMatch(/Journal[0-9A-F]{8}/);
      expect(resources).not.toContain('dpi-lifecycle-journal');
    }
  });

  test('journalTableName: the table the handler creates on first use, listed as such in its environment, and no other', () => {
    const { stack } = setup(undefined, { journalTableName: 'dpi-lifecycle-journal' });
    const t = Template.fromStack(stack);
    const fn = Object.values(t.findResources('AWS::Lambda::Function', { Properties: { Handler: 'index.onEvent' } }))[0];
    expect(Object.keys(fn.Properties.Environment.Variables)).not.toContain(CONSTRUCT_ENV);
    expect(fn.Properties.Environment.Variables[CREATED_JOURNAL_TABLES_ENV]).toBe('dpi-lifecycle-journal');
    const actions = handlerStatements(t).flatMap((s) => [s.Action].flat());
    expect(actions).toContain('dynamodb:CreateTable');
    t.hasResourceProperties('Custom::DpiSubscription', { Connection: Match.objectLike({ JournalTableName: 'dpi-lifecycle-journal' }) });
  });

  test('a supplied table is not one the handler may create: no CreateTable, no created list', () => {
    const { stack } = setup(journalTable);
    const fn = Object.values(Template.fromStack(stack).findResources('AWS::Lambda::Function', { Properties: { Handler: 'index.onEvent' } }))[0];
    expect(Object.keys(fn.Properties.Environment.Variables)).not.toContain(CREATED_JOURNAL_TABLES_ENV);
  });

  test('none of journal, journalTable and journalTableName: a synth error naming the connection and the three ways', () => {
    expect(() => setup()).toThrow(/^MyStack\/Dpi: no lifecycle journal \(journal, journalTable or journalTableName\).*LifecycleJournal.*journalTable.*journalTableName: 'dpi-lifecycle-journal'/);
  });

  test('an imported table (managed in another template) by name', () => {
    const { stack } = setup((s) => dynamodb.Table.fromTableName(s, 'Imported', 'team-journal'));
    const t = Template.fromStack(stack);
    t.hasResourceProperties('Custom::DpiSubscription', { Connection: Match.objectLike({ JournalTableName: 'team-journal' }) });
    t.hasResourceProperties('AWS::Lambda::Function', { Handler: 'index.onEvent', Environment: { Variables: Match.objectLike({ [CONSTRUCT_ENV]: 'team-journal' }) } });
    expect(JSON.stringify(handlerStatements(t))).toContain('table/team-journal');
  });

  test('the drift monitor reads the supplied table by its ARN', () => {
    const { stack, connection } = setup(journalTable);
    new DriftMonitor(stack, 'Drift', { connection });
    const t = Template.fromStack(stack);
    t.hasResourceProperties('AWS::IAM::Policy', {
      PolicyDocument: { Statement: Match.arrayWith([Match.objectLike({ Sid: 'ReadLifecycleJournal', Resource: { 'Fn::GetAtt': [Match.stringLikeRegexp('^Journal'), 'Arn'] } })]) },
    });
  });

  test('cdk-nag: no unacknowledged finding on the provider with a supplied table', () => {
    const { stack } = setup(journalTable);
    const app = stack.node.root as App;
    app.synth();
    for (const pack of [new AwsSolutionsChecks(), new HIPAASecurityChecks(), new NIST80053R5Checks(), new ServerlessChecks()]) {
      const found = pack.validateScope(app).violations
        .flatMap((v) => v.violatingResources.map((r) => `${v.ruleName} ${r.constructPath}`))
        .filter((x) => x.includes('/DpiProvider/'));
      expect([pack.readPackName, found]).toEqual([pack.readPackName, []]);
    }
  });

  test('journalTable with journalTableName: a synth error naming both', () => {
    expect(() => setup(journalTable, { journalTableName: 'other' }))
      .toThrow("MyStack/Dpi: journalTableName 'other' cannot be combined with journalTable (MyStack/Journal)");
  });
});

describe('ServiceConnection journalTable in the stack it serves', () => {
  const WARNING = /journalTable \(MyStack\/Journal\) is defined in the stack it serves.*define the table once per account and region in a stack of its own/;
  const warnings = (stack: Stack): string[] => Annotations.fromStack(stack).findWarning('*', Match.anyValue())
    .map((w) => String(w.entry.data));

  test('a table defined in the same stack is warned about (its rollback or destroy can delete the records)', () => {
    const { stack } = setup(journalTable);
    expect(warnings(stack).some((w) => WARNING.test(w))).toBe(true);
  });

  test('an imported table and a table of another stack are not', () => {
    expect(warnings(setup((s) => dynamodb.TableV2.fromTableName(s, 'Journal', 'dpi-team-journal')).stack).filter((w) => /journalTable/.test(w))).toEqual([]);
    const app = new App();
    const journalStack = new Stack(app, 'Journal', { env: { account: '123456789012', region: 'us-east-1' } });
    const table = journalTable(journalStack);
    const stack = new Stack(app, 'MyStack', { env: { account: '123456789012', region: 'us-east-1' } });
    new ServiceConnection(stack, 'Dpi', {
      endpoints: ServiceEndpoints.singleOrigin('https://api.example-dpi.com'),
      refreshToken: secretsmanager.Secret.fromSecretCompleteArn(stack, 'Token', SECRET_ARN),
      journalTable: table,
    });
    expect(warnings(stack).filter((w) => /journalTable/.test(w))).toEqual([]);
  });
});
