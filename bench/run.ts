/**
 * Benchmarks of the service client against the emulator, of the `dpi` start-up and of synth against its floor (see docs/bench.md).
 *
 *   npx ts-node --transpile-only bench/run.ts      (or: npm run bench)
 *
 * Prints ratios of two variants measured side by side in one run (interleaved rounds), plus the service calls
 * each variant made, read from the emulator's request log. No absolute-time assertions: the machine is shared.
 * Loopback only: the emulator listens on 127.0.0.1 with a free port and is stopped at the end.
 * BENCH_ROUNDS (1-20, default 7) sets the rounds per case; BENCH_CASES (e.g. `5,7`) runs only the cases of those
 * numbers. Exit code 1 when a variant made other service calls (or, in the synth cases, other templates) than
 * expected (counts are deterministic; times are never asserted).
 *
 * Then the fleets at the service's real limit (bench/cloud-limit.ts, time-scaled): BENCH_FLEET (default `300`; e.g.
 * `300,2000`, or `none`) sizes deployed, updated for one identity and destroyed; BENCH_ADOPT (default: BENCH_FLEET)
 * sizes of an existing fleet imported (`dpi import`), adopted and released (bench/lib/adoption.ts); BENCH_TIME_SCALE
 * (default 5); BENCH_UPDATES (default 1) one-identity updates after each deploy, each its own row; and the wave plan
 * of BENCH_PLAN (default `10000:40`, or `none`). Exit code 1 when a phase or resource failed there.
 */
import * as os from 'node:os';
import { performance } from 'node:perf_hooks';
import { CaseContext, cliStartup, concurrentTokenSharing, jwtCaching, retryOverhead, txCli, txListing } from './cases';
import { measureAdoption } from './lib/adoption';
import { checkWavePlan, CloudLimitResult, cloudLimitTable, measureAtLimit } from './lib/cloud-limit';
import { synthFloor } from './synth-cases';
import { startEmulator } from '../src/emulator';
import { AbResult } from './lib/ab';
import { EmulatorAdmin } from './lib/admin';
import { formatCase, tableHeader } from './lib/report';

/** No new round of a case starts after this much time since the case began. */
const CASE_BUDGET_MS = 20_000;

function roundsFromEnv(): number {
  const raw = process.env.BENCH_ROUNDS;
  if (raw === undefined || raw === '') return 7;
  const n = Number(raw);
  if (!Number.isInteger(n) || n < 1 || n > 20) throw new Error('BENCH_ROUNDS must be an integer from 1 to 20');
  return n;
}

/** The case numbers BENCH_CASES selects (all when unset). */
function casesFromEnv(): Set<number> | undefined {
  const raw = process.env.BENCH_CASES;
  if (raw === undefined || raw.trim() === '') return undefined;
  const picked = raw.split(',').map((p) => Number(p.trim()));
  if (picked.some((n) => !Number.isInteger(n) || n < 1)) throw new Error('BENCH_CASES must list case numbers, e.g. 5,7');
  return new Set(picked);
}

async function main(): Promise<boolean> {
  const started = performance.now();
  const rounds = roundsFromEnv();
  // The benchmarks measure the client, not the service's rate limit (thousands of calls in seconds).
  const emu = await startEmulator({ host: '127.0.0.1', port: 0, rateLimit: 'off' });
  try {
    const only = casesFromEnv();
    const ctx: CaseContext = { url: emu.url, admin: new EmulatorAdmin(emu.url), rounds, deadline: 0 };
    const cpus = os.cpus();
    console.log('DPI benchmarks: client, command line, synth (ratios measured side by side in one run; B/A > 1 means variant A is that many times faster)');
    console.log(`environment: node ${process.version}, ${os.platform()} ${os.arch()}, ${cpus.length} core(s)`
      + `${cpus[0] ? ` (${cpus[0].model.trim()})` : ''}, load avg ${os.loadavg().map((l) => l.toFixed(2)).join(' ')}`);
    console.log(`emulator: ${emu.url} (in process); ${rounds} round(s) per case, A/B interleaved (AB, BA, ...) after one warm-up run each`);
    console.log('');
    console.log(tableHeader());
    const cases: Array<(c: CaseContext) => Promise<AbResult>> = [jwtCaching, concurrentTokenSharing, txListing, retryOverhead, cliStartup, txCli,
      synthFloor({ number: 7, pipelines: 200 }),
      synthFloor({ number: 8, pipelines: 200, builtinValidation: false }),
      synthFloor({ number: 9, pipelines: 2000, maxRounds: 5 })];
    let failed = 0;
    for (const [i, run] of cases.entries()) {
      if (only && !only.has(i + 1)) continue;
      const result = await run({ ...ctx, deadline: Date.now() + CASE_BUDGET_MS });
      for (const line of formatCase(result)) console.log(line);
      if (result.mismatches.length > 0) failed++;
    }
    failed += await fleetsAtTheLimit();
    console.log('');
    console.log(`total ${((performance.now() - started) / 1000).toFixed(1)} s`
      + `${failed > 0 ? `; ${failed} case(s) failed` : ''}`);
    return failed === 0;
  } finally {
    await emu.stop();
  }
}

/** The fleets at the service's limit (time-scaled) and the wave plan: the failed phases and plan checks. */
async function fleetsAtTheLimit(): Promise<number> {
  const listOf = (v: string): number[] => (v === 'none' ? [] : v.split(',').map(Number));
  const sizes = listOf(process.env.BENCH_FLEET ?? '300');
  const adopt = listOf(process.env.BENCH_ADOPT ?? process.env.BENCH_FLEET ?? '300');
  const timeScale = Number(process.env.BENCH_TIME_SCALE ?? '5');
  const updates = Number(process.env.BENCH_UPDATES ?? '1');
  const plan = process.env.BENCH_PLAN ?? '10000:40';
  if ([...sizes, ...adopt].some((n) => !Number.isInteger(n) || n < 20) || !(timeScale >= 1) || !/^(none|\d+:\d+)$/.test(plan) || !Number.isInteger(updates) || updates < 0) {
    throw new Error('BENCH_FLEET and BENCH_ADOPT must list fleet sizes of at least 20 (or be none), BENCH_TIME_SCALE a number >= 1, BENCH_UPDATES an '
      + 'integer >= 0, BENCH_PLAN IDENTITIES:NESTED_STACKS or none');
  }
  let failed = 0;
  if (sizes.length + adopt.length > 0) {
    console.log('');
    console.log(`Fleets at the service's limit (1,000 requests per 5 minutes), time scale ${timeScale}: cloud time / rate floor per phase (bench/cloud-limit.ts)`);
    const results: CloudLimitResult[] = [];
    const o = { timeScale, latency: { ms: 150, jitterMs: 100 }, concurrency: 100 };
    for (const fleet of sizes) results.push(await measureAtLimit({ ...o, fleet, updates }));
    const adoptions = [];
    for (const fleet of adopt) adoptions.push(await measureAdoption({ ...o, fleet }));
    for (const line of cloudLimitTable([...results, ...adoptions])) console.log(line);
    for (const a of adoptions) {
      console.log(`${a.fleet}: dpi import made ${a.imported.requests} requests (rate floor ${(a.imported.floorSeconds / 60).toFixed(1)} min, counted, not timed)`
        + `${a.changed > 0 ? `; the adoption changed ${a.changed} stored record(s)` : ''}`);
      if (a.changed > 0) failed++;
    }
    for (const r of [...results, ...adoptions]) {
      for (const p of r.phases) for (const f of p.failures) console.log(`${r.fleet} ${p.phase}: ${f}`);
      failed += r.phases.filter((p) => !p.ok || p.failed > 0).length + (r.left > 0 ? 1 : 0);
    }
  }
  if (plan !== 'none') {
    const [identities, nested] = plan.split(':').map(Number);
    const w = checkWavePlan(identities, nested);
    console.log(`Wave plan of ${identities} identities over ${w.nestedStacks} nested stacks: ${w.waves.length} waves (${w.waves.join(', ')}), `
      + `rate floor ${w.floorMinutes.toFixed(0)} min, largest wave ${w.longestWaveMinutes.toFixed(1)} min${w.mismatches.length > 0 ? `; MISMATCH ${w.mismatches.join('; ')}` : ''}`);
    if (w.mismatches.length > 0) failed++;
  }
  return failed;
}

main().then((ok) => {
  process.exitCode = ok ? 0 : 1;
}, (err: unknown) => {
  console.error(`bench failed: ${err instanceof Error ? err.message : String(err)}`);
  process.exitCode = 1;
});
