/**
 * The packed package's testing entry point, as a user installs it: `npm pack`, an offline install into a fresh project
 * (the peer dependencies aws-cdk-lib and constructs linked from this repository's node_modules), then a jest-free node
 * script that requires `data-pipeline-integration-cdk/testing`, starts the emulator on 127.0.0.1:0, deploys a small
 * app synthesized with the packed constructs through `runLocalDeploy`, destroys it and stops. TypeScript resolves the
 * entry's types with `node16` and with `node10` module resolution (`exports`, `typesVersions`).
 *
 * Needs the compiled library and the bundles: `npx projen compile && npx projen bundle`.
 */
import { execFileSync } from 'node:child_process';
import { existsSync, mkdirSync, mkdtempSync, readdirSync, rmSync, symlinkSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';

const ROOT = join(__dirname, '..', '..');
for (const f of ['lib/testing.js', 'lib/index.js', 'assets/local/runner/index.js', 'assets/emulator/server/index.js', 'assets/handler/index/index.js']) {
  if (!existsSync(join(ROOT, f))) throw new Error(`${f} is missing: run 'npx projen compile && npx projen bundle' before the packaging test`);
}

const NPM_ENV = { ...process.env, npm_config_audit: 'false', npm_config_fund: 'false', npm_config_update_notifier: 'false' };
function sh(cmd: string, args: string[], cwd: string, timeout = 180_000): string {
  try {
    return execFileSync(cmd, args, { cwd, encoding: 'utf8', stdio: ['ignore', 'pipe', 'pipe'], env: NPM_ENV, timeout });
  } catch (e) {
    const x = e as { stdout?: string; stderr?: string; message: string };
    throw new Error(`${cmd} ${args.join(' ')} failed: ${x.message}\n${x.stdout ?? ''}\n${x.stderr ?? ''}`);
  }
}

let dir: string;
let project: string;

beforeAll(() => {
  dir = mkdtempSync(join(tmpdir(), 'dpi-pack-'));
  sh('npm', ['pack', '--pack-destination', dir], ROOT);
  const tarball = readdirSync(dir).find((f) => f.endsWith('.tgz'));
  if (!tarball) throw new Error(`npm pack wrote no tarball into ${dir}`);
  project = join(dir, 'consumer');
  mkdirSync(project, { recursive: true });
  writeFileSync(join(project, 'package.json'), JSON.stringify({ name: 'consumer', version: '1.0.0', private: true }));
  // Offline: the package's runtime dependencies are bundled in the tarball; the peers are not installed here.
  sh('npm', ['install', '--offline', '--no-audit', '--no-fund', '--legacy-peer-deps', '--no-package-lock', join(dir, tarball)], project);
  // The peer dependencies (and node's types) from this repository, as a CDK app has them (linked after the install,
  // which would remove them as extraneous).
  mkdirSync(join(project, 'node_modules', '@types'), { recursive: true });
  for (const dep of ['aws-cdk-lib', 'constructs', '@types/node']) symlinkSync(join(ROOT, 'node_modules', dep), join(project, 'node_modules', dep), 'dir');
}, 300_000);

afterAll(() => {
  if (dir) rmSync(dir, { recursive: true, force: true });
});

const SCRIPT = `
const { mkdtempSync } = require('node:fs');
const { tmpdir } = require('node:os');
const { join } = require('node:path');
const { App, Stack } = require('aws-cdk-lib');
const secretsmanager = require('aws-cdk-lib/aws-secretsmanager');
const dpi = require('data-pipeline-integration-cdk');
const testing = require('data-pipeline-integration-cdk/testing');

async function main() {
  const work = mkdtempSync(join(tmpdir(), 'dpi-consumer-'));
  const app = new App({ outdir: join(work, 'cdk.out') });
  const stack = new Stack(app, 'Consumer', { env: { account: '123456789012', region: 'us-east-1' } });
  const connection = new dpi.ServiceConnection(stack, 'Dpi', {
    singleOriginUrl: 'https://api.example-dpi.com',
    refreshToken: secretsmanager.Secret.fromSecretNameV2(stack, 'Token', 'dpi/refresh-token'),
  });
  const roles = new dpi.NotificationPipelineRoles(stack, 'Roles', { serviceAccountId: '111122223333', externalId: 'ext-1' });
  new dpi.NotificationPipeline(stack, 'Pipeline', {
    connection, roles, remoteIdentityId: 362, accountType: dpi.AccountType.SELLER, notificationTypes: [dpi.NotificationType.ORDER_CHANGE],
  });
  app.synth();
  const emulator = await testing.startEmulator({ host: '127.0.0.1', port: 0 });
  const out = { url: emulator.url, exports: Object.keys(testing).sort() };
  try {
    const options = {
      app: join(work, 'cdk.out'), emulatorUrl: emulator.url, refreshToken: testing.EMULATOR_REFRESH_TOKEN,
      stateFile: join(work, 'state', 'local-state.json'), progress: () => undefined, output: () => undefined,
    };
    const deployed = await testing.runLocalDeploy(options);
    out.deployed = { success: deployed.success, error: deployed.error, resources: deployed.resources.map((r) => r.type) };
    out.pipelinesAfterDeploy = emulator.state().subscriptions.filter((s) => s.product === 107 && s.status === 'active').length;
    const destroyed = await testing.runLocalDeploy({ ...options, destroy: true });
    out.destroyed = { success: destroyed.success, error: destroyed.error, resources: destroyed.resources.length };
    out.pipelinesAfterDestroy = emulator.state().subscriptions.filter((s) => s.product === 107 && s.status === 'active').length;
  } finally {
    await emulator.stop();
  }
  process.stdout.write(JSON.stringify(out));
}
main().catch((e) => { process.stderr.write(String(e && e.stack || e)); process.exit(1); });
`;

test('require(\'data-pipeline-integration-cdk/testing\') starts the emulator and deploys and destroys an app', () => {
  writeFileSync(join(project, 'run.js'), SCRIPT);
  const out = JSON.parse(sh(process.execPath, ['run.js'], project, 120_000)) as {
    url: string;
    exports: string[];
    pipelinesAfterDeploy: number;
    pipelinesAfterDestroy: number;
    deployed: { success: boolean; error?: string; resources: string[] };
    destroyed: { success: boolean; error?: string; resources: number };
  };
  expect(out.url).toMatch(/^http:\/\/127\.0\.0\.1:\d+$/);
  expect(out.exports).toEqual(['EMULATOR_REFRESH_TOKEN', 'runLocalDeploy', 'startEmulator']);
  expect(out.deployed).toEqual({ success: true, resources: ['Custom::DpiNotificationPipeline'] });
  expect(out.pipelinesAfterDeploy).toBe(1);
  expect(out.destroyed).toEqual({ success: true, resources: 0 });
  expect(out.pipelinesAfterDestroy).toBe(0);
}, 120_000);

test('the entry point\'s types resolve with node16 and node10 module resolution', () => {
  writeFileSync(join(project, 'check.ts'), [
    "import { EMULATOR_REFRESH_TOKEN, EmulatorOptions, LocalDeployOptions, LocalDeployResult, runLocalDeploy, startEmulator } from 'data-pipeline-integration-cdk/testing';",
    'const e: EmulatorOptions = { port: 0, rateLimit: { requests: 5, seconds: 1 }, fixtures: { remoteIdentities: [{ id: 1, account: 1001, remote_identity_type_id: 17 }] } };',
    "const o: LocalDeployOptions = { app: 'cdk.out', refreshToken: EMULATOR_REFRESH_TOKEN, fixtures: 'fixtures.json', concurrency: 2 };",
    'export async function f(): Promise<boolean> { const em = await startEmulator(e); const r: LocalDeployResult = await runLocalDeploy({ ...o, emulatorUrl: em.url }); await em.stop(); return r.success; }',
    '',
  ].join('\n'));
  const tsc = join(ROOT, 'node_modules', 'typescript', 'bin', 'tsc');
  for (const [module, resolution] of [['node16', 'node16'], ['commonjs', 'node10']]) {
    const args = [tsc, '--noEmit', '--strict', '--skipLibCheck', 'false', '--module', module, '--moduleResolution', resolution, '--target', 'es2022', '--types', 'node', 'check.ts'];
    if (resolution === 'node10') args.push('--ignoreDeprecations', '6.0');
    expect(() => sh(process.execPath, args, project, 120_000)).not.toThrow();
  }
}, 240_000);
