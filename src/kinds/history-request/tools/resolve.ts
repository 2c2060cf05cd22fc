/**
 * `dpi journal resolve` of `Custom::DpiHistoryRequest`: `creating` (a history request) with `known` (its subscription's
 * requests listed before the POST): a request of the subscription listed now, not in `known`, not cancelled or failed,
 * and claimed by no other resource, is one the attempt may have made. Without `known` no POST was sent.
 */
import { AttemptCheck } from '../../../cli/commands/journal-attempts';
import { ServiceError } from '../../../client';

/** History request states that end it. */
const ENDED_HISTORY = new Set(['cancelled', 'canceled', 'failed']);

/** The check of a `creating` record. */
const creatingCheck: AttemptCheck = async (r, journal, service) => {
  const doc = r.doc;
  const subscriptionId = doc.subscriptionId === undefined || doc.subscriptionId === null ? undefined : String(doc.subscriptionId);
  if (!Array.isArray(doc.known) || subscriptionId === undefined) return { note: `${r.id}: its history request was never sent; not checked` };
  const { client } = await service();
  const known = new Set(doc.known.map(String));
  let listed: Array<{ id: unknown; status?: unknown }>;
  try {
    listed = await client.history.statusBySubscription(subscriptionId);
  } catch (e) {
    // The subscription is gone: so are its requests.
    if (!(e instanceof ServiceError && e.status === 404)) throw e;
    listed = [];
  }
  const fresh = listed.filter((h) => !known.has(String(h.id)) && !ENDED_HISTORY.has(String(h.status)));
  const owners = await journal.owners('history', fresh.map((h) => String(h.id)));
  const candidates = fresh.filter((h) => !owners.has(String(h.id)) || owners.get(String(h.id)) === r.key);
  if (candidates.length === 0) return { note: `${r.id}: no history request of subscription ${subscriptionId} appeared since its POST that no other resource claims` };
  const named = candidates.slice(0, 10).map((h) => `${String(h.id)} (${String(h.status)})`).join(', ') + (candidates.length > 10 ? ', ...' : '');
  return {
    refusal: `attempt ${r.id} (creating: a history request for subscription ${subscriptionId}) may have made history request${candidates.length > 1 ? 's' : ''} `
      + `${named}: listed now, not among the ${known.size} listed before its POST, and claimed by no other resource; deploy again: the `
      + 'handler resolves it (if it is not wanted, cancel it first; then resolve again)',
  };
};

/** The checks of the kind's unconfirmed states. */
export const historyAttemptChecks: Readonly<Record<string, AttemptCheck>> = { creating: creatingCheck };
