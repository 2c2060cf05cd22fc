/**
 * The runner with the REAL bundled handler against the emulator, on tiny apps
 * synthesized in-process with the real constructs.
 */
import { spawnSync } from 'node:child_process';
import { existsSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { synthTinyApp, TinyAppOptions } from './apps';
import { tempDir } from './helpers';
import { localDeployCommand } from '../../src/cli/commands/local-deploy';
import { DEFAULT_REFRESH_TOKEN, EmulatorStateSnapshot, RunningEmulator, startEmulator } from '../../src/emulator';
import { defaultHandlerPath, findPackageRoot, LocalDeployOptions, LocalDeployResult, runLocalDeploy } from '../../src/local';

const BUNDLE = defaultHandlerPath();
if (!existsSync(BUNDLE)) {
  throw new Error(`${BUNDLE} is missing: run 'npx projen bundle' before the local-deploy tests (the test task bundles first)`);
}

let emulator: RunningEmulator;
let tmp: { dir: string; cleanup: () => void };
let output: string[];
let n = 0;

beforeAll(async () => {
  emulator = await startEmulator({ port: 0 });
});
afterAll(async () => {
  await emulator.stop();
});
beforeEach(async () => {
  await admin('POST', '/_emulator/reset');
  tmp = tempDir();
  output = [];
});
afterEach(() => tmp.cleanup());

async function admin(method: string, path: string, body?: unknown): Promise<unknown> {
  const res = await fetch(`${emulator.url}${path}`, {
    method,
    headers: body === undefined ? {} : { 'content-type': 'application/json' },
    body: body === undefined ? undefined : JSON.stringify(body),
  });
  if (!res.ok) throw new Error(`${method} ${path}: ${res.status}`);
  return res.status === 204 ? undefined : res.json();
}

const stateFile = (): string => join(tmp.dir, 'state', 'local-state.json');

async function deploy(app: TinyAppOptions, extra: Partial<LocalDeployOptions> = {}): Promise<LocalDeployResult> {
  n += 1;
  const outdir = synthTinyApp(join(tmp.dir, `cdk.out.${n}`), app);
  return runLocalDeploy({
    app: outdir,
    emulatorUrl: emulator.url,
    stateFile: stateFile(),
    refreshToken: DEFAULT_REFRESH_TOKEN,
    progress: (l) => output.push(l),
    output: (l) => output.push(l),
    ...extra,
  });
}

function destroy(): Promise<LocalDeployResult> {
  return runLocalDeploy({
    emulatorUrl: emulator.url,
    stateFile: stateFile(),
    destroy: true,
    refreshToken: DEFAULT_REFRESH_TOKEN,
    progress: (l) => output.push(l),
    output: (l) => output.push(l),
  });
}

const s = (): EmulatorStateSnapshot => emulator.state();
const active107 = (): number[] => s().subscriptions.filter((x) => x.product === 107 && x.status === 'active').map((x) => x.id);
const pipelineSpecific = (): string[] => s().cloud.filter((c) => !c.shared || c.pipelineId !== undefined).map((c) => `${c.kind}:${c.id}`);
/** Types of the enabled upstream subscriptions of the (only) unified pipeline of the product-107 subscription. */
const upstreamTypes = (pipelineSubId: string): string[] => {
  expect(active107()).toContain(Number(pipelineSubId));
  return s().upstreamSubscriptions.filter((u) => u.enabled && u.pipelineId !== undefined).map((u) => u.notificationType).sort();
};
const physical = (r: LocalDeployResult, type: string): string => r.resources.find((x) => x.type === type)!.physicalId;

test('create -> update -> destroy leaves no active product-107 subscription and no pipeline-specific cloud resource', async () => {
  const created = await deploy({ types: ['ORDER_CHANGE', 'REPORT_PROCESSING_FINISHED'] });
  expect(created.success).toBe(true);
  const pipelineId = physical(created, 'Custom::DpiNotificationPipeline');
  expect(active107()).toEqual([Number(pipelineId)]);
  expect(pipelineSpecific().length).toBeGreaterThan(0);
  expect(upstreamTypes(pipelineId)).toEqual(['ORDER_CHANGE', 'REPORT_PROCESSING_FINISHED']);
  // The roles of the template were registered in the emulated account: the management role trusts the service.
  expect(s().cloudRoles).toEqual(expect.arrayContaining([
    { accountId: '123456789012', roleArn: expect.stringMatching(/^arn:aws:iam::123456789012:role\/Tiny-RolesManagementRole/), trustsService: true },
    { accountId: '123456789012', roleArn: 'arn:aws:iam::123456789012:role/service-spapi-firehose-role', trustsService: false },
  ]));

  const updated = await deploy({ types: ['ORDER_CHANGE', 'FEED_PROCESSING_FINISHED'] });
  expect(updated.success).toBe(true);
  expect(updated.events.map((e) => `${e.status}:${e.type}`)).toEqual([
    'UPDATE_IN_PROGRESS:AWS::CloudFormation::Stack',
    'UPDATE_IN_PROGRESS:Custom::DpiNotificationPipeline',
    'UPDATE_COMPLETE:Custom::DpiNotificationPipeline',
    'UPDATE_COMPLETE:AWS::CloudFormation::Stack',
  ]);
  expect(physical(updated, 'Custom::DpiNotificationPipeline')).toBe(pipelineId);
  expect(updated.resources[0].attributes.SubscribedTypes).toBe('ORDER_CHANGE,FEED_PROCESSING_FINISHED');
  expect(upstreamTypes(pipelineId)).toEqual(['FEED_PROCESSING_FINISHED', 'ORDER_CHANGE']);

  const destroyed = await destroy();
  expect(destroyed.success).toBe(true);
  expect(active107()).toEqual([]);
  expect(pipelineSpecific()).toEqual([]);
  expect(s().upstreamSubscriptions.filter((u) => u.pipelineId !== undefined && u.enabled)).toEqual([]);
  // What the spec retains: the shared bucket, its objects and the shared event bus.
  expect(s().cloud.map((c) => c.kind)).toEqual(expect.arrayContaining(['s3-bucket']));
  expect(existsSync(stateFile())).toBe(false);
});

test('a second local-deploy without changes makes no service call that changes anything', async () => {
  expect((await deploy({ subscriptionName: 'orders' })).success).toBe(true);
  // One handler runtime per run: the refresh token is exchanged once for both resources.
  const first = (await admin('GET', '/_emulator/requests')) as Array<{ method: string; path: string }>;
  expect(first.filter((r) => r.path === '/auth/api/ref')).toHaveLength(1);
  await admin('DELETE', '/_emulator/requests');
  const again = await deploy({ subscriptionName: 'orders' });
  expect(again.success).toBe(true);
  expect(again.events).toEqual([]);
  const log = (await admin('GET', '/_emulator/requests')) as Array<{ method: string; path: string }>;
  expect(log.filter((r) => r.method !== 'GET')).toEqual([]);
  expect(output.join('\n')).toContain('Tiny (no changes)');
});

test('a change of remote identity replaces the pipeline: new physical ID, the old one deleted after the update', async () => {
  const first = await deploy({});
  const oldId = physical(first, 'Custom::DpiNotificationPipeline');
  const second = await deploy({ vendor: true });
  expect(second.success).toBe(true);
  const newId = physical(second, 'Custom::DpiNotificationPipeline');
  expect(newId).not.toBe(oldId);
  const statuses = second.events.filter((e) => e.type === 'Custom::DpiNotificationPipeline').map((e) => `${e.status}:${e.physicalId ?? ''}`);
  expect(statuses).toEqual(['UPDATE_IN_PROGRESS:', `UPDATE_COMPLETE:${newId}`, `DELETE_IN_PROGRESS:${oldId}`, `DELETE_COMPLETE:${oldId}`]);
  expect(active107()).toEqual([Number(newId)]);
  const oldSub = s().subscriptions.find((x) => x.id === Number(oldId))!;
  expect(oldSub.status).toBe('invalid');
  expect(s().pipelines.map((p) => p.remoteIdentityId)).toEqual([363]);
});

test('a fault on the second resource during a first deploy rolls back (deletes) the first', async () => {
  await admin('POST', '/_emulator/faults', { method: 'GET', pathPrefix: '/v2/product/3001', status: 400, count: 1 });
  const r = await deploy({ subscriptionName: 'orders' });
  expect(r.success).toBe(false);
  expect(r.events.map((e) => `${e.status}:${e.type}`)).toEqual([
    'CREATE_IN_PROGRESS:AWS::CloudFormation::Stack',
    'CREATE_IN_PROGRESS:Custom::DpiNotificationPipeline',
    'CREATE_COMPLETE:Custom::DpiNotificationPipeline',
    'CREATE_IN_PROGRESS:Custom::DpiSubscription',
    'CREATE_FAILED:Custom::DpiSubscription',
    'ROLLBACK_IN_PROGRESS:AWS::CloudFormation::Stack',
    'DELETE_IN_PROGRESS:Custom::DpiNotificationPipeline',
    'DELETE_COMPLETE:Custom::DpiNotificationPipeline',
    'ROLLBACK_COMPLETE:AWS::CloudFormation::Stack',
  ]);
  expect(r.events.find((e) => e.status === 'CREATE_FAILED')!.reason).toMatch(/400|injected fault/);
  expect(active107()).toEqual([]);
  expect(pipelineSpecific()).toEqual([]);
  expect(r.resources).toEqual([]);
  expect(output.some((l) => /Tiny \| \d\d:\d\d:\d\d \| ROLLBACK_COMPLETE/.test(l))).toBe(true);
});

test('a fault on the second resource during an update restores the first (Update with old and new swapped)', async () => {
  const first = await deploy({ types: ['ORDER_CHANGE'], subscriptionName: 'orders' });
  expect(first.success).toBe(true);
  const pipelineId = physical(first, 'Custom::DpiNotificationPipeline');
  const subId = physical(first, 'Custom::DpiSubscription');
  const before = JSON.parse(readFileSync(stateFile(), 'utf8'));
  await admin('POST', '/_emulator/faults', { method: 'PATCH', pathPrefix: `/v2/sub/${subId}`, status: 400, count: 1 });
  const r = await deploy({ types: ['ORDER_CHANGE', 'FEED_PROCESSING_FINISHED'], subscriptionName: 'orders-renamed' });
  expect(r.success).toBe(false);
  expect(r.events.map((e) => `${e.status}:${e.type}`)).toEqual([
    'UPDATE_IN_PROGRESS:AWS::CloudFormation::Stack',
    'UPDATE_IN_PROGRESS:Custom::DpiNotificationPipeline',
    'UPDATE_COMPLETE:Custom::DpiNotificationPipeline',
    'UPDATE_IN_PROGRESS:Custom::DpiSubscription',
    'UPDATE_FAILED:Custom::DpiSubscription',
    'UPDATE_ROLLBACK_IN_PROGRESS:AWS::CloudFormation::Stack',
    'UPDATE_IN_PROGRESS:Custom::DpiSubscription',
    'UPDATE_COMPLETE:Custom::DpiSubscription',
    'UPDATE_IN_PROGRESS:Custom::DpiNotificationPipeline',
    'UPDATE_COMPLETE:Custom::DpiNotificationPipeline',
    'UPDATE_ROLLBACK_COMPLETE_CLEANUP_IN_PROGRESS:AWS::CloudFormation::Stack',
    'UPDATE_ROLLBACK_COMPLETE:AWS::CloudFormation::Stack',
  ]);
  // The service is back to the old declaration, and so is the state.
  expect(upstreamTypes(pipelineId)).toEqual(['ORDER_CHANGE']);
  expect(s().subscriptions.find((x) => x.id === Number(subId))!.name).toBe('orders');
  // Properties and physical IDs are the old ones; attributes are what the rollback Update returned.
  const after = JSON.parse(readFileSync(stateFile(), 'utf8'));
  const shape = (st: { resources: Record<string, { physicalId: string; properties: unknown }> }): unknown =>
    Object.fromEntries(Object.entries(st.resources).map(([k, v]) => [k, { physicalId: v.physicalId, properties: v.properties }]));
  expect(shape(after)).toEqual(shape(before));
  expect(after.resources[Object.keys(after.resources).find((k) => k.startsWith('Tiny/Pipeline'))!].attributes.SubscribedTypes).toBe('ORDER_CHANGE');
});

test('removalPolicy RETAIN: destroy sends the Delete, the handler releases the pipeline and leaves it in place', async () => {
  const r = await deploy({ retainPipeline: true });
  const id = physical(r, 'Custom::DpiNotificationPipeline');
  await admin('DELETE', '/_emulator/requests');
  const d = await destroy();
  expect(d.success).toBe(true);
  expect(d.events.map((e) => `${e.status}:${e.type}`)).toContain('DELETE_COMPLETE:Custom::DpiNotificationPipeline');
  expect(readFileSync(join(tmp.dir, 'state', 'handler.log'), 'utf8')).toContain('released the notification pipeline');
  expect(active107()).toEqual([Number(id)]);
  const log = (await admin('GET', '/_emulator/requests')) as Array<{ method: string }>;
  expect(log.filter((x) => x.method !== 'GET')).toEqual([]);
});

test('the refresh token is absent from the state file, the output and the handler log', async () => {
  const r = await deploy({ subscriptionName: 'orders' });
  expect(r.success).toBe(true);
  const log = readFileSync(join(tmp.dir, 'state', 'handler.log'), 'utf8');
  expect(log).toContain('"msg":"service call"');
  for (const text of [readFileSync(stateFile(), 'utf8'), log, output.join('\n'), JSON.stringify(r)]) {
    expect(text).not.toContain(DEFAULT_REFRESH_TOKEN);
  }
});

test('without --emulator an embedded emulator keeps its state beside the state file across runs (the dpi command)', async () => {
  const written: string[] = [];
  const spies = [
    jest.spyOn(process.stderr, 'write').mockImplementation((chunk: string | Uint8Array) => { written.push(String(chunk)); return true; }),
    jest.spyOn(process.stdout, 'write').mockImplementation((chunk: string | Uint8Array) => { written.push(String(chunk)); return true; }),
  ];
  const saved = process.exitCode;
  let restoreToken = (): void => undefined;
  try {
    const v1 = synthTinyApp(join(tmp.dir, 'embedded.1'), { types: ['ORDER_CHANGE'] });
    const v2 = synthTinyApp(join(tmp.dir, 'embedded.2'), { types: ['ORDER_CHANGE', 'FEED_PROCESSING_FINISHED'] });
    const run = async (args: string[]): Promise<number> => {
      process.exitCode = 0;
      await localDeployCommand().parseAsync(args, { from: 'user' });
      return Number(process.exitCode ?? 0);
    };
    expect(await run(['--app', v1, '--state', stateFile()])).toBe(0);
    expect(existsSync(join(tmp.dir, 'state', 'emulator-state.json'))).toBe(true);
    // The second run starts a new embedded emulator from the saved service state: an in-place update succeeds.
    expect(await run(['--app', v2, '--state', stateFile()])).toBe(0);
    const text = written.join('');
    expect(text).toMatch(/Tiny \| \d\d:\d\d:\d\d \| UPDATE_COMPLETE\s+\| Custom::DpiNotificationPipeline\s*\| Pipeline/);
    expect(text).toMatch(/SubscribedTypes=ORDER_CHANGE,FEED_PROCESSING_FINISHED/);
    expect(await run(['--state', stateFile(), '--destroy'])).toBe(0);
    expect(existsSync(stateFile())).toBe(false);
    expect(text + written.join('')).not.toContain(DEFAULT_REFRESH_TOKEN);
    // A run that could not start (nothing changed) exits 2.
    expect(await run(['--app', join(tmp.dir, 'missing'), '--state', stateFile()])).toBe(2);
    expect(written.join('')).toMatch(/manifest\.json not found/);
    // A token exported for the real service does not break a local run: the embedded emulator's own is used.
    const savedToken = process.env.DPI_REFRESH_TOKEN;
    restoreToken = () => {
      if (savedToken === undefined) delete process.env.DPI_REFRESH_TOKEN;
      else process.env.DPI_REFRESH_TOKEN = savedToken;
    };
    process.env.DPI_REFRESH_TOKEN = 'real-service-refresh-token';
    written.length = 0;
    expect(await run(['--app', v1, '--state', stateFile()])).toBe(0);
    expect(written.join('')).toContain('DPI_REFRESH_TOKEN is set, but the embedded emulator knows only its own token: using that one');
    expect(await run(['--state', stateFile(), '--destroy'])).toBe(0);
    expect(written.join('')).not.toContain('real-service-refresh-token');
  } finally {
    restoreToken();
    process.exitCode = saved;
    spies.forEach((sp) => sp.mockRestore());
  }
});

test('the bundled dpi finds the handler from assets/cli/dpi and exits 0, then 2 on bad input (nothing changed)', () => {
  const cli = join(findPackageRoot(), 'assets', 'cli', 'dpi', 'index.js');
  if (!existsSync(cli)) throw new Error(`${cli} is missing: run 'npx projen bundle' first`);
  const app = synthTinyApp(join(tmp.dir, 'cli.out'), {});
  const env = { ...process.env, DPI_REFRESH_TOKEN: '' };
  const ok = spawnSync(process.execPath, [cli, 'local-deploy', '--app', app, '--state', stateFile()], { cwd: tmp.dir, env, encoding: 'utf8' });
  expect(ok.stderr).toMatch(/Tiny \| \d\d:\d\d:\d\d \| CREATE_COMPLETE\s+\| AWS::CloudFormation::Stack/);
  expect(ok.stdout).toMatch(/Custom::DpiNotificationPipeline\s+9\d+\s+SubscribedTypes=ORDER_CHANGE,REPORT_PROCESSING_FINISHED/);
  expect(ok.status).toBe(0);
  // The handler's JSON lines went to the log, not to the terminal.
  expect(ok.stderr + ok.stdout).not.toContain('"msg":"service call"');
  expect(readFileSync(join(tmp.dir, 'state', 'handler.log'), 'utf8')).toContain('"msg":"service call"');
  const bad = spawnSync(process.execPath, [cli, 'local-deploy', '--app', join(tmp.dir, 'nope'), '--state', stateFile()], { cwd: tmp.dir, env, encoding: 'utf8' });
  expect(bad.status).toBe(2);
  expect(bad.stderr).toMatch(/manifest\.json not found/);
  const gone = spawnSync(process.execPath, [cli, 'local-deploy', '--destroy', '--state', stateFile(), '--handler-logs'], { cwd: tmp.dir, env, encoding: 'utf8' });
  expect(gone.status).toBe(0);
  // --handler-logs also prints the handler's lines (secrets redacted).
  expect(gone.stderr).toContain('"msg":"service call"');
  expect(gone.stderr + gone.stdout + ok.stderr + ok.stdout).not.toContain(DEFAULT_REFRESH_TOKEN);
});

test('the bundled dpi stops quietly, exit 0, when its reader closes the pipe early (dpi --help | true)', () => {
  const cli = join(findPackageRoot(), 'assets', 'cli', 'dpi', 'index.js');
  if (!existsSync(cli)) throw new Error(`${cli} is missing: run 'npx projen bundle' first`);
  // A reader that exits at once (`true`) closes the pipe before dpi writes its help; pipefail keeps dpi's status.
  const run = spawnSync('bash', ['-c', `set -o pipefail; "${process.execPath}" "${cli}" --help | true`], {
    encoding: 'utf8', env: { ...process.env, DPI_REFRESH_TOKEN: '' },
  });
  expect(run.status).toBe(0);
  expect(run.stderr).not.toMatch(/EPIPE|unexpected failure|Unhandled/);
});
