// fastify is bundled into the dpi CLI by esbuild, so a devDependency is enough.
// eslint-disable-next-line import/no-extraneous-dependencies
import { FastifyInstance } from 'fastify';
import { ApiError, Ctx, dayNumber, dayOf, envelopeAttributes, fail, isDate, parseIntStrict, principal } from '../core';
import { newHistoryId, ownedSubscription } from '../domain';
import { HistoryRecord } from '../state';
import { isoSeconds } from '../views';

export const H = '/service/history/production/history';
/** Seconds after creation (or after `start_time`) at which a request starts processing. */
export const HISTORY_PROCESSING_DELAY = 60;
/** Seconds of processing before a request completes (or fails). */
export const HISTORY_PROCESSING_SECONDS = 300;

/** Moves pending/processing requests along the emulator clock. */
export function refreshHistory(ctx: Ctx): void {
  const now = ctx.now();
  for (const h of ctx.s.history) {
    if (h.status !== 'pending' && h.status !== 'processing') continue;
    if (now >= h.completed_at) {
      if (ctx.s.failingHistorySubscriptions.includes(h.subscription_id)) {
        h.status = 'failed';
        h.error_message = 'history retrieval failed (emulated)';
      } else {
        h.status = 'completed';
      }
    } else if (now >= h.processing_at) {
      h.status = 'processing';
    }
  }
}

/** A history transaction as the read mode shows it: minimal = `id` and `status` only (what the spec shows). */
export function historyView(ctx: Ctx, h: HistoryRecord): Record<string, unknown> {
  if (ctx.reads === 'minimal') return { type: 'HistoryTransaction', id: h.id, attributes: { status: h.status } };
  return historyToApi(h);
}

/** The full history transaction record (vendor reads). */
export function historyToApi(h: HistoryRecord): Record<string, unknown> {
  return {
    type: 'HistoryTransaction',
    id: h.id,
    attributes: {
      subscription_id: h.subscription_id,
      status: h.status,
      start_date: h.start_date,
      end_date: h.end_date,
      dates: h.dates,
      stage_id: h.stage_id,
      product_id: h.product_id,
      start_time: h.start_time,
      created_at: isoSeconds(h.created_at),
      error_message: h.error_message,
    },
  };
}

const START_TIME = /^(\d{4}-\d{2}-\d{2}) (\d{2}):(\d{2}):(\d{2})$/;

function validationError(messages: string[]): never {
  throw new ApiError(400, { errors: messages.map((detail) => ({ status: '400', title: 'Bad Request', detail })) }, messages.join('; '));
}

function cancelStatus(body: unknown): void {
  const { attrs } = envelopeAttributes(body, 'HistoryTransaction');
  if (attrs.status !== 'cancelled') fail(400, "attributes.status must be 'cancelled'");
}

export function registerHistoryRoutes(app: FastifyInstance, ctx: Ctx): void {
  app.get(`${H}/meta/max-request`, async (req) => {
    principal(req);
    return { data: { type: 'HistoryMaxRequest', attributes: { max_request: ctx.s.historyMaxRequests } } };
  });

  app.post(`${H}/:sid`, async (req, reply) => {
    const who = principal(req);
    const sid = parseIntStrict((req.params as Record<string, string>).sid);
    if (sid === undefined) fail(404, `subscription ${(req.params as Record<string, string>).sid} not found`);
    const sub = ownedSubscription(ctx.s, who, sid);
    const { attrs } = envelopeAttributes(req.body, 'HistoryTransaction');
    const errors: string[] = [];
    const today = dayNumber(dayOf(ctx.now()));
    let days: string[] = [];
    let startDate: string | null = null;
    let endDate: string | null = null;
    let dates: string[] | null = null;
    if (attrs.dates !== undefined && attrs.dates !== null) {
      if (attrs.start_date !== undefined || attrs.end_date !== undefined) errors.push('give either dates or start_date and end_date, not both');
      if (!Array.isArray(attrs.dates) || attrs.dates.length === 0 || !attrs.dates.every(isDate)) {
        errors.push('dates must be a non-empty array of YYYY-MM-DD dates');
      } else {
        dates = [...new Set(attrs.dates as string[])].sort();
        days = dates;
      }
    } else if (attrs.start_date === undefined || attrs.end_date === undefined) {
      errors.push('either dates, or both start_date and end_date, is required');
    } else if (!isDate(attrs.start_date) || !isDate(attrs.end_date)) {
      errors.push('start_date and end_date must be YYYY-MM-DD dates');
    } else if (attrs.start_date > attrs.end_date) {
      errors.push('start_date must not be after end_date');
    } else {
      startDate = attrs.start_date;
      endDate = attrs.end_date;
      for (let d = dayNumber(startDate); d <= dayNumber(endDate) && days.length <= 5000; d++) days.push(dayOf(d * 86400));
    }
    if (days.some((d) => dayNumber(d) > today)) errors.push('dates must not be in the future');
    let stageId: number | null = null;
    if (attrs.stage_id !== undefined && attrs.stage_id !== null) {
      const n = parseIntStrict(attrs.stage_id);
      if (n === undefined) errors.push('stage_id must be an integer');
      else stageId = n;
    }
    let productId: number | null = null;
    if (attrs.product_id !== undefined && attrs.product_id !== null) {
      const n = parseIntStrict(attrs.product_id);
      if (n === undefined) errors.push('product_id must be an integer');
      else if (n !== sub.product) errors.push(`product_id ${n} is not the product of subscription ${sub.id}`);
      else productId = n;
    }
    let startAt = ctx.now();
    let startTime: string | null = null;
    if (attrs.start_time !== undefined && attrs.start_time !== null) {
      const m = typeof attrs.start_time === 'string' ? START_TIME.exec(attrs.start_time) : null;
      const t = m && isDate(m[1]) ? Date.parse(`${m[1]}T${m[2]}:${m[3]}:${m[4]}Z`) : NaN;
      if (Number.isNaN(t)) {errors.push('start_time must be YYYY-MM-DD HH:MM:SS');} else {
        startTime = attrs.start_time as string;
        startAt = Math.max(startAt, Math.floor(t / 1000));
      }
    }
    const product = ctx.s.products.find((p) => p.id === sub.product);
    const infos = (product?.history_info ?? []).filter((h) => stageId === null || h.stage_id === stageId);
    if (!product?.history_info || product.history_info.length === 0) {errors.push(`product ${sub.product} does not support history requests`);} else if (infos.length === 0) {errors.push(`stage_id ${stageId} has no history settings for product ${sub.product}`);} else if (days.length > 0) {
      const maxDays = Math.min(...infos.map((h) => h.days));
      const maxAge = Math.min(...infos.map((h) => h.max_request_time));
      if (days.length > maxDays) errors.push(`at most ${maxDays} days of history can be requested${stageId !== null ? ` for stage ${stageId}` : ''} (asked ${days.length})`);
      const oldest = today - dayNumber(days[0]);
      if (oldest > maxAge) errors.push(`${days[0]} is older than the maximum request age of ${maxAge} days`);
    }
    if (sub.status !== 'active') errors.push(`subscription ${sub.id} is ${sub.status}; history requires an active subscription`);
    if (errors.length > 0) validationError(errors);
    refreshHistory(ctx);
    const active = ctx.s.history.filter((h) => h.account === who.account && (h.status === 'pending' || h.status === 'processing')).length;
    if (active >= ctx.s.historyMaxRequests) {
      fail(409, `the ceiling of ${ctx.s.historyMaxRequests} active history requests is reached (${active} pending or processing); wait for existing ones to complete`);
    }
    const now = ctx.now();
    const processingAt = startAt + HISTORY_PROCESSING_DELAY;
    const rec: HistoryRecord = {
      id: newHistoryId(ctx),
      account: who.account,
      subscription_id: sub.id,
      status: 'pending',
      start_date: startDate,
      end_date: endDate,
      dates,
      stage_id: stageId,
      product_id: productId,
      start_time: startTime,
      created_at: now,
      processing_at: processingAt,
      completed_at: processingAt + HISTORY_PROCESSING_SECONDS,
      cancelled_at: null,
      error_message: null,
    };
    ctx.s.history.push(rec);
    return reply.status(201).send({ data: historyView(ctx, rec) });
  });

  const ownedHistory = (who: { account: number }, id: string): HistoryRecord => {
    const h = ctx.s.history.find((x) => x.id === id);
    if (!h) fail(404, `history transaction ${id} not found`);
    if (h.account !== who.account) fail(403, `history transaction ${id} belongs to a different account`);
    return h;
  };
  const cancelOne = (h: HistoryRecord): HistoryRecord => {
    if (h.status !== 'pending' && h.status !== 'processing') fail(400, `history transaction ${h.id} is ${h.status}; only pending or processing requests can be cancelled`);
    h.status = 'cancelled';
    h.cancelled_at = ctx.now();
    return h;
  };

  app.get(`${H}/status/:sid`, async (req) => {
    const who = principal(req);
    const sid = parseIntStrict((req.params as Record<string, string>).sid);
    if (sid === undefined) fail(404, 'subscription not found');
    ownedSubscription(ctx.s, who, sid);
    refreshHistory(ctx);
    return { data: ctx.s.history.filter((h) => h.subscription_id === sid).map((h) => historyView(ctx, h)) };
  });
  app.get(`${H}/:id`, async (req) => {
    const who = principal(req);
    refreshHistory(ctx);
    return { data: historyView(ctx, ownedHistory(who, (req.params as Record<string, string>).id)) };
  });
  app.patch(`${H}/:id`, async (req) => {
    const who = principal(req);
    cancelStatus(req.body);
    refreshHistory(ctx);
    return { data: historyView(ctx, cancelOne(ownedHistory(who, (req.params as Record<string, string>).id))) };
  });
  app.patch(`${H}/status/:x`, async (req) => {
    const who = principal(req);
    const x = (req.params as Record<string, string>).x;
    cancelStatus(req.body);
    refreshHistory(ctx);
    if (ctx.s.history.some((h) => h.id === x)) return { data: historyView(ctx, cancelOne(ownedHistory(who, x))) };
    const sid = parseIntStrict(x);
    if (sid === undefined) fail(404, `no history transaction or subscription ${x}`);
    ownedSubscription(ctx.s, who, sid);
    const changed = ctx.s.history.filter((h) => h.subscription_id === sid && (h.status === 'pending' || h.status === 'processing'));
    for (const h of changed) cancelOne(h);
    return { data: changed.map((h) => historyView(ctx, h)) };
  });
}
