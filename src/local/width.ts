/**
 * The width the command line's output fits (tables, progress lines), and how a table's columns shrink to it. Pure
 * helpers of the local runner and of `dpi` (src/cli imports them; nothing here imports the command line).
 */

/** The width output fits when no terminal width and no `COLUMNS` are known. */
export const DEFAULT_OUTPUT_WIDTH = 100;
/** The narrowest width output is fitted to: below it, lines are as at this width (and the terminal wraps them). */
export const MIN_OUTPUT_WIDTH = 60;

/**
 * The width to fit: the terminal's `columns` when the output goes to one, else the `COLUMNS` environment variable
 * (a positive integer), else DEFAULT_OUTPUT_WIDTH; never below MIN_OUTPUT_WIDTH.
 */
export function outputWidth(columns: number | undefined, env: Record<string, string | undefined>): number {
  const fromEnv = /^\s*\d+\s*$/.test(env.COLUMNS ?? '') ? Number(env.COLUMNS) : 0;
  const width = columns !== undefined && columns > 0 ? columns : fromEnv > 0 ? fromEnv : DEFAULT_OUTPUT_WIDTH;
  return Math.max(MIN_OUTPUT_WIDTH, Math.floor(width));
}

/**
 * The width a table is fitted to: as `outputWidth()` when the terminal's `columns` or `COLUMNS` is known; undefined
 * (not fitted: every cell whole) when the output goes to a file or a pipe without `COLUMNS`, so scripts that read the
 * table get every character.
 */
export function tableWidth(columns: number | undefined, env: Record<string, string | undefined>): number | undefined {
  const known = (columns !== undefined && columns > 0) || /^\s*[1-9]\d*\s*$/.test(env.COLUMNS ?? '');
  return known ? outputWidth(columns, env) : undefined;
}

/**
 * Column widths whose line (columns joined by `gap` spaces) fits `width`. Columns shrink in rounds, the widest first,
 * one character at a time, none below the round's floor: 12 characters; then the header's width (at most 8, at
 * least 6); then 6; then 3. A column narrower than a floor keeps its width, so short columns (IDs, statuses) stay
 * whole as long as possible. Widths that fit are returned as they are; when even the last floors do not fit, the line
 * is wider than `width`.
 */
export function fitColumns(widths: readonly number[], headers: readonly number[], width: number, gap = 2): number[] {
  const out = [...widths];
  const total = (): number => out.reduce((a, b) => a + b, 0) + gap * Math.max(0, out.length - 1);
  const rounds = [() => 12, (i: number) => Math.max(6, Math.min(headers[i] ?? 0, 8)), () => 6, () => 3];
  for (const floor of rounds) {
    while (total() > width) {
      let widest = -1;
      for (let i = 0; i < out.length; i++) {
        if (out[i] > floor(i) && (widest < 0 || out[i] > out[widest])) widest = i;
      }
      if (widest < 0) break;
      out[widest]--;
    }
  }
  return out;
}
