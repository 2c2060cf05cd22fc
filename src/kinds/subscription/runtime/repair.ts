/** `dpi drift --fix` of `Custom::DpiSubscription`: one PATCH of what differs, through the handler's `converge`. */
import { Applied, converge, SubscriptionDesired, SubscriptionDoc } from './handler-state';
import { decodeStageIds } from '../../../client';
import { Journal, JournalRecord } from '../../../handler/journal';
import { sameSet } from '../../../handler/props';
import { live, RepairResult, Repairer, shownText, storedOf } from '../../../handler/repair-common';
import { Runtime } from '../../../handler/runtime';


function sameStageIds(a: string | undefined, b: string | undefined): boolean {
  try {
    return a !== undefined && b !== undefined && sameSet(decodeStageIds(a).map(String), decodeStageIds(b).map(String));
  } catch {
    return a === b;
  }
}

/** The declaration of a subscription, as the journal's last confirmed document records it. */
function subscriptionDeclared(doc: SubscriptionDoc, applied: Applied): SubscriptionDesired {
  const params = { ...applied.params };
  delete params.stage_ids;
  return {
    productId: doc.product,
    remoteIdentityId: doc.identity,
    storageGroupId: applied.storageGroupId,
    params,
    stageIds: applied.params.stage_ids !== undefined ? decodeStageIds(applied.params.stage_ids).map(String) : [],
    status: applied.status,
    name: applied.name,
    dateStart: applied.dateStart,
    onDelete: 'invalid',
    removalPolicy: doc.removalPolicy,
  };
}

/** A journal that keeps `previous` as it was (a repair changes no declaration: an UPDATE_ROLLBACK still returns to the same state). */
function keepingPrevious(journal: Journal, previous: Applied | undefined): Journal {
  return { ...journal, save: (rec, state, doc, physicalId) => journal.save(rec, state, { ...doc, previous } as typeof doc, physicalId) };
}

async function repairSubscription(rt: Runtime, rec: JournalRecord<SubscriptionDoc>): Promise<RepairResult> {
  const id = rec.physicalId!;
  const applied = rec.doc.applied;
  if (!applied) return { restored: [], notRestored: ['the journal has no confirmed state of it'] };
  const s = await live(rt, id);
  if (typeof s === 'string') return { restored: [], notRestored: [s] };
  const restored: string[] = [];
  const notRestored: string[] = [];
  const seen: Applied = { ...applied, params: { ...applied.params } };
  if (s.status !== applied.status) restored.push(`status: ${s.status} -> ${applied.status}`);
  if (s.name !== undefined && applied.name !== undefined && (s.name ?? '') !== applied.name) {
    seen.name = s.name ?? '';
    restored.push(`name: ${shownText(s.name)} -> ${applied.name}`);
  }
  if (s.storage_group !== undefined && applied.storageGroupId !== undefined && Number(s.storage_group) !== applied.storageGroupId) {
    seen.storageGroupId = s.storage_group === null ? undefined : Number(s.storage_group);
    restored.push(`storageGroupId: ${shownText(s.storage_group)} -> ${applied.storageGroupId}`);
  }
  const stored = await storedOf(rt, s);
  if (stored) {
    for (const [k, v] of Object.entries(applied.params)) {
      if (k === 'remote_identity_id' || (k === 'stage_ids' ? sameStageIds(stored[k], v) : stored[k] === v)) continue;
      seen.params[k] = stored[k] ?? '';
      restored.push(`${k === 'stage_ids' ? 'stageIds' : `productParameters.${k}`}: ${shownText(stored[k])} -> ${v}`);
    }
  }
  const identity = s.remote_identity;
  if (identity !== undefined && identity !== null && rec.doc.identity !== undefined && String(identity) !== rec.doc.identity) {
    notRestored.push(`remoteIdentityId (${s.remote_identity}, declared ${rec.doc.identity}): another identity is another subscription; redeploy replaces it`);
  }
  for (const k of Object.keys(rec.doc.kept ?? {})) notRestored.push(`productParameters.${k}: kept by the service (no removal possible)`);
  if (restored.length === 0) return { restored, notRestored };
  const rtKeeping = { ...rt, journal: keepingPrevious(rt.journal, rec.doc.previous) };
  await converge(rtKeeping, { ...rec, doc: { ...rec.doc, applied: seen } }, subscriptionDeclared(rec.doc, applied), s.status);
  return { restored, notRestored };
}

/** The repair of a subscription. */
export const subscriptionRepair: Repairer = (rt, _key, rec) => repairSubscription(rt, rec as JournalRecord<SubscriptionDoc>);
