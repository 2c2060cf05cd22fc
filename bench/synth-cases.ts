/**
 * The synth-floor cases: the library's app of N notification pipelines against the same resources declared as bare
 * `CfnResource`s (read from the library's own templates), synthesized side by side in this process.
 */
import { performance } from 'node:perf_hooks';
import type { CaseContext } from './cases';
import { AbResult, runAb, VariantRun } from './lib/ab';
import { formatMs, formatRatio, median } from './lib/stats';
import {
  AppTemplates, cleanup, floorMismatches, readTemplates, SynthOptions, synthFloorApp, synthLibraryApp, tempOutdir,
} from './lib/synth-floor';

/** What the brief of issue 24 asks for at 200 pipelines: the library's synth at most twice its floor. */
export const SYNTH_FLOOR_TARGET = 2.0;

function resourceCount(templates: AppTemplates): number {
  return templates.reduce((n, t) => n + Object.keys(t.template.Resources ?? {}).length, 0);
}

/** Options of one synth-floor case. */
export interface SynthFloorCase extends SynthOptions {
  /** Pipelines of the app. */
  readonly pipelines: number;
  /** Rounds at most (the case's own rounds are fewer than the context's for large apps). @default ctx.rounds */
  readonly maxRounds?: number;
  /** Case number in the table. */
  readonly number: number;
}

/**
 * Case: synth of the library's app (B) vs synth of its floor (A), interleaved, one synth per run (constructs and
 * `app.synth()`, each into a fresh output directory). Every run's templates are compared with the library's
 * reference synth: both variants must produce them exactly (keys sorted), so the floor is the real output.
 */
export function synthFloor(c: SynthFloorCase): (ctx: CaseContext) => Promise<AbResult> {
  return async (ctx) => {
    const options: SynthOptions = { builtinValidation: c.builtinValidation ?? true };
    // The reference: the library's templates, from one synth before the rounds (the floor declares what they hold).
    const refDir = tempOutdir();
    let stackNames: string[];
    let reference: AppTemplates;
    try {
      stackNames = synthLibraryApp(refDir, c.pipelines, options);
      reference = readTemplates(refDir, stackNames);
    } finally {
      cleanup(refDir);
    }
    const resources = resourceCount(reference);
    // Wall times per variant, in the order of the runs (the rounds' pairs are the same positions of both lists).
    const wall: { a: number[]; b: number[] } = { a: [], b: [] };
    const differences = new Set<string>();
    const run = (side: 'a' | 'b', synth: (outdir: string) => void) => async (): Promise<VariantRun> => {
      const dir = tempOutdir();
      try {
        const cpu0 = process.cpuUsage();
        const t0 = performance.now();
        synth(dir);
        wall[side].push(performance.now() - t0);
        // CPU time of this process (user + system): other processes on a shared machine do not count in it.
        const cpu = process.cpuUsage(cpu0);
        const perOpMs = (cpu.user + cpu.system) / 1000;
        // Outside the timed span: what this run wrote, against the reference.
        const mismatches = floorMismatches(reference, dir);
        mismatches.forEach((m) => differences.add(`${side === 'a' ? 'A' : 'B'}: ${m}`));
        const same = mismatches.length === 0 ? 1 : 0;
        return { perOpMs, counts: { 'resources': resourceCount(readTemplates(dir, stackNames)), 'same templates': same } };
      } finally {
        cleanup(dir);
      }
    };
    const result = await runAb({
      title: `${c.number}. Synth floor: ${c.pipelines} NotificationPipelines in ${stackNames.length} stack(s) vs the same resources as bare CfnResources`
        + (options.builtinValidation ? '' : ' (built-in CloudFormation validation off)'),
      op: 'one synth (constructs + app.synth()), CPU ms of this process',
      rounds: Math.min(ctx.rounds, c.maxRounds ?? ctx.rounds),
      deadline: ctx.deadline,
      a: { label: 'A floor (bare CfnResource)', run: run('a', (dir) => synthFloorApp(dir, reference, options)) },
      b: { label: 'B library', run: run('b', (dir) => { synthLibraryApp(dir, c.pipelines, options); }) },
      expect: {
        a: { 'resources': resources, 'same templates': 1 },
        b: { 'resources': resources, 'same templates': 1 },
      },
    });
    const perPipeline = (median(result.b.perOpMs) - median(result.a.perOpMs)) / c.pipelines;
    // The warm-up run is the first of each list; the rounds follow.
    const wallRatios = wall.b.slice(1).map((ms, i) => ms / wall.a[i + 1]);
    result.notes.push(`synth/floor = B/A; the library adds ${perPipeline.toFixed(3)} CPU ms per pipeline over the floor (medians)`
      + `${c.pipelines === 200 ? `; target B/A <= ${SYNTH_FLOOR_TARGET.toFixed(1)}` : ''}`);
    result.notes.push(`wall time: A ${formatMs(median(wall.a.slice(1)))}, B ${formatMs(median(wall.b.slice(1)))}, `
      + `B/A ${formatRatio(median(wallRatios))} (median of rounds)`);
    for (const d of differences) result.notes.push(`template difference: ${d}`);
    result.counted = 'resources and templates';
    return result;
  };
}
