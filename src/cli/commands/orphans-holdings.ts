/**
 * `dpi orphans`, part 2: what a listed record still holds, read from the service with the reads the interface
 * specification shows (subscription and history `status`, job listings). Only a 404 or the status `invalid` means a
 * subscription is gone: a 403 (or another refusal) means the connection's account cannot read it (another account's
 * record, or a secret rotated to another account's token), and the record is `refused`: listed, never touched.
 *
 * Reads are bulk (`ServiceReads`, orphans-reads.ts): every record kind is answered from listings where one exists, and
 * a record is read on its own only when the listing does not show it. Each kind's read is its `holdings` hook
 * (src/kinds/<kind>/tools/orphans.ts, listed in src/kinds/registry/cli.ts). docs/cli.md ("dpi orphans", "Calls per run") states the count.
 */
import { Candidate, DONE, LooseClaim, Orphan, Rec, str } from './orphans-judge';

import { HISTORY_OPEN, JOBS_MOOT, Refused, ServiceReads } from './orphans-reads';
import type { Journal, JournalClaim } from '../../handler/journal';
import { isKindType, ResourceTypes } from '../../kinds';
import { CLI_HOOKS } from '../../kinds/registry/cli';

export { JOB_LISTING_IDS, ServiceReads } from './orphans-reads';

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

async function holdings(reads: ServiceReads, journal: Journal, out: Orphan, rec: Rec): Promise<void> {
  if (isKindType(out.type)) return CLI_HOOKS[out.type].holdings(reads, journal, out, rec);
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
