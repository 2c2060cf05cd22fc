/**
 * The scheduled functions are bound at synth time to the run their rule sends (issue 31): the SubscriptionMonitor's
 * and the DriftMonitor's function environment holds their rule's input (all but the subscription list), in the form
 * the handler checks (src/handler/scheduled-binding.ts, `checkScheduledRun`).
 */
import { Template } from 'aws-cdk-lib/assertions';
import { fixture, SECRET_ARN } from './helpers';
import { DriftMonitor, Subscription, SubscriptionMonitor } from '../../src';
import { BOUND_RUN_ENV } from '../../src/contract';
import { checkScheduledRun } from '../../src/handler/scheduled-binding';

function deployedFunction(handler: string): { env: Record<string, string>; input: Record<string, unknown> } {
  const f = fixture();
  const sub = new Subscription(f.stack, 'Orders', { connection: f.connection, productId: 3001, remoteIdentityId: 362, productParameters: { marketplace_id: 'A1' } });
  new SubscriptionMonitor(f.stack, 'Monitor', { connection: f.connection, subscriptions: [sub] });
  new DriftMonitor(f.stack, 'Drift', { connection: f.connection });
  const t = Template.fromStack(f.stack);
  const [fnId, fn] = Object.entries(t.findResources('AWS::Lambda::Function', { Properties: { Handler: handler } }))[0];
  const rule = Object.values(t.findResources('AWS::Events::Rule')).find((r) => JSON.stringify(r.Properties.Targets[0].Arn).includes(fnId))!;
  // Resolved as CloudFormation would: the stack's ID and partition are the only tokens here.
  const value = (v: unknown): string => {
    if (typeof v === 'string') return v;
    const ref = (v as { Ref?: string }).Ref;
    if (ref === 'AWS::StackId') return 'stack-id';
    if (ref === 'AWS::Partition') return 'aws';
    // The monitored subscription's ID (a Ref or GetAtt of its custom resource).
    if (ref !== undefined || (v as Record<string, unknown>)['Fn::GetAtt'] !== undefined) return '9001';
    const join = (v as { 'Fn::Join'?: [string, unknown[]] })['Fn::Join'];
    if (join) return join[1].map(value).join(join[0]);
    throw new Error(`unexpected token ${JSON.stringify(v)}`);
  };
  const vars = f.stack.resolve(fn.Properties.Environment.Variables) as Record<string, unknown>;
  const env = Object.fromEntries(Object.entries(vars).map(([k, v]) => [k, value(v)]));
  const input = JSON.parse(value(f.stack.resolve(rule.Properties.Targets[0].Input))) as Record<string, unknown>;
  return { env, input };
}

test('the monitor\'s function binds the run its rule sends: that run passes; another AuthUrl, namespace or metadata key does not', () => {
  const { env, input } = deployedFunction('index.monitor');
  const bound = JSON.parse(env[BOUND_RUN_ENV]) as Record<string, unknown>;
  expect(Object.keys(bound).sort()).toEqual(['Connection', 'Namespace']);
  expect(JSON.stringify(bound)).toContain(SECRET_ARN);
  expect(input.Subscriptions).toHaveLength(1);
  expect(() => checkScheduledRun(input, env, false)).not.toThrow();
  const connection = input.Connection as object;
  expect(() => checkScheduledRun({ ...input, Connection: { ...connection, AuthUrl: 'https://collector.example.net' } }, env, false))
    .toThrow(/differs from the one bound to this function at synth time in Connection.AuthUrl;/);
  expect(() => checkScheduledRun({ ...input, Namespace: 'Other' }, env, false)).toThrow(/ in Namespace;/);
  expect(() => checkScheduledRun({ ...input, Connection: { ...connection, PipelineSubscriptionsKey: 'meta' } }, env, false))
    .toThrow(/ in Connection.PipelineSubscriptionsKey;/);
  expect(() => checkScheduledRun({ ...input, Source: 'HEALTHCHECKS' }, env, false)).toThrow(/ in Source;/);
  // The subscription list is not bound (the service answers for what each ID may read).
  expect(() => checkScheduledRun({ ...input, Subscriptions: [{ id: '1' }] }, env, false)).not.toThrow();
});

test('the drift check\'s function binds the connection, its own stack ID and the namespace', () => {
  const { env, input } = deployedFunction('index.drift');
  expect(Object.keys(JSON.parse(env[BOUND_RUN_ENV])).sort()).toEqual(['Connection', 'Namespace', 'StackId']);
  expect(input.StackId).toBe('stack-id');
  expect(() => checkScheduledRun(input, env, false)).not.toThrow();
  expect(() => checkScheduledRun({ ...input, StackId: 'another-stack-id' }, env, false)).toThrow(/ in StackId;/);
});
