/**
 * The provider binds what it serves at synth time (issue 31): its handler functions' environment names the connections
 * (addresses, secret, journal table) and the stacks it serves, with tokens that CloudFormation resolves to the same values
 * as the resources' `Connection` property.
 */
import { App, CfnParameter, Fn, NestedStack, Stack } from 'aws-cdk-lib';
import { Template } from 'aws-cdk-lib/assertions';
import * as secretsmanager from 'aws-cdk-lib/aws-secretsmanager';
import { fixture, roles, SECRET_ARN } from './helpers';
import { AccountType, HistoryRequest, NotificationPipelineFleet, NotificationType, ServiceConnection, ServiceEndpoints, Subscription } from '../../src';
import { BOUND_CONNECTION_FIELDS, BOUND_CONNECTIONS_ENV, BOUND_STACKS_ENV } from '../../src/contract';

const OTHER_SECRET_ARN = 'arn:aws:secretsmanager:us-east-1:123456789012:secret:dpi/other-token-XyZ123';
const ORDERS = { productId: 3001, remoteIdentityId: 362, productParameters: { marketplace_id: 'ATVPDKIKX0DER' } };

/** The environment variables of the stack's handler functions (onEvent, and isComplete when there is a waiter). */
function handlerEnvironments(t: Template): Array<Record<string, unknown>> {
  return Object.entries(t.findResources('AWS::Lambda::Function'))
    .filter(([id]) => /^DpiProvider(OnEvent|IsComplete)/.test(id))
    .map(([, r]) => r.Properties.Environment.Variables);
}

/** A CloudFormation value resolved with fixed values for references (enough for Fn::Join, Ref, Fn::ImportValue, Fn::GetAtt). */
function evaluate(v: unknown, refs: (name: string) => string): unknown {
  if (Array.isArray(v)) return v.map((x) => evaluate(x, refs));
  if (v === null || typeof v !== 'object') return v;
  const o = v as Record<string, unknown>;
  if ('Ref' in o) return refs(`Ref:${String(o.Ref)}`);
  if ('Fn::ImportValue' in o) return refs(`Import:${String(o['Fn::ImportValue'])}`);
  if ('Fn::GetAtt' in o) return refs(`GetAtt:${JSON.stringify(o['Fn::GetAtt'])}`);
  if ('Fn::Join' in o) {
    const [sep, parts] = o['Fn::Join'] as [string, unknown[]];
    return (evaluate(parts, refs) as unknown[]).join(sep);
  }
  return Object.fromEntries(Object.entries(o).map(([k, x]) => [k, evaluate(x, refs)]));
}

const fake = (name: string): string => `value-of-${name.replace(/[^A-Za-z0-9:]/g, '')}`;

/** The bound connections of an environment, evaluated, as objects. */
function bound(env: Record<string, unknown>): Array<Record<string, string>> {
  const conns = JSON.parse(evaluate(env[BOUND_CONNECTIONS_ENV], fake) as string) as string[][];
  return conns.map((c) => Object.fromEntries(BOUND_CONNECTION_FIELDS.map((f, i) => [f, c[i]])));
}

/** The `Connection` property of each custom resource of the template, evaluated, restricted to the bound fields. */
function resourceConnections(t: Template): Array<Record<string, string>> {
  return Object.values(t.toJSON().Resources as Record<string, { Type: string; Properties?: Record<string, unknown> }>)
    .filter((r) => r.Type.startsWith('Custom::Dpi'))
    .map((r) => evaluate(r.Properties!.Connection, fake) as Record<string, string>)
    .map((c) => Object.fromEntries(BOUND_CONNECTION_FIELDS.map((f) => [f, c[f] ?? 'dpi-lifecycle-journal'])));
}

describe('the provider binds its connections and stacks in the handler functions\' environment', () => {
  test('one connection: its six addresses, its secret and its journal table; the stack', () => {
    const f = fixture();
    const sub = new Subscription(f.stack, 'Orders', { connection: f.connection, ...ORDERS });
    new HistoryRequest(f.stack, 'Backfill', { connection: f.connection, subscription: sub, startDate: '2026-11-01', endDate: '2026-11-02' });
    const t = Template.fromStack(f.stack);
    const envs = handlerEnvironments(t);
    expect(envs).toHaveLength(2); // onEvent and isComplete
    for (const env of envs) {
      expect(JSON.parse(env[BOUND_CONNECTIONS_ENV] as string)).toEqual([[...Array(6).fill('https://api.example-dpi.com'), SECRET_ARN, 'dpi-lifecycle-journal']]);
      expect(JSON.parse(env[BOUND_STACKS_ENV] as string)).toEqual(['MyStack']);
    }
    expect(resourceConnections(t)).toEqual(bound(envs[0]).concat(bound(envs[0])));
    // The secret's value is never there (only its ARN).
    expect(JSON.stringify(t.toJSON())).not.toContain('SecretString');
  });

  test('several connections of a stack share its provider: each is bound once, every resource\'s connection is among them', () => {
    const f = fixture();
    const other = new ServiceConnection(f.stack, 'Other', {
      baseUrl: 'https://gw.example-dpi.com',
      subscriptionsUrl: 'https://sub.example-dpi.com',
      accountUrl: 'https://acct.example-dpi.com',
      userUrl: 'https://user.example-dpi.com',
      remoteIdentityUrl: 'https://ri.example-dpi.com',
      authUrl: 'https://auth.example-dpi.com',
      refreshToken: secretsmanager.Secret.fromSecretCompleteArn(f.stack, 'OtherToken', OTHER_SECRET_ARN),
      journalTableName: 'other-journal',
    });
    new Subscription(f.stack, 'A', { connection: f.connection, ...ORDERS });
    new Subscription(f.stack, 'B', { connection: other, ...ORDERS });
    new Subscription(f.stack, 'C', { connection: other, ...ORDERS, remoteIdentityId: 364 });
    const t = Template.fromStack(f.stack);
    const [env] = handlerEnvironments(t);
    const conns = bound(env);
    expect(conns.map((c) => [c.AuthUrl, c.RefreshTokenSecretArn, c.JournalTableName])).toEqual([
      ['https://api.example-dpi.com', SECRET_ARN, 'dpi-lifecycle-journal'],
      ['https://auth.example-dpi.com', OTHER_SECRET_ARN, 'other-journal'],
    ]);
    for (const c of resourceConnections(t)) expect(conns).toContainEqual(c);
  });

  test('tokens (an imported address, a secret of the stack, a parameter for the table) resolve to the resources\' values', () => {
    const app = new App();
    const stack = new Stack(app, 'Tokens', { env: { account: '123456789012', region: 'us-east-1' } });
    const table = new CfnParameter(stack, 'JournalTable', { default: 'dpi-lifecycle-journal' });
    const connection = new ServiceConnection(stack, 'Dpi', {
      singleOriginUrl: Fn.importValue('DpiServiceUrl'),
      refreshToken: new secretsmanager.Secret(stack, 'Token'),
      journalTableName: table.valueAsString,
    });
    new Subscription(stack, 'Orders', { connection, ...ORDERS });
    const t = Template.fromStack(stack);
    const [env] = handlerEnvironments(t);
    const [c] = bound(env);
    expect(c.BaseUrl).toBe('value-of-Import:DpiServiceUrl');
    expect(c.RefreshTokenSecretArn).toMatch(/^value-of-Ref:Token/);
    expect(c.JournalTableName).toBe('value-of-Ref:JournalTable');
    expect(resourceConnections(t)).toEqual([c]);
  });

  test('a connection of another stack: the resource\'s stack binds it (through the same cross-stack references)', () => {
    const app = new App();
    const env = { account: '123456789012', region: 'us-east-1' };
    const shared = new Stack(app, 'Shared', { env });
    const connection = new ServiceConnection(shared, 'Dpi', {
      endpoints: ServiceEndpoints.singleOrigin('https://api.example-dpi.com'),
      refreshToken: new secretsmanager.Secret(shared, 'Token'),
      journalTableName: 'dpi-lifecycle-journal',
    });
    const app1 = new Stack(app, 'App1', { env });
    new Subscription(app1, 'Orders', { connection, ...ORDERS });
    const t = Template.fromStack(app1);
    const [e] = handlerEnvironments(t);
    expect(JSON.parse(e[BOUND_STACKS_ENV] as string)).toEqual(['App1']);
    expect(JSON.stringify(e[BOUND_CONNECTIONS_ENV])).toContain('Fn::ImportValue');
    expect(resourceConnections(t)).toEqual(bound(e));
  });

  test('a fleet: its nested stacks use the parent\'s provider, which serves them (<stack>-*) and binds the connection once', () => {
    const f = fixture();
    new NotificationPipelineFleet(f.stack, 'Fleet', {
      connection: f.connection,
      roles: roles(f.stack),
      identities: [362, 364].map((id) => ({
        remoteIdentityId: id, accountType: AccountType.SELLER, notificationTypes: [NotificationType.ORDER_CHANGE],
      })),
    });
    const t = Template.fromStack(f.stack);
    const [env] = handlerEnvironments(t);
    expect(JSON.parse(env[BOUND_STACKS_ENV] as string)).toEqual(['MyStack', 'MyStack-*']);
    expect(JSON.parse(env[BOUND_CONNECTIONS_ENV] as string)).toHaveLength(1);
    // No provider in the nested stacks.
    const nested = f.stack.node.findAll().filter((c): c is NestedStack => c instanceof NestedStack);
    expect(nested.length).toBeGreaterThan(0);
    for (const n of nested) expect(handlerEnvironments(Template.fromStack(n))).toEqual([]);
  });

  test('a nested stack with its own provider binds its own name (a token CloudFormation resolves)', () => {
    const f = fixture();
    const nested = new NestedStack(f.stack, 'Inner');
    const connection = new ServiceConnection(nested, 'Dpi', {
      endpoints: ServiceEndpoints.singleOrigin('https://api.example-dpi.com'),
      refreshToken: secretsmanager.Secret.fromSecretCompleteArn(nested, 'Token', SECRET_ARN),
      journalTableName: 'dpi-lifecycle-journal',
    });
    new Subscription(nested, 'Orders', { connection, ...ORDERS });
    const [env] = handlerEnvironments(Template.fromStack(nested));
    expect(evaluate(env[BOUND_STACKS_ENV], fake)).toBe('["value-of-Ref:AWS::StackName"]');
  });
});
