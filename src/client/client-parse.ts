/** How the client reads the service's answers: flattening records, pagination, the parameter reads' shapes. */
import { ServiceError } from './errors';
import { Id, ProductRecord, UnifiedPipelineResult } from './types';

/** Encodes an ID as one URL path segment. */
export function seg(id: Id): string {
  const s = String(id);
  if (s === '') throw new Error('an ID must not be empty');
  return encodeURIComponent(s);
}

/** Converts an ID to the JSON integer the wire expects (numeric strings accepted). */
export function int(name: string, v: Id): number {
  const n = typeof v === 'number' ? v : /^\s*-?\d+\s*$/.test(v) ? Number(v) : NaN;
  if (!Number.isSafeInteger(n)) throw new Error(`${name} must be an integer ID, got ${JSON.stringify(v)}`);
  return n;
}

/** Returns `body.data` when the body is an envelope, else the body. */
export function unwrap(body: unknown): unknown {
  if (body && typeof body === 'object' && !Array.isArray(body) && 'data' in body) return (body as { data: unknown }).data;
  return body;
}

/** Flattens a JSON:API-style resource into `{ ...attributes, id: string }`. */
export function flat<T>(r: unknown): T {
  if (!r || typeof r !== 'object') throw new Error(`unexpected response: ${JSON.stringify(r)?.slice(0, 200)}`);
  const o = r as { id?: unknown; attributes?: unknown; type?: unknown };
  if (o.attributes && typeof o.attributes === 'object') {
    return { ...(o.attributes as object), id: o.id === undefined || o.id === null ? '' : String(o.id) } as T;
  }
  const { type: _type, ...rest } = o as Record<string, unknown>;
  void _type;
  return { ...rest, id: o.id === undefined || o.id === null ? '' : String(o.id) } as T;
}

export function list(body: unknown): unknown[] {
  const d = unwrap(body);
  if (!Array.isArray(d)) throw new Error(`unexpected response: expected a list, got ${JSON.stringify(d)?.slice(0, 200)}`);
  return d;
}

/** Vendor read names (v2 representation) -> the canonical optional fields (cross-checks only). */
const VENDOR_NAMES: Array<[string, string]> = [
  ['product_id', 'product'], ['remote_identity_id', 'remote_identity'], ['storage_group_id', 'storage_group'],
  ['account_id', 'account'], ['user_id', 'user'], ['email_address', 'email'],
];

/** A read record, flattened, with vendor field names copied to the canonical ones where those are absent. */
export function record<T extends { id: string }>(r: unknown): T {
  const o = flat<T>(r) as unknown as Record<string, unknown>;
  for (const [vendor, canonical] of VENDOR_NAMES) {
    if (o[canonical] === undefined && o[vendor] !== undefined) o[canonical] = o[vendor];
  }
  // Remote identities (vendor): the type is a relationship.
  type Rel = { relationships?: { remote_identity_type?: { data?: { id?: unknown } | null } } } | undefined;
  const rit = (r as Rel)?.relationships?.remote_identity_type?.data;
  if (o.remote_identity_type_id === undefined && rit && rit.id !== undefined && rit.id !== null) o.remote_identity_type_id = Number(rit.id);
  return o as unknown as T;
}

/** The one record of `GET /account` or `GET /user`: `data` is an object, or a list whose first element is it. */
export function single<T extends { id: string }>(body: unknown, what: string): T {
  const d = unwrap(body);
  if (Array.isArray(d)) {
    if (d.length === 0) throw new Error(`unexpected response: ${what} returned an empty list`);
    return record<T>(d[0]);
  }
  return record<T>(d);
}

/** The next page number of a list answer (vendor pagination: `links.next`, `meta.pagination`); undefined: last page. */
export function nextPageOf(body: unknown, page: number): number | undefined {
  const b = body as { links?: { next?: unknown }; meta?: { pagination?: { page?: unknown; pages?: unknown } } } | undefined;
  const next = b?.links?.next;
  if (typeof next === 'string' && next !== '') {
    let n: number;
    try {
      n = Number(new URL(next, 'http://relative.invalid').searchParams.get('page'));
    } catch {
      n = NaN;
    }
    return Number.isInteger(n) && n > page ? n : page + 1;
  }
  const pg = b?.meta?.pagination;
  const current = Number(pg?.page ?? page);
  if (pg && Number.isInteger(Number(pg.pages)) && Number(pg.pages) > current) return current + 1;
  return undefined;
}

/** Pages of one list a client follows at most. */
export const MAX_LIST_PAGES = 1000;
/**
 * `page_size` asked of every paginated list: the largest page the vendor's own client asks for (its `MAX_PAGE_SIZE`,
 * 100). The spec shows no pagination (a service that does not paginate ignores it); a service that serves smaller
 * pages still answers with `links.next`, which is followed. ASSUMPTION (vendor docs), listed in docs/client.md.
 */
export const LIST_PAGE_SIZE = 100;

export function attrsOf(body: unknown): Record<string, unknown> {
  let d = unwrap(body);
  if (Array.isArray(d)) d = d[0];
  if (d && typeof d === 'object' && 'attributes' in d) d = (d as { attributes: unknown }).attributes;
  return d && typeof d === 'object' ? d as Record<string, unknown> : {};
}

export function productRecord(r: unknown): ProductRecord {
  const base = flat<ProductRecord & { relationships?: unknown }>(r);
  const rel = (r as { relationships?: { remote_identity_type?: { data?: unknown } } }).relationships;
  const data = rel?.remote_identity_type?.data;
  const rit = data && typeof data === 'object'
    ? { type: String((data as { type?: unknown }).type ?? 'RemoteIdentityType'), id: String((data as { id?: unknown }).id) }
    : null;
  return { ...base, remote_identity_type: base.remote_identity_type ?? rit };
}

export function pipelineResult(body: unknown): UnifiedPipelineResult {
  const a = attrsOf(body);
  return {
    ...a,
    subscriptions: (a.subscriptions ?? {}) as Record<string, string>,
    failed: (a.failed ?? {}) as Record<string, unknown>,
    meta: (a.meta ?? {}) as UnifiedPipelineResult['meta'],
  };
}

export function notificationTypes(body: unknown): string[] {
  const a = attrsOf(body);
  const t = a.notification_types ?? unwrap(body);
  if (!Array.isArray(t)) throw new Error('unexpected response: no notification_types list');
  return t.map(String);
}

export function isObject(v: unknown): v is Record<string, unknown> {
  return typeof v === 'object' && v !== null && !Array.isArray(v);
}

/** A 404, 405 or 400 from a read the specification does not list: the service does not show it. */
export function notServed(e: unknown): boolean {
  return e instanceof ServiceError && (e.status === 404 || e.status === 405 || e.status === 400);
}

/** A `SubscriptionProductParameters` resource's attributes as a string map; undefined when it is not one. */
export function parametersOf(r: unknown): Record<string, string> | undefined {
  if (!isObject(r)) return undefined;
  if (r.type !== undefined && r.type !== 'SubscriptionProductParameters') return undefined;
  const a = r.attributes;
  if (!isObject(a)) return undefined;
  const out: Record<string, string> = {};
  for (const [k, v] of Object.entries(a)) {
    if (v !== undefined && v !== null) out[k] = typeof v === 'string' ? v : JSON.stringify(v);
  }
  return out;
}

/**
 * The IDs a bulk parameter read's 404 names as unresolved ("Subscriptions were not found or are not accessible:
 * 1,2"); undefined when the message names none of the requested IDs (e.g. the route itself is not served).
 */
export function unresolvedIds(message: string | undefined, requested: readonly string[]): Set<string> | undefined {
  const m = /not accessible:\s*([\d,\s]+)/i.exec(message ?? '');
  if (!m) return undefined;
  const named = new Set(m[1].split(',').map((x) => x.trim()).filter((x) => requested.includes(x)));
  return named.size > 0 ? named : undefined;
}
