/**
 * One invocation at a time per resource: every onEvent holds its resource's lease (journal-lease.ts) from before its
 * first read to its answer. See that module for why, and docs/handler.md ("Cancellations and duplicate deliveries").
 */
import { RELEASED_OR_DONE } from './common';
import { WaitPastDeadline } from './continuation';
import { HandlerError, messageOf } from './errors';
import { resourceKey } from './journal';
import { LeaseMark, LeaseScope, newHolder, ResourceLeases } from './journal-lease';
import { log } from './log';
import { DEADLINE_MARGIN_MS, now, Runtime } from './runtime';
import { CfnEvent } from './types';

/** States of a create attempt whose outcome a Delete resolves on its own (src/handler/creates.ts, adoptions). */
const ATTEMPT_STATES: ReadonlySet<string> = new Set(['recording', 'adopting']);

/** How long a waiting invocation keeps for its own work: it stops waiting this long before its deadline. */
export const LEASE_WORK_RESERVE_MS = 60_000;
/**
 * Seconds a Delete with an invented physical ID waits for the cancelled Create to arrive when none has run (CloudFormation
 * can send the Delete while the Create's invocation is still in a cold start).
 */
export const CANCELLED_CREATE_GRACE_ROUNDS = 15;
/** The longest CloudFormation waits for a custom resource's answer (its default and largest service timeout). */
const CLOUDFORMATION_WAIT_MS = 3_600_000;
/** Rounds of waiting at most (a bound should the sleep not wait). */
const MAX_ROUNDS = 5_000;

/** The failure of a Create that finds itself cancelled before its creating call. */
export function cancelledCreate(by: string): HandlerError {
  return new HandlerError(`CloudFormation stopped waiting for this request and sent request ${by.split('#')[0]} for the resource meanwhile `
    + '(another resource of the operation failed): nothing was created');
}

/** The failure of a request delivered (or polled) again after CloudFormation moved on from it: nothing was read or changed. */
function movedOn(event: CfnEvent): HandlerError {
  return new HandlerError(`this ${event.RequestType} (request ${event.RequestId}) was delivered again after CloudFormation had moved on from it `
    + '(another request of the resource ran since): nothing was changed');
}

/** Thrown by `withResourceLease` with `wait: false` when another invocation holds the lease (nothing was read or changed). */
export class LeaseBusy extends Error {
  constructor(public readonly holder: LeaseMark) {
    super(`another invocation of the resource (${holder.requestType}, request ${holder.requestId}) holds its lease until ${holder.expiresAt}`);
    this.name = 'LeaseBusy';
  }
}

/**
 * Runs `fn` holding the lease of the event's resource. Waits (saying so in the log) while another invocation holds it;
 * an invocation of another request marks a running Create or Update cancelled first. Fails clearly, having changed
 * nothing, when the lease is still held too close to its own deadline. With `wait: false` (a continuation, which the
 * waiter calls again) it throws `LeaseBusy` at once instead, marking nothing.
 */
export async function withResourceLease<T>(event: CfnEvent, rt: Runtime & { readonly leases: ResourceLeases },
  fn: (scope: LeaseScope) => Promise<T>, opts: { readonly wait?: boolean; readonly continues?: boolean } = {}): Promise<T> {
  const key = resourceKey(event);
  const holder = newHolder(event.RequestId);
  const expiresAt = new Date(rt.deadline + DEADLINE_MARGIN_MS).toISOString();
  let marked = false;
  let previous: LeaseMark | undefined;
  let requestSince = '';
  const acquire = async (): Promise<void> => {
    for (let round = 0; ; round++) {
      const got = await rt.leases.take(key, { holder, requestId: event.RequestId, requestType: event.RequestType, expiresAt });
      if (got.taken) {
        previous = got.previous;
        requestSince = got.requestSince;
        return;
      }
      if (got.movedOn === true) throw movedOn(event);
      if (opts.wait === false) throw new LeaseBusy(got.holder);
      await waitForHolder(got.holder, round);
    }
  };
  const waitForHolder = async (other: LeaseMark, round: number): Promise<void> => {
    if (!marked && other.requestId !== event.RequestId && (other.requestType === 'Create' || other.requestType === 'Update')) {
      marked = await rt.leases.cancel(key, event.RequestId);
      if (marked) {
        log({
          level: 'WARNING',
          msg: `CloudFormation moved on from the ${other.requestType} of this resource that is still running: it is marked cancelled and this `
            + `${event.RequestType} runs once it returns`,
          resource: key,
          request: other.requestId,
          since: other.since,
        });
      }
    }
    if (round === 0) {
      log({ msg: 'another invocation of this resource is running: waiting for it', resource: key, request: other.requestId, type: other.requestType, until: other.expiresAt });
    }
    if (now() + LEASE_WORK_RESERVE_MS > rt.deadline || round >= MAX_ROUNDS) {
      if (opts.continues && other.requestId === event.RequestId) {
        // A second delivery of the running request that may continue: its isComplete asks again once the first is
        // done (and finds the work done), so the running one is not told to give up.
        throw new WaitPastDeadline(`another delivery of this ${event.RequestType} (request ${event.RequestId}) is still running, `
          + 'past this invocation\'s deadline', `the lease of ${key}`);
      }
      // A second delivery of the running request gives up: its failure may be the answer CloudFormation takes, so the
      // running one is told to end what it made rather than report it.
      if (other.requestId === event.RequestId) await rt.leases.cancel(key, `${event.RequestId}#gave-up`).catch(() => false);
      throw new HandlerError(`another invocation of ${key} (${other.requestType}, request ${other.requestId}, since ${other.since}) is still running; `
        + `a resource's events run one at a time, and its lease ends at the latest at ${other.expiresAt}: retry then (nothing was changed)`);
    }
    await rt.sleep(500 + Math.floor(Math.random() * 500));
  };
  await acquire();
  const earlierRun = previous?.requestId === event.RequestId;
  // A second run of the same Delete (a duplicate delivery, a continuation) waited for the cancelled Create already.
  if (inventedDelete(event) && !createOfThisOperation(previous, event) && previous?.requestId !== event.RequestId) {
    // A Delete with the physical ID CloudFormation invents for a Create it stopped waiting for, and no Create has run:
    // that Create may still be on its way (a cold start, a queued delivery). Wait a little for it, so it is marked
    // cancelled (and makes nothing) instead of creating after this Delete found nothing to end.
    for (let round = 0; round < CANCELLED_CREATE_GRACE_ROUNDS && now() + LEASE_WORK_RESERVE_MS < rt.deadline; round++) {
      await rt.leases.release(key, holder);
      await rt.sleep(1_000);
      await acquire();
      if (createOfThisOperation(previous, event)) break;
    }
  }
  // Refused by `take` already (nothing written); kept for a lease item written before that check.
  const stale = previous?.cancelledRequests?.includes(event.RequestId) === true && event.RequestType !== 'Delete';
  const last = previous?.lastCreate;
  const previousCreate = last !== undefined && last.requestId !== event.RequestId ? last : undefined;
  const previousUpdate = event.RequestType === 'Update' && previous?.requestType === 'Update' && previous.requestId !== event.RequestId
    && previous.requestId !== '' ? { requestId: previous.requestId, requestSince: previous.requestSince } : undefined;
  const scope: LeaseScope = {
    cancelled: () => rt.leases.cancelledBy(key, holder),
    requestSince,
    ...(previousCreate ? { previousCreate } : {}),
    ...(previousUpdate ? { previousUpdate } : {}),
    ...(earlierRun ? { earlierRun } : {}),
  };
  try {
    if (stale) throw movedOn(event);
    return await fn(scope);
  } finally {
    await rt.leases.release(key, holder).catch((e: unknown) => {
      log({ level: 'WARNING', msg: 'could not release the resource lease (it expires with this invocation)', resource: key, error: messageOf(e) });
    });
  }
}

/**
 * A Delete whose physical ID is one CloudFormation invented for a Create it stopped waiting for:
 * `<stack name>-<logical ID>-<suffix of capitals and digits>` (the names may be shortened; their start is kept).
 */
export function inventedDelete(event: CfnEvent): boolean {
  const id = event.PhysicalResourceId;
  if (event.RequestType !== 'Delete' || id === undefined || /^\d+$/.test(id)) return false;
  const stack = /:stack\/([^/]+)\//.exec(event.StackId ?? '')?.[1] ?? '';
  return stack !== '' && id.startsWith(`${stack.slice(0, 8)}`) && /^[A-Za-z0-9-]+-[A-Z0-9]{8,}$/.test(id);
}

/**
 * Whether the lease's last holder is a Create that can be the one CloudFormation cancelled: another request's, which
 * took the lease within CloudFormation's longest wait for a custom resource (one hour).
 */
function createOfThisOperation(last: LeaseMark | undefined, event: CfnEvent): boolean {
  if (last === undefined || last.requestType !== 'Create' || last.requestId === event.RequestId) return false;
  const since = Date.parse(last.requestSince || last.since);
  return !Number.isFinite(since) || since >= now() - CLOUDFORMATION_WAIT_MS;
}

/** Fails with `cancelledCreate` when CloudFormation cancelled this invocation (checked before a creating call). */
export async function refuseIfCancelled(rt: Runtime): Promise<void> {
  const by = await rt.lease?.cancelled();
  if (by !== undefined) throw cancelledCreate(by);
}

/**
 * The finished records (not attempts) that the Create holding the lease last made or changed, for a Delete whose
 * physical ID is not the service's: CloudFormation never learned that Create's outcome. Only records written since that
 * request first took the lease (by the clock of the container that wrote both) and not finished; none when the lease's
 * last holder was not a Create of another request.
 */
export async function madeByCancelledCreate<R extends MadeRecord>(rt: Runtime, claimKind: string, recs: readonly R[],
  attempts: ReadonlySet<string> = ATTEMPT_STATES): Promise<R[]> {
  const prev = rt.lease?.previousCreate;
  if (prev === undefined || prev.requestSince === '') return [];
  return claimedOnly(rt, claimKind, madeSince(recs, prev.requestSince, attempts));
}

/**
 * What the Update that held the lease last made under another physical ID than `physicalId` (the event's), for an
 * Update of another request: CloudFormation moved on from that Update before it answered (its replacement is known to
 * nobody, and no Delete will come for it). `made`: finished records created since that request first took the lease,
 * whose service record the journal gives to this resource; `attempts`: records without a physical ID created since.
 */
export async function madeByMovedOnUpdate<R extends MadeRecord>(rt: Runtime, claimKind: string, recs: readonly R[],
  physicalId: string | undefined): Promise<{ made: R[]; attempts: R[] }> {
  const prev = rt.lease?.previousUpdate;
  if (prev === undefined || prev.requestSince === '') return { made: [], attempts: [] };
  const latest = new Date(now() + 60_000).toISOString();
  const made = await claimedOnly(rt, claimKind, madeSince(recs, prev.requestSince, new Set()).filter((r) => r.physicalId !== physicalId));
  const attempts = recs.filter((r) => r.physicalId === undefined && !RELEASED_OR_DONE.has(r.state) && r.id >= prev.requestSince && r.id <= latest);
  return { made, attempts };
}

/**
 * The records whose service record the journal's claim gives to their own resource: a record that names another
 * resource's record (written by no handler) is never acted on.
 */
async function claimedOnly<R extends MadeRecord & { readonly key: string }>(rt: Runtime, claimKind: string, recs: readonly R[]): Promise<R[]> {
  if (recs.length === 0) return [];
  const owners = await rt.journal.owners(claimKind, recs.map((r) => r.physicalId!));
  return recs.filter((r) => {
    const mine = owners.get(r.physicalId!) === r.key;
    if (!mine) {
      log({ level: 'WARNING', msg: 'a journal record names a service record its resource does not claim: left as it is', record: r.id, physicalId: r.physicalId });
    }
    return mine;
  });
}

/** What a record tells of its making: its ID starts with the ISO time it was created (journal.ts). */
export interface MadeRecord {
  readonly key: string;
  readonly id: string;
  readonly state: string;
  readonly physicalId?: string;
}

/** The finished records (not attempts, not done) created at or after `since` (ISO). */
export function madeSince<R extends MadeRecord>(recs: readonly R[], since: string, attempts: ReadonlySet<string> = ATTEMPT_STATES): R[] {
  // A record ID from the future was written by no handler (its time is the writer's clock, now at the latest).
  const latest = new Date(now() + 60_000).toISOString();
  return recs.filter((r) => !RELEASED_OR_DONE.has(r.state) && !attempts.has(r.state) && r.physicalId !== undefined
    && r.id >= since && r.id <= latest);
}

/**
 * After a Create or Update answered: when CloudFormation moved on from it meanwhile (cancelled, or a second delivery
 * gave up), `undo` ends each record it created (adopted ones are the kind's to release) and the invocation fails,
 * saying so. Nothing CloudFormation knew before the request is touched.
 */
export async function undoIfCancelled<R extends MadeRecord>(rt: Runtime, key: string, physicalId: string, claimKind: string,
  recs: () => Promise<readonly R[]>, undo: (r: R) => Promise<void>): Promise<void> {
  const by = await rt.lease?.cancelled();
  if (by === undefined || rt.lease === undefined) return;
  const made = await claimedOnly(rt, claimKind, madeSince(await recs(), rt.lease.requestSince).filter((r) => r.physicalId === physicalId));
  for (const r of made) {
    log({ level: 'WARNING', msg: 'CloudFormation moved on from this request while it ran: ending what it made', resource: key, physicalId, by });
    await undo(r);
  }
  throw new HandlerError(`CloudFormation stopped waiting for this request (request ${by.split('#')[0]} came for the resource meanwhile)`
    + `${made.length > 0 ? `: what it made (${physicalId}) was ended again` : ''}`);
}
