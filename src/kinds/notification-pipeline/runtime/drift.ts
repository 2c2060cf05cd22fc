/** The drift check of `Custom::DpiNotificationPipeline` (see docs/handler.md, "Drift"). */
import { Check, CheckContext, compareShown, ENDED } from '../../../handler/drift-checkers';
import { JournalRecord } from '../../../handler/journal';

interface PipelineDoc {
  identity?: string;
  subscriptionId?: string;
  applied?: { types: string[]; roleArn: string; ebRoleArn?: string; region: string };
  result?: { subscriptions?: Record<string, string>; failed?: Record<string, unknown> };
  name?: string;
  storageGroupId?: number;
}

/** The upstream types a pipeline's stored `subscriptions` map names (sorted); undefined when not stored or unreadable. */
export function storedTypes(stored: Record<string, string> | undefined, key: string): string[] | undefined {
  const raw = stored?.[key];
  if (raw === undefined) return undefined;
  try {
    const v = JSON.parse(raw) as unknown;
    return v !== null && typeof v === 'object' && !Array.isArray(v) ? Object.keys(v).sort() : undefined;
  } catch {
    return undefined;
  }
}

/**
 * The types a pipeline is expected to store: the applied selection without the types the service could not subscribe
 * (a `partialFailure: ALLOW` deploy's failures are kept as `result.failed`; the stored map holds successes only).
 */
export function expectedTypes(doc: { applied?: { types: string[] }; result?: { failed?: Record<string, unknown> } }): string[] | undefined {
  const failed = new Set(Object.keys(doc.result?.failed ?? {}));
  return doc.applied?.types.filter((t) => !failed.has(t)).sort();
}

export async function pipelineDrift(c: Check, x: CheckContext, rec: JournalRecord<PipelineDoc> | undefined): Promise<void> {
  const s = await x.reads.subscription(c.r.physicalId);
  if (!s) return c.gone('its product-107 subscription was not found (404)');
  if (ENDED.has(s.status)) return c.gone(`its product-107 subscription is ${s.status}`);
  if (!rec) return c.cannotCheck('no journal record of it (deployed before the journal, or another journal table)');
  if (rec.state === 'updating') c.noteThat('an update of it has no confirmed outcome (the next deploy re-applies it)');
  c.diff('status', 'active', s.status);
  compareShown(c, s, { name: rec.doc.name, storageGroupId: rec.doc.storageGroupId, identity: rec.doc.identity });
  // The service offers no read of a pipeline itself. The vendor's parameter reads show what its product-107
  // subscription stores: the unified result's `subscriptions` map (type -> upstream ID), kept up to date by whoever
  // changes the pipeline (the vendor's tutorial: the stored keys follow each unified PATCH). Its region and roles are
  // stored nowhere a read shows.
  const live = storedTypes(x.shown?.get(c.r.physicalId), x.subscriptionsKey);
  const declaredTypes = expectedTypes(rec.doc);
  if (declaredTypes && declaredTypes.length > 0) {
    if (live === undefined) c.notChecked.push('notificationTypes');
    else c.diff('notificationTypes', declaredTypes, live);
  }
  c.notChecked.push('deploymentRegion', 'roles');
}
