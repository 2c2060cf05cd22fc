/**
 * Waits longer than an invocation continue asynchronously (docs/handler.md, "Waits longer than an invocation").
 *
 * An event whose wait for the service's rate limit (its turn in the request budget shared by every provider container
 * of the account and region, or a 429's wait) would pass the invocation's deadline is answered with a continuation
 * instead of a failure: what it did is in the journal, and the call it stopped before was not sent (src/client/http.ts,
 * `waitPastDeadline`). The provider framework's waiter then calls isComplete, which runs the same event again under the
 * resource's lease (the path of a duplicate delivery) until it is done, answering `IsComplete: false` while its turn is
 * not within the invocation. The wait is bounded by CloudFormation's hour, not by the Lambda's minutes.
 */
import { ServiceError } from '../client';
import { CONTINUATION_ENV } from '../contract';
import { HandlerError } from './errors';
import type { Runtime } from './runtime';
import { CfnEvent, OnEventResult } from './types';

/** The `Data` key that marks an onEvent answer as a continuation (and, once done, says that the event continued). */
export const CONTINUATION_KEY = 'DpiContinuation';
/** Its value in a continuation answer. */
export const CONTINUING = 'waiting';
/** Its value in the final answer of an event that continued. */
export const CONTINUED = 'resumed';

/**
 * How long after its request first took the resource's lease an event may still be resumed: CloudFormation waits at
 * most one hour for a custom resource (its ServiceTimeout, whose default is also its maximum; the waiter's total
 * timeout is one hour too), less a margin for the last invocation's answer to reach it.
 */
export const CONTINUATION_LIMIT_MS = 55 * 60_000;

/** Whether the handler may answer a continuation: every framework in front of it has a waiter (the construct says so). */
export function continuationEnabled(env: Record<string, string | undefined>): boolean {
  return env[CONTINUATION_ENV] === '1';
}

/**
 * A wait of the handler's own that would pass the invocation's deadline, for an event that may continue (another
 * create of the product holding the creates lock, another delivery of the same request holding the lease): nothing
 * was changed by the step it stopped before.
 */
export class WaitPastDeadline extends HandlerError {
  constructor(message: string, public readonly what: string) {
    super(message);
    this.name = 'WaitPastDeadline';
  }
}

/** What stopped because its wait would pass the deadline (in `e` or its causes): a service call, or a handler's wait. */
export function waitPastDeadline(e: unknown): { readonly what: string; readonly message: string } | undefined {
  let err: unknown = e;
  for (let depth = 0; depth < 5 && err instanceof Error; depth++) {
    if (err instanceof WaitPastDeadline) return { what: err.what, message: err.message };
    if (err instanceof ServiceError) return err.waitPastDeadline ? { what: `${err.method} ${err.path}`, message: err.message } : undefined;
    err = (err as Error & { cause?: unknown }).cause;
  }
  return undefined;
}

/**
 * Whether `e` ends this invocation as a continuation: the event may continue and a call stopped by its wait for the
 * rate limit. A kind then rethrows it unchanged: what it made stays for the next run of the event (a failed Create
 * would instead undo it, as the provider framework ignores the rollback Delete of a failed Create).
 */
export function continuesAfter(rt: Pick<Runtime, 'continues'>, e: unknown): boolean {
  return rt.continues === true && waitPastDeadline(e) !== undefined;
}

/**
 * The continuation answer of an event: the physical ID CloudFormation knows (a Delete may not change it; a Create has
 * none yet and takes its request ID, which isComplete replaces with the service's), and the marker.
 */
export function continuationAnswer(event: CfnEvent): OnEventResult {
  const physical = event.RequestType === 'Create' ? event.RequestId : event.PhysicalResourceId ?? event.RequestId;
  return { PhysicalResourceId: physical, Data: { [CONTINUATION_KEY]: CONTINUING } };
}

/** Whether an isComplete event continues an onEvent answered with a continuation. */
export function isContinuation(event: CfnEvent): boolean {
  return event.Data?.[CONTINUATION_KEY] === CONTINUING;
}

/** The onEvent event that an isComplete event continues: without the answer's Data, and a Create without a physical ID. */
export function continuedEvent(event: CfnEvent): CfnEvent {
  const { Data: _data, PhysicalResourceId: physical, ...rest } = event;
  return { ...rest, ...(event.RequestType !== 'Create' && physical !== undefined ? { PhysicalResourceId: physical } : {}) };
}

/** The failure of an event that still waits when CloudFormation's hour is nearly over. */
export function continuationTimedOut(event: CfnEvent, requestSince: string, nowMs: number): HandlerError {
  const minutes = Math.round((nowMs - Date.parse(requestSince)) / 60_000);
  return new HandlerError(`the ${event.RequestType} of ${event.LogicalResourceId} has waited ${minutes} minutes (since ${requestSince}) for its turn `
    + 'in the service\'s rate limit, which every provider of the account and region shares; CloudFormation waits at most one hour for a '
    + 'resource, so it stops here (what it made is in the lifecycle journal and is ended or found again): deploy fewer resources at once '
    + '(a fleet\'s waves), or deploy again when the other deploys have finished');
}
