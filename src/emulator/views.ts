// fastify is bundled into the dpi CLI by esbuild, so a devDependency is enough.
// eslint-disable-next-line import/no-extraneous-dependencies
import { FastifyRequest } from 'fastify';
import { Ctx, fail, isObj, parseIntStrict, queryOne } from './core';

/** Default page size of lists (the vendor's examples: 79 products on 4 pages, 42 identities on 3). */
export const DEFAULT_PAGE_SIZE = 20;
/** Largest `page_size` a list accepts. */
export const MAX_PAGE_SIZE = 1000;

/** Unix seconds -> `YYYY-MM-DDTHH:MM:SS` (the vendor's datetime form, UTC). */
export function isoSeconds(unix: number): string {
  return new Date(Math.floor(unix) * 1000).toISOString().slice(0, 19);
}

function positive(req: FastifyRequest, name: string): number | undefined {
  const raw = queryOne(req.query, name);
  if (raw === undefined) return undefined;
  const n = parseIntStrict(raw);
  if (n === undefined || n < 1) fail(400, `${name} must be a positive integer`);
  return n;
}

function pageLink(req: FastifyRequest, page: number): string {
  const host = req.headers.host ?? 'localhost';
  const path = req.url.split('?')[0];
  const params = new URLSearchParams();
  if (isObj(req.query)) {
    for (const [k, v] of Object.entries(req.query)) {
      if (k === 'page') continue;
      for (const x of Array.isArray(v) ? v : [v]) params.append(k, String(x));
    }
  }
  params.set('page', String(page));
  return `http://${host}${path}?${params.toString()}`;
}

/**
 * A list answer, in both read modes: the vendor's documented envelope `{links: {first, last, next, prev}, data,
 * meta: {pagination: {page, pages, count}}}`, honouring `page` and `page_size` (default: the state's `pageSize`, at
 * most MAX_PAGE_SIZE); a page after the last one is a 404. The spec shows lists without saying how they page; the
 * read mode only decides the attributes of each record. With the emulator's `pagination: false`: `{data}` with every
 * record, `page` and `page_size` ignored (a service that does not paginate).
 */
export function listBody<T>(ctx: Ctx, req: FastifyRequest, records: T[]): Record<string, unknown> {
  if (ctx.pagination === false) return { data: records };
  const size = Math.min(positive(req, 'page_size') ?? ctx.s.pageSize, MAX_PAGE_SIZE);
  const page = positive(req, 'page') ?? 1;
  const count = records.length;
  const pages = Math.max(1, Math.ceil(count / size));
  if (page > pages) fail(404, 'Invalid page.');
  return {
    links: {
      first: pageLink(req, 1),
      last: pageLink(req, pages),
      next: page < pages ? pageLink(req, page + 1) : '',
      prev: page > 1 ? pageLink(req, page - 1) : '',
    },
    data: records.slice((page - 1) * size, page * size),
    meta: { pagination: { page, pages, count } },
  };
}

/** An integer query filter (400 when not an integer); undefined when absent. */
export function intFilter(req: FastifyRequest, name: string): number | undefined {
  const raw = queryOne(req.query, name);
  if (raw === undefined) return undefined;
  const n = parseIntStrict(raw);
  if (n === undefined) fail(400, `${name} must be an integer`);
  return n;
}
