import { ServiceError } from './errors';
import { RequestSpec } from './http';
import { Id } from './types';

/**
 * The environment segment of the healthchecks path. ASSUMPTION (vendor docs): the vendor documents `dev` and
 * `production`; every example of its docs and of its own client reads `production`, so the client does too.
 */
export const HEALTHCHECK_ENVIRONMENT = 'production';

/** The healthchecks listing's path for an account. */
export function healthchecksPath(accountId: Id): string {
  return `/service/healthchecks/${HEALTHCHECK_ENVIRONMENT}/healthchecks/account/${encodeURIComponent(String(accountId))}`;
}

/**
 * One healthcheck record: the latest execution status of a subscription's payload (vendor docs,
 * `service-healthchecks-api.md`; the interface specification does not cover the route). Fields the service leaves
 * out are empty strings (text) or null (numbers); `id` and `subscription_id` are strings like every ID of the client.
 */
export interface HealthcheckRecord {
  /** Healthcheck record ID. */
  id: string;
  /** The subscription. */
  subscription_id: string;
  subscription_name: string;
  product_id: number | null;
  product_name: string;
  /** Payload (table) name. */
  payload_name: string;
  /** `OK`, `ERROR` or another status the service reports. */
  status: string;
  message: string;
  /** Error message when `status` is `ERROR`. */
  err_msg: string;
  error_code: string;
  /** When the healthcheck ran (the vendor's datetime text, UTC). */
  hc_runtime: string;
  /** When the record was last updated (the vendor's datetime text, UTC). */
  modified_at: string;
  job_id: number | null;
  transaction_id: string;
  storage_id: string;
  sender: string;
  /** Every other field the service sent, unchanged. */
  [field: string]: unknown;
}

/** What `healthchecks.list()` asks for. */
export interface HealthcheckQuery {
  /**
   * Filters with the route's names and lookups (`status`, `subscription_id`, `modified_at__gte`,
   * `payload_name__icontains`, ...); sent as they are.
   */
  filters?: Record<string, string | number>;
  /**
   * `order_by`: a comma list of fields, `-` for descending. `id` is always the last key (added when absent) so that
   * pages do not shift while they are read. Default: `id`.
   */
  orderBy?: string;
  /**
   * The account when the token carries no `account_id` claim (e.g. the connection's `AccountId`); without either the
   * client reads `GET /account` once.
   */
  accountId?: Id;
  /** Called once per page read (to count the service calls). */
  onPage?: (page: number) => void;
}

/** The healthchecks listing (vendor docs; not in the specification). */
export interface HealthchecksApi {
  /**
   * `GET /service/healthchecks/production/healthchecks/account/{account_id}`: every record of every page
   * (`page_size` = `LIST_PAGE_SIZE`, `order_by` ending in `id`), following `links.next` / `meta.pagination` and the
   * older shape's top-level `next`. `undefined` when the route answers 404 (a service that does not serve it).
   */
  list(q?: HealthcheckQuery): Promise<HealthcheckRecord[] | undefined>;
  /**
   * The account ID the listing is read for: the token's `account_id` claim, else `fallback`, else `GET /account`
   * (read once per client).
   */
  accountId(fallback?: Id): Promise<string>;
}

/** What the listing needs from the client (internal). */
export interface HealthchecksDeps {
  pageSize: number;
  maxPages: number;
  request(spec: RequestSpec): Promise<unknown>;
  /** A valid access token (never logged or echoed: only its `account_id` claim is read). */
  token(): Promise<string>;
  account(): Promise<{ id: string }>;
  nextPage(body: unknown, page: number): number | undefined;
}

/** The `account_id` claim of a JWT (decoded, not verified: the service verifies it); undefined when absent. */
export function accountIdClaim(token: string): string | undefined {
  const part = token.split('.')[1];
  if (!part) return undefined;
  try {
    const claims = JSON.parse(Buffer.from(part, 'base64url').toString('utf8')) as { account_id?: unknown };
    const v = claims?.account_id;
    if (typeof v === 'number' && Number.isSafeInteger(v)) return String(v);
    if (typeof v === 'string' && /^\d+$/.test(v)) return v;
  } catch {
    // not a JWT payload: no claim
  }
  return undefined;
}

const isObject = (v: unknown): v is Record<string, unknown> => typeof v === 'object' && v !== null && !Array.isArray(v);
const text = (v: unknown): string => (typeof v === 'string' ? v : v === undefined || v === null ? '' : String(v));
const num = (v: unknown): number | null => (typeof v === 'number' ? v : typeof v === 'string' && /^-?\d+$/.test(v) ? Number(v) : null);

/** The records of one page: `data` (the vendor's JSON:API envelope) or `results` (its older example), flat or with `attributes`. */
function recordsOf(body: unknown): HealthcheckRecord[] {
  const rows = isObject(body) ? (Array.isArray(body.data) ? body.data : Array.isArray(body.results) ? body.results : undefined) : body;
  if (!Array.isArray(rows)) throw new Error(`unexpected healthchecks response: expected a list, got ${JSON.stringify(body)?.slice(0, 200)}`);
  return rows.filter(isObject).map((r) => {
    const a = isObject(r.attributes) ? { ...r.attributes, id: r.id } : r;
    return {
      ...a,
      id: text(a.id),
      subscription_id: text(a.subscription_id),
      subscription_name: text(a.subscription_name),
      product_id: num(a.product_id),
      product_name: text(a.product_name),
      payload_name: text(a.payload_name),
      status: text(a.status),
      message: text(a.message),
      err_msg: text(a.err_msg),
      error_code: text(a.error_code),
      hc_runtime: text(a.hc_runtime),
      modified_at: text(a.modified_at),
      job_id: num(a.job_id),
      transaction_id: text(a.transaction_id),
      storage_id: text(a.storage_id),
      sender: text(a.sender),
    };
  });
}

/** A vendor datetime text (`YYYY-MM-DD[T ]HH:MM:SS[.fff][zone]`, UTC when it names none) as epoch ms. */
export function vendorTimeMs(value: string): number | undefined {
  const m = /^(\d{4}-\d{2}-\d{2})(?:[T ](\d{2}:\d{2}(?::\d{2}(?:\.\d+)?)?))?(Z|[+-]\d{2}:?\d{2})?$/.exec(value.trim());
  if (!m) return undefined;
  const zone = m[3] === undefined ? 'Z' : m[3].length === 5 ? `${m[3].slice(0, 3)}:${m[3].slice(3)}` : m[3];
  const ms = Date.parse(`${m[1]}T${m[2] ?? '00:00:00'}${zone}`);
  return Number.isNaN(ms) ? undefined : ms;
}

/** When a healthcheck record ran: `hc_runtime`, else `modified_at`, as epoch ms (0 when neither parses). */
export function healthcheckTimeMs(r: HealthcheckRecord): number {
  return vendorTimeMs(r.hc_runtime || r.modified_at) ?? 0;
}

/**
 * The newest record of each subscription and payload, in the order of their first appearance. The vendor documents
 * the listing as the latest status per subscription and payload; a service that answers a history of checks
 * instead must not let an older ERROR (or OK) stand for the payload. Newest = the latest `hc_runtime` (else
 * `modified_at`); on a tie, the later in the listing.
 */
export function latestPerPayload(records: readonly HealthcheckRecord[]): HealthcheckRecord[] {
  const latest = new Map<string, { r: HealthcheckRecord; at: number }>();
  for (const r of records) {
    const key = `${r.subscription_id}\u0000${r.payload_name}`;
    const at = healthcheckTimeMs(r);
    const prev = latest.get(key);
    if (prev && prev.at > at) continue;
    latest.set(key, { r, at });
  }
  return [...latest.values()].map((x) => x.r);
}

/** The `order_by` sent: the caller's keys, then `id` unless one of them is `id` already (a stable page order). */
export function stableOrder(orderBy: string | undefined): string {
  const keys = (orderBy ?? '').split(',').map((k) => k.trim()).filter((k) => k !== '');
  return keys.some((k) => k.replace(/^-/, '') === 'id') ? keys.join(',') : [...keys, 'id'].join(',');
}

/**
 * The next page of the older `{count, next, results}` shape (vendor example): the query of its top-level `next` URL,
 * to be sent on the client's own base URL and path (never to the host the URL names); undefined when absent, null
 * or not a URL.
 */
export function topLevelNext(body: unknown): URLSearchParams | undefined {
  const next = isObject(body) ? body.next : undefined;
  if (typeof next !== 'string' || next.trim() === '') return undefined;
  try {
    return new URL(next, 'http://relative.invalid').searchParams;
  } catch {
    return undefined;
  }
}

/** Builds the healthchecks API of one client. */
export function createHealthchecksApi(deps: HealthchecksDeps): HealthchecksApi {
  let looked: Promise<string> | undefined;
  const accountId = async (fallback?: Id): Promise<string> => {
    const claim = accountIdClaim(await deps.token());
    if (claim !== undefined) return claim;
    if (fallback !== undefined && String(fallback) !== '') return String(fallback);
    if (!looked) {
      looked = deps.account().then((a) => a.id);
      looked.catch(() => { looked = undefined; });
    }
    return looked;
  };
  const list = async (q: HealthcheckQuery = {}): Promise<HealthcheckRecord[] | undefined> => {
    const path = healthchecksPath(await accountId(q.accountId));
    const out: HealthcheckRecord[] = [];
    let page = 1;
    // The query of the previous answer's top-level `next` (older shape), laid over ours for the next page.
    let follow: URLSearchParams | undefined;
    for (let i = 0; i < deps.maxPages; i++) {
      const query = new URLSearchParams();
      for (const [k, v] of Object.entries(q.filters ?? {})) query.set(k, String(v));
      query.set('order_by', stableOrder(q.orderBy));
      query.set('page_size', String(deps.pageSize));
      // Following a top-level `next`: its query says where (page, offset, cursor); otherwise our page number.
      if (page > 1 && !follow) query.set('page', String(page));
      for (const [k, v] of follow ?? []) query.set(k, v);
      let body: unknown;
      try {
        body = await deps.request({ method: 'GET', service: 'baseUrl', path, query });
      } catch (e) {
        // Only a 404 of the first page means "not served" (a later page's 404 is a listing that changed under us).
        if (page === 1 && e instanceof ServiceError && e.status === 404) return undefined;
        throw e;
      }
      q.onPage?.(page);
      out.push(...recordsOf(body));
      const next = deps.nextPage(body, page);
      if (next !== undefined) {
        page = next;
        follow = undefined;
        continue;
      }
      follow = topLevelNext(body);
      if (follow === undefined) return out;
      const n = Number(follow.get('page'));
      page = Number.isInteger(n) && n > page ? n : page + 1;
    }
    throw new Error(`listing ${path} returned more than ${deps.maxPages} pages; stopping`);
  };
  return { list, accountId };
}
