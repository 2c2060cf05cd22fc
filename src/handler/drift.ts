/**
 * Drift: what changed behind the stack's back. For every deployed `Custom::Dpi*` resource, the state the handler
 * applied at the last deploy (the lifecycle journal's last confirmed document of the resource) is compared with
 * what the service shows now (reads through the client). Used by `dpi drift` and by the `DriftMonitor`'s
 * scheduled function (`index.drift`). Makes no changing call.
 *
 * What can be compared depends on what the service's reads show. The specification guarantees only a subscription's
 * `id` and `status`, a history request's `status` and a job listing's `id` / `is_primary`: those are always
 * compared. A field a read does not show is never drift: the row names it under `notChecked` ("not shown by the
 * service"). Where the reads show more (the vendor's documented reads: name, storage, identity; the vendor's stored
 * product parameter reads, `GET /v2/spp/bulk`: stage IDs, declared parameters, a pipeline's stored upstream types; a
 * job's `extra_context`), those are compared too. The parameter reads are one bulk call per 100 subscriptions and
 * pipelines, made once per check; a service that does not serve them leaves those properties "not checked".
 * Subscriptions and jobs are read in bulk too (src/handler/drift-reads.ts): one paginated listing per product, one
 * job listing per 50 subscriptions; a record a listing does not show is read alone.
 * See docs/handler.md ("Drift").
 */
import { DpiClient } from '../client';
import { DEFAULT_PIPELINE_METADATA_KEYS } from '../contract';
import { isKindType, KIND_TYPES, KINDS, KindType, ResourceTypes } from '../kinds';
import { Check } from './drift-checkers';
import { BulkReads, productOf, RefusedRead } from './drift-reads';
import type { DriftResource, DriftRow, ShownParameters } from './drift-types';
import { Journal, JournalRecord } from './journal';

export type { DriftDifference, DriftResource, DriftRow, DriftStatus, ShownParameters } from './drift-types';
import { LAMBDA_HOOKS } from '../kinds/registry/lambda';

/** What the drift check needs. */
export interface DriftDeps {
  readonly client: DpiClient;
  readonly journal: Journal;
  /** Resources checked at once (default 4; the bulk reads come first, then at most one read per resource). */
  readonly concurrency?: number;
  /** Called after each resource is checked (done, total): progress of long runs. */
  readonly onProgress?: (done: number, total: number) => void;
  /**
   * The stored product parameter under which the handler keeps a unified pipeline's `subscriptions` map (the
   * connection's `pipelineMetadataKeys.subscriptions`).
   * @default 'subscriptions'
   */
  readonly pipelineSubscriptionsKey?: string;
}

/** Resource types whose check uses the stored product parameters. */
const PARAMETER_TYPES = new Set<string>(KINDS.filter((k) => k.readsParameters).map((k) => k.type));

/** A physical ID the parameter reads accept (a positive integer subscription ID). */
function parameterReadable(r: DriftResource): boolean {
  return PARAMETER_TYPES.has(r.type) && /^[1-9]\d{0,14}$/.test(r.physicalId ?? '');
}

/**
 * Reads the stored product parameters of every subscription and pipeline among `resources` in bulk (one call per
 * 100; see `DpiClient.parameters.bulk`). Optional reads: any failure means "not shown" (never a failed check).
 */
export async function readShownParameters(resources: readonly DriftResource[], client: DpiClient): Promise<ShownParameters> {
  const ids = [...new Set(resources.filter(parameterReadable).map((r) => r.physicalId))];
  if (ids.length === 0 || typeof client.parameters?.bulk !== 'function') return undefined;
  try {
    return await client.parameters.bulk(ids);
  } catch {
    return undefined;
  }
}

/** Whether a resource type is one this library's provider serves. */
export function isDpiType(type: string): boolean {
  return isKindType(type);
}

/** Journal states of a record whose remote object no longer belongs to the resource. */
const DONE = new Set(['deleted', 'abandoned']);

/** The journal record of the deployed physical resource: the newest record with that physical ID not marked done. */
export function declaredRecord<D>(recs: JournalRecord<D>[], physicalId: string): JournalRecord<D> | undefined {
  return recs.filter((r) => r.physicalId === physicalId && !DONE.has(r.state)).sort((a, b) => (a.id < b.id ? 1 : -1))[0];
}

/** What a check of many resources read before checking each: the stored parameters, the bulk reads, the journal records. */
export interface CheckReads {
  readonly shown: ShownParameters;
  /** The bulk reads (default: none; each resource is read alone). */
  readonly reads?: BulkReads;
  /** The resource's journal records, already read (default: read here). */
  readonly records?: JournalRecord<never>[];
}

/** Why a resource cannot be checked at all (no type of this library, no physical ID); undefined when it can. */
function uncheckable(r: DriftResource): string | undefined {
  if (!isKindType(r.type)) return `not a resource type of this library (${KIND_TYPES.join(', ')})`;
  if (!r.physicalId || !/^[A-Za-z0-9_-]+$/.test(r.physicalId)) return `no physical ID of a service record (${r.physicalId || 'none'}): the resource was never created`;
  return undefined;
}

/** The journal key of a resource. */
export function keyOf(r: DriftResource): string {
  return r.key ?? `${r.stack}/${r.logicalId}`;
}

/**
 * Checks one resource. Service and journal failures other than "not found" are thrown. `read`: what a check of many
 * resources already read (`checkDrift`); when omitted, the resource's parameters and subscription are read alone.
 */
export async function checkResource(r: DriftResource, deps: DriftDeps, read?: CheckReads): Promise<DriftRow> {
  const key = keyOf(r);
  const c = new Check(r, key);
  const why = uncheckable(r);
  if (why !== undefined) {
    c.cannotCheck(why);
    return c.row();
  }
  const rec = declaredRecord<never>(read?.records ?? await deps.journal.records<never>(key), r.physicalId);
  const params = read ? read.shown : await readShownParameters([r], deps.client);
  const subscriptionsKey = deps.pipelineSubscriptionsKey || DEFAULT_PIPELINE_METADATA_KEYS.subscriptions;
  try {
    const checker = LAMBDA_HOOKS[r.type as KindType].drift;
    await checker(c, { client: deps.client, reads: read?.reads ?? new BulkReads(deps.client), shown: params, subscriptionsKey }, rec);
  } catch (e) {
    if (!(e instanceof RefusedRead)) throw e;
    c.cannotCheck(e.message);
  }
  return c.row();
}

/** Runs `work` on every index below `n`, a few at a time. */
async function eachIndex(n: number, concurrency: number, work: (i: number) => Promise<void>): Promise<void> {
  let next = 0;
  const worker = async (): Promise<void> => {
    while (next < n) await work(next++);
  };
  await Promise.all(Array.from({ length: Math.max(1, Math.min(concurrency, n)) }, worker));
}

/**
 * Checks every resource, in the order given: first the journal records of all of them, then the bulk reads (stored
 * parameters, one subscription listing per product that two or more resources use, the jobs of the order-job
 * resources' subscriptions), then each resource (a few at a time; at most one further read each, for what the bulk
 * reads did not show). Service calls of a run: see docs/handler.md ("Drift").
 */
export async function checkDrift(resources: readonly DriftResource[], deps: DriftDeps): Promise<DriftRow[]> {
  const concurrency = deps.concurrency ?? 4;
  const records: Array<JournalRecord<never>[]> = new Array(resources.length);
  await eachIndex(resources.length, concurrency, async (i) => {
    records[i] = uncheckable(resources[i]) === undefined ? await deps.journal.records<never>(keyOf(resources[i])) : [];
  });
  const products = new Map<number, number>();
  const jobSubscriptions: string[] = [];
  resources.forEach((r, i) => {
    if (uncheckable(r) !== undefined) return;
    const rec = declaredRecord<never>(records[i], r.physicalId);
    const product = productOf(r.type, rec);
    if (product !== undefined) products.set(product, (products.get(product) ?? 0) + 1);
    const sub = (rec?.doc as { subscriptionId?: unknown } | undefined)?.subscriptionId;
    if (r.type === ResourceTypes.PRODUCT_ORDER_JOBS && typeof sub === 'string') jobSubscriptions.push(sub);
  });
  const reads = new BulkReads(deps.client);
  await reads.listProducts(products);
  await reads.listJobs(jobSubscriptions);
  const shown = await readShownParameters(resources, deps.client);
  const out: DriftRow[] = new Array(resources.length);
  let done = 0;
  await eachIndex(resources.length, concurrency, async (i) => {
    out[i] = await checkResource(resources[i], deps, { shown, reads, records: records[i] });
    deps.onProgress?.(++done, resources.length);
  });
  return out;
}

/** Whether a row counts as drift (MODIFIED or DELETED). */
export function isDrifted(row: DriftRow): boolean {
  return row.status === 'MODIFIED' || row.status === 'DELETED';
}

/** One line per row (the handler's log and messages). */
export function describeRow(row: DriftRow): string {
  const diffs = row.differences.map((d) => `${d.property}: ${d.declared} -> ${d.live}`).join('; ');
  return `${row.key} ${row.status}${diffs ? ` (${diffs})` : ''}${row.reason ? ` [${row.reason}]` : ''}`;
}
