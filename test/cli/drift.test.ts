/**
 * `dpi drift` against the emulator: a small app deployed with local-deploy (the real bundled handler), then each kind of
 * change made behind the stack's back through the service's public endpoints (as its web UI would), in both read modes;
 * and the CloudFormation path with a fake CloudFormation.
 */
import { spawn } from 'node:child_process';
import { existsSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { App } from 'aws-cdk-lib';
import { fakeCloudFormation } from './fake-cloudformation';
import { dpi, testNoSecretsPrinted } from './helpers';
import {
  AccountType, HistoryRequest, NotificationPipeline, NotificationType, ProductOrderJobs, Subscription,
} from '../../src';
import { setCloudFormationFactory } from '../../src/cli/commands/drift';
import { DpiClient, ServiceEndpoints } from '../../src/client';
import { DEFAULT_REFRESH_TOKEN, ReadMode, RunningEmulator, startEmulator } from '../../src/emulator';
import { defaultHandlerPath, runLocalDeploy } from '../../src/local';
import { startJournalServer } from '../../src/local/journal-server';
import { LocalState } from '../../src/local/state';
import { connectedStack } from '../local/apps';
import { tempDir } from '../local/helpers';

if (!existsSync(defaultHandlerPath())) throw new Error('run \'npx projen bundle\' before the drift tests');

const day = (offset: number): string => new Date(Date.now() + offset * 86_400_000).toISOString().slice(0, 10);

/** The app: a seller pipeline, an orders subscription with a history request and order jobs. */
function synthApp(outdir: string): string {
  const app = new App({ outdir });
  const { stack, connection, roles } = connectedStack(app, 'Shop');
  const pipeline = new NotificationPipeline(stack, 'Pipeline', {
    connection,
    roles,
    remoteIdentityId: 362,
    accountType: AccountType.SELLER,
    notificationTypes: [NotificationType.ORDER_CHANGE, NotificationType.REPORT_PROCESSING_FINISHED],
  });
  const orders = new Subscription(stack, 'Orders', {
    connection,
    productId: 3001,
    storageGroupId: 501,
    remoteIdentityId: 362,
    productParameters: { marketplace_id: 'ATVPDKIKX0DER' },
    stageIds: [1000, 1001],
    name: 'orders-us',
  });
  orders.node.addDependency(pipeline);
  new HistoryRequest(stack, 'Backfill', { connection, subscription: orders, startDate: day(-5), endDate: day(-3), stageId: 1000 });
  new ProductOrderJobs(stack, 'Jobs', { connection, subscription: orders, orderIds: ['111-1111111-1111111', '222-2222222-2222222'] });
  app.synth();
  return outdir;
}

let emu: RunningEmulator;
let tmp: { dir: string; cleanup: () => void };
let client: DpiClient;

async function startWith(reads: ReadMode): Promise<void> {
  if (emu) await emu.stop();
  emu = await startEmulator({ host: '127.0.0.1', port: 0, reads });
  client = new DpiClient({ endpoints: endpoints(emu.url), refreshToken: DEFAULT_REFRESH_TOKEN, maxAttempts: 1 });
}

function endpoints(url: string): ServiceEndpoints {
  return { baseUrl: url, subscriptionsUrl: url, accountUrl: url, userUrl: url, remoteIdentityUrl: url, authUrl: url };
}

afterAll(async () => {
  await emu.stop();
});
beforeEach(async () => {
  tmp = tempDir('dpi-drift-');
  if (emu) await fetch(`${emu.url}/_emulator/reset`, { method: 'POST' });
});
afterEach(() => tmp.cleanup());

const stateFile = (): string => join(tmp.dir, 'state', 'local-state.json');

/** Deploys the app; returns the physical IDs by logical ID prefix (Pipeline, Orders, Backfill, Jobs) and the assembly. */
async function deploy(): Promise<{ ids: Record<string, string>; logical: Record<string, string>; app: string; state: LocalState }> {
  const app = synthApp(join(tmp.dir, 'cdk.out'));
  const r = await runLocalDeploy({
    app, emulatorUrl: emu.url, stateFile: stateFile(), refreshToken: DEFAULT_REFRESH_TOKEN, progress: () => undefined, output: () => undefined,
  });
  if (!r.success) throw new Error(`local-deploy failed: ${r.error ?? JSON.stringify(r.events.filter((e) => /FAILED/.test(e.status)))}`);
  const state = JSON.parse(readFileSync(stateFile(), 'utf8')) as LocalState;
  const ids: Record<string, string> = {};
  const logical: Record<string, string> = {};
  for (const res of Object.values(state.resources)) {
    const name = ['Pipeline', 'Orders', 'Backfill', 'Jobs'].find((p) => res.logicalId.startsWith(p) && res.type.startsWith('Custom::Dpi'));
    if (name) {
      ids[name] = res.physicalId;
      logical[name] = res.logicalId;
    }
  }
  expect(Object.keys(ids).sort()).toEqual(['Backfill', 'Jobs', 'Orders', 'Pipeline']);
  return { ids, logical, app, state };
}

const env = (): Record<string, string> => ({ DPI_BASE_URL: emu.url, DPI_REFRESH_TOKEN: DEFAULT_REFRESH_TOKEN });
/** `dpi drift --all` (every row; the default output, a summary and the rows not IN_SYNC, is tested in drift-output.test.ts). */
const drift = (...extra: string[]): ReturnType<typeof dpi> => dpi(['drift', '--local', '--state', stateFile(), '--all', ...extra], { env: env() });

/** The expected table of stack Shop, with the rows in deployment order. */
function table(l: Record<string, string>, ids: Record<string, string>, rows: Record<string, [string, string[]]>, drifted: number): string {
  const order = ['Pipeline', 'Orders', 'Backfill', 'Jobs'];
  const types: Record<string, string> = { Pipeline: 'NotificationPipeline', Orders: 'Subscription', Backfill: 'HistoryRequest', Jobs: 'ProductOrderJobs' };
  const cells: string[][] = [['RESOURCE', 'TYPE', 'PHYSICAL ID', 'STATUS', 'DETAIL']];
  for (const k of order) {
    const [status, details] = rows[k];
    cells.push([l[k], types[k], ids[k], status, details[0] ?? '']);
    for (const d of details.slice(1)) cells.push(['', '', '', '', d]);
  }
  const widths = cells[0].map((_, i) => Math.max(...cells.map((c) => c[i].length)));
  const lines = cells.map((c) => c.map((x, i) => (i === c.length - 1 ? x : x.padEnd(widths[i]))).join('  ').replace(/\s+$/, ''));
  const counts = ['IN_SYNC', 'MODIFIED', 'DELETED', 'NOT_CHECKED'].map((v) => [v, order.filter((k) => rows[k][0] === v).length] as const)
    .filter(([, n]) => n > 0).map(([v, n]) => `${v} ${n}`).join(', ');
  return `Stack Shop: 4 resources, ${drifted} drifted (${counts})\n${lines.join('\n')}\n`;
}

const MINIMAL_NOT_CHECKED = (l: Record<string, string>): string =>
  `  ${l.Pipeline}: not shown by the service, not checked: remoteIdentityId, notificationTypes, deploymentRegion, roles\n`
  + `  ${l.Orders}: not shown by the service, not checked: name, storageGroupId, remoteIdentityId, productParameters, stageIds\n`
  + `  ${l.Backfill}: not shown by the service, not checked: startDate, endDate, stageId\n`
  + `  ${l.Jobs}: not shown by the service, not checked: orderIds\n`;

describe('minimal reads (only what the spec shows)', () => {
  beforeAll(async () => startWith('minimal'));

  test('IN_SYNC right after the deploy: the table, what could not be checked, exit 0; --json', async () => {
    const { ids, logical } = await deploy();
    const r = await drift();
    expect(r.stderr).toBe('');
    expect(r.code).toBe(0);
    const inSync: Record<string, [string, string[]]> = {
      Pipeline: ['IN_SYNC', ['']], Orders: ['IN_SYNC', ['']], Backfill: ['IN_SYNC', ['status pending']], Jobs: ['IN_SYNC', ['']],
    };
    // The closing summary says what could not be checked (not only --all's rows).
    expect(r.stdout).toBe(table(logical, ids, inSync, 0) + MINIMAL_NOT_CHECKED(logical)
      + `\nNo drift in what the service shows (journal: ${join(tmp.dir, 'state', 'journal.json')})\n`
      + 'Not checked on 4 of 4 resources (the service does not show them): remoteIdentityId,\n'
      + '  notificationTypes, deploymentRegion, roles, name, storageGroupId, productParameters, stageIds,\n'
      + '  startDate, endDate, stageId, orderIds\n');
    const short = await dpi(['drift', '--local', '--state', stateFile()], { env: env() });
    expect(short.stdout).toMatch(/\nNo drift in what the service shows \(journal: [^)]+\)\nNot checked on 4 of 4 resources \(the service does not show them\): remoteIdentityId,\n {2}notificationTypes,/);
    const j = await drift('--json');
    expect(j.code).toBe(0);
    type Doc = { drifted: number; stacks: Array<{ stack: string; resources: Array<{ logicalId: string; status: string; notChecked: string[] }> }> };
    const doc = JSON.parse(j.stdout) as Doc;
    expect(doc.drifted).toBe(0);
    expect(doc.stacks.map((s) => s.stack)).toEqual(['Shop']);
    expect(doc.stacks[0].resources.map((x) => [x.logicalId, x.status])).toEqual([
      [logical.Pipeline, 'IN_SYNC'], [logical.Orders, 'IN_SYNC'], [logical.Backfill, 'IN_SYNC'], [logical.Jobs, 'IN_SYNC'],
    ]);
    expect(doc.stacks[0].resources[1].notChecked).toEqual(['name', 'storageGroupId', 'remoteIdentityId', 'productParameters', 'stageIds']);
  });

  test('a subscription paused in the UI is MODIFIED (status active -> paused), exit 1', async () => {
    const { ids, logical } = await deploy();
    await client.subscriptions.update(ids.Orders, { status: 'paused' });
    const r = await drift();
    expect(r.code).toBe(1);
    expect(r.stdout).toContain(table(logical, ids, {
      Pipeline: ['IN_SYNC', ['']], Orders: ['MODIFIED', ['status: active -> paused']], Backfill: ['IN_SYNC', ['status pending']], Jobs: ['IN_SYNC', ['']],
    }, 1));
    expect(r.stdout).toMatch(/\n1 of 4 resources drifted \(journal: /);
    const j = JSON.parse((await drift('--json')).stdout) as { drifted: number; stacks: Array<{ resources: Array<{ status: string; differences: unknown[] }> }> };
    expect(j.drifted).toBe(1);
    expect(j.stacks[0].resources[1]).toMatchObject({ status: 'MODIFIED', differences: [{ property: 'status', declared: 'active', live: 'paused' }] });
  });

  test('a subscription invalidated and a history request cancelled are DELETED', async () => {
    const { ids, logical } = await deploy();
    await client.history.cancel(ids.Backfill);
    await client.subscriptions.update(ids.Orders, { status: 'invalid' });
    const r = await drift();
    expect(r.code).toBe(1);
    expect(r.stdout).toContain(table(logical, ids, {
      Pipeline: ['IN_SYNC', ['']], Orders: ['DELETED', ['status invalid']], Backfill: ['DELETED', ['status cancelled']], Jobs: ['IN_SYNC', ['']],
    }, 2));
    expect(r.stdout).toMatch(/\n2 of 4 resources drifted/);
  });

  test('the pipeline\'s own subscription invalidated: the pipeline is DELETED', async () => {
    const { ids, logical } = await deploy();
    await client.subscriptions.update(ids.Pipeline, { status: 'invalid' });
    const r = await drift('--stack', 'Shop');
    expect(r.code).toBe(1);
    expect(r.stdout).toContain(table(logical, ids, {
      Pipeline: ['DELETED', ['its product-107 subscription is invalid']], Orders: ['IN_SYNC', ['']], Backfill: ['IN_SYNC', ['status pending']], Jobs: ['IN_SYNC', ['']],
    }, 1));
  });

  test('an upstream notification type removed through the service: minimal reads show no stored parameters, so reported as not checked (never a wrong IN_SYNC claim about it)', async () => {
    const { ids, logical, state } = await deploy();
    const props = Object.values(state.resources).find((x) => x.logicalId === logical.Pipeline)!.properties as Record<string, string>;
    // What the web UI would do: the same pipeline with one type fewer.
    await client.notifications.update(362, ids.Pipeline, { notification_types: ['ORDER_CHANGE'], role_arn: props.RoleArn, eb_to_fh_role_arn: props.EbToFhRoleArn, aws_region: 'us-east-1' });
    const r = await drift('--json');
    expect(r.code).toBe(0);
    const doc = JSON.parse(r.stdout) as { stacks: Array<{ resources: Array<{ status: string; notChecked: string[] }> }> };
    expect(doc.stacks[0].resources[0]).toMatchObject({ status: 'IN_SYNC' });
    expect(doc.stacks[0].resources[0].notChecked).toContain('notificationTypes');
  });

  test('usage and connection errors exit 2: no local state, an unknown --stack, no refresh token', async () => {
    const none = await drift();
    expect(none.code).toBe(2);
    expect(none.stderr).toContain(`no local-deploy state in ${stateFile()}`);
    await deploy();
    const bad = await drift('--stack', 'Nope');
    expect(bad.code).toBe(2);
    expect(bad.stderr).toContain('--stack Nope: not in the local-deploy state');
    const noToken = await dpi(['drift', '--local', '--state', stateFile()], { env: { DPI_BASE_URL: emu.url } });
    expect(noToken.code).toBe(2);
    expect(noToken.stderr).toContain('no refresh token');
  });
});

describe('after a local-deploy with its embedded emulator', () => {
  test('--local without a service address reads the embedded emulator\'s state (emulator-state.json beside --state)', async () => {
    const app = synthApp(join(tmp.dir, 'cdk.out'));
    const r = await runLocalDeploy({ app, stateFile: stateFile(), progress: () => undefined, output: () => undefined });
    expect([r.success, r.error]).toEqual([true, undefined]);
    const inSync = await dpi(['drift', '--local', '--state', stateFile()], { env: {} });
    expect([inSync.code, inSync.stderr]).toEqual([0, '']);
    expect(inSync.stdout).toMatch(/^Stack Shop: 4 resources, 0 drifted \(IN_SYNC 4\)\n/);
    // The subscription invalidated in the service's stored state (as the web UI would have left it).
    const file = join(tmp.dir, 'state', 'emulator-state.json');
    const saved = JSON.parse(readFileSync(file, 'utf8')) as { state: { subscriptions: Array<{ id: number; product: number; status: string }> } };
    const deployed = JSON.parse(readFileSync(stateFile(), 'utf8')) as LocalState;
    const ordersId = Object.values(deployed.resources).find((x) => x.type === 'Custom::DpiSubscription')!.physicalId;
    const orders = saved.state.subscriptions.find((x) => String(x.id) === ordersId)!;
    orders.status = 'invalid';
    writeFileSync(file, JSON.stringify(saved));
    const drifted = await dpi(['drift', '--local', '--state', stateFile(), '--json'], { env: {} });
    expect([drifted.code, drifted.stderr]).toEqual([1, '']);
    type Doc = { drifted: number; stacks: Array<{ resources: Array<{ physicalId: string; status: string; reason?: string }> }> };
    const doc = JSON.parse(drifted.stdout) as Doc;
    expect(doc.drifted).toBe(1);
    expect(doc.stacks[0].resources.find((x) => x.physicalId === String(orders.id))).toMatchObject({ status: 'DELETED', reason: 'status invalid' });
    // The embedded emulator saves its state when it stops (with the deploy's address and rate window as it found them:
    // the command line is another client): not while a local-deploy of another process holds the state.
    const before = readFileSync(file, 'utf8');
    const window = (t: string): unknown[] => [(JSON.parse(t) as { address?: unknown }).address, (JSON.parse(t) as { rateHits?: unknown }).rateHits];
    expect(window(before)).toEqual(window(JSON.stringify(saved)));
    expect(window(before)[0]).toEqual({ host: '127.0.0.1', port: Number(new URL(r.emulatorUrl!).port) });
    const other = spawn(process.execPath, ['-e', 'setTimeout(() => {}, 60000)']);
    try {
      writeFileSync(`${stateFile()}.lock`, String(other.pid));
      const busy = await dpi(['drift', '--local', '--state', stateFile()], { env: {} });
      expect(busy.code).toBe(2);
      expect(busy.stderr).toContain(`another local-deploy (pid ${other.pid}) is using`);
      expect(readFileSync(file, 'utf8')).toBe(before);
    } finally {
      other.kill();
      rmSync(`${stateFile()}.lock`, { force: true });
    }
  });
});

describe('vendor reads (the vendor documentation\'s fields)', () => {
  beforeAll(async () => startWith('vendor'));

  test('IN_SYNC right after the deploy; name, storage, identity, stage IDs, parameters, upstream types and order IDs are compared', async () => {
    const { ids, logical } = await deploy();
    const requests = async (): Promise<Array<{ method: string; path: string }>> => (await fetch(`${emu.url}/_emulator/requests`)).json() as never;
    const before = (await requests()).length;
    const r = await drift();
    expect(r.code).toBe(0);
    expect(r.stdout).toContain(table(logical, ids, {
      Pipeline: ['IN_SYNC', ['']], Orders: ['IN_SYNC', ['']], Backfill: ['IN_SYNC', ['status pending']], Jobs: ['IN_SYNC', ['']],
    }, 0));
    // The vendor's parameter reads (GET /v2/spp/bulk) show stage IDs, parameters and the pipeline's stored types;
    // a pipeline's region and roles are stored nowhere a read shows.
    expect(r.stdout).not.toContain(`${logical.Orders}: not shown`);
    expect(r.stdout).toContain(`  ${logical.Pipeline}: not shown by the service, not checked: deploymentRegion, roles\n`);
    // One bulk parameter read for the subscription and the pipeline together.
    const spp = (await requests()).slice(before).filter((x) => x.path.startsWith('/v2/spp'));
    expect(spp.map((x) => `${x.method} ${x.path}`)).toEqual(['GET /v2/spp/bulk']);
    expect(r.stdout).not.toContain(`${logical.Jobs}: not shown`);
    expect(r.stdout).not.toContain(`${logical.Backfill}: not shown`);
  });

  test('name, storage, a parameter and stage IDs edited in the UI: each differing property as declared -> live', async () => {
    const { ids, logical } = await deploy();
    await fetch(`${emu.url}/_emulator/fixtures`, {
      method: 'POST', headers: { 'content-type': 'application/json' }, body: JSON.stringify({ storages: [{ id: 503, account: 1001, status: 'active' }] }),
    });
    await client.subscriptions.update(ids.Orders, { name: 'renamed by hand', storage_group: 503, product_parameters: { marketplace_id: 'A2EUQ1WTGCTBG2' } });
    const r = await drift();
    expect(r.code).toBe(1);
    expect(r.stdout).toContain(table(logical, ids, {
      Pipeline: ['IN_SYNC', ['']],
      Orders: ['MODIFIED', ['name: orders-us -> renamed by hand', 'storageGroupId: 501 -> 503', 'productParameters.marketplace_id: ATVPDKIKX0DER -> A2EUQ1WTGCTBG2']],
      Backfill: ['IN_SYNC', ['status pending']],
      Jobs: ['IN_SYNC', ['']],
    }, 1));
    expect(r.stdout).not.toContain(`${logical.Orders}: not shown`);
  });

  test('stage IDs edited in the UI (PATCH /v2/sub with product_parameters.stage_ids): stageIds MODIFIED, exit 1', async () => {
    const { ids, logical } = await deploy();
    await client.subscriptions.update(ids.Orders, { product_parameters: { stage_ids: '[1000, 1001, 1002]' } });
    const r = await drift();
    expect(r.code).toBe(1);
    expect(r.stdout).toContain(table(logical, ids, {
      Pipeline: ['IN_SYNC', ['']],
      Orders: ['MODIFIED', ['stageIds: 1000,1001 -> 1000,1001,1002']],
      Backfill: ['IN_SYNC', ['status pending']],
      Jobs: ['IN_SYNC', ['']],
    }, 1));
  });

  test('an upstream type removed in the UI (unified PATCH, then the stored subscriptions parameter updated as the vendor tutorial says): notificationTypes MODIFIED', async () => {
    const { ids, logical, state } = await deploy();
    const props = Object.values(state.resources).find((x) => x.logicalId === logical.Pipeline)!.properties as Record<string, string>;
    const result = await client.notifications.update(362, ids.Pipeline,
      { notification_types: ['ORDER_CHANGE'], role_arn: props.RoleArn, eb_to_fh_role_arn: props.EbToFhRoleArn, aws_region: 'us-east-1' });
    expect(Object.keys(result.subscriptions)).toEqual(['ORDER_CHANGE']);
    await client.subscriptions.update(ids.Pipeline, { product_parameters: { subscriptions: JSON.stringify(result.subscriptions) } });
    const r = await drift();
    expect(r.code).toBe(1);
    expect(r.stdout).toContain(table(logical, ids, {
      Pipeline: ['MODIFIED', ['notificationTypes: ORDER_CHANGE,REPORT_PROCESSING_FINISHED -> ORDER_CHANGE']],
      Orders: ['IN_SYNC', ['']],
      Backfill: ['IN_SYNC', ['status pending']],
      Jobs: ['IN_SYNC', ['']],
    }, 1));
  });
});

describe('CloudFormation (a fake client: no AWS traffic)', () => {
  beforeAll(async () => startWith('minimal'));
  afterEach(() => setCloudFormationFactory(undefined));

  test('stacks from the cloud assembly, resources from ListStackResources, the journal from a DynamoDB endpoint', async () => {
    const { ids, logical, app, state } = await deploy();
    const asked: Array<{ region?: string; profile?: string }> = [];
    const calls: string[] = [];
    setCloudFormationFactory((o) => {
      asked.push(o);
      return fakeCloudFormation([{
        name: 'Shop',
        resources: [
          ...Object.values(state.resources).map((x) => ({ logicalId: x.logicalId, physicalId: x.physicalId, type: x.type })),
          { logicalId: 'Gone', physicalId: '1', type: 'Custom::DpiSubscription', status: 'DELETE_COMPLETE' },
          { logicalId: 'Queue', physicalId: 'q', type: 'AWS::SQS::Queue' },
        ],
      }], calls);
    });
    await client.subscriptions.update(ids.Orders, { status: 'paused' });
    // The journal of the local deploy, served as a DynamoDB endpoint.
    const server = await startJournalServer({ stateFile: join(tmp.dir, 'state', 'journal.json') });
    try {
      const r = await dpi(['drift', '--app', app, '--region', 'eu-west-1', '--endpoint', server.endpoint, '--all'], { env: env() });
      expect(r.stderr).toBe('');
      expect(r.code).toBe(1);
      expect(asked).toEqual([{ region: 'eu-west-1', profile: undefined }]);
      expect(calls).toEqual(['DescribeStacksCommand Shop', 'ListStackResourcesCommand Shop', 'GetTemplateCommand Shop']);
      // Rows in ListStackResources order; deleted and foreign resources are left out.
      const order = Object.values(state.resources).map((x) => x.logicalId);
      expect(r.stdout.split('\n').slice(2, 6).map((l) => l.split(/\s+/)[0])).toEqual(order);
      expect(r.stdout).toMatch(new RegExp(`${logical.Orders}\\s+Subscription\\s+${ids.Orders}\\s+MODIFIED\\s+status: active -> paused\\n`));
      const missing = await dpi(['drift', '--stack', 'Other', '--endpoint', server.endpoint], { env: env() });
      expect(missing.code).toBe(2);
      expect(missing.stderr).toContain('stack Other does not exist in CloudFormation');
    } finally {
      await server.stop();
    }
  });

  test('the journal table is the deployed one, not the local cloud assembly\'s (which may be older or newer than the deploy)', async () => {
    const { app, state } = await deploy();
    // Deployed from elsewhere with another journal table: the local assembly still names the default table.
    setCloudFormationFactory(() => fakeCloudFormation([{
      name: 'Shop',
      resources: Object.values(state.resources).map((x) => ({
        logicalId: x.logicalId,
        physicalId: x.physicalId,
        type: x.type,
        properties: { ...x.properties, Connection: { ...(x.properties.Connection as object), JournalTableName: 'team-journal' } },
      })),
    }]));
    const server = await startJournalServer({ stateFile: join(tmp.dir, 'state', 'journal.json') });
    try {
      const r = await dpi(['drift', '--app', app, '--region', 'eu-west-1', '--endpoint', server.endpoint], { env: env() });
      expect(r.code).toBe(2);
      expect(r.stderr).toContain('the lifecycle journal table team-journal (the connection\'s journal table of the resources of stacks Shop) does not exist');
      const wrong = await dpi(['drift', '--app', app, '--region', 'eu-west-1', '--endpoint', server.endpoint, '--table', 'dpi-lifecycle-journal'], { env: env() });
      expect(wrong.code).toBe(2);
      expect(wrong.stderr).toContain('--table dpi-lifecycle-journal is not the lifecycle journal table of the resources of stacks Shop: they use team-journal');
    } finally {
      await server.stop();
    }
  });

  test('without --stack and without a cloud assembly: exit 2 naming both ways', async () => {
    setCloudFormationFactory(() => fakeCloudFormation([]));
    const r = await dpi(['drift', '--app', join(tmp.dir, 'nothing')], { env: env() });
    expect(r.code).toBe(2);
    expect(r.stderr).toContain('manifest.json not found');
    expect(r.stderr).toContain('--stack NAME');
  });
});

testNoSecretsPrinted();
