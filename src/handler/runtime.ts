import { DpiClient, ProductRecord, ServiceEndpoints } from '../client';
import { ConnectionProperties, DEFAULT_PIPELINE_METADATA_KEYS } from '../contract';
import { Environment, StackLineage, transportProblem } from './binding';
import { HandlerError, isStatus, registerSecret } from './errors';
import { dynamoJournal, Journal, resetJournalCache } from './journal';
import { dynamoLeases, LeaseScope, ResourceLeases } from './journal-lease';
import { log } from './log';
import { budgetPaceOf, dynamoBudget } from './rate-budget';
import { CfnEvent, LambdaContextLike } from './types';

/** Replacements of the handler's AWS calls, for tests and the local lifecycle runner (`dpi local-deploy`). */
export interface LocalRuntime {
  /** Returns the secret string of a Secrets Manager secret (default: GetSecretValue). */
  readSecret?: (arn: string) => Promise<string>;
  /** Returns the AWS account ID being deployed to (default: STS GetCallerIdentity). */
  callerAccountId?: () => Promise<string>;
  /** Waits (default: setTimeout). Also used by the service client's backoff. */
  sleep?: (ms: number) => Promise<void>;
  /**
   * Endpoint of a DynamoDB-compatible server for the lifecycle journal (for example a local dynalite,
   * `http://127.0.0.1:<port>`); static local credentials are used with it. Default: DynamoDB of the
   * Lambda's region with the Lambda's credentials.
   */
  journalEndpoint?: string;
  /** Creation time (epoch ms) of an IAM role (default: IAM GetRole; undefined when unknown). */
  roleCreatedAt?: (roleArn: string) => Promise<number | undefined>;
  /**
   * The environment of the provider function an event is sent to, as its template sets it (the local runner resolves
   * it from the template): the connections and stacks it serves (`DPI_BOUND_CONNECTIONS`, `DPI_BOUND_STACKS`,
   * src/handler/binding.ts). Events that differ from it are refused. A function of the event when one runner serves
   * several providers. Default: the process environment (as in Lambda).
   */
  environment?: Environment | ((event: CfnEvent) => Environment);
  /**
   * What CloudFormation says of a stack (its parent and root stack IDs), to prove a nested stack the provider's own
   * (src/handler/binding.ts, `proveNestedStack`). Default: CloudFormation DescribeStacks. The local runner answers
   * from its state.
   */
  describeStack?: (stackId: string) => Promise<StackLineage | undefined>;
  /**
   * The clock (epoch ms) of the invocation's deadline and of the resource lease (default: Date.now). Tests move it
   * instead of waiting for a lease to expire.
   */
  now?: () => number;
}

/**
 * Margin kept before the Lambda's own timeout: the client's deadline is the remaining time minus this, so every
 * retry and rate-limit wait ends (or fails at once, when the next one would not fit) with this much time left to
 * write the journal and return the outcome to CloudFormation.
 */
export const DEADLINE_MARGIN_MS = 15_000;

let local: LocalRuntime = {};
/** Set by configureLocalRuntime (never in Lambda): plain http is then accepted to loopback addresses (the local emulator). */
let localRun = false;
const clients = new Map<string, DpiClient>();
const ids = new Map<string, Promise<{ accountId: string; userId: string }>>();
const products = new Map<string, Promise<ProductRecord>>();
let callerAccount: Promise<string> | undefined;

const resets: Array<() => void> = [];

/** Registers a module-level cache of another module that `configureLocalRuntime` clears too. */
export function clearedWithLocalRuntime(reset: () => void): void {
  resets.push(reset);
}

/**
 * Replaces the AWS calls of the handler (secret read, caller account, sleep) and clears the
 * module-level caches. Used by tests and by the local lifecycle runner; the Lambda never calls it.
 */
export function configureLocalRuntime(runtime: LocalRuntime = {}): void {
  local = { ...runtime };
  localRun = true;
  clients.clear();
  ids.clear();
  products.clear();
  lineages.clear();
  resetJournalCache();
  for (const reset of resets) reset();
  callerAccount = undefined;
}

/** The environment of the provider function `event` is sent to (the process environment in Lambda). */
export function environmentFor(event: CfnEvent): Environment {
  const env = local.environment;
  if (env === undefined) return process.env;
  return typeof env === 'function' ? env(event) : env;
}

/** A stack's parent never changes: each container asks CloudFormation once per stack (one call in flight per stack). */
const lineages = new Map<string, Promise<StackLineage | undefined>>();
let cloudFormation: import('@aws-sdk/client-cloudformation').CloudFormationClient | undefined;

/** Whether a failed DescribeStacks may succeed when asked again (throttling, a 5xx, the network), as opposed to an answer. */
function transientCfnError(e: unknown): boolean {
  const err = e as { name?: string; $metadata?: { httpStatusCode?: number }; $retryable?: unknown };
  const status = err.$metadata?.httpStatusCode;
  return /Throttl|TooManyRequests|RequestLimitExceeded|Timeout|ECONNRESET|ETIMEDOUT|EAI_AGAIN|socket hang up/i.test(`${err.name} ${(e as Error).message}`)
    || err.$retryable !== undefined || status === undefined || status >= 500;
}

/**
 * A stack's parent and root (LocalRuntime.describeStack, else CloudFormation DescribeStacks), cached per container.
 * DescribeStacks is throttled account-wide and a fleet's deploy sends thousands of events, so a transient failure is
 * asked again with jittered backoff (up to about a minute) before the event is refused: a refused Delete would leave
 * a stack stuck or a record behind.
 */
export function stackLineage(stackId: string): Promise<StackLineage | undefined> {
  let p = lineages.get(stackId);
  if (!p) {
    p = describeWithRetries(stackId);
    lineages.set(stackId, p);
    p.catch(() => lineages.delete(stackId));
  }
  return p;
}

async function describeWithRetries(stackId: string): Promise<StackLineage | undefined> {
  for (let attempt = 0; ; attempt++) {
    try {
      return await describeOnce(stackId);
    } catch (e) {
      if (!transientCfnError(e) || attempt >= 8) throw e;
      log({ level: 'WARNING', msg: 'DescribeStacks failed; asking again', stackId, attempt: attempt + 1, error: (e as Error).message });
      await sleep(Math.min(10_000, 500 * 2 ** attempt) * (0.5 + Math.random() / 2));
    }
  }
}

async function describeOnce(stackId: string): Promise<StackLineage | undefined> {
  if (local.describeStack) return local.describeStack(stackId);
  // The Lambda runtime provides the SDK (external in the bundle).
  // eslint-disable-next-line @typescript-eslint/no-require-imports, import/no-extraneous-dependencies
  const m = require('@aws-sdk/client-cloudformation') as typeof import('@aws-sdk/client-cloudformation');
  cloudFormation ??= new m.CloudFormationClient({ retryMode: 'adaptive', maxAttempts: 3 });
  const out = await cloudFormation.send(new m.DescribeStacksCommand({ StackName: stackId }));
  const s = out.Stacks?.[0];
  return s ? { ParentId: s.ParentId, RootId: s.RootId } : undefined;
}

/**
 * The environment of a scheduled function (`SubscriptionMonitor`, `DriftMonitor`): the process environment in Lambda;
 * in local runs and tests the configured one (a function of the event is asked with an empty event).
 */
export function scheduledEnvironment(): Environment {
  const env = local.environment;
  if (env === undefined) return process.env;
  return typeof env === 'function' ? env({} as CfnEvent) : env;
}

/**
 * Whether plain http to a loopback address may carry the refresh token: only in local runs (configureLocalRuntime:
 * `dpi local-deploy`, tests), as the local runner's transport rule allows; never in Lambda.
 */
export function loopbackHttpAllowed(): boolean {
  return localRun;
}

/** The clock in use (epoch ms): LocalRuntime.now, else Date.now. */
export function now(): number {
  return local.now ? local.now() : Date.now();
}

/** The sleep in use. */
export function sleep(ms: number): Promise<void> {
  if (local.sleep) return local.sleep(ms);
  return new Promise((resolve) => setTimeout(resolve, ms));
}

/** Extracts the refresh token from a secret string: the raw token, or JSON with `refreshToken` / `refresh_token`. */
export function refreshTokenFromSecret(secret: string): string {
  const s = secret.trim();
  if (s.startsWith('{')) {
    let o: unknown;
    try {
      o = JSON.parse(s);
    } catch {
      throw new HandlerError('the refresh token secret looks like JSON but cannot be parsed; store the raw token or {"refreshToken": "..."}');
    }
    const v = (o as Record<string, unknown>).refreshToken ?? (o as Record<string, unknown>).refresh_token;
    if (typeof v !== 'string' || v === '') {
      throw new HandlerError('the refresh token secret is JSON without a refreshToken (or refresh_token) field; add it or store the raw token');
    }
    return v;
  }
  if (s === '') throw new HandlerError('the refresh token secret is empty; store the service refresh token in it');
  return s;
}

async function readSecretString(arn: string): Promise<string> {
  if (local.readSecret) return local.readSecret(arn);
  // Lazily loaded: the bundle loads without the SDK when the runtime is overridden.
  // Loaded lazily (the bundle loads without the SDK when overridden); the Lambda runtime provides it
  // (external in the bundle), so a devDependency is enough. require, not import(): also works under jest.
  // eslint-disable-next-line @typescript-eslint/no-require-imports, import/no-extraneous-dependencies
  const sm = require('@aws-sdk/client-secrets-manager') as typeof import('@aws-sdk/client-secrets-manager');
  const c = new sm.SecretsManagerClient({});
  try {
    const out = await c.send(new sm.GetSecretValueCommand({ SecretId: arn }));
    if (typeof out.SecretString !== 'string') throw new HandlerError(`secret ${arn} has no string value; store the refresh token as a string secret`);
    return out.SecretString;
  } catch (e) {
    if (e instanceof HandlerError) throw e;
    const name = (e as { name?: string }).name ?? 'Error';
    throw new HandlerError(`cannot read the refresh token secret ${arn} (${name}); check that it exists and the provider role may read it (and its KMS key)`);
  }
}

/** The refresh token stored in the connection's secret (registered for scrubbing). */
export async function readRefreshToken(arn: string): Promise<string> {
  const raw = await readSecretString(arn);
  registerSecret(raw);
  const token = refreshTokenFromSecret(raw);
  registerSecret(token);
  return token;
}

/** The AWS account being deployed to (cached). */
export function callerAccountId(): Promise<string> {
  if (!callerAccount) {
    callerAccount = (async () => {
      if (local.callerAccountId) return local.callerAccountId();
      // eslint-disable-next-line @typescript-eslint/no-require-imports, import/no-extraneous-dependencies
      const sts = require('@aws-sdk/client-sts') as typeof import('@aws-sdk/client-sts');
      const out = await new sts.STSClient({}).send(new sts.GetCallerIdentityCommand({}));
      if (!out.Account) throw new HandlerError('STS GetCallerIdentity returned no account');
      return out.Account;
    })();
    callerAccount.catch(() => { callerAccount = undefined; });
  }
  return callerAccount;
}

function endpointsOf(c: ConnectionProperties): ServiceEndpoints {
  const need = (name: keyof ConnectionProperties): string => {
    const v = c?.[name];
    if (typeof v !== 'string' || v === '') throw new HandlerError(`Connection.${name} is required`);
    // Checked again at run time, tokens included (the synth-time check skips them); before the secret is read.
    const problem = transportProblem(name, v, localRun);
    if (problem) throw new HandlerError(problem);
    return v;
  };
  return {
    baseUrl: need('BaseUrl'),
    subscriptionsUrl: need('SubscriptionsUrl'),
    accountUrl: need('AccountUrl'),
    userUrl: need('UserUrl'),
    remoteIdentityUrl: need('RemoteIdentityUrl'),
    authUrl: need('AuthUrl'),
  };
}

function pathOfUrl(url: string): string {
  try {
    return new URL(url).pathname;
  } catch {
    return '?';
  }
}

/** A fetch that logs one line per HTTP call (method, path, status, duration; never headers or bodies). */
const loggingFetch: typeof fetch = async (input, init) => {
  const started = Date.now();
  const method = init?.method ?? 'GET';
  const path = pathOfUrl(String(input instanceof Request ? input.url : input));
  try {
    const res = await fetch(input, init);
    log({ msg: 'service call', method, path, status: res.status, ms: Date.now() - started });
    return res;
  } catch (e) {
    log({ msg: 'service call', method, path, error: (e as { cause?: { code?: string } }).cause?.code ?? (e as Error).name, ms: Date.now() - started });
    throw e;
  }
};

interface IamLike {
  IAMClient: new (cfg: object) => { send(cmd: object): Promise<{ Role?: { CreateDate?: Date } }> };
  GetRoleCommand: new (input: { RoleName: string }) => object;
}

/** Creation time of a role (IAM GetRole; the Lambda runtime provides the SDK). */
async function roleCreatedAt(roleArn: string): Promise<number | undefined> {
  if (local.roleCreatedAt) return local.roleCreatedAt(roleArn);
  const name = /:role\/(?:.*\/)?([^/]+)$/.exec(roleArn)?.[1];
  if (!name) return undefined;
  // eslint-disable-next-line @typescript-eslint/no-require-imports, import/no-extraneous-dependencies
  const iam = require('@aws-sdk/client-iam') as IamLike;
  const out = await new iam.IAMClient({}).send(new iam.GetRoleCommand({ RoleName: name }));
  return out.Role?.CreateDate ? new Date(out.Role.CreateDate).getTime() : undefined;
}

/** Everything a resource handler needs for one invocation. */
export interface Runtime {
  /** Client bound to this invocation's deadline. */
  readonly client: DpiClient;
  /** Epoch ms by which the work must be done. */
  readonly deadline: number;
  /** The lifecycle journal of the connection's account and region. */
  readonly journal: Journal;
  /** The resource leases in the journal's table (one invocation at a time per resource: lease.ts); onEvent's runtime only. */
  readonly leases?: ResourceLeases;
  /** What the lease held by this invocation tells (set by onEvent while it holds the lease). */
  readonly lease?: LeaseScope;
  /**
   * Whether this event may continue in isComplete (src/handler/continuation.ts): a call stopped by a rate-limit wait
   * past the deadline is then no failure, and a kind lets it through as it is (no undo, no wrapping).
   */
  readonly continues?: boolean;
  /**
   * Set when this Update's journal table changed and the new table does not hold the resource's record (journal-move.ts):
   * a record made anew from the previous properties is then kept as adopted (never ended), since nothing proves it the
   * stack's. The previous table, and the reason for the log.
   */
  readonly journalUnproven?: { readonly from: string; readonly reason: string };
  /** The origin of the service's subscriptions address (what the facts the handler learns of the service are kept by). */
  readonly serviceOrigin?: string;
  /** Keys for the parts of a pipeline result that product 107's record names no key for. */
  readonly metadataKeys: { readonly subscriptions: string; readonly meta: string };
  /** Account and user IDs (from the connection, or looked up once and cached). */
  ids(): Promise<{ accountId: string; userId: string }>;
  sleep(ms: number): Promise<void>;
  callerAccountId(): Promise<string>;
  /** A product's record (`GET /v2/product/{id}`), read once per container. */
  product(id: number): Promise<ProductRecord>;
  /** Creation time (epoch ms) of an IAM role, for the 403 retry during IAM propagation. */
  roleCreatedAt(roleArn: string): Promise<number | undefined>;
  /**
   * The journal of another table, opened to read only: never created (a missing table fails its calls with "does not
   * exist"). For an Update whose connection names another table than its previous properties (journal-move.ts).
   */
  journalAt(table: string): Journal;
}

/** Builds the runtime of one invocation: one cached client per connection, deadline from the Lambda context. */
export function runtimeFor(connection: ConnectionProperties, context: LambdaContextLike | undefined,
  environment: Environment = process.env): Runtime & { readonly leases: ResourceLeases } {
  if (!connection || typeof connection !== 'object') throw new HandlerError('the Connection property is missing');
  const endpoints = endpointsOf(connection);
  const arn = connection.RefreshTokenSecretArn;
  if (typeof arn !== 'string' || arn === '') throw new HandlerError('Connection.RefreshTokenSecretArn is required');
  const pace = budgetPaceOf(environment);
  const journalOpts = { table: connection.JournalTableName, endpoint: local.journalEndpoint, sleep, now, environment };
  const key = JSON.stringify([endpoints, arn, pace ? [connection.JournalTableName, pace] : []]);
  let base = clients.get(key);
  if (!base) {
    base = new DpiClient({
      ...(pace ? { budget: dynamoBudget(journalOpts, originOf(endpoints.baseUrl), pace) } : {}),
      endpoints,
      refreshToken: () => readRefreshToken(arn),
      fetch: loggingFetch,
      logger: (line) => log({ msg: 'retry', detail: line }),
      // One entry per rate-limit wait the client starts (not per request that joins it); the local runner
      // (`dpi local-deploy`) turns it into a stderr line, so these field names are a contract.
      onWait: (w) => log({ msg: 'rate limited', method: w.method, path: w.path, waitMs: w.waitMs, refusals: w.refusals }),
      sleep: (ms) => sleep(ms),
    });
    clients.set(key, base);
  }
  const remaining = context?.getRemainingTimeInMillis ? context.getRemainingTimeInMillis() : 15 * 60_000;
  const deadline = now() + remaining - DEADLINE_MARGIN_MS;
  const client = base.withDeadline(deadline);
  const idsFn = (): Promise<{ accountId: string; userId: string }> => {
    if (connection.AccountId && connection.UserId) {
      return Promise.resolve({ accountId: String(connection.AccountId), userId: String(connection.UserId) });
    }
    let p = ids.get(key);
    if (!p) {
      p = (async () => ({
        accountId: connection.AccountId ? String(connection.AccountId) : (await client.account.get()).id,
        userId: connection.UserId ? String(connection.UserId) : (await client.user.get()).id,
      }))();
      p.catch(() => ids.delete(key));
      ids.set(key, p);
    }
    return p;
  };
  const product = (id: number): Promise<ProductRecord> => {
    const pk = `${key}|${id}`;
    let p = products.get(pk);
    if (!p) {
      p = client.products.get(id).catch((e) => {
        if (isStatus(e, 404)) throw new HandlerError(`product ${id} does not exist; look up product IDs with 'dpi products'`);
        throw e;
      });
      p.catch(() => products.delete(pk));
      products.set(pk, p);
    }
    return p;
  };
  // The clock of the leases too: a record's ID (its creation time) is compared with the lease's requestSince.
  const journal = dynamoJournal({ table: connection.JournalTableName, endpoint: local.journalEndpoint, sleep, now, environment });
  const metadataKeys = {
    subscriptions: connection.PipelineSubscriptionsKey || DEFAULT_PIPELINE_METADATA_KEYS.subscriptions,
    meta: connection.PipelineMetaKey || DEFAULT_PIPELINE_METADATA_KEYS.meta,
  };
  const leases = dynamoLeases(journalOpts);
  const journalAt = (table: string): Journal => dynamoJournal({ table, endpoint: local.journalEndpoint, sleep, provided: true, environment });
  return {
    client,
    deadline,
    ids: idsFn,
    sleep,
    callerAccountId,
    journal,
    leases,
    product,
    metadataKeys,
    roleCreatedAt,
    journalAt,
    serviceOrigin: originOf(endpoints.subscriptionsUrl),
  };
}

/** The origin of a service address (the request budget's scope: the service limits requests per client address). */
function originOf(url: string): string {
  try {
    return new URL(url).origin;
  } catch {
    return url;
  }
}
