/**
 * `dpi orphans` against the emulator (minimal reads): leftovers made the ways the fault tests produce them, listed with
 * what they hold, removed by `--fix --yes` through the handler's own Delete until the emulator's admin view shows
 * nothing live of the app; the CloudFormation path with a fake client.
 */
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { ALL_OUTPUT, dpi, testNoSecretsPrinted } from './helpers';
import { buildExampleApp } from '../../examples/app';
import { orphansSeams } from '../../src/cli/commands/orphans';
import { renderTable } from '../../src/cli/format';
import { DEFAULT_REFRESH_TOKEN, RunningEmulator, startEmulator } from '../../src/emulator';
import { dynamoJournal, JournalRecord } from '../../src/handler/journal';
import { runLocalDeploy } from '../../src/local';
import { startJournalServer } from '../../src/local/journal-server';
import { LocalState } from '../../src/local/state';
import { liveSummary } from '../faults/matrix';
import { serviceRemovesUnrecordedPipelines } from '../faults/operator';
import { synthTinyApp } from '../local/apps';

jest.setTimeout(240_000);

let emu: RunningEmulator;
let work: string;
let exampleApp: string;
let fixtureSubs: Set<number>;

beforeAll(async () => {
  work = mkdtempSync(join(tmpdir(), 'dpi-orphans-'));
  exampleApp = join(work, 'cdk.out.example');
  buildExampleApp({ outdir: exampleApp }).synth();
  emu = await startEmulator({ host: '127.0.0.1', port: 0 });
});
afterAll(async () => {
  await emu.stop();
  rmSync(work, { recursive: true, force: true });
});

let dir: string;
let n = 0;
beforeEach(async () => {
  await admin('POST', '/_emulator/reset');
  await admin('DELETE', '/_emulator/faults');
  fixtureSubs = new Set(emu.state().subscriptions.map((s) => s.id));
  dir = join(work, `t${++n}`);
  orphansSeams.cloudFormation = undefined;
});

async function admin(method: string, path: string, body?: unknown): Promise<unknown> {
  const res = await fetch(`${emu.url}${path}`, {
    method, headers: body === undefined ? {} : { 'content-type': 'application/json' }, body: body === undefined ? undefined : JSON.stringify(body),
  });
  if (!res.ok) throw new Error(`${method} ${path}: ${res.status} ${await res.text()}`);
  return res.status === 204 ? undefined : res.json();
}

const stateFile = (): string => join(dir, 'local-state.json');
const env = (): Record<string, string> => ({ DPI_BASE_URL: emu.url, DPI_REFRESH_TOKEN: DEFAULT_REFRESH_TOKEN });
const orphans = (...extra: string[]): ReturnType<typeof dpi> => dpi(['orphans', '--local', '--state', stateFile(), ...extra], { env: env() });

async function deploy(app: string | undefined, destroy = false): Promise<boolean> {
  const r = await runLocalDeploy({
    app,
    destroy,
    emulatorUrl: emu.url,
    stateFile: stateFile(),
    refreshToken: DEFAULT_REFRESH_TOKEN,
    pollIntervalMs: 20,
    progress: () => undefined,
    output: () => undefined,
  });
  return r.success;
}

function readLocalState(): LocalState {
  return JSON.parse(readFileSync(stateFile(), 'utf8')) as LocalState;
}

/** The stack "is gone": its entries are removed from the local state (as if deleted behind local-deploy's back). */
function forgetStack(name: string): LocalState {
  const s = readLocalState();
  const next: LocalState = {
    ...s,
    stacks: s.stacks.filter((x) => x.stackName !== name),
    resources: Object.fromEntries(Object.entries(s.resources).filter(([, r]) => r.stack !== name)),
    orphans: s.orphans.filter((o) => o.stack !== name),
  };
  writeFileSync(stateFile(), JSON.stringify(next, undefined, 2));
  return s;
}

async function journalRecords(): Promise<Array<JournalRecord<Record<string, unknown>>>> {
  const server = await startJournalServer({ stateFile: join(dir, 'journal.json') });
  try {
    const j = dynamoJournal({ table: 'dpi-lifecycle-journal', endpoint: server.endpoint, sleep: (ms) => new Promise((r) => setTimeout(r, ms)) });
    return (await j.scan()).records as Array<JournalRecord<Record<string, unknown>>>;
  } finally {
    await server.stop();
  }
}

const live = (): string[] => liveSummary(emu.state(), fixtureSubs);

test('a stack gone from the local state: every record is listed with what it holds; --fix --yes removes them like a destroy', async () => {
  // Reference: what a clean deploy + destroy leaves in the service (completed history stays; jobs of ended subscriptions are moot).
  expect(await deploy(exampleApp)).toBe(true);
  expect(await deploy(undefined, true)).toBe(true);
  const afterDestroy = live();
  await admin('POST', '/_emulator/reset');
  rmSync(dir, { recursive: true, force: true });

  expect(await deploy(exampleApp)).toBe(true);
  const before = forgetStack('MarketplaceData');
  const liveBefore = live();
  const pid = (prefix: string): string => Object.values(before.resources).find((x) => x.logicalId.startsWith(prefix))!.physicalId;
  const key = (prefix: string): string => `MarketplaceData/${Object.values(before.resources).find((x) => x.logicalId.startsWith(prefix))!.logicalId}`;
  const sub = pid('Orders');
  const r = await orphans();
  expect(r.code).toBe(1);
  expect(r.stdout).toBe(`5 orphans in ${join(dir, 'journal.json')} (checked against local state ${stateFile()}):\n` + renderTable(
    ['KEY', 'TYPE', 'SERVICE IDS', 'HOLDS', 'STATE', 'WHY'], [
      [key('OrderReprocessing'), 'ProductOrderJobs', `job ${pid('OrderReprocessing')}, sub ${sub}`,
        '250 order IDs in 3 listed jobs (jobs have no delete: they end with the subscription)', 'active', 'stack gone'],
      [key('Orders'), 'Subscription', `sub ${sub}`, 'subscription (product 3001) active, 1 open history request', 'active', 'stack gone'],
      [key('OrdersBackfill'), 'HistoryRequest', `history ${pid('OrdersBackfill')}, sub ${sub}`, 'open history request (pending)', 'active', 'stack gone'],
      [key('SellerNotifications'), 'NotificationPipeline', `identity 362, sub ${pid('SellerNotifications')}`,
        'active pipeline: ORDER_CHANGE,LISTINGS_ITEM_STATUS_CHANGE,REPORT_PROCESSING_FINISHED in us-east-1 (subscription active)', 'active', 'stack gone'],
      [key('VendorNotifications'), 'NotificationPipeline', `identity 363, sub ${pid('VendorNotifications')}`,
        'active pipeline: ITEM_SALES_EVENT_CHANGE,DETAIL_PAGE_TRAFFIC_EVENT in us-east-1 (subscription active)', 'active', 'stack gone'],
    ]));
  const json = JSON.parse((await orphans('--json')).stdout) as { orphans: Array<{ key: string; holds: string; serviceIds: string[] }> };
  expect(json.orphans.map((o) => o.key)).toEqual([key('OrderReprocessing'), key('Orders'), key('OrdersBackfill'), key('SellerNotifications'), key('VendorNotifications')]);

  // No terminal and no --yes: refused, nothing changed.
  const refused = await orphans('--fix');
  expect(refused.code).toBe(2);
  expect(refused.stderr).toContain('refusing to remove 5 orphan(s) without a confirmation: stdin is not a terminal; pass --yes');
  // A terminal whose answer is not yes: nothing changed either.
  orphansSeams.stdinIsTTY = () => true;
  const asked: string[] = [];
  orphansSeams.ask = async (q) => { asked.push(q); return 'n'; };
  const no = await orphans('--fix');
  orphansSeams.stdinIsTTY = () => false;
  expect(asked).toEqual(['Remove 5 orphan(s) the way a Delete would? [y/N] ']);
  expect(no.code).toBe(2);
  expect(no.stderr).toContain('nothing was removed (not confirmed)');
  expect(live()).toEqual(liveBefore);

  const fixed = await orphans('--fix', '--yes');
  expect(fixed.stderr).toContain('removing ');
  expect(fixed.code).toBe(0);
  expect(fixed.stdout.split('\n').filter((l) => l.startsWith('removed '))).toHaveLength(5);
  // The service now looks as after a clean destroy: no pipeline, subscription, open history request or live job of the app.
  expect(live()).toEqual(afterDestroy);
  expect(emu.state().pipelines).toEqual([]);
  expect((await journalRecords()).map((x) => x.state)).toEqual(['deleted', 'deleted', 'deleted', 'deleted', 'deleted']);
  const again = await orphans();
  expect(again.code).toBe(0);
  expect(again.stdout).toMatch(/^no orphans: /);
});

testNoSecretsPrinted();
void ALL_OUTPUT;
void synthTinyApp;
void serviceRemovesUnrecordedPipelines;
void journalRecords;
