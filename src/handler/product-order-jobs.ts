import { Job, planOrderJobBatches } from '../client';
import { fitData } from './data';
import { HandlerError, isDefiniteFailure, isStatus, messageOf } from './errors';
import { resourceKey } from './journal';
import { log } from './log';
import { Props } from './props';
import { Runtime } from './runtime';
import { CfnEvent, OnEventResult } from './types';

/** Pause between two batch requests ("wait briefly between requests"). */
export const BATCH_PAUSE_MS = 1000;

interface OrderJobsDesired {
  subscriptionId: string;
  orderIds: string[];
  stageId: number;
}

function desiredOf(raw: Record<string, unknown> | undefined): OrderJobsDesired {
  const p = new Props(raw, 'ProductOrderJobs');
  return { subscriptionId: p.string('SubscriptionId'), orderIds: p.list('OrderIds'), stageId: p.optInt('StageId') ?? 1000 };
}

function orderIdsOf(job: Job): string[] {
  try {
    const o = JSON.parse(job.extra_context ?? '') as { order_ids?: unknown };
    return Array.isArray(o.order_ids) ? o.order_ids.map(String) : [];
  } catch {
    return [];
  }
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
  const primary = jobs.find((j) => j.is_primary === true || String(j.is_primary) === 'true');
  if (!primary) {
    throw new HandlerError(`subscription ${d.subscriptionId} has no primary job: the product does not initialize jobs, so order IDs cannot be attached`);
  }
  const primaryId = String(primary.id);
  const key = resourceKey(event);
  let rec = (await rt.journal.records<OrderJobsDoc>(key))
    .find((r) => r.physicalId === primaryId && r.doc.stageId === d.stageId && r.state !== 'deleted');
  if (!rec) {
    rec = await rt.journal.create<OrderJobsDoc>(key, 'active', {
      subscriptionId: d.subscriptionId, stageId: d.stageId, primaryJobId: primaryId, submitted: [], jobIds: [],
    }, primaryId);
  }
  const submitted = new Set(rec.doc.submitted);
  if (rec.doc.inFlight && rec.doc.inFlight.length > 0) {
    // A batch was sent without a confirmed outcome. A job listing that shows `extra_context` tells whether it
    // arrived; one that does not (the spec shows only id and is_primary) cannot: it is sent again (an order
    // processed twice is better than one never processed).
    const seen = new Set(jobs.filter((j) => String(j.id) !== primaryId).flatMap(orderIdsOf));
    if (rec.doc.inFlight.every((o) => seen.has(o))) rec.doc.inFlight.forEach((o) => submitted.add(o));
    else log({ level: 'WARNING', msg: 'a batch of order IDs was sent without a confirmed outcome; sending it again', count: rec.doc.inFlight.length });
  }
  const todo = [...new Set(d.orderIds)].filter((o) => !submitted.has(o));
  const jobIds = [...rec.doc.jobIds];
  let batchCount = 0;
  if (todo.length > 0) {
    let batches;
    try {
      batches = planOrderJobBatches({ orderIds: todo, start: new Date(), stageId: d.stageId });
    } catch (e) {
      throw new HandlerError(`ProductOrderJobs: ${messageOf(e)}`);
    }
    for (const b of batches) {
      if (b.index > 0) await rt.sleep(BATCH_PAUSE_MS);
      const ids = orderIdsOf({ extra_context: b.attributes.extra_context } as Job);
      rec = await rt.journal.save(rec, 'active', { ...rec.doc, submitted: [...submitted], jobIds, inFlight: ids });
      try {
        const job = await rt.client.jobs.createSecondary(primaryId, b.attributes);
        jobIds.push(String(job.id));
        ids.forEach((o) => submitted.add(o));
        batchCount++;
      } catch (e) {
        if (isDefiniteFailure(e)) rec = await rt.journal.save(rec, 'active', { ...rec.doc, inFlight: undefined });
        throw new HandlerError(`ProductOrderJobs: batch ${b.index + 1} of ${batches.length} was rejected (${messageOf(e)}); `
          + `${batchCount} batch(es) were submitted and stay (jobs cannot be deleted); fix the cause and deploy again: submitted orders are not sent twice`);
      }
    }
    rec = await rt.journal.save(rec, 'active', { ...rec.doc, submitted: [...submitted], jobIds, inFlight: undefined });
  } else {
    log({ msg: 'no new order IDs to submit', primaryJobId: primaryId });
  }
  return {
    PhysicalResourceId: primaryId,
    Data: fitData({ PrimaryJobId: primaryId, JobIds: jobIds.join(','), BatchCount: String(batchCount) }),
  };
}

/** Handles `Custom::DpiProductOrderJobs`. Delete leaves the jobs (the service offers no delete). */
export async function productOrderJobs(event: CfnEvent, rt: Runtime): Promise<OnEventResult> {
  if (event.RequestType === 'Delete') return { PhysicalResourceId: event.PhysicalResourceId ?? '' };
  return submit(event, rt, desiredOf(event.ResourceProperties));
}
