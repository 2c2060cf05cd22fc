import { HistoryCreate, HistoryTransaction, validateHistoryRequest } from '../client';
import { HandlerError, isStatus, messageOf } from './errors';
import { resourceKey } from './journal';
import { log } from './log';
import { Props } from './props';
import { Runtime } from './runtime';
import { CfnEvent, IsCompleteResult, OnEventResult } from './types';

/** Interval between capacity checks while the history ceiling is reached. */
export const CAPACITY_POLL_MS = 20_000;

interface HistoryDesired {
  subscriptionId: string;
  request: HistoryCreate;
  waitForCompletion: boolean;
  timeoutSeconds: number;
}

function desiredOf(raw: Record<string, unknown> | undefined): HistoryDesired {
  const p = new Props(raw, 'HistoryRequest');
  const dates = p.list('Dates');
  const request: HistoryCreate = {
    ...(dates.length > 0 ? { dates } : {}),
    ...(p.optString('StartDate') !== undefined ? { start_date: p.optString('StartDate') } : {}),
    ...(p.optString('EndDate') !== undefined ? { end_date: p.optString('EndDate') } : {}),
    ...(p.optInt('StageId') !== undefined ? { stage_id: p.optInt('StageId') } : {}),
    ...(p.optInt('ProductId') !== undefined ? { product_id: p.optInt('ProductId') } : {}),
    ...(p.optString('StartTime') !== undefined ? { start_time: p.optString('StartTime') } : {}),
  };
  return {
    subscriptionId: p.string('SubscriptionId'),
    request,
    waitForCompletion: p.bool('WaitForCompletion'),
    timeoutSeconds: p.optInt('TimeoutSeconds') ?? 3600,
  };
}

/** The fields whose change needs a new history request. */
function requestKey(d: HistoryDesired): string {
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

async function create(event: CfnEvent, rt: Runtime, d: HistoryDesired): Promise<OnEventResult> {
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
  const key = resourceKey(event);
  const rk = requestKey(d);
  const recs = await rt.journal.records<{ request: string }>(key);
  const done = recs.find((r) => r.state === 'active' && r.doc.request === rk && r.physicalId !== undefined);
  if (done) {
    log({ msg: 'history request already made (journal)', id: done.physicalId });
    return { PhysicalResourceId: done.physicalId!, Data: { HistoryTransactionId: done.physicalId!, Status: 'pending', StartedAt: new Date().toISOString() } };
  }
  let rec = recs.find((r) => r.state === 'creating' && r.doc.request === rk) ?? await rt.journal.create(key, 'creating', { request: rk });

  const budgetMs = Math.min(d.timeoutSeconds * 1000, Math.max(0, rt.deadline - Date.now()));
  const started = Date.now();
  let waited = 0;
  let ceiling: number | undefined;
  for (;;) {
    try {
      const h = await rt.client.history.create(d.subscriptionId, d.request);
      rec = await rt.journal.save(rec, 'active', rec.doc, String(h.id));
      await rt.journal.claim('history', String(h.id), key);
      return result(h);
    } catch (e) {
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

function result(h: HistoryTransaction): OnEventResult {
  return {
    PhysicalResourceId: String(h.id),
    Data: { HistoryTransactionId: String(h.id), Status: String(h.status), StartedAt: new Date().toISOString() },
  };
}

async function update(event: CfnEvent, rt: Runtime, d: HistoryDesired): Promise<OnEventResult> {
  const old = desiredOf(event.OldResourceProperties);
  if (requestKey(old) !== requestKey(d) || !event.PhysicalResourceId) return create(event, rt, d);
  // Only WaitForCompletion / TimeoutSeconds changed: nothing to send; one read fills the Status attribute.
  const id = event.PhysicalResourceId;
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
  if (id === '' || id === event.RequestId || /[:/]/.test(id)) return { PhysicalResourceId: id };
  let h: HistoryTransaction;
  try {
    h = await rt.client.history.get(id);
  } catch (e) {
    if (isStatus(e, 404, 403, 400)) return { PhysicalResourceId: id };
    throw e;
  }
  if (h.status === 'pending' || h.status === 'processing') {
    try {
      await rt.client.history.cancel(id);
    } catch (e) {
      // Finished between the read and the cancel: nothing left to cancel.
      if (!isStatus(e, 400, 404, 409)) throw e;
    }
  }
  return { PhysicalResourceId: id };
}

/** Handles onEvent of `Custom::DpiHistoryRequest`. */
export async function historyRequest(event: CfnEvent, rt: Runtime): Promise<OnEventResult> {
  if (event.RequestType === 'Delete') return remove(event, rt);
  const d = desiredOf(event.ResourceProperties);
  return event.RequestType === 'Create' ? create(event, rt, d) : update(event, rt, d);
}

/** Handles isComplete of `Custom::DpiHistoryRequest`. */
export async function historyRequestComplete(event: CfnEvent, rt: Runtime): Promise<IsCompleteResult> {
  if (event.RequestType === 'Delete') return { IsComplete: true };
  const d = desiredOf(event.ResourceProperties);
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
