/**
 * Synth growth of a NotificationPipelineFleet (see docs/bench.md).
 *
 *   npx projen bench:growth                     (N = 10, 100, 1000, 2000)
 *   npx projen bench:growth -- 10 500           (other sizes)
 *
 * For each N, a child process synthesizes an app with one stack holding a connection, the pipeline roles and a
 * fleet of N seller identities (default nested stack count), and reports its synth seconds and CPU seconds
 * (constructs + synth, measured inside the child, module loading excluded) and peak memory (`process.resourceUsage().maxRSS`). The
 * parent then reads the cloud assembly: resources per stack (the maximum over the parent and nested stacks),
 * stacks (parent + nested), Lambda functions, and template bytes (all templates; the largest one). Nothing is
 * deployed and no network is used. Times are printed, never asserted (the machine is shared).
 */
import { spawnSync } from 'node:child_process';
import { mkdtempSync, readdirSync, readFileSync, rmSync, statSync } from 'node:fs';
import * as os from 'node:os';
import { join } from 'node:path';
import { performance } from 'node:perf_hooks';

const DEFAULT_SIZES = [10, 100, 1000, 2000];

interface ChildResult {
  readonly n: number;
  readonly synthSeconds: number;
  /** User + system CPU seconds of the same span (less sensitive to other load on the machine). */
  readonly synthCpuSeconds: number;
  readonly maxRssMb: number;
}

interface Row extends ChildResult {
  readonly stacks: number;
  readonly maxResourcesPerStack: number;
  readonly lambdaFunctions: number;
  readonly templateBytes: number;
  readonly largestTemplateBytes: number;
  readonly pipelines: number;
}

/** The child: synthesize the fleet app of `n` identities into `outdir`, print one JSON line. */
function child(n: number, outdir: string): void {
  /* eslint-disable @typescript-eslint/no-require-imports */
  const cdk = require('aws-cdk-lib') as typeof import('aws-cdk-lib');
  const sm = require('aws-cdk-lib/aws-secretsmanager') as typeof import('aws-cdk-lib/aws-secretsmanager');
  const lib = require('../src') as typeof import('../src');
  /* eslint-enable @typescript-eslint/no-require-imports */
  const started = performance.now();
  const cpu = process.cpuUsage();
  const app = new cdk.App({ outdir });
  const stack = new cdk.Stack(app, 'Growth', { env: { account: '123456789012', region: 'us-east-1' } });
  const connection = new lib.ServiceConnection(stack, 'Dpi', {
    endpoints: lib.ServiceEndpoints.singleOrigin('https://api.example-dpi.com'),
    refreshToken: sm.Secret.fromSecretNameV2(stack, 'Token', 'dpi/refresh-token'),
  });
  const roles = new lib.NotificationPipelineRoles(stack, 'Roles', { serviceAccountId: '111122223333', externalId: 'ext-1' });
  new lib.NotificationPipelineFleet(stack, 'Sellers', {
    connection,
    roles,
    identities: Array.from({ length: n }, (_, i) => ({
      remoteIdentityId: 100_000 + i,
      accountType: lib.AccountType.SELLER,
      notificationTypes: [lib.NotificationType.ORDER_CHANGE, lib.NotificationType.REPORT_PROCESSING_FINISHED],
    })),
  });
  app.synth();
  const synthSeconds = (performance.now() - started) / 1000;
  const used = process.cpuUsage(cpu);
  const result: ChildResult = { n, synthSeconds, synthCpuSeconds: (used.user + used.system) / 1e6, maxRssMb: process.resourceUsage().maxRSS / 1024 };
  process.stdout.write(`${JSON.stringify(result)}\n`);
}

/** Reads every template of the assembly in `dir` (parent and nested). */
function measureAssembly(dir: string): Omit<Row, keyof ChildResult> {
  let stacks = 0;
  let maxResources = 0;
  let lambdas = 0;
  let bytes = 0;
  let largest = 0;
  let pipelines = 0;
  for (const name of readdirSync(dir)) {
    if (!name.endsWith('.template.json')) continue;
    const file = join(dir, name);
    const size = statSync(file).size;
    const template = JSON.parse(readFileSync(file, 'utf8')) as { Resources?: Record<string, { Type: string }> };
    const resources = Object.values(template.Resources ?? {});
    stacks += 1;
    bytes += size;
    largest = Math.max(largest, size);
    maxResources = Math.max(maxResources, resources.length);
    lambdas += resources.filter((r) => r.Type === 'AWS::Lambda::Function').length;
    pipelines += resources.filter((r) => r.Type === 'Custom::DpiNotificationPipeline').length;
  }
  return { stacks, maxResourcesPerStack: maxResources, lambdaFunctions: lambdas, templateBytes: bytes, largestTemplateBytes: largest, pipelines };
}

function kb(bytes: number): string {
  return bytes >= 1024 * 1024 ? `${(bytes / 1024 / 1024).toFixed(2)} MB` : `${(bytes / 1024).toFixed(0)} KB`;
}

function main(args: string[]): boolean {
  if (args[0] === '--child') {
    child(Number(args[1]), args[2]);
    return true;
  }
  const sizes = args.length > 0 ? args.map(Number) : DEFAULT_SIZES;
  if (sizes.some((n) => !Number.isInteger(n) || n < 1)) throw new Error(`sizes must be positive integers: ${args.join(' ')}`);
  const cpus = os.cpus();
  console.log('NotificationPipelineFleet synth growth (one child process per N; times are not asserted)');
  console.log(`environment: node ${process.version}, ${os.platform()} ${os.arch()}, ${cpus.length} core(s)`
    + `${cpus[0] ? ` (${cpus[0].model.trim()})` : ''}, load avg ${os.loadavg().map((l) => l.toFixed(2)).join(' ')}`);
  console.log('');
  const header = ['N', 'synth s', 'synth CPU s', 'peak MB', 'stacks (1 + nested)', 'resources/stack (max)', 'Lambda functions', 'template bytes (all)', 'largest template'];
  const rows: string[][] = [];
  let ok = true;
  for (const n of sizes) {
    const outdir = mkdtempSync(join(os.tmpdir(), `dpi-growth-${n}-`));
    try {
      const res = spawnSync(process.execPath, ['-r', 'ts-node/register/transpile-only', __filename, '--child', String(n), outdir], {
        encoding: 'utf8',
        maxBuffer: 16 * 1024 * 1024,
        env: { ...process.env, NODE_OPTIONS: `${process.env.NODE_OPTIONS ?? ''} --max-old-space-size=4096`.trim() },
      });
      if (res.status !== 0) {
        console.error(`N=${n}: the synth failed (exit ${res.status}):\n${res.stderr}`);
        ok = false;
        continue;
      }
      const line = res.stdout.trim().split('\n').pop()!;
      const r: Row = { ...(JSON.parse(line) as ChildResult), ...measureAssembly(outdir) };
      if (r.pipelines !== n) {
        console.error(`N=${n}: the assembly holds ${r.pipelines} pipelines`);
        ok = false;
      }
      rows.push([String(n), r.synthSeconds.toFixed(2), r.synthCpuSeconds.toFixed(2), r.maxRssMb.toFixed(0), `${r.stacks} (1 + ${r.stacks - 1})`, String(r.maxResourcesPerStack),
        String(r.lambdaFunctions), kb(r.templateBytes), kb(r.largestTemplateBytes)]);
    } finally {
      rmSync(outdir, { recursive: true, force: true });
    }
  }
  const widths = header.map((h, i) => Math.max(h.length, ...rows.map((r) => r[i].length)));
  const fmt = (cells: string[]): string => `| ${cells.map((c, i) => c.padStart(widths[i])).join(' | ')} |`;
  console.log(fmt(header));
  console.log(`|${widths.map((w) => `${'-'.repeat(w + 1)}:`).join('|')}|`);
  for (const r of rows) console.log(fmt(r));
  return ok;
}

try {
  process.exitCode = main(process.argv.slice(2)) ? 0 : 1;
} catch (err) {
  console.error(`bench:growth failed: ${err instanceof Error ? err.message : String(err)}`);
  process.exitCode = 1;
}
