import { HistoryCreate, HistoryInfo, ProductDefinition, SecondaryJobAttributes } from './types';

/** Marketplace order ID: three digits, hyphen, seven digits, hyphen, seven digits. */
export const ORDER_ID_PATTERN = /^\d{3}-\d{7}-\d{7}$/;

/** Maximum order IDs per secondary job request. */
export const MAX_ORDER_IDS_PER_JOB = 100;

/** Minutes between the schedules of consecutive order-job batches. */
export const ORDER_JOB_STAGGER_MINUTES = 15;

/** One planned secondary job (a batch of order IDs). */
export interface OrderJobBatch {
  /** 0-based batch number. */
  index: number;
  /** The order IDs of the batch (at most 100). */
  orderIds: string[];
  /** When the batch is scheduled: `start + 15 * index` minutes (seconds and milliseconds dropped). */
  scheduledAt: Date;
  /** Attributes to send with `jobs.createSecondary`. */
  attributes: SecondaryJobAttributes;
}

/** Input of `planOrderJobBatches`. */
export interface OrderJobPlanInput {
  /** Marketplace order IDs (`ORDER_ID_PATTERN`), each once. */
  orderIds: string[];
  /** Schedule of the first batch. */
  start: Date;
  /** Stage of the jobs. @default 1000 */
  stageId?: number;
}

function utcDate(d: Date): string {
  return d.toISOString().slice(0, 10);
}

/**
 * A 5-field cron expression `M H D Mon *` (minute, hour, day of month, month 1-12, any day of week),
 * in UTC, without leading zeros, that fires at the given minute: e.g. 2026-11-22T23:45Z -> `45 23 22 11 *`.
 */
export function cronForMinute(d: Date): string {
  return `${d.getUTCMinutes()} ${d.getUTCHours()} ${d.getUTCDate()} ${d.getUTCMonth() + 1} *`;
}

/**
 * Splits order IDs into secondary-job batches of at most 100: batch i is scheduled at
 * `start + 15 * i` minutes (cron `M H D Mon *`, UTC, see `cronForMinute`), with
 * `valid_date_start == valid_date_end` = that minute's UTC date, `extra_context` =
 * `JSON.stringify({ order_ids })`, `is_primary: false`, `request_start: 1`, `request_end: 0`, `stage_id`.
 * Throws (naming them) on an ill-formed order ID and on duplicates, and on an empty list.
 */
export function planOrderJobBatches(input: OrderJobPlanInput): OrderJobBatch[] {
  const { orderIds, start } = input;
  const stageId = input.stageId ?? 1000;
  if (!Array.isArray(orderIds) || orderIds.length === 0) throw new Error('orderIds must contain at least one order ID');
  if (!(start instanceof Date) || Number.isNaN(start.getTime())) throw new Error('start must be a valid Date');
  if (!Number.isSafeInteger(stageId) || stageId < 1) throw new Error(`stageId must be a positive integer, got ${stageId}`);
  const bad = orderIds.filter((id) => typeof id !== 'string' || !ORDER_ID_PATTERN.test(id));
  if (bad.length > 0) {
    throw new Error(`invalid order ID(s) ${bad.map((b) => JSON.stringify(b)).join(', ')}: expected three digits, hyphen, seven digits, hyphen, seven digits (e.g. 123-1234567-1234567)`);
  }
  const seen = new Set<string>();
  const dups = new Set<string>();
  for (const id of orderIds) {
    if (seen.has(id)) dups.add(id);
    seen.add(id);
  }
  if (dups.size > 0) throw new Error(`duplicate order ID(s): ${[...dups].join(', ')}`);

  const first = Math.floor(start.getTime() / 60_000) * 60_000;
  const batches: OrderJobBatch[] = [];
  for (let i = 0; i * MAX_ORDER_IDS_PER_JOB < orderIds.length; i++) {
    const ids = orderIds.slice(i * MAX_ORDER_IDS_PER_JOB, (i + 1) * MAX_ORDER_IDS_PER_JOB);
    const at = new Date(first + i * ORDER_JOB_STAGGER_MINUTES * 60_000);
    const date = utcDate(at);
    batches.push({
      index: i,
      orderIds: ids,
      scheduledAt: at,
      attributes: {
        is_primary: false,
        valid_date_start: date,
        valid_date_end: date,
        stage_id: stageId,
        extra_context: JSON.stringify({ order_ids: ids }),
        request_start: 1,
        request_end: 0,
        schedule: cronForMinute(at),
      },
    });
  }
  return batches;
}

/**
 * Encodes stage IDs as the `stage_ids` product parameter: a stringified JSON array of integers, e.g. `[1001,1002]`.
 * Accepts numbers or decimal strings; throws for a non-integer, an ID below 1000, a duplicate or an empty list
 * (omit `stage_ids` to collect every dataset).
 */
export function encodeStageIds(ids: Array<number | string>): string {
  if (!Array.isArray(ids) || ids.length === 0) throw new Error('stage IDs must not be empty (omit stage_ids to collect every dataset)');
  const out: number[] = [];
  for (const raw of ids) {
    const n = typeof raw === 'number' ? raw : typeof raw === 'string' && /^\s*\d+\s*$/.test(raw) ? Number(raw) : NaN;
    if (!Number.isSafeInteger(n)) throw new Error(`stage ID ${JSON.stringify(raw)} is not an integer`);
    if (n < 1000) throw new Error(`stage ID ${n} is below 1000 (IDs below 1000 are legacy records, not named stages)`);
    if (out.includes(n)) throw new Error(`stage ID ${n} is given more than once`);
    out.push(n);
  }
  return JSON.stringify(out);
}

/** Decodes a `stage_ids` product parameter; throws when it is not a JSON array of integers. */
export function decodeStageIds(s: string): number[] {
  let v: unknown;
  try {
    v = JSON.parse(s);
  } catch {
    throw new Error(`stage_ids ${JSON.stringify(s)} is not JSON`);
  }
  if (!Array.isArray(v) || !v.every((x) => Number.isSafeInteger(x))) {
    throw new Error(`stage_ids ${JSON.stringify(s)} is not a JSON array of integers`);
  }
  return v as number[];
}

const DATE_RE = /^(\d{4})-(\d{2})-(\d{2})$/;
const DATETIME_RE = /^\d{4}-\d{2}-\d{2} \d{2}:\d{2}:\d{2}$/;
const DAY_MS = 86_400_000;

/** Days since the epoch of a valid `YYYY-MM-DD`, else undefined. */
function dayNumber(s: unknown): number | undefined {
  if (typeof s !== 'string') return undefined;
  const m = DATE_RE.exec(s);
  if (!m) return undefined;
  const t = Date.UTC(Number(m[1]), Number(m[2]) - 1, Number(m[3]));
  if (new Date(t).toISOString().slice(0, 10) !== s) return undefined;
  return t / DAY_MS;
}

/**
 * Checks a history request against the product definition (its `history_info`) before it is sent.
 * Returns the list of problems (empty = ok):
 * - exactly one of `dates` (non-empty) or both `start_date` and `end_date`;
 * - dates in `YYYY-MM-DD` form (real calendar dates), `start_date <= end_date`, `start_time` as `YYYY-MM-DD HH:MM:SS`;
 * - `stage_id`, when given, is present in `history_info`;
 * - the number of days (inclusive range length, or number of distinct dates) is at most `days` of the applicable
 *   record(s) (those of `stage_id`, or every record when it is omitted: the strictest applies);
 * - the oldest requested date is no older than `max_request_time` days before `now` (UTC dates; strictest applies).
 */
export function validateHistoryRequest(req: HistoryCreate, card: ProductDefinition, now: Date): string[] {
  const problems: string[] = [];
  const hasDates = req.dates !== undefined && req.dates !== null;
  const hasStart = req.start_date !== undefined && req.start_date !== null && req.start_date !== '';
  const hasEnd = req.end_date !== undefined && req.end_date !== null && req.end_date !== '';
  let days: number[] = [];

  if (hasDates && (hasStart || hasEnd)) {
    problems.push('give either dates or start_date and end_date, not both');
  } else if (hasDates) {
    if (!Array.isArray(req.dates) || req.dates.length === 0) {
      problems.push('dates must be a non-empty list of YYYY-MM-DD dates');
    } else {
      for (const d of req.dates) {
        const n = dayNumber(d);
        if (n === undefined) problems.push(`date ${JSON.stringify(d)} is not a valid YYYY-MM-DD date`);
        else if (!days.includes(n)) days.push(n);
      }
    }
  } else if (hasStart || hasEnd) {
    if (!hasStart) problems.push('start_date is required with end_date (or give dates instead)');
    if (!hasEnd) problems.push('end_date is required with start_date (or give dates instead)');
    const s = hasStart ? dayNumber(req.start_date) : undefined;
    const e = hasEnd ? dayNumber(req.end_date) : undefined;
    if (hasStart && s === undefined) problems.push(`start_date ${JSON.stringify(req.start_date)} is not a valid YYYY-MM-DD date`);
    if (hasEnd && e === undefined) problems.push(`end_date ${JSON.stringify(req.end_date)} is not a valid YYYY-MM-DD date`);
    if (s !== undefined && e !== undefined) {
      if (s > e) problems.push(`start_date ${req.start_date} is after end_date ${req.end_date}`);
      else days = [s, e];
    }
  } else {
    problems.push('either dates, or both start_date and end_date, is required');
  }
  if (req.start_time !== undefined && (typeof req.start_time !== 'string' || !DATETIME_RE.test(req.start_time))) {
    problems.push(`start_time ${JSON.stringify(req.start_time)} is not in the form YYYY-MM-DD HH:MM:SS`);
  }

  const info: HistoryInfo[] = Array.isArray(card?.history_info) ? card.history_info : [];
  if (info.length === 0) {
    problems.push(`product ${card?.id} (${card?.name}) has no history settings (history_info); history cannot be requested`);
    return problems;
  }
  let applicable = info;
  if (req.stage_id !== undefined && req.stage_id !== null && req.stage_id !== '') {
    const stage = Number(req.stage_id);
    applicable = info.filter((h) => h.stage_id === stage);
    if (!Number.isSafeInteger(stage) || applicable.length === 0) {
      const known = [...new Set(info.map((h) => h.stage_id))].join(', ');
      problems.push(`stage_id ${req.stage_id} is not in the product's history_info (stages: ${known})`);
      return problems;
    }
  }
  if (days.length === 0) return problems;

  const count = hasDates ? days.length : days[1] - days[0] + 1;
  const maxDays = Math.min(...applicable.map((h) => h.days));
  const maxDaysStage = applicable.find((h) => h.days === maxDays)?.stage_id;
  if (count > maxDays) {
    problems.push(`${count} days requested, but at most ${maxDays} day(s) of history can be requested (history_info days of stage ${maxDaysStage})`);
  }
  const maxAge = Math.min(...applicable.map((h) => h.max_request_time));
  const maxAgeStage = applicable.find((h) => h.max_request_time === maxAge)?.stage_id;
  const today = Math.floor(now.getTime() / DAY_MS);
  const oldest = Math.min(...days);
  const limit = today - maxAge;
  if (oldest < limit) {
    const iso = (n: number): string => new Date(n * DAY_MS).toISOString().slice(0, 10);
    problems.push(`the oldest requested date ${iso(oldest)} is more than ${maxAge} day(s) before ${iso(today)} `
      + `(history_info max_request_time of stage ${maxAgeStage}); the earliest allowed date is ${iso(limit)}`);
  }
  return problems;
}
