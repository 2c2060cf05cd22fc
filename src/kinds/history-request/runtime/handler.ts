import { cancelRequest, endMovedOnUpdate, FINAL, HistoryDoc, madeByAttempt, ownAttempt } from './handler-attempts';
import { HistoryCreate, HistoryTransaction, validateHistoryRequest } from '../../../client';
import { claimForAdoption, deleteProven, removalPolicyOf } from '../../../handler/common';
import { HandlerError, isDefiniteFailure, isStatus, messageOf } from '../../../handler/errors';
import { JournalRecord, resourceKey } from '../../../handler/journal';
import { cancelledCreate, madeByCancelledCreate } from '../../../handler/lease';
import { log } from '../../../handler/log';
import { historyRequestsAnew } from '../../../handler/plan-decisions';
import { readProps } from '../../../handler/props';
import { Runtime } from '../../../handler/runtime';
import { CfnEvent, IsCompleteResult, OnEventResult } from '../../../handler/types';
import { HISTORY_REQUEST_FIELDS, HistoryRequestKind, HistoryRequestState } from '../wire';

/** Interval between capacity checks while the history ceiling is reached. */
export const CAPACITY_POLL_MS = 20_000;

export interface HistoryDesired {
  subscriptionId: string;
  request: HistoryCreate;
  waitForCompletion: boolean;
  timeoutSeconds: number;
  /** An existing history transaction to adopt (`existingHistoryTransactionId`). */
  adoptId?: string;
}

export function historyDesiredOf(raw: Record<string, unknown> | undefined): HistoryDesired {
  const w = readProps(raw, HISTORY_REQUEST_FIELDS, HistoryRequestKind.shortName);
  const request: HistoryCreate = {
    ...(w.Dates.length > 0 ? { dates: w.Dates } : {}),
    ...(w.StartDate !== undefined ? { start_date: w.StartDate } : {}),
    ...(w.EndDate !== undefined ? { end_date: w.EndDate } : {}),
    ...(w.StageId !== undefined ? { stage_id: w.StageId } : {}),
    ...(w.ProductId !== undefined ? { product_id: w.ProductId } : {}),
    ...(w.StartTime !== undefined ? { start_time: w.StartTime } : {}),
  };
  return {
    subscriptionId: w.SubscriptionId,
    request,
    waitForCompletion: w.WaitForCompletion,
    timeoutSeconds: w.TimeoutSeconds ?? 3600,
    adoptId: w.AdoptId,
  };
}

/** The fields whose change needs a new history request. */
export function requestKey(d: HistoryDesired): string {
  const r = d.request;
  return JSON.stringify([d.subscriptionId, r.start_date ?? null, r.end_date ?? null, r.dates ?? null, r.stage_id ?? null,
    r.product_id ?? null, r.start_time ?? null]);
}

/** True for the service's "ceiling reached" answer (409, or a message naming the ceiling). */
function isCeiling(e: unknown): boolean {
  return isStatus(e, 409) || (isStatus(e, 400, 429) && /ceiling|max(imum)? (number of )?(active )?(history )?requests/i.test(messageOf(e)));
}

/**
 * Creates the history request. When the active-request ceiling is reached, waits inside onEvent
 * (polling every 20 s) for up to min(TimeoutSeconds, the Lambda's remaining time), because the
 * provider framework fixes the physical ID when onEvent returns.
 */
/**
 * The product of a subscription: the request's own `product_id`, else what the journal of the resource that
 * made the subscription records, else a product the read shows (not guaranteed by the spec).
 */
async function productOf(rt: Runtime, d: HistoryDesired, shown: unknown): Promise<number | undefined> {
  if (d.request.product_id !== undefined) return Number(d.request.product_id);
  const owner = (await rt.journal.owners('sub', [d.subscriptionId])).get(d.subscriptionId);
  if (owner) {
    const rec = (await rt.journal.records<{ product?: number }>(owner)).find((r) => r.physicalId === d.subscriptionId);
    if (rec?.doc.product !== undefined) return Number(rec.doc.product);
  }
  return shown === undefined || shown === null ? undefined : Number(shown);
}

/**
 * When a recorded request was made: its `madeAt`, unless that is not a time, is earlier than its record (written before
 * the POST) or later than now (written by no handler); then its record's time (the record ID starts with it).
 */
function madeTime(rec: { readonly id: string; readonly doc: { readonly madeAt?: string } }): number {
  const recorded = Date.parse(rec.id.split('#')[0]);
  const madeAt = Date.parse(rec.doc.madeAt ?? '');
  const ok = Number.isFinite(madeAt) && madeAt <= Date.now() + 60_000 && (!Number.isFinite(recorded) || madeAt >= recorded);
  return ok ? madeAt : Number.isFinite(recorded) ? Math.min(recorded, Date.now()) : Date.now();
}

async function create(event: CfnEvent, rt: Runtime, d: HistoryDesired): Promise<OnEventResult> {
  if (d.adoptId !== undefined) return adoptExisting(event, rt, d, d.adoptId);
  const key = resourceKey(event);
  const rk = requestKey(d);
  const recs = await rt.journal.records<HistoryDoc>(key);
  const done = recs.find((r) => r.state === 'active' && r.doc.request === rk && r.physicalId !== undefined);
  if (done) {
    // Made already (a duplicate delivery, or every poll of a Create that continued in isComplete after its request
    // was made): no service call, so a poll takes no turn in the request budget. Made by this request: it is waited
    // for (WaitForCompletion, TimeoutSeconds) from when it was made, not from this run.
    // The claim too: a container stopped between the record and its claim left it unclaimed (claimed now); one that
    // names another resource's request is never taken.
    const owner = await rt.journal.claim('history', done.physicalId!, key);
    if (owner !== key) {
      throw new HandlerError(`HistoryRequest: the journal records history request ${done.physicalId} for ${key}, but ${owner} claims it: `
        + 'it is not taken; nothing was changed');
    }
    const madeAt = madeTime(done);
    const mine = rt.lease !== undefined && madeAt >= Date.parse(rt.lease.requestSince);
    log({ msg: 'history request already made (journal)', id: done.physicalId });
    return {
      PhysicalResourceId: done.physicalId!,
      Data: { HistoryTransactionId: done.physicalId!, Status: 'pending', StartedAt: mine ? new Date(madeAt).toISOString() : new Date().toISOString() },
    };
  }
  const sub = await rt.client.subscriptions.get(d.subscriptionId).catch((e) => {
    if (isStatus(e, 404, 403)) throw new HandlerError(`HistoryRequest: subscription ${d.subscriptionId} not found for this account (${messageOf(e)})`);
    throw e;
  });
  const productId = await productOf(rt, d, sub.product);
  if (productId !== undefined) {
    const card = await rt.client.catalog.getCard(productId);
    const problems = validateHistoryRequest(d.request, card, new Date());
    if (problems.length > 0) throw new HandlerError(`HistoryRequest for subscription ${d.subscriptionId}: ${problems.join('; ')}`);
  } else {
    log({ level: 'WARNING', msg: 'the subscription\'s product is not known (set productId): the request is not checked against the product\'s history limits', subscriptionId: d.subscriptionId });
  }
  // The newest attempt of the same request; an earlier request's is taken over by a record of this one (ownAttempt).
  const attempt = recs.filter((r) => r.state === 'creating' && r.doc.request === rk && r.doc.subscriptionId === d.subscriptionId)
    .sort((a, b) => (a.id < b.id ? 1 : -1))[0];
  let rec = attempt !== undefined ? await ownAttempt(rt, attempt)
    : await rt.journal.create<HistoryDoc, HistoryRequestState>(key, 'creating', { request: rk, subscriptionId: d.subscriptionId });
  const resumed = rec.doc.known !== undefined;
  if (rec.doc.known) {
    // An earlier attempt's POST had no clear outcome: the request it may have made is looked for before sending one.
    const found = await madeByAttempt(rt, d.subscriptionId, rec.doc.known, key, rec.doc.knownAt);
    if (found) return adopt(rt, rec, found, key);
  }

  const budgetMs = Math.min(d.timeoutSeconds * 1000, Math.max(0, rt.deadline - Date.now()));
  const started = Date.now();
  let waited = 0;
  let ceiling: number | undefined;
  let unclear = 0;
  for (;;) {
    const cancelled = await rt.lease?.cancelled();
    if (cancelled !== undefined) {
      // No POST of this record can have made anything unless one had no clear outcome: then the attempt stays for the
      // next event (or 'dpi journal resolve') to look for it.
      if (!resumed && unclear === 0) await rt.journal.save(rec, 'abandoned', { ...rec.doc, known: undefined, knownAt: undefined });
      throw cancelledCreate(cancelled);
    }
    // What exists before the POST, so that a POST without a clear outcome can be told apart from what was there.
    const known = (await rt.client.history.statusBySubscription(d.subscriptionId)).map((h) => String(h.id));
    rec = await rt.journal.save(rec, 'creating', { ...rec.doc, known, knownAt: new Date().toISOString() });
    try {
      const h = await rt.client.history.create(d.subscriptionId, d.request);
      rec = await rt.journal.save(rec, 'active', { request: rk, subscriptionId: d.subscriptionId, madeAt: new Date().toISOString() }, String(h.id));
      await rt.journal.claim('history', String(h.id), key);
      return result(h);
    } catch (e) {
      if (!isDefiniteFailure(e)) {
        // Not repeated blindly: a request the POST made shows up as a new, unclaimed record of the subscription.
        log({ level: 'WARNING', msg: 'the history request had no clear outcome: looking for it among the subscription\'s requests', error: messageOf(e) });
        const found = await madeByAttempt(rt, d.subscriptionId, known, key, rec.doc.knownAt);
        if (found) return adopt(rt, rec, found, key);
        if (++unclear >= 2) {
          throw new HandlerError(`the history request for subscription ${d.subscriptionId} had no clear outcome twice (${messageOf(e)}) and made no `
            + 'record the service lists; deploy again (the journal keeps the attempt, so nothing is requested twice)');
        }
        continue;
      }
      if (!isCeiling(e)) {
        if (isStatus(e, 400, 403, 404)) throw new HandlerError(`the service rejected the history request for subscription ${d.subscriptionId}: ${messageOf(e)}`);
        throw e;
      }
      if (ceiling === undefined) ceiling = await rt.client.history.maxRequest().catch(() => undefined);
      const elapsed = Math.max(waited, Date.now() - started);
      if (elapsed + CAPACITY_POLL_MS > budgetMs) {
        throw new HandlerError(`history request ceiling (${ceiling ?? '?'}) still reached after ${Math.round(elapsed / 1000)} s; `
          + 'raise timeout or cancel other requests');
      }
      log({ msg: 'history ceiling reached, waiting', ceiling, waitedSeconds: Math.round(elapsed / 1000) });
      await rt.sleep(CAPACITY_POLL_MS);
      waited += CAPACITY_POLL_MS;
    }
  }
}

/**
 * Adopts an existing history transaction: no request is made. `GET H/{id}` must answer with a status other than
 * `cancelled` / `failed`; where the read shows the subscription or dates (vendor reads), they must be the declared
 * ones (a history request cannot be changed, only cancelled: there is nothing to reconcile); it is claimed for the
 * resource (refused, naming the owner, when another resource manages it) and recorded as a Create records it.
 */
async function adoptExisting(event: CfnEvent, rt: Runtime, d: HistoryDesired, id: string): Promise<OnEventResult> {
  if (id === '' || /[:/\s]/.test(id)) throw new HandlerError(`HistoryRequest: existingHistoryTransactionId ${JSON.stringify(id)} is not a history transaction ID; nothing was changed`);
  const key = resourceKey(event);
  const rk = requestKey(d);
  let h: HistoryTransaction;
  try {
    h = await rt.client.history.get(id);
  } catch (e) {
    if (isStatus(e, 404, 403, 400)) {
      throw new HandlerError(`HistoryRequest: existingHistoryTransactionId ${id}: no such history transaction for this account (${messageOf(e)}); `
        + 'check the ID; nothing was changed');
    }
    throw e;
  }
  if (FINAL.has(String(h.status))) {
    throw new HandlerError(`HistoryRequest: existingHistoryTransactionId ${id} is ${h.status} and cannot be adopted; remove `
      + 'existingHistoryTransactionId to request the history anew; nothing was changed');
  }
  const r = d.request;
  const wrong: string[] = [];
  const differs = (label: string, shown: unknown, want: unknown): void => {
    if (shown !== undefined && shown !== null && want !== undefined && String(shown) !== String(want)) wrong.push(`${label} ${String(shown)} (declared ${String(want)})`);
  };
  differs('subscription', h.subscription_id, d.subscriptionId);
  differs('startDate', h.start_date, r.start_date);
  differs('endDate', h.end_date, r.end_date);
  if (Array.isArray(h.dates) && h.dates.length > 0 && r.dates !== undefined && [...h.dates].sort().join(',') !== [...r.dates].sort().join(',')) {
    wrong.push(`dates ${h.dates.join(',')} (declared ${r.dates.join(',')})`);
  }
  differs('stageId', h.stage_id, r.stage_id);
  if (wrong.length > 0) {
    throw new HandlerError(`HistoryRequest: existingHistoryTransactionId ${id} has ${wrong.join(', ')}; a history request cannot be changed: `
      + 'declare what the service has, or drop existingHistoryTransactionId to request anew; nothing was changed');
  }
  const recs = await rt.journal.records<HistoryDoc>(key);
  const done = recs.find((x) => x.state === 'active' && x.physicalId === id);
  if (!done) {
    await claimForAdoption(rt, 'history', id, key, 'history transaction');
    await rt.journal.create<HistoryDoc, HistoryRequestState>(key, 'active', { request: rk, subscriptionId: d.subscriptionId, adopted: true }, id);
    log({ msg: 'adopted an existing history request', id, status: h.status });
  }
  // isComplete waits only for a request made (or adopted) by this event: StartedAt as a Create's.
  return result(h);
}

async function adopt(rt: Runtime, rec: JournalRecord<HistoryDoc>, h: HistoryTransaction, key: string): Promise<OnEventResult> {
  log({ msg: 'the history request of an attempt without a clear outcome was found', id: h.id });
  const owner = await rt.journal.claim('history', String(h.id), key);
  if (owner !== key) throw new HandlerError(`history request ${h.id} is claimed by ${owner} in the lifecycle journal; deploy again`);
  await rt.journal.save(rec, 'active', { request: rec.doc.request, subscriptionId: rec.doc.subscriptionId, madeAt: new Date().toISOString() }, String(h.id));
  return result(h);
}

function result(h: HistoryTransaction): OnEventResult {
  return {
    PhysicalResourceId: String(h.id),
    Data: { HistoryTransactionId: String(h.id), Status: String(h.status), StartedAt: new Date().toISOString() },
  };
}

async function update(event: CfnEvent, rt: Runtime, d: HistoryDesired): Promise<OnEventResult> {
  const old = historyDesiredOf(event.OldResourceProperties);
  const id = event.PhysicalResourceId;
  // After an Update CloudFormation moved on from (UPDATE_ROLLBACK): what it made is known to nobody; it is ended first.
  await endMovedOnUpdate(rt, resourceKey(event), id, event.ResourceProperties);
  // The recorded request, not the previous properties: in a rollback they are the failed declaration's.
  const rec = id ? (await rt.journal.records<HistoryDoc>(resourceKey(event))).find((r) => r.physicalId === id && r.state === 'active') : undefined;
  if (!id || historyRequestsAnew(rec?.doc.request ?? requestKey(old), requestKey(d), id, d.adoptId)) return create(event, rt, d);
  // Only WaitForCompletion / TimeoutSeconds changed: nothing to send; one read fills the Status attribute.
  let status = 'unknown';
  try {
    status = String((await rt.client.history.get(id)).status);
  } catch (e) {
    if (!isStatus(e, 404, 403)) throw e;
  }
  return { PhysicalResourceId: id, Data: { HistoryTransactionId: id, Status: status } };
}

async function remove(event: CfnEvent, rt: Runtime): Promise<OnEventResult> {
  const id = event.PhysicalResourceId ?? '';
  const recs = await rt.journal.records<HistoryDoc>(resourceKey(event));
  if (!recs.some((r) => r.physicalId === id)) {
    // An ID the journal never recorded (CloudFormation's invented one for a Create it stopped waiting for, when another
    // resource failed): the request that Create made, if it made one, is deleted as its own physical ID would be;
    // records of earlier operations are not touched.
    for (const r of await madeByCancelledCreate(rt, 'history', recs, new Set(['creating']))) {
      if (r.physicalId === undefined || r.physicalId === id || r.doc.adopted === true || r.doc.removalPolicy === 'retain') continue;
      await remove({ ...event, PhysicalResourceId: r.physicalId }, rt);
    }
  }
  if (id === '' || id === event.RequestId || /[:/]/.test(id)) return { PhysicalResourceId: id };
  const rec = recs.find((r) => r.physicalId === id && r.state === 'active');
  const adopted = rec?.doc.adopted === true || typeof event.ResourceProperties?.AdoptId === 'string';
  if (removalPolicyOf(event.ResourceProperties, { adopted, removalPolicy: rec?.doc.removalPolicy }) === 'retain') {
    // An adopted request existed before the stack (or the removal policy is retain): kept in the service, released.
    log({ msg: 'released the history request: it is kept in the service and no longer managed by this resource', id });
    if (rec) await rt.journal.save(rec, 'released', rec.doc);
    return { PhysicalResourceId: id };
  }
  if (!rec && !await deleteProven(rt, 'history', id, resourceKey(event))) return { PhysicalResourceId: id };
  await cancelRequest(rt, id);
  await forget(rt, event, id);
  return { PhysicalResourceId: id };
}

/** Marks the journal record of a deleted request, so that a later Create with the same dates requests anew. */
async function forget(rt: Runtime, event: CfnEvent, id: string): Promise<void> {
  const rec = (await rt.journal.records<HistoryDoc>(resourceKey(event))).find((r) => r.physicalId === id && r.state === 'active');
  if (rec) await rt.journal.save(rec, 'deleted', rec.doc);
}

/** Handles onEvent of `Custom::DpiHistoryRequest`. */
export async function historyRequest(event: CfnEvent, rt: Runtime): Promise<OnEventResult> {
  if (event.RequestType === 'Delete') return remove(event, rt);
  const d = historyDesiredOf(event.ResourceProperties);
  return event.RequestType === 'Create' ? create(event, rt, d) : update(event, rt, d);
}

/** Handles isComplete of `Custom::DpiHistoryRequest`. */
export async function historyRequestComplete(event: CfnEvent, rt: Runtime): Promise<IsCompleteResult> {
  if (event.RequestType === 'Delete') return { IsComplete: true };
  const d = historyDesiredOf(event.ResourceProperties);
  const id = event.PhysicalResourceId ?? '';
  const startedAt = typeof event.Data?.StartedAt === 'string' ? Date.parse(event.Data.StartedAt) : NaN;
  // Only a request made by this event is waited for (an Update that changed nothing does not wait).
  if (!d.waitForCompletion || Number.isNaN(startedAt)) return { IsComplete: true };
  const h = await rt.client.history.get(id);
  const data = { HistoryTransactionId: id, Status: String(h.status) };
  switch (h.status) {
    case 'completed':
      return { IsComplete: true, Data: data };
    case 'failed':
      throw new HandlerError(`history request ${id} failed: ${h.error_message ?? 'no reason given'}; check the subscription and request again (change the dates or the resource)`);
    case 'cancelled':
      throw new HandlerError(`history request ${id} was cancelled before it completed; deploy again to request it anew`);
    default:
      if (Date.now() - startedAt > d.timeoutSeconds * 1000) {
        throw new HandlerError(`history request ${id} is still ${h.status} after ${d.timeoutSeconds} s; raise timeout or set waitForCompletion false`);
      }
      return { IsComplete: false };
  }
}
