/** The drift check of `Custom::DpiProductOrderJobs` (see docs/handler.md, "Drift"). */
import { Job } from '../../../client';
import { Check, CheckContext } from '../../../handler/drift-checkers';
import { isStatus } from '../../../handler/errors';
import { JournalRecord } from '../../../handler/journal';

interface OrderJobsDoc {
  subscriptionId?: string;
  submitted?: string[];
  jobIds?: string[];
}

function orderIdsOf(job: Job): string[] | undefined {
  if (typeof job.extra_context !== 'string') return undefined;
  try {
    const o = JSON.parse(job.extra_context) as { order_ids?: unknown };
    return Array.isArray(o.order_ids) ? o.order_ids.map(String) : [];
  } catch {
    return [];
  }
}

export async function orderJobsDrift(c: Check, { reads }: CheckContext, rec: JournalRecord<OrderJobsDoc> | undefined): Promise<void> {
  if (!rec?.doc.subscriptionId) return c.cannotCheck('no journal record of it (deployed before the journal, or another journal table)');
  let jobs: Job[];
  try {
    jobs = await reads.jobsOf(rec.doc.subscriptionId, [c.r.physicalId, ...(rec.doc.jobIds ?? [])]);
  } catch (e) {
    if (isStatus(e, 403)) return c.cannotCheck(`the service refused to list the jobs of subscription ${rec.doc.subscriptionId} (403)`);
    if (isStatus(e, 404)) return c.gone(`its subscription ${rec.doc.subscriptionId} was not found (404)`);
    throw e;
  }
  const byId = new Map(jobs.map((j) => [String(j.id), j]));
  if (!byId.has(c.r.physicalId)) return c.gone(`primary job ${c.r.physicalId} is not listed for subscription ${rec.doc.subscriptionId}`);
  const declaredJobs = rec.doc.jobIds ?? [];
  const listed = declaredJobs.filter((id) => byId.has(id));
  c.diff('jobIds', declaredJobs, listed);
  const submitted = [...(rec.doc.submitted ?? [])].sort();
  const perJob = listed.map((id) => orderIdsOf(byId.get(id)!));
  if (submitted.length > 0 && (perJob.length === 0 || perJob.some((x) => x === undefined))) {
    c.notChecked.push('orderIds');
    return;
  }
  c.diff('orderIds', submitted, [...new Set(perJob.flatMap((x) => x ?? []))].sort());
}
