/**
 * When a nested stack may start. CloudFormation treats a nested stack as a resource of its parent: it starts as soon
 * as the parent's resources it depends on are complete, beside the parent's other resources. Each stack of an
 * operation has a `StackProgress`; a nested stack waits at its parent's gate for the resources it needs.
 */
import { Cancellation } from './cancellation';

/** How far a stack of the operation has come. */
export class StackProgress {
  /** The stack is registered (its stack ID known, its parameters resolvable). */
  started = false;
  /** Its applying returned (complete, unchanged or failed). */
  ended = false;
  /** Resources complete (created, updated or unchanged). */
  readonly done = new Set<string>();
  private wake: Array<() => void> = [];

  start(): void {
    this.started = true;
    this.notify();
  }

  complete(logicalId: string): void {
    this.done.add(logicalId);
    this.notify();
  }

  end(): void {
    this.ended = true;
    this.notify();
  }

  /**
   * Waits until the stack is registered and `needed` are complete (or its applying returned): true; false when the
   * operation is cancelled first.
   */
  async ready(needed: readonly string[], cancellation: Cancellation): Promise<boolean> {
    return this.until(() => this.ended || (this.started && needed.every((id) => this.done.has(id))), cancellation);
  }

  /** Waits until the stack's applying returned: true; false when the operation is cancelled first. */
  async whenEnded(cancellation: Cancellation): Promise<boolean> {
    return this.until(() => this.ended, cancellation);
  }

  /** Waits until `reached` holds: true; false when the operation is cancelled first. */
  private async until(reached: () => boolean, cancellation: Cancellation): Promise<boolean> {
    for (;;) {
      if (cancellation.cancelled) return false;
      if (reached()) return true;
      await Promise.race([new Promise<void>((resolve) => this.wake.push(resolve)), cancellation.signal]);
    }
  }

  private notify(): void {
    const wake = this.wake;
    this.wake = [];
    for (const w of wake) w();
  }
}
