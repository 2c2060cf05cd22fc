import { ConnectionProperties } from '../contract';
import { KIND_TYPES } from '../kinds';
import { HandlerError, reasonOf } from './errors';
import { checkJournalMove } from './journal-move';
import { MISSING_JOURNAL_TABLE } from './journal-provided';
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

/** Whether `e` says the journal table does not exist (a supplied or declared table the handler never creates). */
function isMissingJournal(e: unknown): boolean {
  return e instanceof HandlerError && e.message.includes(MISSING_JOURNAL_TABLE);
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
    try {
      // Read-only, and before the lease: a refused move creates no table.
      const unproven = await checkJournalMove(event, rt);
      // One invocation at a time per resource: a duplicate delivery waits, a cancellation Delete runs after the Create.
      return await withResourceLease(event, rt, async (lease) =>
        fn(event, { ...rt, lease, ...(unproven === undefined ? {} : { journalUnproven: unproven }) }));
    } catch (e) {
      if (event.RequestType !== 'Delete' || !isMissingJournal(e)) throw e;
      // Every Create takes its lease in the journal table before any service call, so with no table no Create of this
      // resource made anything: a Delete (a rollback's cancellation Delete of a stack deployed before its journal)
      // has nothing to end. Failing it would only leave the stack in ROLLBACK_FAILED / DELETE_FAILED.
      const msg = 'Delete: the lifecycle journal table does not exist, so no Create of this resource made anything; nothing ended';
      log({ msg, level: 'WARNING', LogicalResourceId: event.LogicalResourceId, PhysicalResourceId: event.PhysicalResourceId, reason: reasonOf(e) });
      return { PhysicalResourceId: event.PhysicalResourceId ?? event.RequestId };
    }
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
