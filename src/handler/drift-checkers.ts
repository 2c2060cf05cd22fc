/**
 * The drift checks of each resource type (src/handler/drift.ts runs them): what each compares of the journal's last
 * confirmed document with what the service's reads show. See docs/handler.md ("Drift").
 */
import { DpiClient, Job, Subscription } from '../client';
import { ResourceTypes } from '../contract';
import type { PerKind } from '../kinds';
import type { DriftDifference, DriftResource, DriftRow, ShownParameters } from './drift';
import { BulkReads } from './drift-reads';
import { isStatus } from './errors';
import { JournalRecord } from './journal';

/** What a checker gets besides the row builder and the journal record. */
export interface CheckContext {
  readonly client: DpiClient;
  readonly reads: BulkReads;
  readonly shown: ShownParameters;
  readonly subscriptionsKey: string;
}


/** Row builder. */
export class Check {
  readonly differences: DriftDifference[] = [];
  readonly notChecked: string[] = [];
  private deleted?: string;
  private note?: string;
  private unchecked?: string;

  constructor(readonly r: DriftResource, readonly key: string) {}

  diff(property: string, declared: unknown, live: unknown): void {
    const d = text(declared);
    const l = text(live);
    if (d !== l) this.differences.push({ property, declared: d, live: l });
  }

  /** Compares when the read shows the field and the declaration has a value; otherwise records it as not checked. */
  compare(property: string, declared: unknown, live: unknown): void {
    if (declared === undefined || declared === null || declared === '') return;
    if (live === undefined) {
      this.notChecked.push(property);
      return;
    }
    this.diff(property, declared, live);
  }

  gone(reason: string): void {
    this.deleted = reason;
  }

  noteThat(note: string): void {
    this.note = note;
  }

  cannotCheck(reason: string): void {
    this.unchecked = reason;
  }

  row(): DriftRow {
    const base = { stack: this.r.stack, logicalId: this.r.logicalId, key: this.key, type: this.r.type, physicalId: this.r.physicalId };
    if (this.deleted !== undefined) return { ...base, status: 'DELETED', differences: [], notChecked: [], reason: this.deleted };
    if (this.unchecked !== undefined) return { ...base, status: 'NOT_CHECKED', differences: [], notChecked: [], reason: this.unchecked };
    const notChecked = [...new Set(this.notChecked)];
    return {
      ...base,
      status: this.differences.length > 0 ? 'MODIFIED' : 'IN_SYNC',
      differences: this.differences,
      notChecked,
      ...(this.note !== undefined ? { reason: this.note } : {}),
    };
  }
}

/** A value as the table shows it (lists joined with commas; absent as `-`). */
function text(v: unknown): string {
  if (v === undefined || v === null || v === '') return '-';
  if (Array.isArray(v)) return v.length === 0 ? '-' : v.map(String).join(',');
  return String(v);
}

/** `stage_ids` (a stringified JSON array) as a sorted list of IDs; undefined when absent or unreadable. */
function stageIdsOf(encoded: string | undefined): string[] | undefined {
  if (encoded === undefined) return undefined;
  try {
    const v = JSON.parse(encoded) as unknown;
    return Array.isArray(v) ? v.map((x) => String(x)).sort((a, b) => Number(a) - Number(b) || (a < b ? -1 : a > b ? 1 : 0)) : [encoded];
  } catch {
    return [encoded];
  }
}

/** The product parameters a read shows (`product_parameters`, or the unversioned meta array); undefined when none. */
function shownParameters(s: Subscription): Record<string, string> | undefined {
  if (s.product_parameters && typeof s.product_parameters === 'object') return s.product_parameters;
  const meta = (s as { subscription_product_meta_attributes?: unknown }).subscription_product_meta_attributes;
  if (Array.isArray(meta)) {
    const out: Record<string, string> = {};
    for (const m of meta as Array<{ data_key?: unknown; data_value?: unknown }>) {
      if (typeof m?.data_key === 'string') out[m.data_key] = String(m.data_value ?? '');
    }
    return out;
  }
  return undefined;
}

const ENDED = new Set(['invalid', 'cancelled']);

/** The read fields of a subscription that the vendor's reads show (compared when shown). */
function compareShown(c: Check, s: Subscription, declared: { name?: string; storageGroupId?: number; identity?: string }): void {
  c.compare('name', declared.name, s.name === null ? '' : s.name);
  c.compare('storageGroupId', declared.storageGroupId, s.storage_group === null ? '' : s.storage_group);
  c.compare('remoteIdentityId', declared.identity, s.remote_identity === null ? '' : s.remote_identity);
}

interface SubscriptionDoc {
  identity?: string;
  applied?: { params: Record<string, string>; status: string; name?: string; storageGroupId?: number };
  kept?: Record<string, string>;
  unrestored?: string[];
}

async function subscriptionDrift(c: Check, x: CheckContext, rec: JournalRecord<SubscriptionDoc> | undefined): Promise<void> {
  const s = await x.reads.subscription(c.r.physicalId);
  if (!s) return c.gone('not found (404)');
  if (ENDED.has(s.status)) return c.gone(`status ${s.status}`);
  const applied = rec?.doc.applied;
  if (!applied) return c.cannotCheck(rec ? 'the journal has no confirmed state of it yet' : 'no journal record of it (deployed before the journal, or another journal table)');
  c.diff('status', applied.status, s.status);
  compareShown(c, s, { name: applied.name, storageGroupId: applied.storageGroupId, identity: rec?.doc.identity });
  // Stored parameters a rollback (or revert) dropped and the service keeps: the declaration has none of them.
  for (const [k, v] of Object.entries(rec?.doc.kept ?? {})) c.diff(`productParameters.${k} (kept by the service; no removal possible)`, undefined, v);
  for (const u of rec?.doc.unrestored ?? []) c.noteThat(`not restored when released: ${u}`);
  const shown = shownParameters(s) ?? x.shown?.get(c.r.physicalId);
  const declared = applied.params ?? {};
  const stageIds = stageIdsOf(declared.stage_ids);
  const keys = Object.keys(declared).filter((k) => k !== 'stage_ids' && k !== 'remote_identity_id').sort();
  if (!shown) {
    if (keys.length > 0) c.notChecked.push('productParameters');
    if (stageIds) c.notChecked.push('stageIds');
    return;
  }
  for (const k of keys) c.diff(`productParameters.${k}`, declared[k], shown[k]);
  if (stageIds) c.diff('stageIds', stageIds, stageIdsOf(shown.stage_ids) ?? []);
}

interface PipelineDoc {
  identity?: string;
  subscriptionId?: string;
  applied?: { types: string[]; roleArn: string; ebRoleArn?: string; region: string };
  result?: { subscriptions?: Record<string, string>; failed?: Record<string, unknown> };
  name?: string;
  storageGroupId?: number;
}

/** The upstream types a pipeline's stored `subscriptions` map names (sorted); undefined when not stored or unreadable. */
function storedTypes(stored: Record<string, string> | undefined, key: string): string[] | undefined {
  const raw = stored?.[key];
  if (raw === undefined) return undefined;
  try {
    const v = JSON.parse(raw) as unknown;
    return v !== null && typeof v === 'object' && !Array.isArray(v) ? Object.keys(v).sort() : undefined;
  } catch {
    return undefined;
  }
}

/**
 * The types a pipeline is expected to store: the applied selection without the types the service could not subscribe
 * (a `partialFailure: ALLOW` deploy's failures are kept as `result.failed`; the stored map holds successes only).
 */
export function expectedTypes(doc: { applied?: { types: string[] }; result?: { failed?: Record<string, unknown> } }): string[] | undefined {
  const failed = new Set(Object.keys(doc.result?.failed ?? {}));
  return doc.applied?.types.filter((t) => !failed.has(t)).sort();
}

async function pipelineDrift(c: Check, x: CheckContext, rec: JournalRecord<PipelineDoc> | undefined): Promise<void> {
  const s = await x.reads.subscription(c.r.physicalId);
  if (!s) return c.gone('its product-107 subscription was not found (404)');
  if (ENDED.has(s.status)) return c.gone(`its product-107 subscription is ${s.status}`);
  if (!rec) return c.cannotCheck('no journal record of it (deployed before the journal, or another journal table)');
  if (rec.state === 'updating') c.noteThat('an update of it has no confirmed outcome (the next deploy re-applies it)');
  c.diff('status', 'active', s.status);
  compareShown(c, s, { name: rec.doc.name, storageGroupId: rec.doc.storageGroupId, identity: rec.doc.identity });
  // The service offers no read of a pipeline itself. The vendor's parameter reads show what its product-107
  // subscription stores: the unified result's `subscriptions` map (type -> upstream ID), kept up to date by whoever
  // changes the pipeline (the vendor's tutorial: the stored keys follow each unified PATCH). Its region and roles are
  // stored nowhere a read shows.
  const live = storedTypes(x.shown?.get(c.r.physicalId), x.subscriptionsKey);
  const declaredTypes = expectedTypes(rec.doc);
  if (declaredTypes && declaredTypes.length > 0) {
    if (live === undefined) c.notChecked.push('notificationTypes');
    else c.diff('notificationTypes', declaredTypes, live);
  }
  c.notChecked.push('deploymentRegion', 'roles');
}

interface LegacyDoc {
  identity?: string;
}

async function legacyDrift(c: Check, { reads }: CheckContext, rec: JournalRecord<LegacyDoc> | undefined): Promise<void> {
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

interface HistoryDoc {
  request?: string;
}

async function historyDrift(c: Check, { client }: CheckContext, rec: JournalRecord<HistoryDoc> | undefined): Promise<void> {
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

interface OrderJobsDoc {
  subscriptionId?: string;
  submitted?: string[];
  jobIds?: string[];
}

function orderIdsOf(job: Job): string[] | undefined {
  if (typeof job.extra_context !== 'string') return undefined;
  try {
    const o = JSON.parse(job.extra_context) as { order_ids?: unknown };
    return Array.isArray(o.order_ids) ? o.order_ids.map(String) : [];
  } catch {
    return [];
  }
}

async function orderJobsDrift(c: Check, { reads }: CheckContext, rec: JournalRecord<OrderJobsDoc> | undefined): Promise<void> {
  if (!rec?.doc.subscriptionId) return c.cannotCheck('no journal record of it (deployed before the journal, or another journal table)');
  let jobs: Job[];
  try {
    jobs = await reads.jobsOf(rec.doc.subscriptionId, [c.r.physicalId, ...(rec.doc.jobIds ?? [])]);
  } catch (e) {
    if (isStatus(e, 403)) return c.cannotCheck(`the service refused to list the jobs of subscription ${rec.doc.subscriptionId} (403)`);
    if (isStatus(e, 404)) return c.gone(`its subscription ${rec.doc.subscriptionId} was not found (404)`);
    throw e;
  }
  const byId = new Map(jobs.map((j) => [String(j.id), j]));
  if (!byId.has(c.r.physicalId)) return c.gone(`primary job ${c.r.physicalId} is not listed for subscription ${rec.doc.subscriptionId}`);
  const declaredJobs = rec.doc.jobIds ?? [];
  const listed = declaredJobs.filter((id) => byId.has(id));
  c.diff('jobIds', declaredJobs, listed);
  const submitted = [...(rec.doc.submitted ?? [])].sort();
  const perJob = listed.map((id) => orderIdsOf(byId.get(id)!));
  if (submitted.length > 0 && (perJob.length === 0 || perJob.some((x) => x === undefined))) {
    c.notChecked.push('orderIds');
    return;
  }
  c.diff('orderIds', submitted, [...new Set(perJob.flatMap((x) => x ?? []))].sort());
}

export type Checker = (c: Check, x: CheckContext, rec: JournalRecord<never> | undefined) => Promise<void>;

/** The drift check of each kind (one per kind of the registry). */
export const CHECKERS: PerKind<Checker> = {
  [ResourceTypes.SUBSCRIPTION]: subscriptionDrift as Checker,
  [ResourceTypes.NOTIFICATION_PIPELINE]: pipelineDrift as Checker,
  [ResourceTypes.LEGACY_NOTIFICATION_PIPELINE]: legacyDrift as Checker,
  [ResourceTypes.HISTORY_REQUEST]: historyDrift as Checker,
  [ResourceTypes.PRODUCT_ORDER_JOBS]: orderJobsDrift as Checker,
};

