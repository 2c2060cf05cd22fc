import { ConnectionProperties } from '../contract';
import { KIND_TYPES } from '../kinds';
import { HandlerError, reasonOf } from './errors';
import { checkJournalMove } from './journal-move';
import { MissingJournalTableError } from './journal-provided';
import { eventHooks } from './kind-events';
import { CANCELLED_CREATE_GRACE_ROUNDS, inventedDelete, LEASE_WORK_RESERVE_MS, withResourceLease } from './lease';
import { log, logEvent } from './log';
import { environmentFor, now, runtimeFor } from './runtime';
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
    let started = false;
    const run = async (): Promise<OnEventResult> => {
      // Read-only, and before the lease: a refused move creates no table.
      const unproven = await checkJournalMove(event, rt);
      // One invocation at a time per resource: a duplicate delivery waits, a cancellation Delete runs after the Create.
      return withResourceLease(event, rt, async (lease) => {
        started = true;
        return fn(event, { ...rt, lease, ...(unproven === undefined ? {} : { journalUnproven: unproven }) });
      });
    };
    for (let round = 0; ; round++) {
      try {
        return await run();
      } catch (e) {
        // Only a cancellation Delete (the physical ID CloudFormation invents for a Create it stopped waiting for) whose
        // journal table does not exist, before anything of it ran: every Create takes its lease in the table before any
        // service call, so with no table no Create of this resource made anything. A Delete of a resource that was
        // made (a service ID) still fails: its journal is gone, and only a visible failure says so.
        if (started || !inventedDelete(event) || !(e instanceof MissingJournalTableError)) throw e;
        // The table may be on its way (its stack deploying now; DynamoDB may not describe a new table at once), and
        // the cancelled Create with it: look again for the lease's grace period before answering.
        if (round < CANCELLED_CREATE_GRACE_ROUNDS && now() + LEASE_WORK_RESERVE_MS < rt.deadline) {
          await rt.sleep(1_000);
          continue;
        }
        const msg = 'cancellation Delete: the lifecycle journal table does not exist, so no Create of this resource made anything; nothing ended';
        log({ msg, level: 'WARNING', LogicalResourceId: event.LogicalResourceId, PhysicalResourceId: event.PhysicalResourceId, reason: reasonOf(e) });
        return { PhysicalResourceId: event.PhysicalResourceId ?? event.RequestId };
      }
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
