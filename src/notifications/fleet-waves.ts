/**
 * Deploy waves of a `NotificationPipelineFleet` (internal): the service allows a number of requests per rolling window
 * (the provider's `rateLimitRequests` per `rateLimitWindow`, shared by every handler container through one budget),
 * and every pipeline Create of a nested stack starts at once. A wave is as many pipelines as can make their calls
 * within one handler invocation at that pace; the nested stacks of a wave wait for those of the wave before it
 * (CloudFormation `DependsOn`), so no Create waits longer than its Lambda may run, and none nears CloudFormation's hour
 * per custom resource. A destroy runs the waves in reverse. A fleet that fits one wave gets no dependency at all.
 */
import { Duration } from 'aws-cdk-lib';
import { DEFAULT_RATE_LIMIT_REQUESTS, ProviderOptions } from '../connection/provider-options';
import { BUDGET_MARGIN_MS } from '../contract';

/** Service calls of one pipeline Create (the most of Create and Delete: docs/handler.md, "Service calls per lifecycle event"). */
export const CALLS_PER_PIPELINE = 4;
/** The share of a wave's budget its pipelines may plan on: the rest is for token exchanges, reads, retries, other traffic. */
const PLANNED_SHARE = 0.75;
/** Of the handler's timeout, what its calls may not use: the deadline margin and the calls' own latency. */
const TIMEOUT_RESERVE_MS = 75_000;

/**
 * The pipelines one wave may hold with the provider's options: the calls the budget serves within one handler
 * invocation (the limit at once, then the limit again after each full window), times the planned share, over the
 * calls per pipeline. Undefined without a shared budget (`rateLimitRequests: 0`): no waves.
 */
export function pipelinesPerWave(options: ProviderOptions | undefined): number | undefined {
  const limit = options?.rateLimitRequests ?? DEFAULT_RATE_LIMIT_REQUESTS;
  if (limit === 0) return undefined;
  const windowMs = (options?.rateLimitWindow ?? Duration.minutes(5)).toMilliseconds();
  const timeout = options?.timeout;
  const timeoutMs = timeout !== undefined && !timeout.isUnresolved() ? timeout.toMilliseconds() : Duration.minutes(10).toMilliseconds();
  const windows = 1 + Math.max(0, Math.floor((timeoutMs - TIMEOUT_RESERVE_MS) / (windowMs + BUDGET_MARGIN_MS)));
  return Math.max(1, Math.floor((limit * windows * PLANNED_SHARE) / CALLS_PER_PIPELINE));
}

/**
 * The waves of nested stacks (their indexes, ascending) for `pipelines` per nested stack index: consecutive nested
 * stacks while they fit `perWave` together. A nested stack over `perWave` alone is returned in `tooLarge`.
 */
export function planWaves(pipelines: ReadonlyMap<number, number>, perWave: number): { waves: number[][]; tooLarge: number[] } {
  const waves: number[][] = [];
  const tooLarge: number[] = [];
  let current: number[] = [];
  let load = 0;
  for (const index of [...pipelines.keys()].sort((a, b) => a - b)) {
    const n = pipelines.get(index)!;
    if (n > perWave) tooLarge.push(index);
    if (current.length > 0 && load + n > perWave) {
      waves.push(current);
      current = [];
      load = 0;
    }
    current.push(index);
    load += n;
  }
  if (current.length > 0) waves.push(current);
  return { waves, tooLarge };
}
