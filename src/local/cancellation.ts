/**
 * How CloudFormation stops an operation that fails: every in-flight Create and Update of the operation (the whole
 * nested-stack tree) is cancelled at once, and nothing new starts. A cancelled Create's invocation runs on in its
 * Lambda container; CloudFormation no longer listens, and its rollback sends a Delete with a physical ID it invents,
 * `<stack>-<logicalId>-<suffix>` (aws-cdk-lib, custom-resources/README.md, "Important cases to handle").
 */
import { randomInt } from 'node:crypto';

/** The cancellation of one operation (a deploy of a stack and its nested stacks). */
export class Cancellation {
  /** Resolves when the operation is cancelled. */
  readonly signal: Promise<void>;
  private isCancelled = false;
  private fire?: () => void;

  constructor() {
    this.signal = new Promise<void>((resolve) => {
      this.fire = resolve;
    });
  }

  /** True once a resource of the operation failed. */
  get cancelled(): boolean {
    return this.isCancelled;
  }

  /** Cancels the operation (once; later calls do nothing). */
  cancel(): void {
    if (this.isCancelled) return;
    this.isCancelled = true;
    this.fire?.();
  }
}

const SUFFIX_CHARS = 'ABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789';

/** The physical ID CloudFormation invents for a Create it stopped waiting for: `<stack>-<logicalId>-<12 characters>`. */
export function inventedPhysicalId(stackName: string, logicalId: string): string {
  let suffix = '';
  for (let i = 0; i < 12; i++) suffix += SUFFIX_CHARS[randomInt(SUFFIX_CHARS.length)];
  return `${stackName}-${logicalId}-${suffix}`;
}

/**
 * At most `limit` operations at once across every stack of a run (nested stacks deploy in parallel, each with its own
 * schedule): waiters start in the order they asked.
 */
export class Slots {
  private free: number;
  private readonly queue: Array<() => void> = [];

  constructor(limit: number) {
    this.free = Math.max(1, limit);
  }

  /** Runs `fn` in a slot. */
  async run<T>(fn: () => Promise<T>): Promise<T> {
    if (this.free > 0) this.free--;
    else await new Promise<void>((resolve) => this.queue.push(resolve));
    try {
      return await fn();
    } finally {
      const next = this.queue.shift();
      if (next) next();
      else this.free++;
    }
  }
}
