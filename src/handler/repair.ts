/**
 * `dpi drift --fix`: re-applies a resource's declared state (the lifecycle journal's last confirmed document) where
 * the service now shows something else, through the handler's own convergence code: a subscription through
 * `converge` (subscription-state.ts; one PATCH of what differs: status, name, storage group, product parameters), a
 * unified pipeline through its `converge` (notification-pipeline-state.ts; the unified PATCH re-sends the selection
 * and the stored result follows). What differs is told to `converge` as the state the service confirmed last, so it
 * sends exactly that difference; the journal ends as an Update with the same declaration leaves it.
 *
 * Only a record the journal proves the resource holds (`ownership`) is repaired; what cannot be restored (a field the
 * service keeps, an identity, a history request, jobs) is reported, never changed. Used by the CLI only; the
 * `DriftMonitor` stays read-only.
 */
import { decodeStageIds, DpiClient, ProductRecord, Subscription } from '../client';
import { DEFAULT_PIPELINE_METADATA_KEYS, ResourceTypes } from '../contract';
import { isKindType, PerKind } from '../kinds';
import { expectedTypes } from './drift-checkers';
import { isStatus, messageOf } from './errors';
import { Journal, JournalRecord } from './journal';
import { converge as convergePipeline, PipelineDesired, PipelineDoc, Selection } from './notification-pipeline-state';
import { accountOfArn, sameSet } from './props';
import { Runtime } from './runtime';
import { Applied, converge as convergeSubscription, SubscriptionDesired, SubscriptionDoc } from './subscription-state';
import { CfnEvent } from './types';

/** What a repair did: each property re-applied (`property: live -> declared`), and what it could not restore (and why). */
export interface RepairResult {
  readonly restored: string[];
  readonly notRestored: string[];
}

/** What the repair runtime needs: the CLI's client and journal. */
export interface RepairRuntimeOptions {
  readonly client: DpiClient;
  readonly journal: Journal;
  /** The connection's `pipelineMetadataKeys`. @default the defaults */
  readonly metadataKeys?: { readonly subscriptions?: string; readonly meta?: string };
}

/** A handler runtime over the CLI's client and journal (no deadline beyond the client's own bounds). */
export function repairRuntime(o: RepairRuntimeOptions): Runtime {
  const products = new Map<number, Promise<ProductRecord>>();
  let ids: Promise<{ accountId: string; userId: string }> | undefined;
  return {
    client: o.client,
    journal: o.journal,
    deadline: Date.now() + 60 * 60_000,
    metadataKeys: {
      subscriptions: o.metadataKeys?.subscriptions || DEFAULT_PIPELINE_METADATA_KEYS.subscriptions,
      meta: o.metadataKeys?.meta || DEFAULT_PIPELINE_METADATA_KEYS.meta,
    },
    ids: () => (ids ??= (async () => ({ accountId: (await o.client.account.get()).id, userId: (await o.client.user.get()).id }))()),
    sleep: (ms) => new Promise((r) => setTimeout(r, ms)),
    callerAccountId: async () => {
      throw new Error('dpi drift --fix reads no AWS account');
    },
    journalAt: () => {
      throw new Error('dpi drift --fix reads the stacks\' own journal only');
    },
    product: (id) => {
      let p = products.get(id);
      if (!p) products.set(id, p = o.client.products.get(id));
      return p;
    },
    roleCreatedAt: async () => undefined,
  };
}

/** Record states in which a resource holds its record and may be repaired. */
const REPAIRABLE_STATES: Record<string, ReadonlySet<string>> = {
  [ResourceTypes.SUBSCRIPTION]: new Set(['active']),
  [ResourceTypes.NOTIFICATION_PIPELINE]: new Set(['active']),
  [ResourceTypes.LEGACY_NOTIFICATION_PIPELINE]: new Set(['active']),
};

/**
 * Why `--fix` must leave a resource's record alone (undefined: the journal proves the resource holds it). `owner`: the
 * resource the journal's claim of the subscription names (undefined when no claim is recorded).
 */
export function notOwned(type: string, key: string, physicalId: string, rec: JournalRecord<unknown> | undefined, owner?: string): string | undefined {
  if (!rec) return 'no journal record proves this resource made or adopted it';
  const states = REPAIRABLE_STATES[type];
  if (!states) return undefined;
  if (rec.state === 'released') return 'its journal record is released (kept in the service, no longer managed by the stack)';
  if (!states.has(rec.state)) return `its journal record is ${rec.state}, not active (the next deploy settles it)`;
  const sub = (rec.doc as { subscriptionId?: unknown }).subscriptionId;
  if (rec.physicalId !== physicalId || (typeof sub === 'string' && sub !== physicalId)) return `its journal record names another record (${String(sub ?? rec.physicalId)})`;
  if (owner !== undefined && owner !== key) return `the journal's claim of subscription ${physicalId} names ${owner}`;
  return undefined;
}

/** What `--fix` says of a subscription or pipeline that is gone: an Update (any changed property) makes it anew. */
const MAKE_ANEW = 'to make it anew, change one of its properties (e.g. its name) and deploy (an Update of a gone record creates a new one), '
  + 'or remove it from the app';

/** The live subscription, or a reason it cannot be repaired (gone, refused, ended). */
async function live(rt: Runtime, id: string): Promise<Subscription | string> {
  let s: Subscription;
  try {
    s = await rt.client.subscriptions.get(id);
  } catch (e) {
    if (isStatus(e, 404)) return `subscription ${id} is gone (404): ${MAKE_ANEW}`;
    if (isStatus(e, 403)) return `the service refused to show subscription ${id} (403): nothing changed`;
    throw e;
  }
  if (s.status === 'invalid') return `subscription ${id} is invalid: ${MAKE_ANEW}`;
  if (s.status === 'cancelled') {
    return `subscription ${id} is cancelled and cannot become active again: to make a new one, give the resource a new logical ID and deploy, `
      + 'or remove it from the app';
  }
  return s;
}

/** The stored product parameters a read shows (the record's own, else the parameter read); undefined when not shown. */
async function storedOf(rt: Runtime, s: Subscription): Promise<Record<string, string> | undefined> {
  if (s.product_parameters && typeof s.product_parameters === 'object') return s.product_parameters;
  try {
    return await rt.client.parameters.get(s.id);
  } catch {
    return undefined;
  }
}

const shownText = (v: unknown): string => (v === undefined || v === null || v === '' ? '-' : String(v));

function sameStageIds(a: string | undefined, b: string | undefined): boolean {
  try {
    return a !== undefined && b !== undefined && sameSet(decodeStageIds(a).map(String), decodeStageIds(b).map(String));
  } catch {
    return a === b;
  }
}

/** The declaration of a subscription, as the journal's last confirmed document records it. */
function subscriptionDeclared(doc: SubscriptionDoc, applied: Applied): SubscriptionDesired {
  const params = { ...applied.params };
  delete params.stage_ids;
  return {
    productId: doc.product,
    remoteIdentityId: doc.identity,
    storageGroupId: applied.storageGroupId,
    params,
    stageIds: applied.params.stage_ids !== undefined ? decodeStageIds(applied.params.stage_ids).map(String) : [],
    status: applied.status,
    name: applied.name,
    dateStart: applied.dateStart,
    onDelete: 'invalid',
    removalPolicy: doc.removalPolicy,
  };
}

/** A journal that keeps `previous` as it was (a repair changes no declaration: an UPDATE_ROLLBACK still returns to the same state). */
function keepingPrevious(journal: Journal, previous: Applied | undefined): Journal {
  return { ...journal, save: (rec, state, doc, physicalId) => journal.save(rec, state, { ...doc, previous } as typeof doc, physicalId) };
}

async function repairSubscription(rt: Runtime, rec: JournalRecord<SubscriptionDoc>): Promise<RepairResult> {
  const id = rec.physicalId!;
  const applied = rec.doc.applied;
  if (!applied) return { restored: [], notRestored: ['the journal has no confirmed state of it'] };
  const s = await live(rt, id);
  if (typeof s === 'string') return { restored: [], notRestored: [s] };
  const restored: string[] = [];
  const notRestored: string[] = [];
  const seen: Applied = { ...applied, params: { ...applied.params } };
  if (s.status !== applied.status) restored.push(`status: ${s.status} -> ${applied.status}`);
  if (s.name !== undefined && applied.name !== undefined && (s.name ?? '') !== applied.name) {
    seen.name = s.name ?? '';
    restored.push(`name: ${shownText(s.name)} -> ${applied.name}`);
  }
  if (s.storage_group !== undefined && applied.storageGroupId !== undefined && Number(s.storage_group) !== applied.storageGroupId) {
    seen.storageGroupId = s.storage_group === null ? undefined : Number(s.storage_group);
    restored.push(`storageGroupId: ${shownText(s.storage_group)} -> ${applied.storageGroupId}`);
  }
  const stored = await storedOf(rt, s);
  if (stored) {
    for (const [k, v] of Object.entries(applied.params)) {
      if (k === 'remote_identity_id' || (k === 'stage_ids' ? sameStageIds(stored[k], v) : stored[k] === v)) continue;
      seen.params[k] = stored[k] ?? '';
      restored.push(`${k === 'stage_ids' ? 'stageIds' : `productParameters.${k}`}: ${shownText(stored[k])} -> ${v}`);
    }
  }
  const identity = s.remote_identity;
  if (identity !== undefined && identity !== null && rec.doc.identity !== undefined && String(identity) !== rec.doc.identity) {
    notRestored.push(`remoteIdentityId (${s.remote_identity}, declared ${rec.doc.identity}): another identity is another subscription; redeploy replaces it`);
  }
  for (const k of Object.keys(rec.doc.kept ?? {})) notRestored.push(`productParameters.${k}: kept by the service (no removal possible)`);
  if (restored.length === 0) return { restored, notRestored };
  const rtKeeping = { ...rt, journal: keepingPrevious(rt.journal, rec.doc.previous) };
  await convergeSubscription(rtKeeping, { ...rec, doc: { ...rec.doc, applied: seen } }, subscriptionDeclared(rec.doc, applied), s.status);
  return { restored, notRestored };
}

/** The upstream types a pipeline's stored `subscriptions` map names; undefined when not stored or unreadable. */
function storedTypes(stored: Record<string, string> | undefined, key: string): string[] | undefined {
  try {
    const v = JSON.parse(stored?.[key] ?? 'null') as unknown;
    return v !== null && typeof v === 'object' && !Array.isArray(v) ? Object.keys(v).sort() : undefined;
  } catch {
    return undefined;
  }
}

async function repairPipeline(rt: Runtime, rec: JournalRecord<PipelineDoc>, key: string): Promise<RepairResult> {
  const id = rec.doc.subscriptionId ?? rec.physicalId!;
  const applied: Selection | undefined = rec.doc.applied;
  if (!applied) return { restored: [], notRestored: ['the journal has no confirmed selection of it'] };
  const s = await live(rt, id);
  if (typeof s === 'string') return { restored: [], notRestored: [s] };
  const restored: string[] = [];
  const notRestored: string[] = [];
  if (s.remote_identity !== undefined && s.remote_identity !== null && String(s.remote_identity) !== rec.doc.identity) {
    // Checked before any change: a record showing another identity is not changed at all.
    return { restored, notRestored: [`remoteIdentityId (${s.remote_identity}, declared ${rec.doc.identity}): another identity is another pipeline; redeploy replaces it`] };
  }
  if (s.status !== 'active') {
    // The handler keeps a pipeline's subscription active (it never pauses one): the status is set back alone.
    await rt.client.subscriptions.update(id, { status: 'active' });
    restored.push(`status: ${s.status} -> active`);
  }
  const seen: PipelineDoc = { ...rec.doc };
  const types = storedTypes(await storedOf(rt, s), rt.metadataKeys.subscriptions);
  // Types the last deploy could not subscribe (partialFailure ALLOW) are not drift: re-sending the selection for them
  // would rebuild a healthy pipeline on every run.
  const expected = expectedTypes(rec.doc) ?? applied.types;
  if (types !== undefined && !sameSet(types, expected)) {
    seen.applied = { ...applied, types };
    restored.push(`notificationTypes: ${types.join(',') || '-'} -> ${[...applied.types].sort().join(',')}`);
  }
  if (s.name !== undefined && rec.doc.name !== undefined && (s.name ?? '') !== rec.doc.name) {
    seen.name = s.name ?? '';
    restored.push(`name: ${shownText(s.name)} -> ${rec.doc.name}`);
  }
  if (s.storage_group !== undefined && rec.doc.storageGroupId !== undefined && Number(s.storage_group) !== rec.doc.storageGroupId) {
    seen.storageGroupId = s.storage_group === null ? undefined : Number(s.storage_group);
    restored.push(`storageGroupId: ${shownText(s.storage_group)} -> ${rec.doc.storageGroupId}`);
  }
  const unchanged = seen.applied === rec.doc.applied && seen.name === rec.doc.name && seen.storageGroupId === rec.doc.storageGroupId;
  if (unchanged) return { restored, notRestored };
  const d: PipelineDesired = {
    remoteIdentityId: rec.doc.identity,
    accountType: applied.accountType,
    types: applied.types,
    roleArn: applied.roleArn,
    ebRoleArn: applied.ebRoleArn,
    region: applied.region,
    storageGroupId: rec.doc.storageGroupId,
    name: rec.doc.name,
    // Failed types are reported below (the journal keeps what the service confirmed).
    partialFailure: 'ALLOW',
    removalPolicy: rec.doc.removalPolicy,
  };
  // The roles are the ones the last deploy applied (it checked their account against the stack's): checked against themselves.
  const rolesAccount = accountOfArn(applied.roleArn) ?? '';
  const [stack, ...rest] = key.split('/');
  const event: CfnEvent = {
    RequestType: 'Update',
    StackId: `dpi-drift-fix:${stack}`,
    RequestId: `dpi-drift-fix-${rec.id}`,
    LogicalResourceId: rest.join('/'),
    ResourceType: ResourceTypes.NOTIFICATION_PIPELINE,
    ResourceProperties: {},
    PhysicalResourceId: id,
  };
  await convergePipeline({ ...rt, callerAccountId: async () => rolesAccount }, { ...rec, doc: seen }, d, event);
  const now = (await rt.journal.records<PipelineDoc>(rec.key)).find((r) => r.id === rec.id);
  const failed = Object.keys(now?.doc.result?.failed ?? {});
  if (failed.length > 0) notRestored.push(`notificationTypes ${failed.join(', ')}: the service could not subscribe them (see dpi status)`);
  return { restored, notRestored };
}

async function repairLegacy(rt: Runtime, rec: JournalRecord<{ identity?: string }>): Promise<RepairResult> {
  const s = await live(rt, rec.physicalId!);
  if (typeof s === 'string') return { restored: [], notRestored: [s] };
  const restored: string[] = [];
  if (s.status !== 'active') {
    // As the legacy handler revives a pipeline: the status alone.
    await rt.client.subscriptions.update(s.id, { status: 'active' });
    restored.push(`status: ${s.status} -> active`);
  }
  const notRestored = s.remote_identity !== undefined && s.remote_identity !== null && rec.doc.identity !== undefined
    && String(s.remote_identity) !== rec.doc.identity ? [`remoteIdentityId (${s.remote_identity}, declared ${rec.doc.identity}): the service keeps it`] : [];
  return { restored, notRestored };
}

/** How `drift --fix` re-applies a kind's declared state (a kind that cannot be changed says why). */
export type Repairer = (rt: Runtime, key: string, rec: JournalRecord<unknown>) => Promise<RepairResult>;

const unchangeable = (why: string): Repairer => async () => ({ restored: [], notRestored: [why] });

/** The repair of each kind (one per kind of the registry). */
export const REPAIRERS: PerKind<Repairer> = {
  [ResourceTypes.SUBSCRIPTION]: (rt, _key, rec) => repairSubscription(rt, rec as JournalRecord<SubscriptionDoc>),
  [ResourceTypes.NOTIFICATION_PIPELINE]: (rt, key, rec) => repairPipeline(rt, rec as JournalRecord<PipelineDoc>, key),
  [ResourceTypes.LEGACY_NOTIFICATION_PIPELINE]: (rt, _key, rec) => repairLegacy(rt, rec as JournalRecord<{ identity?: string }>),
  [ResourceTypes.HISTORY_REQUEST]: unchangeable('a history request cannot be changed: redeploy with a new one (another construct ID) or remove it from the app'),
  [ResourceTypes.PRODUCT_ORDER_JOBS]: unchangeable('submitted jobs cannot be changed or re-sent by drift --fix: the next deploy submits what is missing'),
};

/**
 * Re-applies the declared state of one resource whose record `rec` the journal proves it holds (see `notOwned`).
 * Throws on a failed service or journal call (the caller reports it per resource).
 */
export async function repair(rt: Runtime, type: string, key: string, rec: JournalRecord<unknown>): Promise<RepairResult> {
  try {
    if (!isKindType(type)) return { restored: [], notRestored: [`not a resource type of this library (${type})`] };
    return await REPAIRERS[type](rt, key, rec);
  } catch (e) {
    throw new Error(messageOf(e));
  }
}
