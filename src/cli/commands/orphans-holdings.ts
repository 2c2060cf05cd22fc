/**
 * `dpi orphans`, part 2: what a listed record still holds, read from the service with the reads the interface
 * specification shows (subscription and history `status`, job listings). Only a 404 or the status `invalid` means a
 * subscription is gone: a 403 (or another refusal) means the connection's account cannot read it (another account's
 * record, or a secret rotated to another account's token), and the record is `refused`: listed, never touched.
 */
import { Candidate, DONE, LooseClaim, Orphan, Rec, str } from './orphans-judge';
import { DpiClient } from '../../client';
import { ResourceTypes } from '../../contract';
import { FRESH_ATTEMPT_MS } from '../../handler/creates';
import type { Journal, JournalClaim } from '../../handler/journal';

const HISTORY_FINAL = new Set(['cancelled', 'canceled', 'failed', 'completed']);
const HISTORY_OPEN = new Set(['pending', 'processing']);
/** Subscription statuses that hold nothing: `gone` (404) and `invalid`. */
const SUB_GONE = new Set(['gone', 'invalid']);

const isNumeric = (v: unknown): boolean => /^[1-9]\d{0,15}$/.test(str(v));

function statusOf(e: unknown): number | undefined {
  return (e as { status?: number }).status;
}

/**
 * A refusal: 403, or another 4xx that is not 404 (gone), 401 (the run's credentials: the command fails) or 429
 * (retried by the client; what remains fails the command).
 */
function isRefusal(e: unknown): boolean {
  const s = statusOf(e);
  return s !== undefined && s >= 400 && s < 500 && s !== 404 && s !== 401 && s !== 429;
}

/** A read the service refused: what was read, and its answer. */
class Refused extends Error {
  constructor(readonly what: string, e: unknown) {
    const said = (e as { serviceMessage?: string }).serviceMessage ?? (e as Error).message ?? '';
    super(`${what}: ${statusOf(e)}${said ? ` ${said}` : ''}`);
  }
}

/** Runs a read; a refusal becomes `Refused` naming `what`. */
async function read<T>(what: string, fn: () => Promise<T>): Promise<T> {
  try {
    return await fn();
  } catch (e) {
    if (isRefusal(e)) throw new Refused(what, e);
    throw e;
  }
}

/**
 * Subscription statuses of a run: one listing of the account's subscriptions (`id` and `status`, all pages) answers
 * most of them, so thousands of orphans cost a few requests, not one per record; an ID the listing does not show is
 * read on its own (404: `gone`; 403 or another refusal: `Refused`).
 */
const statusListings = new WeakMap<DpiClient, Promise<Map<string, string>>>();

async function subscriptionStatus(client: DpiClient, id: string): Promise<string> {
  let all = statusListings.get(client);
  if (!all) {
    all = client.subscriptions.list().then((subs) => new Map(subs.map((x) => [String(x.id), str(x.status)])));
    all.catch(() => undefined);
    statusListings.set(client, all);
  }
  const known = await all.catch(() => new Map<string, string>());
  const hit = known.get(id);
  if (hit) return hit;
  try {
    return str((await client.subscriptions.get(id)).status) || 'unknown';
  } catch (e) {
    if (statusOf(e) === 404) return 'gone';
    if (isRefusal(e)) throw new Refused(`subscription ${id}`, e);
    throw e;
  }
}

/** The one open, unclaimed history request an unconfirmed attempt made (its `known` list is what was there before). */
async function historyMadeBy(client: DpiClient, journal: Journal, rec: Rec): Promise<{ found?: string; candidates: string[] }> {
  const sub = str(rec.doc.subscriptionId);
  if (!Array.isArray(rec.doc.known) || sub === '') return { candidates: [] };
  const before = new Set((rec.doc.known as unknown[]).map(String));
  const listed = await read(`the history requests of subscription ${sub}`, () => client.history.statusBySubscription(sub));
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

/**
 * Reads what a record still holds and gives its verdict: `refused` when a read was refused (whatever else it is),
 * else `retained` when it is the user's to keep, else `orphan`.
 */
export async function describeHolding(client: DpiClient, journal: Journal, o: Candidate, rec: Rec): Promise<Orphan> {
  const out: Orphan = { ...o, verdict: o.kept ? 'retained' : 'orphan', serviceIds: [], holds: '' };
  try {
    await holdings(client, journal, out, rec);
  } catch (e) {
    if (!(e instanceof Refused)) throw e;
    out.verdict = 'refused';
    out.refused = e.message;
    out.holds = `unknown: the service refused to show ${e.what}`;
    out.moot = false;
  }
  return out;
}

async function holdings(client: DpiClient, journal: Journal, out: Orphan, rec: Rec): Promise<void> {
  const d = rec.doc;
  switch (out.type) {
    case ResourceTypes.NOTIFICATION_PIPELINE: {
      const sel = (d.applied ?? d.selection ?? {}) as { types?: string[]; region?: string };
      const result = d.result as { subscriptions?: Record<string, string> } | undefined;
      const types = result?.subscriptions && Object.keys(result.subscriptions).length > 0 ? Object.keys(result.subscriptions) : sel.types ?? [];
      out.serviceIds.push(`identity ${str(d.identity)}`);
      const what = `${types.join(',')} in ${str(sel.region) || '?'}`;
      if (rec.state === 'posting') {
        out.holds = `maybe a pipeline (the create got no answer): ${what}`;
        out.unresolved = `only the service can remove what it made; once removed (or confirmed never made) run 'dpi journal resolve ${out.key}'`;
      } else if (d.subscriptionId === undefined) {
        out.holds = `pipeline without its subscription: ${what}`;
      } else {
        const sub = str(d.subscriptionId);
        out.serviceIds.push(`sub ${sub}`);
        const status = await subscriptionStatus(client, sub);
        out.holds = SUB_GONE.has(status) ? `nothing live (subscription ${status})` : `active pipeline: ${what} (subscription ${status})`;
      }
      return;
    }
    case ResourceTypes.LEGACY_NOTIFICATION_PIPELINE:
    case ResourceTypes.SUBSCRIPTION: {
      const sub = str(out.physicalId ?? d.subscriptionId);
      if (!isNumeric(sub)) {
        out.serviceIds.push(`product ${str(d.product)}`);
        out.holds = 'subscription create without a confirmed outcome (looked up among unclaimed subscriptions on --fix)';
        return;
      }
      out.serviceIds.push(`sub ${sub}`);
      const status = await subscriptionStatus(client, sub);
      let open = 0;
      if (!SUB_GONE.has(status)) {
        const listed = await read(`the history requests of subscription ${sub}`, () => client.history.statusBySubscription(sub));
        open = listed.filter((h) => HISTORY_OPEN.has(str(h.status))).length;
      }
      const kind = out.type === ResourceTypes.SUBSCRIPTION ? `subscription (product ${str(d.product)})` : 'legacy pipeline subscription';
      out.holds = SUB_GONE.has(status) ? `nothing live (subscription ${status})`
        : `${kind} ${status}${open > 0 ? `, ${open} open history request${open === 1 ? '' : 's'}` : ''}`;
      return;
    }
    case ResourceTypes.HISTORY_REQUEST: {
      const sub = str(d.subscriptionId);
      if (out.physicalId === undefined) {
        out.serviceIds.push(`sub ${sub}`);
        const { found, candidates } = await historyMadeBy(client, journal, rec);
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
      let status = 'gone';
      try {
        status = str((await read(`history request ${id}`, () => client.history.get(id))).status) || 'unknown';
      } catch (e) {
        if (statusOf(e) !== 404) throw e;
      }
      out.holds = HISTORY_OPEN.has(status) ? `open history request (${status})` : `nothing open (history ${status})`;
      return;
    }
    case ResourceTypes.PRODUCT_ORDER_JOBS: {
      const sub = str(d.subscriptionId);
      const jobIds = Array.isArray(d.jobIds) ? (d.jobIds as unknown[]).map(String) : [];
      const submitted = Array.isArray(d.submitted) ? d.submitted.length : 0;
      out.serviceIds.push(`job ${str(d.primaryJobId ?? out.physicalId)}`, `sub ${sub}`);
      // Jobs have no delete: once their subscription has ended they hold nothing (a destroy leaves the record as it is).
      const status = await subscriptionStatus(client, sub);
      if (['gone', 'invalid', 'cancelled'].includes(status)) {
        out.holds = `nothing live (subscription ${status})`;
        out.moot = true;
        return;
      }
      let listed = 0;
      try {
        const jobs = await client.jobs.list({ subscriptionIds: [sub] });
        const ids = new Set(jobs.map((j) => String(j.id)));
        listed = jobIds.filter((j) => ids.has(j)).length;
      } catch (e) {
        // 404/400: the service lists no jobs for it (counted as none).
        if (statusOf(e) === 404 || statusOf(e) === 400) listed = 0;
        else if (isRefusal(e)) throw new Refused(`the jobs of subscription ${sub}`, e);
        else throw e;
      }
      out.holds = `${submitted} order IDs in ${listed} listed job${listed === 1 ? '' : 's'} (jobs have no delete: they end with the subscription)`;
      return;
    }
    default:
      out.holds = 'unknown record type (nothing is removed)';
      out.unresolved = `inspect it with 'dpi journal show ${out.key}'`;
  }
}

/**
 * Claims whose owner holds nothing: no record at all (the record was lost: the subscription's or history request's
 * status is read), or only closed records while the claimed subscription is still live (set active again outside
 * the library). Claims of closed owners are otherwise what a Delete leaves, and not listed; nor are claims of a
 * record its owner released (`released`: kept in the service on purpose, live by design). A refused read is
 * reported as the status `refused` and is not live.
 */
export async function looseClaims(client: DpiClient, claims: JournalClaim[], records: Rec[]): Promise<LooseClaim[]> {
  const keys = new Set(records.map((r) => r.key));
  const holding = new Set(records.filter((r) => !DONE.has(r.state)).map((r) => r.key));
  const released = new Set(records.filter((r) => r.state === 'released')
    .flatMap((r) => [r.physicalId, str(r.doc.subscriptionId)].filter((x): x is string => !!x).map((id) => `${r.key}|${id}`)));
  const out: LooseClaim[] = [];
  for (const c of claims) {
    if (holding.has(c.owner) || released.has(`${c.owner}|${c.id}`)) continue;
    const lost = !keys.has(c.owner);
    let status: string | undefined;
    try {
      if (c.kind === 'sub') status = await subscriptionStatus(client, c.id);
      if (c.kind === 'history' && lost) {
        try {
          status = str((await read(`history request ${c.id}`, () => client.history.get(c.id))).status);
        } catch (e) {
          if (statusOf(e) !== 404) throw e;
          status = 'gone';
        }
      }
    } catch (e) {
      if (!(e instanceof Refused)) throw e;
      status = 'refused';
    }
    const live = status !== undefined && status !== 'refused'
      && (c.kind === 'sub' ? !['gone', 'invalid', 'cancelled'].includes(status) : HISTORY_OPEN.has(status));
    if (lost || live) out.push({ ...c, status, live, ownerRecords: lost ? 'none' : 'closed' });
  }
  return out;
}
