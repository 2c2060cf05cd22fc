/** The drift check of `Custom::DpiLegacyNotificationPipeline` (see docs/handler.md, "Drift"). */
import { Check, CheckContext, ENDED } from '../../../handler/drift-checkers';
import { JournalRecord } from '../../../handler/journal';

interface LegacyDoc {
  identity?: string;
}

export async function legacyDrift(c: Check, { reads }: CheckContext, rec: JournalRecord<LegacyDoc> | undefined): Promise<void> {
  const s = await reads.subscription(c.r.physicalId);
  const retired = rec?.state === 'retired';
  if (retired) {
    // A retired legacy pipeline is expected gone.
    if (s && !ENDED.has(s.status)) c.diff('status', 'invalid', s.status);
    return;
  }
  if (!s) return c.gone('not found (404)');
  if (ENDED.has(s.status)) return c.gone(`status ${s.status}`);
  if (!rec) return c.cannotCheck('no journal record of it (deployed before the journal, or another journal table)');
  c.diff('status', 'active', s.status);
  c.compare('remoteIdentityId', rec.doc.identity, s.remote_identity === null ? '' : s.remote_identity);
  c.notChecked.push('queueArn', 'notificationTypes');
}
