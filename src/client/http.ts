import { ServiceError } from './errors';
import { HttpSettings, RequestSpec } from './http-settings';
import { parseRetryAfter, rateLimitWaitMs, RATE_LIMIT, TokenCache, windowWaitMs } from './rate-limit';
import { MAX_RESPONSE_BYTES, readLimited, redirectTarget, withoutControlCharacters } from './response';

export { DEFAULT_MAX_RATE_LIMIT_WAIT_MS, jwtExpiry, parseRetryAfter, RateGate, rateLimitWaitMs, RATE_LIMIT, TokenCache, windowWaitMs } from './rate-limit';

export type { DpiClientOptions, RateLimitWait, RequestSpec, ServiceName, HttpSettings } from './http-settings';
export { resolveSettings } from './http-settings';

/** With a deadline, the retry budget is the deadline; this only guards against a loop. */
export const MAX_ATTEMPTS_WITH_DEADLINE = 100;
/**
 * With a deadline, a request is sent only when this much of it is left after its turn or a 429's wait: one sent at the
 * deadline's edge would time out unanswered (and a creating one would leave an unclear outcome) instead of waiting.
 */
export const SEND_RESERVE_MS = 5_000;

/** @internal Response of a successful request. */
export interface HttpResult {
  status: number;
  /** Parsed JSON, or undefined for an empty body. */
  body: unknown;
}

/**
 * Connection errors raised before a connection was established, so before any byte of the request was sent (safe to
 * retry even for a creating POST): refused, unresolvable or unreachable host, connect timeout.
 */
const NOT_SENT_CODES = new Set(['ECONNREFUSED', 'ENOTFOUND', 'EAI_AGAIN', 'EHOSTUNREACH', 'ENETUNREACH', 'UND_ERR_CONNECT_TIMEOUT']);
const JWT_PATTERN = /eyJ[A-Za-z0-9_-]+\.[A-Za-z0-9_-]+\.[A-Za-z0-9_-]*/g;

/** Extracts the service's own message from an error body: errors[0].detail, errors[0].title, error, message. */
export function serviceMessageOf(body: unknown, text: string): string | undefined {
  if (body && typeof body === 'object') {
    const b = body as { errors?: unknown; error?: unknown; message?: unknown };
    if (Array.isArray(b.errors) && b.errors.length > 0 && b.errors[0] && typeof b.errors[0] === 'object') {
      const e = b.errors[0] as { detail?: unknown; title?: unknown };
      if (typeof e.detail === 'string' && e.detail) return e.detail;
      if (typeof e.title === 'string' && e.title) return e.title;
    }
    if (typeof b.error === 'string' && b.error) return b.error;
    if (typeof b.message === 'string' && b.message) return b.message;
  }
  const t = text.trim();
  if (!t) return undefined;
  return t.length > 500 ? `${t.slice(0, 500)}...` : t;
}

/** `serviceMessageOf` without control characters (the form every error and log line carries). */
function cleanServiceMessage(body: unknown, text: string): string | undefined {
  const m = serviceMessageOf(body, text);
  return m === undefined ? undefined : withoutControlCharacters(m);
}


type AttemptOutcome =
  | { kind: 'response'; status: number; headers: Headers; text: string }
  /** A 3xx: never followed (it would carry the request's credentials, the refresh token too, to another address). */
  | { kind: 'redirect'; status: number; location: string | null }
  /** A body longer than `MAX_RESPONSE_BYTES` (not read). */
  | { kind: 'tooLarge'; status: number }
  | { kind: 'network'; code: string; timedOut: boolean; notSent: boolean };

/** @internal HTTP core: auth, retries, errors. */
export class HttpCore {
  constructor(public readonly settings: HttpSettings, public readonly tokens: TokenCache) {}

  /** Sends a request with auth and retries; resolves on 2xx, throws ServiceError otherwise. */
  public async request(spec: RequestSpec): Promise<HttpResult> {
    const s = this.settings;
    const base = s.endpoints[spec.service];
    const qs = spec.query && [...spec.query.keys()].length > 0 ? `?${spec.query.toString()}` : '';
    const url = `${base}${spec.path}${qs}`;
    const errPath = this.pathOf(url, spec.path);
    const useAuth = spec.auth ?? true;
    const bodyText = spec.body === undefined ? undefined : JSON.stringify(spec.body);
    let attempt = 0;
    /** Retryable failures other than 429 (bounded by `maxAttempts` without a deadline). */
    let failures = 0;
    /** 429s met by this call, the first wait, and the time spent waiting (429s only / every wait). */
    let refusals = 0;
    let firstRateWaitMs: number | undefined;
    let rateWaitedMs = 0;
    let waitedMs = 0;
    const started = Date.now();
    let reauthed = false;
    let unclear = false;
    let last: { status?: number; serviceMessage?: string; code?: string } = {};

    type FailExtra = { retryable?: boolean; ambiguous?: boolean; waitPastDeadline?: boolean };
    const fail = (message: string, extra: FailExtra = {}): ServiceError => new ServiceError({
      message: this.scrub(message),
      method: spec.method,
      path: errPath,
      status: last.status,
      serviceMessage: last.serviceMessage,
      retryable: extra.retryable,
      ambiguous: extra.ambiguous,
      afterUnclearAttempt: unclear,
      attempts: attempt,
      code: last.code,
      waitPastDeadline: extra.waitPastDeadline,
    });
    const lastText = (): string => {
      if (last.status !== undefined) return `last status ${last.status}${last.serviceMessage ? `: ${last.serviceMessage}` : ''}`;
      if (last.code) return `last error ${last.code}`;
      return 'no response received';
    };

    for (;;) {
      // A rate-limit pause of another request of this client (or its copies) holds this one too, unless it would
      // hold it past this copy's deadline (a handler invocation that started during another one's pause).
      if (s.deadline !== undefined && this.tokens.gate.active) {
        const left = this.tokens.gate.remainingMs();
        if (Date.now() + left >= s.deadline) {
          throw fail(`${spec.method} ${errPath} failed: deadline reached ${attempt === 0 ? 'before the request was sent' : `after ${attempt} attempt(s)`}: `
            + `the client waits out the service's rate limit (429) for another ${seconds(left)} s`
            + (attempt === 0 ? '' : `; ${lastText()}`), { retryable: true, waitPastDeadline: true });
        }
      }
      await this.tokens.gate.wait();
      const now = Date.now();
      if (s.deadline !== undefined && now >= s.deadline) {
        // Nothing of this call was applied when no attempt was sent or the last one was refused with 429 (the time ran
        // out while waiting it out): a call that can be made again later.
        throw fail(attempt === 0
          ? `${spec.method} ${errPath} failed: deadline reached before the request was sent`
          : `${spec.method} ${errPath} failed: deadline reached after ${attempt} attempt(s); ${lastText()}`,
        { retryable: true, waitPastDeadline: attempt === 0 || last.status === 429 });
      }
      // The token first: its exchange is a request with a turn of its own, which must not come between this
      // request's turn and its send.
      let token: string | undefined;
      if (useAuth) token = await this.token();
      if (s.budget) {
        // The request's turn in the budget shared with the other clients of the address (every attempt counts).
        const clock = Math.max(Date.now(), started + waitedMs);
        const room = s.deadline !== undefined ? s.deadline - SEND_RESERVE_MS - clock : s.maxRateLimitWaitMs - rateWaitedMs;
        const turn = await s.budget.reserve(Math.max(0, room));
        if (typeof turn !== 'number') {
          throw fail(`${spec.method} ${errPath} failed: ${s.deadline !== undefined ? 'deadline reached' : 'rate-limit budget (maxRateLimitWaitMs) spent'} `
            + `${attempt === 0 ? 'before the request was sent' : `after ${attempt} attempt(s)`}: the request budget shared by the clients of the `
            + `service address gives it its turn in ${seconds(turn.tooLongMs)} s` + (attempt === 0 ? '' : `; ${lastText()}`),
          { retryable: true, waitPastDeadline: s.deadline !== undefined });
        }
        if (turn > 0) {
          // A turn of a second or more is said, as a 429's wait is (refusals 0: nothing was refused).
          if (turn >= 1_000 && s.onWait) {
            try {
              s.onWait({ method: spec.method, path: errPath, waitMs: turn, refusals: 0 });
            } catch {
              // A reporter never fails the call.
            }
          }
          rateWaitedMs += turn;
          waitedMs += turn;
          await s.sleep(turn);
        }
        if (s.deadline !== undefined && Math.max(Date.now(), started + waitedMs) >= s.deadline) {
          throw fail(`${spec.method} ${errPath} failed: deadline reached ${attempt === 0 ? 'before the request was sent' : `after ${attempt} attempt(s)`} `
            + '(while taking its turn in the request budget)' + (attempt === 0 ? '' : `; ${lastText()}`), { retryable: true, waitPastDeadline: true });
        }
      }
      // The last look before a creating request leaves (its turn may have come after a long wait).
      if (spec.creating && s.beforeCreatingSend) await s.beforeCreatingSend();
      attempt++;
      const headers: Record<string, string> = { Accept: 'application/json' };
      if (token) headers.Authorization = `Bearer ${token}`;
      if (bodyText !== undefined) headers['Content-Type'] = 'application/json';
      let timeout = spec.provisioning ? s.provisioningTimeoutMs : s.requestTimeoutMs;
      if (s.deadline !== undefined) timeout = Math.max(1, Math.min(timeout, s.deadline - Date.now()));
      this.tokens.gate.record();
      const outcome = await this.attempt(url, spec.method, headers, bodyText, timeout);

      let retryAfterMs: number | undefined;
      let reason: string;
      if (outcome.kind === 'redirect') {
        last = { status: outcome.status };
        // 307 and 308 say the request was not processed; any other redirect of a create may follow one that was.
        const mayBeApplied = spec.creating === true && outcome.status !== 307 && outcome.status !== 308;
        throw fail(`${spec.method} ${errPath} was answered with a redirect (${outcome.status}) to ${redirectTarget(outcome.location, url)}: `
          + 'the client follows no redirect (it would send the request, its token or the refresh token, to that address); '
          + 'configure the address that answers itself' + (mayBeApplied ? '; the request may have been applied: look for what it made before trying again' : ''),
        { retryable: false, ambiguous: mayBeApplied });
      }
      if (outcome.kind === 'tooLarge') {
        last = { status: outcome.status };
        const mayBeApplied = spec.creating === true && outcome.status >= 200 && outcome.status < 300;
        throw fail(`${spec.method} ${errPath} answered ${outcome.status} with a body larger than ${MAX_RESPONSE_BYTES} bytes (the client's `
          + 'limit); it was not read' + (mayBeApplied ? '; the request was applied: look for what it made before trying again' : ''),
        { retryable: false, ambiguous: mayBeApplied });
      }
      if (outcome.kind === 'response') {
        let parsed: unknown;
        try {
          parsed = outcome.text.trim() === '' ? undefined : JSON.parse(outcome.text);
        } catch {
          parsed = undefined;
          if (outcome.status >= 200 && outcome.status < 300) {
            last = { status: outcome.status };
            throw fail(`${spec.method} ${errPath} returned ${outcome.status} with a body that is not JSON`
              + (spec.creating ? '; the request was applied: look for what it made before trying again' : ''), { ambiguous: spec.creating });
          }
        }
        if (outcome.status >= 200 && outcome.status < 300) return { status: outcome.status, body: parsed };
        const msg = cleanServiceMessage(parsed, outcome.text);
        last = { status: outcome.status, serviceMessage: msg === undefined ? undefined : this.scrub(msg) };
        const described = `${spec.method} ${errPath} failed with ${outcome.status}${last.serviceMessage ? `: ${last.serviceMessage}` : ''}`;
        if (outcome.status === 401 && useAuth && token) {
          if (reauthed) throw fail(described);
          // Exchange once more (unless another caller already did) and retry this call once.
          reauthed = true;
          this.tokens.invalidate(token);
          attempt--; // the re-authenticated retry does not count as an attempt
          this.log(`${spec.method} ${errPath}: 401, exchanging the refresh token again and retrying once`);
          continue;
        }
        const st = outcome.status;
        if (spec.creating && st >= 500) {
          // No 5xx proves that a creating POST was not applied: the service (or the gateway in front of it) may have
          // made the record before it failed or gave up waiting (500, 502, 504; a 503 may come from a backend that
          // is shedding load mid-request). Sending it again could make a second one: the caller looks first.
          throw fail(`${described}; the request may have been applied: look for what it made before trying again`,
            { retryable: false, ambiguous: true });
        }
        if (st === 429) {
          // A rate-limit refusal: the request was turned away before it was processed (safe to send again, a
          // creating POST too). Waited out as the vendor documents, bounded by the caller's budget, not maxAttempts.
          refusals++;
          const serviceRetryAfterMs = parseRetryAfter(outcome.headers.get('retry-after'));
          firstRateWaitMs ??= serviceRetryAfterMs ?? RATE_LIMIT.DEFAULT_RETRY_AFTER_MS;
          // The client's own requests fill the window: wait until it frees; otherwise the vendor's doubling.
          const full = this.tokens.gate.windowFullForMs();
          const own = full !== undefined ? windowWaitMs(full, serviceRetryAfterMs, s.random())
            : rateLimitWaitMs(refusals, firstRateWaitMs, serviceRetryAfterMs, s.random());
          // A pause already in progress (another request of this client was refused): join it, do not start another.
          const joins = this.tokens.gate.active;
          const wait = joins ? this.tokens.gate.remainingMs() : own;
          if (s.deadline !== undefined) {
            // Waits of an injected sleep take no time: the clock is at least the start plus every wait so far.
            const clock = Math.max(Date.now(), started + waitedMs);
            if (clock + wait + SEND_RESERVE_MS >= s.deadline) {
              throw fail(`${spec.method} ${errPath} failed: deadline reached after ${attempt} attempt(s) while waiting out the `
                + `service's rate limit (refused with 429 ${refusals} time(s); the next wait of ${seconds(wait)} s would pass it); `
                + `${lastText()}`, { retryable: true, waitPastDeadline: true });
            }
            if (attempt >= MAX_ATTEMPTS_WITH_DEADLINE) {
              throw fail(`${spec.method} ${errPath} failed after ${attempt} attempt(s) (attempts exhausted); ${lastText()}`, { retryable: true });
            }
          } else if (rateWaitedMs + wait > s.maxRateLimitWaitMs) {
            throw fail(`${spec.method} ${errPath} failed: still rate limited after ${refusals} refusal(s) and `
              + `${seconds(rateWaitedMs)} s of waiting; the next wait of ${seconds(wait)} s would pass this call's rate-limit `
              + `budget of ${seconds(s.maxRateLimitWaitMs)} s (maxRateLimitWaitMs); ${lastText()}`, { retryable: true });
          }
          this.log(`retry ${attempt + 1} ${spec.method} ${errPath} after 429 in ${wait} ms`
            + (joins ? ' (joins the rate-limit pause in progress)' : ` (refusal ${refusals})`));
          if (!joins && s.onWait) {
            try {
              s.onWait({ method: spec.method, path: errPath, waitMs: wait, refusals, retryAfterMs: serviceRetryAfterMs });
            } catch {
              // A reporter never fails the call.
            }
          }
          rateWaitedMs += wait;
          waitedMs += wait;
          // Every client of the address holds its turns until this wait has passed (best effort).
          if (s.budget && !joins) await s.budget.holdUntil(Date.now() + wait).catch(() => undefined);
          await this.tokens.gate.hold(wait, s.sleep);
          continue;
        } else if (st === 503) {
          // Waited out and retried for an idempotent call (GET, full-body PATCH, DELETE), which may have been applied.
          retryAfterMs = parseRetryAfter(outcome.headers.get('retry-after'));
          reason = String(st);
          unclear = true;
        } else if ((st === 500 && !spec.final500) || st === 502 || st === 504) {
          // An idempotent call (GET, full-body PATCH, DELETE) is retried; it may have been applied.
          reason = String(st);
          unclear = true;
        } else {
          throw fail(described);
        }
      } else {
        last = { code: outcome.code };
        const what = outcome.timedOut ? `no response within ${timeout} ms (timeout)` : `connection error (${outcome.code})`;
        if (spec.creating && !outcome.notSent) {
          throw fail(`${spec.method} ${errPath} failed: ${what} after the request was sent; the request may have been applied: `
            + 'look for what it made before trying again', { retryable: false, ambiguous: true });
        }
        reason = outcome.timedOut ? 'timeout' : outcome.code;
        if (!outcome.notSent) unclear = true;
      }

      // Retryable failure (not a 429).
      failures++;
      if (s.deadline === undefined ? failures >= s.maxAttempts : attempt >= MAX_ATTEMPTS_WITH_DEADLINE) {
        throw fail(`${spec.method} ${errPath} failed after ${attempt} attempt(s) (attempts exhausted); ${lastText()}`, { retryable: true });
      }
      const cap = Math.min(s.maxDelayMs, s.baseDelayMs * 2 ** (failures - 1));
      let delay = Math.floor(s.random() * cap);
      if (retryAfterMs !== undefined) delay = Math.max(delay, retryAfterMs);
      // A hold joins the pause in progress (a 429 of another request): its end is this call's wait too.
      if (retryAfterMs !== undefined && this.tokens.gate.active) delay = Math.max(delay, this.tokens.gate.remainingMs());
      if (s.deadline !== undefined && Date.now() + delay >= s.deadline) {
        throw fail(`${spec.method} ${errPath} failed: deadline reached after ${attempt} attempt(s) `
          + `(next wait of ${delay} ms would pass it); ${lastText()}`, { retryable: true });
      }
      this.log(`retry ${attempt + 1} ${spec.method} ${errPath} after ${reason} in ${delay} ms`);
      waitedMs += delay;
      if (retryAfterMs !== undefined) await this.tokens.gate.hold(delay, s.sleep);
      else await s.sleep(delay);
    }
  }

  /** Removes every known secret (and anything shaped like a JWT) from a string. */
  public scrub(text: string): string {
    let out = text;
    for (const secret of this.tokens.secrets) {
      if (secret.length >= 4) out = out.split(secret).join('***');
    }
    return out.replace(JWT_PATTERN, '***');
  }

  /** A valid access token (exchanging the refresh token when needed). */
  public token(): Promise<string> {
    return this.tokens.get(() => this.exchange(), this.settings.now());
  }

  private async exchange(): Promise<string> {
    const refreshToken = await this.tokens.refreshToken();
    const res = await this.request({
      method: 'POST',
      service: 'authUrl',
      path: '/auth/api/ref',
      auth: false,
      body: { data: { type: 'APIAuth', attributes: { refresh_token: refreshToken } } },
    });
    const token = (res.body as { data?: { attributes?: { token?: unknown } } } | undefined)?.data?.attributes?.token;
    if (typeof token !== 'string' || token === '') {
      throw new ServiceError({
        message: 'POST /auth/api/ref returned no token in data.attributes.token',
        method: 'POST',
        path: '/auth/api/ref',
        status: res.status,
      });
    }
    return token;
  }

  private log(line: string): void {
    if (this.settings.logger) this.settings.logger(this.scrub(line));
  }

  private pathOf(url: string, fallback: string): string {
    try {
      return new URL(url).pathname;
    } catch {
      return fallback.split('?')[0];
    }
  }

  private async attempt(url: string, method: string, headers: Record<string, string>, body: string | undefined,
    timeoutMs: number): Promise<AttemptOutcome> {
    const controller = new AbortController();
    let timedOut = false;
    const timer = setTimeout(() => { timedOut = true; controller.abort(); }, timeoutMs);
    let sent = false;
    try {
      // Never follow a redirect: the request (its bearer token, the refresh token of the exchange) would go with it.
      const res = await this.settings.fetch(url, { method, headers, body, signal: controller.signal, redirect: 'manual' });
      sent = true;
      if (res.status >= 300 && res.status < 400) {
        await res.body?.cancel().catch(() => undefined);
        return { kind: 'redirect', status: res.status, location: res.headers.get('location') };
      }
      const text = await readLimited(res, MAX_RESPONSE_BYTES);
      if (text === undefined) return { kind: 'tooLarge', status: res.status };
      return { kind: 'response', status: res.status, headers: res.headers, text };
    } catch (err) {
      const code = timedOut ? 'TIMEOUT' : errorCode(err);
      return { kind: 'network', code, timedOut, notSent: !sent && !timedOut && NOT_SENT_CODES.has(code) };
    } finally {
      clearTimeout(timer);
    }
  }
}

/** Milliseconds as seconds for messages (one decimal below 10 s). */
function seconds(ms: number): string {
  const sec = ms / 1000;
  return sec < 10 ? String(Math.round(sec * 10) / 10) : String(Math.round(sec));
}

/** The low-level code of a fetch failure (undici puts it on `cause`). */
function errorCode(err: unknown): string {
  let e: unknown = err;
  for (let i = 0; i < 4 && e && typeof e === 'object'; i++) {
    const c = (e as { code?: unknown }).code;
    if (typeof c === 'string' && c) return c;
    e = (e as { cause?: unknown }).cause;
  }
  return 'NETWORK_ERROR';
}
