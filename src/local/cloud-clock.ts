/**
 * The cloud's clock of a local run. With a time scale N every clock of the run passes N times faster than the wall
 * clock, all at once: the emulator's (its rate window, its `Retry-After`, its jobs, its latency), the handler's as its
 * container sees it (`Date`, `setTimeout`: its waits, its deadline, its leases), Lambda's timeouts, the provider
 * framework's polling and CloudFormation's service timeout. So an hour of cloud time runs in a minute (N = 60) and the
 * handler's constants stay what they are in the cloud.
 */

/** The largest time scale (an hour a second). */
export const MAX_TIME_SCALE = 3600;

/** Where a cloud clock stands: at real time `realAt` (epoch ms) it read `cloudAt`, and it passes `scale` times as fast. */
export interface ClockAnchor {
  readonly scale: number;
  readonly realAt: number;
  readonly cloudAt: number;
}

/** Checks a time scale option (1 to 3600); the error names the option and the value. */
export function checkedTimeScale(v: unknown, option = 'timeScale'): number {
  if (v === undefined) return 1;
  if (typeof v !== 'number' || !Number.isFinite(v) || v < 1 || v > MAX_TIME_SCALE) {
    throw new Error(`${option} must be a number from 1 to ${MAX_TIME_SCALE} (got ${JSON.stringify(v)})`);
  }
  return v;
}

/** A run's cloud clock. */
export class CloudClock {
  readonly anchor: ClockAnchor;

  /** @param startAt the cloud time the run starts at (epoch ms): the emulator's clock */
  constructor(readonly scale: number, startAt: number = Date.now()) {
    const realAt = Date.now();
    this.anchor = { scale, realAt, cloudAt: startAt };
  }

  /**
   * True when the cloud's clock is not the wall clock: scaled, or more than a second away from it (an earlier scaled
   * run, or waits on the emulator's clock, moved the emulator's clock on). The containers' clocks then follow it.
   */
  get shifted(): boolean {
    return this.scale > 1 || Math.abs(this.anchor.cloudAt - this.anchor.realAt) > 1000;
  }

  /** The cloud's time now (epoch ms). */
  now(): number {
    return this.anchor.cloudAt + (Date.now() - this.anchor.realAt) * this.scale;
  }

  /** The wall-clock milliseconds of `cloudMs` of cloud time. */
  realMs(cloudMs: number): number {
    return cloudMs / this.scale;
  }

  /** Waits `cloudMs` of cloud time. */
  sleep(cloudMs: number): Promise<void> {
    return new Promise((resolve) => setTimeout(resolve, this.realMs(cloudMs)));
  }
}
