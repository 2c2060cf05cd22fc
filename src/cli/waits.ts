/**
 * The wait lines of `dpi`: while a command's client waits out the service's rate limit (429), one line per wait on
 * stderr says what it waits for, how long, and (when the command passes one) how far the command has got, so a long
 * run is never silent. stdout (tables, JSON) is untouched.
 */
import type { RateLimitWait } from '../client';
import { wrapLine } from './format';
import { CliIo } from './io';
import { tableWidth } from '../local/width';

/** What a command has done so far, read at each wait (e.g. `'120 of 325 resources read'`); undefined: nothing to say. */
export type Progress = () => string | undefined;

/** A duration for people: `0.5 s`, `2.5 s`, `60 s`, `4 min 30 s`. */
export function formatWait(ms: number): string {
  const s = ms / 1000;
  if (s >= 120) {
    const m = Math.floor(Math.round(s) / 60);
    const rest = Math.round(s) - m * 60;
    return rest === 0 ? `${m} min` : `${m} min ${rest} s`;
  }
  return `${s >= 10 || Number.isInteger(s) ? Math.round(s) : s.toFixed(1)} s`;
}

/** The line printed for one wait (without the newline). */
export function waitLine(w: RateLimitWait, progress?: string): string {
  const notes: string[] = [];
  if (w.refusals > 1) notes.push(`refused ${w.refusals} times so far`);
  if (progress) notes.push(progress);
  const what = w.refusals === 0
    // A turn in the request budget shared with a deploy (--budget-table): nothing was refused, nothing sent yet.
    ? `requests are paced to the service's rate limit (the budget shared with the deploy); waiting ${formatWait(w.waitMs)} before ${w.method} ${w.path}`
    : `the service's rate limit was reached; waiting ${formatWait(w.waitMs)} before ${w.method} ${w.path} again`;
  return `dpi: ${what}${notes.length > 0 ? ` (${notes.join('; ')})` : ''}`;
}

/**
 * A `DpiClientOptions.onWait` callback that prints one line per wait on stderr. The client calls it once per wait it
 * starts (requests that join the pause in progress do not print). `progress` is read at each wait; a progress
 * function that throws is ignored (the line is printed without it).
 */
export function waitReporter(io: Pick<CliIo, 'stderr'> & Partial<Pick<CliIo, 'isTTY' | 'env' | 'columns'>>, progress?: Progress): (wait: RateLimitWait) => void {
  // Wrapped to the terminal's width (stderr on a terminal: the columns of the terminal stdout shares, else COLUMNS);
  // whole when redirected without COLUMNS.
  const width = tableWidth(io.isTTY?.stderr ? io.columns : undefined, io.env ?? {});
  return (w) => {
    let p: string | undefined;
    try {
      p = progress?.();
    } catch {
      p = undefined;
    }
    io.stderr.write(wrapLine(waitLine(w, p), width) + '\n');
  };
}
