/** Plain-text table of the benchmark results. */
import { AbResult, VariantSeries } from './ab';
import { formatMs, formatRange, formatRatio, median } from './stats';

const COL_LABEL = 34;
const COL_MEDIAN = 12;
const COL_SPREAD = 22;

function row(label: string, med: string, spread: string, counts: string): string {
  return `  ${label.padEnd(COL_LABEL)}${med.padEnd(COL_MEDIAN)}${spread.padEnd(COL_SPREAD)}${counts}`.trimEnd();
}

function countsText(s: VariantSeries): string {
  return Object.entries(s.counts).map(([k, v]) => `${k} ${formatRange(v)}`).join(', ');
}

function spreadMs(values: number[]): string {
  return `${formatMs(Math.min(...values)).replace(' ms', '')}-${formatMs(Math.max(...values))}`;
}

/** The header line of the table. */
export function tableHeader(): string {
  return row('case / variant', 'median/op', 'min-max/op', 'service calls per round (from the request log)');
}

/** The lines of one case. */
export function formatCase(r: AbResult): string[] {
  const lines = [`${r.title}  [op = ${r.op}; ${r.rounds} round(s)]`];
  for (const s of [r.a, r.b]) lines.push(row(s.label, formatMs(median(s.perOpMs)), spreadMs(s.perOpMs), countsText(s)));
  const rmin = Math.min(...r.ratios);
  const rmax = Math.max(...r.ratios);
  lines.push(row('ratio B/A (median of rounds)', formatRatio(median(r.ratios)), `${formatRatio(rmin)}-${formatRatio(rmax)}`, ''));
  for (const n of r.notes) lines.push(`  ${n}`);
  lines.push(r.mismatches.length === 0
    ? `  check: ${r.counted ?? 'service calls'} as expected in every run`
    : `  CHECK FAILED: ${r.mismatches.join('; ')}`);
  return lines;
}
