/**
 * The provider framework's waiter (aws-cdk-lib custom-resources, `Provider` with an `isCompleteHandler`): a Step
 * Functions state machine calls the isComplete function once at once, then again after each `IntervalSeconds` (times
 * `BackoffRate` each time, at most `MaxDelaySeconds`) up to `MaxAttempts` retries; then its timeout task fails the
 * resource with "Operation timed out". The local runner reads that retry policy from the state machine's definition
 * in the template, so it polls as the cloud polls.
 */
import { isPlainObject, TemplateResource } from './template';

/** The framework's variable naming the waiter state machine. */
export const WAITER_STATE_MACHINE_ENV = 'WAITER_STATE_MACHINE_ARN';

/** How the waiter polls. */
export interface WaiterPolicy {
  /** Wait before the first retry (ms). */
  readonly intervalMs: number;
  /** Retries after the first call. */
  readonly maxAttempts: number;
  /** Factor of each next wait. */
  readonly backoffRate: number;
  /** Longest wait (ms). @default none */
  readonly maxDelayMs?: number;
}

/**
 * This library's waiter (src/connection/provider.ts: a query interval of 30 s, a total timeout of one hour), used for a
 * resource whose template is not at hand (a Delete of a resource the app no longer declares).
 */
export const LIBRARY_WAITER: WaiterPolicy = { intervalMs: 30_000, maxAttempts: 120, backoffRate: 1 };

/** The framework's failure reason when the waiter gives up. */
export const WAITER_TIMED_OUT = 'Operation timed out';

/** The wait before retry `n` (0 = the first retry), in ms. */
export function waiterDelayMs(p: WaiterPolicy, n: number): number {
  const d = p.intervalMs * Math.pow(p.backoffRate, n);
  return p.maxDelayMs === undefined ? d : Math.min(d, p.maxDelayMs);
}

/**
 * The text of a `DefinitionString`: a string, or an `Fn::Join` of strings and tokens (function ARNs, which sit inside
 * JSON strings and do not change the policy: each becomes a placeholder).
 */
function definitionText(v: unknown): string | undefined {
  if (typeof v === 'string') return v;
  if (!isPlainObject(v)) return undefined;
  const join = v['Fn::Join'];
  if (!Array.isArray(join) || join.length !== 2 || typeof join[0] !== 'string' || !Array.isArray(join[1])) return undefined;
  return join[1].map((part) => (typeof part === 'string' ? part : 'token')).join(join[0]);
}

/**
 * The retry policy of the state machine a framework function's `WAITER_STATE_MACHINE_ARN` names (`Ref` of a state
 * machine of `resources`): the first state's retrier for `States.ALL`. Undefined when the template does not say it
 * plainly (the caller then uses this library's policy).
 */
export function waiterPolicy(resources: Record<string, TemplateResource> | undefined, smRef: unknown): WaiterPolicy | undefined {
  const id = isPlainObject(smRef) && typeof smRef.Ref === 'string' ? smRef.Ref : undefined;
  const sm = id === undefined ? undefined : resources?.[id];
  if (sm?.Type !== 'AWS::StepFunctions::StateMachine') return undefined;
  const inline = sm.Properties?.Definition;
  const text = definitionText(sm.Properties?.DefinitionString) ?? (isPlainObject(inline) ? JSON.stringify(inline) : undefined);
  if (text === undefined) return undefined;
  let def: unknown;
  try {
    def = JSON.parse(text);
  } catch {
    return undefined;
  }
  if (!isPlainObject(def) || typeof def.StartAt !== 'string' || !isPlainObject(def.States)) return undefined;
  const first = def.States[def.StartAt];
  const retry = isPlainObject(first) && Array.isArray(first.Retry) ? first.Retry.find((r) => isPlainObject(r) && Array.isArray(r.ErrorEquals) && r.ErrorEquals.includes('States.ALL')) : undefined;
  if (!isPlainObject(retry)) return undefined;
  // Step Functions' defaults: 1 s, 3 attempts, a rate of 2.
  const num = (v: unknown, d: number): number => (typeof v === 'number' && Number.isFinite(v) && v >= 0 ? v : d);
  const maxDelay = retry.MaxDelaySeconds;
  return {
    intervalMs: num(retry.IntervalSeconds, 1) * 1000,
    maxAttempts: Math.floor(num(retry.MaxAttempts, 3)),
    backoffRate: Math.max(1, num(retry.BackoffRate, 2)),
    ...(typeof maxDelay === 'number' && maxDelay > 0 ? { maxDelayMs: maxDelay * 1000 } : {}),
  };
}
