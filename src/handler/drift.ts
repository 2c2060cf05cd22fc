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
 * See docs/handler.md ("Drift").
 */
import { DpiClient, Job, Subscription } from '../client';
import { DEFAULT_PIPELINE_METADATA_KEYS, ResourceTypes } from '../contract';
import { isStatus } from './errors';
import { Journal, JournalRecord } from './journal';

/** One deployed resource to check. */
export interface DriftResource {
  /** Stack name. */
  readonly stack: string;
  readonly logicalId: string;
  /** `Custom::Dpi*` */
  readonly type: string;
  readonly physicalId: string;
  /** Journal key; default `<stack>/<logicalId>` (as the handler's `resourceKey()` builds it). */
  readonly key?: string;
}

/** The verdict of one resource. */
export type DriftStatus = 'IN_SYNC' | 'MODIFIED' | 'DELETED' | 'NOT_CHECKED';

/** One property that differs: the declared value (journal) and the live one (service). */
export interface DriftDifference {
  /** The construct prop's name (`status`, `name`, `stageIds`, `productParameters.<key>`, ...). */
  readonly property: string;
  readonly declared: string;
  readonly live: string;
}

/** The result of one resource. */
export interface DriftRow {
  readonly stack: string;
  readonly logicalId: string;
  readonly key: string;
  readonly type: string;
  readonly physicalId: string;
  readonly status: DriftStatus;
  /** MODIFIED: each differing property. */
  readonly differences: DriftDifference[];
  /** Declared properties the service's reads do not show (never reported as drift). */
  readonly notChecked: string[];
  /** Why a resource is DELETED or NOT_CHECKED (and notes, e.g. a history request's live status). */
  readonly reason?: string;
}

/** What the drift check needs. */
export interface DriftDeps {
  readonly client: DpiClient;
  readonly journal: Journal;
  /** Resources checked at once (default 4; each check makes one or two service reads). */
  readonly concurrency?: number;
  /**
   * The stored product parameter under which the handler keeps a unified pipeline's `subscriptions` map (the
   * connection's `pipelineMetadataKeys.subscriptions`).
   * @default 'subscriptions'
   */
  readonly pipelineSubscriptionsKey?: string;
}

/**
 * Stored product parameters by subscription ID, as the vendor's parameter reads show them; `undefined` when the
 * service does not show them (the spec lists no such read).
 */
export type ShownParameters = ReadonlyMap<string, Record<string, string>> | undefined;

/** Resource types whose check uses the stored product parameters. */
const PARAMETER_TYPES = new Set<string>([ResourceTypes.SUBSCRIPTION, ResourceTypes.NOTIFICATION_PIPELINE]);

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

/** What a checker gets besides the row builder and the journal record. */
interface CheckContext {
  readonly client: DpiClient;
  readonly shown: ShownParameters;
  readonly subscriptionsKey: string;
}

/** Whether a resource type is one this library's provider serves. */
export function isDpiType(type: string): boolean {
  return (Object.values(ResourceTypes) as string[]).includes(type);
}

/** Journal states of a record whose remote object no longer belongs to the resource. */
const DONE = new Set(['deleted', 'abandoned']);

/** The journal record of the deployed physical resource: the newest record with that physical ID not marked done. */
function declaredRecord<D>(recs: JournalRecord<D>[], physicalId: string): JournalRecord<D> | undefined {
  return recs.filter((r) => r.physicalId === physicalId && !DONE.has(r.state)).sort((a, b) => (a.id < b.id ? 1 : -1))[0];
}

/** Row builder. */
class Check {
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

/** A 403 read: the connection's account cannot read the record; drift cannot tell, and never calls it gone. */
class RefusedRead extends Error {}

/** A subscription read; undefined only when the service does not know it (404); a 403 throws `RefusedRead`. */
async function readSubscription(client: DpiClient, id: string): Promise<Subscription | undefined> {
  try {
    return await client.subscriptions.get(id);
  } catch (e) {
    if (isStatus(e, 404)) return undefined;
    if (isStatus(e, 403)) throw new RefusedRead('the service refused to show it (403): another account\'s record, or the connection\'s secret holds another account\'s token');
    throw e;
  }
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
  const s = await readSubscription(x.client, c.r.physicalId);
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
  result?: { subscriptions?: Record<string, string> };
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

async function pipelineDrift(c: Check, x: CheckContext, rec: JournalRecord<PipelineDoc> | undefined): Promise<void> {
  const s = await readSubscription(x.client, c.r.physicalId);
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
  const declaredTypes = rec.doc.applied?.types;
  if (declaredTypes && declaredTypes.length > 0) {
    if (live === undefined) c.notChecked.push('notificationTypes');
    else c.diff('notificationTypes', [...declaredTypes].sort(), live);
  }
  c.notChecked.push('deploymentRegion', 'roles');
}

interface LegacyDoc {
  identity?: string;
}

async function legacyDrift(c: Check, { client }: CheckContext, rec: JournalRecord<LegacyDoc> | undefined): Promise<void> {
  const s = await readSubscription(client, c.r.physicalId);
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

async function orderJobsDrift(c: Check, { client }: CheckContext, rec: JournalRecord<OrderJobsDoc> | undefined): Promise<void> {
  if (!rec?.doc.subscriptionId) return c.cannotCheck('no journal record of it (deployed before the journal, or another journal table)');
  let jobs: Job[];
  try {
    jobs = await client.jobs.list({ subscriptionIds: [rec.doc.subscriptionId] });
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

type Checker = (c: Check, x: CheckContext, rec: JournalRecord<never> | undefined) => Promise<void>;

const CHECKERS: Record<string, Checker> = {
  [ResourceTypes.SUBSCRIPTION]: subscriptionDrift as Checker,
  [ResourceTypes.NOTIFICATION_PIPELINE]: pipelineDrift as Checker,
  [ResourceTypes.LEGACY_NOTIFICATION_PIPELINE]: legacyDrift as Checker,
  [ResourceTypes.HISTORY_REQUEST]: historyDrift as Checker,
  [ResourceTypes.PRODUCT_ORDER_JOBS]: orderJobsDrift as Checker,
};

/**
 * Checks one resource. Service and journal failures other than "not found" are thrown. `shown`: the stored
 * parameters already read in bulk (`{ shown: await readShownParameters(...) }`); when omitted, they are read for this resource alone.
 */
export async function checkResource(r: DriftResource, deps: DriftDeps, read?: { readonly shown: ShownParameters }): Promise<DriftRow> {
  const key = r.key ?? `${r.stack}/${r.logicalId}`;
  const c = new Check(r, key);
  const checker = CHECKERS[r.type];
  if (!checker) {
    c.cannotCheck(`not a resource type of this library (${Object.values(ResourceTypes).join(', ')})`);
    return c.row();
  }
  if (!r.physicalId || !/^[A-Za-z0-9_-]+$/.test(r.physicalId)) {
    c.cannotCheck(`no physical ID of a service record (${r.physicalId || 'none'}): the resource was never created`);
    return c.row();
  }
  const rec = declaredRecord<never>(await deps.journal.records<never>(key), r.physicalId);
  const params = read ? read.shown : await readShownParameters([r], deps.client);
  const subscriptionsKey = deps.pipelineSubscriptionsKey || DEFAULT_PIPELINE_METADATA_KEYS.subscriptions;
  try {
    await checker(c, { client: deps.client, shown: params, subscriptionsKey }, rec);
  } catch (e) {
    if (!(e instanceof RefusedRead)) throw e;
    c.cannotCheck(e.message);
  }
  return c.row();
}

/** Checks every resource (a few at a time), in the order given. */
export async function checkDrift(resources: readonly DriftResource[], deps: DriftDeps): Promise<DriftRow[]> {
  const shown = await readShownParameters(resources, deps.client);
  const out: DriftRow[] = new Array(resources.length);
  let next = 0;
  const worker = async (): Promise<void> => {
    while (next < resources.length) {
      const i = next++;
      out[i] = await checkResource(resources[i], deps, { shown });
    }
  };
  await Promise.all(Array.from({ length: Math.max(1, Math.min(deps.concurrency ?? 4, resources.length)) }, worker));
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

/**
 * The explicit journal keys of a template's `Custom::Dpi*` resources (a literal string `JournalKey` property). A
 * `JournalKey` that is not a literal string cannot be known without the deployment: an error naming the stack and resource.
 */
export function journalKeysOfTemplate(stackName: string, templateBody: string): Map<string, string> {
  let template: { Resources?: Record<string, { Type?: string; Properties?: Record<string, unknown> }> };
  try {
    template = JSON.parse(templateBody) as typeof template;
  } catch (e) {
    throw new Error(`the template of stack ${stackName} (GetTemplate) is not JSON (${(e as Error).message}); the journal keys of its resources cannot be read`);
  }
  const out = new Map<string, string>();
  for (const [logicalId, r] of Object.entries(template?.Resources ?? {})) {
    if (!r || typeof r.Type !== 'string' || !r.Type.startsWith('Custom::Dpi')) continue;
    const k = r.Properties?.JournalKey;
    if (k === undefined) continue;
    if (typeof k !== 'string' || k === '') {
      throw new Error(`stack ${stackName}: resource ${logicalId} has a JournalKey that is not a literal string (${JSON.stringify(k)}); `
        + 'its journal key cannot be known from the template');
    }
    out.set(logicalId, k);
  }
  return out;
}
