/**
 * `dpi import --pipeline-roles` round trip: an account of 20 unified notification pipelines and 18 subscriptions made
 * by hand through the service's endpoints (vendor reads, with the stored parameter reads), imported to a TypeScript
 * stack (the pipelines as one NotificationPipelineFleet that adopts them), type-checked, synthesized and deployed with
 * `dpi local-deploy` against the same emulator: the deploy makes no creating call and no changing call at all (the
 * stored parameters show that every pipeline and subscription already is what the file declares); a second
 * `dpi import` writes the same file and `dpi drift --local` finds every resource IN_SYNC; the destroy releases
 * everything (RETAIN) with no changing call.
 */
import { existsSync, mkdtempSync, readdirSync, readFileSync, rmSync } from 'node:fs';
import { join } from 'node:path';
import * as ts from 'typescript';
import { synthImportedStack, unifiedPipelineBody } from './hand-made';
import { DEFAULT_CLOUD_ACCOUNT, DEFAULT_REFRESH_TOKEN, RunningEmulator, startEmulator } from '../../src/emulator';
import { defaultHandlerPath, runLocalDeploy } from '../../src/local';
import { dpi } from '../cli/helpers';

jest.setTimeout(240_000);

const BUNDLE = defaultHandlerPath();
if (!existsSync(BUNDLE)) throw new Error(`${BUNDLE} is missing: run 'npx projen bundle' first`);

const ROLE = `arn:aws:iam::${DEFAULT_CLOUD_ACCOUNT}:role/dpi-management`;
const EB_ROLE = `arn:aws:iam::${DEFAULT_CLOUD_ACCOUNT}:role/service-spapi-firehose-role`;
const SRC = join(__dirname, '..', '..', 'src');
/** 20 identities: 14 sellers (type 17), 6 vendors (type 18). */
const IDENTITIES = Array.from({ length: 20 }, (_, i) => ({ id: 2201 + i, vendor: i >= 14 }));
const typesOf = (i: number, vendor: boolean): string[] => (vendor
  ? (i % 2 ? ['ITEM_SALES_EVENT_CHANGE'] : ['ITEM_SALES_EVENT_CHANGE', 'REPORT_PROCESSING_FINISHED'])
  : [['ORDER_CHANGE', 'REPORT_PROCESSING_FINISHED'], ['REPORT_PROCESSING_FINISHED'], ['ORDER_CHANGE']][i % 3]);

let emu: RunningEmulator;
let dir: string;
let token: string;
beforeAll(async () => {
  emu = await startEmulator({ host: '127.0.0.1', port: 0, reads: 'vendor' });
  // Inside the worktree, so that the generated file resolves aws-cdk-lib and the library's src.
  dir = mkdtempSync(join(__dirname, '.import-pipelines-'));
});
afterAll(async () => {
  await emu.stop();
  rmSync(dir, { recursive: true, force: true });
});

async function call(method: string, path: string, body?: unknown, auth = true): Promise<any> {
  const send = (): Promise<Response> => fetch(`${emu.url}${path}`, {
    method,
    headers: { 'content-type': 'application/json', ...(auth ? { authorization: `Bearer ${token}` } : {}) },
    body: body === undefined ? undefined : JSON.stringify(body),
  });
  // After the synchronous compile and synth (a minute or more) the kept-alive connection may have been closed by the
  // server's idle timeout while this process could not see it: a reset before the request was read is sent again.
  const res = await send().catch((e: { cause?: { code?: string } }) => {
    if (e.cause?.code !== 'ECONNRESET') throw e;
    return send();
  });
  const text = await res.text();
  if (res.status >= 300 && res.status !== 207) throw new Error(`${method} ${path}: ${res.status} ${text}`);
  return text ? JSON.parse(text) : undefined;
}

async function subscribe(attrs: Record<string, unknown>): Promise<string> {
  const r = await call('POST', '/v2/sub', {
    data: { type: 'Subscription', attributes: { account: 1001, user: 2001, status: 'active', date_start: '2026-01-01T00:00:00Z', ...attrs } },
  });
  return String(r.data.id);
}

/** A unified pipeline as a UI makes it: the unified POST and the product-107 subscription that stores its result. */
async function pipeline(identity: number, types: string[], extra: Record<string, unknown>): Promise<string> {
  const r = await call('POST', `/service/sp/notifications-unified/${identity}`, unifiedPipelineBody({ types, role: ROLE, ebRole: EB_ROLE }));
  const a = r.data?.attributes ?? r.attributes;
  return subscribe({
    product: 107,
    remote_identity: identity,
    ...extra,
    product_parameters: { subscriptions: JSON.stringify(a.subscriptions), meta: JSON.stringify(a.meta) },
  });
}

interface Logged { method: string; path: string; status: number }
const admin = async (method: string, path: string, body?: unknown): Promise<any> => call(method, `/_emulator${path}`, body, false);
const requests = async (): Promise<Logged[]> => (await admin('GET', '/requests')) as Logged[];
const changing = (log: Logged[]): string[] => log.filter((r) => r.method !== 'GET' && r.path !== '/auth/api/ref').map((r) => `${r.method} ${r.path}`);

test('20 pipelines + 18 subscriptions -> dpi import --pipeline-roles -> compile, synth -> deploy makes no changing call -> nothing to do', async () => {
  await admin('POST', '/fixtures', {
    remoteIdentities: IDENTITIES.map(({ id, vendor }) => ({
      id, account: 1001, name: `${vendor ? 'Vendor' : 'Seller'} ${id}`, remote_identity_type_id: vendor ? 18 : 17, marketplaces: ['ATVPDKIKX0DER'],
    })),
  });
  token = (await call('POST', '/auth/api/ref', { data: { type: 'APIAuth', attributes: { refresh_token: DEFAULT_REFRESH_TOKEN } } }, false)).data.attributes.token;
  const pipes: Array<{ sub: string; identity: number; types: string[] }> = [];
  for (const [i, { id, vendor }] of IDENTITIES.entries()) {
    const types = typesOf(i, vendor);
    pipes.push({ sub: await pipeline(id, types, { name: `notifications ${id}`, ...(i % 4 === 0 ? { storage_group: 501 } : {}) }), identity: id, types });
  }
  const subs: string[] = [];
  const stageSets = [[1000], [1001], [1000, 1001], undefined];
  for (let i = 0; i < 12; i++) {
    const stages = stageSets[i % stageSets.length];
    subs.push(await subscribe({
      product: 3001,
      remote_identity: 362,
      storage_group: 501,
      name: `orders-${i}`,
      product_parameters: { marketplace_id: i % 2 ? 'ATVPDKIKX0DER' : 'A2EUQ1WTGCTBG2', ...(stages ? { stage_ids: JSON.stringify(stages) } : {}) },
    }));
  }
  for (let i = 0; i < 3; i++) {
    subs.push(await subscribe({ product: 3002, remote_identity: 365, storage_group: 501, name: `ads-${i}`, product_parameters: { profile_id: `p-${i}`, stage_ids: '[1001]' } }));
  }
  subs.push(await subscribe({ product: 4001, name: 'no identity' }), await subscribe({ product: 4001 }));
  const paused = await subscribe({ product: 4001, storage_group: 501, name: 'paused by hand' });
  subs.push(paused);
  await call('PATCH', `/v2/sub/${paused}`, { data: { type: 'Subscription', id: paused, attributes: { status: 'paused' } } });
  expect([pipes.length, subs.length]).toEqual([20, 18]);

  // Without the flag: refused as before, nothing written.
  const out = join(dir, 'imported.ts');
  const refused = await dpi(['import', '--out', out], { emu });
  expect(refused.code).toBe(2);
  expect(existsSync(out)).toBe(false);

  const args = ['import', '--out', out, '--pipeline-roles', `${ROLE},${EB_ROLE}`, '--class-name', 'AccountStack', '--module', SRC];
  const r = await dpi(args, { emu });
  expect([r.code, r.stderr]).toEqual([0, '']);
  expect(r.stdout).toBe(`wrote ${out}: 18 subscriptions adopted, 20 unified pipelines adopted by one NotificationPipelineFleet, 1 not imported (listed in the file)\n`);
  const code = readFileSync(out, 'utf8');
  for (const id of [...subs, ...pipes.map((p) => p.sub)]) expect(code.match(new RegExp(`existingSubscriptionId: ${id},`, 'g'))).toHaveLength(1);
  expect(code).toContain('the first deploy takes\n// each over as the service stores it, with no changing call');
  expect(code).not.toContain('notShown');
  expect(code.match(/accountType: AccountType.VENDOR,/g)).toHaveLength(6);
  expect(code.match(/deploymentRegion: 'us-east-1',/g)).toHaveLength(20);
  for (const p of pipes) {
    const list = [...p.types].sort().map((t) => `NotificationType.${t}`).join(', ');
    expect(code).toContain(`          remoteIdentityId: ${p.identity},\n          accountType: AccountType.${p.identity >= 2215 ? 'VENDOR' : 'SELLER'},\n`
      + `          notificationTypes: [${list}],\n          name: 'notifications ${p.identity}',\n`);
  }

  // Compiles under strict TypeScript (the generated file's own diagnostics).
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
  const diagnostics = [...program.getSyntacticDiagnostics(file), ...program.getSemanticDiagnostics(file)]
    .map((d) => ts.flattenDiagnosticMessageText(d.messageText, '\n'));
  expect(diagnostics).toEqual([]);

  // Synthesizes in a plain Node process (transpile-only; type-checked above).
  const cdkOut = join(dir, 'cdk.out');
  const driver = join(dir, 'synth.js');
  synthImportedStack({ src: SRC, file: out, outdir: cdkOut, driver, cwd: join(__dirname, '..', '..') });
  type Template = { Resources: Record<string, { Type: string; Properties?: Record<string, unknown> }> };
  const templates = readdirSync(cdkOut).filter((f) => f.endsWith('.template.json')).map((f) => JSON.parse(readFileSync(join(cdkOut, f), 'utf8')) as Template);
  const all = templates.flatMap((t) => Object.values(t.Resources));
  expect(all.filter((x) => x.Type === 'Custom::DpiSubscription')).toHaveLength(18);
  const piped = all.filter((x) => x.Type === 'Custom::DpiNotificationPipeline');
  expect(piped.map((x) => x.Properties?.AdoptId).sort()).toEqual(pipes.map((p) => p.sub).sort());
  expect(piped.every((x) => x.Properties?.RemovalPolicy === 'retain' && x.Properties?.RoleArn === ROLE)).toBe(true);

  // Planned before the first deploy, against the same service: every adoption is "no change" (its reads match the
  // declaration); the plan itself changes nothing.
  const state = join(dir, 'state', 'local-state.json');
  await admin('DELETE', '/requests');
  const planned = await dpi(['plan', '--app', cdkOut, '--local', '--state', state, '--json'],
    { env: { DPI_BASE_URL: emu.url, DPI_REFRESH_TOKEN: DEFAULT_REFRESH_TOKEN } });
  expect(planned.code).toBe(0);
  type PlanDoc = { entries: Array<{ type: string; action: string; failure?: string }> };
  const planEntries = (JSON.parse(planned.stdout) as PlanDoc).entries.filter((e) => e.type.startsWith('Custom::Dpi'));
  expect(planEntries).toHaveLength(38);
  expect(planEntries.map((e) => [e.action, e.failure])).toEqual(Array(38).fill(['no-change', undefined]));
  expect(changing(await requests())).toEqual([]);

  // Deploys against the same service: no creating call and no changing call (the declarations match what is stored).
  await admin('DELETE', '/requests');
  const quiet = { progress: () => undefined, output: () => undefined };
  const deployed = await runLocalDeploy({ app: cdkOut, emulatorUrl: emu.url, stateFile: state, refreshToken: DEFAULT_REFRESH_TOKEN, ...quiet });
  expect(deployed.error).toBeUndefined();
  expect(deployed.success).toBe(true);
  const deployLog = await requests();
  expect(deployLog.filter((x) => x.method === 'POST' && x.path !== '/auth/api/ref')).toEqual([]);
  expect(changing(deployLog)).toEqual([]);
  expect(emu.state().subscriptions.filter((x) => x.product === 107 && x.status === 'active')).toHaveLength(20);

  // Nothing to do afterwards: a second import writes the same file, drift finds every resource IN_SYNC, no changing call.
  await admin('DELETE', '/requests');
  const again = await dpi([...args.slice(0, 2), join(dir, 'again.ts'), ...args.slice(3)], { emu });
  expect(again.code).toBe(0);
  expect(readFileSync(join(dir, 'again.ts'), 'utf8')).toBe(code);
  const drift = await dpi(['drift', '--local', '--state', state, '--json'], { env: { DPI_BASE_URL: emu.url, DPI_REFRESH_TOKEN: DEFAULT_REFRESH_TOKEN } });
  expect([drift.code, drift.stderr]).toEqual([0, '']);
  type DriftDoc = { stacks: Array<{ resources: Array<{ status: string; notChecked: string[] }> }> };
  const rows = (JSON.parse(drift.stdout) as DriftDoc).stacks.flatMap((x) => x.resources);
  expect(rows).toHaveLength(38);
  expect(rows.map((x) => x.status)).toEqual(Array(38).fill('IN_SYNC'));
  expect(changing(await requests())).toEqual([]);

  // Destroy: RETAIN releases every record with no changing call; all stay active (the paused one paused).
  await admin('DELETE', '/requests');
  const destroyed = await runLocalDeploy({ emulatorUrl: emu.url, stateFile: state, destroy: true, refreshToken: DEFAULT_REFRESH_TOKEN, ...quiet });
  expect(destroyed.success).toBe(true);
  expect(changing(await requests())).toEqual([]);
  const mine = emu.state().subscriptions.filter((x) => [...subs, ...pipes.map((p) => p.sub)].includes(String(x.id)));
  expect(mine.filter((x) => x.status === 'active')).toHaveLength(37);
  // eslint-disable-next-line no-console
  console.log(`import round trip (pipelines): 20 unified pipelines + 18 subscriptions; deploy ${deployLog.length} requests, `
    + `${changing(deployLog).length} changing; drift: ${rows.length} IN_SYNC; `
    + `not checked: ${JSON.stringify([...new Set(rows.flatMap((x) => x.notChecked))])}`);
});
