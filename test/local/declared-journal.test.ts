/**
 * A declared lifecycle journal through `dpi local-deploy` (issue 31): the journal's stack makes its table in the local
 * journal server (tags, resource policy), the application stack's handler checks it and writes its records there, a
 * destroy keeps it (RETAIN) and the next deploy uses it again. A table someone made first under the journal's name
 * fails the journal stack's deploy, as CloudFormation's create would, and nothing is made in the service.
 */
import { join } from 'node:path';
import { CreateTableCommand, DynamoDBClient, GetResourcePolicyCommand, ListTagsOfResourceCommand, ScanCommand } from '@aws-sdk/client-dynamodb';
import { App, Stack } from 'aws-cdk-lib';
import * as dynamodb from 'aws-cdk-lib/aws-dynamodb';
import * as secretsmanager from 'aws-cdk-lib/aws-secretsmanager';
import { tempDir } from './helpers';
import { LifecycleJournal, ServiceConnection, Subscription } from '../../src';
import { JOURNAL_MARKER_TAG } from '../../src/contract';
import { DEFAULT_REFRESH_TOKEN, RunningEmulator, startEmulator } from '../../src/emulator';
import { runLocalDeploy } from '../../src/local';
import { stopWarmContainers } from '../../src/local/containers';
import { DECLARED_JOURNAL_TAG } from '../../src/local/journal-policies';
import { startJournalServer } from '../../src/local/journal-server';
import { dpi } from '../cli/helpers';

const ENV = { account: '123456789012', region: 'us-east-1' };
const TABLE = 'team-journal';

let emu: RunningEmulator;
let tmp: { dir: string; cleanup: () => void };
beforeEach(async () => {
  tmp = tempDir('dpi-declared-');
  emu = await startEmulator({ host: '127.0.0.1', port: 0 });
});
afterEach(async () => {
  await emu.stop();
  tmp.cleanup();
});
afterAll(() => stopWarmContainers());

function synth(outdir: string): string {
  const app = new App({ outdir });
  const journal = new LifecycleJournal(new Stack(app, 'DpiJournal', { env: ENV, terminationProtection: true }), 'Journal', { tableName: TABLE });
  const stack = new Stack(app, 'Orders', { env: ENV });
  const connection = new ServiceConnection(stack, 'Dpi', {
    singleOriginUrl: 'https://api.example-dpi.com',
    refreshToken: secretsmanager.Secret.fromSecretNameV2(stack, 'Token', 'dpi/refresh-token'),
    journal,
  });
  new Subscription(stack, 'Orders', { connection, productId: 3001, storageGroupId: 501, remoteIdentityId: 362, productParameters: { marketplace_id: 'ATVPDKIKX0DER' } });
  app.synth();
  return outdir;
}

const run = (destroy = false): ReturnType<typeof runLocalDeploy> => runLocalDeploy({
  app: join(tmp.dir, 'cdk.out'),
  emulatorUrl: emu.url,
  refreshToken: DEFAULT_REFRESH_TOKEN,
  stateFile: join(tmp.dir, 'state', 'local-state.json'),
  destroy,
  progress: () => undefined,
  output: () => undefined,
});

/** Opens the run's saved journal (read-only) and hands a client to `fn`. */
async function withJournal<T>(fn: (c: DynamoDBClient) => Promise<T>): Promise<T> {
  const server = await startJournalServer({ stateFile: join(tmp.dir, 'state', 'journal.json'), readOnly: true });
  const c = new DynamoDBClient({ endpoint: server.endpoint, region: 'us-east-1', credentials: { accessKeyId: 'local', secretAccessKey: 'local' } });
  try {
    return await fn(c);
  } finally {
    c.destroy();
    await server.stop();
  }
}

/** Someone's table under the journal's name, made in the run's journal server before the run (no tag, no policy). */
async function makeLookAlikeTable(): Promise<void> {
  const server = await startJournalServer({ stateFile: join(tmp.dir, 'state', 'journal.json') });
  const c = new DynamoDBClient({ endpoint: server.endpoint, region: 'us-east-1', credentials: { accessKeyId: 'local', secretAccessKey: 'local' } });
  await c.send(new CreateTableCommand({
    TableName: TABLE,
    BillingMode: 'PAY_PER_REQUEST',
    AttributeDefinitions: [{ AttributeName: 'pk', AttributeType: 'S' }, { AttributeName: 'sk', AttributeType: 'S' }],
    KeySchema: [{ AttributeName: 'pk', KeyType: 'HASH' }, { AttributeName: 'sk', KeyType: 'RANGE' }],
  }));
  c.destroy();
  await server.stop();
}

const activeSubscriptions = (): number[] => emu.state().subscriptions.filter((s) => s.status === 'active').map((s) => s.id);

test('the journal stack makes the table; the records go there; a destroy keeps it and the next deploy uses it again', async () => {
  synth(join(tmp.dir, 'cdk.out'));
  const before = activeSubscriptions();
  const r = await run();
  expect(r.success).toBe(true);
  const made = activeSubscriptions().filter((id) => !before.includes(id));
  expect(made).toHaveLength(1);
  await withJournal(async (c) => {
    const arn = `arn:aws:dynamodb:us-east-1:000000000000:table/${TABLE}`;
    expect((await c.send(new ListTagsOfResourceCommand({ ResourceArn: arn }))).Tags).toEqual([{ Key: JOURNAL_MARKER_TAG, Value: 'v1' }]);
    expect((await c.send(new GetResourcePolicyCommand({ ResourceArn: arn }))).Policy).toContain('DpiJournalWritersOnly');
    const keys = ((await c.send(new ScanCommand({ TableName: TABLE }))).Items ?? []).map((i) => i.pk.S);
    expect(keys).toContainEqual(expect.stringMatching(/^Orders\/Orders[0-9A-F]{8}$/));
  });
  // dpi drift checks the application stack; the journal's own stack has nothing to check and is not listed.
  const drift = await dpi(['drift', '--local', '--state', join(tmp.dir, 'state', 'local-state.json')],
    { env: { DPI_BASE_URL: emu.url, DPI_REFRESH_TOKEN: DEFAULT_REFRESH_TOKEN } });
  expect(drift.code).toBe(0);
  expect(drift.stdout).toContain('Stack Orders: 1 resource, 0 drifted');
  expect(drift.stdout).not.toContain('DpiJournal');
  expect((await run(true)).success).toBe(true);
  expect(activeSubscriptions()).toEqual(before);
  await withJournal(async (c) => {
    expect(((await c.send(new ScanCommand({ TableName: TABLE }))).Items ?? []).length).toBeGreaterThan(0);
  });
  const again = await run();
  expect(again.success).toBe(true);
  expect(activeSubscriptions().filter((id) => !before.includes(id))).toHaveLength(1);
  expect(DECLARED_JOURNAL_TAG).toBe(JOURNAL_MARKER_TAG);
});

test('a table made first under the journal\'s name fails the journal stack\'s deploy; nothing is made in the service', async () => {
  synth(join(tmp.dir, 'cdk.out'));
  // Someone made the table before the journal's first deploy (no tag, a policy of their own).
  await makeLookAlikeTable();
  const before = activeSubscriptions();
  const r = await run();
  expect(r.success).toBe(false);
  expect(r.error).toContain(`with identifier '${TABLE}' already exists`);
  expect(activeSubscriptions()).toEqual(before);
});

test('an app that imports the journal by name refuses a look-alike table (no tag, no fence): the Create fails, nothing is made', async () => {
  // The handler's environment (DPI_DECLARED_JOURNAL_TABLES) comes from the provider's template, in the runner as in
  // Lambda: the table is checked as a declared journal, not taken as it is.
  const app = new App({ outdir: join(tmp.dir, 'cdk.out') });
  const stack = new Stack(app, 'Orders', { env: ENV });
  const connection = new ServiceConnection(stack, 'Dpi', {
    singleOriginUrl: 'https://api.example-dpi.com',
    refreshToken: secretsmanager.Secret.fromSecretNameV2(stack, 'Token', 'dpi/refresh-token'),
    journal: LifecycleJournal.fromTableName(stack, 'Journal', TABLE),
  });
  new Subscription(stack, 'Orders', { connection, productId: 3001, storageGroupId: 501, remoteIdentityId: 362, productParameters: { marketplace_id: 'ATVPDKIKX0DER' } });
  app.synth();
  await makeLookAlikeTable();
  const before = activeSubscriptions();
  const r = await run();
  expect(r.success).toBe(false);
  const failed = r.events.find((e) => e.status === 'CREATE_FAILED')?.reason ?? '';
  expect(failed).toContain(`lifecycle journal table ${TABLE}`);
  expect(failed).toMatch(/tag|deletion protection|policy/);
  expect(activeSubscriptions()).toEqual(before);
  expect(await withJournal(async (j) => ((await j.send(new ScanCommand({ TableName: TABLE }))).Items ?? []).length)).toBe(0);
}, 120_000);

test('a table a connection supplies (journalTable) is made on first use in the local journal server, and the records go there', async () => {
  const app = new App({ outdir: join(tmp.dir, 'cdk.out') });
  const stack = new Stack(app, 'Orders', { env: ENV });
  const connection = new ServiceConnection(stack, 'Dpi', {
    singleOriginUrl: 'https://api.example-dpi.com',
    refreshToken: secretsmanager.Secret.fromSecretNameV2(stack, 'Token', 'dpi/refresh-token'),
    journalTable: dynamodb.Table.fromTableName(stack, 'Managed', 'team-managed-journal'),
  });
  new Subscription(stack, 'Orders', { connection, productId: 3001, storageGroupId: 501, remoteIdentityId: 362, productParameters: { marketplace_id: 'ATVPDKIKX0DER' } });
  app.synth();
  const r = await run();
  expect(r.error).toBeUndefined();
  expect(r.success).toBe(true);
  const keys = await withJournal(async (j) => ((await j.send(new ScanCommand({ TableName: 'team-managed-journal' }))).Items ?? []).map((i) => i.pk.S));
  expect(keys).toContainEqual(expect.stringMatching(/^Orders\/Orders[0-9A-F]{8}$/));
}, 120_000);
