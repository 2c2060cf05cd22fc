/**
 * The fault matrix's faults of the cloud around the call (beside the service's): CloudFormation cancels the operation
 * while the call is in flight, Lambda delivers the event twice, the invocation's time runs out during the call.
 * Each is a delay of the call at the emulator plus how the runner runs the faulted phase.
 */
import type { LocalDeployOptions } from '../../src/local';

/** A runner fault of a matrix kind. */
export type RunnerFault = 'cancel' | 'duplicate' | 'deadline';

/**
 * The handler's margin before its Lambda timeout (src/handler/runtime.ts DEADLINE_MARGIN_MS): with a 20 s budget, its
 * calls are cut 5 s into the invocation, so a call held 8 s is cut mid-flight (and the service applies it later).
 */
const DEADLINE_BUDGET_MS = 20_000;

/** Runner faults, as fault-matrix kinds: the emulator's part (`fault`) and the runner's. */
export const RUNNER_FAULT_KINDS = [
  // Another resource fails while the call is in flight: every Create and Update in flight is cancelled and the
  // rollback's Delete with an invented physical ID races the call (deploy phases: CloudFormation cancels no Delete).
  { name: 'cancel', fault: { delayMs: 1500 }, runner: 'cancel' as RunnerFault },
  // Every event of the phase delivered twice at once (two containers); the call is slow, so the two meet at it.
  { name: 'duplicate', fault: { delayMs: 800 }, runner: 'duplicate' as RunnerFault },
  // The invocation's time runs out during the call: the handler's deadline cuts it, the service applies it later.
  { name: 'deadline', fault: { delayMs: 8000 }, runner: 'deadline' as RunnerFault },
] as const;

/** How the faulted phase runs, and the end of what the fault started. */
export interface RunnerOptions {
  readonly options: Partial<LocalDeployOptions>;
  readonly stop: () => void;
}

/** Whether a runner fault applies to a phase (`cancel`: only deploys; CloudFormation cancels no Delete). */
export function appliesTo(fault: RunnerFault | undefined, phase: 'create' | 'update' | 'destroy'): boolean {
  return fault !== 'cancel' || phase !== 'destroy';
}

/**
 * How the faulted phase runs. `cancel`: once the emulator has taken the fault (the call arrived and is held), the
 * operation is cancelled; `fired()` polls that. `stop()` ends the polling when the phase is over.
 */
export function runnerOptions(fault: RunnerFault | undefined, fired: () => Promise<boolean>): RunnerOptions {
  if (fault === 'duplicate') return { options: { redeliver: 'at-once' }, stop: () => undefined };
  if (fault === 'deadline') return { options: { invocationBudgetMs: DEADLINE_BUDGET_MS }, stop: () => undefined };
  if (fault !== 'cancel') return { options: {}, stop: () => undefined };
  let stopped = false;
  const cancelWhen = (async () => {
    while (!stopped) {
      await new Promise((r) => setTimeout(r, 20));
      if (await fired()) return;
    }
    throw new Error('the phase ended before the call');
  })();
  cancelWhen.catch(() => undefined);
  return { options: { cancelWhen }, stop: () => { stopped = true; } };
}
