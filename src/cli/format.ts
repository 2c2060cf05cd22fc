/** Text formatting helpers of `dpi`: tables, colours, times. */
import type { CliIo } from './io';
import { fitColumns, tableWidth } from '../local/width';

export { DEFAULT_OUTPUT_WIDTH, MIN_OUTPUT_WIDTH } from '../local/width';

/**
 * The width `dpi`'s tables fit: stdout's columns when it is a terminal, else `COLUMNS`; at least 60. Undefined when
 * neither is known (output to a file or a pipe): tables are then printed whole, for scripts.
 */
export function terminalWidth(io: Pick<CliIo, 'isTTY' | 'env' | 'columns'>): number | undefined {
  return tableWidth(io.isTTY.stdout ? io.columns : undefined, io.env);
}

const ANSI = /\x1b\[[0-9;]*m/g;

/**
 * Wraps a line at spaces to lines of at most `width` characters (a word longer than that stays whole); continuation
 * lines start with `indent`. Without `width`, the line as it is.
 */
export function wrapLine(text: string, width: number | undefined, indent = '    '): string {
  if (width === undefined || [...text].length <= width) return text;
  const lines: string[] = [];
  let line = '';
  for (const word of text.split(' ')) {
    const next = line === '' ? word : `${line} ${word}`;
    if ([...next].length > width && line !== '' && line !== indent) {
      lines.push(line);
      line = `${indent}${word}`;
    } else {
      line = next;
    }
  }
  lines.push(line);
  return lines.join('\n');
}

/** Display width of a text (ANSI colour codes do not count). */
export function visibleLength(s: string): number {
  return [...s.replace(ANSI, '')].length;
}

/**
 * Makes a service-provided text safe for one table cell or line: control characters (newlines, tabs,
 * terminal escape sequences other than plain colour codes) become spaces.
 */
export function sanitize(s: string): string {
  return s.replace(/\x1b\[[0-9;]*m|[\x00-\x1f\x7f-\x9f]+/g, (m) => (/^\x1b\[[0-9;]*m$/.test(m) ? m : ' '));
}

/** Colour names used by `dpi`. */
export type Colour = 'red' | 'green' | 'yellow' | 'blue' | 'magenta' | 'cyan' | 'dim' | 'bold';

const CODES: Record<Colour, [number, number]> = {
  red: [31, 39], green: [32, 39], yellow: [33, 39], blue: [34, 39], magenta: [35, 39], cyan: [36, 39], dim: [2, 22], bold: [1, 22],
};

/** Paints text with a colour when `enabled`. */
export type Painter = (colour: Colour | undefined, text: string) => string;

/** A painter: ANSI colours when enabled, identity otherwise. */
export function painter(enabled: boolean): Painter {
  return (colour, text) => {
    if (!enabled || !colour || text === '') return text;
    const [on, off] = CODES[colour];
    return `\x1b[${on}m${text}\x1b[${off}m`;
  };
}

/** Shortens a text to `max` characters (with an ellipsis). */
export function truncate(s: string, max: number): string {
  const chars = [...s];
  return chars.length <= max ? s : `${chars.slice(0, Math.max(0, max - 1)).join('')}…`;
}

/** A cell cut to `max` display columns: a coloured cell that is too long loses its colours. */
function fitCell(cell: string, max: number): string {
  if (visibleLength(cell) <= max) return cell;
  return truncate(cell.replace(ANSI, ''), max);
}

/**
 * Renders rows as a left-aligned table with a header, columns separated by two spaces,
 * no trailing spaces. Cells may contain ANSI colours. With `width` (`outputWidth()`), the widest columns are
 * shortened (cells cut with `…`) until every line fits it.
 */
export function renderTable(header: string[], rawRows: string[][], width?: number): string {
  let rows = rawRows.map((r) => r.map(sanitize));
  let widths = header.map((h, i) => Math.max(visibleLength(h), ...rows.map((r) => visibleLength(r[i] ?? ''))));
  if (width !== undefined) {
    widths = fitColumns(widths, header.map(visibleLength), width);
    header = header.map((h, i) => fitCell(h, widths[i]));
    rows = rows.map((r) => r.map((c, i) => fitCell(c, widths[i] ?? visibleLength(c))));
  }
  const line = (cells: string[]): string => cells
    .map((c, i) => (i === cells.length - 1 ? c : c + ' '.repeat(widths[i] - visibleLength(c))))
    .join('  ')
    .replace(/\s+$/, '');
  return [line(header), ...rows.map(line)].join('\n') + '\n';
}

/** Unix seconds -> `YYYY-MM-DDTHH:MM:SSZ` (empty for absent). */
export function isoSeconds(ts: number | undefined): string {
  if (ts === undefined || ts === null || !Number.isFinite(ts)) return '';
  return new Date(ts * 1000).toISOString().replace(/\.\d{3}Z$/, 'Z');
}

/**
 * Parses a time flag: Unix seconds (digits) or an ISO 8601 date / date-time
 * (a date alone or a time without zone is taken as UTC). Returns Unix seconds.
 */
export function parseTimeFlag(flag: string, value: string): number {
  const v = value.trim();
  if (/^\d+$/.test(v)) {
    const n = Number(v);
    if (Number.isSafeInteger(n)) return n;
  }
  const m = /^(\d{4})-(\d{2})-(\d{2})(?:[T ](\d{2}):(\d{2})(?::(\d{2})(\.\d+)?)?(Z|[+-]\d{2}:?\d{2})?)?$/.exec(v);
  if (m) {
    const zone = m[8] ?? 'Z';
    const iso = `${m[1]}-${m[2]}-${m[3]}T${m[4] ?? '00'}:${m[5] ?? '00'}:${m[6] ?? '00'}${m[7] ?? ''}${zone === 'Z' ? 'Z' : zone.replace(/^([+-]\d{2})(\d{2})$/, '$1:$2')}`;
    const t = Date.parse(iso);
    if (!Number.isNaN(t)) return Math.floor(t / 1000);
  }
  throw new Error(`${flag}: expected Unix seconds or an ISO time (e.g. 2026-11-20 or 2026-11-20T08:00:00Z), got '${value}'`);
}

/** Parses a positive integer flag within bounds. */
export function parseIntFlag(flag: string, value: string, min: number, max: number = Number.MAX_SAFE_INTEGER): number {
  const v = value.trim();
  if (!/^-?\d+$/.test(v)) throw new Error(`${flag}: expected an integer, got '${value}'`);
  const n = Number(v);
  if (!Number.isSafeInteger(n) || n < min || n > max) {
    throw new Error(`${flag}: must be ${max === Number.MAX_SAFE_INTEGER ? `at least ${min}` : `between ${min} and ${max}`}, got ${v}`);
  }
  return n;
}
