/**
 * Deploy growth benchmark: for N pipelines (default 10, 100, 1000), synthesizes an app of N notification pipelines
 * (plain stacks of at most 400, or with --fleet one stack whose NotificationPipelineFleet spreads them over nested stacks), deploys and destroys it with `dpi local-deploy` (in process) against an emulator with
 * its rate limit enforced (scaled), and prints the service calls of create and destroy (per pipeline too), the 429s,
 * the wall time, the rate-limit floor (calls / allowed rate) and their ratio. Nothing may be left after the destroy.
 *
 *   npx ts-node --transpile-only bench/deploy-growth.ts [--n 10,100,1000] [--rate 100/10] [--concurrency 10] [--history] [--fleet]
 *
 * Loopback only. Exit code 1 when a phase failed, something was left, or a
 * pipeline Create took more than 4 calls or a Delete more than 3. Times are reported, never asserted.
 */
import * as os from 'node:os';
import { measureDeploy, PhaseNumbers } from './lib/deploy-run';
import { parseRateLimit } from '../src/emulator';

function arg(name: string): string | undefined {
  const i = process.argv.indexOf(`--${name}`);
  return i >= 0 ? process.argv[i + 1] : undefined;
}

async function main(): Promise<boolean> {
  const sizes = (arg('n') ?? '10,100,1000').split(',').map((x) => Number(x.trim()));
  if (sizes.some((n) => !Number.isSafeInteger(n) || n < 1)) throw new Error('--n must be a comma-separated list of positive integers');
  const rate = parseRateLimit(arg('rate') ?? '100/10');
  if (rate === 'off') throw new Error('--rate must be N/SECONDS: the benchmark measures the wall time against the limit');
  const concurrency = arg('concurrency') !== undefined ? Number(arg('concurrency')) : undefined;
  const history = process.argv.includes('--history');
  const fleet = process.argv.includes('--fleet');
  const cpus = os.cpus();
  console.log(`Deploy growth: dpi local-deploy against the emulator, rate limit ${rate.requests} requests / ${rate.seconds} s, `
    + `concurrency ${concurrency ?? 'default'}${fleet ? ', one NotificationPipelineFleet (nested stacks)' : ''}${history ? ', after one deploy+destroy cycle of the same app (account history)' : ''}`);
  console.log(`environment: node ${process.version}, ${os.platform()} ${os.arch()}, ${cpus.length} core(s), load avg ${os.loadavg().map((l) => l.toFixed(2)).join(' ')}`);
  console.log('');
  console.log('| N | stacks | phase | calls | per pipeline | token exchanges | 429s | wall s | floor s | wall/floor | failures |');
  console.log('|---|---|---|---|---|---|---|---|---|---|---|');
  let ok = true;
  const started = Date.now();
  for (const n of sizes) {
    const r = await measureDeploy({ pipelines: n, rateLimit: rate, concurrency, warmHistory: history, fleet });
    const row = (phase: string, p: PhaseNumbers): string => `| ${n} | ${r.stacks} | ${phase} | ${p.calls} | ${p.perPipeline.toFixed(2)} | `
      + `${p.exchanges} | ${p.refused} | ${p.wallSeconds.toFixed(1)} | ${p.floorSeconds.toFixed(1)} | ${(p.wallSeconds / p.floorSeconds).toFixed(2)} | `
      + `${p.failures.length} |`;
    console.log(row('create', r.deploy));
    console.log(row('destroy', r.destroy));
    const notes = [`synth ${r.synthSeconds.toFixed(1)} s`, `left after destroy: ${r.left}`, `emulator state writes: ${r.stateWrites}`,
      `create calls: ${JSON.stringify(r.deploy.byCall)}`, `destroy calls: ${JSON.stringify(r.destroy.byCall)}`];
    console.log(`|   |   | notes | ${notes.join('; ')} |`);
    for (const f of [...r.deploy.failures, ...r.destroy.failures].slice(0, 5)) console.log(`    failure: ${f}`);
    // The product record, account and user are read once per Lambda container: the bound allows them on top.
    if (!r.deploy.ok || !r.destroy.ok || r.left > 0 || r.deploy.calls > 3 * n + 3 * r.deploy.containers || r.destroy.calls > 3 * n) ok = false;
  }
  console.log('');
  console.log(`total ${((Date.now() - started) / 1000).toFixed(1)} s`);
  return ok;
}

main().then((ok) => {
  process.exitCode = ok ? 0 : 1;
}, (err: unknown) => {
  console.error(`deploy growth benchmark failed: ${err instanceof Error ? err.stack : String(err)}`);
  process.exitCode = 1;
});
