/** The drift check of `Custom::DpiSubscription` (see docs/handler.md, "Drift"). */
import { Subscription } from '../../../client';
import { Check, CheckContext, compareShown, ENDED } from '../../../handler/drift-checkers';
import { JournalRecord } from '../../../handler/journal';

/** `stage_ids` (a stringified JSON array) as a sorted list of IDs; undefined when absent or unreadable. */
function stageIdsOf(encoded: string | undefined): string[] | undefined {
  if (encoded === undefined) return undefined;
  try {
    const v = JSON.parse(encoded) as unknown;
    return Array.isArray(v) ? v.map((x) => String(x)).sort((a, b) => Number(a) - Number(b) || (a < b ? -1 : a > b ? 1 : 0)) : [encoded];
  } catch {
    return [encoded];
  }
}

/** The product parameters a read shows (`product_parameters`, or the unversioned meta array); undefined when none. */
function shownParameters(s: Subscription): Record<string, string> | undefined {
  if (s.product_parameters && typeof s.product_parameters === 'object') return s.product_parameters;
  const meta = (s as { subscription_product_meta_attributes?: unknown }).subscription_product_meta_attributes;
  if (Array.isArray(meta)) {
    const out: Record<string, string> = {};
    for (const m of meta as Array<{ data_key?: unknown; data_value?: unknown }>) {
      if (typeof m?.data_key === 'string') out[m.data_key] = String(m.data_value ?? '');
    }
    return out;
  }
  return undefined;
}


interface SubscriptionDoc {
  identity?: string;
  applied?: { params: Record<string, string>; status: string; name?: string; storageGroupId?: number };
  kept?: Record<string, string>;
  unrestored?: string[];
}

export async function subscriptionDrift(c: Check, x: CheckContext, rec: JournalRecord<SubscriptionDoc> | undefined): Promise<void> {
  const s = await x.reads.subscription(c.r.physicalId);
  if (!s) return c.gone('not found (404)');
  if (ENDED.has(s.status)) return c.gone(`status ${s.status}`);
  const applied = rec?.doc.applied;
  if (!applied) return c.cannotCheck(rec ? 'the journal has no confirmed state of it yet' : 'no journal record of it (deployed before the journal, or another journal table)');
  c.diff('status', applied.status, s.status);
  compareShown(c, s, { name: applied.name, storageGroupId: applied.storageGroupId, identity: rec?.doc.identity });
  // Stored parameters a rollback (or revert) dropped and the service keeps: the declaration has none of them.
  for (const [k, v] of Object.entries(rec?.doc.kept ?? {})) c.diff(`productParameters.${k} (kept by the service; no removal possible)`, undefined, v);
  for (const u of rec?.doc.unrestored ?? []) c.noteThat(`not restored when released: ${u}`);
  const shown = shownParameters(s) ?? x.shown?.get(c.r.physicalId);
  const declared = applied.params ?? {};
  const stageIds = stageIdsOf(declared.stage_ids);
  const keys = Object.keys(declared).filter((k) => k !== 'stage_ids' && k !== 'remote_identity_id').sort();
  if (!shown) {
    if (keys.length > 0) c.notChecked.push('productParameters');
    if (stageIds) c.notChecked.push('stageIds');
    return;
  }
  for (const k of keys) c.diff(`productParameters.${k}`, declared[k], shown[k]);
  if (stageIds) c.diff('stageIds', stageIds, stageIdsOf(shown.stage_ids) ?? []);
}
