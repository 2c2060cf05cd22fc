/**
 * The wait lines of a local deployment: while the handler (run in-process) waits for the service's rate limit, the
 * runner prints one line per wait on stderr (with the progress lines), whether or not `--handler-logs` echoes the
 * handler's log. The handler's runtime writes one log entry per wait,
 * `{"msg":"rate limited","method":...,"path":...,"waitMs":...,"refusals":...}` (src/handler/log.ts); the runner's
 * handler log sink hands every line to `WaitReporter.observe`.
 */

/** A handler log entry of one wait for the rate limit (the fields the handler's runtime writes). */
export interface RateLimitedEntry {
  readonly msg: 'rate limited';
  readonly method: string;
  readonly path: string;
  readonly waitMs: number;
  readonly refusals: number;
}

/** The `msg` of the handler's log entry of a wait. */
export const RATE_LIMITED_MSG = 'rate limited';

/** The entry of a handler log line when it is a wait for the rate limit, else undefined. */
export function rateLimitedEntry(line: string): RateLimitedEntry | undefined {
  const text = line.trim();
  if (!text.startsWith('{') || !text.includes(RATE_LIMITED_MSG)) return undefined;
  let v: unknown;
  try {
    v = JSON.parse(text);
  } catch {
    return undefined;
  }
  if (typeof v !== 'object' || v === null) return undefined;
  const e = v as Record<string, unknown>;
  if (e.msg !== RATE_LIMITED_MSG || typeof e.method !== 'string' || typeof e.path !== 'string') return undefined;
  const waitMs = Number(e.waitMs);
  if (!Number.isFinite(waitMs) || waitMs < 0) return undefined;
  const refusals = Number(e.refusals);
  return { msg: RATE_LIMITED_MSG, method: e.method, path: e.path, waitMs, refusals: Number.isFinite(refusals) ? refusals : 1 };
}

/** A duration for people: `0.5 s`, `2.5 s`, `60 s`. */
export function formatWait(ms: number): string {
  const s = ms / 1000;
  return `${s >= 10 || Number.isInteger(s) ? Math.round(s) : s.toFixed(1)} s`;
}

/** The line printed for one wait. */
export function waitLine(e: RateLimitedEntry, done: number, total: number): string {
  if (e.refusals === 0) {
    return `local-deploy: requests are paced to the service's rate limit; waiting ${formatWait(e.waitMs)} before ${e.method} ${e.path} `
      + `(${done} of ${total} resources done)`;
  }
  const again = e.refusals > 1 ? `, refused ${e.refusals} times so far` : '';
  return `local-deploy: the service's rate limit was reached; waiting ${formatWait(e.waitMs)} before ${e.method} ${e.path} again `
    + `(${done} of ${total} resources done${again})`;
}

/** Counts the resources of the run and prints a line per wait. */
export class WaitReporter {
  /** Resources the run handles (deploy: planned resources of every stack; destroy: resources in the state). */
  total = 0;
  /** Resources handled so far (unchanged ones included). */
  done = 0;
  /** Waits reported so far. */
  waits = 0;

  constructor(private readonly print: (line: string) => void) {}

  /** A handler log line (redacted): prints the wait line when it is a wait for the rate limit. */
  observe(line: string): void {
    const e = rateLimitedEntry(line);
    if (!e) return;
    this.waits++;
    this.print(waitLine(e, Math.min(this.done, this.total), this.total));
  }
}
