/**
 * `dpi orphans`: the service reads of one run (`ServiceReads`), made in bulk, and what every kind's holdings read
 * (src/kinds/<kind>/tools/orphans.ts) builds on. Only a 404 or the status `invalid` means a subscription is gone: a 403 (or
 * another refusal) is `Refused`. docs/cli.md ("dpi orphans", "Calls per run") states the count.
 */
import { Doc, Orphan, Rec, str } from './orphans-judge';
import { DpiClient, HistoryTransaction } from '../../client';
import type { Journal } from '../../handler/journal';

export const HISTORY_FINAL = new Set(['cancelled', 'canceled', 'failed', 'completed']);
export const HISTORY_OPEN = new Set(['pending', 'processing']);
/** Subscription statuses that hold nothing: `gone` (404) and `invalid`. */
export const SUB_GONE = new Set(['gone', 'invalid']);
/** Subscription statuses after which order jobs hold nothing. */
export const JOBS_MOOT = new Set(['gone', 'invalid', 'cancelled']);
/** Subscriptions per job listing (`subscription_ids=a,b,...`): the batch size the spec uses for order IDs. */
export const JOB_LISTING_IDS = 100;

export const isNumeric = (v: unknown): boolean => /^[1-9]\d{0,15}$/.test(str(v));

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
export class Refused extends Error {
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

/** What a record of a kind still holds (reads the service; sets `holds`, `serviceIds`, `unresolved`, `moot`). */
export type Holdings = (reads: ServiceReads, journal: Journal, out: Orphan, rec: Rec) => Promise<void>;

/** The properties a Delete of a record of a kind needs, from its journal document. */
export type DeleteProperties = (o: Orphan, d: Doc) => Record<string, unknown>;
