/**
 * The healthchecks listing (`GET /service/healthchecks/{environment}/healthchecks/account/{account_id}`), as the
 * vendor documents it. The interface specification does not cover this route; the records are derived from the
 * emulator's transaction state (see docs/emulator.md, "Healthchecks"):
 *
 * - one record per subscription and payload: the latest transaction (timestamp, then arrival) with an outcome;
 * - `ERROR` (any sender) -> `ERROR`; `PROCESSED`/`SUCCESS` from `zeroadmin` (loaded), `NO_DATA` and `IGNORED` (any
 *   sender) -> `OK`; work not finished (`UNPROCESSED`, `PROCESSING`, `IN_PROGRESS`, `RETRY`) and completions upstream
 *   of the load (`PROCESSED`/`SUCCESS` from scheduler, supervisor, ftpsync) make no record and replace none.
 */
import { createHash } from 'node:crypto';
// fastify is bundled into the dpi CLI by esbuild, so a devDependency is enough.
// eslint-disable-next-line import/no-extraneous-dependencies
import { FastifyInstance, FastifyRequest } from 'fastify';
import { Ctx, fail, isObj, parseIntStrict, principal } from '../core';
import { SubscriptionRecord, TxRecord } from '../state';
import { isoSeconds, listBody } from '../views';

/** The environments of the path (the vendor documents `dev` and `production`; both answer the same records here). */
export const HEALTHCHECK_ENVIRONMENTS = ['dev', 'production'];

/** One healthcheck record (the vendor's documented fields). */
export interface HealthcheckRecord {
  id: number;
  account_id: number;
  subscription_id: number;
  subscription_name: string;
  product_id: number;
  subproduct_id: number | null;
  product_name: string;
  payload_name: string;
  storage_id: string;
  status: 'OK' | 'ERROR';
  message: string;
  err_msg: string;
  error_code: string;
  hc_runtime: string;
  modified_at: string;
  job_id: number | null;
  transaction_id: string;
  file_path: string;
  owner: string;
  sender: string;
  company: string;
  email_address: string;
}

type Field = keyof HealthcheckRecord;

/** The healthcheck status and message of a transaction's outcome; undefined: no outcome (no record). */
export function outcomeOf(sender: string, status: string): { status: 'OK' | 'ERROR'; message: string } | undefined {
  switch (status) {
    case 'ERROR': return { status: 'ERROR', message: 'error' };
    case 'NO_DATA': return { status: 'OK', message: 'no data' };
    case 'IGNORED': return { status: 'OK', message: 'duplicate skipped' };
    case 'PROCESSED':
    case 'SUCCESS': return sender === 'zeroadmin' ? { status: 'OK', message: 'loaded' } : undefined;
    default: return undefined;
  }
}

const INHERITED = ['subscription_id', 'subscription_name', 'product_name', 'payload_name', 'file_path'] as const;
type Inherited = Pick<TxRecord, typeof INHERITED[number]>;

/** The transaction's own values, with the parent chain's where absent (as the transaction listing shows them). */
function inherited(byId: Map<string, TxRecord>, t: TxRecord): Inherited {
  const out: Inherited = {};
  let node: TxRecord | undefined = t;
  for (let depth = 0; node && depth < 17; depth++) {
    for (const k of INHERITED) {
      const v = node[k];
      if ((out[k] === undefined || out[k] === '') && v !== undefined && v !== '' && v !== 0) (out as Record<string, unknown>)[k] = v;
    }
    node = node.parent ? byId.get(node.parent) : undefined;
  }
  return out;
}

/** A stable record ID per subscription and payload. */
function recordId(subscriptionId: number, payload: string): number {
  return createHash('sha256').update(`${subscriptionId}\u0000${payload}`).digest().readUIntBE(0, 6);
}

function text(v: unknown): string {
  return typeof v === 'string' ? v : '';
}

/** The healthcheck records of an account, derived from the live (unexpired) transactions. */
export function healthchecksOf(ctx: Ctx, account: number): HealthcheckRecord[] {
  const now = ctx.now();
  const live = ctx.s.transactions.filter((t) => now < t.time_to_live);
  const byId = new Map(live.map((t) => [t.id, t]));
  const subs = new Map<number, SubscriptionRecord>();
  for (const s of ctx.s.subscriptions) if (s.account === account) subs.set(s.id, s);
  const latest = new Map<string, { t: TxRecord; a: Inherited; sub: SubscriptionRecord }>();
  for (const t of live) {
    if (!outcomeOf(t.sender, t.status)) continue;
    const a = inherited(byId, t);
    const sub = a.subscription_id === undefined ? undefined : subs.get(a.subscription_id);
    if (!sub) continue;
    const key = `${sub.id}\u0000${a.payload_name ?? ''}`;
    const prev = latest.get(key);
    if (!prev || t.timestamp > prev.t.timestamp || (t.timestamp === prev.t.timestamp && t.seq > prev.t.seq)) latest.set(key, { t, a, sub });
  }
  const accountRec = ctx.s.accounts.find((x) => x.id === account) as Record<string, unknown> | undefined;
  return [...latest.values()].map(({ t, a, sub }) => {
    const outcome = outcomeOf(t.sender, t.status)!;
    const product = ctx.s.products.find((p) => p.id === sub.product);
    const user = ctx.s.users.find((u) => u.id === sub.user) as Record<string, unknown> | undefined;
    const payload = a.payload_name ?? '';
    const job = t.job_id !== undefined ? parseIntStrict(t.job_id) : undefined;
    const isError = outcome.status === 'ERROR';
    return {
      id: recordId(sub.id, payload),
      account_id: account,
      subscription_id: sub.id,
      subscription_name: sub.name || (a.subscription_name ?? ''),
      product_id: sub.product,
      subproduct_id: null,
      product_name: product?.name ?? a.product_name ?? '',
      payload_name: payload,
      storage_id: sub.storage_group === null || sub.storage_group === undefined ? '' : String(sub.storage_group),
      status: outcome.status,
      message: isError ? (t.error_message || outcome.message) : outcome.message,
      err_msg: isError ? (t.error_message ?? '') : '',
      error_code: isError ? (t.error_code ?? '') : '',
      hc_runtime: isoSeconds(t.timestamp),
      modified_at: isoSeconds(t.timestamp),
      job_id: job ?? null,
      transaction_id: t.id,
      file_path: a.file_path ?? '',
      owner: String(sub.user),
      sender: t.sender,
      company: text(accountRec?.name),
      email_address: text(user?.email_address) || text(user?.email),
    };
  });
}

type Kind = 'int' | 'time' | 'text' | 'exact';
/** The documented filter fields and the lookups each supports (`exact` is also the bare field name). */
const FILTERS: Partial<Record<Field, Kind>> = {
  id: 'int',
  modified_at: 'time',
  hc_runtime: 'time',
  status: 'exact',
  subscription_id: 'int',
  subscription_name: 'text',
  product_id: 'int',
  subproduct_id: 'int',
  product_name: 'text',
  payload_name: 'text',
  job_id: 'int',
  storage_id: 'text',
  message: 'text',
  err_msg: 'text',
  owner: 'text',
  sender: 'exact',
};
const LOOKUPS: Record<Kind, readonly string[]> = {
  int: ['exact', 'gt', 'gte', 'lt', 'lte'],
  time: ['exact', 'gt', 'gte', 'lt', 'lte'],
  text: ['exact', 'contains', 'icontains'],
  exact: ['exact'],
};
/** Fields `order_by` accepts: every response field. */
const ORDER_FIELDS: readonly Field[] = ['id', 'account_id', 'subscription_id', 'subscription_name', 'product_id', 'subproduct_id',
  'product_name', 'payload_name', 'storage_id', 'status', 'message', 'err_msg', 'error_code', 'hc_runtime', 'modified_at', 'job_id',
  'transaction_id', 'file_path', 'owner', 'sender', 'company', 'email_address'];

/** A vendor datetime (`YYYY-MM-DD HH:MM:SS`, ISO 8601, or a date) as Unix seconds; UTC when it names no zone. */
function parseTime(raw: string): number | undefined {
  const m = /^(\d{4}-\d{2}-\d{2})(?:[T ](\d{2}:\d{2}(?::\d{2}(?:\.\d+)?)?)(Z|[+-]\d{2}:?\d{2})?)?$/.exec(raw.trim());
  if (!m) return undefined;
  const zone = m[3] ? (m[3] === 'Z' ? 'Z' : m[3].length === 5 ? `${m[3].slice(0, 3)}:${m[3].slice(3)}` : m[3]) : 'Z';
  const ms = Date.parse(`${m[1]}T${m[2] ?? '00:00:00'}${zone}`);
  if (Number.isNaN(ms) || new Date(`${m[1]}T00:00:00Z`).toISOString().slice(0, 10) !== m[1]) return undefined;
  return Math.floor(ms / 1000);
}

type Predicate = (r: HealthcheckRecord) => boolean;

function compare(lookup: string, a: number, b: number): boolean {
  switch (lookup) {
    case 'gt': return a > b;
    case 'gte': return a >= b;
    case 'lt': return a < b;
    case 'lte': return a <= b;
    default: return a === b;
  }
}

/** One predicate per documented filter in the query; unknown parameters and unsupported lookups are ignored. */
function filtersOf(query: Record<string, unknown>): Predicate[] {
  const out: Predicate[] = [];
  for (const [key, rawValue] of Object.entries(query)) {
    const m = /^([a-z_]+?)(?:__([a-z]+))?$/.exec(key);
    if (!m) continue;
    const field = m[1] as Field;
    const lookup = m[2] ?? 'exact';
    const kind = FILTERS[field];
    if (!kind || !LOOKUPS[kind].includes(lookup)) continue;
    // A repeated parameter: the last value counts.
    const value = String(Array.isArray(rawValue) ? rawValue[rawValue.length - 1] : rawValue);
    if (kind === 'int') {
      const n = parseIntStrict(value.trim());
      if (n === undefined) fail(400, `${key}: enter a whole number (got '${value}')`);
      out.push((r) => typeof r[field] === 'number' && compare(lookup, r[field] as number, n));
    } else if (kind === 'time') {
      const t = parseTime(value);
      if (t === undefined) fail(400, `${key}: enter a valid date/time, e.g. 2024-01-01 00:00:00 (got '${value}')`);
      out.push((r) => {
        const rt = parseTime(String(r[field]));
        return rt !== undefined && compare(lookup, rt, t);
      });
    } else if (lookup === 'contains') {
      out.push((r) => String(r[field] ?? '').includes(value));
    } else if (lookup === 'icontains') {
      const v = value.toLowerCase();
      out.push((r) => String(r[field] ?? '').toLowerCase().includes(v));
    } else {
      out.push((r) => r[field] !== null && String(r[field]) === value);
    }
  }
  return out;
}

/** Sorts by `order_by` (comma list, `-` for descending; default `-modified_at`), then by `id`. Nulls sort last ascending. */
function sortRecords(records: HealthcheckRecord[], orderBy: string | undefined): HealthcheckRecord[] {
  const keys = (orderBy ?? '-modified_at').split(',').map((s) => s.trim()).filter((s) => s !== '').map((s) => {
    const desc = s.startsWith('-');
    const field = (desc ? s.slice(1) : s) as Field;
    if (!ORDER_FIELDS.includes(field)) fail(400, `order_by: unknown field '${field}' (one of ${ORDER_FIELDS.join(', ')})`);
    return { field, desc };
  });
  keys.push({ field: 'id', desc: false });
  const cmp = (a: unknown, b: unknown): number => {
    if (a === b) return 0;
    if (a === null || a === undefined) return 1;
    if (b === null || b === undefined) return -1;
    if (typeof a === 'number' && typeof b === 'number') return a - b;
    const x = String(a);
    const y = String(b);
    return x < y ? -1 : x > y ? 1 : 0;
  };
  return records.sort((a, b) => {
    for (const k of keys) {
      const c = cmp(a[k.field], b[k.field]);
      if (c !== 0) return k.desc ? -c : c;
    }
    return 0;
  });
}

/** Registers the healthchecks listing. */
export function registerHealthcheckRoutes(app: FastifyInstance, ctx: Ctx): void {
  app.get('/service/healthchecks/:environment/healthchecks/account/:account_id', async (req: FastifyRequest) => {
    const who = principal(req);
    const params = req.params as { environment: string; account_id: string };
    if (!HEALTHCHECK_ENVIRONMENTS.includes(params.environment)) fail(404, `environment '${params.environment}' not found (dev or production)`);
    const account = parseIntStrict(params.account_id);
    if (account !== who.account) fail(403, `account ${params.account_id} is not the account of the token`);
    const query = isObj(req.query) ? req.query : {};
    const filters = filtersOf(query);
    const rawOrder = query.order_by;
    const orderBy = rawOrder === undefined ? undefined : String(Array.isArray(rawOrder) ? rawOrder[rawOrder.length - 1] : rawOrder);
    const records = sortRecords(healthchecksOf(ctx, account).filter((r) => filters.every((f) => f(r))), orderBy);
    return listBody(ctx, req, records);
  });
}
