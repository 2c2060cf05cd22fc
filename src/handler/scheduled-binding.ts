/**
 * The scheduled functions (a `SubscriptionMonitor`'s `index.monitor`, a `DriftMonitor`'s `index.drift`) serve only the
 * run their rule sends. Anyone who may invoke them (`lambda:InvokeFunction`, a rule of their own) could otherwise hand
 * them another address and receive the refresh token, another stack, another metric namespace or metadata key and
 * raise false alarms. The constructs bind the rule's input (all but the monitor's subscription list, which the service
 * answers for) in the function's environment (`DPI_BOUND_RUN`); a run that differs in any field is refused before the
 * secret is read or any call, and nothing is published. The details go to the function's log only: the invoker learns
 * nothing of what is bound. See docs/handler.md ("What the provider binds").
 */
import { BOUND_RUN_ENV } from '../contract';
import { checkTransport, Environment, REDEPLOY } from './binding';
import { HandlerError, reasonOf } from './errors';
import { log } from './log';

/**
 * The fields of a run the service answers for (not bound): the monitor's subscriptions, and the identities whose
 * health it counts with the dimension value of that count (read-only: a changed list changes a metric, nothing else).
 */
const UNBOUND = new Set(['Subscriptions', 'Identities', 'Monitor']);

/** A value in one canonical form (object keys sorted), for comparison. */
function canonical(v: unknown): string {
  if (Array.isArray(v)) return `[${v.map(canonical).join(',')}]`;
  if (v !== null && typeof v === 'object') {
    return `{${Object.keys(v).sort().map((k) => `${JSON.stringify(k)}:${canonical((v as Record<string, unknown>)[k])}`).join(',')}}`;
  }
  return JSON.stringify(v) ?? 'undefined';
}

/** The fields (`Connection.AuthUrl`, `StackId`, ...) in which `run` differs from `bound`. */
function differing(run: Record<string, unknown>, bound: Record<string, unknown>): string[] {
  const out: string[] = [];
  const keys = new Set([...Object.keys(run), ...Object.keys(bound)].filter((k) => !UNBOUND.has(k)));
  for (const k of [...keys].sort()) {
    const [a, b] = [run[k], bound[k]];
    if (canonical(a) === canonical(b)) continue;
    const objects = a !== null && typeof a === 'object' && !Array.isArray(a) && b !== null && typeof b === 'object' && !Array.isArray(b);
    if (!objects) {
      out.push(k);
      continue;
    }
    const sub = new Set([...Object.keys(a as object), ...Object.keys(b as object)]);
    for (const f of [...sub].sort()) {
      if (canonical((a as Record<string, unknown>)[f]) !== canonical((b as Record<string, unknown>)[f])) out.push(`${k}.${f}`);
    }
  }
  return out;
}

/**
 * Checks a scheduled run against the one bound to the function (throws a HandlerError naming the differing fields;
 * never their values), then its service addresses against the transport rule.
 */
export function checkScheduledRun(run: unknown, env: Environment, loopbackHttp: boolean): void {
  const raw = env[BOUND_RUN_ENV];
  if (raw === undefined || raw === '') throw new HandlerError(`the function's environment has no ${BOUND_RUN_ENV}, so it cannot tell which run it serves; ${REDEPLOY}`);
  let bound: unknown;
  try {
    bound = JSON.parse(raw);
  } catch {
    throw new HandlerError(`the function's environment variable ${BOUND_RUN_ENV} is not JSON; ${REDEPLOY}`);
  }
  if (bound === null || typeof bound !== 'object' || Array.isArray(bound)) throw new HandlerError(`${BOUND_RUN_ENV} is not an object; ${REDEPLOY}`);
  if (run === null || typeof run !== 'object' || Array.isArray(run)) throw new HandlerError('the run is not an object; nothing was done');
  const diff = differing(run as Record<string, unknown>, bound as Record<string, unknown>);
  if (diff.length > 0) {
    throw new HandlerError(`the run differs from the one bound to this function at synth time in ${diff.join(', ')}; nothing was done`);
  }
  const connection = (run as { Connection?: unknown }).Connection;
  if (connection !== null && typeof connection === 'object') checkTransport(connection as Record<string, string>, loopbackHttp);
}

/** What the invoker of a refused run hears: nothing of what is bound. */
export const REFUSED_RUN = 'this run is not the one bound to the function at synth time; nothing was read or published (the reason is in the function\'s log)';

/** `checkScheduledRun`, logging the refusal's reason and throwing a plain error that names nothing bound. */
export function refuseUnboundRun(what: string, run: unknown, env: Environment, loopbackHttp: boolean): void {
  try {
    checkScheduledRun(run, env, loopbackHttp);
  } catch (e) {
    log({ level: 'ERROR', msg: `${what} run refused`, reason: reasonOf(e) });
    throw new Error(REFUSED_RUN);
  }
}
