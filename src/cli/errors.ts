import { ServiceError, TxQueryError } from '../client';

/** Exit codes of `dpi`. */
export const EXIT = {
  /** Success (and `dpi status`: no error record). */
  OK: 0,
  /** `dpi status`: at least one record is in ERROR. */
  DATA_ERROR: 1,
  /** Usage, configuration, connection or service error: the command could not produce its result. */
  FAILURE: 2,
} as const;

/** An error `dpi` reports as one message on stderr, with an exit code. */
export class CliError extends Error {
  constructor(message: string, public readonly exitCode: number = EXIT.FAILURE) {
    super(message);
    this.name = 'CliError';
  }
}

const JWT_PATTERN = /eyJ[A-Za-z0-9_-]+\.[A-Za-z0-9_-]+\.[A-Za-z0-9_-]*/g;

/** Removes every known secret and anything that looks like a JWT from a text. */
export function redact(text: string, secrets: Iterable<string>): string {
  let out = text;
  for (const s of secrets) {
    if (s && s.length >= 4) out = out.split(s).join('***');
  }
  return out.replace(JWT_PATTERN, '***');
}

/**
 * A message as the terminal may show it: control characters (ESC and the other C0 ones but tab and line feed, DEL, the
 * C1 ones) become spaces, so neither the service's text nor a value a user passed can move the cursor, recolour or
 * retitle the terminal, or forge a line with a carriage return.
 */
export function printable(text: string): string {
  // eslint-disable-next-line no-control-regex
  return text.replace(/[\u0000-\u0008\u000b-\u001f\u007f-\u009f]/g, ' ');
}

/** How the transaction commands map their flags to the wire parameters (for messages). */
const FLAG_OF_PARAMETER: Record<string, string> = {
  subscription_id: '--subscription',
  limit: '--limit',
  timestamp_from: '--from',
  timestamp_to: '--to',
  attribution_date: '--attribution-date',
  job_id: '--job-id',
  sender: '--sender',
  status: '--status',
  parent: '--parent',
  payload_name: '--payload',
  tree_depth: '--depth',
};

/** Context of a failed service call, for a helpful message. */
export interface FailureContext {
  /** The command works on transactions (403/422 have transaction-specific meanings). */
  readonly transactions?: boolean;
  /** `dpi tx --tree` was used. */
  readonly tree?: boolean;
  /** The subscription asked for. */
  readonly subscription?: string;
  /** Origins of the configured service addresses (never with credentials). */
  readonly origins?: string[];
}

/** Converts any error of a command into the CliError to report. */
export function toCliError(e: unknown, ctx: FailureContext = {}): CliError {
  if (e instanceof CliError) return e;
  if (e instanceof TxQueryError) {
    const flag = FLAG_OF_PARAMETER[e.parameter];
    return new CliError(flag ? `${flag}: ${e.message}` : e.message, EXIT.FAILURE);
  }
  if (e instanceof ServiceError) {
    const said = e.serviceMessage ? ` (service said: ${e.serviceMessage})` : '';
    const where = `${e.method} ${e.path}`;
    switch (e.status) {
      case undefined: {
        const to = ctx.origins && ctx.origins.length > 0 ? ` at ${[...new Set(ctx.origins)].join(', ')}` : '';
        return new CliError(`cannot reach the service${to}: ${e.message}. Check --base-url / DPI_BASE_URL and that the service (or \`dpi emulator\`) is running.`);
      }
      case 401:
        return new CliError('authentication failed: the refresh token was rejected. '
          + 'Check DPI_REFRESH_TOKEN or the file given with --refresh-token-file (the token itself is never printed).');
      case 403:
        if (ctx.transactions) {
          return new CliError(`403 Forbidden: not your subscription, or --subscription missing (subscription ${ctx.subscription ?? '?'})`);
        }
        return new CliError(`403 Forbidden: ${where}${said}`);
      case 404:
        return new CliError(`404 Not Found: ${where}${said}`);
      case 422:
        if (ctx.transactions) {
          const param = e.serviceMessage ? /^([a-z_]+)\s*:/.exec(e.serviceMessage)?.[1] : undefined;
          const flag = param ? FLAG_OF_PARAMETER[param] : undefined;
          return new CliError(`422 invalid query parameter${flag ? ` (${flag})` : ''}: ${e.serviceMessage ?? 'rejected by the service'}`);
        }
        return new CliError(`422 Unprocessable: ${where}${said}`);
      case 500:
        if (ctx.tree) {
          return new CliError(`500 from the service while listing a tree${said}: a referenced child may have expired; `
            + `inspect raw records with \`dpi tx --subscription ${ctx.subscription ?? 'ID'} --parent <id>\``);
        }
        return new CliError(`500 service failure: ${where}${said}`);
      default:
        return new CliError(e.message);
    }
  }
  if (e instanceof Error) return new CliError(e.message);
  return new CliError(String(e));
}
