// fastify is bundled into the dpi CLI by esbuild, so a devDependency is enough.
// eslint-disable-next-line import/no-extraneous-dependencies
import { FastifyInstance } from 'fastify';
import { Ctx, envelopeAttributes, fail, principal, Principal, queryOne } from '../core';
import { SubscriptionRecord } from '../state';
import { intFilter, isoSeconds, listBody } from '../views';

/** A subscription ID of the parameter reads: digits only, positive (else 400). */
function sppId(raw: string, what: string): number {
  const n = /^\d{1,15}$/.test(raw.trim()) ? Number(raw.trim()) : undefined;
  if (n === undefined || n <= 0) fail(400, `${what} must be a positive integer subscription ID (got ${JSON.stringify(raw)})`);
  return n;
}

/** The stored parameter the service derives from the subscription's remote identity (not shown by the SPP reads). */
const DERIVED_KEY = 'remote_identity_id';

/**
 * One `SubscriptionProductParameters` resource: the stored data_key -> data_value map, values as stored, without the
 * derived `remote_identity_id` row (vendor doc subscriptions-api.md, "Remote identity reconciliation": the derived
 * row is not exposed in `/v2/spp` or `/v2/spp/bulk`; the subscription's `remote_identity_id` attribute shows it).
 */
function parametersView(sub: SubscriptionRecord): Record<string, unknown> {
  const attributes = Object.fromEntries(Object.entries(sub.product_parameters).filter(([k]) => k !== DERIVED_KEY));
  return { type: 'SubscriptionProductParameters', id: String(sub.id), attributes };
}

/** Row ID of a stored parameter: the subscription ID followed by the 3-digit position of the key (opaque). */
function rowId(sub: SubscriptionRecord, key: string): string {
  return `${sub.id}${String(Object.keys(sub.product_parameters).indexOf(key) + 1).padStart(3, '0')}`;
}

/**
 * `POST /v2/spp` (vendor doc subscriptions-api.md, "Create a parameter row"): `data.type`
 * `SubscriptionProductParameter`, attributes exactly `data_key` (non-empty string, not `remote_identity_id`),
 * `data_value` (string, may be empty) and `subscription` (a positive ID of the caller's; 404 otherwise); any other
 * attribute is a 400; a key the subscription already has is a 409 that changes nothing. 201 with the row.
 */
function registerSppCreate(app: FastifyInstance, ctx: Ctx): void {
  app.post('/v2/spp', async (req, reply) => {
    const who = principal(req);
    const { attrs, type } = envelopeAttributes(req.body);
    if (type !== 'SubscriptionProductParameter') fail(400, `data.type must be 'SubscriptionProductParameter' (got ${JSON.stringify(type)})`);
    const extra = Object.keys(attrs).filter((k) => !['data_key', 'data_value', 'subscription'].includes(k));
    if (extra.length > 0) fail(400, `attributes not accepted (computed by the service or unknown): ${extra.join(', ')}`);
    const key = attrs.data_key;
    if (typeof key !== 'string' || key.trim() === '') fail(400, `data_key must be a non-empty string (got ${JSON.stringify(key)})`);
    if (key === DERIVED_KEY) fail(400, `${DERIVED_KEY} cannot be created here; set the identity with a subscription PATCH (remote_identity)`);
    const value = attrs.data_value;
    if (typeof value !== 'string') fail(400, `data_value must be a string (got ${JSON.stringify(value ?? null)})`);
    const subId = attrs.subscription;
    if (typeof subId !== 'number' || !Number.isSafeInteger(subId) || subId <= 0) {
      fail(400, `subscription must be a positive integer subscription ID (got ${JSON.stringify(subId ?? null)})`);
    }
    const sub = visibleSubscription(ctx, who, subId);
    if (!sub) fail(404, `subscription ${subId} not found`);
    if (Object.prototype.hasOwnProperty.call(sub.product_parameters, key)) {
      fail(409, `subscription ${subId} already has a parameter ${JSON.stringify(key)}; change it with a subscription PATCH (product_parameters)`);
    }
    const now = ctx.now();
    sub.product_parameters[key] = value;
    sub.updated_at = now;
    reply.code(201);
    return {
      data: {
        type: 'SubscriptionProductParameter',
        id: rowId(sub, key),
        attributes: {
          data_key: key,
          data_value: value,
          subscription_id: sub.id,
          product_id: sub.product,
          created_at: `${isoSeconds(now)}Z`,
          modified_at: `${isoSeconds(now)}Z`,
        },
      },
    };
  });
}

/** The caller's subscription, or undefined (missing or another account's: the vendor answers 404 for both). */
function visibleSubscription(ctx: Ctx, who: Principal, id: number): SubscriptionRecord | undefined {
  const sub = ctx.s.subscriptions.find((x) => x.id === id);
  return sub && sub.account === who.account ? sub : undefined;
}

/**
 * Vendor reads of subscription product parameters (SPP): `GET /v2/spp?subscription_id=ID` (one aggregate resource)
 * and `GET /v2/spp/bulk?subscription_ids=a,b` (1-100 unique IDs, in the requested order, all-or-nothing 404).
 * Not in the specification: served in `vendor` read mode only.
 */
function registerSppReads(app: FastifyInstance, ctx: Ctx): void {
  app.get('/v2/spp', async (req) => {
    const who = principal(req);
    const raw = queryOne(req.query, 'subscription_id');
    if (raw === undefined || raw === '') fail(400, 'subscription_id is required');
    const id = sppId(raw, 'subscription_id');
    const sub = visibleSubscription(ctx, who, id);
    if (!sub) fail(404, `subscription ${id} not found`);
    return { data: parametersView(sub) };
  });
  app.get('/v2/spp/bulk', async (req) => {
    const who = principal(req);
    const raw = queryOne(req.query, 'subscription_ids');
    if (raw === undefined || raw.trim() === '') fail(400, 'subscription_ids is required (1 to 100 comma-separated subscription IDs)');
    const ids = raw.split(',').map((x) => sppId(x, 'subscription_ids'));
    if (ids.length > 100) fail(400, `subscription_ids accepts 1 to 100 IDs (got ${ids.length})`);
    if (new Set(ids).size !== ids.length) fail(400, 'subscription_ids must be unique');
    const subs = ids.map((id) => visibleSubscription(ctx, who, id));
    const missing = ids.filter((_, i) => subs[i] === undefined);
    if (missing.length > 0) fail(404, `Subscriptions were not found or are not accessible: ${missing.join(',')}`);
    return { data: subs.map((x) => parametersView(x!)) };
  });
}

/** Subscription IDs of a `subscription__in` filter (comma-separated integers; 400 otherwise). */
function idList(raw: string | undefined, name: string): number[] | undefined {
  if (raw === undefined) return undefined;
  const ids = raw.split(',').filter((x) => x.trim() !== '').map((x) => Number(x.trim()));
  if (ids.some((n) => !Number.isSafeInteger(n))) fail(400, `${name} must be comma-separated integers`);
  return ids;
}

/**
 * `GET /spm` (the vendor's legacy "Subscription Product Meta" rows), both modes: one
 * `{type: "SubscriptionProductMeta", id, attributes: {data_id, data_key, data_value, data_format, product}}` per stored
 * parameter of the caller's subscriptions (the fields of the spec's meta entry). Filters `subscription`,
 * `subscription__in`, `product`, `data_key`, `data_value`, `data_id`; another account's subscription matches nothing.
 * Row IDs are the subscription ID followed by the 3-digit position of the key (opaque).
 */
function registerMetaReads(app: FastifyInstance, ctx: Ctx): void {
  app.get('/spm', async (req) => {
    const who = principal(req);
    const sub = intFilter(req, 'subscription');
    const subs = idList(queryOne(req.query, 'subscription__in'), 'subscription__in');
    const product = intFilter(req, 'product');
    const dataId = intFilter(req, 'data_id');
    const key = queryOne(req.query, 'data_key');
    const value = queryOne(req.query, 'data_value');
    const rows: Array<Record<string, unknown>> = [];
    for (const x of ctx.s.subscriptions) {
      if (x.account !== who.account || (sub !== undefined && x.id !== sub) || (subs !== undefined && !subs.includes(x.id))) continue;
      if (product !== undefined && x.product !== product) continue;
      if (dataId !== undefined && dataId !== 0) continue;
      Object.entries(x.product_parameters).forEach(([k, v]) => {
        if ((key !== undefined && k !== key) || (value !== undefined && v !== value)) return;
        rows.push({
          type: 'SubscriptionProductMeta',
          id: rowId(x, k),
          attributes: { data_id: 0, data_key: k, data_value: v, data_format: 'STRING', product: x.product },
        });
      });
    }
    return listBody(ctx, req, rows);
  });
}

/**
 * Stored subscription parameters: `GET /spm` in both modes; `GET /v2/spp[/bulk]` and `POST /v2/spp` in vendor mode
 * only (see docs/emulator.md, "Mode differences").
 */
export function registerParameterRoutes(app: FastifyInstance, ctx: Ctx): void {
  registerMetaReads(app, ctx);
  if (ctx.reads === 'vendor') {
    registerSppReads(app, ctx);
    registerSppCreate(app, ctx);
  }
}
