import { readFileSync, statSync } from 'node:fs';
// commander is bundled into the dpi CLI by esbuild, so a devDependency is enough.
// eslint-disable-next-line import/no-extraneous-dependencies
import { Command, Option } from 'commander';
import { DpiClient, ServiceEndpoints } from '../client';
import { CliError, EXIT } from './errors';
import { CliIo } from './io';
import { Progress, waitReporter } from './waits';
import { RequestBudget } from '../client/budget';
import { REQUEST_BUDGET_ENV } from '../contract';
import { cliBudget, cliPace, DOCUMENTED_BUDGET } from './budget';
import { insecureTransportReason } from '../local/transport';

/** The flags and environment variables of every service address. */
const ADDRESSES: ReadonlyArray<{ key: keyof ServiceEndpoints; flag: string; option: string; env: string; what: string }> = [
  { key: 'baseUrl', flag: '--base-url', option: 'baseUrl', env: 'DPI_BASE_URL', what: 'gateway (/service/...); default for every other address' },
  { key: 'subscriptionsUrl', flag: '--subscriptions-url', option: 'subscriptionsUrl', env: 'DPI_SUBSCRIPTIONS_URL', what: 'subscriptions service' },
  { key: 'accountUrl', flag: '--account-url', option: 'accountUrl', env: 'DPI_ACCOUNT_URL', what: 'account service' },
  { key: 'userUrl', flag: '--user-url', option: 'userUrl', env: 'DPI_USER_URL', what: 'user service' },
  { key: 'remoteIdentityUrl', flag: '--remote-identity-url', option: 'remoteIdentityUrl', env: 'DPI_REMOTE_IDENTITY_URL', what: 'remote identity service' },
  { key: 'authUrl', flag: '--auth-url', option: 'authUrl', env: 'DPI_AUTH_URL', what: 'authentication service' },
];

/** Environment variable holding the refresh token. */
export const REFRESH_TOKEN_ENV = 'DPI_REFRESH_TOKEN';
/** The default of `--budget-table` for every service command not run with `--local` (src/cli/budget.ts). */
export const BUDGET_TABLE_ENV = 'DPI_BUDGET_TABLE';

/** Parsed connection flags. */
export interface ConnectionFlags {
  baseUrl?: string;
  subscriptionsUrl?: string;
  accountUrl?: string;
  userUrl?: string;
  remoteIdentityUrl?: string;
  authUrl?: string;
  refreshTokenFile?: string;
  /** Hidden: only present to refuse it without echoing it. */
  refreshToken?: string;
  /**
   * `--budget-table`: the DynamoDB table of the request budget shared with a deploy (src/cli/budget.ts); without it,
   * `DPI_BUDGET_TABLE` (not with `local`).
   */
  budgetTable?: string;
  /** `--request-budget`: the budget's pace (`<requests>/<seconds>` or `off`). */
  requestBudget?: string;
  /** The DynamoDB-compatible endpoint of `budgetTable` (set by a command that reads its journal there, `--endpoint`). */
  budgetEndpoint?: string;
  /** `--local` of the commands that have it: the service is the local runner's, so no DynamoDB budget is taken. */
  local?: boolean;
}

/** Adds the shared connection options to a service command. */
export function addConnectionOptions(cmd: Command): Command {
  for (const a of ADDRESSES) cmd.addOption(new Option(`${a.flag} <url>`, `${a.what} (env ${a.env})`));
  cmd.addOption(new Option('--refresh-token-file <file>', `file holding the refresh token (default: env ${REFRESH_TOKEN_ENV})`));
  // Accepted only to be refused with a clear message: a token on the command line leaks into shell history and process lists.
  cmd.addOption(new Option('--refresh-token <token>').hideHelp());
  cmd.addOption(new Option('--budget-table <name>', 'DynamoDB table whose request budget a deploy\'s provider shares (its lifecycle journal table): '
    + `this command takes its turns there too (default: env ${BUDGET_TABLE_ENV}, not with --local; dpi drift and dpi orphans use the journal table they read)`));
  cmd.addOption(new Option('--request-budget <requests/seconds>', `the budget's pace, or off (default: env ${REQUEST_BUDGET_ENV}, else ${DOCUMENTED_BUDGET}, `
    + 'the service\'s documented limit; give the provider\'s rateLimitRequests/rateLimitWindow if you changed them)'));
  return cmd;
}

/**
 * Total time one service call of a `dpi` command may spend waiting out the service's rate limit (429s): 30 minutes.
 * The service counts 1,000 requests per rolling 5 minutes, so this is six full windows; every wait is printed on
 * stderr. The same budget holds for the few changes the CLI's own clients make (`dpi drift --fix` re-applies a drifted
 * record through the handler's converge code, idempotent PATCHes only); `dpi orphans --fix` and `dpi local-deploy` go
 * through the handler, whose budget is its Lambda-like deadline.
 */
export const CLI_MAX_RATE_LIMIT_WAIT_MS = 30 * 60_000;

/** Attempts per call of the CLI's clients for failures other than the rate limit (5xx, connection errors). */
export const CLI_MAX_ATTEMPTS = 3;

/** How a command's client reports and bounds its waits. */
export interface ConnectOptions {
  /**
   * What the command has done so far, appended to each wait line on stderr (e.g. `() => `${n} of ${total} read``).
   * It can also be set (or replaced) later with `Connection.setProgress`, once the command knows its totals.
   */
  readonly progress?: Progress;
  /** Total 429 waiting per call, in ms. @default CLI_MAX_RATE_LIMIT_WAIT_MS */
  readonly maxRateLimitWaitMs?: number;
  /**
   * The request budget shared with a deploy's provider containers (src/cli/budget.ts), made once the endpoints are
   * known. @default none: the client paces itself by the service's 429s
   */
  readonly budget?: (endpoints: ServiceEndpoints) => RequestBudget | undefined;
}

/**
 * A resolved connection: a client, the secrets to redact, and the origins for messages. The client waits out the
 * service's rate limit patiently (no attempt count for 429s, `CLI_MAX_RATE_LIMIT_WAIT_MS` per call) and prints one
 * line per wait on stderr (`waitReporter`). A command that knows how far it has got says so with
 * `setProgress(() => '12 of 40 subscriptions read')` (or `connect(flags, io, { progress })`): the function is read
 * at each wait, so it can report a counter the command updates as it goes.
 */
export interface Connection {
  readonly client: DpiClient;
  readonly endpoints: ServiceEndpoints;
  readonly secrets: string[];
  readonly origins: string[];
  /** Sets the progress text of the wait lines (undefined: none). */
  setProgress(progress: Progress | undefined): void;
}

/** The origin of a URL without credentials (for messages). */
export function safeOrigin(url: string): string {
  try {
    return new URL(url).origin;
  } catch {
    return '(invalid URL)';
  }
}

/**
 * Refuses an address that would carry the refresh token (or a token made from it) unencrypted: a plain `http://`
 * URL is accepted only for a loopback host (`dpi emulator`, the embedded emulator, a tunnel on this machine);
 * anything else must be `https://`. The rule (and its message) is the local runner's (src/local/transport.ts).
 */
export function requireSecureTransport(what: string, url: string): URL {
  const reason = insecureTransportReason(what, url);
  if (reason) throw new CliError(reason, EXIT.FAILURE);
  return new URL(url);
}

/** Whether the flags or the environment name any service address. */
export function hasServiceAddress(flags: ConnectionFlags, env: CliIo['env']): boolean {
  const given = (v: string | undefined): boolean => v !== undefined && v.trim() !== '';
  return ADDRESSES.some((a) => given((flags as Record<string, string | undefined>)[a.option]) || given(env[a.env]));
}

/** Resolves endpoints (flags, then environment; DPI_BASE_URL fills the rest); refuses plain http to another host. */
export function resolveEndpoints(flags: ConnectionFlags, env: CliIo['env']): ServiceEndpoints {
  const val = (flag: string | undefined, envName: string): string | undefined => {
    const v = flag ?? env[envName];
    return v !== undefined && v.trim() !== '' ? v.trim() : undefined;
  };
  const base = val(flags.baseUrl, 'DPI_BASE_URL');
  const out: Partial<ServiceEndpoints> = {};
  const missing: string[] = [];
  for (const a of ADDRESSES) {
    const own = val((flags as Record<string, string | undefined>)[a.option], a.env);
    const v = own ?? base;
    if (v === undefined) {
      missing.push(`${a.flag} / ${a.env}`);
      continue;
    }
    requireSecureTransport(own !== undefined ? `${a.flag} / ${a.env}` : '--base-url / DPI_BASE_URL', v);
    out[a.key] = v.replace(/\/+$/, '');
  }
  if (missing.length === ADDRESSES.length) {
    throw new CliError('no service address: set DPI_BASE_URL or pass --base-url URL '
      + '(e.g. the address `dpi emulator` prints); per-service addresses override it (see dpi --help)', EXIT.FAILURE);
  }
  if (missing.length > 0) {
    throw new CliError(`missing service address: ${missing.join(', ')} (or set DPI_BASE_URL / --base-url as the default)`, EXIT.FAILURE);
  }
  return out as ServiceEndpoints;
}

/**
 * The permission bits (octal, `0644`) of a token file that the group or others may read or write, as ssh refuses such
 * a private key; undefined when only its owner may (a link is judged by its target), and on Windows (no POSIX bits).
 */
function openToOthers(file: string): string | undefined {
  if (process.platform === 'win32') return undefined;
  const mode = statSync(file).mode % 0o1000; // the permission bits
  return mode % 0o100 !== 0 ? `0${mode.toString(8)}` : undefined; // any bit of the group's or others'
}

/** Reads the refresh token from --refresh-token-file or DPI_REFRESH_TOKEN (never from a flag value). */
export function resolveRefreshToken(flags: ConnectionFlags, env: CliIo['env']): string {
  if (flags.refreshToken !== undefined) {
    throw new CliError('--refresh-token is not accepted: a token on the command line ends up in shell history and process lists. '
      + `Set ${REFRESH_TOKEN_ENV} or pass --refresh-token-file FILE.`, EXIT.FAILURE);
  }
  if (flags.refreshTokenFile !== undefined) {
    let text: string;
    try {
      text = readFileSync(flags.refreshTokenFile, 'utf8');
    } catch (e) {
      const code = (e as NodeJS.ErrnoException).code ?? 'read error';
      throw new CliError(`--refresh-token-file: cannot read the file (${code})`, EXIT.FAILURE);
    }
    const token = text.trim();
    if (token === '') throw new CliError('--refresh-token-file: the file is empty', EXIT.FAILURE);
    const mode = openToOthers(flags.refreshTokenFile);
    if (mode) {
      throw new CliError(`--refresh-token-file: ${flags.refreshTokenFile} is readable or writable by other users (mode ${mode}): `
        + `a file holding the refresh token must be its owner's alone: chmod 600 ${flags.refreshTokenFile}`, EXIT.FAILURE);
    }
    return token;
  }
  const token = env[REFRESH_TOKEN_ENV]?.trim();
  if (!token) {
    throw new CliError(`no refresh token: set ${REFRESH_TOKEN_ENV} or pass --refresh-token-file FILE `
      + '(for `dpi emulator`, the token it prints on start)', EXIT.FAILURE);
  }
  return token;
}

/**
 * The budget `--budget-table` names, else `DPI_BUDGET_TABLE` (not with `--local`); undefined without either. The pace
 * is read at once, so a bad value fails first.
 */
function budgetOf(flags: ConnectionFlags, io: CliIo): ((e: ServiceEndpoints) => RequestBudget | undefined) | undefined {
  const table = flags.budgetTable !== undefined ? flags.budgetTable.trim() : flags.local === true ? '' : (io.env[BUDGET_TABLE_ENV] ?? '').trim();
  if (table === '') return undefined;
  const pace = cliPace(flags.requestBudget, io.env);
  return (e) => cliBudget({ table, ...(flags.budgetEndpoint ? { endpoint: flags.budgetEndpoint } : {}) }, e, pace, io);
}

/**
 * Builds the client of a service command: rate-limit waits are reported on stderr (with `opts.progress` or what
 * `setProgress` sets later) and bounded by `opts.maxRateLimitWaitMs` per call; other retryable failures by
 * `CLI_MAX_ATTEMPTS` attempts.
 */
export function connect(flags: ConnectionFlags, io: CliIo, opts: ConnectOptions = {}): Connection {
  const endpoints = resolveEndpoints(flags, io.env);
  const refreshToken = resolveRefreshToken(flags, io.env);
  let progress: Progress | undefined = opts.progress;
  const client = new DpiClient({
    endpoints,
    refreshToken,
    maxAttempts: CLI_MAX_ATTEMPTS,
    requestTimeoutMs: 30_000,
    maxRateLimitWaitMs: opts.maxRateLimitWaitMs ?? CLI_MAX_RATE_LIMIT_WAIT_MS,
    onWait: waitReporter(io, () => progress?.()),
    budget: (opts.budget ?? budgetOf(flags, io))?.(endpoints),
  });
  return {
    client,
    endpoints,
    secrets: [refreshToken],
    origins: Object.values(endpoints).map(safeOrigin),
    setProgress: (p) => { progress = p; },
  };
}
