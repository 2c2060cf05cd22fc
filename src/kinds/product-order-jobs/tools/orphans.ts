/** `dpi orphans` of `Custom::DpiProductOrderJobs`: what a record still holds, and the Delete that ends it. */
import { str } from '../../../cli/commands/orphans-judge';
import { DeleteProperties, Holdings, JOBS_MOOT } from '../../../cli/commands/orphans-reads';
import { ProductOrderJobsWire } from '../wire';

export const orderJobsHoldings: Holdings = async (reads, _journal, out, rec) => {
  const d = rec.doc;
  const sub = str(d.subscriptionId);
  const jobIds = Array.isArray(d.jobIds) ? (d.jobIds as unknown[]).map(String) : [];
  const submitted = Array.isArray(d.submitted) ? d.submitted.length : 0;
  out.serviceIds.push(`job ${str(d.primaryJobId ?? out.physicalId)}`, `sub ${sub}`);
  // Jobs have no delete: once their subscription has ended they hold nothing (a destroy leaves the record as it is).
  const status = await reads.subscriptionStatus(sub);
  if (JOBS_MOOT.has(status)) {
    out.holds = `nothing live (subscription ${status})`;
    out.moot = true;
    return;
  }
  const ids = await reads.jobIdsOf(sub);
  const listed = jobIds.filter((j) => ids.has(j)).length;
  out.holds = `${submitted} order IDs in ${listed} listed job${listed === 1 ? '' : 's'} (jobs have no delete: they end with the subscription)`;
};

/** The properties of the Delete that ends a record of the kind, from its journal document. */
export const orderJobsDelete: DeleteProperties = (_o, d) => ({ SubscriptionId: str(d.subscriptionId) } satisfies Partial<ProductOrderJobsWire>);
