/**
 * `npm run faults`: the fault matrix over every service call of the example app's lifecycle (see
 * test/faults/matrix.ts), then the kill test at every call of create, update and destroy. Prints the table of outcomes
 * and every scenario that did not survive or fail clearly; exit code 1 when any scenario harmed a bystander (a record
 * the app did not make; see test/faults/bystanders.ts), is inconsistent, stuck or leaked.
 *
 *   npm run faults                      every point, every fault kind, every kill
 *   npm run faults -- --sample 40       a fixed-seed sample of 40 scenarios (and 4 kills)
 *   npm run faults -- --kinds 500,drop  only these fault kinds
 *   npm run faults -- --no-kill         without the kill test
 *   npm run faults -- --only 'unified'  only the calls whose label (e.g. `create #2 POST /service/...`) matches
 */
import { ACCEPTED, CallPoint, FAULT_KINDS, FaultKind, FaultLab, label, renderTable, ScenarioResult } from '../test/faults/matrix';
import { appliesTo } from '../test/faults/runner-faults';
import { sample } from '../test/faults/sample';

interface Args { sample?: number; seed: number; kinds?: string[]; kill: boolean; verbose: boolean; only?: RegExp }

function parseArgs(argv: string[]): Args {
  const args: Args = { seed: 11, kill: true, verbose: false };
  for (let i = 0; i < argv.length; i++) {
    const a = argv[i];
    const next = (): string => {
      const v = argv[++i];
      if (v === undefined) throw new Error(`${a} needs a value`);
      return v;
    };
    if (a === '--sample') args.sample = Number(next());
    else if (a === '--seed') args.seed = Number(next());
    else if (a === '--kinds') args.kinds = next().split(',');
    else if (a === '--no-kill') args.kill = false;
    else if (a === '--only') args.only = new RegExp(next());
    else if (a === '--verbose') args.verbose = true;
    else throw new Error(`unknown option ${a} (use --sample N, --seed N, --kinds a,b, --only REGEX, --no-kill, --verbose)`);
  }
  if (args.sample !== undefined && (!Number.isInteger(args.sample) || args.sample < 1)) throw new Error('--sample must be a positive integer');
  return args;
}

async function main(): Promise<void> {
  const args = parseArgs(process.argv.slice(2));
  const t0 = Date.now();
  const lab = await FaultLab.start();
  const write = (l = ''): void => {
    process.stdout.write(`${l}\n`);
  };
  try {
    const kinds: FaultKind[] = args.kinds ? FAULT_KINDS.filter((k) => args.kinds!.includes(k.name)) : [...FAULT_KINDS];
    if (args.kinds && kinds.length !== args.kinds.length) throw new Error(`unknown fault kind in ${args.kinds.join(',')}; kinds: ${FAULT_KINDS.map((k) => k.name).join(', ')}`);
    const points = lab.points.filter((p) => !args.only || args.only.test(label(p)));
    // A cancel fault only where CloudFormation cancels (create and update, not a destroy's Deletes).
    let scenarios: Array<{ point: CallPoint; kind: FaultKind }> = points.flatMap((point) => kinds.filter((k) => appliesTo(k.runner, point.phase))
      .map((kind) => ({ point, kind })));
    if (args.sample !== undefined) scenarios = sample(scenarios, args.sample, args.seed);
    write(`Example app lifecycle: ${lab.points.length} service calls (create ${lab.points.filter((p) => p.phase === 'create').length}, `
      + `update ${lab.points.filter((p) => p.phase === 'update').length}, destroy ${lab.points.filter((p) => p.phase === 'destroy').length}); `
      + `${scenarios.length} fault scenarios.`);
    write(`Bystanders in every scenario: ${lab.bystanders.records.map((b) => `${b.name} (${b.kind})`).join(', ')}.`);
    const results: ScenarioResult[] = [];
    for (const [i, s] of scenarios.entries()) {
      const r = await lab.run(s.point, s.kind);
      results.push(r);
      if (args.verbose || !ACCEPTED.has(r.outcome)) {
        write(`  [${i + 1}/${scenarios.length}] ${label(r.point)} ${r.kind}: ${r.outcome}${r.detail ? ` (${r.detail})` : ''}`);
      }
    }
    write();
    for (const l of renderTable(results)) write(l);
    let kills: ScenarioResult[] = [];
    if (args.kill) {
      const killAt = args.sample !== undefined ? sample(points, Math.max(2, Math.ceil(args.sample / 10)), args.seed) : points;
      write();
      write(`Kill test: the runner killed with SIGKILL at ${killAt.length} call(s), with the call applied and not applied, then run again and destroyed.`);
      for (const p of killAt) {
        for (const applied of [true, false]) {
          const r = await lab.kill(p, applied);
          kills.push(r);
          if (args.verbose || !ACCEPTED.has(r.outcome)) write(`  ${label(p)} ${r.kind}: ${r.outcome}${r.detail ? ` (${r.detail})` : ''}`);
        }
      }
      write();
      for (const l of renderTable(kills)) write(l);
    }
    const bad = [...results, ...kills].filter((r) => !ACCEPTED.has(r.outcome));
    const avg = (f: (x: (typeof lab.setupMs)[number]) => number): string =>
      (lab.setupMs.reduce((a, x) => a + f(x), 0) / lab.setupMs.length).toFixed(0);
    write();
    write(`Bystanders made ${lab.setupMs.length} times, per scenario on average: ${avg((x) => x.ui)} ms for the UI's records, `
      + `${avg((x) => x.secondJournal)} ms for the second journal's app.`);
    write(`${bad.length === 0 ? 'OK' : 'FAILED'}: ${results.length} fault scenarios, ${kills.length} kills, ${bad.length} harmed, inconsistent, stuck or leaked `
      + `(${((Date.now() - t0) / 1000).toFixed(0)} s).`);
    if (bad.length > 0) process.exitCode = 1;
  } finally {
    await lab.stop();
  }
}

main().catch((e: unknown) => {
  process.stderr.write(`faults: ${(e as Error).message}\n`);
  process.exitCode = 2;
});
