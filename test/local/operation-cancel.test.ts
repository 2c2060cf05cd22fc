/**
 * How the runner ends a failed operation, as CloudFormation ends it, with the scripted handler
 * (test/local/fixtures/fake-handler.js): a failure cancels every in-flight Create and Update of the stack and its
 * nested stacks; a cancelled Create gets a Delete with an invented physical ID while its invocation runs on; the whole
 * nested-stack tree rolls back (the nested stacks that succeeded too), and clean-ups wait for the whole tree.
 */
import { existsSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { dpiResource, FakeCall, fakeCalls, providerResources, resetFakeCalls, tempDir, writeAssembly } from './helpers';
import { startEmulator, RunningEmulator } from '../../src/emulator';
import { LocalDeployOptions, LocalDeployResult, runLocalDeploy } from '../../src/local';
import { stopWarmContainers } from '../../src/local/containers';

const FAKE = join(__dirname, 'fixtures', 'fake-handler.js');

type Call = FakeCall;
const calls = fakeCalls;
const deletes = (): Call[] => calls().filter((c) => c.fn === 'onEvent' && c.event.RequestType === 'Delete');

let emulator: RunningEmulator;
let tmp: { dir: string; cleanup: () => void };
let out = 0;

beforeAll(async () => {
  emulator = await startEmulator({ port: 0 });
});
afterAll(async () => {
  stopWarmContainers();
  await emulator.stop();
  resetFakeCalls();
});
beforeEach(() => {
  resetFakeCalls();
  tmp = tempDir();
});
afterEach(() => tmp.cleanup());

function run(appDir: string | undefined, extra: Partial<LocalDeployOptions> = {}): Promise<LocalDeployResult> {
  return runLocalDeploy({
    app: appDir,
    emulatorUrl: emulator.url,
    stateFile: join(tmp.dir, 'state', 'local-state.json'),
    refreshToken: 'rt-cancel-test',
    handlerPath: FAKE,
    pollIntervalMs: 5,
    progress: () => undefined,
    output: () => undefined,
    ...extra,
  });
}

const res = (key: string, props: Record<string, unknown> = {}): Record<string, unknown> =>
  dpiResource('Custom::DpiSubscription', { Key: key, ...props });

/**
 * A stack `S` with the given resources and nested stacks (each a template of resources, in the parent as `<name>`);
 * `inOrder`: each nested stack depends on the one before it (`DependsOn` in the parent).
 */
function app(resources: Record<string, unknown>, nested: Record<string, Record<string, unknown>> = {}, inOrder = false,
  dependsOn: Record<string, string[]> = {}): string {
  const dir = join(tmp.dir, `out-${++out}`);
  const parent: Record<string, unknown> = { ...providerResources(), ...resources };
  const ids = Object.keys(nested);
  ids.forEach((id, i) => {
    parent[id] = {
      Type: 'AWS::CloudFormation::Stack',
      Properties: { TemplateURL: `https://example.com/${id}.json` },
      Metadata: { 'aws:asset:path': `${id}.nested.template.json` },
      ...(inOrder && i > 0 ? { DependsOn: [ids[i - 1]] } : dependsOn[id] ? { DependsOn: dependsOn[id] } : {}),
    };
  });
  writeAssembly(dir, [{ name: 'S', template: { Resources: parent } }]);
  for (const [id, r] of Object.entries(nested)) {
    writeFileSync(join(dir, `${id}.nested.template.json`), JSON.stringify({ Resources: { ...providerResources(), ...r } }));
  }
  return dir;
}

/** The state's resources by logical ID (properties included). */
interface Saved { logicalId: string; physicalId: string; properties: Record<string, unknown> }
const saved = (): Record<string, Saved> => {
  const state = JSON.parse(readFileSync(join(tmp.dir, 'state', 'local-state.json'), 'utf8')) as { resources: Record<string, Saved> };
  return Object.fromEntries(Object.values(state.resources).map((x) => [x.logicalId, x]));
};
const stackEvents = (r: LocalDeployResult): string[] => r.events.filter((e) => e.type === 'AWS::CloudFormation::Stack').map((e) => `${e.logicalId} ${e.status}`);
const reasonOf = (r: LocalDeployResult, logicalId: string, status: string): string | undefined =>
  r.events.find((e) => e.logicalId === logicalId && e.status === status)?.reason;

test('a failure cancels an in-flight Create: CREATE_FAILED "cancelled", a Delete with an invented physical ID; the run waits for the invocation', async () => {
  const r = await run(app({ Slow: res('slow', { SleepMs: 1500 }), Broken: res('broken', { FailOn: 'Create' }) }));
  expect(r.success).toBe(false);
  expect(reasonOf(r, 'Slow', 'CREATE_FAILED')).toBe('Resource creation cancelled');
  expect(reasonOf(r, 'Broken', 'CREATE_FAILED')).toMatch(/scripted failure of Broken/);
  // The rollback's Delete names a physical ID CloudFormation made up: `<stack>-<logicalId>-<12 characters>`.
  const d = deletes().filter((c) => c.event.LogicalResourceId === 'Slow');
  expect(d).toHaveLength(1);
  expect(d[0].event.PhysicalResourceId).toMatch(/^S-Slow-[A-Z0-9]{12}$/);
  // It was sent while the Create was still running: the Create woke after it, and before the run returned.
  const order = calls().map((c) => `${c.fn}:${c.event.RequestType}:${c.event.LogicalResourceId}`);
  expect(order.indexOf('onEvent:Delete:Slow')).toBeLessThan(order.indexOf('awake:Create:Slow'));
  expect(order).toContain('awake:Create:Slow');
  expect(stackEvents(r)).toEqual(['S CREATE_IN_PROGRESS', 'S ROLLBACK_IN_PROGRESS', 'S ROLLBACK_COMPLETE']);
  expect(reasonOf(r, 'S', 'ROLLBACK_IN_PROGRESS')).toBe('The following resource(s) failed: [Broken]');
  expect(r.resources).toEqual([]);
});

test('cancelWhen cancels the operation in progress as a failure would (the fault matrix\'s cancel fault)', async () => {
  const r = await run(app({ Slow: res('slow', { SleepMs: 1000 }) }), { cancelWhen: new Promise((resolve) => setTimeout(resolve, 200)) });
  expect(r.success).toBe(false);
  expect(reasonOf(r, 'Slow', 'CREATE_FAILED')).toBe('Resource creation cancelled');
  expect(reasonOf(r, 'S', 'ROLLBACK_IN_PROGRESS')).toBe('the operation was cancelled');
  expect(deletes().map((c) => c.event.PhysicalResourceId)).toEqual([expect.stringMatching(/^S-Slow-[A-Z0-9]{12}$/)]);
  // A run that ends before the promise resolves is not touched by it.
  const later = new Promise((resolve) => setTimeout(resolve, 60_000).unref());
  expect((await run(app({ Fast: res('fast') }), { cancelWhen: later })).success).toBe(true);
});

test('a failure cancels an in-flight Update: the rollback sends it back with the properties swapped', async () => {
  expect((await run(app({ Slow: res('slow', { Value: 'v1' }), Other: res('other') }))).success).toBe(true);
  const r = await run(app({ Slow: res('slow', { Value: 'v2', SleepMs: 1000 }), Other: res('other', { FailOn: 'Update', Value: 'x' }) }));
  expect(r.success).toBe(false);
  expect(reasonOf(r, 'Slow', 'UPDATE_FAILED')).toBe('Resource update cancelled');
  const slow = calls().filter((c) => c.fn === 'onEvent' && c.event.LogicalResourceId === 'Slow' && c.event.RequestType === 'Update');
  expect(slow.map((c) => c.event.ResourceProperties.Value)).toEqual(['v2', 'v1']);
  expect(saved().Slow.properties).toMatchObject({ Value: 'v1' });
  expect(stackEvents(r).slice(-2)).toEqual(['S UPDATE_ROLLBACK_COMPLETE_CLEANUP_IN_PROGRESS', 'S UPDATE_ROLLBACK_COMPLETE']);
});

test('a failing nested stack rolls back the whole tree: its sibling\'s Create is deleted, the parent names the nested stack', async () => {
  const r = await run(app({ Top: res('top') }, { Good: { X: res('x') }, Bad: { Y: res('y', { FailOn: 'Create' }) } }));
  expect(r.success).toBe(false);
  // The failure of Bad's Y fails Bad in the parent.
  expect(reasonOf(r, 'Bad', 'CREATE_FAILED')).toMatch(/^Embedded stack .*S-Bad.* was not successfully created: The following resource\(s\) failed: \[Y\]$/);
  expect(reasonOf(r, 'S', 'ROLLBACK_IN_PROGRESS')).toBe('The following resource(s) failed: [Bad]');
  // X (in Good, which completed or was cancelled) and Top are deleted: nothing of the operation is left.
  const deleted = deletes().map((c) => c.event.LogicalResourceId).sort();
  expect(deleted).toEqual(expect.arrayContaining(['Top', 'X']));
  expect(r.resources).toEqual([]);
  expect(JSON.parse(readFileSync(join(tmp.dir, 'state', 'local-state.json'), 'utf8')).stacks).toEqual([]);
  expect(stackEvents(r).filter((e) => /^S /.test(e))).toEqual(['S CREATE_IN_PROGRESS', 'S ROLLBACK_IN_PROGRESS', 'S ROLLBACK_COMPLETE']);
});

test('an update that fails in one nested stack rolls back the others, and no clean-up Delete runs before the tree succeeds', async () => {
  const v1 = await run(app({}, { Good: { X: res('x1'), Z: res('z', { Value: '1' }) }, Bad: { Y: res('y') } }, true));
  expect(v1.success).toBe(true);
  const oldX = v1.resources.find((x) => x.logicalId === 'X')!.physicalId;
  resetFakeCalls();
  // X is replaced (a new Key: a new physical ID), Z is updated in place, Y fails its Update.
  // Bad waits for Good (DependsOn): Good's changes are complete when Y fails.
  const r = await run(app({}, { Good: { X: res('x2'), Z: res('z', { Value: '2' }) }, Bad: { Y: res('y', { FailOn: 'Update', Value: 'n' }) } }, true));
  expect(r.success).toBe(false);
  const after = saved();
  // The old X was never deleted (its clean-up waits for the tree); the new one is; Z is back to Value 1.
  expect(deletes().map((c) => c.event.PhysicalResourceId)).not.toContain(oldX);
  expect(deletes().map((c) => c.event.LogicalResourceId)).toContain('X');
  expect(after.X.physicalId).toBe(oldX);
  expect(after.Z.properties).toMatchObject({ Value: '1' });
  const zUpdates = calls().filter((c) => c.fn === 'onEvent' && c.event.LogicalResourceId === 'Z').map((c) => c.event.ResourceProperties.Value);
  expect(zUpdates).toEqual(['2', '1']);
  expect(reasonOf(r, 'S', 'UPDATE_ROLLBACK_IN_PROGRESS')).toBe('The following resource(s) failed: [Bad]');
  expect(stackEvents(r).filter((e) => /^S-Good/.test(e)).pop()).toMatch(/UPDATE_ROLLBACK_COMPLETE$/);
  // A run after the fix deploys v2 and only then deletes the old X.
  const fixed = await run(app({}, { Good: { X: res('x2'), Z: res('z', { Value: '2' }) }, Bad: { Y: res('y', { Value: 'n' }) } }, true));
  expect(fixed.success).toBe(true);
  expect(deletes().map((c) => c.event.PhysicalResourceId)).toContain(oldX);
});

test('a nested stack that fails to delete keeps its parent: DELETE_FAILED, in the state, and the next destroy finishes', async () => {
  const v1 = app({ Top: res('top') }, { Keep: { Y: res('y', { FailOn: 'Delete' }) } });
  expect((await run(v1)).success).toBe(true);
  const r = await run(v1, { destroy: true });
  expect(r.success).toBe(false);
  expect(reasonOf(r, 'S', 'DELETE_FAILED')).toMatch(/^Embedded stack\(s\) not deleted: \[S-Keep/);
  const stacks = (JSON.parse(readFileSync(join(tmp.dir, 'state', 'local-state.json'), 'utf8')) as { stacks: Array<{ stackName: string }> }).stacks;
  expect(stacks.map((s) => s.stackName.replace(/-Keep.*/, '-Keep'))).toEqual(['S', 'S-Keep']);
  // The Delete succeeds once the handler no longer fails it: the state is then empty.
  const v2 = app({ Top: res('top') }, { Keep: { Y: res('y') } });
  expect((await run(v2)).success).toBe(true);
  expect((await run(v2, { destroy: true })).success).toBe(true);
  expect(existsSync(join(tmp.dir, 'state', 'local-state.json'))).toBe(false);
});

test('a cancelled Create whose rollback Delete failed gets that Delete again before the stack changes anything else', async () => {
  const cause = join(tmp.dir, 'delete-fails');
  writeFileSync(cause, '');
  const v1 = await run(app({ Slow: res('slow', { SleepMs: 1500, DeleteFailsWhile: cause }), Broken: res('broken', { FailOn: 'Create' }) }));
  expect(v1.success).toBe(false);
  const invented = deletes().find((c) => c.event.LogicalResourceId === 'Slow')!.event.PhysicalResourceId;
  expect(stackEvents(v1).pop()).toBe('S ROLLBACK_FAILED');
  // While the cause lasts, the stack cannot be updated (nothing else is sent); once it is fixed, the Delete goes first.
  resetFakeCalls();
  const blocked = await run(app({ Slow: res('slow'), Broken: res('broken') }));
  expect(blocked.error).toMatch(/^S: a Delete of an earlier run's rollback failed again/);
  expect(calls().filter((c) => c.fn === 'onEvent').map((c) => c.event.RequestType)).toEqual(['Delete']);
  rmSync(cause);
  resetFakeCalls();
  const v2 = await run(app({ Slow: res('slow'), Broken: res('broken') }));
  expect(v2.success).toBe(true);
  const order = calls().filter((c) => c.fn === 'onEvent').map((c) => `${c.event.RequestType}:${c.event.LogicalResourceId}:${c.event.PhysicalResourceId ?? ''}`);
  // The same invented physical ID first (CloudFormation's continue-rollback), then the new Creates; nothing after them.
  expect(order[0]).toBe(`Delete:Slow:${invented}`);
  expect(order.slice(1).sort()).toEqual(['Create:Broken:', 'Create:Slow:']);
});

test('a nested stack whose rollback fails keeps its parent ROLLBACK_FAILED; a destroy then deletes nothing the nested stack may use', async () => {
  // Y fails only after X was made (else, on a loaded machine, the cancellation could come before X's Create).
  const r = await run(app({ Top: res('top') }, { Keep: { X: res('x', { FailOn: 'Delete' }) }, Bad: { Y: res('y', { FailOn: 'Create', FailAfterMs: 1500 }) } }, true));
  expect(r.success).toBe(false);
  expect(stackEvents(r).filter((e) => /^S /.test(e)).pop()).toBe('S ROLLBACK_FAILED');
  // Top is deleted by the rollback only if its child's rollback finished: it did not, so Top stays.
  expect(deletes().map((c) => c.event.LogicalResourceId)).not.toContain('Top');
  const d = await run(undefined, { destroy: true });
  expect(d.success).toBe(false);
  expect(reasonOf(d, 'S', 'DELETE_FAILED')).toMatch(/Embedded stack\(s\) not deleted/);
  expect(deletes().map((c) => c.event.LogicalResourceId)).not.toContain('Top');
});

test('CloudFormation stops waiting for a custom resource at its ServiceTimeout: the Create fails, its Delete has an invented ID', async () => {
  const r = await run(app({ Slow: res('slow', { SleepMs: 2500, ServiceTimeout: '1' }), Other: res('other', { SleepMs: 2000 }) }));
  expect(r.success).toBe(false);
  expect(reasonOf(r, 'Slow', 'CREATE_FAILED')).toBe('CloudFormation did not receive a response from your Custom Resource within its ServiceTimeout (1 seconds)');
  // The other Create in flight is cancelled with it; both get a Delete with an invented physical ID.
  expect(reasonOf(r, 'Other', 'CREATE_FAILED')).toBe('Resource creation cancelled');
  expect(deletes().map((c) => c.event.PhysicalResourceId).sort()).toEqual([expect.stringMatching(/^S-Other-/), expect.stringMatching(/^S-Slow-/)]);
  expect(stackEvents(r).pop()).toBe('S ROLLBACK_COMPLETE');
});

test('a nested stack starts beside the parent\'s resources it does not depend on, and after those it does', async () => {
  const r = await run(app({ P: res('p', { SleepMs: 1500 }) }, { Free: { X: res('x') }, Bound: { Y: res('y') } }, false, { Bound: ['P'] }));
  expect(r.success).toBe(true);
  const order = fakeCalls().map((c) => `${c.fn}:${c.event.LogicalResourceId}`);
  // Free's resource is created while P's Create still sleeps; Bound's only after P completed.
  expect(order.indexOf('onEvent:X')).toBeLessThan(order.indexOf('awake:P'));
  expect(order.indexOf('onEvent:Y')).toBeGreaterThan(order.indexOf('awake:P'));
  // The parent completes after its nested stacks.
  const ofStacks = stackEvents(r);
  expect(ofStacks.indexOf('S CREATE_COMPLETE')).toBeGreaterThan(ofStacks.findIndex((e) => /^S-?Free\S* CREATE_COMPLETE$/.test(e)));
  expect(ofStacks.findIndex((e) => /^S-?Free\S* CREATE_COMPLETE$/.test(e))).toBeGreaterThanOrEqual(0);
});

/** A parent resource whose Value is nested stack A's output O. */
const readsO = (): Record<string, unknown> => res('p', { Value: { 'Fn::GetAtt': ['A', 'Outputs.O'] } });

/** Gives nested stack A of the app in `dir` an output O: the Value of its resource X. */
function withOutputO(dir: string): string {
  const file = join(dir, 'A.nested.template.json');
  const nested = JSON.parse(readFileSync(file, 'utf8')) as Record<string, unknown>;
  writeFileSync(file, JSON.stringify({ ...nested, Outputs: { O: { Value: { 'Fn::GetAtt': ['X', 'Value'] } } } }));
  return dir;
}

test('a parent resource that reads a nested stack\'s output waits for that nested stack\'s tree, on create and on update', async () => {
  const build = (value: string): string => withOutputO(app({ P: readsO() }, { A: { X: res('x', { Value: value, SleepMs: 300 }) } }));
  const created = await run(build('v1'));
  expect(created.success).toBe(true);
  expect(saved().P.properties.Value).toBe('v1');
  const updated = await run(build('v2'));
  expect(updated.success).toBe(true);
  // P was updated after X: it has the new value, not the old one.
  expect(saved().P.properties.Value).toBe('v2');
  const order = fakeCalls().filter((c) => c.fn !== 'isComplete').map((c) => `${c.fn}:${String(c.event.RequestType)}:${c.event.LogicalResourceId}`);
  expect(order.indexOf('onEvent:Update:P')).toBeGreaterThan(order.lastIndexOf('awake:Update:X'));
});

test('resources and nested stacks of a parent that depend on each other in a circle are refused before anything changes', async () => {
  const dir = withOutputO(app({ P: readsO() }, { A: { X: res('x') } }, false, { A: ['P'] }));
  const r = await run(dir);
  expect(r.success).toBe(false);
  expect(r.error).toMatch(/^S: circular dependency between P, A/);
  expect(fakeCalls()).toEqual([]);
});
