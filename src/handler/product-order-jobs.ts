import { Job, planOrderJobBatches } from '../client';
import { fitData } from './data';
import { HandlerError, isStatus, messageOf } from './errors';
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

/**
 * Submits the order IDs not yet submitted under the subscription's primary job: those neither in
 * `alreadyDeclared` (the old properties on Update) nor in an existing secondary job of the primary
 * (so a repeated delivery submits nothing twice). Batches of 100, 15 minutes apart, starting now.
 */
async function submit(rt: Runtime, d: OrderJobsDesired, alreadyDeclared: string[]): Promise<OnEventResult> {
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
  const secondaries = jobs.filter((j) => j.id !== primary.id && (j.parent_job_id === undefined || j.parent_job_id === null
    || String(j.parent_job_id) === primary.id));
  const submitted = new Set<string>(secondaries.flatMap(orderIdsOf));
  const declared = new Set(alreadyDeclared);
  const todo = [...new Set(d.orderIds)].filter((o) => !submitted.has(o) && !declared.has(o));
  const jobIds = secondaries.map((j) => j.id);
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
      try {
        const job = await rt.client.jobs.createSecondary(primary.id, b.attributes);
        jobIds.push(job.id);
        batchCount++;
      } catch (e) {
        throw new HandlerError(`ProductOrderJobs: batch ${b.index + 1} of ${batches.length} was rejected (${messageOf(e)}); `
          + `${batchCount} batch(es) were submitted and stay (jobs cannot be deleted); fix the cause and deploy again: submitted orders are not sent twice`);
      }
    }
  } else {
    log({ msg: 'no new order IDs to submit', primaryJobId: primary.id });
  }
  return {
    PhysicalResourceId: primary.id,
    Data: fitData({ PrimaryJobId: primary.id, JobIds: jobIds.join(','), BatchCount: String(batchCount) }),
  };
}

/** Handles `Custom::DpiProductOrderJobs`. Delete leaves the jobs (the service offers no delete). */
export async function productOrderJobs(event: CfnEvent, rt: Runtime): Promise<OnEventResult> {
  if (event.RequestType === 'Delete') return { PhysicalResourceId: event.PhysicalResourceId ?? '' };
  const d = desiredOf(event.ResourceProperties);
  if (event.RequestType === 'Create') return submit(rt, d, []);
  const old = desiredOf(event.OldResourceProperties);
  // Another subscription = another primary job (a new physical ID); same subscription: only new order IDs.
  return submit(rt, d, old.subscriptionId === d.subscriptionId && old.stageId === d.stageId ? old.orderIds : []);
}
