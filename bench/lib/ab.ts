/** Interleaved A/B measurement: both variants run in every round, alternating which goes first. */
import { median } from './stats';

/** What one run of a variant measured. */
export interface VariantRun {
  /** Wall time per operation of this run, in ms. */
  perOpMs: number;
  /** Service calls (and other counts) of this run, read from the emulator's request log. */
  counts: Record<string, number>;
}

/** One side of a comparison. */
export interface Variant {
  label: string;
  run(): Promise<VariantRun>;
}

/** Per-round results of one variant. */
export interface VariantSeries {
  label: string;
  perOpMs: number[];
  counts: Record<string, number[]>;
}

/** Result of one case. */
export interface AbResult {
  title: string;
  /** What one operation is (e.g. "one GET /account"). */
  op: string;
  rounds: number;
  a: VariantSeries;
  b: VariantSeries;
  /** B/A per round (paired: both measured in the same round). */
  ratios: number[];
  /** Notes printed under the case (setup figures). */
  notes: string[];
  /** Counts that differed from the expected ones (deterministic, unlike times); empty when all matched. */
  mismatches: string[];
  /** What the counts are, for the check line. @default 'service calls' */
  counted?: string;
}

/** Expected counts of one variant per run (only the keys given are checked). */
export type ExpectedCounts = Record<string, number>;

export interface AbOptions {
  title: string;
  op: string;
  rounds: number;
  /** Epoch ms; no new round starts after it (at least one round always runs). */
  deadline: number;
  a: Variant;
  b: Variant;
  /** Runs each variant once, unmeasured, before the rounds (JIT, connection pool). @default true */
  warmup?: boolean;
  /** Service-call counts every run of A and of B must show (checked in the warm-up run and every round too). */
  expect?: { a?: ExpectedCounts; b?: ExpectedCounts };
}

function check(label: string, r: VariantRun, expected: ExpectedCounts | undefined, out: string[]): void {
  for (const [k, v] of Object.entries(expected ?? {})) {
    if (r.counts[k] !== v) out.push(`${label}: ${k} ${r.counts[k]}, expected ${v}`);
  }
}

function series(label: string): VariantSeries {
  return { label, perOpMs: [], counts: {} };
}

function record(s: VariantSeries, r: VariantRun): void {
  s.perOpMs.push(r.perOpMs);
  for (const [k, v] of Object.entries(r.counts)) (s.counts[k] ??= []).push(v);
}

/** Runs `rounds` rounds of A and B, in the order AB, BA, AB, ... */
export async function runAb(opts: AbOptions): Promise<AbResult> {
  const mismatches: string[] = [];
  if (opts.warmup ?? true) {
    check(opts.a.label, await opts.a.run(), opts.expect?.a, mismatches);
    check(opts.b.label, await opts.b.run(), opts.expect?.b, mismatches);
  }
  const a = series(opts.a.label);
  const b = series(opts.b.label);
  const ratios: number[] = [];
  for (let round = 0; round < opts.rounds; round++) {
    if (round > 0 && Date.now() > opts.deadline) break;
    let ra: VariantRun;
    let rb: VariantRun;
    if (round % 2 === 0) {
      ra = await opts.a.run();
      rb = await opts.b.run();
    } else {
      rb = await opts.b.run();
      ra = await opts.a.run();
    }
    check(opts.a.label, ra, opts.expect?.a, mismatches);
    check(opts.b.label, rb, opts.expect?.b, mismatches);
    record(a, ra);
    record(b, rb);
    ratios.push(rb.perOpMs / ra.perOpMs);
  }
  return { title: opts.title, op: opts.op, rounds: ratios.length, a, b, ratios, notes: [], mismatches: [...new Set(mismatches)] };
}

/** Median per-op time of a series. */
export function medianPerOp(s: VariantSeries): number {
  return median(s.perOpMs);
}
