/**
 * `dpi plan` on a 300-identity `NotificationPipelineFleet` (nested stacks): one identity changed shows that one
 * resource (named by its construct path in its nested stack), never the nested stack's TemplateURL, with `--local`
 * (against the local-deploy state) and with `--from` (the previous cloud assembly, offline); its calls are exactly
 * the changing calls the deploy then makes.
 */
import { join } from 'node:path';
import { clearRequests, dpi, requests, testNoSecretsPrinted } from './helpers';
import { changingCalls, nestedTemplates, synthPlanFleet, unmatchedCalls } from './plan-apps';
import { PLATFORM_FIRST_IDENTITY, platformFixtures } from '../../bench/lib/platform-app';
import { DEFAULT_REFRESH_TOKEN, RunningEmulator, startEmulator } from '../../src/emulator';
import type { PlanEntry } from '../../src/handler/plan-types';
import { runLocalDeploy } from '../../src/local';
import { tempDir } from '../local/helpers';

jest.setTimeout(600_000);

const N = 300;
const ONE = PLATFORM_FIRST_IDENTITY + 123;
let emu: RunningEmulator;
let work: { dir: string; cleanup: () => void };
let v0: string;
const state = (): string => join(work.dir, 'state', 'local-state.json');

interface PlanDoc { entries: PlanEntry[]; summary: Record<string, number> }

async function plan(args: string[]): Promise<PlanDoc> {
  const r = await dpi(['plan', '--json', ...args]);
  expect(r.stderr).toBe('');
  expect(r.code).toBe(0);
  return JSON.parse(r.stdout) as PlanDoc;
}

async function deploy(app: string): Promise<void> {
  const r = await runLocalDeploy({
    app,
    emulatorUrl: emu.url,
    stateFile: state(),
    refreshToken: DEFAULT_REFRESH_TOKEN,
    pollIntervalMs: 20,
    progress: () => undefined,
    output: () => undefined,
  });
  expect(r.error).toBeUndefined();
  expect(r.success).toBe(true);
}

const changed = (doc: PlanDoc): PlanEntry[] => doc.entries.filter((e) => e.action !== 'no-change');

beforeAll(async () => {
  work = tempDir('dpi-plan-fleet-');
  const fixtures = platformFixtures({ fleet: N, singles: 0, subscriptions: 0 });
  emu = await startEmulator({ host: '127.0.0.1', port: 0, fixtures, rateLimit: 'off' });
  v0 = synthPlanFleet(join(work.dir, 'v0'), N);
  expect(nestedTemplates(v0).length).toBeGreaterThan(1);
  await deploy(v0);
});
afterAll(async () => {
  await emu.stop();
  work.cleanup();
});

test('one identity whose types keep a queue type: one resource, update in place, offline (--from) and against the state (--local)', async () => {
  const v1 = synthPlanFleet(join(work.dir, 'v1'), N, { [ONE]: ['ORDER_CHANGE', 'LISTINGS_ITEM_STATUS_CHANGE', 'REPORT_PROCESSING_FINISHED'] });
  const offline = await plan(['--app', v1, '--from', v0]);
  const local = await plan(['--app', v1, '--local', '--state', state()]);
  for (const doc of [offline, local]) {
    expect(doc.entries.length).toBe(N);
    expect(doc.entries.every((e) => e.type === 'Custom::DpiNotificationPipeline')).toBe(true);
    const [one, ...rest] = changed(doc);
    expect(rest).toEqual([]);
    expect(one.action).toBe('update');
    expect(one.constructPath).toMatch(new RegExp(`^Platform/Sellers/Pipelines\\d+/Identity${ONE}$`));
    expect(one.stack).toBe(one.constructPath!.replace(/\/Identity\d+$/, ''));
    expect(one.changes.map((c) => c.prop)).toEqual(['notificationTypes']);
    expect(doc.summary).toMatchObject({ 'update': 1, 'no-change': N - 1 });
  }
  expect(local.entries.find((e) => e.action === 'update')!.physicalId).toBeDefined();
  // The text: the one resource, no TemplateURL, the summary line.
  const text = await dpi(['plan', '--app', v1, '--from', v0]);
  expect(text.stdout).not.toContain('TemplateURL');
  expect(text.stdout).toContain(`Identity${ONE}`);
  expect(text.stdout.split('\n').filter((l) => /^\s+(update|no-change)\s/.test(l))).toHaveLength(1);
  expect(text.stdout).toContain(`Plan: 0 create, 1 update, 0 rebuild, 0 replace, 0 delete, 0 retain, ${N - 1} no-change`);

  await clearRequests(emu);
  await deploy(v1);
  expect(unmatchedCalls(local.entries, changingCalls(await requests(emu)))).toEqual({ planned: [], made: [] });
  expect(changed(await plan(['--app', v1, '--local', '--state', state()]))).toEqual([]);
});

test('one identity whose types lose every queue type: a rebuild naming the queue that goes away', async () => {
  const v2 = synthPlanFleet(join(work.dir, 'v2'), N, { [ONE]: ['ORDER_CHANGE', 'LISTINGS_ITEM_STATUS_CHANGE'] });
  const local = await plan(['--app', v2, '--local', '--state', state()]);
  const [one, ...rest] = changed(local);
  expect(rest).toEqual([]);
  expect(one.action).toBe('rebuild');
  expect(one.effects.join('\n')).toMatch(/queue/);
  expect(one.effects.join('\n')).toContain(String(ONE));
  const gate = await dpi(['plan', '--app', v2, '--local', '--state', state(), '--fail-on', 'replace,rebuild,delete']);
  expect(gate.code).toBe(1);
  await clearRequests(emu);
  await deploy(v2);
  expect(unmatchedCalls(local.entries, changingCalls(await requests(emu)))).toEqual({ planned: [], made: [] });
});

test('an identity leaving the fleet: its pipeline is deleted (the stack made it), planned as the deploy does it', async () => {
  const gone = PLATFORM_FIRST_IDENTITY + 7;
  const v3 = synthPlanFleet(join(work.dir, 'v3'), N, { [ONE]: ['ORDER_CHANGE', 'LISTINGS_ITEM_STATUS_CHANGE'] }, [gone]);
  const local = await plan(['--app', v3, '--local', '--state', state()]);
  const ch = changed(local);
  const leaving = ch.find((e) => e.logicalId.startsWith(`Identity${gone}`));
  expect(leaving).toBeDefined();
  expect(leaving!.action).toBe('delete');
  await clearRequests(emu);
  await deploy(v3);
  expect(unmatchedCalls(local.entries, changingCalls(await requests(emu)))).toEqual({ planned: [], made: [] });
});

testNoSecretsPrinted();
