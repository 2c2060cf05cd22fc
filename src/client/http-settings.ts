/** The options of `DpiClient` and the settings its HTTP core resolves from them. */
import { RequestBudget } from './budget';
import { ServiceEndpoints } from './endpoints';
import { DEFAULT_MAX_RATE_LIMIT_WAIT_MS } from './rate-limit';

/** Options of `DpiClient`. */
export interface DpiClientOptions {
  /** Base addresses of the service (see `endpointsFromBase`). */
  endpoints: ServiceEndpoints;
  /** The refresh token, or a function that returns it; resolved lazily on first use, once. */
  refreshToken: string | (() => Promise<string>);
  /**
   * Attempts per call (first try included) for retryable failures other than the rate limit (5xx of idempotent
   * calls, connection errors, timeouts) when no `deadline` is set. With a deadline the budget is the deadline (at most
   * `MAX_ATTEMPTS_WITH_DEADLINE` attempts). A 429 does not count: see `maxRateLimitWaitMs`. @default 5
   */
  maxAttempts?: number;
  /**
   * Epoch milliseconds; no attempt, retry or wait goes past it (a Lambda passes
   * `Date.now() + getRemainingTimeInMillis() - margin`). With a deadline, 429s are waited out for as long as the next
   * wait ends before it (`maxRateLimitWaitMs` is not used). @default no deadline
   */
  deadline?: number;
  /**
   * Without a `deadline`: the total time one call may spend waiting out the service's rate limit (429s), in ms. The
   * call is sent again after each wait for as long as the next wait fits in what is left of it (no attempt count).
   * @default 1800000 (30 minutes, `DEFAULT_MAX_RATE_LIMIT_WAIT_MS`)
   */
  maxRateLimitWaitMs?: number;
  /** Timeout of one attempt, in ms (also capped by the deadline). @default 30000 */
  requestTimeoutMs?: number;
  /**
   * Timeout of one attempt of a call that provisions cloud resources (the unified notification create and update,
   * the legacy update), in ms (also capped by the deadline). @default 600000
   */
  provisioningTimeoutMs?: number;
  /** Base of the exponential backoff (full jitter), in ms. @default 200 */
  baseDelayMs?: number;
  /** Cap of one backoff wait, in ms (a longer `Retry-After` is still honoured). @default 20000 */
  maxDelayMs?: number;
  /** Fetch implementation. @default the global fetch */
  fetch?: typeof fetch;
  /** Receives one line per retry (method, path, reason, wait); never contains a token. */
  logger?: (line: string) => void;
  /**
   * Called once before each wait caused by the service's rate limit (429) that the client starts, and before each
   * wait of a second or more for a turn in the request `budget` (`refusals: 0`), so a caller can say
   * what it waits for. Requests of the same client (or its `withDeadline` copies) refused while that pause is in
   * progress join it without another call, so N concurrent requests make one call, not N. Never called for a 429
   * that is not waited out (budget exhausted: the call fails instead). Exceptions it throws are ignored.
   * @default no callback
   */
  onWait?: (wait: RateLimitWait) => void;
  /**
   * A request budget shared with the other clients of the same service address (the handler's: one per account and
   * region, in the lifecycle journal): each attempt waits for its turn there before it is sent, and a 429 holds every
   * client's turns until its wait has passed. A call whose turn would come after its `deadline` (or past what is left
   * of `maxRateLimitWaitMs`) fails without being sent. @default no budget (the client paces itself only by 429s)
   */
  budget?: RequestBudget;
  /** Sleep function used for backoff waits (tests inject one). @default setTimeout based */
  sleep?: (ms: number) => Promise<void>;
  /** Random number in [0, 1) used for jitter. @default Math.random */
  random?: () => number;
  /** The clock (ms since the epoch) the access token's expiry is judged by (tests inject one). @default Date.now */
  now?: () => number;
}

/** One wait for the service's rate limit (see `DpiClientOptions.onWait`). */
export interface RateLimitWait {
  /** The refused call's method. */
  readonly method: string;
  /** The refused call's path (no query, no secret). */
  readonly path: string;
  /** How long the client waits before sending it again, in ms. */
  readonly waitMs: number;
  /** How many 429s this call has met so far (1 for the first); 0 for a wait for its turn in the request budget. */
  readonly refusals: number;
  /** The `Retry-After` the service sent, in ms, when it sent one. */
  readonly retryAfterMs?: number;
}

/** Which base address a request goes to. */
export type ServiceName = keyof ServiceEndpoints;

/** @internal One request of the client. */
export interface RequestSpec {
  method: 'GET' | 'POST' | 'PATCH' | 'DELETE';
  service: ServiceName;
  /** Path below the base address, starting with `/`. Path segments must already be encoded. */
  path: string;
  query?: URLSearchParams;
  body?: unknown;
  /**
   * A POST that creates something: sent again only after an answer that proves it was not applied (401 before the
   * one re-authenticated retry, 429, or a connection that failed before anything was sent: `NOT_SENT_CODES`); after
   * any 5xx, a lost connection or a timeout it fails with `ServiceError.ambiguous` instead.
   */
  creating?: boolean;
  /** Send the bearer token (false only for the token exchange). @default true */
  auth?: boolean;
  /** The call provisions cloud resources: the attempt timeout is `provisioningTimeoutMs`. */
  provisioning?: boolean;
  /** A 500 is a defined answer of this call (not a transient failure): not retried. */
  final500?: boolean;
}


const defaultSleep = (ms: number): Promise<void> => new Promise((resolve) => setTimeout(resolve, ms));

/** @internal Settings resolved from the options. */
export interface HttpSettings {
  endpoints: ServiceEndpoints;
  maxAttempts: number;
  deadline: number | undefined;
  maxRateLimitWaitMs: number;
  requestTimeoutMs: number;
  provisioningTimeoutMs: number;
  baseDelayMs: number;
  maxDelayMs: number;
  fetch: typeof fetch;
  logger: ((line: string) => void) | undefined;
  onWait: ((wait: RateLimitWait) => void) | undefined;
  budget: RequestBudget | undefined;
  sleep: (ms: number) => Promise<void>;
  random: () => number;
  now: () => number;
  /**
   * Runs right before each attempt of a creating request is sent (after its turn in the budget): when it throws, the
   * request is not sent and the call fails with its error (the handler: the Create was cancelled while it waited).
   */
  beforeCreatingSend?: () => Promise<void>;
}

/** @internal Resolves options with their defaults. */
export function resolveSettings(opts: DpiClientOptions): HttpSettings {
  if (!opts || !opts.endpoints) throw new Error('DpiClient: endpoints are required');
  const maxAttempts = opts.maxAttempts ?? 5;
  if (!Number.isInteger(maxAttempts) || maxAttempts < 1) throw new Error('DpiClient: maxAttempts must be an integer >= 1');
  const maxRateLimitWaitMs = opts.maxRateLimitWaitMs ?? DEFAULT_MAX_RATE_LIMIT_WAIT_MS;
  if (!Number.isFinite(maxRateLimitWaitMs) || maxRateLimitWaitMs < 0) {
    throw new Error(`DpiClient: maxRateLimitWaitMs must be a finite number >= 0 (got ${opts.maxRateLimitWaitMs})`);
  }
  const trim = (u: string): string => String(u).replace(/\/+$/, '');
  const e = opts.endpoints;
  return {
    endpoints: {
      baseUrl: trim(e.baseUrl),
      subscriptionsUrl: trim(e.subscriptionsUrl),
      accountUrl: trim(e.accountUrl),
      userUrl: trim(e.userUrl),
      remoteIdentityUrl: trim(e.remoteIdentityUrl),
      authUrl: trim(e.authUrl),
    },
    maxAttempts,
    deadline: opts.deadline,
    maxRateLimitWaitMs,
    requestTimeoutMs: opts.requestTimeoutMs ?? 30_000,
    provisioningTimeoutMs: opts.provisioningTimeoutMs ?? 600_000,
    baseDelayMs: opts.baseDelayMs ?? 200,
    maxDelayMs: opts.maxDelayMs ?? 20_000,
    fetch: opts.fetch ?? ((input, init) => fetch(input, init)),
    logger: opts.logger,
    onWait: opts.onWait,
    budget: opts.budget,
    sleep: opts.sleep ?? defaultSleep,
    random: opts.random ?? Math.random,
    now: opts.now ?? Date.now,
  };
}
