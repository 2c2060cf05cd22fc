/** `dpi orphans` of `Custom::DpiHistoryRequest`: what a record still holds, and the Delete that ends it. */
import { Rec, str } from '../../../cli/commands/orphans-judge';
import { DeleteProperties, HISTORY_FINAL, HISTORY_OPEN, Holdings, ServiceReads } from '../../../cli/commands/orphans-reads';
import { FRESH_ATTEMPT_MS } from '../../../handler/creates';
import type { Journal } from '../../../handler/journal';
import { HistoryRequestWire } from '../wire';

/** The one open, unclaimed history request an unconfirmed attempt made (its `known` list is what was there before). */
async function historyMadeBy(reads: ServiceReads, journal: Journal, rec: Rec): Promise<{ found?: string; candidates: string[] }> {
  const sub = str(rec.doc.subscriptionId);
  if (!Array.isArray(rec.doc.known) || sub === '') return { candidates: [] };
  const before = new Set((rec.doc.known as unknown[]).map(String));
  const listed = await reads.historyOf(sub);
  const fresh = listed.filter((h) => !before.has(String(h.id)) && !HISTORY_FINAL.has(str(h.status)));
  const owners = await journal.owners('history', fresh.map((h) => String(h.id)));
  const mine = fresh.filter((h) => !owners.has(String(h.id)) || owners.get(String(h.id)) === rec.key).map((h) => String(h.id));
  const claimed = mine.find((id) => owners.get(id) === rec.key);
  // As the handler: one request that appeared is the attempt's only within minutes of its POST (`knownAt`); over a longer
  // window (or with no time recorded) it may as well be another's, so it is named, never cancelled.
  const knownAt = Date.parse(str(rec.doc.knownAt));
  const fresh15 = Number.isFinite(knownAt) && Date.now() - knownAt <= FRESH_ATTEMPT_MS;
  return { found: claimed ?? (mine.length === 1 && fresh15 ? mine[0] : undefined), candidates: mine };
}

export const historyHoldings: Holdings = async (reads, journal, out, rec) => {
  const d = rec.doc;
  const sub = str(d.subscriptionId);
  if (out.physicalId === undefined) {
    out.serviceIds.push(`sub ${sub}`);
    const { found, candidates } = await historyMadeBy(reads, journal, rec);
    if (found) {
      out.serviceIds.push(`history ${found}`);
      out.madeHistory = found;
      out.holds = `open history request ${found} (made by an attempt without a confirmed outcome)`;
    } else if (candidates.length > 0) {
      out.holds = `an attempt without a confirmed outcome; ${candidates.length} open request${candidates.length > 1 ? 's' : ''} could be it `
        + `(${candidates.join(', ')}), and ${candidates.length > 1 ? 'which one' : 'whether it'} cannot be told`;
      out.unresolved = `cancel the one ${out.key} made if you know it (the others are not this stack's), then run `
        + `dpi journal resolve ${out.key} --keep-candidates`;
    } else {
      out.holds = 'nothing (the attempt made no request the service lists)';
    }
    return;
  }
  const id = out.physicalId;
  out.serviceIds.push(`history ${id}`, `sub ${sub}`);
  const status = await reads.historyStatus(id, sub);
  out.holds = HISTORY_OPEN.has(status) ? `open history request (${status})` : `nothing open (history ${status})`;
};

/** The properties of the Delete that ends a record of the kind, from its journal document. */
export const historyDelete: DeleteProperties = (_o, d) => ({ SubscriptionId: str(d.subscriptionId) } satisfies Partial<HistoryRequestWire>);
