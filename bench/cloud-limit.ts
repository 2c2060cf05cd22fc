/**
 * A fleet at the service's real rate limit, time-scaled (bench/lib/cloud-limit.ts): deploy, a one-identity update and
 * destroy of the platform app per fleet size, each phase's requests, 429s, cloud time against its rate floor (served
 * requests ÷ 1,000 per 5 minutes), failed resources and the longest resource against CloudFormation's hour.
 *
 *   npx ts-node --transpile-only bench/cloud-limit.ts [--n 300,2000] [--adopt 300,2000|none] [--time-scale 5] [--latency 150~100] [--concurrency 100] [--updates 1]
 *   npx ts-node --transpile-only bench/cloud-limit.ts --n 0 --plan 10000:40     (only the wave plan of 10,000 over 40 nested stacks)
 *
 * `--adopt SIZES` (default: the `--n` sizes) also measures `dpi import` adoption of an existing fleet of each size
 * (bench/lib/adoption.ts): pipelines made through the service, imported, then the imported stack deployed (adopted)
 * and destroyed (released) at the limit.
 *
 * `--updates N` (default 1): N one-identity updates after each deploy, each its own row (the first seller's notification
 * types changed, then changed back, and so on).
 *
 * `--plan IDENTITIES:NESTED_STACKS` (default 10000:40; `none` to skip) also synthesizes that fleet and checks the deploy
 * waves its templates chain against the library's wave plan, with the floor of each.
 *
 * Exit code 1 when a phase failed, a resource failed, one took longer than CloudFormation's hour, or something was
 * left after the destroy, or an adoption changed a stored record. The ratios are printed, never asserted (the machine is shared).
 */
import * as os from 'node:os';
import { AdoptionResult, measureAdoption } from './lib/adoption';
import { checkWavePlan, cloudLimitTable, CloudLimitResult, CLOUDFORMATION_HOUR_MS, measureAtLimit, SERVICE_LIMIT } from './lib/cloud-limit';

function arg(name: string, fallback: string): string {
  const i = process.argv.indexOf(name);
  return i >= 0 && process.argv[i + 1] !== undefined ? process.argv[i + 1] : fallback;
}

async function main(): Promise<boolean> {
  const sizes = arg('--n', '300').split(',').map((s) => Number(s.trim())).filter((n) => n !== 0);
  const adoptArg = arg('--adopt', arg('--n', '300'));
  const adopt = adoptArg === 'none' ? [] : adoptArg.split(',').map((s) => Number(s.trim())).filter((n) => n !== 0);
  const plan = arg('--plan', '10000:40');
  const timeScale = Number(arg('--time-scale', '5'));
  const [ms, jitter] = arg('--latency', '150~100').split('~').map(Number);
  const concurrency = Number(arg('--concurrency', '100'));
  const updates = Number(arg('--updates', '1'));
  if ([...sizes, ...adopt].some((n) => !Number.isInteger(n) || n < 1) || !/^(none|\d+:\d+)$/.test(plan) || !(timeScale >= 1) || !(ms >= 0) || !(concurrency >= 1)
    || !Number.isInteger(updates) || updates < 0) {
    throw new Error('usage: --n 300,2000 --adopt 300,2000|none --time-scale N (>= 1) --latency MS~JITTER --concurrency N --updates N --plan IDENTITIES:NESTED_STACKS|none');
  }
  let ok = true;
  if (plan !== 'none') {
    const [identities, nested] = plan.split(':').map(Number);
    const w = checkWavePlan(identities, nested);
    console.log(`Wave plan of ${identities.toLocaleString('en-US')} identities over ${w.nestedStacks} nested stacks (synthesized in ${w.synthSeconds.toFixed(1)} s): `
      + `${w.waves.length} waves of ${w.waves.join(', ')} pipelines; largest nested stack ${w.largestStack}; first deploy ${w.calls.toLocaleString('en-US')} calls, `
      + `rate floor ${w.floorMinutes.toFixed(0)} min; the largest wave's floor ${w.longestWaveMinutes.toFixed(1)} min (each resource's limit: CloudFormation's hour)`);
    for (const m of w.mismatches) console.log(`  MISMATCH: ${m}`);
    if (w.mismatches.length > 0 || w.longestWaveMinutes > 55) ok = false;
  }
  console.log(`Fleets at the service's limit (${SERVICE_LIMIT.requests} requests per ${SERVICE_LIMIT.seconds} s), time scale ${timeScale} `
    + `(every clock ${timeScale}x the wall clock), latency ${ms}~${jitter ?? 0} ms, isolated containers, ${concurrency} resource operations at once`);
  console.log(`environment: node ${process.version}, ${os.cpus().length} core(s), load avg ${os.loadavg().map((l) => l.toFixed(2)).join(' ')}`);
  const results: CloudLimitResult[] = [];
  for (const fleet of sizes) {
    results.push(await measureAtLimit({
      fleet, timeScale, latency: { ms, jitterMs: jitter ?? 0 }, concurrency, updates, log: (l) => console.error(l), keep: process.argv.includes('--keep'),
    }));
  }
  const adoptions: AdoptionResult[] = [];
  for (const fleet of adopt) {
    adoptions.push(await measureAdoption({ fleet, timeScale, latency: { ms, jitterMs: jitter ?? 0 }, concurrency, log: (l) => console.error(l), keep: process.argv.includes('--keep') }));
  }
  if (results.length + adoptions.length > 0) for (const line of cloudLimitTable([...results, ...adoptions])) console.log(line);
  for (const a of adoptions) {
    console.log(`${a.fleet}: dpi import --pipeline-roles made ${a.imported.requests.toLocaleString('en-US')} requests (rate floor `
      + `${(a.imported.floorSeconds / 60).toFixed(1)} min; counted without a limit, not timed): ${a.imported.summary}`);
    if (a.changed > 0) {
      console.log(`${a.fleet}: the adoption's deploy or destroy changed ${a.changed} stored pipeline(s) or subscription(s)`);
      ok = false;
    }
  }
  results.push(...adoptions);
  for (const r of results) {
    if (r.left > 0) console.log(`${r.fleet}: ${r.left} pipeline(s) or subscription(s) left after the destroy`);
    for (const p of r.phases) {
      for (const f of p.failures) console.log(`${r.fleet} ${p.phase}: ${f}`);
      if (!p.ok || p.failed > 0 || p.longestResourceMinutes * 60_000 > CLOUDFORMATION_HOUR_MS) ok = false;
    }
    if (r.left > 0) ok = false;
  }
  return ok;
}

main().then((ok) => {
  process.exitCode = ok ? 0 : 1;
}, (err: unknown) => {
  console.error(`bench failed: ${err instanceof Error ? err.stack ?? err.message : String(err)}`);
  process.exitCode = 1;
});
