/**
 * `dpi drift` output (a summary and the rows not IN_SYNC by default, `--all`, `--json` with a summary) and
 * `dpi drift --fix` end to end in --local mode: an app deployed with local-deploy (the real bundled handler), a
 * subscription paused through the service as its web UI would (`PATCH /v2/sub/{id}` status paused), then drift (exit 1,
 * the hint), --fix without a terminal (refused), --fix --yes (restored through the handler's converge; exit 0) and drift
 * again (exit 0). A bystander subscription made directly through the service and a record the journal marks released
 * are never touched.
 */
import { spawn } from 'node:child_process';
import { existsSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { App } from 'aws-cdk-lib';
import { dpi, testNoSecretsPrinted } from './helpers';
import { AccountType, NotificationPipeline, NotificationType, Subscription } from '../../src';
import { driftSeams } from '../../src/cli/commands/drift-fix';
import { DpiClient } from '../../src/client';
import { DEFAULT_JOURNAL_TABLE } from '../../src/contract';
import { DEFAULT_REFRESH_TOKEN, RunningEmulator, startEmulator } from '../../src/emulator';
import { dynamoJournal } from '../../src/handler/journal';
import { defaultHandlerPath, runLocalDeploy } from '../../src/local';
import { startJournalServer } from '../../src/local/journal-server';
import { LocalState } from '../../src/local/state';
import { connectedStack } from '../local/apps';
import { tempDir } from '../local/helpers';

if (!existsSync(defaultHandlerPath())) throw new Error('run \'npx projen bundle\' before the drift tests');

let emu: RunningEmulator;
let client: DpiClient;
let tmp: { dir: string; cleanup: () => void };

beforeAll(async () => {
  emu = await startEmulator({ host: '127.0.0.1', port: 0, reads: 'minimal' });
  const u = emu.url;
  client = new DpiClient({
    endpoints: { baseUrl: u, subscriptionsUrl: u, accountUrl: u, userUrl: u, remoteIdentityUrl: u, authUrl: u },
    refreshToken: DEFAULT_REFRESH_TOKEN,
    maxAttempts: 1,
  });
});
afterAll(async () => {
  await emu.stop();
});
beforeEach(async () => {
  tmp = tempDir('dpi-drift-fix-');
  await fetch(`${emu.url}/_emulator/reset`, { method: 'POST' });
  driftSeams.stdinIsTTY = () => false;
});
afterEach(() => tmp.cleanup());

const stateFile = (): string => join(tmp.dir, 'state', 'local-state.json');
const env = (): Record<string, string> => ({ DPI_BASE_URL: emu.url, DPI_REFRESH_TOKEN: DEFAULT_REFRESH_TOKEN });
const drift = (...extra: string[]): ReturnType<typeof dpi> => dpi(['drift', '--local', '--state', stateFile(), ...extra], { env: env() });

/** Deploys a pipeline and two subscriptions; returns the subscriptions' physical IDs and logical IDs. */
async function deploy(): Promise<{ orders: string; returns: string; logical: Record<string, string> }> {
  const app = new App({ outdir: join(tmp.dir, 'cdk.out') });
  const { stack, connection, roles } = connectedStack(app, 'Shop');
  new NotificationPipeline(stack, 'Pipeline', {
    connection, roles, remoteIdentityId: 362, accountType: AccountType.SELLER, notificationTypes: [NotificationType.ORDER_CHANGE],
  });
  new Subscription(stack, 'Orders', { connection, productId: 3001, storageGroupId: 501, remoteIdentityId: 362, name: 'orders-us', productParameters: { marketplace_id: 'ATVPDKIKX0DER' } });
  new Subscription(stack, 'Returns', { connection, productId: 3001, storageGroupId: 501, remoteIdentityId: 362, name: 'returns-us', productParameters: { marketplace_id: 'A1F83G8C2ARO7P' } });
  app.synth();
  const r = await runLocalDeploy({
    app: join(tmp.dir, 'cdk.out'), emulatorUrl: emu.url, stateFile: stateFile(), refreshToken: DEFAULT_REFRESH_TOKEN, progress: () => undefined, output: () => undefined,
  });
  if (!r.success) throw new Error(`local-deploy failed: ${r.error ?? JSON.stringify(r.events.filter((e) => /FAILED/.test(e.status)))}`);
  const state = JSON.parse(readFileSync(stateFile(), 'utf8')) as LocalState;
  const logical: Record<string, string> = {};
  const ids: Record<string, string> = {};
  for (const x of Object.values(state.resources)) {
    const name = ['Pipeline', 'Orders', 'Returns'].find((p) => x.logicalId.startsWith(p) && x.type.startsWith('Custom::Dpi'));
    if (name) {
      logical[name] = x.logicalId;
      ids[name] = x.physicalId;
    }
  }
  return { orders: ids.Orders, returns: ids.Returns, logical };
}

const status = async (id: string): Promise<string> => (await client.subscriptions.get(id)).status;

test('the default output is a summary and the rows not IN_SYNC; --all prints every row; --json every row and a summary', async () => {
  const { orders, logical } = await deploy();
  const clean = await drift();
  expect([clean.code, clean.stderr]).toEqual([0, '']);
  expect(clean.stdout.split('\n')[0]).toBe('Stack Shop: 3 resources, 0 drifted (IN_SYNC 3)');
  expect(clean.stdout).not.toContain('RESOURCE');
  expect(clean.stdout).not.toContain('dpi drift --fix');
  expect(clean.stdout).not.toContain('in-sync resources have properties');
  await client.subscriptions.update(orders, { status: 'paused' });
  const r = await drift();
  expect(r.code).toBe(1);
  expect(r.stdout.split('\n')[0]).toBe('Stack Shop: 3 resources, 1 drifted (IN_SYNC 2, MODIFIED 1)');
  expect(r.stdout).toMatch(new RegExp(`\\n${logical.Orders}\\s+Subscription\\s+${orders}\\s+MODIFIED\\s+status: active -> paused\\n`));
  expect(r.stdout).not.toContain(logical.Returns);
  expect(r.stdout).not.toContain(logical.Pipeline);
  expect(r.stdout).toContain('2 in-sync resources have properties the service does not show (not checked); --all lists them');
  expect(r.stdout.endsWith('run `dpi drift --fix` to re-apply the declared state\n')).toBe(true);
  const all = await drift('--all');
  expect(all.code).toBe(1);
  for (const l of Object.values(logical)) expect(all.stdout).toContain(l);
  expect(all.stdout.match(/ {2}IN_SYNC\b/g)?.length).toBe(2);
  const j = await drift('--json');
  type Doc = {
    summary: { resources: number; drifted: number; counts: Record<string, number>; stacks: Array<{ stack: string; counts: Record<string, number> }> };
    stacks: Array<{ resources: unknown[] }>;
  };
  const doc = JSON.parse(j.stdout) as Doc;
  expect(doc.stacks[0].resources).toHaveLength(3);
  expect(doc.summary).toMatchObject({ resources: 3, drifted: 1, counts: { IN_SYNC: 2, MODIFIED: 1, DELETED: 0, NOT_CHECKED: 0 } });
  expect(doc.summary.stacks).toEqual([{ stack: 'Shop', resources: 3, drifted: 1, counts: { IN_SYNC: 2, MODIFIED: 1, DELETED: 0, NOT_CHECKED: 0 } }]);
});

test('--fix: refused without a terminal and --yes; with --yes the paused subscription is resumed through the handler, a bystander is left alone', async () => {
  const { orders, logical } = await deploy();
  // A bystander: made directly through the service (not by the app), paused too.
  const bystander = await client.subscriptions.create({
    account: 1001,
    user: 2001,
    product: 3001,
    name: 'made in the UI',
    remote_identity: 362,
    storage_group: 501,
    date_start: '2026-01-01T00:00:00Z',
    product_parameters: { marketplace_id: 'ATVPDKIKX0DER' },
  });
  await client.subscriptions.update(bystander.id, { status: 'paused' });
  await client.subscriptions.update(orders, { status: 'paused' });
  expect((await drift()).code).toBe(1);

  const refused = await drift('--fix');
  expect(refused.code).toBe(2);
  expect(refused.stderr).toContain('refusing to re-apply the declared state of 1 modified resource without a confirmation: '
    + 'stdin is not a terminal; pass --yes');
  expect(await status(orders)).toBe('paused');
  expect((await drift('--yes')).stderr).toContain('--yes is only meaningful with --fix');

  const fixed = await drift('--fix', '--yes');
  expect(fixed.code).toBe(0);
  expect(fixed.stdout).toMatch(new RegExp(`restored  Shop/Orders\\w* \\(Subscription, ${orders}\\): status: paused -> active\\n`));
  expect(await status(orders)).toBe('active');
  expect(await status(bystander.id)).toBe('paused');
  const again = await drift();
  expect(again.code).toBe(0);
  expect(again.stdout).toContain('No drift');
  // The journal ends as an Update with the same declaration leaves it: active, the declared state applied.
  const server = await startJournalServer({ stateFile: join(tmp.dir, 'state', 'journal.json') });
  try {
    const journal = dynamoJournal({
      create: true, table: DEFAULT_JOURNAL_TABLE, endpoint: server.endpoint, sleep: (ms) => new Promise((r) => setTimeout(r, ms)),
    });
    const recs = await journal.records<{ applied: { status: string } }>(`Shop/${logical.Orders}`);
    const rec = recs.find((x) => x.physicalId === orders)!;
    expect([rec.state, rec.doc.applied.status]).toEqual(['active', 'active']);
  } finally {
    await server.stop();
  }
});

test('--fix leaves alone a record the journal marks released (adopted, then let go): skipped, still paused, exit 1', async () => {
  const { orders, logical } = await deploy();
  const server = await startJournalServer({ stateFile: join(tmp.dir, 'state', 'journal.json') });
  try {
    const journal = dynamoJournal({
      create: true, table: DEFAULT_JOURNAL_TABLE, endpoint: server.endpoint, sleep: (ms) => new Promise((r) => setTimeout(r, ms)),
    });
    const key = `Shop/${logical.Orders}`;
    const rec = (await journal.records<Record<string, unknown>>(key)).find((x) => x.physicalId === orders)!;
    await journal.save(rec, 'released', { ...rec.doc, adopted: true });
  } finally {
    await server.stop();
  }
  await client.subscriptions.update(orders, { status: 'paused' });
  const r = await drift('--fix', '--yes');
  expect(r.code).toBe(1);
  expect(r.stdout).toContain(`skipped  Shop/${logical.Orders} (Subscription, ${orders}): its journal record is released`);
  expect(await status(orders)).toBe('paused');
});

test('--local --fix while a dpi local-deploy holds the state: refused before any change; drift alone still reads', async () => {
  const { orders } = await deploy();
  await client.subscriptions.update(orders, { status: 'paused' });
  // A local-deploy of another process holds the state's lock.
  const other = spawn(process.execPath, ['-e', 'setTimeout(() => {}, 60000)']);
  try {
    writeFileSync(`${stateFile()}.lock`, String(other.pid));
    const fix = await drift('--fix', '--yes');
    expect(fix.code).toBe(2);
    expect(fix.stderr).toContain(`another local-deploy (pid ${other.pid}) is using ${stateFile()}`);
    expect(await status(orders)).toBe('paused');
    const read = await drift();
    expect(read.code).toBe(1);
    expect(read.stdout).toContain('status: active -> paused');
  } finally {
    other.kill();
    rmSync(`${stateFile()}.lock`, { force: true });
  }
});

testNoSecretsPrinted();

test('--local --fix refuses a service address that is not loopback (the local journal proves nothing there), before any read', async () => {
  const { orders } = await deploy();
  await client.subscriptions.update(orders, { status: 'paused' });
  const r = await dpi(['drift', '--local', '--state', stateFile(), '--fix', '--yes'], {
    env: { DPI_BASE_URL: 'https://api.example-dpi.com', DPI_REFRESH_TOKEN: DEFAULT_REFRESH_TOKEN },
  });
  expect(r.code).toBe(2);
  expect(r.stderr).toContain('--local --fix: the service address https://api.example-dpi.com is not the emulator of the local-deploy state');
  expect(await status(orders)).toBe('paused');
});
