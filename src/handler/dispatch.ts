import { ConnectionProperties } from '../contract';
import { KIND_TYPES } from '../kinds';
import { HandlerError, reasonOf } from './errors';
import { checkJournalMove } from './journal-move';
import { eventHooks } from './kind-events';
import { withResourceLease } from './lease';
import { log, logEvent } from './log';
import { environmentFor, runtimeFor } from './runtime';
import { CfnEvent, IsCompleteResult, LambdaContextLike, OnEventResult } from './types';

/** The event hooks of the registry's kinds (src/kinds/registry/lambda.ts, src/handler/kind-events.ts); undefined for any other type. */
const hooksFor = eventHooks;

function connectionOf(event: CfnEvent): ConnectionProperties {
  return event.ResourceProperties?.Connection as ConnectionProperties;
}

/** Runs `fn`; a failure becomes one short, scrubbed sentence (the reason CloudFormation shows). */
async function guarded<T>(what: string, event: CfnEvent, fn: () => Promise<T>): Promise<T> {
  const started = Date.now();
  try {
    const out = await fn();
    log({ msg: `${what} done`, RequestType: event.RequestType, LogicalResourceId: event.LogicalResourceId, ms: Date.now() - started, result: out });
    return out;
  } catch (e) {
    const reason = reasonOf(e);
    log({ msg: `${what} failed`, RequestType: event.RequestType, LogicalResourceId: event.LogicalResourceId, ms: Date.now() - started, reason });
    throw new Error(reason);
  }
}

/** The provider framework's onEvent: dispatches on `ResourceType`. */
export async function onEvent(event: CfnEvent, context?: LambdaContextLike): Promise<OnEventResult> {
  logEvent('onEvent', event);
  return guarded('onEvent', event, async () => {
    const fn = hooksFor(event.ResourceType)?.onEvent;
    if (!fn) throw new HandlerError(`unknown resource type ${event.ResourceType}; this provider serves ${KIND_TYPES.join(', ')}`);
    if (event.RequestType !== 'Create' && event.RequestType !== 'Update' && event.RequestType !== 'Delete') {
      throw new HandlerError(`unknown request type ${String(event.RequestType)}`);
    }
    const rt = runtimeFor(connectionOf(event), context, environmentFor(event));
    // Read-only, and before the lease: a refused move creates no table.
    const unproven = await checkJournalMove(event, rt);
    // One invocation at a time per resource: a duplicate delivery waits, a cancellation Delete runs after the Create.
    return withResourceLease(event, rt, async (lease) =>
      fn(event, { ...rt, lease, ...(unproven === undefined ? {} : { journalUnproven: unproven }) }));
  });
}

/** The provider framework's isComplete (only history requests wait; everything else is complete at once). */
export async function isComplete(event: CfnEvent, context?: LambdaContextLike): Promise<IsCompleteResult> {
  logEvent('isComplete', event);
  return guarded('isComplete', event, async () => {
    const fn = hooksFor(event.ResourceType)?.isComplete;
    if (!fn) return { IsComplete: true };
    return fn(event, runtimeFor(connectionOf(event), context, environmentFor(event)));
  });
}
