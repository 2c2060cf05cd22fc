/**
 * The custom-resource Lambda of the construct library (bundled to assets/handler/index/index.js).
 * Lambda handlers: `index.onEvent`, `index.isComplete`, `index.monitor` (SubscriptionMonitor) and `index.drift` (DriftMonitor).
 * See docs/handler.md.
 */
import { refuseUnprovenNested, refuseUnserved } from './binding';
import { isContinuation } from './continuation';
import { isComplete as dispatchIsComplete, onEvent as dispatchOnEvent } from './dispatch';
import { failureReason } from './errors';
import { environmentFor, loopbackHttpAllowed, stackLineage } from './runtime';
import { CfnEvent, IsCompleteResult, LambdaContextLike, OnEventResult } from './types';

/** What failed, for the reason CloudFormation shows: `Create of Orders` (the request type and the logical ID). */
function whatOf(event: CfnEvent, waiting: boolean): string {
  const request = typeof event?.RequestType === 'string' ? event.RequestType : 'Request';
  const id = typeof event?.LogicalResourceId === 'string' ? ` of ${event.LogicalResourceId}` : '';
  return `${request}${id}${waiting ? ' (waiting for completion)' : ''}`;
}

/**
 * The provider framework's onEvent. A failure reaches CloudFormation as one sentence (what failed, why, and in Lambda
 * the handler's own log group), without stack frames; the details are in that log group.
 */
export async function onEvent(event: CfnEvent, context?: LambdaContextLike): Promise<OnEventResult> {
  try {
    // Before anything is read or called: the event must be one the provider serves (src/handler/binding.ts).
    refuseUnserved('onEvent', event, environmentFor(event), loopbackHttpAllowed());
    await refuseUnprovenNested('onEvent', event, environmentFor(event), stackLineage);
    return await dispatchOnEvent(event, context);
  } catch (e) {
    throw failureReason(whatOf(event, false), e);
  }
}

/** The provider framework's isComplete (history requests and continuations wait); failures as with `onEvent`. */
export async function isComplete(event: CfnEvent, context?: LambdaContextLike): Promise<IsCompleteResult> {
  try {
    refuseUnserved('isComplete', event, environmentFor(event), loopbackHttpAllowed());
    // A poll only reads, after the same request's onEvent passed the nested-stack proof (the provider framework's
    // waiter starts it), and a failed poll would fail the resource at once: no proof. A continuation runs the event's
    // onEvent again, which changes the service: it is proven as onEvent is (an event forged to the function directly
    // must not skip the proof by carrying the continuation's marker).
    if (isContinuation(event)) await refuseUnprovenNested('isComplete', event, environmentFor(event), stackLineage);
    return await dispatchIsComplete(event, context);
  } catch (e) {
    throw failureReason(whatOf(event, true), e);
  }
}

export { monitor, setMetricSink } from './monitor';
export type { MonitorEvent } from './monitor';
export { drift, setStackResourceLister, setStackTemplateReader } from './drift-check';
export type { DriftEvent, DriftRunResult } from './drift-check';
export { configureLocalRuntime } from './runtime';
export type { LocalRuntime } from './runtime';
export type { CfnEvent, OnEventResult, IsCompleteResult } from './types';
