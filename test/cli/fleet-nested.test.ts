/**
 * `dpi orphans` and `dpi drift` over a NotificationPipelineFleet, whose pipelines live in nested stacks and carry an
 * explicit journal key (`<parent>/<fleet path>/<nested stack>/<identity>`): after a local deploy the fleet's live
 * pipelines are no orphans and nothing drifted; a pipeline whose identity left the fleet while its clean-up failed is
 * exactly the one orphan, and `--fix --yes` removes only it. The same through CloudFormation (a fake client that shows
 * the nested stacks as `AWS::CloudFormation::Stack` resources of the parent, with their templates).
 */
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { DynamoDBClient, GetItemCommand, ListTablesCommand } from '@aws-sdk/client-dynamodb';
import { fakeCloudFormation, stacksOfLocalState } from './fake-cloudformation';
import { dpi, testNoSecretsPrinted } from './helpers';
import { setCloudFormationFactory } from '../../src/cli/commands/drift';
import { orphansSeams } from '../../src/cli/commands/orphans';
import { DEFAULT_REFRESH_TOKEN, RunningEmulator, startEmulator } from '../../src/emulator';
import { runLocalDeploy } from '../../src/local';
import { startJournalServer } from '../../src/local/journal-server';
import { LocalState } from '../../src/local/state';
import { synthFleetApp } from '../local/fleet-app';

jest.setTimeout(240_000);

const IDS = [2001, 2002, 2003, 2004, 2005];
let emu: RunningEmulator;
let work: string;
let app: string;
const keys = new Map<number, string>();

async function admin(method: string, path: string, body?: unknown): Promise<void> {
  const res = await fetch(`${emu.url}${path}`, {
    method, headers: body === undefined ? {} : { 'content-type': 'application/json' }, body: body === undefined ? undefined : JSON.stringify(body),
  });
  if (!res.ok) throw new Error(`${method} ${path}: ${res.status} ${await res.text()}`);
}

const stateFile = (): string => join(work, 'state', 'local-state.json');
const readLocal = (): LocalState => JSON.parse(readFileSync(stateFile(), 'utf8')) as LocalState;
const env = (): Record<string, string> => ({ DPI_BASE_URL: emu.url, DPI_REFRESH_TOKEN: DEFAULT_REFRESH_TOKEN });
const livePipelines = (): number[] => emu.state().pipelines.map((p) => p.remoteIdentityId).sort((a, b) => a - b);

beforeAll(async () => {
  work = mkdtempSync(join(tmpdir(), 'dpi-fleet-nested-'));
  emu = await startEmulator({ host: '127.0.0.1', port: 0 });
  await admin('POST', '/_emulator/fixtures', {
    remoteIdentities: IDS.map((id) => ({ id, account: 1001, name: `S${id}`, remote_identity_type_id: 17, marketplaces: ['ATVPDKIKX0DER'] })),
  });
  app = join(work, 'cdk.out');
  synthFleetApp(app, { identities: IDS, nestedStackCount: 3 });
  const r = await runLocalDeploy({
    app,
    emulatorUrl: emu.url,
    stateFile: stateFile(),
    refreshToken: DEFAULT_REFRESH_TOKEN,
    pollIntervalMs: 20,
    progress: () => undefined,
    output: () => undefined,
  });
  expect(r.success).toBe(true);
  for (const x of Object.values(readLocal().resources)) keys.set(Number(x.properties.RemoteIdentityId), String(x.properties.JournalKey));
  orphansSeams.stdinIsTTY = () => false;
});
afterAll(async () => {
  orphansSeams.cloudFormation = undefined;
  setCloudFormationFactory(undefined);
  await emu.stop();
  rmSync(work, { recursive: true, force: true });
});

describe('a local fleet deploy', () => {
  test('the fleet pipelines (nested stacks, explicit journal keys) are no orphans, and nothing drifted', async () => {
    expect(livePipelines()).toEqual(IDS);
    const state = readLocal();
    expect(state.stacks.filter((s) => s.parentStack === 'Fleet').length).toBeGreaterThanOrEqual(2);
    const o = await dpi(['orphans', '--local', '--state', stateFile()], { env: env() });
    expect(o.stderr).toBe('');
    expect(o.stdout).toContain('no orphans');
    expect(o.code).toBe(0);
    const d = await dpi(['drift', '--local', '--state', stateFile(), '--json'], { env: env() });
    expect(d.code).toBe(0);
    type Doc = { drifted: number; stacks: Array<{ stack: string; parentStack?: string; resources: Array<{ key: string; status: string }> }> };
    const doc = JSON.parse(d.stdout) as Doc;
    expect(doc.drifted).toBe(0);
    const rows = doc.stacks.flatMap((s) => s.resources);
    expect(rows.map((r) => r.key).sort((a, b) => a.slice(-4).localeCompare(b.slice(-4)))).toEqual(IDS.map((id) => expect.stringMatching(new RegExp(`^Fleet/Sellers/Pipelines\\d/Identity${id}$`))));
    expect(rows.every((r) => r.status === 'IN_SYNC')).toBe(true);
    expect(doc.stacks.filter((s) => s.resources.length > 0).every((s) => s.parentStack === 'Fleet')).toBe(true);
  });

  test('through CloudFormation (fake client): the nested stacks are followed, their resources judged and checked by their journal keys', async () => {
    const calls: string[] = [];
    const stacks = stacksOfLocalState(readLocal());
    orphansSeams.cloudFormation = fakeCloudFormation(stacks, calls);
    setCloudFormationFactory(() => fakeCloudFormation(stacks, calls));
    const server = await startJournalServer({ stateFile: join(work, 'state', 'journal.json') });
    try {
      const o = await dpi(['orphans', '--endpoint', server.endpoint], { env: env() });
      expect(o.stdout).toContain('no orphans');
      expect(o.code).toBe(0);
      const nested = stacks.filter((s) => s.parentId !== undefined && s.resources.length > 0);
      for (const s of nested) expect(calls).toContain(`GetTemplateCommand ${s.id}`);
      expect(calls.filter((c) => c.startsWith('GetTemplateCommand')).length).toBe(nested.length);
      const d = await dpi(['drift', '--stack', 'Fleet', '--endpoint', server.endpoint, '--all'], { env: env() });
      expect(d.stderr).toBe('');
      expect(d.code).toBe(0);
      for (const s of nested) expect(d.stdout).toContain(`Stack ${s.name} (nested in Fleet): ${s.resources.length} resources, 0 drifted`);
      expect(d.stdout.match(/  IN_SYNC\b/g)?.length).toBe(IDS.length);
      // The commands took their requests' turns from the request budget in the journal table they read (the one the
      // deploy's provider containers share): its counter counts every service request they sent.
      const sent = (await (await fetch(`${emu.url}/_emulator/requests`)).json() as Array<{ path: string }>).length;
      const ddb = new DynamoDBClient({ endpoint: server.endpoint, region: 'us-east-1', credentials: { accessKeyId: 'local', secretAccessKey: 'local' } });
      try {
        const tables = (await ddb.send(new ListTablesCommand({}))).TableNames ?? [];
        const key = { pk: { S: `budget#${new URL(emu.url).origin}` }, sk: { S: 'counter' } };
        const counters = await Promise.all(tables.map(async (t) => (await ddb.send(new GetItemCommand({ TableName: t, Key: key }))).Item?.n?.N));
        const taken = counters.filter((n) => n !== undefined).map(Number);
        expect(taken).toHaveLength(1);
        expect(taken[0]).toBeGreaterThan(IDS.length);
        expect(taken[0]).toBeLessThanOrEqual(sent);
      } finally {
        ddb.destroy();
      }

      // A pipeline that CloudFormation no longer lists (its identity left the fleet, the clean-up failed) is an orphan.
      const gone = stacks.map((s) => ({ ...s, resources: s.resources.filter((r) => r.properties?.JournalKey !== keyOf(2003)) }));
      orphansSeams.cloudFormation = fakeCloudFormation(gone);
      const o2 = await dpi(['orphans', '--endpoint', server.endpoint, '--json'], { env: env() });
      expect(o2.code).toBe(1);
      const report = JSON.parse(o2.stdout) as { orphans: Array<{ key: string; why: string }> };
      expect(report.orphans.map((x) => `${x.key}: ${x.why}`)).toEqual([`${keyOf(2003)}: resource gone`]);
    } finally {
      await server.stop();
    }
  });

  test('an identity dropped with a failed clean-up: exactly its pipeline is an orphan, and --fix --yes removes only it', async () => {
    const state = readLocal();
    const [k, dropped] = Object.entries(state.resources).find(([, r]) => r.properties.JournalKey === keyOf(2003))!;
    delete state.resources[k];
    state.orphans.push(dropped);
    writeFileSync(stateFile(), JSON.stringify(state, undefined, 2));
    const o = await dpi(['orphans', '--local', '--state', stateFile(), '--json'], { env: env() });
    expect(o.code).toBe(1);
    const report = JSON.parse(o.stdout) as { orphans: Array<{ key: string; why: string; holds: string }> };
    expect(report.orphans.map((x) => x.key)).toEqual([keyOf(2003)]);
    expect(report.orphans[0].why).toBe('resource gone');
    expect(report.orphans[0].holds).toMatch(/^active pipeline/);

    const fix = await dpi(['orphans', '--local', '--state', stateFile(), '--fix', '--yes'], { env: env() });
    expect(fix.code).toBe(0);
    expect(fix.stdout).toContain(`removed  ${keyOf(2003)}`);
    expect(livePipelines()).toEqual(IDS.filter((id) => id !== 2003));
    expect(readLocal().orphans).toEqual([]);
    const again = await dpi(['orphans', '--local', '--state', stateFile()], { env: env() });
    expect(again.code).toBe(0);
    const d = await dpi(['drift', '--local', '--state', stateFile(), '--all'], { env: env() });
    expect(d.code).toBe(0);
    expect(d.stdout.match(/  IN_SYNC\b/g)?.length).toBe(IDS.length - 1);
  });
});

/** The journal key of an identity's pipeline (the nested stack it is in, as the deploy recorded it). */
function keyOf(identity: number): string {
  return keys.get(identity) ?? `Fleet/Sellers/Pipelines?/Identity${identity}`;
}

testNoSecretsPrinted();
