/**
 * The packed package as a user installs it: `npm pack`, an offline install into a fresh project (the peer dependencies
 * aws-cdk-lib and constructs linked from this repository's node_modules; nothing else: the package has no
 * dependencies, so neither the AWS SDK nor dynalite can be resolved there).
 *
 * - The package is lean: no `dependencies` nor `bundledDependencies`, at most 5 MB unpacked, and no bundle but the
 *   handler's (the Lambda runtime provides the SDK) requires a module the package does not ship.
 * - A jest-free node script requires `data-pipeline-integration-cdk/testing`, starts the emulator on 127.0.0.1:0,
 *   deploys a small app synthesized with the packed constructs through `runLocalDeploy`, destroys it and stops.
 * - The installed `dpi` deploys an app with `local-deploy` (the embedded emulator, the local journal server, the handler
 *   with its DynamoDB client from the package's vendor bundle), lists the journal and the orphans, and destroys it.
 * - The vendor bundle's CloudFormation client (`dpi drift`, `orphans`, `plan`) reads a stack from a fake endpoint.
 * - TypeScript resolves the entry's types with `node16` and with `node10` module resolution (`exports`, `typesVersions`).
 *
 * Needs the compiled library and the bundles: `npx projen compile && npx projen bundle`.
 */
import { execFile, execFileSync } from 'node:child_process';
import { existsSync, mkdirSync, mkdtempSync, readdirSync, readFileSync, rmSync, symlinkSync, writeFileSync } from 'node:fs';
import { createServer, Server } from 'node:http';
import { builtinModules } from 'node:module';
import { AddressInfo } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';

const ROOT = join(__dirname, '..', '..');
/**
 * The package's size limit (bytes unpacked, as `npm pack --json` reports it): 5.3 MB for the code and docs (5.8 MB in
 * all with the tutorial, the troubleshooting page, the emulator's vendor routes, the provider's continuation, the
 * monitoring facade, the output widths and the HistoryRequest continuation fixes: 5.80 MB measured), and 0.5 MB for
 * the licence notices of the bundled third-party code and the SBOM (about 0.15 MB today; scripts/third-party-notices.js).
 */
const UNPACKED_LIMIT = 6_000_000;
const BUNDLES = ['assets/cli/dpi/index.js', 'assets/cli/ops/index.js', 'assets/local/runner/index.js', 'assets/emulator/server/index.js', 'assets/local/vendor/index.js'];
for (const f of ['lib/testing.js', 'lib/index.js', 'assets/handler/index/index.js', ...BUNDLES]) {
  if (!existsSync(join(ROOT, f))) throw new Error(`${f} is missing: run 'npx projen compile && npx projen bundle' before the packaging test`);
}

const NPM_ENV = { ...process.env, npm_config_audit: 'false', npm_config_fund: 'false', npm_config_update_notifier: 'false' };
function sh(cmd: string, args: string[], cwd: string, timeout = 180_000): string {
  try {
    return execFileSync(cmd, args, { cwd, encoding: 'utf8', stdio: ['ignore', 'pipe', 'pipe'], env: NPM_ENV, timeout, maxBuffer: 64 * 1024 * 1024 });
  } catch (e) {
    const x = e as { stdout?: string; stderr?: string; message: string };
    throw new Error(`${cmd} ${args.join(' ')} failed: ${x.message}\n${x.stdout ?? ''}\n${x.stderr ?? ''}`);
  }
}

interface PackReport {
  size: number;
  unpackedSize: number;
  entryCount: number;
  bundled: string[];
  files: Array<{ path: string; size: number }>;
}

let dir: string;
let project: string;
let packed: PackReport;
/** The installed package's directory. */
let installed: string;

beforeAll(() => {
  dir = mkdtempSync(join(tmpdir(), 'dpi-pack-'));
  packed = (JSON.parse(sh('npm', ['pack', '--json', '--pack-destination', dir], ROOT)) as PackReport[])[0];
  const tarball = readdirSync(dir).find((f) => f.endsWith('.tgz'));
  if (!tarball) throw new Error(`npm pack wrote no tarball into ${dir}`);
  project = join(dir, 'consumer');
  mkdirSync(project, { recursive: true });
  writeFileSync(join(project, 'package.json'), JSON.stringify({ name: 'consumer', version: '1.0.0', private: true }));
  // Offline: the package has no dependencies; the peers are not installed here.
  sh('npm', ['install', '--offline', '--no-audit', '--no-fund', '--legacy-peer-deps', '--no-package-lock', join(dir, tarball)], project);
  installed = join(project, 'node_modules', 'data-pipeline-integration-cdk');
  // The peer dependencies (and node's types) from this repository, as a CDK app has them (linked after the install,
  // which would remove them as extraneous).
  mkdirSync(join(project, 'node_modules', '@types'), { recursive: true });
  for (const dep of ['aws-cdk-lib', 'constructs', '@types/node']) symlinkSync(join(ROOT, 'node_modules', dep), join(project, 'node_modules', dep), 'dir');
}, 300_000);

afterAll(() => {
  if (dir) rmSync(dir, { recursive: true, force: true });
});

test('the package has no dependencies, ships no node_modules and stays within the size limit', () => {
  const pkg = JSON.parse(readFileSync(join(installed, 'package.json'), 'utf8')) as Record<string, unknown>;
  expect(pkg.dependencies).toBeUndefined();
  expect(pkg.bundledDependencies).toBeUndefined();
  expect(pkg.bundleDependencies).toBeUndefined();
  expect(Object.keys(pkg.peerDependencies as Record<string, string>).sort()).toEqual(['aws-cdk-lib', 'constructs']);
  expect(packed.bundled).toEqual([]);
  expect(packed.files.filter((f) => f.path.startsWith('node_modules/'))).toEqual([]);
  expect(packed.unpackedSize).toBeGreaterThan(0);
  expect(packed.unpackedSize).toBeLessThanOrEqual(UNPACKED_LIMIT);
  // Nothing but the package itself was installed (the peers are linked afterwards).
  expect(readdirSync(join(project, 'node_modules')).filter((d) => !['.package-lock.json', '@types', 'aws-cdk-lib', 'constructs', 'data-pipeline-integration-cdk', '.bin'].includes(d))).toEqual([]);
});

test('every bundle ships the licences of the third-party code in it, and the package an SBOM of all of it', () => {
  const shipped = new Set(packed.files.map((f) => f.path));
  for (const b of ['handler/index', 'cli/dpi', 'cli/ops', 'local/runner', 'local/vendor', 'emulator/server']) {
    expect(shipped.has(`assets/${b}/THIRD-PARTY-NOTICES.txt`)).toBe(true);
  }
  const notices = (b: string): string => readFileSync(join(installed, 'assets', ...b.split('/'), 'THIRD-PARTY-NOTICES.txt'), 'utf8');
  expect(notices('emulator/server')).toMatch(/^fastify \d+\.\d+\.\d+ \(MIT\)$/m);
  expect(notices('cli/dpi')).toMatch(/^commander \d+\.\d+\.\d+ \(MIT\)\n-+\n\(The MIT License\)/m);
  expect(notices('local/vendor')).toMatch(/^dynalite \d+\.\d+\.\d+ \(Apache-2\.0\)$/m);
  // The Lambda code (the handler's asset folder) bundles none: the AWS SDK is the runtime's.
  expect(notices('handler/index')).toContain('contains no third-party code');
  const sbom = JSON.parse(readFileSync(join(installed, 'assets', 'sbom.cdx.json'), 'utf8')) as {
    bomFormat: string; specVersion: string; components: Array<{ name: string; version: string; purl: string; licenses: unknown[] }>;
  };
  expect([sbom.bomFormat, sbom.specVersion]).toEqual(['CycloneDX', '1.5']);
  const fastify = sbom.components.find((c) => c.name === 'fastify')!;
  expect(fastify.purl).toBe(`pkg:npm/fastify@${fastify.version}`);
  expect(fastify.licenses).toEqual([{ license: { id: 'MIT' } }]);
  expect(sbom.components.every((c) => JSON.stringify(c.licenses) !== '[{"license":{"id":"UNKNOWN"}}]')).toBe(true);
});

test('neither the AWS SDK nor dynalite resolves from the installed package (the runs below use its own bundles)', () => {
  for (const id of ['@aws-sdk/client-dynamodb', '@aws-sdk/client-cloudformation', '@aws-sdk/client-secrets-manager', 'dynalite', 'level', 'memory-level']) {
    expect(() => require.resolve(id, { paths: [installed, join(installed, 'assets', 'local', 'runner')] })).toThrow(/Cannot (find|resolve) module/);
  }
});

test('only the handler bundle requires modules from outside the package (@aws-sdk/*, which the Lambda runtime provides)', () => {
  const bare = /require\("((?!node:)[^".\/][^"]*)"\)/g;
  const builtins = new Set(builtinModules);
  for (const f of BUNDLES) {
    const code = readFileSync(join(installed, f), 'utf8');
    const outside = [...code.matchAll(bare)].map((m) => m[1])
      // Text, not requires: the emulator's fastify compiles response schemas from source text that names ajv's runtime;
      // an SDK error message tells how to register the optional CRT signer (SigV4a, which neither client uses).
      .filter((id) => !builtins.has(id) && !id.startsWith('ajv/') && !id.startsWith('ajv-formats/') && id !== '@aws-sdk/signature-v4-crt');
    expect({ bundle: f, outside: [...new Set(outside)] }).toEqual({ bundle: f, outside: [] });
  }
  const handler = readFileSync(join(installed, 'assets', 'handler', 'index', 'index.js'), 'utf8');
  expect(handler).toContain('require("@aws-sdk/client-dynamodb")');
  // The SDK itself is not in the handler bundle.
  expect(handler).not.toContain('@smithy/');
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
  const env = { account: '123456789012', region: 'us-east-1' };
  const journal = new dpi.LifecycleJournal(new Stack(app, 'DpiJournal', { env, terminationProtection: true }), 'Journal');
  const stack = new Stack(app, 'Consumer', { env });
  const connection = new dpi.ServiceConnection(stack, 'Dpi', {
    singleOriginUrl: 'https://api.example-dpi.com',
    refreshToken: secretsmanager.Secret.fromSecretNameV2(stack, 'Token', 'dpi/refresh-token'),
    journal,
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

const SYNTH = `
const { App, Stack } = require('aws-cdk-lib');
const secretsmanager = require('aws-cdk-lib/aws-secretsmanager');
const dpi = require('data-pipeline-integration-cdk');
const app = new App({ outdir: process.argv[2] });
const stack = new Stack(app, 'Consumer', { env: { account: '123456789012', region: 'us-east-1' } });
const connection = new dpi.ServiceConnection(stack, 'Dpi', {
  singleOriginUrl: 'https://api.example-dpi.com',
  refreshToken: secretsmanager.Secret.fromSecretNameV2(stack, 'Token', 'dpi/refresh-token'),
  journalTableName: 'dpi-lifecycle-journal',
});
const roles = new dpi.NotificationPipelineRoles(stack, 'Roles', { serviceAccountId: '111122223333', externalId: 'ext-1' });
new dpi.NotificationPipeline(stack, 'Pipeline', {
  connection, roles, remoteIdentityId: 362, accountType: dpi.AccountType.SELLER, notificationTypes: [dpi.NotificationType.ORDER_CHANGE],
});
app.synth();
`;

test('the installed dpi deploys an app with local-deploy, lists its journal and orphans, and destroys it', () => {
  const work = mkdtempSync(join(dir, 'cli-'));
  writeFileSync(join(project, 'synth.js'), SYNTH);
  sh(process.execPath, ['synth.js', join(work, 'cdk.out')], project, 120_000);
  const cli = join(installed, 'assets', 'cli', 'dpi', 'index.js');
  const state = join(work, 'state', 'local-state.json');
  const dpiRun = (...args: string[]): string => sh(process.execPath, [cli, ...args], project, 120_000);

  expect(dpiRun('--version').trim()).toMatch(/^\d+\.\d+\.\d+/);
  const deployed = JSON.parse(dpiRun('local-deploy', '--app', join(work, 'cdk.out'), '--state', state, '--json')) as {
    success: boolean; resources: Array<{ type: string }>;
  };
  expect(deployed.success).toBe(true);
  expect(deployed.resources.map((r) => r.type)).toEqual(['Custom::DpiNotificationPipeline']);
  // The handler wrote its lifecycle journal through the DynamoDB client to the local journal server (dynalite).
  const journal = JSON.parse(dpiRun('journal', 'list', '--local', '--state', state, '--json')) as unknown[];
  expect(JSON.stringify(journal)).toContain('Consumer/');
  expect(journal.length).toBeGreaterThan(0);
  // cli/ops (dpi orphans) reads the same journal: the deployed resource is no orphan.
  expect(JSON.parse(dpiRun('orphans', '--local', '--state', state, '--json'))).toEqual(expect.objectContaining({ orphans: [] }));
  const destroyed = JSON.parse(dpiRun('local-deploy', '--app', join(work, 'cdk.out'), '--state', state, '--destroy', '--json')) as {
    success: boolean; resources: unknown[];
  };
  expect(destroyed).toEqual(expect.objectContaining({ success: true, resources: [] }));
}, 240_000);

test('the vendor bundle\'s CloudFormation client reads a stack (fake endpoint, static credentials)', async () => {
  const requests: string[] = [];
  const server: Server = createServer((req, res) => {
    let body = '';
    req.on('data', (c: Buffer) => { body += c.toString(); });
    req.on('end', () => {
      requests.push(body);
      res.setHeader('content-type', 'text/xml');
      res.end('<DescribeStacksResponse xmlns="http://cloudformation.amazonaws.com/doc/2010-05-15/"><DescribeStacksResult><Stacks><member>'
        + '<StackName>Consumer</StackName><StackId>arn:aws:cloudformation:us-east-1:123456789012:stack/Consumer/1</StackId>'
        + '<StackStatus>UPDATE_COMPLETE</StackStatus><CreationTime>2026-01-01T00:00:00Z</CreationTime></member></Stacks>'
        + '</DescribeStacksResult><ResponseMetadata><RequestId>r1</RequestId></ResponseMetadata></DescribeStacksResponse>');
    });
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  try {
    const endpoint = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
    const script = `
      const v = require(${JSON.stringify(join(installed, 'assets', 'local', 'vendor', 'index.js'))});
      const cfn = v.vendorModule('@aws-sdk/client-cloudformation');
      const c = new cfn.CloudFormationClient({ endpoint: ${JSON.stringify(endpoint)}, region: 'us-east-1', credentials: { accessKeyId: 'AKIDLOCAL', secretAccessKey: 'local' } });
      c.send(new cfn.DescribeStacksCommand({ StackName: 'Consumer' })).then((out) => process.stdout.write(JSON.stringify(out.Stacks.map((s) => [s.StackName, s.StackStatus]))), (e) => { process.stderr.write(String(e.stack)); process.exit(1); });
    `;
    writeFileSync(join(project, 'cfn.js'), script);
    const out = await new Promise<string>((resolve, reject) => {
      // Asynchronous: this process's server answers while the script runs.
      execFile(process.execPath, ['cfn.js'], { cwd: project, env: NPM_ENV, timeout: 60_000 },
        (e, stdout, stderr) => (e ? reject(new Error(`${e.message}\n${stderr}`)) : resolve(stdout)));
    });
    expect(JSON.parse(out)).toEqual([['Consumer', 'UPDATE_COMPLETE']]);
    expect(requests).toEqual([expect.stringContaining('Action=DescribeStacks')]);
  } finally {
    await new Promise<void>((resolve) => server.close(() => resolve()));
  }
}, 120_000);
