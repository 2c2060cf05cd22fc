import { Job, planOrderJobBatches } from '../../../client';
import { continuesAfter } from '../../../handler/continuation';
import { fitData } from '../../../handler/data';
import { HandlerError, isDefiniteFailure, isStatus, messageOf } from '../../../handler/errors';
import { resourceKey } from '../../../handler/journal';
import { log } from '../../../handler/log';
import { ordersToSubmit } from '../../../handler/plan-decisions';
import { readProps } from '../../../handler/props';
import { Runtime } from '../../../handler/runtime';
import { CfnEvent, OnEventResult } from '../../../handler/types';
import { PRODUCT_ORDER_JOBS_FIELDS, ProductOrderJobsKind, ProductOrderJobsState } from '../wire';

/** Pause between two batch requests ("wait briefly between requests"). */
export const BATCH_PAUSE_MS = 1000;

export interface OrderJobsDesired {
  subscriptionId: string;
  orderIds: string[];
  stageId: number;
}

export function orderJobsDesiredOf(raw: Record<string, unknown> | undefined): OrderJobsDesired {
  const w = readProps(raw, PRODUCT_ORDER_JOBS_FIELDS, ProductOrderJobsKind.shortName);
  return { subscriptionId: w.SubscriptionId, orderIds: w.OrderIds, stageId: w.StageId ?? 1000 };
}

function orderIdsOf(job: Job): string[] {
  try {
    const o = JSON.parse(job.extra_context ?? '') as { order_ids?: unknown };
    return Array.isArray(o.order_ids) ? o.order_ids.map(String) : [];
  } catch {
    return [];
  }
}

/** Whether a listed job is the subscription's primary job (`is_primary` as a boolean or its text). */
function isPrimary(j: Job): boolean {
  return j.is_primary === true || String(j.is_primary) === 'true';
}

/** The journal document of a ProductOrderJobs resource. */
interface OrderJobsDoc {
  subscriptionId: string;
  stageId: number;
  primaryJobId: string;
  /** Order IDs whose job the service confirmed. */
  submitted: string[];
  jobIds: string[];
  /** The batch sent last without a confirmed outcome. */
  inFlight?: string[];
  /** Secondary job IDs of the subscription before that batch was sent. */
  knownJobs?: string[];
}

/**
 * Submits the order IDs not yet submitted under the subscription's primary job: the journal keeps every order
 * ID whose job the service confirmed, so a repeated delivery, a retry and a rollback submit nothing twice.
 * Batches of 100, 15 minutes apart, starting now.
 */
async function submit(event: CfnEvent, rt: Runtime, d: OrderJobsDesired): Promise<OnEventResult> {
  let jobs: Job[];
  try {
    jobs = await rt.client.jobs.list({ subscriptionIds: [d.subscriptionId] });
  } catch (e) {
    if (isStatus(e, 400, 403, 404)) throw new HandlerError(`ProductOrderJobs: cannot list the jobs of subscription ${d.subscriptionId}: ${messageOf(e)}`);
    throw e;
  }
  const primary = jobs.find(isPrimary);
  if (!primary) {
    throw new HandlerError(`subscription ${d.subscriptionId} has no primary job: the product does not initialize jobs, so order IDs cannot be attached`);
  }
  const primaryId = String(primary.id);
  const key = resourceKey(event);
  let rec = (await rt.journal.records<OrderJobsDoc>(key))
    .find((r) => r.physicalId === primaryId && r.doc.stageId === d.stageId && r.state !== 'deleted');
  if (!rec) {
    rec = await rt.journal.create<OrderJobsDoc, ProductOrderJobsState>(key, 'active', {
      subscriptionId: d.subscriptionId, stageId: d.stageId, primaryJobId: primaryId, submitted: [], jobIds: [],
    }, primaryId);
  }
  const submitted = new Set(rec.doc.submitted);
  const isSecondary = (j: Job): boolean => String(j.id) !== primaryId && !isPrimary(j);
  const jobIds = [...rec.doc.jobIds];
  if (rec.doc.inFlight && rec.doc.inFlight.length > 0) {
    // A batch was sent without a confirmed outcome. Its job, if the service made it, is the one secondary job that
    // was not there before the POST and that no resource claims; a listing that shows `extra_context` is checked too.
    const seen = new Set(jobs.filter(isSecondary).flatMap(orderIdsOf));
    const found = rec.doc.knownJobs ? await newJobs(rt, jobs, rec.doc.knownJobs, isSecondary, key) : [];
    if (found.length > 1) throw ambiguousJobs(d.subscriptionId, found);
    if (found.length === 1 || rec.doc.inFlight.every((o) => seen.has(o))) {
      if (found[0]) {
        await rt.journal.claim('job', String(found[0].id), key);
        jobIds.push(String(found[0].id));
      }
      rec.doc.inFlight.forEach((o) => submitted.add(o));
      log({ msg: 'the batch sent without a confirmed outcome was made', jobId: found[0]?.id, count: rec.doc.inFlight.length });
    } else {
      log({ msg: 'the batch sent without a confirmed outcome was not made; sending it again', count: rec.doc.inFlight.length });
    }
    rec = await rt.journal.save(rec, 'active', { ...rec.doc, submitted: [...submitted], jobIds, inFlight: undefined, knownJobs: undefined });
  }
  const todo = ordersToSubmit(d.orderIds, submitted);
  let batchCount = 0;
  if (todo.length > 0) {
    let batches;
    try {
      batches = planOrderJobBatches({ orderIds: todo, start: new Date(), stageId: d.stageId });
    } catch (e) {
      throw new HandlerError(`ProductOrderJobs: ${messageOf(e)}`);
    }
    let listing = jobs;
    for (const b of batches) {
      if (b.index > 0) await rt.sleep(BATCH_PAUSE_MS);
      const ids = orderIdsOf({ extra_context: b.attributes.extra_context } as Job);
      const knownJobs = [...new Set([...listing.filter(isSecondary).map((j) => String(j.id)), ...jobIds])];
      rec = await rt.journal.save(rec, 'active', { ...rec.doc, submitted: [...submitted], jobIds, inFlight: ids, knownJobs });
      let job: Job | undefined;
      for (let attempt = 1; !job; attempt++) {
        try {
          job = await rt.client.jobs.createSecondary(primaryId, b.attributes);
        } catch (e) {
          const rejected = (): HandlerError => new HandlerError(`ProductOrderJobs: batch ${b.index + 1} of ${batches.length} was rejected (${messageOf(e)}); `
            + `${batchCount} batch(es) were submitted and stay (jobs cannot be deleted); fix the cause and deploy again: submitted orders are not sent twice`);
          if (isDefiniteFailure(e)) {
            rec = await rt.journal.save(rec, 'active', { ...rec.doc, inFlight: undefined, knownJobs: undefined });
            // Not sent (its wait for the rate limit would pass the deadline): the event continues in isComplete.
            if (continuesAfter(rt, e)) throw e;
            throw rejected();
          }
          // No clear outcome: not sent again blindly; the job it made, if any, is the one new unclaimed secondary job.
          log({ level: 'WARNING', msg: 'a batch had no clear outcome: looking for its job under the primary job', batch: b.index + 1, error: messageOf(e) });
          listing = await rt.client.jobs.list({ subscriptionIds: [d.subscriptionId] });
          const found = await newJobs(rt, listing, knownJobs, isSecondary, key);
          if (found.length > 1) throw ambiguousJobs(d.subscriptionId, found);
          if (found.length === 1) job = found[0];
          else if (attempt >= 2) throw rejected();
        }
      }
      await rt.journal.claim('job', String(job.id), key);
      jobIds.push(String(job.id));
      ids.forEach((o) => submitted.add(o));
      batchCount++;
    }
    rec = await rt.journal.save(rec, 'active', { ...rec.doc, submitted: [...submitted], jobIds, inFlight: undefined, knownJobs: undefined });
  } else {
    log({ msg: 'no new order IDs to submit', primaryJobId: primaryId });
  }
  return {
    PhysicalResourceId: primaryId,
    Data: fitData({ PrimaryJobId: primaryId, JobIds: jobIds.join(','), BatchCount: String(batchCount) }),
  };
}

/** Secondary jobs of `listing` that were not in `known` and that no other resource claims. */
async function newJobs(rt: Runtime, listing: Job[], known: string[], isSecondary: (j: Job) => boolean, key: string): Promise<Job[]> {
  const before = new Set(known);
  const fresh = listing.filter((j) => isSecondary(j) && !before.has(String(j.id)));
  const owners = await rt.journal.owners('job', fresh.map((j) => String(j.id)));
  return fresh.filter((j) => !owners.has(String(j.id)) || owners.get(String(j.id)) === key);
}

function ambiguousJobs(subscriptionId: string, found: Job[]): HandlerError {
  return new HandlerError(`ProductOrderJobs: a batch for subscription ${subscriptionId} had no clear outcome and ${found.length} new jobs could be it `
    + `(${found.map((j) => j.id).join(', ')}); another writer adds jobs to this subscription at the same time: deploy again when it is done`);
}

/** Handles `Custom::DpiProductOrderJobs`. Delete leaves the jobs (the service offers no delete). */
export async function productOrderJobs(event: CfnEvent, rt: Runtime): Promise<OnEventResult> {
  if (event.RequestType === 'Delete') return { PhysicalResourceId: event.PhysicalResourceId ?? '' };
  return submit(event, rt, orderJobsDesiredOf(event.ResourceProperties));
}
