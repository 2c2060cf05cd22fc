/** `dpi drift --fix` of `Custom::DpiLegacyNotificationPipeline`: the status alone, as the handler revives one. */
import { JournalRecord } from '../../../handler/journal';
import { live, RepairResult, Repairer } from '../../../handler/repair-common';
import { Runtime } from '../../../handler/runtime';

async function repairLegacy(rt: Runtime, rec: JournalRecord<{ identity?: string }>): Promise<RepairResult> {
  const s = await live(rt, rec.physicalId!);
  if (typeof s === 'string') return { restored: [], notRestored: [s] };
  const restored: string[] = [];
  if (s.status !== 'active') {
    // As the legacy handler revives a pipeline: the status alone.
    await rt.client.subscriptions.update(s.id, { status: 'active' });
    restored.push(`status: ${s.status} -> active`);
  }
  const notRestored = s.remote_identity !== undefined && s.remote_identity !== null && rec.doc.identity !== undefined
    && String(s.remote_identity) !== rec.doc.identity ? [`remoteIdentityId (${s.remote_identity}, declared ${rec.doc.identity}): the service keeps it`] : [];
  return { restored, notRestored };
}

/** The repair of a legacy pipeline. */
export const legacyRepair: Repairer = (rt, _key, rec) => repairLegacy(rt, rec as JournalRecord<{ identity?: string }>);
