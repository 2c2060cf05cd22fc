/**
 * The scheduled functions are bound at synth time to what their runs may use (issue 31): the SubscriptionMonitor's and
 * the DriftMonitor's function environment holds the connection of their rule's input (and the drift check's stack), in
 * the form the handler checks (src/handler/binding.ts, `checkScheduledRun`).
 */
import { Template } from 'aws-cdk-lib/assertions';
import { fixture, SECRET_ARN } from './helpers';
import { DriftMonitor, Subscription, SubscriptionMonitor } from '../../src';
import { BOUND_CONNECTION_FIELDS, BOUND_CONNECTIONS_ENV, BOUND_STACK_ID_ENV } from '../../src/contract';
import { checkScheduledRun } from '../../src/handler/binding';

function deployedFunction(handler: string): { env: Record<string, string>; input: Record<string, unknown> } {
  const f = fixture();
  const sub = new Subscription(f.stack, 'Orders', { connection: f.connection, productId: 3001, remoteIdentityId: 362, productParameters: { marketplace_id: 'A1' } });
  new SubscriptionMonitor(f.stack, 'Monitor', { connection: f.connection, subscriptions: [sub] });
  new DriftMonitor(f.stack, 'Drift', { connection: f.connection });
  const t = Template.fromStack(f.stack);
  const [fnId, fn] = Object.entries(t.findResources('AWS::Lambda::Function', { Properties: { Handler: handler } }))[0];
  const rule = Object.values(t.findResources('AWS::Events::Rule')).find((r) => JSON.stringify(r.Properties.Targets[0].Arn).includes(fnId))!;
  // The stack's only tokens here are AWS::StackId (left as a marker); the rest is literal.
  const marker = (v: unknown): string => JSON.stringify(v).replace(/\{"Ref":"AWS::StackId"\}/g, '"STACK"');
  const env = JSON.parse(marker(f.stack.resolve(fn.Properties.Environment.Variables)).replace(/"STACK"/g, '"stack-id"'));
  const inputText = f.stack.resolve(rule.Properties.Targets[0].Input) as unknown;
  const input = JSON.parse(typeof inputText === 'string' ? inputText
    : (inputText as { 'Fn::Join': [string, unknown[]] })['Fn::Join'][1].map((p) => (typeof p === 'string' ? p : 'stack-id')).join(''));
  return { env, input };
}

test('the monitor\'s function binds the connection its rule sends: the rule\'s run passes, another AuthUrl does not', () => {
  const { env, input } = deployedFunction('index.monitor');
  const bound = JSON.parse(env[BOUND_CONNECTIONS_ENV]) as string[][];
  expect(bound).toHaveLength(1);
  expect(bound[0]).toHaveLength(BOUND_CONNECTION_FIELDS.length);
  expect(bound[0]).toContain(SECRET_ARN);
  expect(() => checkScheduledRun(input, env, false, false)).not.toThrow();
  const other = { ...input, Connection: { ...(input.Connection as object), AuthUrl: 'https://collector.example.net' } };
  expect(() => checkScheduledRun(other, env, false, false)).toThrow(/Connection.AuthUrl 'https:\/\/collector.example.net'/);
});

test('the drift check\'s function binds the connection and its own stack ID', () => {
  const { env, input } = deployedFunction('index.drift');
  expect(env[BOUND_STACK_ID_ENV]).toBe('stack-id');
  expect(input.StackId).toBe('stack-id');
  expect(() => checkScheduledRun(input, env, false, true)).not.toThrow();
  expect(() => checkScheduledRun({ ...input, StackId: 'another-stack-id' }, env, false, true)).toThrow(/is not the stack this function checks/);
});
