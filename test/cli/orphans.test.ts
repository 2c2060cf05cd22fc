/**
 * `dpi orphans` against the emulator (minimal reads): leftovers made the ways the fault tests produce them, listed with
 * what they hold, removed by `--fix --yes` through the handler's own Delete until the emulator's admin view shows
 * nothing live of the app; the CloudFormation path with a fake client.
 */
import { spawn } from 'node:child_process';
import { existsSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { dpi, testNoSecretsPrinted } from './helpers';
import { buildExampleApp } from '../../examples/app';
import { orphansSeams } from '../../src/cli/commands/orphans';
import { renderTable } from '../../src/cli/format';
import { DpiClient, endpointsFromBase } from '../../src/client';
import { DEFAULT_REFRESH_TOKEN, RunningEmulator, startEmulator } from '../../src/emulator';
import { dynamoJournal, JournalRecord } from '../../src/handler/journal';
import { findPackageRoot, runLocalDeploy } from '../../src/local';
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
/** What the emulator's fixtures alone keep live (nothing of the app). */
let baseline: string[];

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
  baseline = liveSummary(emu.state(), fixtureSubs);
  dir = join(work, `t${++n}`);
  orphansSeams.cloudFormation = undefined;
  orphansSeams.stdinIsTTY = () => false;
  orphansSeams.ask = async () => '';
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
    const j = dynamoJournal({ create: true, table: 'dpi-lifecycle-journal', endpoint: server.endpoint, sleep: (ms) => new Promise((r) => setTimeout(r, ms)) });
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
  // A clean destroy leaves no orphan (the order jobs' record stays as the Delete leaves it: its subscription has ended).
  const clean = await orphans();
  expect(clean.stdout).toMatch(/^no orphans: /);
  expect(clean.code).toBe(0);
  await admin('POST', '/_emulator/reset');
  rmSync(dir, { recursive: true, force: true });

  expect(await deploy(exampleApp)).toBe(true);
  const before = forgetStack('MarketplaceData');
  const liveBefore = live();
  const pid = (prefix: string): string => Object.values(before.resources).find((x) => x.logicalId.startsWith(prefix))!.physicalId;
  const key = (prefix: string): string => `MarketplaceData/${Object.values(before.resources).find((x) => x.logicalId.startsWith(prefix))!.logicalId}`;
  const sub = pid('Orders');
  await admin('DELETE', '/_emulator/requests');
  const r = await orphans();
  expect(r.code).toBe(1);
  // Listing changes nothing, and reads few: one subscription listing answers every status (no GET per subscription).
  const seen = (await admin('GET', '/_emulator/requests')) as Array<{ method: string; path: string }>;
  expect(seen.filter((x) => x.method !== 'GET' && x.path !== '/auth/api/ref')).toEqual([]);
  expect(seen.filter((x) => /^\/sub\/\d+$|^\/v2\/sub\/\d+$/.test(x.path))).toEqual([]);
  expect(seen.filter((x) => x.path === '/v2/sub' || x.path === '/sub')).toHaveLength(1);
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
  // The handler's log of the fix (beside the state), the journal and the state never hold the refresh token.
  for (const f of ['handler.log', 'journal.json', 'local-state.json']) {
    const text = readFileSync(join(dir, f), 'utf8');
    expect(text.length).toBeGreaterThan(0);
    expect(text).not.toContain(DEFAULT_REFRESH_TOKEN);
  }
  expect(readFileSync(join(dir, 'handler.log'), 'utf8')).toContain('"RequestType":"Delete"');
  // A subscription set active again outside the library: its claim's owner holds nothing, so it is reported (not removed).
  const client = new DpiClient({ endpoints: endpointsFromBase(emu.url), refreshToken: DEFAULT_REFRESH_TOKEN });
  await client.subscriptions.update(sub, { status: 'active' });
  const revived = await orphans();
  expect(revived.code).toBe(1);
  expect(revived.stdout).toContain(`claim whose owner holds nothing: sub ${sub} owned by ${key('Orders')} (records closed; service: active): `
    + 'still live, check it by hand\n');
});

/** The resource key of the tiny app's pipeline. */
function PIPE_KEY(): string {
  const t = JSON.parse(readFileSync(join(tinyApp(), 'Tiny.template.json'), 'utf8')) as { Resources: Record<string, { Type: string }> };
  return `Tiny/${Object.keys(t.Resources).find((id) => t.Resources[id].Type === 'Custom::DpiNotificationPipeline')}`;
}
const synthesized = new Map<string, string>();
/** The tiny app (test/local/apps.ts), synthesized once per variant. */
const tinyApp = (o: Parameters<typeof synthTinyApp>[1] = {}): string => {
  const id = JSON.stringify(o);
  if (!synthesized.has(id)) synthesized.set(id, synthTinyApp(join(work, `tiny-${synthesized.size}`), o));
  return synthesized.get(id)!;
};

test('a failed create that left its pipeline without a subscription (posted): listed, removed by --fix', async () => {
  // The subscription POST is refused twice (the create and its undo): the journal keeps the result, the pipeline stays.
  await admin('POST', '/_emulator/faults', { method: 'POST', pathPrefix: '/v2/sub', status: 400, count: 2 });
  expect(await deploy(tinyApp())).toBe(false);
  await admin('DELETE', '/_emulator/faults');
  expect(emu.state().pipelines).toHaveLength(1);
  const r = await orphans();
  expect(r.code).toBe(1);
  expect(r.stdout).toBe(`1 orphan in ${join(dir, 'journal.json')} (checked against local state ${stateFile()}):\n` + renderTable(
    ['KEY', 'TYPE', 'SERVICE IDS', 'HOLDS', 'STATE', 'WHY'],
    [[PIPE_KEY(), 'NotificationPipeline', 'identity 362', 'pipeline without its subscription: ORDER_CHANGE,REPORT_PROCESSING_FINISHED in us-east-1',
      'posted', 'stack gone']]));
  // Confirmed on a terminal instead of --yes.
  orphansSeams.stdinIsTTY = () => true;
  orphansSeams.ask = async () => 'y';
  const fixed = await orphans('--fix');
  expect(fixed.code).toBe(0);
  expect(emu.state().pipelines).toEqual([]);
  expect(live()).toEqual(baseline);
  expect((await journalRecords()).map((x) => x.state)).toEqual(['deleted']);
  expect((await orphans()).code).toBe(0);
});

test('a unified create whose answer was lost (posting) is unresolved: --fix skips it and names the step', async () => {
  await admin('POST', '/_emulator/faults', { method: 'POST', pathPrefix: '/service/sp/notifications-unified', dropResponse: true, count: 1 });
  expect(await deploy(tinyApp())).toBe(false);
  await admin('DELETE', '/_emulator/faults');
  const key = PIPE_KEY();
  const r = await orphans();
  expect(r.code).toBe(1);
  expect(r.stdout).toContain(renderTable(['KEY', 'TYPE', 'SERVICE IDS', 'HOLDS', 'STATE', 'WHY'],
    [[key, 'NotificationPipeline', 'identity 362', 'maybe a pipeline (the create got no answer): ORDER_CHANGE,REPORT_PROCESSING_FINISHED in us-east-1',
      'posting', 'stack gone']]));
  expect(r.stdout).toMatch(new RegExp(`unresolved: ${key} \\([^)]+\\): only the service can remove what it made; once removed \\(or confirmed never made\\) `
    + `run 'dpi journal resolve ${key}'; --fix skips it\n`));
  const fixed = await orphans('--fix', '--yes');
  expect(fixed.code).toBe(1);
  expect(fixed.stdout).toMatch(new RegExp(`^skipped  ${key} `, 'm'));
  expect(emu.state().pipelines).toHaveLength(1);
  // The step: the service removes it, then the attempt is resolved; nothing is left.
  await serviceRemovesUnrecordedPipelines(emu.url, emu.state());
  expect((await dpi(['journal', 'resolve', key, '--local', '--state', stateFile()], { env: {} })).code).toBe(0);
  const after = await orphans();
  expect(after.code).toBe(0);
  expect(live()).toEqual(baseline);
});

test('an old replacement whose clean-up Delete failed (abandoned, as CloudFormation abandons it): listed against the current one, removed by --fix', async () => {
  expect(await deploy(tinyApp())).toBe(true);
  const old = Object.values(readLocalState().resources).find((x) => x.type === 'Custom::DpiNotificationPipeline')!.physicalId;
  // A new identity replaces the pipeline; the unified DELETE of the old one is refused once, so the clean-up fails.
  await admin('POST', '/_emulator/faults', { method: 'DELETE', pathPrefix: '/service/sp/notifications-unified', status: 400, count: 1 });
  expect(await deploy(tinyApp({ vendor: true }))).toBe(false);
  await admin('DELETE', '/_emulator/faults');
  const s = readLocalState();
  // Out of the state (the stack no longer holds it, and no later run deletes it): only the journal knows it.
  expect(s.orphans).toEqual([]);
  expect(emu.state().pipelines.map((p) => p.remoteIdentityId).sort()).toEqual([362, 363]);
  const current = s.resources[PIPE_KEY()].physicalId;
  const r = await orphans();
  expect(r.code).toBe(1);
  expect(r.stdout).toContain(renderTable(['KEY', 'TYPE', 'SERVICE IDS', 'HOLDS', 'STATE', 'WHY'],
    [[PIPE_KEY(), 'NotificationPipeline', `identity 362, sub ${old}`,
      'active pipeline: ORDER_CHANGE,REPORT_PROCESSING_FINISHED in us-east-1 (subscription active)', 'deleting',
      `replaced: its clean-up Delete failed, abandoned (current ${current})`]]));
  const fixed = await orphans('--fix', '--yes');
  expect(fixed.code).toBe(0);
  expect(emu.state().pipelines.map((p) => p.remoteIdentityId)).toEqual([363]);
  expect((await orphans()).code).toBe(0);
  // The current pipeline is untouched, and a destroy leaves nothing.
  expect(await deploy(undefined, true)).toBe(true);
  expect(live()).toEqual(baseline);
});

test('a killed create (the runner killed while the service held the subscription POST): the recording attempt, removed by --fix', async () => {
  const app = tinyApp({ subscriptionName: 'orders' });
  // The Orders subscription's POST (the second POST /v2/sub) is held, and applied after the runner is killed.
  const holdMs = 1500;
  await admin('POST', '/_emulator/faults', { method: 'POST', pathPrefix: '/v2/sub', skip: 1, count: 1, delayMs: holdMs });
  const cli = join(findPackageRoot(), 'assets', 'cli', 'dpi', 'index.js');
  const child = spawn(process.execPath, [cli, 'local-deploy', '--emulator', emu.url, '--state', stateFile(), '--app', app],
    { stdio: 'ignore', env: { ...process.env, DPI_REFRESH_TOKEN: DEFAULT_REFRESH_TOKEN, NO_COLOR: '1' } });
  const exited = new Promise<void>((resolve) => child.once('exit', () => resolve()));
  let held = false;
  for (let i = 0; i < 600 && !held && child.exitCode === null; i++) {
    await new Promise((r) => setTimeout(r, 25));
    held = ((await admin('GET', '/_emulator/faults')) as { faults: unknown[] }).faults.length === 0;
  }
  child.kill('SIGKILL');
  await exited;
  expect(held).toBe(true);
  await new Promise((r) => setTimeout(r, holdMs + 300));
  await admin('DELETE', '/_emulator/faults');
  const recs = await journalRecords();
  expect(recs.map((x) => x.state)).toEqual(['recording', 'active']);
  const r = await orphans();
  expect(r.code).toBe(1);
  // The runner saved the pipeline before it was killed (the stack and the pipeline are in the local state): the subscription's
  // attempt is the orphan.
  const sub = recs.find((x) => x.state === 'recording')!;
  expect(r.stdout).toBe(`1 orphan in ${join(dir, 'journal.json')} (checked against local state ${stateFile()}):\n` + renderTable(
    ['KEY', 'TYPE', 'SERVICE IDS', 'HOLDS', 'STATE', 'WHY'],
    [[sub.key, 'Subscription', 'product 3001', 'subscription create without a confirmed outcome (looked up among unclaimed subscriptions on --fix)',
      'recording', 'resource gone']]));
  const made = (): string[] => emu.state().subscriptions.filter((x) => x.product === 3001 && !fixtureSubs.has(x.id) && x.status !== 'invalid')
    .map((x) => String(x.id));
  // The emulator drops a held call whose client went away; the service may have applied it: made here as that POST would.
  expect(made()).toEqual([]);
  const client = new DpiClient({ endpoints: endpointsFromBase(emu.url), refreshToken: DEFAULT_REFRESH_TOKEN });
  await client.subscriptions.create({
    account: 1001,
    user: 2001,
    product: 3001,
    status: 'active',
    date_start: '2026-11-01T00:00:00Z',
    remote_identity: 362,
    storage_group: 501,
    name: 'orders',
    product_parameters: { marketplace_id: 'ATVPDKIKX0DER', remote_identity_id: '362', stage_ids: '[1001]' },
  });
  expect(made()).toHaveLength(1);
  const fixed = await orphans('--fix', '--yes');
  expect(fixed.code).toBe(0);
  expect(made()).toEqual([]);
  expect((await journalRecords()).map((x) => x.state)).toEqual(['deleted', 'active']);
  expect((await orphans()).code).toBe(0);
  // The pipeline the state keeps is untouched; a destroy leaves nothing of the app.
  expect(await deploy(undefined, true)).toBe(true);
  expect(live()).toEqual(baseline);
});

test('a history request whose create had no confirmed outcome (creating): found by the lookup, cancelled by --fix', async () => {
  expect(await deploy(tinyApp({ subscriptionName: 'orders' }))).toBe(true);
  const sub = Object.values(readLocalState().resources).find((x) => x.type === 'Custom::DpiSubscription')!.physicalId;
  const client = new DpiClient({ endpoints: endpointsFromBase(emu.url), refreshToken: DEFAULT_REFRESH_TOKEN });
  // What a HistoryRequest create leaves when its POST's answer is lost and the invocation ends: the journal's intent with the
  // requests listed before the POST, and the request the service made.
  const key = 'Tiny/LostBackfill1234ABCD';
  const server = await startJournalServer({ stateFile: join(dir, 'journal.json') });
  try {
    const j = dynamoJournal({ create: true, table: 'dpi-lifecycle-journal', endpoint: server.endpoint, sleep: (ms) => new Promise((r) => setTimeout(r, ms)) });
    const known = (await client.history.statusBySubscription(sub)).map((h) => String(h.id));
    await j.create(key, 'creating', { request: JSON.stringify([sub, '2026-11-15', '2026-11-17', null, null, null, null]), subscriptionId: sub, known, knownAt: new Date().toISOString() });
  } finally {
    await server.stop();
  }
  const h = await client.history.create(sub, { start_date: '2026-11-15', end_date: '2026-11-17' });
  const r = await orphans();
  expect(r.code).toBe(1);
  expect(r.stdout).toBe(`1 orphan in ${join(dir, 'journal.json')} (checked against local state ${stateFile()}):\n` + renderTable(
    ['KEY', 'TYPE', 'SERVICE IDS', 'HOLDS', 'STATE', 'WHY'],
    [[key, 'HistoryRequest', `sub ${sub}, history ${h.id}`, `open history request ${h.id} (made by an attempt without a confirmed outcome)`,
      'creating', 'resource gone']]));
  const fixed = await orphans('--fix', '--yes');
  expect(fixed.code).toBe(0);
  expect(emu.state().history.find((x) => String(x.id) === String(h.id))!.status).toBe('cancelled');
  expect((await orphans()).code).toBe(0);
  expect(await deploy(undefined, true)).toBe(true);
  expect(live()).toEqual(baseline);
});

test('--local without a service address uses the embedded emulator beside the state (as dpi local-deploy does), or says what to set', async () => {
  const none = await dpi(['orphans', '--local', '--state', stateFile()], { env: {} });
  expect(none.code).toBe(2);
  expect(none.stderr).toContain('no service address: set DPI_BASE_URL or pass --base-url URL');
  const r = await runLocalDeploy({ app: tinyApp(), stateFile: stateFile(), progress: () => undefined, output: () => undefined });
  expect(r.success).toBe(true);
  forgetStack('Tiny');
  const listed = await dpi(['orphans', '--local', '--state', stateFile(), '--json'], { env: {} });
  expect(listed.stderr).toContain(`No service address: using the embedded emulator of ${join(dir, 'emulator-state.json')}`);
  expect(listed.code).toBe(1);
  expect((JSON.parse(listed.stdout) as { orphans: Array<{ holds: string }> }).orphans.map((o) => o.holds))
    .toEqual(['active pipeline: ORDER_CHANGE,REPORT_PROCESSING_FINISHED in us-east-1 (subscription active)']);
  expect((await dpi(['orphans', '--local', '--state', stateFile(), '--fix', '--yes'], { env: {} })).code).toBe(0);
  expect((await dpi(['orphans', '--local', '--state', stateFile()], { env: {} })).code).toBe(0);
  // After a destroy (the state file removed) the report does not name it as if it were there.
  const destroyed = await runLocalDeploy({ stateFile: stateFile(), destroy: true, progress: () => undefined, output: () => undefined });
  expect(destroyed.success).toBe(true);
  expect(existsSync(stateFile())).toBe(false);
  const after = await dpi(['orphans', '--local', '--state', stateFile()], { env: {} });
  expect(after.code).toBe(0);
  expect(after.stdout).toContain(`the local-deploy state (${stateFile()} does not exist: nothing is deployed locally)`);
  expect(after.stdout).not.toContain(`local state ${stateFile()}`);
});

test('CloudFormation (a fake client): a resource dropped from its stack while its clean-up failed, a stack in progress, a stack gone', async () => {
  expect(await deploy(tinyApp({ subscriptionName: 'orders' }))).toBe(true);
  const s = readLocalState();
  const pipe = Object.values(s.resources).find((x) => x.type === 'Custom::DpiNotificationPipeline')!;
  const sub = Object.values(s.resources).find((x) => x.type === 'Custom::DpiSubscription')!;
  let status = 'UPDATE_COMPLETE';
  let stackExists = true;
  const calls: string[] = [];
  orphansSeams.cloudFormation = {
    send: async (cmd: object) => {
      const c = cmd as { constructor: { name: string }; input: { StackName?: string } };
      calls.push(`${c.constructor.name} ${c.input.StackName}`);
      if (!stackExists || c.input.StackName !== 'Tiny') {
        throw Object.assign(new Error(`Stack with id ${c.input.StackName} does not exist`), { name: 'ValidationError' });
      }
      if (c.constructor.name === 'DescribeStacksCommand') {
        return { Stacks: [{ StackName: 'Tiny', StackId: 'arn:aws:cloudformation:us-east-1:123456789012:stack/Tiny/x', StackStatus: status }] };
      }
      // The subscription was removed from the app and its Delete failed: CloudFormation dropped it from the stack anyway.
      return {
        StackResourceSummaries: [
          { LogicalResourceId: pipe.logicalId, PhysicalResourceId: pipe.physicalId, ResourceType: pipe.type, ResourceStatus: 'CREATE_COMPLETE' },
        ],
      };
    },
  };
  const server = await startJournalServer({ stateFile: join(dir, 'journal.json') });
  try {
    const cloud = (...extra: string[]): ReturnType<typeof dpi> =>
      dpi(['orphans', '--endpoint', server.endpoint, '--region', 'us-east-1', ...extra], { env: env() });
    const r = await cloud();
    expect(calls).toEqual(['DescribeStacksCommand Tiny', 'ListStackResourcesCommand Tiny', 'GetTemplateCommand Tiny']);
    expect(r.code).toBe(1);
    expect(r.stdout).toBe(`1 orphan in table dpi-lifecycle-journal at ${server.endpoint} (checked against CloudFormation (us-east-1)):\n`
      + renderTable(['KEY', 'TYPE', 'SERVICE IDS', 'HOLDS', 'STATE', 'WHY'],
        [[`Tiny/${sub.logicalId}`, 'Subscription', `sub ${sub.physicalId}`, 'subscription (product 3001) active', 'active', 'resource gone']]));

    status = 'UPDATE_IN_PROGRESS';
    const busy = await cloud();
    expect(busy.code).toBe(0);
    expect(busy.stderr).toContain('Tiny: an operation is in progress; its records are not judged');
    status = 'UPDATE_ROLLBACK_COMPLETE';

    const fixed = await cloud('--fix', '--yes', '--table', 'dpi-lifecycle-journal');
    expect(fixed.code).toBe(0);
    expect(emu.state().subscriptions.find((x) => String(x.id) === sub.physicalId)!.status).toBe('invalid');
    expect(emu.state().pipelines).toHaveLength(1);
    expect((await cloud()).code).toBe(0);

    stackExists = false;
    const gone = await cloud('--json');
    expect(gone.code).toBe(1);
    const report = JSON.parse(gone.stdout) as { deployed: string; orphans: Array<{ key: string; why: string; state: string }> };
    expect(report.deployed).toBe('CloudFormation (us-east-1)');
    expect(report.orphans.map((o) => [o.key, o.why, o.state])).toEqual([[`Tiny/${pipe.logicalId}`, 'stack gone', 'active']]);
    expect((await cloud('--fix', '--yes', '--table', 'dpi-lifecycle-journal')).code).toBe(0);
    expect(live()).toEqual(baseline);
  } finally {
    await server.stop();
  }
});

testNoSecretsPrinted();
