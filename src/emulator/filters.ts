// fastify is bundled into the dpi CLI by esbuild, so a devDependency is enough.
// eslint-disable-next-line import/no-extraneous-dependencies
import { FastifyRequest } from 'fastify';
import { fail, isDate, isDateTime, queryOne } from './core';
import { SubscriptionRecord } from './state';
import { intFilter } from './views';

/**
 * List query filters as the vendor documents them (Django-style lookups: `field`, `field__gt`, `__gte`, `__lt`,
 * `__lte`). Both read modes honour them; a parameter a route does not know is ignored (never refused), a known
 * parameter with an unusable value is a 400.
 */

const LOOKUPS = ['', '__exact', '__gt', '__gte', '__lt', '__lte'] as const;

/** A query date or datetime -> Unix seconds (a value without a zone is UTC); 400 when not ISO 8601. */
function timeValue(name: string, raw: string): number {
  const v = raw.trim();
  if (!isDateTime(v) && !isDate(v)) fail(400, `${name} must be an ISO 8601 date or datetime (got ${JSON.stringify(raw)})`);
  let text = v.length === 10 ? `${v}T00:00:00` : v.replace(' ', 'T');
  if (!/(Z|[+-]\d{2}:?\d{2})$/.test(text)) text += 'Z';
  return Math.floor(Date.parse(text) / 1000);
}

/** A stored time (Unix seconds or an ISO string) -> Unix seconds; null when absent. */
export function timeOf(v: number | string | null | undefined): number | null {
  if (v === null || v === undefined || v === '') return null;
  if (typeof v === 'number') return Math.floor(v);
  let text = v.length === 10 ? `${v}T00:00:00` : v.replace(' ', 'T');
  if (!/(Z|[+-]\d{2}:?\d{2})$/.test(text)) text += 'Z';
  const t = Date.parse(text);
  return Number.isNaN(t) ? null : Math.floor(t / 1000);
}

/** The time lookups of `field` present in the query, as one predicate on a stored time (null never matches). */
export function timeFilter(req: FastifyRequest, field: string): (t: number | null) => boolean {
  const checks: Array<(t: number) => boolean> = [];
  for (const suffix of LOOKUPS) {
    const raw = queryOne(req.query, field + suffix);
    if (raw === undefined) continue;
    const q = timeValue(field + suffix, raw);
    if (suffix === '' || suffix === '__exact') checks.push((t) => t === q);
    else if (suffix === '__gt') checks.push((t) => t > q);
    else if (suffix === '__gte') checks.push((t) => t >= q);
    else if (suffix === '__lt') checks.push((t) => t < q);
    else checks.push((t) => t <= q);
  }
  return (t) => checks.length === 0 || (t !== null && checks.every((c) => c(t)));
}

/** A `0`/`1` (or `true`/`false`) query filter; 400 otherwise; undefined when absent. */
export function boolFilter(req: FastifyRequest, name: string): 0 | 1 | undefined {
  const raw = queryOne(req.query, name);
  if (raw === undefined) return undefined;
  const v = raw.toLowerCase();
  if (v === '1' || v === 'true') return 1;
  if (v === '0' || v === 'false') return 0;
  return fail(400, `${name} must be 0 or 1`);
}

/** `ordering=id` / `ordering=-id` (other values are ignored). */
export function orderById<T extends { id: number }>(req: FastifyRequest, rows: T[]): T[] {
  const o = queryOne(req.query, 'ordering');
  if (o === '-id') return [...rows].sort((a, b) => b.id - a.id);
  if (o === 'id') return [...rows].sort((a, b) => a.id - b.id);
  return rows;
}

/** When a subscription became `invalid` or `cancelled` (its last change), else null. */
export function invalidatedAt(sub: SubscriptionRecord): number | null {
  return sub.status === 'invalid' || sub.status === 'cancelled' ? sub.updated_at : null;
}

/**
 * The documented subscription list filters (`/sub`, `/v2/sub`): `id`, `name`, `status`, `status__not`, `account`,
 * `product`, `product_plan`, `remote_identity`, `storage_group`, `user`, and the time lookups of `date_start`, `created_at`,
 * `modified_at`, `invalidated_at` (and `date_end` on the unversioned route, a v1-only filter).
 */
export function subscriptionFilter(req: FastifyRequest, form: 'v1' | 'v2'): (x: SubscriptionRecord) => boolean {
  const name = queryOne(req.query, 'name');
  const status = queryOne(req.query, 'status');
  const statusNot = queryOne(req.query, 'status__not');
  const ints: Array<[number | undefined, (x: SubscriptionRecord) => number | null]> = [
    [intFilter(req, 'id'), (x) => x.id],
    [intFilter(req, 'account'), (x) => x.account],
    [intFilter(req, 'product'), (x) => x.product],
    [intFilter(req, 'remote_identity'), (x) => x.remote_identity],
    [intFilter(req, 'storage_group'), (x) => x.storage_group],
    [intFilter(req, 'user'), (x) => x.user],
    // subscriptions-api.md names a product-plan filter; the emulator's subscriptions have no plan, so none matches.
    [intFilter(req, 'product_plan'), () => null],
  ];
  const times: Array<[(t: number | null) => boolean, (x: SubscriptionRecord) => number | null]> = [
    [timeFilter(req, 'date_start'), (x) => timeOf(x.date_start)],
    [timeFilter(req, 'created_at'), (x) => x.created_at],
    [timeFilter(req, 'modified_at'), (x) => x.updated_at],
    [timeFilter(req, 'invalidated_at'), invalidatedAt],
  ];
  if (form === 'v1') times.push([timeFilter(req, 'date_end'), (x) => timeOf(x.date_end)]);
  return (x) => (name === undefined || x.name === name) && (status === undefined || x.status === status)
    && (statusNot === undefined || x.status !== statusNot)
    && ints.every(([want, get]) => want === undefined || get(x) === want)
    && times.every(([ok, get]) => ok(get(x)));
}
