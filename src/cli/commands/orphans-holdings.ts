/**
 * `dpi orphans`, part 2: what a listed record still holds, read from the service with the reads the interface
 * specification shows (subscription and history `status`, job listings). Only a 404 or the status `invalid` means a
 * subscription is gone: a 403 (or another refusal) means the connection's account cannot read it (another account's
 * record, or a secret rotated to another account's token), and the record is `refused`: listed, never touched.
 *
 * Reads are bulk (`ServiceReads`): every record kind is answered from listings where one exists, and a record is read
 * on its own only when the listing does not show it. docs/cli.md ("dpi orphans", "Calls per run") states the count.
 */
import { Candidate, DONE, LooseClaim, Orphan, Rec, str } from './orphans-judge';
import { DpiClient, HistoryTransaction } from '../../client';
import { ResourceTypes } from '../../contract';
import { FRESH_ATTEMPT_MS } from '../../handler/creates';
import type { Journal, JournalClaim } from '../../handler/journal';
import { isKindType, kindOf, PerKind } from '../../kinds';

const HISTORY_FINAL = new Set(['cancelled', 'canceled', 'failed', 'completed']);
const HISTORY_OPEN = new Set(['pending', 'processing']);
/** Subscription statuses that hold nothing: `gone` (404) and `invalid`. */
const SUB_GONE = new Set(['gone', 'invalid']);
/** Subscription statuses after which order jobs hold nothing. */
const JOBS_MOOT = new Set(['gone', 'invalid', 'cancelled']);
/** Subscriptions per job listing (`subscription_ids=a,b,...`): the batch size the spec uses for order IDs. */
export const JOB_LISTING_IDS = 100;

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

/** A memoized read whose rejection is handled where it is awaited (never an unhandled rejection). */
function memo<T>(cache: Map<string, Promise<T>>, key: string, fn: () => Promise<T>): Promise<T> {
  let p = cache.get(key);
  if (!p) {
    p = fn();
    p.catch(() => undefined);
    cache.set(key, p);
  }
  return p;
}

/**
 * The service reads of one run, each made once:
 *
 * - subscription statuses: one listing of the account's subscriptions (`GET /v2/sub`, every page); an ID the listing
 *   does not show is read on its own (`GET /sub/{id}`: 404 is `gone`, a refusal `Refused`);
 * - history requests: one status listing per subscription (`GET H/status/{subscription}`); a request its
 *   subscription's listing does not show is read on its own (`GET H/{id}`);
 * - order jobs: one job listing per `JOB_LISTING_IDS` subscriptions (`loadJobs`); a listing the service refuses or
 *   rejects is read again per subscription.
 */
export class ServiceReads {
  /** What the run should say about its reads (e.g. a listing that was refused, and what it cost). */
  readonly notes: string[] = [];
  private subscriptions?: Promise<Map<string, string>>;
  private readonly subscriptionGets = new Map<string, Promise<string>>();
  private readonly histories = new Map<string, Promise<HistoryTransaction[]>>();
  private readonly historyGets = new Map<string, Promise<string>>();
  private readonly jobs = new Map<string, Promise<Set<string>>>();

  constructor(readonly client: DpiClient) {}

  /** A subscription's status: from the listing; else its own read (`gone` on 404). */
  async subscriptionStatus(id: string): Promise<string> {
    this.subscriptions ??= this.client.subscriptions.list()
      .then((subs) => new Map(subs.map((x) => [String(x.id), str(x.status)])))
      .catch((e: unknown) => {
        // A listing the service does not serve or refuses: each subscription is read on its own (slower, as correct).
        if (statusOf(e) !== 404 && statusOf(e) !== 405 && !isRefusal(e)) throw e;
        this.notes.push(`the subscription listing answered ${statusOf(e)}: each subscription is read on its own (one request each)`);
        return new Map<string, string>();
      });
    const hit = (await this.subscriptions).get(id);
    if (hit) return hit;
    return memo(this.subscriptionGets, id, async () => {
      try {
        return str((await this.client.subscriptions.get(id)).status) || 'unknown';
      } catch (e) {
        if (statusOf(e) === 404) return 'gone';
        if (isRefusal(e)) throw new Refused(`subscription ${id}`, e);
        throw e;
      }
    });
  }

  /** The history requests of a subscription (none when it is gone: 404); a refusal is `Refused`. */
  historyOf(subscriptionId: string): Promise<HistoryTransaction[]> {
    return memo(this.histories, subscriptionId, async () => {
      try {
        return await read(`the history requests of subscription ${subscriptionId}`, () => this.client.history.statusBySubscription(subscriptionId));
      } catch (e) {
        if (statusOf(e) === 404) return [];
        throw e;
      }
    });
  }

  /** A history request's status: from its subscription's listing when it shows it; else its own read (`gone` on 404). */
  async historyStatus(id: string, subscriptionId?: string): Promise<string> {
    if (subscriptionId !== undefined && subscriptionId !== '') {
      const listed = await this.historyOf(subscriptionId).catch((e: unknown) => {
        if (e instanceof Refused) return [];
        throw e;
      });
      const hit = listed.find((h) => String(h.id) === id);
      if (hit) return str(hit.status) || 'unknown';
    }
    return memo(this.historyGets, id, async () => {
      try {
        return str((await read(`history request ${id}`, () => this.client.history.get(id))).status) || 'unknown';
      } catch (e) {
        if (statusOf(e) === 404) return 'gone';
        throw e;
      }
    });
  }

  /** Lists the jobs of many subscriptions, `JOB_LISTING_IDS` per request (read later with `jobIdsOf`). */
  loadJobs(subscriptionIds: string[]): void {
    const todo = [...new Set(subscriptionIds)].filter((id) => !this.jobs.has(id));
    for (let i = 0; i < todo.length; i += JOB_LISTING_IDS) {
      const chunk = todo.slice(i, i + JOB_LISTING_IDS);
      const listed = this.client.jobs.list({ subscriptionIds: chunk }).then((jobs) => new Set(jobs.map((j) => String(j.id))));
      listed.catch(() => undefined);
      // A listing the service refuses or rejects (one subscription of the chunk may be another account's, or gone):
      // each subscription of the chunk is listed on its own, so that a refusal is the record's own.
      for (const id of chunk) {
        const own = listed.catch((e: unknown) => {
          if (chunk.length > 1 && (statusOf(e) === 404 || statusOf(e) === 400 || isRefusal(e))) return this.jobsOfOne(id);
          throw e;
        });
        own.catch(() => undefined);
        this.jobs.set(id, own);
      }
    }
  }

  /** The IDs of the jobs listed for a subscription (with others of its listing); a refusal is `Refused`. */
  jobIdsOf(subscriptionId: string): Promise<Set<string>> {
    return memo(this.jobs, subscriptionId, () => this.jobsOfOne(subscriptionId));
  }

  private async jobsOfOne(subscriptionId: string): Promise<Set<string>> {
    try {
      return new Set((await this.client.jobs.list({ subscriptionIds: [subscriptionId] })).map((j) => String(j.id)));
    } catch (e) {
      // 404/400: the service lists no jobs for it (counted as none).
      if (statusOf(e) === 404 || statusOf(e) === 400) return new Set();
      if (isRefusal(e)) throw new Refused(`the jobs of subscription ${subscriptionId}`, e);
      throw e;
    }
  }
}

/**
 * Reads ahead what the records need in bulk: the order jobs of every live subscription of the order-jobs records, in
 * listings of `JOB_LISTING_IDS` subscriptions (the subscription statuses come from the one subscription listing).
 */
export async function readAhead(reads: ServiceReads, candidates: Candidate[], records: Map<string, Rec>): Promise<void> {
  const subs: string[] = [];
  for (const o of candidates) {
    if (o.type !== ResourceTypes.PRODUCT_ORDER_JOBS) continue;
    const sub = str(records.get(`${o.key}#${o.record}`)?.doc.subscriptionId);
    if (sub === '') continue;
    const status = await reads.subscriptionStatus(sub).catch((e: unknown) => {
      if (e instanceof Refused) return 'refused';
      throw e;
    });
    if (!JOBS_MOOT.has(status) && status !== 'refused') subs.push(sub);
  }
  reads.loadJobs(subs);
}

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

/**
 * Reads what a record still holds and gives its verdict: `refused` when a read was refused (whatever else it is),
 * else `retained` when it is the user's to keep, else `orphan`.
 */
export async function describeHolding(reads: ServiceReads, journal: Journal, o: Candidate, rec: Rec): Promise<Orphan> {
  const out: Orphan = { ...o, verdict: o.kept ? 'retained' : 'orphan', serviceIds: [], holds: '' };
  try {
    await holdings(reads, journal, out, rec);
  } catch (e) {
    if (!(e instanceof Refused)) throw e;
    out.verdict = 'refused';
    out.refused = e.message;
    out.holds = `unknown: the service refused to show ${e.what}`;
    out.moot = false;
  }
  return out;
}

/** What a record of a kind still holds (reads the service; sets `holds`, `serviceIds`, `unresolved`, `moot`). */
type Holdings = (reads: ServiceReads, journal: Journal, out: Orphan, rec: Rec) => Promise<void>;

const pipelineHoldings: Holdings = async (reads, _journal, out, rec) => {
  const d = rec.doc;
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
    const status = await reads.subscriptionStatus(sub);
    out.holds = SUB_GONE.has(status) ? `nothing live (subscription ${status})` : `active pipeline: ${what} (subscription ${status})`;
  }
};

/** A subscription, or a legacy pipeline (a product-86 subscription). */
const subscriptionHoldings: Holdings = async (reads, _journal, out, rec) => {
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
  const kind = out.type === ResourceTypes.SUBSCRIPTION ? `${record} (product ${str(d.product)})` : record;
  out.holds = SUB_GONE.has(status) ? `nothing live (subscription ${status})`
    : `${kind} ${status}${open > 0 ? `, ${open} open history request${open === 1 ? '' : 's'}` : ''}`;
};

const historyHoldings: Holdings = async (reads, journal, out, rec) => {
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

const orderJobsHoldings: Holdings = async (reads, _journal, out, rec) => {
  const d = rec.doc;
  const sub = str(d.subscriptionId);
  const jobIds = Array.isArray(d.jobIds) ? (d.jobIds as unknown[]).map(String) : [];
  const submitted = Array.isArray(d.submitted) ? d.submitted.length : 0;
  out.serviceIds.push(`job ${str(d.primaryJobId ?? out.physicalId)}`, `sub ${sub}`);
  // Jobs have no delete: once their subscription has ended they hold nothing (a destroy leaves the record as it is).
  const status = await reads.subscriptionStatus(sub);
  if (JOBS_MOOT.has(status)) {
    out.holds = `nothing live (subscription ${status})`;
    out.moot = true;
    return;
  }
  const ids = await reads.jobIdsOf(sub);
  const listed = jobIds.filter((j) => ids.has(j)).length;
  out.holds = `${submitted} order IDs in ${listed} listed job${listed === 1 ? '' : 's'} (jobs have no delete: they end with the subscription)`;
};

/** The holdings read of each kind (one per kind of the registry). */
export const HOLDINGS: PerKind<Holdings> = {
  [ResourceTypes.NOTIFICATION_PIPELINE]: pipelineHoldings,
  [ResourceTypes.LEGACY_NOTIFICATION_PIPELINE]: subscriptionHoldings,
  [ResourceTypes.SUBSCRIPTION]: subscriptionHoldings,
  [ResourceTypes.HISTORY_REQUEST]: historyHoldings,
  [ResourceTypes.PRODUCT_ORDER_JOBS]: orderJobsHoldings,
};

async function holdings(reads: ServiceReads, journal: Journal, out: Orphan, rec: Rec): Promise<void> {
  if (isKindType(out.type)) return HOLDINGS[out.type](reads, journal, out, rec);
  out.holds = 'unknown record type (nothing is removed)';
  out.unresolved = `inspect it with 'dpi journal show ${out.key}'`;
}

/**
 * Claims whose owner holds nothing: no record at all (the record was lost: the subscription's or history request's
 * status is read), or only closed records while the claimed subscription is still live (set active again outside
 * the library). Claims of closed owners are otherwise what a Delete leaves, and not listed; nor are claims of a
 * record its owner released (`released`: kept in the service on purpose, live by design). A refused read is
 * reported as the status `refused` and is not live.
 */
export async function looseClaims(reads: ServiceReads, claims: JournalClaim[], records: Rec[]): Promise<LooseClaim[]> {
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
      if (c.kind === 'sub') status = await reads.subscriptionStatus(c.id);
      if (c.kind === 'history' && lost) {
        status = await reads.historyStatus(c.id);
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
