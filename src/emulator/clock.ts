/**
 * The emulator's clock and its service latency. The clock reads Unix seconds: real time plus an offset (the admin
 * API sets or advances it), passing `timeScale` times as fast as real time. Everything that takes service time (the
 * latency of each service request, a fault's delay) takes 1/timeScale of it in real time.
 */

/** Latency of every service request, in service time. */
export interface Latency {
  /** Milliseconds each request takes before it is handled. */
  readonly ms: number;
  /** Up to this many milliseconds more or less, uniformly at random. @default 0 */
  readonly jitterMs?: number;
}

/** The largest time scale (an hour a second). */
export const MAX_TIME_SCALE = 3600;

/** A scaled clock is saved this often (real ms) besides every change. */
export const CLOCK_SAVE_MS = 1000;

/**
 * How far behind a state file's clock can be (seconds) when the emulator that wrote it was killed: one save interval
 * of its scaled time, twice (a write may wait for the one before it). A loaded clock is moved on by that much, so it never goes back (it may jump ahead a little).
 */
export function clockLostAtMost(savedScale: unknown): number {
  return typeof savedScale === 'number' && savedScale > 1 ? 2 * (CLOCK_SAVE_MS / 1000) * Math.min(savedScale, MAX_TIME_SCALE) : 0;
}

export class EmulatorClock {
  readonly scale: number;
  private readonly realAt = Date.now() / 1000;
  /** The clock at `realAt`. */
  private base: number;

  /**
   * @param start the clock's value now (Unix seconds) @default real time
   * @param savedOffset what an earlier emulator's state file kept (`saved()`), used when `start` is not given
   */
  constructor(scale: number | undefined, start?: number, savedOffset?: number) {
    if (scale !== undefined && (typeof scale !== 'number' || !Number.isFinite(scale) || scale < 1 || scale > MAX_TIME_SCALE)) {
      throw new Error(`timeScale must be a number from 1 to ${MAX_TIME_SCALE} (got ${JSON.stringify(scale)})`);
    }
    this.scale = scale ?? 1;
    this.base = start ?? this.realAt + (savedOffset ?? 0);
  }

  /** The clock, fractions included. */
  exact(): number {
    return this.base + (Date.now() / 1000 - this.realAt) * this.scale;
  }

  /** The clock in whole seconds (what routes and the rate window use). */
  now(): number {
    return Math.floor(this.exact());
  }

  set(n: number): void {
    this.base += n - this.exact();
  }

  /** Exact, fractions included: four advances of 0.25 s move the clock one second. */
  advance(by: number): void {
    this.base += by;
  }

  /** What a state file keeps: the clock minus real time, so a later emulator goes on from where this one was. */
  saved(): number {
    return this.exact() - Date.now() / 1000;
  }

  /** Waits `ms` of service time. */
  sleep(ms: number): Promise<void> {
    return ms > 0 ? new Promise((r) => setTimeout(r, ms / this.scale)) : Promise.resolve();
  }
}

/** Checks a latency option; the error names it and the value. */
export function checkedLatency(l: Latency | undefined): Latency | undefined {
  if (l === undefined) return undefined;
  const ok = (n: unknown): boolean => typeof n === 'number' && Number.isFinite(n) && n >= 0 && n <= 600_000;
  if (typeof l !== 'object' || l === null || !ok(l.ms) || (l.jitterMs !== undefined && !ok(l.jitterMs))) {
    throw new Error(`latency must be { ms, jitterMs? } with milliseconds from 0 to 600000 (got ${JSON.stringify(l)})`);
  }
  return l;
}

/** One request's latency: `ms` plus or minus up to `jitterMs`, never below 0. */
export function latencyOf(l: Latency): number {
  const j = l.jitterMs ?? 0;
  return Math.max(0, l.ms + (Math.random() * 2 - 1) * j);
}

/** Parses `MS` or `MS~JITTER` (the `--latency` option). */
export function parseLatency(text: string): Latency {
  const m = /^(\d+(?:\.\d+)?)(?:~(\d+(?:\.\d+)?))?$/.exec(text);
  if (!m) throw new Error(`expected MS or MS~JITTER in milliseconds, e.g. 200~100 (got ${JSON.stringify(text)})`);
  return checkedLatency({ ms: Number(m[1]), ...(m[2] !== undefined ? { jitterMs: Number(m[2]) } : {}) })!;
}

/** Parses the `--time-scale` option. */
export function parseTimeScale(text: string): number {
  const n = Number(text);
  if (text.trim() === '' || !Number.isFinite(n) || n < 1 || n > MAX_TIME_SCALE) {
    throw new Error(`expected a number from 1 to ${MAX_TIME_SCALE} (got ${JSON.stringify(text)})`);
  }
  return n;
}
