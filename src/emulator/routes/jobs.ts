// fastify is bundled into the dpi CLI by esbuild, so a devDependency is enough.
// eslint-disable-next-line import/no-extraneous-dependencies
import { FastifyInstance } from 'fastify';
import { Ctx, dayOf, envelopeAttributes, fail, isDate, parseIntStrict, principal, queryOne, ReadMode } from '../core';
import { newJobId, ownedSubscription } from '../domain';
import { JobRecord } from '../state';
import { intFilter, isoSeconds, listBody } from '../views';

export const MAX_ORDER_IDS = 100;
export const ORDER_ID = /^\d{3}-\d{7}-\d{7}$/;
const CRON_FIELD = /^[0-9A-Za-z*/,?#LW-]+$/;

export function isCron(v: unknown): boolean {
  if (typeof v !== 'string') return false;
  const parts = v.trim().split(/\s+/);
  return (parts.length === 5 || parts.length === 6) && parts.every((p) => CRON_FIELD.test(p));
}

/** The full job record (vendor reads; the admin state keeps the same fields). */
export function jobToApi(j: JobRecord, ctx?: Ctx): Record<string, unknown> {
  const sub = ctx?.s.subscriptions.find((x) => x.id === j.subscription_id);
  return {
    type: 'Job',
    id: j.id,
    attributes: {
      report_date: j.valid_date_start,
      subscription_id: j.subscription_id,
      valid_date_start: j.valid_date_start,
      valid_date_end: j.valid_date_end,
      status: 'pending',
      schedule: j.schedule,
      orig_schedule: j.schedule,
      request_start: j.request_start,
      request_end: j.request_end,
      created_at: isoSeconds(j.created_at),
      modified_at: isoSeconds(j.created_at),
      is_primary: j.is_primary,
      stage_id: j.stage_id,
      extra_context: j.extra_context ?? '',
      product_id: sub?.product ?? null,
      subproduct_id: 'default',
    },
  };
}

/** A job as the read mode shows it: minimal = `id` and `is_primary` only (what the spec shows). */
export function jobView(ctx: Ctx, j: JobRecord, mode: ReadMode = ctx.reads): Record<string, unknown> {
  if (mode === 'minimal') return { type: 'Job', id: j.id, attributes: { is_primary: j.is_primary } };
  return jobToApi(j, ctx);
}

/** The fields `order_by` accepts: `id` and the documented attributes (jobs-api.md, "Field Reference"). */
const ORDER_FIELDS = ['id', 'report_date', 'subscription_id', 'valid_date_start', 'valid_date_end', 'status', 'schedule', 'orig_schedule',
  'request_start', 'request_end', 'created_at', 'modified_at', 'is_primary', 'stage_id', 'extra_context', 'product_id', 'subproduct_id'];

/** A job ID's number (`j-12` and `12` -> 12): jobs sort by ID in creation order. */
function idNumber(id: string): number {
  return Number(/\d+$/.exec(id)?.[0] ?? 0);
}

/**
 * Sorts by `order_by` (vendor doc jobs-api.md: "sort field (e.g., `id`)"): a comma list of the job's fields (`id` and
 * the documented attributes), `-` for descending, `null`s last ascending (first descending), ties by ID; an unknown field is a 400.
 * Absent: creation order.
 */
function sortJobs(ctx: Ctx, rows: JobRecord[], orderBy: string | undefined): JobRecord[] {
  if (orderBy === undefined) return rows;
  const fields = ORDER_FIELDS;
  const keys = orderBy.split(',').map((k) => k.trim()).filter((k) => k !== '').map((k) => {
    const field = k.replace(/^-/, '');
    if (!fields.includes(field)) fail(400, `order_by: unknown field '${field}' (one of ${fields.join(', ')})`);
    return { field, sign: k.startsWith('-') ? -1 : 1 };
  });
  const value = (j: JobRecord, field: string): unknown => (field === 'id' ? idNumber(j.id) : (jobToApi(j, ctx).attributes as Record<string, unknown>)[field]);
  const cmp = (a: unknown, b: unknown): number => {
    if (a === b) return 0;
    if (a === null || a === undefined) return 1;
    if (b === null || b === undefined) return -1;
    return typeof a === 'number' && typeof b === 'number' ? a - b : String(a) < String(b) ? -1 : 1;
  };
  return [...rows].sort((a, b) => {
    for (const { field, sign } of keys) {
      const c = cmp(value(a, field), value(b, field));
      if (c !== 0) return sign * c;
    }
    return idNumber(a.id) - idNumber(b.id);
  });
}


export function registerJobRoutes(app: FastifyInstance, ctx: Ctx): void {
  app.get('/service/jobs/jobs', async (req) => {
    const who = principal(req);
    const raw = queryOne(req.query, 'subscription_ids');
    // The spec lists jobs by subscription; the vendor documents subscription_ids as one filter among others (both
    // modes: optional; when given, each must be a subscription of the caller).
    if (raw === '') fail(400, 'subscription_ids must not be empty');
    let ids: number[] | undefined;
    if (raw !== undefined) {
      const parsed = raw.split(',').map((x) => parseIntStrict(x.trim()));
      if (parsed.some((x) => x === undefined)) fail(400, 'subscription_ids must be comma-separated integers');
      ids = parsed as number[];
      for (const id of ids) ownedSubscription(ctx.s, who, id);
    }
    const stage = intFilter(req, 'stage_id');
    let jobIds: string[] | undefined;
    const one = queryOne(req.query, 'id');
    const many = queryOne(req.query, 'ids');
    if (one !== undefined || many !== undefined) jobIds = [...(one !== undefined ? [one] : []), ...(many ?? '').split(',').filter((x) => x !== '')];
    const rows = ctx.s.jobs.filter((j) => j.account === who.account && (ids === undefined || ids.includes(j.subscription_id))
      && (stage === undefined || j.stage_id === null || j.stage_id === stage)
      && (jobIds === undefined || jobIds.includes(j.id)));
    return listBody(ctx, req, sortJobs(ctx, rows, queryOne(req.query, 'order_by')).map((j) => jobView(ctx, j)));
  });
  app.get('/service/jobs/jobs/:id', async (req) => {
    const who = principal(req);
    const id = (req.params as Record<string, string>).id;
    const j = ctx.s.jobs.find((x) => x.id === id);
    if (!j) fail(404, `job ${id} not found`);
    if (j.account !== who.account) fail(403, `job ${id} belongs to a different account`);
    return { data: jobView(ctx, j) };
  });

  app.post('/service/jobs/jobs/:primary', async (req, reply) => {
    const who = principal(req);
    const pid = (req.params as Record<string, string>).primary;
    const parent = ctx.s.jobs.find((j) => j.id === pid);
    if (!parent || parent.account !== who.account) fail(400, `job ${pid} is not a job of account ${who.account}`);
    if (!parent.is_primary) fail(400, `job ${pid} is not a primary job`);
    const { attrs } = envelopeAttributes(req.body, 'Job');
    if (attrs.is_primary !== false) fail(400, 'is_primary must be false for a product job');
    if (!isDate(attrs.valid_date_start) || !isDate(attrs.valid_date_end)) fail(400, 'valid_date_start and valid_date_end must be YYYY-MM-DD dates');
    if (attrs.valid_date_start !== attrs.valid_date_end) fail(400, 'valid_date_end must equal valid_date_start');
    if (attrs.valid_date_start < dayOf(ctx.now())) fail(400, 'valid_date_start must be today or a future date');
    let stage = 1000;
    if (attrs.stage_id !== undefined) {
      const n = parseIntStrict(attrs.stage_id);
      if (n === undefined || n < 1000) fail(400, 'stage_id must be an integer >= 1000');
      stage = n;
    }
    if (typeof attrs.extra_context !== 'string') fail(400, 'extra_context must be a stringified JSON object with order_ids');
    let extra: unknown;
    try {
      extra = JSON.parse(attrs.extra_context);
    } catch {
      fail(400, 'extra_context must be a stringified JSON object with order_ids');
    }
    const orderIds = (extra as { order_ids?: unknown } | null)?.order_ids;
    if (!Array.isArray(orderIds) || orderIds.length === 0) fail(400, 'extra_context.order_ids must be a non-empty array');
    if (orderIds.length > MAX_ORDER_IDS) fail(400, `at most ${MAX_ORDER_IDS} order IDs per request (got ${orderIds.length})`);
    const bad = orderIds.find((o) => typeof o !== 'string' || !ORDER_ID.test(o));
    if (bad !== undefined) fail(400, `order ID ${JSON.stringify(bad)} does not match NNN-NNNNNNN-NNNNNNN`);
    if (!isCron(attrs.schedule)) fail(400, 'schedule must be a cron expression');
    for (const k of ['request_start', 'request_end']) {
      if (attrs[k] !== undefined && parseIntStrict(attrs[k]) === undefined) fail(400, `${k} must be an integer`);
    }
    const job: JobRecord = {
      id: newJobId(ctx),
      account: who.account,
      subscription_id: parent.subscription_id,
      is_primary: false,
      parent_job_id: parent.id,
      stage_id: stage,
      valid_date_start: attrs.valid_date_start,
      valid_date_end: attrs.valid_date_end as string,
      extra_context: attrs.extra_context,
      request_start: attrs.request_start === undefined ? 1 : parseIntStrict(attrs.request_start)!,
      request_end: attrs.request_end === undefined ? 0 : parseIntStrict(attrs.request_end)!,
      schedule: attrs.schedule as string,
      created_at: ctx.now(),
    };
    ownedSubscription(ctx.s, who, parent.subscription_id);
    ctx.s.jobs.push(job);
    return reply.status(201).send({ data: jobView(ctx, job) });
  });
}
