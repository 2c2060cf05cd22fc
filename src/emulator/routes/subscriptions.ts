// fastify is bundled into the dpi CLI by esbuild, so a devDependency is enough.
// eslint-disable-next-line import/no-extraneous-dependencies
import { FastifyInstance, FastifyRequest } from 'fastify';
import { Ctx, envelopeAttributes, fail, isDateTime, isObj, parseIntStrict, pathId, principal, Principal, queryOne } from '../core';
import { createPrimaryJob, ownedSubscription } from '../domain';
import { invalidatedAt, subscriptionFilter } from '../filters';
import { ProductFixture } from '../fixtures';
import { SubscriptionRecord } from '../state';
import { isoSeconds, listBody } from '../views';
import { registerAccountRoutes } from './accounts';
import { registerIdentityRoutes, usableBy } from './identities';
import { registerParameterRoutes } from './parameters';
import { registerProductRoutes } from './products';
import { registerStorageRoutes } from './storages';

const STATUSES = ['active', 'paused', 'cancelled', 'invalid'];

/** Which representation a subscription answer uses: the v2 routes or the unversioned (v1) ones. */
export type SubscriptionForm = 'v2' | 'v1';

/**
 * A subscription as the read mode shows it. minimal: `{type, id, attributes: {status}}` (the spec shows nothing
 * else). vendor: the documented smaller v2 representation (`*_id` references, dates; no parameters); the
 * unversioned routes add `date_end`.
 */
export function subscriptionView(ctx: Ctx, sub: SubscriptionRecord, form: SubscriptionForm): Record<string, unknown> {
  if (ctx.reads === 'minimal') return { type: 'Subscription', id: String(sub.id), attributes: { status: sub.status } };
  const attributes: Record<string, unknown> = {
    status: sub.status,
    date_start: sub.date_start,
    created_at: isoSeconds(sub.created_at),
    modified_at: isoSeconds(sub.updated_at),
    name: sub.name,
    invalidated_at: invalidatedAt(sub) === null ? null : isoSeconds(sub.updated_at),
    account_id: sub.account,
    product_id: sub.product,
    subproduct_id: 'default',
    remote_identity_id: sub.remote_identity,
    storage_group_id: sub.storage_group,
    multi_storage_parent_id: null,
    user_id: sub.user,
  };
  if (form === 'v1') attributes.date_end = sub.date_end;
  return { type: 'Subscription', id: String(sub.id), attributes };
}

function intAttr(attrs: Record<string, unknown>, key: string, required: boolean): number | undefined {
  const v = attrs[key];
  if (v === undefined || v === null) {
    if (required) fail(400, `${key} is required`);
    return undefined;
  }
  const n = parseIntStrict(v);
  if (n === undefined) fail(400, `${key} must be an integer`);
  return n;
}

/** `product_parameters`: a flat object whose every value is a string (null is not a deletion: 400). */
function checkParams(pp: unknown): Record<string, string> {
  if (pp === undefined) return {};
  if (!isObj(pp)) fail(400, 'product_parameters must be a flat object of strings');
  for (const [k, v] of Object.entries(pp)) {
    if (typeof v !== 'string') fail(400, `product_parameters.${k} must be a string (every value is a string; null does not delete a parameter)`);
  }
  return { ...(pp as Record<string, string>) };
}

/** `remote_identity_id` in the parameters is accepted only when it equals the subscription's `remote_identity`. */
function checkParamIdentity(params: Record<string, string>, ri: number | null | undefined): void {
  const v = params.remote_identity_id;
  if (v === undefined) return;
  if (ri === undefined || ri === null || parseIntStrict(v) !== ri) {
    fail(400, `product_parameters.remote_identity_id (${v}) must equal remote_identity (${ri ?? 'absent'}); set the identity through remote_identity`);
  }
}

/** Checks the stored parameters against the product (required meta, stage IDs). */
function checkProductRules(ctx: Ctx, product: ProductFixture, params: Record<string, string>): void {
  for (const key of product.required_meta_fields ?? []) {
    if (params[key] === undefined || params[key] === '') fail(400, `product ${product.id} requires product_parameters.${key}`);
  }
  if (params.stage_ids !== undefined) {
    let ids: unknown;
    try {
      ids = JSON.parse(params.stage_ids);
    } catch {
      fail(400, 'product_parameters.stage_ids must be a stringified JSON array of integers');
    }
    if (!Array.isArray(ids) || ids.some((x) => typeof x !== 'number' || !Number.isInteger(x))) {
      fail(400, 'product_parameters.stage_ids must be a stringified JSON array of integers');
    }
    const known = new Set<number>([
      ...(product.stages ?? []).map((st) => st.stage_id),
      ...ctx.s.payloads.filter((p) => p.product === product.id).map((p) => p.stage_id),
    ]);
    for (const id of ids as number[]) {
      if (id < 1000) fail(400, `stage_id ${id} is a legacy stage; named stages are >= 1000`);
      if (!known.has(id)) fail(400, `stage_id ${id} is not a stage of product ${product.id}`);
    }
  }
}

function checkIdentity(ctx: Ctx, who: Principal, product: ProductFixture, ri: number | undefined): void {
  const needs = product.remote_identity_type_id != null;
  if (needs && ri === undefined) fail(400, `product ${product.id} requires remote_identity`);
  if (!needs && ri !== undefined) fail(400, `product ${product.id} does not use a remote identity; omit remote_identity`);
  if (ri !== undefined) {
    const identity = ctx.s.remoteIdentities.find((r) => r.id === ri);
    if (!identity || !usableBy(identity, who.account)) fail(400, `remote identity ${ri} not found for account ${who.account} (neither its own nor shared with it)`);
    // The vendor (subscriptions-api.md, "Remote identity reconciliation"): a supplied identity must be valid.
    if (identity.invalid_identity === 1) fail(400, `remote identity ${ri} cannot be attached: its credentials were revoked or expired (invalid_identity 1); the seller must re-authorize it`);
  }
}

/**
 * The remote identity a v2 body supplies, in any of the locations the vendor documents (subscriptions-api.md, "Remote
 * identity reconciliation"): `remote_identity`, `remote_identity_id`, `product_parameters.remote_identity_id`. Several
 * are allowed when they name the same identity (numbers and numeric strings compare equal), else 400. Returns the
 * attributes with the identity in `remote_identity` only (null: cleared; absent: not supplied) and the parameters
 * without `remote_identity_id` (it is derived from the identity).
 */
function reconcileIdentity(attrs: Record<string, unknown>, params: Record<string, string> | undefined):
{ attrs: Record<string, unknown>; params: Record<string, string> | undefined } {
  const given: Array<[string, unknown]> = [];
  if (attrs.remote_identity !== undefined) given.push(['remote_identity', attrs.remote_identity]);
  if (attrs.remote_identity_id !== undefined) given.push(['remote_identity_id', attrs.remote_identity_id]);
  if (params?.remote_identity_id !== undefined) given.push(['product_parameters.remote_identity_id', params.remote_identity_id]);
  const { remote_identity_id: _attr, ...rest } = attrs;
  if (given.length === 0) return { attrs: rest, params };
  const values = given.map(([k, v]) => {
    if (v === null) return null;
    const n = parseIntStrict(v);
    if (n === undefined) fail(400, `${k} must be an integer (got ${JSON.stringify(v)})`);
    return n;
  });
  if (values.some((v) => v !== values[0])) {
    fail(400, `conflicting remote identity values: ${given.map(([k, v]) => `${k}=${JSON.stringify(v)}`).join(', ')}; they must name the same identity`);
  }
  const { remote_identity_id: _param, ...others } = params ?? {};
  return { attrs: { ...rest, remote_identity: values[0] }, params: params === undefined ? undefined : others };
}

function checkStorage(ctx: Ctx, who: Principal, sg: number | undefined): void {
  if (sg === undefined) return;
  const st = ctx.s.storages.find((x) => x.id === sg);
  if (!st || st.account !== who.account) fail(400, `storage_group ${sg} not found for account ${who.account}`);
}

function createSubscription(ctx: Ctx, who: Principal, attrs: Record<string, unknown>, params: Record<string, string>): SubscriptionRecord {
  const account = intAttr(attrs, 'account', true)!;
  const user = intAttr(attrs, 'user', true)!;
  const productId = intAttr(attrs, 'product', true)!;
  if (attrs.status === undefined) fail(400, 'status is required');
  if (attrs.status !== 'active' && attrs.status !== 'paused') fail(400, "status must be 'active' (or 'paused') on create");
  if (attrs.date_start === undefined) fail(400, 'date_start is required');
  if (!isDateTime(attrs.date_start)) fail(400, 'date_start must be an ISO 8601 datetime');
  if (attrs.date_end !== undefined && attrs.date_end !== null && !isDateTime(attrs.date_end)) fail(400, 'date_end must be an ISO 8601 datetime');
  if (attrs.name !== undefined && attrs.name !== null && typeof attrs.name !== 'string') fail(400, 'name must be a string');
  if (account !== who.account) fail(403, `account ${account} does not match the authenticated account`);
  if (user !== who.user) fail(403, `user ${user} does not match the authenticated user`);
  const product = ctx.s.products.find((p) => p.id === productId);
  if (!product) fail(400, `product ${productId} does not exist`);
  if (product.active === 0) fail(400, `product ${productId} is not active`);
  const ri = intAttr(attrs, 'remote_identity', false);
  const sg = intAttr(attrs, 'storage_group', false);
  checkIdentity(ctx, who, product, ri);
  checkStorage(ctx, who, sg);
  checkParamIdentity(params, ri);
  if (ri !== undefined) params.remote_identity_id = String(ri);
  checkProductRules(ctx, product, params);
  const now = ctx.now();
  const sub: SubscriptionRecord = {
    id: ++ctx.s.counters.subscription,
    account,
    user,
    product: productId,
    name: typeof attrs.name === 'string' ? attrs.name : '',
    status: attrs.status as string,
    date_start: attrs.date_start as string,
    date_end: typeof attrs.date_end === 'string' ? attrs.date_end : null,
    remote_identity: ri ?? null,
    storage_group: sg ?? null,
    product_parameters: params,
    created_at: now,
    updated_at: now,
  };
  ctx.s.subscriptions.push(sub);
  createPrimaryJob(ctx, sub);
  return sub;
}

function metaArrayToParams(meta: unknown): Record<string, string> {
  if (meta === undefined || meta === null) return {};
  if (!Array.isArray(meta)) fail(400, 'subscription_product_meta_attributes must be an array');
  const out: Record<string, string> = {};
  meta.forEach((m, i) => {
    if (!isObj(m)) fail(400, `subscription_product_meta_attributes[${i}] must be an object`);
    if (typeof m.data_key !== 'string' || m.data_key === '') fail(400, `subscription_product_meta_attributes[${i}].data_key must be a string`);
    if (typeof m.data_value !== 'string') fail(400, `subscription_product_meta_attributes[${i}].data_value (${m.data_key}) must be a string`);
    if (m.data_format !== undefined && m.data_format !== 'STRING') fail(400, `subscription_product_meta_attributes[${i}].data_format must be STRING`);
    out[m.data_key] = m.data_value;
  });
  return out;
}

/** Duplicate = same account, product, remote identity and storage group. */
function hasDuplicate(ctx: Ctx, sub: SubscriptionRecord): boolean {
  return ctx.s.subscriptions.some((o) => o.id !== sub.id && o.account === sub.account && o.product === sub.product
    && o.remote_identity === sub.remote_identity && o.storage_group === sub.storage_group
    && (o.status === 'active' || o.status === 'cancelled'));
}

const TRANSITIONS: Record<string, string[]> = {
  active: ['paused', 'cancelled', 'invalid'],
  paused: ['active', 'cancelled', 'invalid'],
  cancelled: ['invalid'],
  invalid: ['active', 'cancelled'],
};

/** Applies a PATCH (v2 attributes; `params` = the already-checked parameters to merge, if any). */
function patchSubscription(
  ctx: Ctx, who: Principal, id: number, attrs: Record<string, unknown>, params: Record<string, string> | undefined,
): SubscriptionRecord {
  const sub = ownedSubscription(ctx.s, who, id);
  for (const k of ['account', 'user', 'product']) {
    if (attrs[k] !== undefined && String(attrs[k]) !== String((sub as unknown as Record<string, unknown>)[k])) fail(400, `${k} cannot be changed`);
  }
  const next: SubscriptionRecord = { ...sub, product_parameters: { ...sub.product_parameters } };
  if (attrs.name !== undefined) {
    if (typeof attrs.name !== 'string') fail(400, 'name must be a string');
    next.name = attrs.name;
  }
  if (attrs.date_start !== undefined) {
    if (!isDateTime(attrs.date_start)) fail(400, 'date_start must be an ISO 8601 datetime');
    next.date_start = attrs.date_start;
  }
  if (attrs.date_end !== undefined) {
    if (attrs.date_end !== null && !isDateTime(attrs.date_end)) fail(400, 'date_end must be an ISO 8601 datetime or null');
    next.date_end = attrs.date_end;
  }
  const product = ctx.s.products.find((p) => p.id === sub.product);
  if (attrs.remote_identity !== undefined) {
    const ri = intAttr(attrs, 'remote_identity', false);
    if (product) checkIdentity(ctx, who, product, ri);
    next.remote_identity = ri ?? null;
    if (ri !== undefined) next.product_parameters.remote_identity_id = String(ri);
    else delete next.product_parameters.remote_identity_id;
  }
  if (attrs.storage_group !== undefined) {
    const sg = intAttr(attrs, 'storage_group', false);
    checkStorage(ctx, who, sg);
    next.storage_group = sg ?? null;
  }
  if (params !== undefined) {
    checkParamIdentity(params, next.remote_identity);
    Object.assign(next.product_parameters, params);
    if (product) checkProductRules(ctx, product, next.product_parameters);
  }
  if (attrs.status !== undefined) {
    const to = attrs.status;
    if (typeof to !== 'string' || !STATUSES.includes(to)) fail(400, `status must be one of ${STATUSES.join(', ')}`);
    if (to !== sub.status) {
      if (!(TRANSITIONS[sub.status] ?? []).includes(to)) fail(400, `status cannot change from ${sub.status} to ${to}`);
      // subscriptions-api.md ("Create Subscription"): v1 and v2 refuse to reactivate a subscription of an inactive product.
      if (to === 'active' && product?.active === 0) fail(400, `subscription ${id} cannot become active: product ${sub.product} is not active`);
      if (sub.status === 'invalid' && hasDuplicate(ctx, next)) {
        fail(409, `subscription ${id} cannot leave invalid: a duplicate active or cancelled subscription exists (same account, product, remote identity and storage group)`);
      }
      next.status = to;
    }
  }
  next.updated_at = ctx.now();
  Object.assign(sub, next);
  return sub;
}

/** The `data.id` of a PATCH body must name the subscription of the path. */
function patchBody(req: FastifyRequest): { id: number; attrs: Record<string, unknown> } {
  const id = pathId((req.params as Record<string, string>).id, 'subscription');
  const { attrs, id: bodyId } = envelopeAttributes(req.body, 'Subscription');
  if (bodyId === undefined || String(bodyId) !== String(id)) fail(400, `data.id must equal the subscription ID ${id}`);
  return { id, attrs };
}

/**
 * The subscriptions service, in both read modes (the mode only decides the attributes shown): subscription reads,
 * lists (the documented filters), create and update in both forms, plus the lookups (account and user, remote
 * identities, storages, products, stored-parameter reads).
 */
export function registerSubscriptionRoutes(app: FastifyInstance, ctx: Ctx): void {
  registerAccountRoutes(app, ctx);
  registerIdentityRoutes(app, ctx);
  registerStorageRoutes(app, ctx);
  registerProductRoutes(app, ctx);
  registerParameterRoutes(app, ctx);

  app.get('/v2/sub', async (req) => {
    const who = principal(req);
    const match = subscriptionFilter(req, 'v2');
    const subs = ctx.s.subscriptions.filter((x) => x.account === who.account && match(x));
    return listBody(ctx, req, subs.map((x) => subscriptionView(ctx, x, 'v2')));
  });
  app.get('/sub', async (req) => {
    const who = principal(req);
    // The spec shows `?account=`; the vendor documents it as an optional filter. Another account's is a 403.
    const raw = queryOne(req.query, 'account');
    if (raw !== undefined) {
      const account = parseIntStrict(raw);
      if (account === undefined) fail(400, 'account must be an integer');
      if (account !== who.account) fail(403, `account ${account} is not the authenticated account`);
    }
    const match = subscriptionFilter(req, 'v1');
    return listBody(ctx, req, ctx.s.subscriptions.filter((x) => x.account === who.account && match(x)).map((x) => subscriptionView(ctx, x, 'v1')));
  });
  app.get('/sub/:id', async (req) => {
    const who = principal(req);
    const sub = ownedSubscription(ctx.s, who, pathId((req.params as Record<string, string>).id, 'subscription'));
    return { data: subscriptionView(ctx, sub, 'v1') };
  });
  app.get('/v2/sub/:id', async (req) => {
    const who = principal(req);
    const sub = ownedSubscription(ctx.s, who, pathId((req.params as Record<string, string>).id, 'subscription'));
    return { data: subscriptionView(ctx, sub, 'v2') };
  });

  app.post('/v2/sub', async (req, reply) => {
    const who = principal(req);
    const { attrs } = envelopeAttributes(req.body, 'Subscription');
    if (attrs.subscription_product_meta_attributes !== undefined) fail(400, 'use product_parameters with /v2/sub (subscription_product_meta_attributes belongs to /sub)');
    const given = reconcileIdentity(attrs, checkParams(attrs.product_parameters));
    const sub = createSubscription(ctx, who, given.attrs, given.params ?? {});
    return reply.status(201).send({ data: subscriptionView(ctx, sub, 'v2') });
  });
  app.post('/sub', async (req, reply) => {
    const who = principal(req);
    const { attrs } = envelopeAttributes(req.body, 'Subscription');
    if (attrs.product_parameters !== undefined) fail(400, 'use subscription_product_meta_attributes with /sub (product_parameters belongs to /v2/sub)');
    const params = metaArrayToParams(attrs.subscription_product_meta_attributes);
    const sub = createSubscription(ctx, who, attrs, params);
    return reply.status(201).send({ data: subscriptionView(ctx, sub, 'v1') });
  });

  app.patch('/v2/sub/:id', async (req) => {
    const who = principal(req);
    const { id, attrs } = patchBody(req);
    if (attrs.subscription_product_meta_attributes !== undefined) fail(400, 'subscription_product_meta_attributes is not accepted by /v2/sub; use product_parameters');
    const given = reconcileIdentity(attrs, attrs.product_parameters === undefined ? undefined : checkParams(attrs.product_parameters));
    return { data: subscriptionView(ctx, patchSubscription(ctx, who, id, given.attrs, given.params), 'v2') };
  });
  // The unversioned update (vendor legacy docs): meta entries merged like `product_parameters`.
  app.patch('/sub/:id', async (req) => {
    const who = principal(req);
    const { id, attrs } = patchBody(req);
    if (attrs.product_parameters !== undefined) fail(400, 'use subscription_product_meta_attributes with /sub (product_parameters belongs to /v2/sub)');
    const meta = attrs.subscription_product_meta_attributes;
    const params = meta === undefined ? undefined : metaArrayToParams(meta);
    return { data: subscriptionView(ctx, patchSubscription(ctx, who, id, attrs, params), 'v1') };
  });
}
