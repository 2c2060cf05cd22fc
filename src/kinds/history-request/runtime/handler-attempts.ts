/**
 * The journal side of `Custom::DpiHistoryRequest`: its records, the request an attempt without a clear outcome made,
 * an earlier request's attempt taken over by this one, and what an Update that CloudFormation moved on from made.
 * See docs/handler.md ("Custom::DpiHistoryRequest", "Cancellations and duplicate deliveries").
 */
import type { HistoryTransaction } from '../../../client';
import { refused, removalPolicyOf, RemovalPolicyValue } from '../../../handler/common';
import { FRESH_ATTEMPT_MS } from '../../../handler/creates';
import { HandlerError, isStatus, messageOf } from '../../../handler/errors';
import { JournalRecord } from '../../../handler/journal';
import { madeByMovedOnUpdate } from '../../../handler/lease';
import { log } from '../../../handler/log';
import { historyCancellable } from '../../../handler/plan-decisions';
import { Runtime } from '../../../handler/runtime';
import type { HistoryRequestState } from '../wire';

/** The journal document of a HistoryRequest. */
export interface HistoryDoc {
  request: string;
  subscriptionId?: string;
  /** Adopted (`existingHistoryTransactionId`): it existed before the resource; a Delete releases it unless `destroy`. */
  adopted?: boolean;
  removalPolicy?: RemovalPolicyValue;
  /** IDs the subscription's status list showed before a POST whose outcome is not confirmed yet. */
  known?: string[];
  /** When `known` was listed (ISO): a request that appeared long after it may as well be another's. */
  knownAt?: string;
  /** When the request was made (or found) by the Create (ISO): a later run of the same request waits from then. */
  madeAt?: string;
  /** The record that took this attempt over (a later request's): this one is closed. */
  takenOverBy?: string;
}

/** Statuses of a history request that is over. */
export const FINAL: ReadonlySet<string> = new Set(['cancelled', 'canceled', 'failed']);

/**
 * The request a POST without a clear outcome made: the one record of the subscription that was not there before the
 * POST, is not cancelled or failed, and that no resource claims. Undefined when there is none; an error when several
 * could be it.
 */
export async function madeByAttempt(rt: Runtime, subscriptionId: string, known: string[], key: string,
  knownAt: string | undefined): Promise<HistoryTransaction | undefined> {
  const before = new Set(known);
  const fresh = (await rt.client.history.statusBySubscription(subscriptionId))
    .filter((h) => !before.has(String(h.id)) && !FINAL.has(String(h.status)));
  const owners = await rt.journal.owners('history', fresh.map((h) => String(h.id)));
  const mine = fresh.filter((h) => !owners.has(String(h.id)) || owners.get(String(h.id)) === key);
  const age = knownAt !== undefined ? Date.now() - Date.parse(knownAt) : Infinity;
  const claimedHere = mine.find((h) => owners.get(String(h.id)) === key);
  if (claimedHere) return claimedHere;
  if (mine.length > 1 || (mine.length === 1 && !(age <= FRESH_ATTEMPT_MS))) {
    throw new HandlerError(`an earlier history request of ${key} for subscription ${subscriptionId} had no clear outcome and ${mine.length} `
      + `request${mine.length > 1 ? 's' : ''} appeared since (${mine.map((h) => h.id).join(', ')})${mine.length === 1 ? ' over a long window' : ''}: `
      + 'which one it made cannot be told, so none is taken or cancelled; cancel the one this resource made if you know it (the others are not '
      + `this stack's), then run 'dpi journal resolve ${key} --keep-candidates' and deploy again`);
  }
  return mine[0];
}

/**
 * The `creating` record this request works on. An earlier request's attempt (one CloudFormation cancelled, or whose
 * POST had no clear outcome) is taken over by a record of this request, which keeps what the attempt listed before
 * its POST, and is closed: the lease's proofs of what a request made compare a record's ID with when the request
 * first took the lease, so a cancellation Delete of this request finds what it makes.
 */
export async function ownAttempt(rt: Runtime, rec: JournalRecord<HistoryDoc>): Promise<JournalRecord<HistoryDoc>> {
  const since = rt.lease?.requestSince;
  if (since === undefined || since === '' || rec.id >= since) return rec;
  const { known, knownAt, request, subscriptionId } = rec.doc;
  const taken = await rt.journal.create<HistoryDoc, HistoryRequestState>(rec.key, 'creating', {
    request, subscriptionId, ...(known !== undefined ? { known, knownAt } : {}),
  });
  await rt.journal.save(rec, 'abandoned', { ...rec.doc, known: undefined, knownAt: undefined, takenOverBy: taken.id });
  log({ msg: 'an earlier request\'s history attempt is taken over by this request', record: rec.id, by: taken.id, known: known !== undefined });
  return taken;
}

/** Cancels history request `id` if it is still open (gone or over: nothing to do; a 403 fails, naming the account). */
export async function cancelRequest(rt: Runtime, id: string): Promise<void> {
  let h: HistoryTransaction;
  try {
    h = await rt.client.history.get(id);
  } catch (e) {
    // A 403 is never "gone": the connection's account cannot read it (another account's, or a rotated secret).
    if (isStatus(e, 403)) throw await refused(rt, `history transaction ${id}`, e);
    if (isStatus(e, 404, 400)) return;
    throw e;
  }
  if (!historyCancellable(h.status)) return;
  try {
    await rt.client.history.cancel(id);
  } catch (e) {
    // Finished between the read and the cancel: nothing left to cancel.
    if (!isStatus(e, 400, 404, 409)) throw e;
  }
}

/**
 * An Update that follows another Update CloudFormation moved on from (an UPDATE_ROLLBACK while a replacing Update still
 * continued in isComplete): the request that Update made under another physical ID than `physicalId` is known to
 * nobody and no Delete will come for it, so it is cancelled (an adopted or retained one released) before this Update
 * runs. Only requests the journal's claim gives to this resource are touched. An attempt of that Update is closed
 * when it made nothing; one whose POST made a request the claim proves is this resource's has it cancelled; otherwise
 * (a new request no resource claims: it cannot be told from another's) it is left for the next Create of that request
 * or `dpi journal resolve`, and the log says so.
 */
export async function endMovedOnUpdate(rt: Runtime, key: string, physicalId: string | undefined,
  props: Record<string, unknown> | undefined): Promise<void> {
  if (rt.lease?.previousUpdate === undefined) return;
  const recs = await rt.journal.records<HistoryDoc>(key);
  const { made, attempts } = await madeByMovedOnUpdate(rt, 'history', recs, physicalId);
  for (const r of made) {
    if (removalPolicyOf(props, r.doc) === 'retain') {
      log({ msg: 'released the history request of an Update that CloudFormation moved on from: it is kept in the service', id: r.physicalId, record: r.id });
      await rt.journal.save(r, 'released', r.doc);
      continue;
    }
    log({ msg: 'cancelling the history request of an Update that CloudFormation moved on from', id: r.physicalId, record: r.id });
    await cancelRequest(rt, r.physicalId!);
    await rt.journal.save(r, 'deleted', r.doc);
  }
  for (const r of attempts) {
    if (r.state !== 'creating') continue;
    if (r.doc.known === undefined || r.doc.subscriptionId === undefined) {
      // No POST was sent for it (the list is written before each POST).
      await rt.journal.save(r, 'abandoned', r.doc);
      continue;
    }
    let found: HistoryTransaction | undefined;
    try {
      found = await madeByAttempt(rt, r.doc.subscriptionId, r.doc.known, key, r.doc.knownAt);
    } catch (e) {
      log({ level: 'WARNING', msg: 'an attempt of an Update that CloudFormation moved on from cannot be resolved: it is left as it is', record: r.id, error: messageOf(e) });
      continue;
    }
    if (found === undefined) {
      await rt.journal.save(r, 'abandoned', { ...r.doc, known: undefined, knownAt: undefined });
      continue;
    }
    const id = String(found.id);
    const owner = (await rt.journal.owners('history', [id])).get(id);
    const named = recs.some((x) => x.id !== r.id && x.physicalId === id && !made.includes(x));
    if (owner !== key || id === physicalId || named) {
      log({
        level: 'WARNING',
        msg: 'an attempt of an Update that CloudFormation moved on from may have made a request no resource claims: it is not cancelled on a '
          + 'guess; the next deploy of that request takes it, or cancel it and run dpi journal resolve',
        record: r.id,
        id,
      });
      continue;
    }
    log({ msg: 'cancelling the history request an attempt of an Update that CloudFormation moved on from made', id, record: r.id });
    await cancelRequest(rt, id);
    await rt.journal.save(r, 'deleted', { ...r.doc, known: undefined, knownAt: undefined }, id);
  }
}
