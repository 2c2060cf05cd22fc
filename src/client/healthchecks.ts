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
  /** `order_by`: a comma list of fields, `-` for descending. Default: the service's order. */
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
   * (`page_size` = `LIST_PAGE_SIZE`). `undefined` when the route answers 404 (a service that does not serve it).
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
    for (let i = 0; i < deps.maxPages; i++) {
      const query = new URLSearchParams();
      for (const [k, v] of Object.entries(q.filters ?? {})) query.set(k, String(v));
      if (q.orderBy !== undefined) query.set('order_by', q.orderBy);
      query.set('page_size', String(deps.pageSize));
      if (page > 1) query.set('page', String(page));
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
      if (next === undefined) return out;
      page = next;
    }
    throw new Error(`listing ${path} returned more than ${deps.maxPages} pages; stopping`);
  };
  return { list, accountId };
}
