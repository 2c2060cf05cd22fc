import { ServiceError } from '../client';

/** Maximum length of a failure reason sent to CloudFormation. */
export const MAX_REASON_LENGTH = 500;

/** A failure with a message meant for the user (one sentence: what happened and what to do). */
export class HandlerError extends Error {
  constructor(message: string) {
    super(message);
    this.name = 'HandlerError';
  }
}

const JWT_PATTERN = /eyJ[A-Za-z0-9_-]+\.[A-Za-z0-9_-]+\.[A-Za-z0-9_-]*/g;
const URL_CREDENTIALS = /(\b[a-z][a-z0-9+.-]*:\/\/)[^\s/@]+@/gi;
const BEARER = /Bearer\s+[^\s,;"]+/gi;

const secrets = new Set<string>();

/** Registers a secret value (refresh token, secret string) to be removed from every message and log line. */
export function registerSecret(value: string | undefined): void {
  if (value && value.length >= 4) secrets.add(value);
}

/** Removes registered secrets, JWT-shaped strings, bearer tokens and URL credentials from a text. */
export function scrub(text: string): string {
  let out = text;
  for (const s of secrets) out = out.split(s).join('***');
  return out.replace(JWT_PATTERN, '***').replace(BEARER, 'Bearer ***').replace(URL_CREDENTIALS, '$1***@');
}

/** Cuts a text to `max` characters (keeping a marker). */
export function truncate(text: string, max: number = MAX_REASON_LENGTH): string {
  return text.length <= max ? text : `${text.slice(0, max - 3)}...`;
}

/** The service's own message of an error, else the error's message. */
export function messageOf(err: unknown): string {
  if (err instanceof ServiceError) return err.serviceMessage ?? err.message;
  if (err instanceof Error) return err.message;
  return String(err);
}

/** HTTP status of a ServiceError (undefined otherwise). */
export function statusOf(err: unknown): number | undefined {
  return err instanceof ServiceError ? err.status : undefined;
}

/** True for a ServiceError with one of the statuses. */
export function isStatus(err: unknown, ...statuses: number[]): boolean {
  const s = statusOf(err);
  return s !== undefined && statuses.includes(s);
}

/**
 * True when a failed call certainly changed nothing: the service answered with a 4xx and the client
 * did not flag the outcome as ambiguous, or the request was never sent. A network error, timeout or 5xx may
 * have been applied.
 */
export function isDefiniteFailure(err: unknown): boolean {
  // Not a service answer (e.g. the client refused the request before sending it): nothing was sent.
  if (!(err instanceof ServiceError)) return !(err instanceof TypeError);
  // Stopped before its attempt was sent (or refused with 429) because a wait for the rate limit would pass the deadline.
  if (err.waitPastDeadline && !err.afterUnclearAttempt) return true;
  const s = statusOf(err);
  return s !== undefined && s >= 400 && s < 500 && !(err instanceof ServiceError && err.ambiguous);
}

/**
 * The one-sentence reason CloudFormation shows: the service's message plus a hint on what to do,
 * scrubbed of secrets and cut to ~500 characters.
 */
export function reasonOf(err: unknown): string {
  let text: string;
  if (err instanceof HandlerError) {
    text = err.message;
  } else if (err instanceof ServiceError) {
    const msg = err.serviceMessage ?? err.message;
    const where = `${err.method} ${err.path}`;
    if (err.status === 429) {
      text = `${err.message}; the service's rate limit did not clear before the function's remaining time ran out: `
        + 'deploy again in a few minutes (what this deploy made is in the journal and is found again)';
    } else if (err.status === undefined || err.retryable) {
      text = `${err.message}; the service did not answer in time: deploy again later`;
    } else if (err.status === 401) {
      text = `the service rejected the credentials (${where}: ${msg}); check the refresh token stored in the connection's secret`;
    } else {
      text = `${where} failed with ${err.status}: ${msg}`;
    }
  } else if (err instanceof Error) {
    text = err.message;
  } else {
    text = String(err);
  }
  return truncate(scrub(text.replace(/\s+/g, ' ').trim()));
}

/**
 * Environment variable through which the construct tells the handler the name of its log group (the provider's
 * explicit log group, or the one given in `ServiceConnectionProps.provider.logGroup`). Kept in step with
 * `HANDLER_LOG_GROUP_ENV` of src/connection/provider.ts (a test checks both).
 */
export const HANDLER_LOG_GROUP_ENV = 'DPI_HANDLER_LOG_GROUP';

/**
 * The log group this invocation's lines go to: the one the construct named, else Lambda's own variables (the
 * function's configured log group, else `/aws/lambda/<function name>`); undefined outside Lambda (the local runner,
 * tests), where no CloudWatch log group holds the lines.
 */
export function handlerLogGroup(env: NodeJS.ProcessEnv = process.env): string | undefined {
  const named = env[HANDLER_LOG_GROUP_ENV] || env.AWS_LAMBDA_LOG_GROUP_NAME;
  if (named) return named;
  return env.AWS_LAMBDA_FUNCTION_NAME ? `/aws/lambda/${env.AWS_LAMBDA_FUNCTION_NAME}` : undefined;
}

/** The error a Lambda handler throws so that CloudFormation shows exactly its message (internal). */
export class FailureReason extends Error {
  constructor(message: string) {
    super(message);
    this.name = 'FailureReason';
    // No stack frames: the Lambda runtime sends `stack` as the error's trace, and the provider framework writes
    // every trace line after the first into the reason CloudFormation shows.
    this.stack = `${this.name}: ${message}`;
  }
}

/**
 * The failure CloudFormation shows, as one sentence: in Lambda, what failed (`what`, e.g. `Create of Orders`), why
 * (the scrubbed reason of `err`, on one line) and where the details are (`see CloudWatch log group <name>`); outside
 * Lambda (no log group: the local runner shows its own log) the reason alone, as before. No stack frames, no
 * newline, no secret; the log pointer is never cut off.
 */
export function failureReason(what: string, err: unknown, logGroup: string | undefined = handlerLogGroup()): FailureReason {
  if (!logGroup) return new FailureReason(reasonOf(err));
  const pointer = `; see CloudWatch log group ${scrub(logGroup).replace(/\s+/g, '')}`;
  const why = reasonOf(err).replace(/[.;\s]+$/, '');
  const head = `${what.replace(/\s+/g, ' ')} failed: `;
  return new FailureReason(`${head}${truncate(why, Math.max(60, MAX_REASON_LENGTH - head.length - pointer.length))}${pointer}`);
}
