/**
 * Benchmarks of the service client against the emulator (see docs/bench.md).
 *
 *   npx ts-node --transpile-only bench/run.ts      (or: npm run bench)
 *
 * Prints ratios of two variants measured side by side in one run (interleaved rounds), plus the service calls
 * each variant made, read from the emulator's request log. No absolute-time assertions: the machine is shared.
 * Loopback only: the emulator listens on 127.0.0.1 with a free port and is stopped at the end.
 * BENCH_ROUNDS (1-20, default 7) sets the rounds per case. Exit code 1 when a variant made other service calls
 * than expected (counts are deterministic; times are never asserted).
 */
import * as os from 'node:os';
import { performance } from 'node:perf_hooks';
import { CaseContext, cliStartup, concurrentTokenSharing, jwtCaching, retryOverhead, txCli, txListing } from './cases';
import { startEmulator } from '../src/emulator';
import { AbResult } from './lib/ab';
import { EmulatorAdmin } from './lib/admin';
import { formatCase, tableHeader } from './lib/report';

/** No new round starts after this much time (the whole run stays well under a minute). */
const BUDGET_MS = 45_000;

function roundsFromEnv(): number {
  const raw = process.env.BENCH_ROUNDS;
  if (raw === undefined || raw === '') return 7;
  const n = Number(raw);
  if (!Number.isInteger(n) || n < 1 || n > 20) throw new Error('BENCH_ROUNDS must be an integer from 1 to 20');
  return n;
}

async function main(): Promise<boolean> {
  const started = performance.now();
  const rounds = roundsFromEnv();
  // The benchmarks measure the client, not the service's rate limit (thousands of calls in seconds).
  const emu = await startEmulator({ host: '127.0.0.1', port: 0, rateLimit: 'off' });
  try {
    const ctx: CaseContext = { url: emu.url, admin: new EmulatorAdmin(emu.url), rounds, deadline: Date.now() + BUDGET_MS };
    const cpus = os.cpus();
    console.log('DPI client benchmarks (ratios measured side by side in one run; B/A > 1 means variant A is that many times faster)');
    console.log(`environment: node ${process.version}, ${os.platform()} ${os.arch()}, ${cpus.length} core(s)`
      + `${cpus[0] ? ` (${cpus[0].model.trim()})` : ''}, load avg ${os.loadavg().map((l) => l.toFixed(2)).join(' ')}`);
    console.log(`emulator: ${emu.url} (in process); ${rounds} round(s) per case, A/B interleaved (AB, BA, ...) after one warm-up run each`);
    console.log('');
    console.log(tableHeader());
    const cases: Array<(c: CaseContext) => Promise<AbResult>> = [jwtCaching, concurrentTokenSharing, txListing, retryOverhead, cliStartup, txCli];
    let failed = 0;
    for (const run of cases) {
      const result = await run(ctx);
      for (const line of formatCase(result)) console.log(line);
      if (result.mismatches.length > 0) failed++;
    }
    console.log('');
    console.log(`total ${((performance.now() - started) / 1000).toFixed(1)} s`
      + `${failed > 0 ? `; ${failed} case(s) made unexpected service calls` : ''}`);
    return failed === 0;
  } finally {
    await emu.stop();
  }
}

main().then((ok) => {
  process.exitCode = ok ? 0 : 1;
}, (err: unknown) => {
  console.error(`bench failed: ${err instanceof Error ? err.message : String(err)}`);
  process.exitCode = 1;
});
