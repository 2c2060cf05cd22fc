import { ConnectionProperties } from '../contract';
import { KIND_TYPES } from '../kinds';
import { CONTINUATION_KEY, CONTINUATION_LIMIT_MS, CONTINUED, continuationAnswer, continuationEnabled, continuationTimedOut, continuedEvent, isContinuation, waitPastDeadline } from './continuation';
import { HandlerError, reasonOf } from './errors';
import type { ResourceLeases } from './journal-lease';
import { checkJournalMove } from './journal-move';
import { MissingJournalTableError } from './journal-provided';
import { eventHooks } from './kind-events';
import type { OnEventFn } from './kind-fns';
import { CANCELLED_CREATE_GRACE_ROUNDS, cancelledCreate, inventedDelete, LEASE_WORK_RESERVE_MS, LeaseBusy, withResourceLease } from './lease';
import { log, logEvent } from './log';
import { environmentFor, now, Runtime, runtimeFor } from './runtime';
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

/**
 * Runs the kind's onEvent of `event` holding the resource's lease (one invocation at a time per resource: a duplicate
 * delivery waits, a cancellation Delete runs after the Create), with a client that looks for a cancellation right
 * before each creating request leaves. `started` is set once the lease is held.
 */
async function leased(event: CfnEvent, rt: LeasedRuntime, fn: OnEventFn, opts: { readonly wait?: boolean; readonly resumed?: boolean } = {},
  started: { value: boolean } = { value: false }): Promise<OnEventResult> {
  // Read-only, and before the lease: a refused move creates no table.
  const unproven = await checkJournalMove(event, rt);
  const continues = continuationEnabled(environmentFor(event));
  return withResourceLease(event, rt, async (lease) => {
    started.value = true;
    let scoped: Runtime = { ...rt, lease, continues, ...(unproven === undefined ? {} : { journalUnproven: unproven }) };
    if (opts.resumed) {
      // A continuation: within CloudFormation's hour, counted from the request's first run, and no wait past it.
      // A requestSince in the future (no honest writer leaves one) counts from now: it cannot lift the limit.
      const limit = Math.min(Date.parse(lease.requestSince), now()) + CONTINUATION_LIMIT_MS;
      if (!(now() < limit)) throw continuationTimedOut(event, lease.requestSince, now());
      if (limit < scoped.deadline) scoped = { ...scoped, deadline: limit, client: scoped.client.withDeadline(limit) };
    }
    // The last look before a creating request leaves: a turn in the rate limit may have come after a long wait.
    const client = scoped.client.withCreatingCheck(async () => {
      const by = await lease.cancelled();
      if (by !== undefined) throw cancelledCreate(by);
    });
    const out = await fn(event, { ...scoped, client });
    // A second delivery of a request that ran before answers as a continuation does: the waiter's input (the event and
    // this answer) is then the same for every delivery, so a provider framework that names its waiter's execution after
    // the request (other aws-cdk-lib versions) finds the execution it started and does not fail; isComplete answers.
    if (lease.earlierRun === true && scoped.continues === true && opts.resumed !== true) return continuationAnswer(event);
    return out;
  }, { ...opts, continues });
}

type LeasedRuntime = Runtime & { readonly leases: ResourceLeases };

/** The provider framework's onEvent: dispatches on `ResourceType`. */
export async function onEvent(event: CfnEvent, context?: LambdaContextLike): Promise<OnEventResult> {
  logEvent('onEvent', event);
  return guarded('onEvent', event, async () => {
    const fn = hooksFor(event.ResourceType)?.onEvent;
    if (!fn) throw new HandlerError(`unknown resource type ${event.ResourceType}; this provider serves ${KIND_TYPES.join(', ')}`);
    if (event.RequestType !== 'Create' && event.RequestType !== 'Update' && event.RequestType !== 'Delete') {
      throw new HandlerError(`unknown request type ${String(event.RequestType)}`);
    }
    const env = environmentFor(event);
    const rt = runtimeFor(connectionOf(event), context, env);
    const started = { value: false };
    for (let round = 0; ; round++) {
      try {
        return await leased(event, rt, fn, {}, started);
      } catch (e) {
        const wait = waitPastDeadline(e);
        if (wait !== undefined && continuationEnabled(env)) {
          // What it did is in the journal and the call it stopped before was not sent: isComplete carries on.
          log({
            msg: 'the service\'s rate limit gives the next call its turn after this invocation\'s deadline: continuing in isComplete',
            LogicalResourceId: event.LogicalResourceId,
            RequestType: event.RequestType,
            call: wait.what,
            reason: wait.message,
          });
          return continuationAnswer(event);
        }
        // Only a cancellation Delete (the physical ID CloudFormation invents for a Create it stopped waiting for) whose
        // journal table does not exist, before anything of it ran: every Create takes its lease in the table before any
        // service call, so with no table no Create of this resource made anything. A Delete of a resource that was
        // made (a service ID) still fails: its journal is gone, and only a visible failure says so.
        if (started.value || !inventedDelete(event) || !(e instanceof MissingJournalTableError)) throw e;
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

/**
 * The provider framework's isComplete. An event answered with a continuation runs again (resume); a history request
 * then waits for the service as before; everything else is complete at once.
 */
export async function isComplete(event: CfnEvent, context?: LambdaContextLike): Promise<IsCompleteResult> {
  logEvent('isComplete', event);
  return guarded('isComplete', event, async () => {
    const hooks = hooksFor(event.ResourceType);
    if (!isContinuation(event)) {
      if (!hooks?.isComplete) return { IsComplete: true };
      return hooks.isComplete(event, runtimeFor(connectionOf(event), context, environmentFor(event)));
    }
    if (!hooks) throw new HandlerError(`unknown resource type ${event.ResourceType}; this provider serves ${KIND_TYPES.join(', ')}`);
    // The same checks as onEvent's: a continuation is only ever of an event onEvent accepted.
    if (event.RequestType !== 'Create' && event.RequestType !== 'Update' && event.RequestType !== 'Delete') {
      throw new HandlerError(`unknown request type ${String(event.RequestType)}`);
    }
    const rt = runtimeFor(connectionOf(event), context, environmentFor(event));
    const original = continuedEvent(event);
    let done: OnEventResult;
    try {
      done = await leased(original, rt, hooks.onEvent, { wait: false, resumed: true });
    } catch (e) {
      if (e instanceof LeaseBusy) {
        // The limit holds while another run holds the lease: a lease held (or planted) poll after poll cannot keep the
        // waiter asking past CloudFormation's hour without the handler's own reason.
        const since = Date.parse(e.holder.requestSince);
        if (e.holder.requestId === original.RequestId && !(now() < Math.min(since, now()) + CONTINUATION_LIMIT_MS)) {
          throw continuationTimedOut(original, e.holder.requestSince, now());
        }
        // Another run of the resource holds the lease (a second waiter of the same request): it does the work.
        log({ msg: 'another invocation of the resource is running: asking again later', LogicalResourceId: event.LogicalResourceId, request: e.holder.requestId });
        return { IsComplete: false };
      }
      const wait = waitPastDeadline(e);
      if (wait === undefined) throw e;
      log({
        msg: 'still waiting for a turn in the service\'s rate limit: asking again later',
        LogicalResourceId: event.LogicalResourceId,
        call: wait.what,
        reason: wait.message,
      });
      return { IsComplete: false };
    }
    const answer: IsCompleteResult = {
      IsComplete: true,
      PhysicalResourceId: done.PhysicalResourceId,
      Data: { ...(done.Data ?? {}), [CONTINUATION_KEY]: CONTINUED },
    };
    if (!hooks.isComplete) return answer;
    // A kind that waits for the service (a history request) waits now, as after a plain onEvent.
    const waited = await hooks.isComplete({ ...original, PhysicalResourceId: done.PhysicalResourceId, Data: { ...(done.Data ?? {}) } }, rt);
    return waited.IsComplete ? { ...answer, Data: { ...answer.Data, ...(waited.Data ?? {}) } } : { IsComplete: false };
  });
}
