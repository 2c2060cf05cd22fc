/**
 * The service's rate limit as the client meets it: the wait after each 429 (the vendor's documented strategy),
 * `Retry-After` parsing and the pause shared by a client's concurrent requests; and the access-token cache.
 */

const TOKEN_MARGIN_MS = 60_000;
/** Used when a JWT carries no readable `exp`. */
const TOKEN_FALLBACK_TTL_MS = 5 * 60_000;
/** Decodes the `exp` claim (seconds) of a JWT without verifying it; undefined when absent/unreadable. */
export function jwtExpiry(token: string): number | undefined {
  const parts = token.split('.');
  if (parts.length < 2) return undefined;
  try {
    const payload = JSON.parse(Buffer.from(parts[1], 'base64url').toString('utf8')) as { exp?: unknown };
    return typeof payload.exp === 'number' && Number.isFinite(payload.exp) ? payload.exp : undefined;
  } catch {
    return undefined;
  }
}

/**
 * The rate-limit wait (vendor docs, `api-usage-docs/rate-limiting.md`): the first wait is the `Retry-After` of the
 * 429; each later 429 of the same call doubles it, up to `MAX_WAIT_MS`; every wait gets a random jitter of +-`JITTER`
 * and is never shorter than the `Retry-After` of the 429 that caused it (`DEFAULT_RETRY_AFTER_MS` when it has none).
 */
export const RATE_LIMIT = {
  /** The wait when a 429 carries no readable `Retry-After`: the value the vendor documents (`Retry-After: 60`). */
  DEFAULT_RETRY_AFTER_MS: 60_000,
  /** The doubled wait is capped at 5 minutes (the vendor's cap; a longer `Retry-After` is still honoured). */
  MAX_WAIT_MS: 300_000,
  /** Jitter: the wait is multiplied by a random factor in [1 - 0.15, 1 + 0.15). */
  JITTER: 0.15,
  /** Doubling starts from at least 1 s (a `Retry-After: 0` does not make every later wait 0). */
  MIN_DOUBLING_BASE_MS: 1_000,
  /**
   * ASSUMPTION (the vendor's `rate-limiting.md`; the spec shows no limit): 1,000 requests per client address in a
   * rolling 5-minute window. When the client itself sent that many within the window, a 429 is its own traffic: it
   * waits until the oldest of them leaves the window (`windowWaitMs`) instead of doubling from 60 s, which would
   * wait 60 + 120 + 240 s for a window that frees after at most 300.
   */
  WINDOW_REQUESTS: 1000,
  WINDOW_MS: 300_000,
  /** Added to the window's end, then up to +5% jitter (never earlier: a retry before it would only be refused). */
  WINDOW_MARGIN_MS: 1_000,
} as const;

/** Without a deadline, the default of `maxRateLimitWaitMs`: 30 minutes of 429 waits per call. */
export const DEFAULT_MAX_RATE_LIMIT_WAIT_MS = 30 * 60_000;

/**
 * @internal The wait before sending a call again after its `refusals`-th 429 (1 for the first), in ms.
 * `firstMs`: the first 429's `Retry-After` (or the default); `retryAfterMs`: this 429's `Retry-After` (a floor);
 * `random`: a number in [0, 1).
 */
export function rateLimitWaitMs(refusals: number, firstMs: number, retryAfterMs: number | undefined, random: number): number {
  const base = refusals <= 1 ? firstMs
    : Math.min(RATE_LIMIT.MAX_WAIT_MS, Math.max(firstMs, RATE_LIMIT.MIN_DOUBLING_BASE_MS) * 2 ** (refusals - 1));
  const jittered = Math.round(base * (1 + (2 * random - 1) * RATE_LIMIT.JITTER));
  return Math.max(jittered, retryAfterMs ?? RATE_LIMIT.DEFAULT_RETRY_AFTER_MS);
}

/**
 * @internal The wait after a 429 when the client's own requests fill the window (`leftMs`: until the oldest of them
 * leaves it): that time plus a margin and up to +5% jitter, never below the 429's `Retry-After` (60 s when none).
 */
export function windowWaitMs(leftMs: number, retryAfterMs: number | undefined, random: number): number {
  const wait = Math.round((leftMs + RATE_LIMIT.WINDOW_MARGIN_MS) * (1 + 0.05 * random));
  return Math.max(wait, retryAfterMs ?? RATE_LIMIT.DEFAULT_RETRY_AFTER_MS);
}

/**
 * Parses a `Retry-After` header (delta seconds or HTTP date) into milliseconds from `now`;
 * undefined when absent or unreadable.
 */
export function parseRetryAfter(value: string | null | undefined, now: number = Date.now()): number | undefined {
  if (value === null || value === undefined) return undefined;
  const v = value.trim();
  if (v === '') return undefined;
  if (/^\d+(\.\d+)?$/.test(v)) return Math.ceil(Number(v) * 1000);
  const t = Date.parse(v);
  if (Number.isNaN(t)) return undefined;
  return Math.max(0, t - now);
}

/**
 * @internal The rate-limit pause shared by a client and its `withDeadline` copies (in the handler: every concurrent
 * invocation of a warm container). A 429 (or a 503 of a retried call) with `Retry-After` pauses every request of the
 * client until it has passed, instead of each request finding the limit on its own: requests sent meanwhile would only be refused
 * (and count against the limit of a service that counts refusals). One wait runs at a time; later 429s of requests
 * that were already in flight join it.
 */
export class RateGate {
  /** Requests that waited for a pause (for tests and logs). */
  public waits = 0;
  private pause: Promise<void> | undefined;
  private pauseEnds = 0;
  /** When the client's last `RATE_LIMIT.WINDOW_REQUESTS` requests were sent (a ring; `next` is the oldest once full). */
  private readonly sent: number[] = [];
  private next = 0;

  /** Notes a request sent now (every attempt: the service counts refused ones too, as far as the client can tell). */
  public record(now: number = Date.now()): void {
    if (this.sent.length < RATE_LIMIT.WINDOW_REQUESTS) {
      this.sent.push(now);
      return;
    }
    this.sent[this.next] = now;
    this.next = (this.next + 1) % RATE_LIMIT.WINDOW_REQUESTS;
  }

  /**
   * When the client's own requests of the last `RATE_LIMIT.WINDOW_MS` number `RATE_LIMIT.WINDOW_REQUESTS` (the window is
   * full of them): the ms until the oldest leaves it; otherwise undefined (a 429 then comes from traffic the client does
   * not see, e.g. another process of the same address, and the documented doubling applies).
   */
  public windowFullForMs(now: number = Date.now()): number | undefined {
    if (this.sent.length < RATE_LIMIT.WINDOW_REQUESTS) return undefined;
    const left = this.sent[this.next] + RATE_LIMIT.WINDOW_MS - now;
    return left > 0 ? left : undefined;
  }

  /** Whether a pause is in progress (a request refused now joins it instead of starting its own). */
  public get active(): boolean {
    return this.pause !== undefined;
  }

  /** What is left of the pause in progress, in ms (by the clock; 0 when none). */
  public remainingMs(): number {
    return this.pause ? Math.max(0, this.pauseEnds - Date.now()) : 0;
  }

  /** Waits while a pause is active (returns at once otherwise). */
  public async wait(): Promise<void> {
    while (this.pause) {
      this.waits++;
      await this.pause;
    }
  }

  /** Pauses every request for `ms` (or joins the pause in progress). */
  public hold(ms: number, sleep: (ms: number) => Promise<void>): Promise<void> {
    if (!this.pause) {
      this.pauseEnds = Date.now() + ms;
      const p = sleep(ms).catch(() => undefined).finally(() => {
        if (this.pause === p) this.pause = undefined;
      });
      this.pause = p;
    }
    return this.pause;
  }
}

/**
 * @internal Token cache shared by a client and its `withDeadline` copies.
 * One exchange in flight at a time; cached until 60 s before the JWT's `exp`.
 */
export class TokenCache {
  /** Secrets known to this cache (for scrubbing). */
  public readonly secrets = new Set<string>();
  /** The rate-limit pause shared with the same copies (see RateGate). */
  public readonly gate = new RateGate();
  private refreshTokenPromise: Promise<string> | undefined;
  private token: string | undefined;
  private validUntil = 0;
  private inFlight: Promise<string> | undefined;

  constructor(private readonly source: string | (() => Promise<string>)) {
    if (typeof source === 'string' && source) this.secrets.add(source);
  }

  /** Resolves the refresh token lazily, once (a failed resolution is tried again next time). */
  public refreshToken(): Promise<string> {
    if (!this.refreshTokenPromise) {
      const src = this.source;
      const p = typeof src === 'string' ? Promise.resolve(src) : Promise.resolve().then(src);
      this.refreshTokenPromise = p.then((t) => {
        if (typeof t !== 'string' || t === '') throw new Error('the refresh token is empty');
        this.secrets.add(t);
        return t;
      });
      this.refreshTokenPromise.catch(() => { this.refreshTokenPromise = undefined; });
    }
    return this.refreshTokenPromise;
  }

  /** A valid access token: the cached one, the one being exchanged, or a new exchange. */
  public get(exchange: () => Promise<string>, now: number): Promise<string> {
    if (this.token && now < this.validUntil) return Promise.resolve(this.token);
    return this.refresh(exchange);
  }

  /**
   * Drops `token` if it is still the cached one (after a 401), and the resolved refresh token when it comes from a
   * function: the next exchange reads it again (the secret may have been rotated).
   */
  public invalidate(token: string): void {
    if (this.token === token) {
      this.token = undefined;
      this.validUntil = 0;
      if (typeof this.source !== 'string') this.refreshTokenPromise = undefined;
    }
  }

  /** Returns the cached token if it differs from `used` and is still valid (another caller refreshed it). */
  public newerThan(used: string, now: number): string | undefined {
    return this.token && this.token !== used && now < this.validUntil ? this.token : undefined;
  }

  private refresh(exchange: () => Promise<string>): Promise<string> {
    if (!this.inFlight) {
      this.inFlight = exchange().then((token) => {
        this.secrets.add(token);
        const exp = jwtExpiry(token);
        this.token = token;
        this.validUntil = exp !== undefined ? exp * 1000 - TOKEN_MARGIN_MS : Date.now() + TOKEN_FALLBACK_TTL_MS;
        return token;
      }).finally(() => { this.inFlight = undefined; });
    }
    return this.inFlight;
  }
}
