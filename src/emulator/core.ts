// fastify is bundled into the dpi CLI by esbuild, so a devDependency is enough.
// eslint-disable-next-line import/no-extraneous-dependencies
import { FastifyRequest } from 'fastify';
import { EmulatorState } from './state';

/** An error answered as-is by the emulator's error handler. */
export class ApiError extends Error {
  constructor(public readonly status: number, public readonly body: unknown, message?: string) {
    super(message ?? `HTTP ${status}`);
  }
}

const TITLES: Record<number, string> = {
  400: 'Bad Request',
  401: 'Unauthorized',
  403: 'Forbidden',
  404: 'Not Found',
  405: 'Method Not Allowed',
  409: 'Conflict',
  413: 'Payload Too Large',
  415: 'Unsupported Media Type',
  422: 'Unprocessable Entity',
  429: 'Too Many Requests',
  500: 'Internal Server Error',
  502: 'Bad Gateway',
  503: 'Service Unavailable',
  504: 'Gateway Timeout',
};

export function titleOf(status: number): string {
  return TITLES[status] ?? 'Error';
}

export function errorsBody(status: number, detail: string, title?: string): { errors: Array<{ status: string; title: string; detail: string }> } {
  return { errors: [{ status: String(status), title: title ?? titleOf(status), detail }] };
}

/** Throws the `errors` envelope error. */
export function fail(status: number, detail: string): never {
  throw new ApiError(status, errorsBody(status, detail), detail);
}

export interface Principal { account: number; user: number }

declare module 'fastify' {
  interface FastifyRequest {
    principal: Principal | null;
    logEntry: RequestLogEntry | null;
    /** Set by a `dropResponse` fault: handle the request, then destroy the socket instead of answering. */
    dropResponse: boolean;
  }
}

export function principal(req: FastifyRequest): Principal {
  if (!req.principal) throw new ApiError(401, errorsBody(401, 'missing bearer token'));
  return req.principal;
}

export interface RequestLogEntry {
  method: string;
  path: string;
  query: Record<string, string | string[]>;
  status: number;
  time: number;
}

export interface Fault {
  method?: string;
  pathPrefix: string;
  status: number;
  count: number;
  /** Matching requests to let through (answered normally) before the fault applies. */
  skip?: number;
  retryAfter?: number;
  delayMs?: number;
  body?: unknown;
  drop?: boolean;
  /** Handle the request normally, then destroy the socket instead of sending the response ("applied, response lost"). */
  dropResponse?: boolean;
  /** Hold the request (before it is handled) until `POST /_emulator/faults/release` lets it go on. */
  hold?: boolean;
}

/**
 * Attributes of the records in read, create and update responses of the service routes. Both modes serve the vendor's
 * routes, envelopes (paginated lists), query parameters and filters; `minimal` shows in each record only what the
 * interface specification shows; `vendor` the attributes the vendor's public API documentation shows (the smaller v2
 * subscription representation, identity and user fields, ...) and numeric job and history IDs.
 */
export type ReadMode = 'minimal' | 'vendor';

/** The read modes (see `ReadMode`). */
export const READ_MODES: readonly ReadMode[] = ['minimal', 'vendor'];

/** Everything a route needs: the mutable state, the clock and settings. */
export interface Ctx {
  s: EmulatorState;
  /** Response shape of the service routes (the admin API always answers the full state). */
  reads: ReadMode;
  tokenTtlSeconds: number;
  secret: Buffer;
  requests: RequestLogEntry[];
  faults: Fault[];
  /** Releases of the requests a `hold` fault holds, oldest first. */
  held: Array<() => void>;
  /** Requests allowed per client address in a rolling window; undefined: no limit. */
  rateLimit: RateLimit | undefined;
  /** Request times (emulator clock) per client address within the window. */
  hits: Map<string, number[]>;
  /** False: lists answer every record as `{data}` without `links`/`meta` (a service that does not paginate). */
  pagination?: boolean;
  /** How many resets so far: a request that waited across one is dropped. @default 0 */
  generation?: number;
  now(): number;
  /** Waits this many milliseconds of service time (1/timeScale of them in real time). @default real time */
  sleep?(ms: number): Promise<void>;
  /** The clock with the fractions of a second. @default now() */
  exactNow?(): number;
}

/** A request rate limit: `requests` per client address in a rolling window of `seconds`. */
export interface RateLimit {
  requests: number;
  seconds: number;
}

/** The service's documented limit: 1,000 requests per 5 minutes per client address (429, `Retry-After: 60`). */
export const DEFAULT_RATE_LIMIT: RateLimit = { requests: 1000, seconds: 300 };

/** Parses `N/SECONDS` or `off` (the `--rate-limit` option). */
export function parseRateLimit(text: string): RateLimit | 'off' {
  if (text === 'off') return 'off';
  const m = /^(\d+)\/(\d+)$/.exec(text);
  const requests = m ? Number(m[1]) : NaN;
  const seconds = m ? Number(m[2]) : NaN;
  if (!m || !Number.isSafeInteger(requests) || !Number.isSafeInteger(seconds) || requests < 1 || seconds < 1) {
    throw new Error(`rate limit '${text}' is not N/SECONDS (positive integers, e.g. 1000/300) or off`);
  }
  return { requests, seconds };
}

export function isObj(v: unknown): v is Record<string, unknown> {
  return typeof v === 'object' && v !== null && !Array.isArray(v);
}

/** Reads `data.attributes` of an envelope body (400 when absent). Checks `data.type` when `type` is given and the body has one. */
export function envelopeAttributes(body: unknown, type?: string): { attrs: Record<string, unknown>; id: unknown; type: unknown } {
  if (!isObj(body)) fail(400, 'request body must be a JSON object with a data envelope');
  const data = body.data;
  if (!isObj(data)) fail(400, 'request body must have a data object');
  if (type !== undefined && data.type !== undefined && data.type !== type) fail(400, `data.type must be '${type}'`);
  const attrs = data.attributes === undefined ? {} : data.attributes;
  if (!isObj(attrs)) fail(400, 'data.attributes must be an object');
  return { attrs, id: data.id, type: data.type };
}

/** Parses a path or query integer (digits only); undefined when not an integer. */
export function parseIntStrict(v: unknown): number | undefined {
  if (typeof v === 'number' && Number.isSafeInteger(v)) return v;
  if (typeof v !== 'string' || !/^-?\d{1,15}$/.test(v)) return undefined;
  return Number(v);
}

/** Integer path parameter or 404. */
export function pathId(v: unknown, what: string): number {
  const n = parseIntStrict(v);
  if (n === undefined) fail(404, `${what} ${String(v)} not found`);
  return n;
}

/** A single query value (400 when repeated). */
export function queryOne(q: unknown, name: string): string | undefined {
  if (!isObj(q)) return undefined;
  const v = q[name];
  if (v === undefined) return undefined;
  if (Array.isArray(v)) fail(400, `query parameter ${name} may appear only once`);
  return String(v);
}

export function isDate(v: unknown): v is string {
  if (typeof v !== 'string' || !/^\d{4}-\d{2}-\d{2}$/.test(v)) return false;
  const d = new Date(`${v}T00:00:00Z`);
  return !Number.isNaN(d.getTime()) && d.toISOString().slice(0, 10) === v;
}

export function isDateTime(v: unknown): v is string {
  if (typeof v !== 'string' || !/^\d{4}-\d{2}-\d{2}([T ]\d{2}:\d{2}(:\d{2}(\.\d+)?)?(Z|[+-]\d{2}:?\d{2})?)?$/.test(v)) return false;
  return isDate(v.slice(0, 10)) && !Number.isNaN(Date.parse(v.length === 10 ? `${v}T00:00:00Z` : v.replace(' ', 'T')));
}

/** Unix seconds -> `YYYY-MM-DD` (UTC). */
export function dayOf(unix: number): string {
  return new Date(Math.floor(unix) * 1000).toISOString().slice(0, 10);
}

/** `YYYY-MM-DD` -> days since epoch. */
export function dayNumber(date: string): number {
  return Math.floor(Date.parse(`${date}T00:00:00Z`) / 86400000);
}
