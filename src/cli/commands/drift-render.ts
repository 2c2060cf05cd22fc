/**
 * The output of `dpi drift`: per stack a summary line (counts per verdict), then by default only the rows that are not
 * IN_SYNC (`--all`: every row); the JSON document (every row, and a `summary`).
 */
import { DriftRow, DriftStatus, isDrifted } from '../../handler/drift';
import { kindOf } from '../../kinds';
import { Colour, painter, renderTable, visibleLength, wrapLine } from '../format';

const STATUS_COLOUR: Record<DriftStatus, Colour> = { IN_SYNC: 'green', MODIFIED: 'yellow', DELETED: 'red', NOT_CHECKED: 'dim' };

/** The verdicts in the order counts are shown. */
export const VERDICTS: readonly DriftStatus[] = ['IN_SYNC', 'MODIFIED', 'DELETED', 'NOT_CHECKED'];

/** The hint printed after a run in which something drifted. */
export const FIX_HINT = 'run `dpi drift --fix` to re-apply the declared state';

/** `Custom::DpiSubscription` -> `Subscription` (the kind's short name; another type without its prefix). */
export function shortType(type: string): string {
  return kindOf(type)?.shortName ?? type.replace(/^Custom::Dpi/, '');
}

/** Rows per verdict. */
export type VerdictCounts = Record<DriftStatus, number>;

export function countVerdicts(rows: readonly DriftRow[]): VerdictCounts {
  const out: VerdictCounts = { IN_SYNC: 0, MODIFIED: 0, DELETED: 0, NOT_CHECKED: 0 };
  for (const r of rows) out[r.status]++;
  return out;
}

/** `IN_SYNC 3, MODIFIED 1` (verdicts without rows left out). */
function countsText(c: VerdictCounts): string {
  return VERDICTS.filter((v) => c[v] > 0).map((v) => `${v} ${c[v]}`).join(', ');
}

/**
 * One stack: the summary line (`Stack S: 4 resources, 1 drifted (IN_SYNC 3, MODIFIED 1)`), then a table of its rows
 * (a continuation row per further differing property): every row with `all`, else only those that are not IN_SYNC;
 * then what the service's reads do not show of the rows in the table (and, without `all`, how many in-sync rows have
 * such properties).
 */
export function renderStackDrift(stack: string, rows: DriftRow[], colour: boolean, parent?: string, all = false, width?: number): string {
  const paint = painter(colour);
  const drifted = rows.filter(isDrifted).length;
  const counts = countVerdicts(rows);
  let out = wrapLine(`Stack ${stack}${parent !== undefined ? ` (nested in ${parent})` : ''}: ${rows.length} resource${rows.length === 1 ? '' : 's'}, `
    + `${drifted} drifted${rows.length > 0 ? ` (${countsText(counts)})` : ''}`, width) + '\n';
  if (rows.length === 0) return out + '(no Custom::Dpi* resources)\n';
  const shown = all ? rows : rows.filter((r) => r.status !== 'IN_SYNC');
  if (shown.length > 0) {
    const table: string[][] = [];
    for (const r of shown) {
      const details = r.status === 'MODIFIED'
        ? r.differences.map((d) => `${d.property}: ${d.declared} -> ${d.live}`)
        : [r.reason ?? ''];
      table.push([r.logicalId, shortType(r.type), r.physicalId || '-', paint(STATUS_COLOUR[r.status], r.status), details[0] ?? '']);
      for (const d of details.slice(1)) table.push(['', '', '', '', d]);
    }
    out += renderTable(['RESOURCE', 'TYPE', 'PHYSICAL ID', 'STATUS', 'DETAIL'], table, width);
  }
  for (const r of shown.filter((x) => x.notChecked.length > 0)) {
    out += paint('dim', `  ${r.logicalId}: not shown by the service, not checked: ${r.notChecked.join(', ')}`) + '\n';
  }
  // A stack with nothing to show is its summary line alone (a fleet's in-sync nested stacks: one line each).
  const hidden = all || shown.length === 0 ? 0 : rows.filter((r) => r.status === 'IN_SYNC' && r.notChecked.length > 0).length;
  if (hidden > 0) {
    out += paint('dim', `  ${hidden} in-sync resource${hidden === 1 ? ' has' : 's have'} properties the service does not show (not checked); --all lists them`) + '\n';
  }
  return out;
}

/**
 * The closing summary of `dpi drift`: `No drift in what the service shows` (or `N of M resources drifted`), and, when
 * any checked resource has properties the service's reads do not show, a second line naming them (with how many
 * resources have them), so a summary never reads as "everything checked" when it was not.
 */
export function driftTotals(rows: readonly DriftRow[], where: string): string {
  const drifted = rows.filter(isDrifted).length;
  const partial = rows.filter((r) => r.notChecked.length > 0);
  const first = drifted > 0
    ? `${drifted} of ${rows.length} resource${rows.length === 1 ? '' : 's'} drifted`
    : partial.length > 0 ? 'No drift in what the service shows' : 'No drift';
  let out = `${first} (journal: ${where})\n`;
  if (partial.length > 0) {
    const names = [...new Set(partial.flatMap((r) => r.notChecked))];
    out += wrapText(`Not checked on ${partial.length} of ${rows.length} resource${rows.length === 1 ? '' : 's'} (the service does not `
      + `show them): ${names.join(', ')}`, 100, '  ');
  }
  return out;
}

/** Wraps a text at spaces to lines of at most `width` characters; continuation lines start with `indent`. */
export function wrapText(text: string, width: number, indent = ''): string {
  const lines: string[] = [];
  let line = '';
  for (const word of text.split(' ')) {
    const next = line === '' ? word : `${line} ${word}`;
    if (visibleLength(next) > width && line !== '' && line !== indent) {
      lines.push(line);
      line = `${indent}${word}`;
    } else {
      line = next;
    }
  }
  if (line !== '') lines.push(line);
  return lines.map((l) => `${l}\n`).join('');
}

/** The `summary` of `dpi drift --json`: counts per verdict, overall and per stack. */
export interface DriftSummary {
  readonly resources: number;
  readonly drifted: number;
  readonly counts: VerdictCounts;
  readonly stacks: Array<{ readonly stack: string; readonly resources: number; readonly drifted: number; readonly counts: VerdictCounts }>;
}

export function driftSummary(stacks: string[], rows: DriftRow[]): DriftSummary {
  return {
    resources: rows.length,
    drifted: rows.filter(isDrifted).length,
    counts: countVerdicts(rows),
    stacks: stacks.map((stack) => {
      const mine = rows.filter((r) => r.stack === stack);
      return { stack, resources: mine.length, drifted: mine.filter(isDrifted).length, counts: countVerdicts(mine) };
    }),
  };
}

/** The JSON document of `dpi drift --json` (every row, whatever `--all` says). */
export function driftJson(source: string, stacks: string[], rows: DriftRow[], parents: ReadonlyMap<string, string> = new Map()): object {
  return {
    source,
    drifted: rows.filter(isDrifted).length,
    summary: driftSummary(stacks, rows),
    stacks: stacks.map((stack) => ({
      stack, ...(parents.has(stack) ? { parentStack: parents.get(stack) } : {}), resources: rows.filter((r) => r.stack === stack),
    })),
  };
}
