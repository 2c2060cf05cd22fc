/**
 * The runner's journal server: started when the handler runs, passed as journalEndpoint, saved to
 * journal.json beside the state after every invocation, kept by --destroy.
 */
import { existsSync, mkdirSync, readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { dpiResource, providerResources, tempDir, writeAssembly } from './helpers';
import { RunningEmulator, startEmulator } from '../../src/emulator';
import { LocalDeployOptions, readJournalState, runLocalDeploy } from '../../src/local';

const HANDLER = join(__dirname, 'fixtures', 'journal-handler.js');

let emulator: RunningEmulator;
let tmp: { dir: string; cleanup: () => void };
let lines: string[];
beforeAll(async () => {
  emulator = await startEmulator({ port: 0 });
});
afterAll(() => emulator.stop());
beforeEach(() => {
  tmp = tempDir();
  lines = [];
});
afterEach(() => tmp.cleanup());

const stateDir = (): string => join(tmp.dir, 'state');
const journalFile = (): string => join(stateDir(), 'journal.json');

function opts(app: string | undefined, extra: Partial<LocalDeployOptions> = {}): LocalDeployOptions {
  return {
    app,
    emulatorUrl: emulator.url,
    stateFile: join(stateDir(), 'local-state.json'),
    refreshToken: 'rt-journal-test-token',
    handlerPath: HANDLER,
    progress: (l) => lines.push(l),
    output: () => undefined,
    ...extra,
  };
}

function assembly(resources: Record<string, unknown>): string {
  const dir = join(tmp.dir, `out-${Math.random().toString(36).slice(2)}`);
  writeAssembly(dir, [{ name: 'Demo', template: { Resources: { ...providerResources(), ...resources } } }]);
  return dir;
}

/** Succeeded: the error is part of the comparison, so a failure shows why. */
async function deployed(o: LocalDeployOptions): Promise<void> {
  const r = await runLocalDeploy(o);
  expect({ success: r.success, error: r.error }).toEqual({ success: true, error: undefined });
}

const records = (): Array<{ pk: string; type: string }> =>
  (readJournalState(journalFile()).tables.find((t) => t.TableName === 'dpi-lifecycle-journal')?.Items ?? [])
    .map((i) => ({ pk: String((i.pk as { S: string }).S), type: String((i.type as { S: string }).S) }));

test('deploy, no-change rerun, update, destroy: the journal accumulates across runs and survives --destroy', async () => {
  const v1 = assembly({ A: dpiResource('Custom::DpiSubscription', { Key: 'a' }) });
  const r1 = await runLocalDeploy(opts(v1));
  expect(r1.error).toBeUndefined();
  expect(r1.success).toBe(true);
  expect(lines.some((l) => /^Journal at http:\/\/127\.0\.0\.1:\d+ \(state .*journal\.json\)$/.test(l))).toBe(true);
  expect(records()).toEqual([{ pk: 'A', type: 'Create' }]);

  // No changes: no journal server, file untouched.
  lines = [];
  await deployed(opts(v1));
  expect(lines.some((l) => l.startsWith('Journal at'))).toBe(false);

  // An update in a new run sees the records of the earlier run (restored from the file).
  const v2 = assembly({ A: dpiResource('Custom::DpiSubscription', { Key: 'a', Value: 'v2' }) });
  await deployed(opts(v2));
  expect(records().map((r) => r.type).sort()).toEqual(['Create', 'Update']);

  const r4 = await runLocalDeploy(opts(undefined, { destroy: true }));
  expect(r4.success).toBe(true);
  expect(existsSync(join(stateDir(), 'local-state.json'))).toBe(false);
  expect(existsSync(journalFile())).toBe(true);
  expect(records().map((r) => r.type).sort()).toEqual(['Create', 'Delete', 'Update']);
});

test('a failed invocation is journaled too (flush after every invocation, also on failure)', async () => {
  const app = assembly({ A: dpiResource('Custom::DpiSubscription', { Key: 'a', Fail: 'true' }) });
  const r = await runLocalDeploy(opts(app));
  expect(r.success).toBe(false);
  expect(records()).toEqual([{ pk: 'A', type: 'Create' }]);
});

test('a corrupt journal file fails the run before any change, naming the file', async () => {
  const app = assembly({ A: dpiResource('Custom::DpiSubscription', { Key: 'a' }) });
  mkdirSync(stateDir(), { recursive: true });
  writeFileSync(journalFile(), 'not json');
  const r = await runLocalDeploy(opts(app));
  expect(r.success).toBe(false);
  expect(r.error).toContain(journalFile());
  expect(r.events.filter((e) => e.type === 'Custom::DpiSubscription')).toEqual([]);
});

test('a state directory the runner creates ignores itself (.gitignore with *); an existing one is left alone', async () => {
  const app = assembly({ A: dpiResource('Custom::DpiSubscription', { Key: 'a' }) });
  await deployed(opts(app));
  expect(readFileSync(join(stateDir(), '.gitignore'), 'utf8').split('\n')).toContain('*');
  const own = join(tmp.dir, 'mine');
  mkdirSync(own);
  await deployed(opts(app, { stateFile: join(own, 'state.json') }));
  expect(existsSync(join(own, '.gitignore'))).toBe(false);
});
