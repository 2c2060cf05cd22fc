/**
 * CloudFormation semantics of the runner, with a scripted handler
 * (test/local/fixtures/fake-handler.js) against the real emulator.
 */
import { existsSync, readFileSync, writeFileSync } from 'node:fs';
import { createServer } from 'node:net';
import type { AddressInfo } from 'node:net';
import { join } from 'node:path';
import { dpiResource, FakeCall, fakeCalls, providerResources, resetFakeCalls, tempDir, waiterStateMachine, writeAssembly } from './helpers';
import { startEmulator, RunningEmulator } from '../../src/emulator';
import { LocalDeployOptions, runLocalDeploy } from '../../src/local';
import { stopWarmContainers } from '../../src/local/containers';

const FAKE = join(__dirname, 'fixtures', 'fake-handler.js');
const TOKEN = 'rt-secret-7f3a9c1e-do-not-print';

type Call = FakeCall;
const calls = fakeCalls;
const resetCalls = resetFakeCalls;
const summary = (c: Call): string => `${c.fn}:${String(c.event.RequestType)}:${String(c.event.LogicalResourceId)}${c.event.PhysicalResourceId ? `:${String(c.event.PhysicalResourceId)}` : ''}`;

let emulator: RunningEmulator;
let tmp: { dir: string; cleanup: () => void };
let lines: string[];

beforeAll(async () => {
  emulator = await startEmulator({ port: 0 });
});
afterAll(async () => {
  await emulator.stop();
  resetCalls();
});
beforeEach(() => {
  resetCalls();
  tmp = tempDir();
  lines = [];
});
afterEach(() => tmp.cleanup());

function deployOpts(appDir: string, extra: Partial<LocalDeployOptions> = {}): LocalDeployOptions {
  return {
    app: appDir,
    emulatorUrl: emulator.url,
    stateFile: join(tmp.dir, 'state', 'local-state.json'),
    refreshToken: TOKEN,
    handlerPath: FAKE,
    pollIntervalMs: 5,
    progress: (l) => lines.push(l),
    output: (l) => lines.push(l),
    ...extra,
  };
}

function assembly(resources: Record<string, unknown>): string {
  const dir = join(tmp.dir, `out-${Math.random().toString(36).slice(2)}`);
  writeAssembly(dir, [{ name: 'Demo', template: { Resources: { ...providerResources(), ...resources } } }]);
  return dir;
}

const A = (props: Record<string, unknown> = {}, extra: Record<string, unknown> = {}): Record<string, unknown> =>
  dpiResource('Custom::DpiSubscription', { Key: 'a', Count: 5, Enabled: true, ...props }, extra);
const B = (props: Record<string, unknown> = {}, extra: Record<string, unknown> = {}): Record<string, unknown> =>
  dpiResource('Custom::DpiProductOrderJobs', { Key: 'b', SubscriptionId: { 'Fn::GetAtt': ['A', 'Key'] }, Parent: { Ref: 'A' }, ...props }, extra);

test('create, no-change rerun, in-place update, destroy: events, stringified properties, order, state', async () => {
  const v1 = assembly({ B: B(), A: A() });
  const r1 = await runLocalDeploy(deployOpts(v1));
  expect(r1.success).toBe(true);
  // Dependency order despite template order B, A.
  expect(calls().map(summary)).toEqual(['onEvent:Create:A', 'onEvent:Create:B']);
  const createA = calls()[0].event;
  expect(createA.ResourceProperties).toMatchObject({ Key: 'a', Count: '5', Enabled: 'true' });
  expect(createA.ResponseURL).toBe('local');
  expect(createA.ResourceType).toBe('Custom::DpiSubscription');
  expect(String(createA.StackId)).toMatch(/^arn:aws:cloudformation:us-east-1:123456789012:stack\/Demo\/[0-9a-f-]{36}$/);
  expect(createA.ServiceToken).toBe('arn:aws:lambda:us-east-1:123456789012:function:Demo-ProviderFramework');
  // Every connection URL is rewritten to the emulator; the secret ARN is resolved.
  expect(createA.ResourceProperties.Connection).toMatchObject({
    BaseUrl: emulator.url,
    AuthUrl: emulator.url,
    SubscriptionsUrl: emulator.url,
    RefreshTokenSecretArn: 'arn:aws:secretsmanager:us-east-1:123456789012:secret:dpi/refresh-token',
  });
  expect(calls()[0].account).toBe('123456789012');
  expect(calls()[0].remaining).toBeGreaterThan(590_000);
  const physA = r1.resources.find((r) => r.logicalId === 'A')!.physicalId;
  expect(calls()[1].event.ResourceProperties).toMatchObject({ SubscriptionId: 'a', Parent: physA });
  expect(r1.events.map((e) => `${e.status}:${e.logicalId}`)).toEqual([
    'CREATE_IN_PROGRESS:Demo', 'CREATE_IN_PROGRESS:A', 'CREATE_COMPLETE:A', 'CREATE_IN_PROGRESS:B', 'CREATE_COMPLETE:B', 'CREATE_COMPLETE:Demo',
  ]);
  expect(lines.some((l) => /^Demo \| \d\d:\d\d:\d\d \| CREATE_COMPLETE\s+\| Custom::DpiSubscription\s+\| A$/.test(l))).toBe(true);

  // Second run without changes: no handler call at all.
  resetCalls();
  const r2 = await runLocalDeploy(deployOpts(v1));
  expect(r2.success).toBe(true);
  expect(calls()).toEqual([]);
  expect(r2.events).toEqual([]);

  // In-place update of A only: B's resolved properties are unchanged -> no event for B.
  const v2 = assembly({ B: B(), A: A({ Count: 6 }) });
  const r3 = await runLocalDeploy(deployOpts(v2));
  expect(r3.success).toBe(true);
  expect(calls().map(summary)).toEqual([`onEvent:Update:A:${physA}`]);
  expect(calls()[0].event.OldResourceProperties).toMatchObject({ Count: '5', Connection: { BaseUrl: emulator.url } });
  expect(calls()[0].event.ResourceProperties).toMatchObject({ Count: '6' });

  // Destroy: reverse dependency order, state file removed.
  resetCalls();
  const physB = r3.resources.find((r) => r.logicalId === 'B')!.physicalId;
  const r4 = await runLocalDeploy(deployOpts(v2, { destroy: true }));
  expect(r4.success).toBe(true);
  expect(calls().map(summary)).toEqual([`onEvent:Delete:B:${physB}`, `onEvent:Delete:A:${physA}`]);
  expect(r4.resources).toEqual([]);
  expect(existsSync(join(tmp.dir, 'state', 'local-state.json'))).toBe(false);
});

test('a changed physical ID on Update deletes the old one in the cleanup phase, after every other change', async () => {
  await runLocalDeploy(deployOpts(assembly({ A: A(), B: B() })));
  const before = JSON.parse(readFileSync(join(tmp.dir, 'state', 'local-state.json'), 'utf8'));
  const oldA = before.resources['Demo/A'].physicalId as string;
  const oldB = before.resources['Demo/B'].physicalId as string;
  resetCalls();
  const r = await runLocalDeploy(deployOpts(assembly({ A: A({ Key: 'a2' }), B: B() })));
  expect(r.success).toBe(true);
  const newA = r.resources.find((x) => x.logicalId === 'A')!.physicalId;
  expect(newA).not.toBe(oldA);
  // B references A.Key and Ref A: it is updated with the new values; the old A is deleted last.
  expect(calls().map(summary)).toEqual([`onEvent:Update:A:${oldA}`, `onEvent:Update:B:${oldB}`, `onEvent:Delete:A:${oldA}`]);
  expect(calls()[1].event.ResourceProperties).toMatchObject({ SubscriptionId: 'a2', Parent: newA });
  expect(r.events.map((e) => e.status)).toContain('UPDATE_COMPLETE_CLEANUP_IN_PROGRESS');
});

test('the old physical resource of a replacement is in the saved state before the clean-up (a run killed in between deletes it next time); a rollback takes it back', async () => {
  await runLocalDeploy(deployOpts(assembly({ A: A(), B: B() })));
  const stateFile = join(tmp.dir, 'state', 'local-state.json');
  const oldA = JSON.parse(readFileSync(stateFile, 'utf8')).resources['Demo/A'].physicalId as string;
  let savedOrphans: Array<{ physicalId: string; replaced?: boolean }> | undefined;
  const progress = (l: string): void => {
    lines.push(l);
    if (savedOrphans === undefined && /UPDATE_COMPLETE\s+\| Custom::DpiSubscription\s+\| A\n\s+replaced/.test(l)) {
      savedOrphans = JSON.parse(readFileSync(stateFile, 'utf8')).orphans;
    }
  };
  const r = await runLocalDeploy(deployOpts(assembly({ A: A({ Key: 'a2' }), B: B() }), { progress }));
  expect(r.success).toBe(true);
  expect(savedOrphans).toEqual([expect.objectContaining({ physicalId: oldA, replaced: true })]);
  expect(JSON.parse(readFileSync(stateFile, 'utf8')).orphans).toEqual([]);

  // A replaced, then B fails: the rollback restores the old A, which is no longer waiting for a clean-up.
  const now = JSON.parse(readFileSync(stateFile, 'utf8')).resources['Demo/A'].physicalId as string;
  resetCalls();
  const f = await runLocalDeploy(deployOpts(assembly({ A: A({ Key: 'a3' }), B: B({ FailOn: 'Update' }) })));
  expect(f.success).toBe(false);
  const after = JSON.parse(readFileSync(stateFile, 'utf8'));
  expect(after.resources['Demo/A'].physicalId).toBe(now);
  expect(after.orphans).toEqual([]);
  expect(calls().filter((c) => c.event.RequestType === 'Delete').map((c) => c.event.PhysicalResourceId)).not.toContain(now);
});

test('UpdateReplacePolicy Retain keeps the old physical resource (DELETE_SKIPPED, no Delete call)', async () => {
  await runLocalDeploy(deployOpts(assembly({ A: A({}, { UpdateReplacePolicy: 'Retain' }) })));
  resetCalls();
  const r = await runLocalDeploy(deployOpts(assembly({ A: A({ Key: 'a3' }, { UpdateReplacePolicy: 'Retain' }) })));
  expect(r.success).toBe(true);
  expect(calls().map((c) => c.event.RequestType)).toEqual(['Update']);
  expect(r.events.filter((e) => e.status === 'DELETE_SKIPPED').map((e) => e.logicalId)).toEqual(['A']);
});

test('DeletionPolicy Retain: removal from the app and destroy make no Delete call', async () => {
  await runLocalDeploy(deployOpts(assembly({ A: A(), K: A({ Key: 'k' }, { DeletionPolicy: 'Retain' }) })));
  resetCalls();
  const r = await runLocalDeploy(deployOpts(assembly({ A: A() })));
  expect(r.success).toBe(true);
  expect(calls()).toEqual([]);
  expect(r.events.map((e) => `${e.status}:${e.logicalId}`)).toContain('DELETE_SKIPPED:K');
  expect(r.resources.map((x) => x.logicalId)).toEqual(['A']);

  await runLocalDeploy(deployOpts(assembly({ A: A(), K: A({ Key: 'k' }, { DeletionPolicy: 'Retain' }) })));
  resetCalls();
  const d = await runLocalDeploy(deployOpts('', { destroy: true }));
  expect(d.success).toBe(true);
  expect(calls().map(summary)).toEqual([expect.stringMatching(/^onEvent:Delete:A:/)]);
  expect(d.events.map((e) => `${e.status}:${e.logicalId}`)).toContain('DELETE_SKIPPED:K');
});

test('a resource removed from the app is deleted in the cleanup phase', async () => {
  await runLocalDeploy(deployOpts(assembly({ A: A(), B: B() })));
  resetCalls();
  const r = await runLocalDeploy(deployOpts(assembly({ A: A({ Count: 7 }) })));
  expect(r.success).toBe(true);
  expect(calls().map((c) => `${String(c.event.RequestType)}:${String(c.event.LogicalResourceId)}`)).toEqual(['Update:A', 'Delete:B']);
});

test('a failure on the second resource rolls back the first (existing stack: swapped Update; created: Delete)', async () => {
  await runLocalDeploy(deployOpts(assembly({ A: A(), B: B() })));
  const stateFile = join(tmp.dir, 'state', 'local-state.json');
  const before = JSON.parse(readFileSync(stateFile, 'utf8'));
  resetCalls();
  const r = await runLocalDeploy(deployOpts(assembly({ A: A({ Count: 9 }), B: B({ Fail: 'true' }), C: A({ Key: 'c' }, { DependsOn: ['B'] }) })));
  expect(r.success).toBe(false);
  const seq = calls().map((c) => `${String(c.event.RequestType)}:${String(c.event.LogicalResourceId)}`);
  // A updated, B failed; rollback: B and A get Updates with old/new swapped (reverse order). C never started.
  expect(seq).toEqual(['Update:A', 'Update:B', 'Update:B', 'Update:A']);
  expect(calls()[2].event.ResourceProperties.Fail).toBeUndefined();
  expect(calls()[2].event.OldResourceProperties!.Fail).toBe('true');
  expect(calls()[3].event.ResourceProperties.Count).toBe('5');
  expect(calls()[3].event.OldResourceProperties!.Count).toBe('9');
  expect(r.events.map((e) => e.status)).toEqual(expect.arrayContaining(['UPDATE_FAILED', 'UPDATE_ROLLBACK_IN_PROGRESS', 'UPDATE_ROLLBACK_COMPLETE']));
  const failed = r.events.find((e) => e.status === 'UPDATE_FAILED')!;
  expect(failed.reason).toContain('scripted failure of B');
  // The state is what it was before the run.
  const after = JSON.parse(readFileSync(stateFile, 'utf8'));
  expect(after.resources['Demo/A'].properties).toEqual(before.resources['Demo/A'].properties);
  expect(Object.keys(after.resources).sort()).toEqual(['Demo/A', 'Demo/B']);
});

test('a failed first deployment deletes what it created (ROLLBACK_COMPLETE) and leaves no state', async () => {
  const r = await runLocalDeploy(deployOpts(assembly({ A: A(), B: B({ Fail: 'true' }) })));
  expect(r.success).toBe(false);
  expect(calls().map((c) => `${String(c.event.RequestType)}:${String(c.event.LogicalResourceId)}`)).toEqual(['Create:A', 'Create:B', 'Delete:A']);
  expect(r.events.map((e) => e.status)).toEqual(expect.arrayContaining(['CREATE_FAILED', 'ROLLBACK_IN_PROGRESS', 'ROLLBACK_COMPLETE']));
  expect(r.resources).toEqual([]);
  const state = JSON.parse(readFileSync(join(tmp.dir, 'state', 'local-state.json'), 'utf8'));
  expect(state.stacks).toEqual([]);
});

test('resources of a provider with a waiter are polled with isComplete until complete; Data is merged', async () => {
  const r = await runLocalDeploy(deployOpts(assembly({ H: dpiResource('Custom::DpiHistoryRequest', { Key: 'h', Polls: 2, TimeoutSeconds: 30 }, {}, true) })));
  expect(r.success).toBe(true);
  expect(calls().map((c) => c.fn)).toEqual(['onEvent', 'isComplete', 'isComplete', 'isComplete']);
  expect(calls()[1].event.PhysicalResourceId).toMatch(/^phys-h-/);
  expect(r.resources[0].attributes).toMatchObject({ Status: 'active' });
  const state = JSON.parse(readFileSync(join(tmp.dir, 'state', 'local-state.json'), 'utf8'));
  expect(state.resources['Demo/H'].attributes).toMatchObject({ Done: 'yes', Key: 'h' });
});

test('isComplete that never completes fails the resource when the waiter state machine\'s attempts are spent', async () => {
  const sm = waiterStateMachine({ IntervalSeconds: 30, MaxAttempts: 3, BackoffRate: 1 });
  const r = await runLocalDeploy(deployOpts(assembly({ WaiterStateMachine: sm, H: dpiResource('Custom::DpiHistoryRequest', { Key: 'h', Polls: 100000 }, {}, true) })));
  expect(r.success).toBe(false);
  // The framework's reason; isComplete at once, then after each of the 3 retries.
  expect(r.events.find((e) => e.status === 'CREATE_FAILED')!.reason).toBe('Operation timed out');
  expect(calls().filter((c) => c.fn === 'isComplete' && c.event.RequestType === 'Create')).toHaveLength(4);
  // onEvent made the resource: the rollback deletes it (and waits for the Delete to complete).
  expect(calls().filter((c) => c.event.RequestType === 'Delete').map((c) => c.fn)).toEqual(['onEvent', 'isComplete']);
  expect(r.events.map((e) => e.status)).toContain('ROLLBACK_COMPLETE');
});

test('an isComplete that answers Data before it is complete fails the resource, as the provider framework refuses it', async () => {
  const r = await runLocalDeploy(deployOpts(assembly({ H: dpiResource('Custom::DpiHistoryRequest', { Key: 'h', Polls: 2, DataWhilePending: 'true' }, {}, true) })));
  expect(r.success).toBe(false);
  expect(r.events.find((e) => e.status === 'CREATE_FAILED')!.reason).toBe('"Data" is not allowed if "IsComplete" is "False"');
  expect(calls().filter((c) => c.fn === 'isComplete' && c.event.RequestType === 'Create')).toHaveLength(1);
});

test('the isComplete answer is the framework\'s: nothing fails the resource at once, a physical ID in it is the one CloudFormation gets', async () => {
  const none = await runLocalDeploy(deployOpts(assembly({ H: dpiResource('Custom::DpiHistoryRequest', { Key: 'h', CompleteAnswer: 'null' }, {}, true) })));
  expect(none.events.find((e) => e.status === 'CREATE_FAILED')!.reason).toBe('Cannot read properties of null (reading \'IsComplete\')');
  resetCalls();
  const renamed = await runLocalDeploy(deployOpts(assembly({ H: dpiResource('Custom::DpiHistoryRequest', { Key: 'h2', CompletePhysicalId: 'from-is-complete' }, {}, true) }),
    { stateFile: join(tmp.dir, 'state2', 'local-state.json') }));
  expect(renamed.success).toBe(true);
  expect(renamed.resources[0].physicalId).toBe('from-is-complete');
  // The isComplete event carries what onEvent answered.
  expect(calls().find((c) => c.fn === 'isComplete')!.event.PhysicalResourceId).toMatch(/^phys-h2-/);
});

test('an unknown reference fails before any call, naming the logical ID', async () => {
  const r = await runLocalDeploy(deployOpts(assembly({ A: A(), B: B({ Other: { 'Fn::GetAtt': ['Missing', 'Arn'] } }) })));
  expect(r.success).toBe(false);
  expect(r.error).toMatch(/Demo\/B: Fn::GetAtt Missing\.Arn: no resource or parameter named 'Missing'/);
  expect(calls()).toEqual([]);
});

test('each invocation gets its function\'s timeout from the template (Lambda\'s 3 s when it sets none); invocationBudgetMs overrides it', async () => {
  const remainingOf = async (resources: Record<string, unknown>, extra: Partial<LocalDeployOptions> = {}): Promise<number[]> => {
    resetCalls();
    const r = await runLocalDeploy(deployOpts(assembly(resources), { ...extra, stateFile: join(tmp.dir, `s-${Math.random()}`, 'state.json') }));
    expect(r.success).toBe(true);
    return calls().map((c) => c.remaining!);
  };
  const fn = (timeout?: number): Record<string, unknown> => ({ Type: 'AWS::Lambda::Function', Properties: { Handler: 'index.onEvent', ...(timeout ? { Timeout: timeout } : {}) } });
  const [two] = await remainingOf({ ProviderOnEvent: fn(120), A: A() });
  expect(two).toBeLessThanOrEqual(120_000);
  expect(two).toBeGreaterThan(100_000);
  const [three] = await remainingOf({ ProviderOnEvent: fn(), A: A() });
  expect(three).toBeLessThanOrEqual(3_000);
  // The waiter's isComplete function has its own (600 s here); the onEvent function's is 120 s.
  const waited = await remainingOf({ ProviderOnEvent: fn(120), A: dpiResource('Custom::DpiSubscription', { Key: 'a', Polls: 1 }, {}, true) });
  expect(waited.length).toBe(3);
  expect(waited[0]).toBeLessThanOrEqual(120_000);
  expect(Math.min(...waited.slice(1))).toBeGreaterThan(590_000);
  const [given] = await remainingOf({ ProviderOnEvent: fn(120), A: A() }, { invocationBudgetMs: 50_000 });
  expect(given).toBeLessThanOrEqual(50_000);
});

test('the handler runs as Lambda runs it: concurrent invocations in containers of their own, a timeout stops the code; shared is the kinder control', async () => {
  const fn = { Type: 'AWS::Lambda::Function', Properties: { Handler: 'index.onEvent', Timeout: 1 } };
  // Cold containers: the warm ones of the earlier tests (the same handler and function) would remember their calls.
  stopWarmContainers();
  const resources = { ProviderOnEvent: fn, A1: A({ Key: 'a1', SleepMs: 300 }), A2: A({ Key: 'a2', SleepMs: 300 }), A3: A({ Key: 'a3', SleepMs: 300 }) };
  const isolated = await runLocalDeploy(deployOpts(assembly(resources), { concurrency: 3 }));
  expect(isolated.success).toBe(true);
  const created = calls().filter((c) => c.fn === 'onEvent');
  expect(new Set(created.map((c) => c.threadId)).size).toBe(3);
  expect(created.map((c) => c.threadId)).not.toContain(0);
  // Module state is the container's: no container saw another's calls.
  expect(created.map((c) => c.seen)).toEqual([0, 0, 0]);

  // A Create that outlives its function's timeout (1 s) fails, and stops: it never wakes to answer.
  const slow = (containers: 'isolated' | 'shared'): Promise<unknown> => {
    resetCalls();
    return runLocalDeploy(deployOpts(assembly({ ProviderOnEvent: fn, S: A({ Key: 's', SleepMs: 1_500 }) }), {
      containers, stateFile: join(tmp.dir, containers, 'state.json'),
    }));
  };
  const stopped = await slow('isolated') as { success: boolean; events: Array<{ status: string; reason?: string }> };
  expect(stopped.success).toBe(false);
  expect(stopped.events.find((e) => e.status === 'CREATE_FAILED')?.reason).toBe('Task timed out after 1.00 seconds');
  await new Promise((res) => setTimeout(res, 1_000));
  expect(calls().filter((c) => c.fn === 'awake')).toEqual([]);
  // Control: in one shared module the timed-out code runs on (the check above can fail).
  expect((await slow('shared') as { success: boolean }).success).toBe(false);
  await new Promise((res) => setTimeout(res, 1_000));
  expect(calls().filter((c) => c.fn === 'awake').map((c) => c.threadId)).toEqual([0]);
});

test('a reference to a resource kind the runner does not deploy resolves to a stand-in', async () => {
  const r = await runLocalDeploy(deployOpts(assembly({ Q: { Type: 'AWS::SQS::Queue' }, A: A({ QueueArn: { 'Fn::GetAtt': ['Q', 'Arn'] } }) })));
  expect(r.success).toBe(true);
  expect(calls().find((c) => c.fn === 'onEvent')!.event.ResourceProperties.QueueArn).toBe('arn:aws:sqs:us-east-1:123456789012:Demo-Q');
});

test('the refresh token never reaches the state file or the output; a handler that logs it fails the run, its log kept as written', async () => {
  const clean = await runLocalDeploy(deployOpts(assembly({ A: A() })));
  expect(clean.success).toBe(true);
  expect(clean.secretLeaks).toBeUndefined();
  const r = await runLocalDeploy(deployOpts(assembly({ A: A({ Fail: 'true', LeakToken: 'true' }) })));
  expect(r.success).toBe(false);
  expect(calls().some((c) => (c as unknown as { secretSeen: boolean }).secretSeen)).toBe(true);
  const stateText = readFileSync(join(tmp.dir, 'state', 'local-state.json'), 'utf8');
  const log = readFileSync(join(tmp.dir, 'state', 'handler.log'), 'utf8');
  expect(log).toContain('"msg":"event"');
  // handler.log stands in for CloudWatch Logs: the leak is there to be seen, and the run names it.
  expect(log).toContain(TOKEN);
  expect(r.secretLeaks).toEqual(['the handler log (handler.log)', 'the reason of Demo/A UPDATE_FAILED']);
  for (const text of [stateText, lines.join('\n'), JSON.stringify(r)]) expect(text).not.toContain(TOKEN);
  expect(r.events.find((e) => e.status === 'UPDATE_FAILED')!.reason).toContain('token=***');
});

test('IAM roles of the template are registered in the emulated customer account', async () => {
  const trust = (principal: Record<string, unknown>, condition?: Record<string, unknown>): Record<string, unknown> => ({
    Version: '2012-10-17',
    Statement: [{ Effect: 'Allow', Action: 'sts:AssumeRole', Principal: principal, ...(condition ? { Condition: condition } : {}) }],
  });
  const r = await runLocalDeploy(deployOpts(assembly({
    Mgmt: { Type: 'AWS::IAM::Role', Properties: { AssumeRolePolicyDocument: trust({ AWS: 'arn:aws:iam::111122223333:root' }, { StringEquals: { 'sts:ExternalId': 'x' } }) } },
    Delivery: { Type: 'AWS::IAM::Role', Properties: { RoleName: 'service-spapi-firehose-role', AssumeRolePolicyDocument: trust({ Service: 'firehose.amazonaws.com' }) } },
    A: A({ RoleArn: { 'Fn::GetAtt': ['Mgmt', 'Arn'] } }),
  })));
  expect(r.success).toBe(true);
  const roles = emulator.state().cloudRoles;
  expect(roles).toEqual(expect.arrayContaining([
    { accountId: '123456789012', roleArn: 'arn:aws:iam::123456789012:role/Demo-Mgmt', trustsService: true },
    { accountId: '123456789012', roleArn: 'arn:aws:iam::123456789012:role/service-spapi-firehose-role', trustsService: false },
  ]));
  expect(calls()[0].event.ResourceProperties.RoleArn).toBe('arn:aws:iam::123456789012:role/Demo-Mgmt');
});

test('with --emulator and no refresh token the run stops before any change, naming the variable', async () => {
  const saved = process.env.DPI_REFRESH_TOKEN;
  delete process.env.DPI_REFRESH_TOKEN;
  try {
    const r = await runLocalDeploy(deployOpts(assembly({ A: A() }), { refreshToken: undefined, refreshTokenEnv: 'MY_DPI_TOKEN' }));
    expect(r.success).toBe(false);
    expect(r.error).toMatch(/set the environment variable MY_DPI_TOKEN/);
    expect(calls()).toEqual([]);
  } finally {
    if (saved !== undefined) process.env.DPI_REFRESH_TOKEN = saved;
  }
});

test('a failed delete on destroy is reported, keeps the resource (and what it depends on) in the state and exits non-zero', async () => {
  await runLocalDeploy(deployOpts(assembly({ A: A(), B: B({ FailOn: 'Delete' }) })));
  resetCalls();
  const d = await runLocalDeploy(deployOpts('', { destroy: true }));
  expect(d.success).toBe(false);
  expect(calls().map((c) => `${String(c.event.RequestType)}:${String(c.event.LogicalResourceId)}`)).toEqual(['Delete:B']);
  expect(d.events.map((e) => `${e.status}:${e.logicalId}`)).toEqual([
    'DELETE_IN_PROGRESS:Demo', 'DELETE_IN_PROGRESS:B', 'DELETE_FAILED:B', 'DELETE_SKIPPED:A', 'DELETE_FAILED:Demo',
  ]);
  expect(d.resources.map((r) => r.logicalId).sort()).toEqual(['A', 'B']);
  expect(existsSync(join(tmp.dir, 'state', 'local-state.json'))).toBe(true);
});

test('a failed clean-up delete is abandoned as CloudFormation abandons it: reported, out of the state, never retried', async () => {
  await runLocalDeploy(deployOpts(assembly({ A: A({ FailOn: 'Delete' }), R: A({ Key: 'r', FailOn: 'Delete' }) })));
  lines.length = 0;
  // A replaced (Key a -> a9) and R removed from the app: both clean-up Deletes fail.
  const r = await runLocalDeploy(deployOpts(assembly({ A: A({ Key: 'a9' }) })));
  expect(r.success).toBe(false);
  expect(r.events.map((e) => e.status)).toEqual(expect.arrayContaining(['UPDATE_COMPLETE_CLEANUP_IN_PROGRESS', 'DELETE_FAILED', 'UPDATE_COMPLETE']));
  expect(r.abandoned?.map((a) => [a.logicalId, a.physicalId.replace(/-[0-9a-f]{8}$/, '')])).toEqual([['A', 'phys-a'], ['R', 'phys-r']]);
  expect(lines.filter((l) => l.includes('abandoned.'))).toHaveLength(2);
  expect(lines.join('\n')).toContain('dpi orphans --local');
  const state = JSON.parse(readFileSync(join(tmp.dir, 'state', 'local-state.json'), 'utf8'));
  expect(state.orphans).toEqual([]);
  expect(Object.keys(state.resources)).toEqual(['Demo/A']);
  // The next run and the destroy never send them a Delete again.
  resetCalls();
  expect((await runLocalDeploy(deployOpts(assembly({ A: A({ Key: 'a9' }) })))).success).toBe(true);
  const d = await runLocalDeploy(deployOpts('', { destroy: true }));
  expect(d.success).toBe(true);
  expect(calls().filter((c) => c.event.RequestType === 'Delete').map((c) => String(c.event.ResourceProperties.Key))).toEqual(['a9']);
});

test('stacks deploy in dependency order (nested assemblies included) and Fn::ImportValue reads exports of earlier stacks', async () => {
  const dir = join(tmp.dir, 'multi');
  writeAssembly(join(dir, 'assembly-Stage'), [{
    name: 'Consumer',
    stackName: 'Stage-Consumer',
    dependencies: ['Producer'],
    template: { Resources: { ...providerResources(), C: A({ Key: 'c', Imported: { 'Fn::ImportValue': 'producer-key' } }) } },
  }, {
    name: 'Producer',
    stackName: 'Stage-Producer',
    template: {
      Resources: { ...providerResources(), P: A({ Key: 'p' }) },
      Outputs: { Out: { Value: { 'Fn::GetAtt': ['P', 'Key'] }, Export: { Name: 'producer-key' } } },
    },
  }]);
  writeAssembly(dir, []);
  // Point the top-level manifest at the nested one, as CDK stages do.
  const manifest = { version: '53.0.0', artifacts: { Stage: { type: 'cdk:cloud-assembly', properties: { directoryName: 'assembly-Stage' } } } };
  writeFileSync(join(dir, 'manifest.json'), JSON.stringify(manifest));
  const r = await runLocalDeploy(deployOpts(dir));
  expect(r.success).toBe(true);
  expect(calls().map((c) => String(c.event.LogicalResourceId))).toEqual(['P', 'C']);
  expect(calls()[1].event.ResourceProperties.Imported).toBe('p');
  const state = JSON.parse(readFileSync(join(tmp.dir, 'state', 'local-state.json'), 'utf8'));
  expect(state.stacks.map((x: { stackName: string; dependencies: string[] }) => [x.stackName, x.dependencies])).toEqual([['Stage-Producer', []], ['Stage-Consumer', ['Stage-Producer']]]);
  resetCalls();
  const d = await runLocalDeploy(deployOpts('', { destroy: true }));
  expect(d.success).toBe(true);
  expect(calls().map((c) => String(c.event.LogicalResourceId))).toEqual(['C', 'P']);
});

test('a change of resource type is refused before anything changes', async () => {
  await runLocalDeploy(deployOpts(assembly({ A: A() })));
  resetCalls();
  const r = await runLocalDeploy(deployOpts(assembly({ A: dpiResource('Custom::DpiProductOrderJobs', { Key: 'a' }) })));
  expect(r.success).toBe(false);
  expect(r.error).toMatch(/Demo\/A: Update of resource type is not permitted/);
  expect(calls()).toEqual([]);
});

test('two runs cannot use the same state at once', async () => {
  const first = runLocalDeploy(deployOpts(assembly({ H: dpiResource('Custom::DpiHistoryRequest', { Key: 'h', Polls: 3, TimeoutSeconds: 30 }, {}, true) }), { pollIntervalMs: 50 }));
  await new Promise((r) => setTimeout(r, 20));
  const second = await runLocalDeploy(deployOpts(assembly({ A: A() })));
  expect(second.success).toBe(false);
  expect(second.error).toMatch(/already in use by a local-deploy run of this process/);
  expect((await first).success).toBe(true);
  expect(existsSync(join(tmp.dir, 'state', 'local-state.json.lock'))).toBe(false);
  // A lock left by a process that is gone is taken over.
  writeFileSync(join(tmp.dir, 'state', 'local-state.json.lock'), '999999999');
  expect((await runLocalDeploy(deployOpts('', { destroy: true }))).success).toBe(true);
});

describe('bad input is named', () => {
  test('a corrupt manifest, template or state file: the error names the file', async () => {
    const app = assembly({ A: A() });
    writeFileSync(join(app, 'manifest.json'), '{"artifacts":');
    let r = await runLocalDeploy(deployOpts(app));
    expect(r.success).toBe(false);
    expect(lines.join('\n')).toContain(`the cloud assembly manifest ${join(app, 'manifest.json')} is not valid JSON`);

    lines = [];
    const app2 = assembly({ A: A() });
    writeFileSync(join(app2, 'Demo.template.json'), '{"Resources": ');
    r = await runLocalDeploy(deployOpts(app2));
    expect(r.success).toBe(false);
    expect(lines.join('\n')).toContain(`the template ${join(app2, 'Demo.template.json')} is not valid JSON`);

    lines = [];
    const state = join(tmp.dir, 'state', 'local-state.json');
    const ok = assembly({ A: A() });
    expect((await runLocalDeploy(deployOpts(ok))).success).toBe(true);
    writeFileSync(state, '{"version": 1, "stacks": [');
    r = await runLocalDeploy(deployOpts(ok));
    expect(r.success).toBe(false);
    expect(lines.join('\n')).toContain(`the local-deploy state file ${state} is not valid JSON`);
  });

  test('an unreachable --emulator is named with the way out', async () => {
    // A port nobody listens on (taken, then released).
    const server = createServer();
    await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
    const port = (server.address() as AddressInfo).port;
    await new Promise<void>((resolve) => server.close(() => resolve()));
    const r = await runLocalDeploy(deployOpts(assembly({ A: A() }), { emulatorUrl: `http://127.0.0.1:${port}` }));
    expect(r.success).toBe(false);
    expect(lines.join('\n')).toContain(`cannot reach the emulator at http://127.0.0.1:${port} (ECONNREFUSED); start it with 'dpi emulator'`);
  });
});
