/**
 * The service reads of one drift check, made in bulk (src/handler/drift.ts uses them):
 *
 * - subscriptions (of subscriptions, unified pipelines and legacy pipelines): one paginated listing
 *   `GET /v2/sub?product=<id>` (`page_size` 100, `links.next` followed) per product that two or more of the checked
 *   resources use, instead of one `GET /sub/{id}` per resource. A resource whose ID the listing does not show (another
 *   account's record, a service that lists only some states, a failed listing), whose product is unknown, or that is
 *   the only one of its product, is read alone: a 404 there still means DELETED and a 403 "cannot check";
 * - product jobs (of `ProductOrderJobs`): one `GET /service/jobs/jobs?subscription_ids=a,b,...` per 50 subscriptions;
 *   a failed batch falls back to one listing per subscription (whose 404 / 403 the check reports as before).
 *
 * Makes no changing call.
 */
import { DpiClient, Job, Subscription } from '../client';
import { ResourceTypes } from '../kinds';
import { isStatus } from './errors';
import { JournalRecord } from './journal';

/** The product of a unified pipeline's subscription. */
export const PIPELINE_PRODUCT = 107;
/** The product of a legacy pipeline's subscription. */
export const LEGACY_PRODUCT = 86;
/** Subscriptions whose jobs one batched job listing asks for. */
export const JOB_LIST_BATCH = 50;
/** Fewest checked resources of one product for which its listing is read (one resource: its own GET is cheaper). */
export const MIN_LISTED = 2;

/** A 403 read: the connection's account cannot read the record; drift cannot tell, and never calls it gone. */
export class RefusedRead extends Error {}

/**
 * The product whose subscription a resource's check reads: a subscription's from its journal document, 107 for a
 * unified pipeline, 86 for a legacy one; undefined for the other types (they read no subscription) or when unknown.
 */
export function productOf(type: string, rec: JournalRecord<unknown> | undefined): number | undefined {
  if (type === ResourceTypes.NOTIFICATION_PIPELINE) return PIPELINE_PRODUCT;
  if (type === ResourceTypes.LEGACY_NOTIFICATION_PIPELINE) return LEGACY_PRODUCT;
  if (type !== ResourceTypes.SUBSCRIPTION) return undefined;
  const p = Number((rec?.doc as { product?: unknown } | undefined)?.product);
  return Number.isSafeInteger(p) && p > 0 ? p : undefined;
}

/** What the bulk reads of a check found, and how a single resource's read falls back. */
export class BulkReads {
  /** Subscriptions shown by the product listings, by ID. */
  private readonly listed = new Map<string, Subscription>();
  /** Jobs shown by the batched job listings, by job ID; and the subscriptions whose batch was read. */
  private readonly jobs = new Map<string, Job>();
  private readonly jobSubs = new Set<string>();

  constructor(private readonly client: DpiClient) {}

  /**
   * Reads the listing of every product among `products` (product -> how many checked resources use it) that at
   * least `MIN_LISTED` resources use. A failed listing is no failure: its resources are read alone.
   */
  async listProducts(products: ReadonlyMap<number, number>): Promise<void> {
    if (typeof this.client.subscriptions?.list !== 'function') return;
    for (const [product, count] of products) {
      if (count < MIN_LISTED) continue;
      let subs: Subscription[];
      try {
        subs = await this.client.subscriptions.list({ product });
      } catch {
        continue;
      }
      for (const s of subs) if (s && s.id !== undefined && s.id !== null) this.listed.set(String(s.id), s);
    }
  }

  /** Reads the jobs of `subscriptionIds` in batches. A failed batch is no failure: its subscriptions are listed alone. */
  async listJobs(subscriptionIds: readonly string[]): Promise<void> {
    const ids = [...new Set(subscriptionIds.filter((x) => /^[1-9]\d{0,14}$/.test(x)))];
    if (ids.length < 2) return;
    for (let i = 0; i < ids.length; i += JOB_LIST_BATCH) {
      const chunk = ids.slice(i, i + JOB_LIST_BATCH);
      let jobs: Job[];
      try {
        jobs = await this.client.jobs.list({ subscriptionIds: chunk });
      } catch {
        continue;
      }
      for (const j of jobs) this.jobs.set(String(j.id), j);
      for (const id of chunk) this.jobSubs.add(id);
    }
  }

  /** A subscription: as listed, else read alone; undefined only when the service does not know it (404); a 403 throws `RefusedRead`. */
  async subscription(id: string): Promise<Subscription | undefined> {
    const shown = this.listed.get(id);
    if (shown) return shown;
    try {
      return await this.client.subscriptions.get(id);
    } catch (e) {
      if (isStatus(e, 404)) return undefined;
      if (isStatus(e, 403)) throw new RefusedRead('the service refused to show it (403): another account\'s record, or the connection\'s secret holds another account\'s token');
      throw e;
    }
  }

  /**
   * The jobs of a subscription: from its batch (the batch's jobs that show another subscription left out), else one
   * listing of it alone (its errors are the caller's).
   */
  async jobsOf(subscriptionId: string, expected: readonly string[] = []): Promise<Job[]> {
    if (!this.jobSubs.has(subscriptionId)) return this.client.jobs.list({ subscriptionIds: [subscriptionId] });
    const ours = (j: Job): boolean => j.subscription_id === undefined || j.subscription_id === null || String(j.subscription_id) === subscriptionId;
    const batch = [...this.jobs.values()].filter(ours);
    // A job the batch does not show is never taken as gone from the batch alone (a service that honours one ID of
    // `subscription_ids`, or a page the batch did not reach): the subscription's own listing decides.
    const shown = new Set(batch.map((j) => String(j.id)));
    if (expected.some((id) => !shown.has(id))) return this.client.jobs.list({ subscriptionIds: [subscriptionId] });
    return batch;
  }
}
