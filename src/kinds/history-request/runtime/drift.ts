/** The drift check of `Custom::DpiHistoryRequest` (see docs/handler.md, "Drift"). */
import { Check, CheckContext } from '../../../handler/drift-checkers';
import { isStatus } from '../../../handler/errors';
import { JournalRecord } from '../../../handler/journal';

interface HistoryDoc {
  request?: string;
}

export async function historyDrift(c: Check, { client }: CheckContext, rec: JournalRecord<HistoryDoc> | undefined): Promise<void> {
  let h;
  try {
    h = await client.history.get(c.r.physicalId);
  } catch (e) {
    if (isStatus(e, 403)) return c.cannotCheck('the service refused to show it (403)');
    if (isStatus(e, 404)) return c.gone('not found (404)');
    throw e;
  }
  const status = String(h.status);
  if (status === 'cancelled' || status === 'canceled') return c.gone(`status ${status}`);
  c.noteThat(`status ${status}`);
  if (!rec?.doc.request) return;
  let key: unknown[];
  try {
    key = JSON.parse(rec.doc.request) as unknown[];
  } catch {
    return;
  }
  // [subscriptionId, start_date, end_date, dates, stage_id, product_id, start_time] (see the history handler).
  const [, start, end, dates, stage] = key as [unknown, unknown, unknown, unknown, unknown];
  c.compare('startDate', start, h.start_date);
  c.compare('endDate', end, h.end_date);
  c.compare('dates', Array.isArray(dates) ? [...dates].map(String).sort() : undefined, Array.isArray(h.dates) ? [...h.dates].map(String).sort() : h.dates ?? undefined);
  c.compare('stageId', stage, h.stage_id);
}
