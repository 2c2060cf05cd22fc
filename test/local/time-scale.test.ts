/**
 * One time scale for every clock of a run (`timeScale`): the waiter's polling as the template's state machine says,
 * Lambda's timeout, the handler's own clock and waits in its container, CloudFormation's service timeout and the
 * embedded emulator's clock all pass N times as fast, together. Each test measures cloud time (the handler's `Date`)
 * against the wall clock in the same run.
 */
import { join } from 'node:path';
import { dpiResource, fakeCalls as calls, providerResources, resetFakeCalls as resetCalls, tempDir, waiterStateMachine, writeAssembly } from './helpers';
import { stopWarmContainers } from '../../src/local/containers';
import { LocalDeployOptions, runLocalDeploy } from '../../src/local/runner';

const FAKE = join(__dirname, 'fixtures', 'fake-handler.js');
let tmp: { dir: string; cleanup: () => void };
let lines: string[];

beforeEach(() => {
  resetCalls();
  tmp = tempDir();
  lines = [];
});
afterEach(() => tmp.cleanup());
afterAll(() => stopWarmContainers());

function opts(resources: Record<string, unknown>, extra: Partial<LocalDeployOptions> = {}): LocalDeployOptions {
  const app = join(tmp.dir, `out-${Math.random().toString(36).slice(2)}`);
  writeAssembly(app, [{ name: 'Demo', template: { Resources: { ...providerResources(), ...resources } } }]);
  return {
    app,
    stateFile: join(tmp.dir, 'state', 'local-state.json'),
    handlerPath: FAKE,
    rateLimit: 'off',
    progress: (l) => lines.push(l),
    output: (l) => lines.push(l),
    ...extra,
  };
}

test('the waiter polls at its state machine\'s interval in cloud time: two minutes of polling in a fraction of a second at 600', async () => {
  const started = Date.now();
  const sm = waiterStateMachine({ IntervalSeconds: 60, MaxAttempts: 5, BackoffRate: 1 });
  const r = await runLocalDeploy(opts({ WaiterStateMachine: sm, H: dpiResource('Custom::DpiHistoryRequest', { Key: 'h', Polls: 2 }, {}, true) }, { timeScale: 600 }));
  const wall = Date.now() - started;
  expect(r.success).toBe(true);
  expect(lines.join('\n')).toMatch(/Time scale 600/);
  const polls = calls().filter((c) => c.fn === 'isComplete').map((c) => c.now as number);
  expect(polls).toHaveLength(3);
  // Each wait is the state machine's 60 s as the handler's clock sees it (a few wall milliseconds more, times 600).
  for (const gap of [polls[1] - polls[0], polls[2] - polls[1]]) {
    expect(gap).toBeGreaterThanOrEqual(59_000);
    expect(gap).toBeLessThan(60_000 + 600 * 400);
  }
  // Two minutes of cloud time did not take two minutes.
  expect(wall).toBeLessThan(60_000);
});

test('Lambda\'s timeout and the handler\'s waits pass on the same clock: a 2-minute sleep under a 1-minute timeout is stopped, a 30-second one is not', async () => {
  const fn = (timeout: number): Record<string, unknown> => ({ Type: 'AWS::Lambda::Function', Properties: { Handler: 'index.onEvent', Timeout: timeout } });
  const r = await runLocalDeploy(opts({
    ProviderOnEvent: fn(60),
    Short: dpiResource('Custom::DpiSubscription', { Key: 's', SleepMs: 30_000 }),
    Long: dpiResource('Custom::DpiSubscription', { Key: 'l', SleepMs: 120_000 }),
  }, { timeScale: 600, concurrency: 2 }));
  expect(r.success).toBe(false);
  expect(r.events.find((e) => e.logicalId === 'Long' && e.status === 'CREATE_FAILED')!.reason).toMatch(/Task timed out after 60\.00 seconds/);
  const awake = calls().filter((c) => c.fn === 'awake').map((c) => c.event.LogicalResourceId);
  expect(awake).toEqual(['Short']);
  // The deadline the container gives the handler is in cloud time too: a minute, not a tenth of a second.
  const remaining = calls().find((c) => c.fn === 'onEvent' && c.event.LogicalResourceId === 'Long')!.remaining as number;
  expect(remaining).toBeGreaterThan(30_000);
  expect(remaining).toBeLessThanOrEqual(60_000);
});

test('CloudFormation\'s ServiceTimeout passes on the cloud clock: a Create slower than it fails and is treated as cancelled', async () => {
  const r = await runLocalDeploy(opts({
    S: dpiResource('Custom::DpiSubscription', { Key: 's', SleepMs: 120_000, ServiceTimeout: 60 }),
  }, { timeScale: 600 }));
  expect(r.success).toBe(false);
  expect(r.events.find((e) => e.status === 'CREATE_FAILED')!.reason).toMatch(/within its ServiceTimeout \(60 seconds\)/);
  // The cancelled Create gets the Delete with an invented physical ID.
  const del = calls().find((c) => c.fn === 'onEvent' && c.event.RequestType === 'Delete');
  expect(del?.event.PhysicalResourceId).toMatch(/^Demo-S-[A-Z0-9]{12}$/);
});

test('the emulator\'s clock runs with the run\'s and goes on from there in the next run', async () => {
  const o = opts({ S: dpiResource('Custom::DpiSubscription', { Key: 's', SleepMs: 300_000 }) }, { timeScale: 600 });
  const before = Date.now();
  const r1 = await runLocalDeploy(o);
  expect(r1.success).toBe(true);
  const slept = calls().find((c) => c.fn === 'awake')!.now as number;
  // Five minutes of cloud time passed in the first run.
  expect(slept - before).toBeGreaterThanOrEqual(300_000);
  resetCalls();
  // The next run, at the wall clock's pace: its clock starts where the last one ended, not at the wall clock, and the
  // handler's deadline is on that clock (a function of 600 s has at most 600 s left).
  const r2 = await runLocalDeploy({ ...o, timeScale: undefined, destroy: true });
  expect(r2.success).toBe(true);
  const del = calls().find((c) => c.fn === 'onEvent' && c.event.RequestType === 'Delete')!;
  expect(del.now).toBeGreaterThanOrEqual(slept);
  expect(del.remaining).toBeGreaterThan(590_000);
  expect(del.remaining).toBeLessThanOrEqual(600_000);
});

test('CloudFormation waits for a Delete up to the ServiceTimeout too: a slower Delete fails the destroy', async () => {
  const o = opts({ S: dpiResource('Custom::DpiSubscription', { Key: 's', DeleteSleepMs: 120_000, ServiceTimeout: 60 }) }, { timeScale: 600 });
  expect((await runLocalDeploy(o)).success).toBe(true);
  const r = await runLocalDeploy({ ...o, destroy: true });
  expect(r.success).toBe(false);
  expect(r.events.find((e) => e.status === 'DELETE_FAILED')!.reason).toMatch(/within its ServiceTimeout \(60 seconds\)/);
});

test('a time scale is refused where it cannot hold every clock, naming the option', async () => {
  const r1 = await runLocalDeploy(opts({}, { timeScale: 60, containers: 'shared' }));
  expect(r1.error).toMatch(/timeScale needs isolated containers/);
  const r2 = await runLocalDeploy(opts({}, { timeScale: 60, emulatorUrl: 'http://127.0.0.1:9', rateLimit: undefined }));
  expect(r2.error).toMatch(/dpi emulator --time-scale N/);
  const r3 = await runLocalDeploy(opts({}, { timeScale: 0.5 }));
  expect(r3.error).toMatch(/timeScale must be a number from 1 to 3600 \(got 0\.5\)/);
  const r4 = await runLocalDeploy(opts({}, { timeScale: 60, waits: 'emulator-clock' }));
  expect(r4.error).toMatch(/choose one/);
});
