/**
 * `dpi import` round trip: an account of 20 records made by hand through the service's endpoints (subscriptions of
 * several products with stage IDs and parameters, a paused one, two unified pipelines), imported to a TypeScript stack,
 * type-checked, synthesized and deployed with `dpi local-deploy` against the same emulator (vendor reads, with the
 * stored parameter reads): the generated subscriptions carry their stored stage IDs and parameters, the deploy adopts
 * every declared record without a changing call, `dpi drift --local` right after reports every resource IN_SYNC, and
 * the destroy keeps them (RETAIN: the handler releases them).
 */
import { existsSync, mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { join } from 'node:path';
import * as ts from 'typescript';
import { synthImportedStack, unifiedPipelineBody } from './hand-made';
import { DEFAULT_CLOUD_ACCOUNT, DEFAULT_REFRESH_TOKEN, RunningEmulator, startEmulator } from '../../src/emulator';
import { defaultHandlerPath, LocalDeployResult, runLocalDeploy } from '../../src/local';
import { dpi } from '../cli/helpers';

jest.setTimeout(120_000);

const BUNDLE = defaultHandlerPath();
if (!existsSync(BUNDLE)) throw new Error(`${BUNDLE} is missing: run 'npx projen bundle' first`);

const ROLE = `arn:aws:iam::${DEFAULT_CLOUD_ACCOUNT}:role/dpi-management`;
const EB_ROLE = `arn:aws:iam::${DEFAULT_CLOUD_ACCOUNT}:role/service-spapi-firehose-role`;
const SRC = join(__dirname, '..', '..', 'src');

let emu: RunningEmulator;
let dir: string;
beforeAll(async () => {
  emu = await startEmulator({ host: '127.0.0.1', port: 0, reads: 'vendor' });
  // Inside the worktree, so that the generated file resolves aws-cdk-lib and the library's src.
  dir = mkdtempSync(join(__dirname, '.import-'));
});
afterAll(async () => {
  await emu.stop();
  rmSync(dir, { recursive: true, force: true });
});

async function token(url: string): Promise<string> {
  const r = await fetch(`${url}/auth/api/ref`, {
    method: 'POST',
    headers: { 'content-type': 'application/json' },
    body: JSON.stringify({ data: { type: 'APIAuth', attributes: { refresh_token: DEFAULT_REFRESH_TOKEN } } }),
  });
  return ((await r.json()) as any).data.attributes.token;
}

async function call(url: string, method: string, path: string, body?: unknown): Promise<any> {
  const res = await fetch(`${url}${path}`, {
    method,
    headers: { 'authorization': `Bearer ${await token(url)}`, 'content-type': 'application/json' },
    body: body === undefined ? undefined : JSON.stringify(body),
  });
  const text = await res.text();
  if (res.status >= 300 && res.status !== 207) throw new Error(`${method} ${path}: ${res.status} ${text}`);
  return text ? JSON.parse(text) : undefined;
}

async function subscribe(url: string, attrs: Record<string, unknown>): Promise<string> {
  const r = await call(url, 'POST', '/v2/sub', {
    data: { type: 'Subscription', attributes: { account: 1001, user: 2001, status: 'active', date_start: '2026-01-01T00:00:00Z', ...attrs } },
  });
  return String(r.data.id);
}

async function pipeline(url: string, identity: number, types: string[]): Promise<string> {
  const r = await call(url, 'POST', `/service/sp/notifications-unified/${identity}`, unifiedPipelineBody({ types, role: ROLE, ebRole: EB_ROLE }));
  const a = r.data?.attributes ?? r.attributes;
  return subscribe(url, {
    product: 107,
    remote_identity: identity,
    name: `notifications ${identity}`,
    product_parameters: { subscriptions: JSON.stringify(a.subscriptions), meta: JSON.stringify(a.meta) },
  });
}

/** An admin call; retried once (a keep-alive socket may have been closed by the server during the long type-check). */
async function admin(method: string, path: string): Promise<Response> {
  try {
    return await fetch(`${emu.url}/_emulator${path}`, { method });
  } catch {
    return fetch(`${emu.url}/_emulator${path}`, { method });
  }
}
interface Logged { method: string; path: string; status: number }
const requests = async (): Promise<Logged[]> => (await (await admin('GET', '/requests')).json()) as Logged[];
const changing = (log: Logged[]): string[] => log.filter((r) => r.method !== 'GET' && r.path !== '/auth/api/ref').map((r) => `${r.method} ${r.path}`);

test('dpi import refuses minimal reads, naming the fields it could not read; nothing is written', async () => {
  const minimal = await startEmulator({ host: '127.0.0.1', port: 0 });
  try {
    const id = await subscribe(minimal.url, { product: 4001, name: 'plain' });
    const out = join(dir, 'minimal.ts');
    const r = await dpi(['import', '--out', out], { emu: minimal });
    expect(r.code).toBe(2);
    expect(r.stderr).toContain('dpi import needs read fields the service\'s interface does not show: product, remote_identity, storage_group, name of 2 '
      + `subscriptions (8601, ${id}) were not in the answer`);
    expect(existsSync(out)).toBe(false);
  } finally {
    await minimal.stop();
  }
});

test('20 hand-made records -> dpi import -> type-check and synth -> local-deploy adopts them with no changing call -> destroy keeps them', async () => {
  const url = emu.url;
  const made: string[] = [];
  made.push(await pipeline(url, 362, ['ORDER_CHANGE', 'REPORT_PROCESSING_FINISHED']));
  made.push(await pipeline(url, 363, ['ITEM_SALES_EVENT_CHANGE']));
  const stageSets = [[1000], [1001], [1000, 1001], undefined];
  for (let i = 0; i < 12; i++) {
    const stages = stageSets[i % stageSets.length];
    made.push(await subscribe(url, {
      product: 3001,
      remote_identity: 362,
      storage_group: 501,
      name: i === 3 ? 'orders \'quoted\' */ 3' : `orders-${i}`,
      product_parameters: { marketplace_id: i % 2 ? 'ATVPDKIKX0DER' : 'A2EUQ1WTGCTBG2', ...(stages ? { stage_ids: JSON.stringify(stages) } : {}) },
    }));
  }
  for (let i = 0; i < 3; i++) {
    made.push(await subscribe(url, { product: 3002, remote_identity: 365, storage_group: 501, name: `ads-${i}`, product_parameters: { profile_id: `p-${i}`, stage_ids: '[1001]' } }));
  }
  made.push(await subscribe(url, { product: 4001, name: 'no identity' }));
  made.push(await subscribe(url, { product: 4001 }));
  made.push(await subscribe(url, { product: 4001, storage_group: 501, name: 'paused by hand' }));
  const paused = made[made.length - 1];
  await call(url, 'PATCH', `/v2/sub/${paused}`, { data: { type: 'Subscription', id: paused, attributes: { status: 'paused' } } });
  expect(made).toHaveLength(20);
  const before = JSON.stringify(emu.state().subscriptions);

  // The pipelines' roles and account type are shown by no read (their stored parameters show types and region): refused, naming them.
  const out = join(dir, 'imported.ts');
  const refused = await dpi(['import', '--out', out], { emu });
  expect(refused.code).toBe(2);
  expect(refused.stderr).toContain(`cannot declare the unified notification pipelines ${made[0]}, ${made[1]}: `
    + 'no read of the service shows a pipeline\'s roles (role_arn, eb_to_fh_role_arn), accountType');
  expect(existsSync(out)).toBe(false);

  const r = await dpi(['import', '--out', out, '--skip-pipelines', '--class-name', 'AccountStack', '--module', SRC], { emu });
  expect(r.stderr).toBe('');
  expect(r.code).toBe(0);
  expect(r.stdout).toBe(`wrote ${out}: 18 subscriptions adopted, 3 not imported (listed in the file)\n`);
  const code = readFileSync(out, 'utf8');
  // Every hand-made subscription once with its adopt ID; the pipelines' and the legacy one's only in comments.
  for (const id of made.slice(2)) expect(code).toContain(`existingSubscriptionId: ${id},`);
  expect(code).not.toContain(`existingSubscriptionId: ${made[0]},`);
  expect(code).toContain(`// Not imported: subscription ${made[0]} (product 107)`);
  expect(code).toContain('// Not imported: subscription 8601 (product 86)');
  expect(code.match(/status: SubscriptionStatus.PAUSED/g)).toHaveLength(1);
  expect(code).toContain("name: 'orders \\'quoted\\' */ 3',");
  expect(code).toContain('remoteIdentityId: 365,');
  // Stage IDs and parameters as stored (the vendor's bulk parameter read).
  expect(code.match(/stageIds: \[1000, 1001\],/g)).toHaveLength(3);
  expect(code.match(/stageIds: \[1001\],/g)).toHaveLength(3 + 3);
  expect(code.match(/marketplace_id: 'ATVPDKIKX0DER',/g)).toHaveLength(6);
  for (let i = 0; i < 3; i++) expect(code).toContain(`profile_id: 'p-${i}',`);
  expect(code).not.toContain('remote_identity_id');

  // Compiles under strict TypeScript: the generated file's own diagnostics (the library's sources and aws-cdk-lib are
  // only resolved for its imports, not checked themselves: the project's typecheck task covers them).
  const started = Date.now();
  const program = ts.createProgram([out], {
    strict: true,
    noEmit: true,
    target: ts.ScriptTarget.ES2022,
    module: ts.ModuleKind.CommonJS,
    esModuleInterop: true,
    skipLibCheck: true,
    experimentalDecorators: true,
    types: ['node'],
    resolveJsonModule: true,
  });
  const file = program.getSourceFile(out)!;
  const diagnostics = [...program.getOptionsDiagnostics(), ...program.getGlobalDiagnostics(), ...program.getSyntacticDiagnostics(file),
    ...program.getSemanticDiagnostics(file)].map((d) => ts.flattenDiagnosticMessageText(d.messageText, '\n'));
  expect(diagnostics).toEqual([]);
  const ms: Record<string, number> = { typeCheck: Date.now() - started };
  let t = Date.now();
  const phase = (name: string): void => {
    ms[name] = Date.now() - t;
    t = Date.now();
  };

  // Synthesizes in a plain Node process (transpile-only; the file was type-checked above).
  const driver = join(dir, 'synth.js');
  synthImportedStack({ src: SRC, file: out, outdir: join(dir, 'cdk.out'), driver, cwd: join(__dirname, '..', '..') });
  const template = JSON.parse(readFileSync(join(dir, 'cdk.out', 'Imported.template.json'), 'utf8')) as
    { Resources: Record<string, { Type: string; DeletionPolicy?: string; Properties?: { RemovalPolicy?: string } }> };
  phase('synth');
  const subs = Object.values(template.Resources).filter((x) => x.Type === 'Custom::DpiSubscription');
  expect(subs).toHaveLength(18);
  // RETAIN travels in the properties; CloudFormation sends the Delete and the handler releases the record.
  expect(subs.every((x) => x.DeletionPolicy === 'Delete' && x.Properties?.RemovalPolicy === 'retain')).toBe(true);

  // Deploys against the same service with the request log cleared: no changing call.
  await admin('DELETE', '/requests');
  const lines: string[] = [];
  const state = join(dir, 'state', 'local-state.json');
  const deployed: LocalDeployResult = await runLocalDeploy({
    app: join(dir, 'cdk.out'),
    emulatorUrl: url,
    stateFile: state,
    refreshToken: DEFAULT_REFRESH_TOKEN,
    progress: (l) => lines.push(l),
    output: (l) => lines.push(l),
  });
  phase('deploy');
  expect(deployed.error).toBeUndefined();
  expect(deployed.success).toBe(true);
  const deployLog = await requests();
  expect(changing(deployLog)).toEqual([]);
  const adopted = deployed.resources.filter((x) => x.type === 'Custom::DpiSubscription').map((x) => x.physicalId).sort();
  expect(adopted).toEqual(made.slice(2).sort());
  expect(JSON.stringify(emu.state().subscriptions)).toBe(before);

  // Right after the deploy, drift (vendor reads, the same service) finds every resource as declared.
  const drift = await dpi(['drift', '--local', '--state', state, '--json'], { env: { DPI_BASE_URL: url, DPI_REFRESH_TOKEN: DEFAULT_REFRESH_TOKEN } });
  phase('drift');
  expect([drift.code, drift.stderr]).toEqual([0, '']);
  const driftDoc = JSON.parse(drift.stdout) as { drifted: number; stacks: Array<{ resources: Array<{ status: string; notChecked: string[] }> }> };
  const rows = driftDoc.stacks.flatMap((x) => x.resources);
  expect(rows).toHaveLength(18);
  expect(rows.map((x) => x.status)).toEqual(Array(18).fill('IN_SYNC'));
  // Stage IDs and parameters were compared (shown by the parameter reads), not skipped.
  expect(rows.flatMap((x) => x.notChecked)).toEqual([]);
  expect(changing(await requests()).length).toBe(0);

  // Destroy: RETAIN sends no Delete; every record stays as it was.
  await admin('DELETE', '/requests');
  const destroyed = await runLocalDeploy({
    emulatorUrl: url,
    stateFile: state,
    destroy: true,
    refreshToken: DEFAULT_REFRESH_TOKEN,
    progress: (l) => lines.push(l),
    output: (l) => lines.push(l),
  });
  expect(destroyed.success).toBe(true);
  const destroyLog = await requests();
  expect(changing(destroyLog)).toEqual([]);
  expect(destroyed.events.filter((e) => e.status === 'DELETE_COMPLETE' && e.type === 'Custom::DpiSubscription')).toHaveLength(18);
  expect(JSON.stringify(emu.state().subscriptions)).toBe(before);
  const count = (log: Logged[], m: string): number => log.filter((x) => x.method === m).length;
  // The counts for the round trip's record (printed on purpose).
  // eslint-disable-next-line no-console
  console.log(`import round trip: ${made.length} hand-made records (18 subscriptions, 2 unified pipelines) + 1 legacy fixture; `
    + `${adopted.length} adopted; deploy: ${deployLog.length} requests (${count(deployLog, 'GET')} GET, `
    + `${count(deployLog, 'POST')} POST incl. token, `
    + `${changing(deployLog).length} changing); destroy: ${destroyLog.length} requests, ${changing(destroyLog).length} changing, `
    + `${destroyed.events.filter((e) => e.status === 'DELETE_COMPLETE' && e.type === 'Custom::DpiSubscription').length} subscriptions released; `
    + 'drift right after the deploy: '
    + `${rows.filter((x) => x.status === 'IN_SYNC').length} of ${rows.length} IN_SYNC; ms: ${JSON.stringify(ms)}`);
});
