import { ApiError, Ctx, errorsBody, fail, isObj, Principal } from './core';
import { EmulatorFixtures, ProductFixture, RemoteIdentityFixture, SubscriptionFixture } from './fixtures';
import { accountTypeOfIdentityType, isValidNotificationType } from './notification-types';
import { EmulatorState, JobRecord, SubscriptionRecord } from './state';

type Keyed = Record<string, unknown>;

/** A safe integer (fixture IDs; `1e308` is not one). */
const int = (v: unknown): v is number => typeof v === 'number' && Number.isSafeInteger(v);

/** The `meta_format` values of a remote identity meta record (vendor doc remote-identity-api.md). */
export const META_FORMATS: readonly string[] = ['STRING', 'JSON', 'ENCRYPTED_STRING', 'ENCRYPTED_JSON'];

/** The key of a fixture record of each keyed list (undefined: the record lacks a required field). */
export const KEYS: Record<string, (r: Keyed) => string | undefined> = {
  accounts: (r) => (int(r.id) ? String(r.id) : undefined),
  users: (r) => (int(r.id) && int(r.account) ? String(r.id) : undefined),
  refreshTokens: (r) => (typeof r.token === 'string' && int(r.accountId) && int(r.userId) ? r.token : undefined),
  products: (r) => (int(r.id) && typeof r.name === 'string' ? String(r.id) : undefined),
  productCards: (r) => (int(r.id) ? String(r.id) : undefined),
  payloads: (r) => ((typeof r.id === 'string' || int(r.id)) && int(r.product)
    && typeof r.name === 'string' && int(r.stage_id) ? String(r.id) : undefined),
  remoteIdentities: (r) => (int(r.id) && int(r.account) && int(r.remote_identity_type_id) ? String(r.id) : undefined),
  remoteIdentityTypes: (r) => (int(r.id) && typeof r.name === 'string' ? String(r.id) : undefined),
  remoteIdentityMeta: (r) => (int(r.id) && int(r.remote_identity) && int(r.remote_identity_type_meta_key)
    && typeof r.meta_value === 'string' && META_FORMATS.includes(r.meta_format as string)
    && (r.key_name === undefined || typeof r.key_name === 'string') ? String(r.id) : undefined),
  storages: (r) => (int(r.id) && int(r.account) ? String(r.id) : undefined),
  subscriptions: (r) => (int(r.id) && int(r.account) && int(r.user) && int(r.product) ? String(r.id) : undefined),
  marketplaces: (r) => (typeof r.id === 'string' ? r.id : undefined),
  credentials: (r) => (typeof r.client_id === 'string' && typeof r.client_secret === 'string' && typeof r.refresh_token === 'string'
    && typeof r.region === 'string' && typeof r.selling_partner_id === 'string' ? `${r.client_id}|${r.refresh_token}` : undefined),
  asins: (r) => (typeof r.marketplaceId === 'string' && typeof r.asin === 'string' ? `${r.marketplaceId}|${r.asin}` : undefined),
  cloudRoles: (r) => (typeof r.accountId === 'string' && typeof r.roleArn === 'string' ? r.roleArn : undefined),
  legacyPipelines: (r) => (int(r.subscriptionId) && int(r.remoteIdentityId) && typeof r.queueArn === 'string'
    && Array.isArray(r.notificationTypes) ? String(r.subscriptionId) : undefined),
};

export const LISTS = ['failingNotificationTypes', 'failingCleanupSubscriptions', 'failingHistorySubscriptions', 'failingCatalogProducts'] as const;

function upsert<T>(list: T[], rec: T, key: (r: T) => string | undefined, merge: boolean): void {
  const k = key(rec);
  const i = list.findIndex((r) => key(r) === k);
  if (i < 0) list.push(rec);
  else list[i] = merge ? { ...list[i], ...rec } : rec;
}

function keyOf(name: string): (r: unknown) => string | undefined {
  return (r) => KEYS[name](r as Keyed);
}

/** Merges fixture records into the state (upsert by key). Throws 400 for invalid input. Returns counts per key. */
export function applyFixtures(ctx: Ctx, fx: unknown): Record<string, number> {
  if (!isObj(fx)) fail(400, 'fixtures must be a JSON object');
  const s = ctx.s;
  const counts: Record<string, number> = {};
  for (const [name, value] of Object.entries(fx)) {
    if (name === 'historyMaxRequests') {
      if (typeof value !== 'number' || !Number.isSafeInteger(value) || value < 0) fail(400, 'historyMaxRequests must be a non-negative integer');
      s.historyMaxRequests = value;
      counts[name] = 1;
      continue;
    }
    if (name === 'pageSize') {
      if (typeof value !== 'number' || !Number.isSafeInteger(value) || value < 1 || value > 1000) fail(400, 'pageSize must be an integer 1-1000');
      s.pageSize = value;
      counts[name] = 1;
      continue;
    }
    if ((LISTS as readonly string[]).includes(name)) {
      const wantString = name === 'failingNotificationTypes';
      if (!Array.isArray(value) || value.some((v) => (wantString ? typeof v !== 'string' : !int(v)))) {
        fail(400, `${name} must be an array of ${wantString ? 'strings' : 'numbers'}`);
      }
      (s as unknown as Record<string, unknown>)[name] = [...value];
      counts[name] = value.length;
      continue;
    }
    if (!(name in KEYS)) fail(400, `unknown fixtures key '${name}'`);
    if (!Array.isArray(value)) fail(400, `fixtures.${name} must be an array`);
    value.forEach((rec, i) => {
      if (!isObj(rec) || KEYS[name](rec) === undefined) fail(400, `fixtures.${name}[${i}] is missing required fields or has wrong types`);
    });
    counts[name] = value.length;
  }
  // Valid: apply in dependency order.
  const f = fx as EmulatorFixtures & Record<string, unknown>;
  for (const r of f.accounts ?? []) upsert(s.accounts, r, keyOf('accounts'), true);
  for (const r of f.users ?? []) upsert(s.users, r, keyOf('users'), true);
  for (const r of f.refreshTokens ?? []) upsert(s.refreshTokens, r, keyOf('refreshTokens'), false);
  for (const r of f.products ?? []) upsert(s.products, normalizeProduct(r), keyOf('products'), true);
  for (const r of f.productCards ?? []) {
    const existing = s.products.find((p) => p.id === r.id);
    if (existing) Object.assign(existing, r);
    else s.products.push(normalizeProduct({ name: `Product ${r.id}`, ...r }));
  }
  for (const r of f.payloads ?? []) upsert(s.payloads, { enabled: true, ...r }, keyOf('payloads'), true);
  for (const r of f.remoteIdentities ?? []) upsert(s.remoteIdentities, r, keyOf('remoteIdentities'), true);
  for (const r of f.remoteIdentityTypes ?? []) upsert(s.remoteIdentityTypes ??= [], r, keyOf('remoteIdentityTypes'), true);
  for (const r of f.remoteIdentityMeta ?? []) upsert(s.remoteIdentityMeta ??= [], r, keyOf('remoteIdentityMeta'), true);
  for (const r of f.storages ?? []) upsert(s.storages, { status: 'active', ...r }, keyOf('storages'), true);
  for (const r of f.marketplaces ?? []) upsert(s.marketplaces, r, keyOf('marketplaces'), true);
  for (const r of f.credentials ?? []) upsert(s.credentials, r, keyOf('credentials'), true);
  for (const r of f.asins ?? []) upsert(s.asins, r, keyOf('asins'), true);
  for (const r of f.cloudRoles ?? []) upsert(s.cloudRoles, r, keyOf('cloudRoles'), true);
  for (const r of f.subscriptions ?? []) {
    const rec = subscriptionFromFixture(r, ctx.now());
    const isNew = !s.subscriptions.some((x) => x.id === rec.id);
    upsert(s.subscriptions, rec, (x) => String(x.id), false);
    if (rec.id > s.counters.subscription) s.counters.subscription = rec.id;
    if (isNew) createPrimaryJob(ctx, rec);
  }
  for (const r of f.legacyPipelines ?? []) seedLegacyPipeline(ctx, r.subscriptionId, r.remoteIdentityId, r.queueArn, r.notificationTypes);
  return counts;
}

function normalizeProduct(p: ProductFixture): ProductFixture {
  const storage = p.is_storage_product === 1;
  return {
    product_group_id: 1,
    summary: '',
    description: null,
    worker_name: storage ? null : 'worker',
    remote_identity_type_name: null,
    remote_identity_type_id: null,
    is_storage_product: 0,
    active: 1,
    allow_as_trial: 0,
    premium_product: 0,
    initialize_job: 0,
    subscription_info: null,
    backend_info: storage ? null : [],
    history_info: storage ? null : [],
    stages: null,
    required_meta_fields: [],
    ...p,
  };
}

function subscriptionFromFixture(r: SubscriptionFixture, now: number): SubscriptionRecord {
  return {
    id: r.id,
    account: r.account,
    user: r.user,
    product: r.product,
    name: r.name ?? '',
    status: r.status ?? 'active',
    date_start: r.date_start ?? new Date(now * 1000).toISOString(),
    date_end: r.date_end ?? null,
    remote_identity: r.remote_identity ?? null,
    storage_group: r.storage_group ?? null,
    product_parameters: { ...(r.product_parameters ?? {}) },
    created_at: now,
    updated_at: now,
  };
}

/** Job IDs: `j-<n>` in minimal mode (the spec shows no format), numeric strings in vendor mode (as documented). */
export function newJobId(ctx: Ctx): string {
  const n = ++ctx.s.counters.job;
  return ctx.reads === 'vendor' ? String(4100000 + n) : `j-${n}`;
}

/** History transaction IDs: `h-<n>` in minimal mode, numeric strings in vendor mode (as documented). */
export function newHistoryId(ctx: Ctx): string {
  const n = ++ctx.s.counters.history;
  return ctx.reads === 'vendor' ? String(72000 + n) : `h-${n}`;
}

/** Creates the primary job of a new subscription when its product has `initialize_job = 1`. */
export function createPrimaryJob(ctx: Ctx, sub: SubscriptionRecord): JobRecord | undefined {
  const product = ctx.s.products.find((p) => p.id === sub.product);
  if (!product || product.initialize_job !== 1) return undefined;
  if (ctx.s.jobs.some((j) => j.subscription_id === sub.id && j.is_primary)) return undefined;
  const job: JobRecord = {
    id: newJobId(ctx),
    account: sub.account,
    subscription_id: sub.id,
    is_primary: true,
    parent_job_id: null,
    stage_id: null,
    valid_date_start: null,
    valid_date_end: null,
    extra_context: null,
    request_start: null,
    request_end: null,
    schedule: product.backend_info?.[0]?.base_schedule_start ?? null,
    created_at: ctx.now(),
  };
  ctx.s.jobs.push(job);
  return job;
}

/** Registers an existing legacy pipeline: a queue destination and one upstream subscription per type. */
export function seedLegacyPipeline(ctx: Ctx, subscriptionId: number, remoteIdentityId: number, queueArn: string, types: unknown[]): void {
  const s = ctx.s;
  removeLegacyPipeline(s, subscriptionId);
  const parts = queueArn.split(':');
  const destinationId = `legacy-dest-${++s.counters.destination}`;
  s.destinations.push({
    id: destinationId, kind: 'sqs', arn: queueArn, accountId: parts[4] ?? '', region: parts[3] ?? '', shared: false, legacySubscriptionId: subscriptionId,
  });
  const subscriptions: Record<string, string> = {};
  for (const t of types) {
    const name = String(t);
    const id = `upstream-${++s.counters.upstream}`;
    s.upstreamSubscriptions.push({
      id, remoteIdentityId, notificationType: name, destinationId, enabled: true, createdAt: ctx.now(), legacySubscriptionId: subscriptionId,
    });
    subscriptions[name] = id;
  }
  s.legacyPipelines.push({ subscriptionId, remoteIdentityId, queueArn, destinationId, subscriptions });
}

export function removeLegacyPipeline(s: EmulatorState, subscriptionId: number): void {
  s.upstreamSubscriptions = s.upstreamSubscriptions.filter((u) => u.legacySubscriptionId !== subscriptionId);
  s.destinations = s.destinations.filter((d) => d.legacySubscriptionId !== subscriptionId);
  s.legacyPipelines = s.legacyPipelines.filter((p) => p.subscriptionId !== subscriptionId);
}

/** The subscription of the given ID: 404 when unknown, 403 when another account's. */
export function ownedSubscription(s: EmulatorState, who: Principal, id: number): SubscriptionRecord {
  const sub = s.subscriptions.find((x) => x.id === id);
  if (!sub) fail(404, `subscription ${id} not found`);
  if (sub.account !== who.account) fail(403, `subscription ${id} does not belong to account ${who.account}`);
  return sub;
}

/** A remote identity of the caller's account: 404 when unknown, 403 when another account's. */
export function ownedIdentity(s: EmulatorState, who: Principal, rawId: unknown): RemoteIdentityFixture {
  const id = typeof rawId === 'string' && /^\d{1,15}$/.test(rawId) ? Number(rawId) : undefined;
  const ri = id === undefined ? undefined : s.remoteIdentities.find((r) => r.id === id);
  if (!ri) fail(404, `remote identity ${String(rawId)} not found`);
  if (ri.account !== who.account) fail(403, `remote identity ${ri.id} does not belong to account ${who.account}`);
  return ri;
}

/** A seller (17) or vendor (18) identity of the caller's account, else 400/403/404. */
export function spIdentity(s: EmulatorState, who: Principal, rawId: unknown): RemoteIdentityFixture {
  const ri = ownedIdentity(s, who, rawId);
  if (ri.remote_identity_type_id !== 17 && ri.remote_identity_type_id !== 18) {
    fail(400, `remote identity ${ri.id} is of type ${ri.remote_identity_type_id}; a seller (17) or vendor (18) identity is required`);
  }
  return ri;
}

/** Checks every type name for the identity's account type (400 naming the first bad one). */
export function checkTypes(types: unknown, identity: RemoteIdentityFixture): string[] {
  if (!Array.isArray(types) || types.length === 0) fail(400, 'notification_types must be a non-empty array of strings');
  const accountType = accountTypeOfIdentityType(identity.remote_identity_type_id);
  const out: string[] = [];
  for (const t of types) {
    if (typeof t !== 'string' || t === '') fail(400, 'notification_types must be a non-empty array of strings');
    if (!isValidNotificationType(t, accountType)) fail(400, `notification type '${t}' is not supported for ${accountType} accounts`);
    if (!out.includes(t)) out.push(t);
  }
  return out;
}

export function apiError(status: number, detail: string): ApiError {
  return new ApiError(status, errorsBody(status, detail), detail);
}
