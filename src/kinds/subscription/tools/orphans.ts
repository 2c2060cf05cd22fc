/** `dpi orphans` of `Custom::DpiSubscription` (and of a legacy pipeline's product-86 subscription): what a record still
 * holds, and the Delete that ends it.
 */
import { kindOf } from '../..';
import { str } from '../../../cli/commands/orphans-judge';
import { DeleteProperties, HISTORY_OPEN, Holdings, isNumeric, SUB_GONE } from '../../../cli/commands/orphans-reads';
import { SubscriptionKind, SubscriptionWire } from '../wire';

/** A subscription, or a legacy pipeline (a product-86 subscription). */
export const subscriptionHoldings: Holdings = async (reads, _journal, out, rec) => {
  const d = rec.doc;
  const sub = str(out.physicalId ?? d.subscriptionId);
  if (!isNumeric(sub)) {
    out.serviceIds.push(`product ${str(d.product)}`);
    out.holds = 'subscription create without a confirmed outcome (looked up among unclaimed subscriptions on --fix)';
    return;
  }
  out.serviceIds.push(`sub ${sub}`);
  const status = await reads.subscriptionStatus(sub);
  let open = 0;
  if (!SUB_GONE.has(status)) {
    const listed = await reads.historyOf(sub);
    open = listed.filter((h) => HISTORY_OPEN.has(str(h.status))).length;
  }
  const record = kindOf(out.type)?.record ?? 'subscription';
  const kind = out.type === SubscriptionKind.type ? `${record} (product ${str(d.product)})` : record;
  out.holds = SUB_GONE.has(status) ? `nothing live (subscription ${status})`
    : `${kind} ${status}${open > 0 ? `, ${open} open history request${open === 1 ? '' : 's'}` : ''}`;
};

/** The properties of the Delete that ends a record of the kind, from its journal document. */
export const subscriptionDelete: DeleteProperties = (_o, d) => {
  const applied = (d.applied ?? {}) as { storageGroupId?: number };
  return {
    ProductId: str(d.product),
    ...(d.identity !== undefined ? { RemoteIdentityId: str(d.identity) } : {}),
    ...(applied.storageGroupId !== undefined ? { StorageGroupId: str(applied.storageGroupId) } : {}),
  } satisfies Partial<SubscriptionWire>;
};
