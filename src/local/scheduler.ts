/**
 * Concurrent, dependency-ordered execution of the resource operations of one stack, the way CloudFormation runs
 * them: every operation whose dependencies are done is started (up to a concurrency limit), in plan order.
 */

/**
 * Resource operations in flight at once by default. CloudFormation creates, updates and deletes resources "in
 * parallel to the extent possible" (CloudFormation template reference, DependsOn attribute) and documents no number;
 * the local runner bounds it so one process does not start hundreds of handler invocations at once (every one of
 * them waits for the same rate-limited service anyway).
 */
export const DEFAULT_CONCURRENCY = 10;

/** Parses a `--concurrency` value: a positive integer. */
export function parseConcurrency(text: string | number | undefined): number {
  if (text === undefined) return DEFAULT_CONCURRENCY;
  const n = typeof text === 'number' ? text : /^\d+$/.test(text.trim()) ? Number(text.trim()) : NaN;
  if (!Number.isSafeInteger(n) || n < 1) {
    throw new Error(`concurrency '${String(text)}' is not a positive integer (1 runs one resource at a time)`);
  }
  return n;
}

/** What an operation reports: `false` stops new operations from starting (in-flight ones finish). */
export type StepResult = boolean;

/** The outcome of a scheduled run. */
export interface ScheduleResult {
  /** IDs whose operation ran, in the order they finished. */
  readonly finished: string[];
  /** IDs whose operation returned false. */
  readonly failed: string[];
  /** IDs never started (a failure stopped the run, or something they wait for failed). */
  readonly notStarted: string[];
}

/**
 * Runs `step` for every ID once all IDs it waits for (`waitsFor`, restricted to `ids`) have finished successfully.
 * Ready IDs start in the order of `ids`, at most `concurrency` at a time; with concurrency 1 the order is exactly
 * `ids` when `ids` is already a dependency order. A step that returns false (or throws) stops new steps from
 * starting when `stopOnFailure` is set (a deploy: CloudFormation then rolls back); otherwise only the IDs that wait
 * for it (directly or not) are not started (a destroy: CloudFormation skips them), each reported to `onSkip`.
 * `gate`, when it gives a promise for a ready ID, holds that ID until it resolves, without taking one of the
 * `concurrency` places (what it waits for may need them): true starts it, false fails it unstarted.
 */
export async function runScheduled(
  ids: readonly string[],
  waitsFor: (id: string) => readonly string[],
  concurrency: number,
  step: (id: string) => Promise<StepResult>,
  stopOnFailure = true,
  onSkip?: (id: string) => void,
  gate?: (id: string) => Promise<boolean> | undefined,
): Promise<ScheduleResult> {
  const present = new Set(ids);
  const pending = new Map<string, Set<string>>();
  for (const id of ids) pending.set(id, new Set(waitsFor(id).filter((d) => present.has(d) && d !== id)));
  const finished: string[] = [];
  const failed: string[] = [];
  const done = new Set<string>();
  const blocked = new Set<string>();
  const started = new Set<string>();
  let stopped = false;
  let running = 0;
  const gates = new Map<string, 'waiting' | 'open' | 'closed'>();
  let gated = 0;
  /** Whether a ready ID may start now: its gate opened (or it has none); a closed gate fails it. */
  const passes = (id: string, pump: () => void): boolean => {
    let g = gates.get(id);
    if (g === undefined) {
      const wait = gate?.(id);
      g = wait ? 'waiting' : 'open';
      gates.set(id, g);
      if (wait) {
        gated++;
        void wait.then((ok) => ok, () => false).then((ok) => {
          gated--;
          gates.set(id, ok ? 'open' : 'closed');
          pump();
        });
      }
    }
    if (g !== 'closed') return g === 'open';
    started.add(id);
    finished.push(id);
    failed.push(id);
    blocked.add(id);
    if (stopOnFailure) stopped = true;
    return false;
  };
  const limit = Math.max(1, concurrency);

  return new Promise<ScheduleResult>((resolveAll) => {
    const result = (): ScheduleResult => ({ finished, failed, notStarted: ids.filter((id) => !started.has(id)) });
    const pump = (): void => {
      if (!stopped) {
        for (const id of ids) {
          if (running >= limit) break;
          if (started.has(id) || blocked.has(id)) continue;
          const waits = pending.get(id)!;
          if ([...waits].some((d) => blocked.has(d))) {
            blocked.add(id);
            onSkip?.(id);
            continue;
          }
          if (![...waits].every((d) => done.has(d))) continue;
          if (!passes(id, pump)) continue;
          started.add(id);
          running++;
          void Promise.resolve().then(() => step(id)).then((ok) => ok, () => false).then((ok) => {
            running--;
            finished.push(id);
            if (ok) {
              done.add(id);
            } else {
              failed.push(id);
              blocked.add(id);
              if (stopOnFailure) stopped = true;
            }
            pump();
          });
        }
        // Blocking propagates transitively: repeat until nothing new is blocked.
        let grew = true;
        while (grew) {
          grew = false;
          for (const id of ids) {
            if (started.has(id) || blocked.has(id)) continue;
            if ([...pending.get(id)!].some((d) => blocked.has(d))) {
              blocked.add(id);
              onSkip?.(id);
              grew = true;
            }
          }
        }
      }
      // Nothing in flight after starting what was ready: nothing else can become ready.
      if (running === 0 && gated === 0) resolveAll(result());
    };
    pump();
  });
}
