/**
 * Which lifecycle journal table `dpi orphans`, `dpi drift` and `dpi journal` read: the one the stacks' resources name
 * (`Connection.JournalTableName`), never a default that is not theirs; and a read never creates a table.
 */
import { existsSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { App, Stack } from 'aws-cdk-lib';
import * as secretsmanager from 'aws-cdk-lib/aws-secretsmanager';
import { fakeCloudFormation } from './fake-cloudformation';
import { dpi } from './helpers';
import { AccountType, NotificationPipeline, NotificationPipelineRoles, NotificationType, ServiceConnection, Subscription } from '../../src';
import { setCloudFormationFactory } from '../../src/cli/commands/drift';
import { DEFAULT_REFRESH_TOKEN, RunningEmulator, startEmulator } from '../../src/emulator';
import { runLocalDeploy } from '../../src/local';
import { readJournalState, startJournalServer } from '../../src/local/journal-server';
import { LocalState } from '../../src/local/state';

jest.setTimeout(240_000);

const CUSTOM = 'Custom-Journal';
const DEFAULT = 'dpi-lifecycle-journal';

let emu: RunningEmulator;
let work: string;
let app: string;

/** Two stacks whose connections name the journal table `Custom-Journal`: Keep with a notification pipeline, Gone with a subscription. */
function synthApp(outdir: string): string {
  const a = new App({ outdir });
  const connect = (name: string): { stack: Stack; connection: ServiceConnection } => {
    const stack = new Stack(a, name, { env: { account: '123456789012', region: 'us-east-1' } });
    const connection = new ServiceConnection(stack, 'Dpi', {
      singleOriginUrl: 'https://api.example-dpi.com',
      refreshToken: secretsmanager.Secret.fromSecretNameV2(stack, 'Token', 'dpi/refresh-token'),
      journalTableName: CUSTOM,
    });
    return { stack, connection };
  };
  const keep = connect('Keep');
  const roles = new NotificationPipelineRoles(keep.stack, 'Roles', { serviceAccountId: '111122223333', externalId: 'ext-1' });
  new NotificationPipeline(keep.stack, 'Pipeline', {
    connection: keep.connection,
    roles,
    remoteIdentityId: 362,
    accountType: AccountType.SELLER,
    notificationTypes: [NotificationType.of('ORDER_CHANGE')],
  });
  const gone = connect('Gone');
  new Subscription(gone.stack, 'Orders', {
    connection: gone.connection,
    productId: 3001,
    storageGroupId: 501,
    remoteIdentityId: 362,
    productParameters: { marketplace_id: 'ATVPDKIKX0DER' },
    stageIds: [1001],
    name: 'gone orders',
  });
  a.synth();
  return outdir;
}

beforeAll(async () => {
  work = mkdtempSync(join(tmpdir(), 'dpi-journal-table-'));
  app = synthApp(join(work, 'cdk.out'));
  emu = await startEmulator({ host: '127.0.0.1', port: 0 });
});
afterAll(async () => {
  await emu.stop();
  rmSync(work, { recursive: true, force: true });
});

let dir: string;
let n = 0;
const stateFile = (): string => join(dir, 'local-state.json');
const journalFile = (): string => join(dir, 'journal.json');
const env = (): Record<string, string> => ({ DPI_BASE_URL: emu.url, DPI_REFRESH_TOKEN: DEFAULT_REFRESH_TOKEN });
const local = (...args: string[]): ReturnType<typeof dpi> => dpi([...args, '--local', '--state', stateFile()], { env: env() });
/** The tables of the local journal file. */
const tables = (): string[] => readJournalState(journalFile()).tables.map((t) => t.TableName).sort();

/** Deploys the app locally, then forgets stack Gone (as if it were deleted behind local-deploy's back): its records are orphans. */
async function deployAndForgetGone(): Promise<void> {
  await fetch(`${emu.url}/_emulator/reset`, { method: 'POST' });
  dir = join(work, `t${++n}`);
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
  const s = JSON.parse(readFileSync(stateFile(), 'utf8')) as LocalState;
  writeFileSync(stateFile(), JSON.stringify({
    ...s,
    stacks: s.stacks.filter((x) => x.stackName !== 'Gone'),
    resources: Object.fromEntries(Object.entries(s.resources).filter(([, x]) => x.stack !== 'Gone')),
  }, undefined, 2));
}

/** Renames the journal table every Custom::Dpi* resource of the local state names. */
function nameTableInState(table: string, only?: string): void {
  const s = JSON.parse(readFileSync(stateFile(), 'utf8')) as LocalState;
  for (const r of Object.values(s.resources)) {
    if (!r.type.startsWith('Custom::Dpi') || (only !== undefined && r.stack !== only)) continue;
    (r.properties.Connection as Record<string, unknown>).JournalTableName = table;
  }
  writeFileSync(stateFile(), JSON.stringify(s, undefined, 2));
}

test('--local without --table reads the table the stacks name: the real orphan is found and no default table is made', async () => {
  await deployAndForgetGone();
  expect(tables()).toEqual([CUSTOM]);
  const r = await local('orphans');
  expect(r.stderr).not.toMatch(/does not exist/);
  expect(r.code).toBe(1);
  expect(r.stdout).toMatch(/^1 orphan in /);
  expect(r.stdout).toMatch(/Gone\/Orders/);
  expect(r.stdout).not.toMatch(/Keep\//);
  // The same with --table naming the stacks' table.
  const named = await local('orphans', '--table', CUSTOM);
  expect(named.code).toBe(1);
  expect(named.stdout).toBe(r.stdout);
  // dpi journal list and dpi drift read the same table.
  const list = await local('journal', 'list');
  expect(list.code).toBe(0);
  expect(list.stdout).toMatch(/Gone\/Orders/);
  expect(list.stdout).toMatch(/Keep\/Pipeline/);
  const drift = await local('drift');
  expect(drift.stderr).toBe('');
  expect(drift.stdout).toMatch(/No drift/);
  expect(drift.code).toBe(0);
  expect(tables()).toEqual([CUSTOM]);
});

test('a --table that is not the stacks\' table is refused (naming both), and nothing is created or changed', async () => {
  await deployAndForgetGone();
  const before = readFileSync(journalFile(), 'utf8');
  for (const args of [['orphans'], ['orphans', '--fix', '--yes'], ['drift'], ['drift', '--fix', '--yes'], ['journal', 'list']]) {
    const r = await local(...args, '--table', DEFAULT);
    expect(r.code).toBe(2);
    expect(r.stderr).toMatch(new RegExp(`--table ${DEFAULT} is not the lifecycle journal table of the resources of the local-deploy state .*: they use ${CUSTOM} \\(stacks Keep\\)`));
  }
  expect(readFileSync(journalFile(), 'utf8')).toBe(before);
  expect(tables()).toEqual([CUSTOM]);
});

test('resources naming different tables: refused without --table, listing each table and its stacks', async () => {
  await deployAndForgetGone();
  // Another stack whose connection names another table: the state's resources then name two tables.
  const s = JSON.parse(readFileSync(stateFile(), 'utf8')) as LocalState;
  const keep = Object.values(s.resources).find((r) => r.type === 'Custom::DpiNotificationPipeline')!;
  s.stacks.push({ ...s.stacks.find((x) => x.stackName === 'Keep')!, stackName: 'Other' });
  s.resources['Other/Pipeline'] = { ...keep, stack: 'Other', properties: { ...keep.properties, Connection: { ...(keep.properties.Connection as object), JournalTableName: 'Other-Journal' } } };
  writeFileSync(stateFile(), JSON.stringify(s, undefined, 2));
  const r = await local('orphans');
  expect(r.code).toBe(2);
  expect(r.stderr).toMatch(/use different lifecycle journal tables: Custom-Journal \(stacks Keep\); Other-Journal \(stacks Other\); pass --table NAME/);
  const d = await local('drift');
  expect(d.code).toBe(2);
  expect(d.stderr).toMatch(/use different lifecycle journal tables: .*--stack NAME/);
  // dpi drift --stack of one table reads that table.
  const one = await local('drift', '--stack', 'Keep');
  expect(one.code).toBe(0);
  expect(tables()).toEqual([CUSTOM]);
});

test('a table the stacks name that does not exist: every read errors (naming it, --table and --state), nothing is created', async () => {
  await deployAndForgetGone();
  nameTableInState('Missing-Journal');
  const before = readFileSync(journalFile(), 'utf8');
  for (const args of [['orphans'], ['orphans', '--fix', '--yes'], ['drift'], ['journal', 'list'], ['journal', 'show', 'Keep/Pipeline']]) {
    const r = await local(...args);
    expect({ args, code: r.code }).toEqual({ args, code: 2 });
    expect(r.stderr).toMatch(/the lifecycle journal table Missing-Journal \(the connection's journal table of the resources of the local-deploy state .*\) does not exist in the local-deploy journal .*journal\.json; .* never creates one: check --table .* and --state/);
    expect(r.stdout).not.toMatch(/no orphans/);
  }
  expect(readFileSync(journalFile(), 'utf8')).toBe(before);
  expect(tables()).toEqual([CUSTOM]);
});

test('--local without a local journal: empty only when the state holds nothing; a lost journal of deployed resources is an error', async () => {
  await deployAndForgetGone();
  rmSync(journalFile());
  for (const args of [['journal', 'list'], ['orphans'], ['orphans', '--fix', '--yes']]) {
    const r = await local(...args);
    expect(r.code).not.toBe(0);
    expect(r.stderr).toMatch(/journal .*journal\.json does not exist, but the state .* holds \d+ Custom::Dpi resource\(s\).*the journal that recorded them is lost/);
  }
  expect(existsSync(journalFile())).toBe(false);
  // A state with no Custom::Dpi resource and no pending clean-up: nothing was ever recorded, the journal is empty.
  writeFileSync(stateFile(), JSON.stringify({ version: 1, stacks: [], resources: {}, orphans: [] }));
  const list = await local('journal', 'list');
  expect(list.code).toBe(0);
  expect(list.stdout).toBe(`no records in ${journalFile()} (does not exist yet: nothing recorded)\n`);
  expect(existsSync(journalFile())).toBe(false);
});

describe('a DynamoDB-compatible journal (--endpoint): a read never creates the table', () => {
  afterEach(() => setCloudFormationFactory(undefined));

  test('dpi journal list and dpi drift error on a missing table and leave the endpoint without it', async () => {
    const file = join(work, `endpoint-${++n}.json`);
    const server = await startJournalServer({ stateFile: file });
    try {
      const list = await dpi(['journal', 'list', '--endpoint', server.endpoint], { env: {} });
      expect(list.code).toBe(2);
      expect(list.stderr).toMatch(new RegExp(`the lifecycle journal table ${DEFAULT} \\(the default table; pass --table NAME.*\\) does not exist at ${server.endpoint}; `
        + 'dpi journal list only reads a journal table and never creates one: check --table .* and --endpoint'));
      setCloudFormationFactory(() => fakeCloudFormation([{
        name: 'Cloud',
        resources: [
          { logicalId: 'Table', physicalId: 'Cloud-Table-ABC', type: 'AWS::DynamoDB::Table' },
          {
            logicalId: 'Pipe',
            physicalId: 'p-1',
            type: 'Custom::DpiNotificationPipeline',
            properties: { Connection: { JournalTableName: { Ref: 'Table' } } },
          },
        ],
      }]));
      const drift = await dpi(['drift', '--stack', 'Cloud', '--endpoint', server.endpoint, '--region', 'us-east-1'], { env: env() });
      expect(drift.code).toBe(2);
      // The table is the stack's own (a Ref resolved to its physical ID), not the default one.
      expect(drift.stderr).toMatch(/the lifecycle journal table Cloud-Table-ABC \(the connection's journal table of the resources of stacks Cloud\) does not exist at/);
      const mismatch = await dpi(['drift', '--stack', 'Cloud', '--endpoint', server.endpoint, '--table', DEFAULT], { env: env() });
      expect(mismatch.code).toBe(2);
      expect(mismatch.stderr).toMatch(/--table dpi-lifecycle-journal is not the lifecycle journal table of the resources of stacks Cloud: they use Cloud-Table-ABC/);
    } finally {
      await server.stop();
    }
    expect(readJournalState(file).tables).toEqual([]);
  });
});
