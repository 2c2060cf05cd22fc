/**
 * Error raised for every failed service call (HTTP error status, connection error, timeout,
 * attempts exhausted or deadline reached).
 *
 * Its message and fields never contain the access token, the refresh token or an
 * Authorization header, and `path` is the URL path only (no scheme, host or credentials).
 *
 * Message forms:
 * - `POST /service/sp/notifications-unified/362 failed with 400: <service message>`
 * - `GET /service/transactions/tx failed after 5 attempt(s) (attempts exhausted); last status 503: <service message>`
 * - `GET /x failed: deadline reached after 2 attempt(s) (next wait of 800 ms would pass it); last status 503: <service message>`
 * - `GET /x failed: deadline reached after 3 attempt(s) while waiting out the service's rate limit (refused with 429
 *    3 time(s); the next wait of 240 s would pass it); last status 429: <service message>`
 * - `GET /x failed: still rate limited after 8 refusal(s) and 1620 s of waiting; the next wait of 300 s would pass
 *    this call's rate-limit budget of 1800 s (maxRateLimitWaitMs); last status 429: <service message>`
 * - `POST /v2/sub failed: connection reset (ECONNRESET) after the request was sent; the request may have
 *    been applied: look for what it made before trying again`
 */
export class ServiceError extends Error {
  /** HTTP method. */
  public readonly method: string;
  /** URL path (without query string). */
  public readonly path: string;
  /** Last HTTP status seen; `undefined` when no response was received (connection error, timeout). */
  public readonly status: number | undefined;
  /** The service's own message (`errors[0].detail`, `errors[0].title`, `error` or `message`), scrubbed of secrets. */
  public readonly serviceMessage: string | undefined;
  /** True when the failure is transient (a later call may succeed): 429, 502-504, connection errors, timeouts. */
  public readonly retryable: boolean;
  /**
   * True when a creating POST may have been applied although no success was seen: the response was lost, the
   * attempt timed out after sending, the service answered a 5xx (500, 502, 503, 504, ...) or a 2xx whose body cannot
   * be read. Such a POST is never sent again by the client; the caller should look for what was made before retrying.
   * Only a 401 (re-authenticated once), a 429 and a connection that failed before anything was sent (refused,
   * unresolvable or unreachable host) prove that it was not applied: those are retried.
   */
  public readonly ambiguous: boolean;
  /**
   * True when an earlier attempt of this (retried) call was sent and ended without an answer (connection lost,
   * timeout) or with 500/502/503/504: the service may have applied it, so this error may describe the state that the
   * earlier attempt made (e.g. a repeated DELETE that finds nothing left to delete).
   */
  public readonly afterUnclearAttempt: boolean;
  /** Number of attempts made. */
  public readonly attempts: number;
  /** Low-level error code for connection failures (e.g. `ECONNRESET`, `TIMEOUT`). */
  public readonly code: string | undefined;
  /**
   * True when the call stopped because a wait for the service's rate limit would pass the caller's deadline (its turn
   * in the shared request budget, a 429's wait, or the pause of a 429 in progress), or the deadline passed before an
   * attempt was sent or while a 429 was waited out. The attempt it stopped before was not sent (or was refused with
   * 429, which applies nothing): the call can be made again later, by another invocation.
   */
  public readonly waitPastDeadline: boolean;

  constructor(init: {
    message: string;
    method: string;
    path: string;
    status?: number;
    serviceMessage?: string;
    retryable?: boolean;
    ambiguous?: boolean;
    afterUnclearAttempt?: boolean;
    attempts?: number;
    code?: string;
    waitPastDeadline?: boolean;
  }) {
    super(init.message);
    this.name = 'ServiceError';
    this.method = init.method;
    this.path = init.path;
    this.status = init.status;
    this.serviceMessage = init.serviceMessage;
    this.retryable = init.retryable ?? false;
    this.ambiguous = init.ambiguous ?? false;
    this.afterUnclearAttempt = init.afterUnclearAttempt ?? false;
    this.attempts = init.attempts ?? 1;
    this.code = init.code;
    this.waitPastDeadline = init.waitPastDeadline ?? false;
  }
}

/** Thrown by `validateTxQuery` (and so before anything is sent) for an invalid transaction query. */
export class TxQueryError extends Error {
  /** The offending query parameter (wire name). */
  public readonly parameter: string;

  constructor(parameter: string, message: string) {
    super(`transaction query parameter '${parameter}': ${message}`);
    this.name = 'TxQueryError';
    this.parameter = parameter;
  }
}
