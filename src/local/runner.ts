/**
 * The local lifecycle runner: replays the custom resources of a synthesized app
 * through the real handler against the emulator, the way CloudFormation would.
 */
import { randomUUID } from 'node:crypto';
import { dirname, join, resolve } from 'node:path';
import { HandlerExports } from '../contract';
import { DEFAULT_REFRESH_TOKEN, READ_MODES, ReadMode, RunningEmulator, startEmulator } from '../emulator';
import { AssemblyStack, readAssembly } from './assembly';
import { DEFAULT_REFRESH_TOKEN_ENV, DEFAULT_STATE_FILE } from './defaults';
import { dependencyOrder, selectedDependencies } from './graph';
import {
  CustomResourceEvent, defaultHandlerPath, HandlerLogSink, HandlerModule, invokeWithContext, LambdaLikeContext, loadHandler,
  OnEventResponse, redact,
} from './handler';
import { evaluateCondition, partitionOf, resolveValue, ResolveContext, stringifyScalars } from './intrinsics';
import { JOURNAL_STATE_FILE_NAME, JournalServer, startJournalServer } from './journal-server';
import { formatEvent, ProgressEvent, renderSummary, SummaryRow, summaryRows } from './output';
import { parseConcurrency, runScheduled } from './scheduler';
import {
  emptyState, LocalState, lockState, newStackId, readState, removeState, resourceKey, ResourceState, StackState, writeState,
} from './state';
import { isDpiType, isPlainObject, TemplateResource } from './template';


export { DEFAULT_REFRESH_TOKEN_ENV, DEFAULT_STATE_FILE } from './defaults';

/** Options of a local deployment run. */
export interface LocalDeployOptions {
  /** Cloud assembly directory. @default './cdk.out' */
  readonly app?: string;
  /** URL of a running emulator. @default an embedded emulator started for the run */
  readonly emulatorUrl?: string;
  /** State file. @default '.dpi/local-state.json' */
  readonly stateFile?: string;
  /** Delete every resource in the state (reverse dependency order) and clear the state. */
  readonly destroy?: boolean;
  /** Environment variable holding the refresh token. @default 'DPI_REFRESH_TOKEN' */
  readonly refreshTokenEnv?: string;
  /** The refresh token itself (programmatic use; takes precedence over the environment). */
  readonly refreshToken?: string;
  /** Handler bundle. @default '<package root>/assets/handler/index/index.js' */
  readonly handlerPath?: string;
  /** Also echo the handler's log lines to stderr (they always go to `<state dir>/handler.log`). */
  readonly showHandlerLogs?: boolean;
  /** isComplete polling interval. @default 1000 */
  readonly pollIntervalMs?: number;
  /** Time budget of one handler invocation (the Lambda timeout). @default 600000 */
  readonly invocationBudgetMs?: number;
  /**
   * How the embedded emulator answers reads: `minimal` (only what the spec shows) or `vendor` (the service vendor's
   * documented shapes). @default the DPI_EMULATOR_READS environment variable, else 'minimal'
   */
  readonly reads?: ReadMode;
  /**
   * Resource operations of a stack in flight at once (independent resources run concurrently, dependencies first,
   * like CloudFormation; stacks one after another in dependency order). 1 runs one resource at a time in plan order.
   * @default 10
   */
  readonly concurrency?: number;
  /** Progress lines. @default written to stderr */
  readonly progress?: (line: string) => void;
  /** Summary table lines. @default written to stdout */
  readonly output?: (line: string) => void;
}

/** Result of a local deployment run. */
export interface LocalDeployResult {
  /** False when anything failed (a resource, a rollback, a cleanup delete, or the run itself). */
  readonly success: boolean;
  /** The emulator the run talked to. */
  readonly emulatorUrl?: string;
  readonly stateFile: string;
  /** Every progress event, in order. */
  readonly events: ProgressEvent[];
  /** What exists after the run. */
  readonly resources: SummaryRow[];
  readonly elapsedMs: number;
  /** Why the run failed before or outside resource events (e.g. an unresolvable reference). */
  readonly error?: string;
}

const CONNECTION = 'Connection';
const FRAMEWORK_IS_COMPLETE_ENV = 'USER_IS_COMPLETE_FUNCTION_ARN';
const WAITER_TYPES = new Set(['Custom::DpiHistoryRequest']);
const DEFAULT_TIMEOUT_SECONDS = 1800;
const MAX_DATA_BYTES = 4096;
/** With concurrency, the state file is written at most this often during a stack's resource events (see `save`). */
const SAVE_INTERVAL_MS = 500;
/** Physical ID the CDK provider framework reports for a failed Create (its Delete is not passed to the handler). */
const CREATE_FAILED_MARKER = 'AWSCDK::CustomResourceProviderFramework::CREATE_FAILED';

/** Rewrites every `Connection.*Url` property to the emulator's URL. */
export function withEmulatorUrl(props: Record<string, unknown>, url: string): Record<string, unknown> {
  const c = props[CONNECTION];
  if (!isPlainObject(c)) return props;
  const conn: Record<string, unknown> = { ...c };
  for (const k of Object.keys(conn)) if (k.endsWith('Url')) conn[k] = url;
  return { ...props, [CONNECTION]: conn };
}

function deepEqual(a: unknown, b: unknown): boolean {
  return JSON.stringify(canonical(a)) === JSON.stringify(canonical(b));
}
function canonical(v: unknown): unknown {
  if (Array.isArray(v)) return v.map(canonical);
  if (isPlainObject(v)) return Object.fromEntries(Object.keys(v).sort().map((k) => [k, canonical(v[k])]));
  return v;
}

/**
 * Whether a role is registered as trusting the service: its trust policy allows `sts:AssumeRole` to an AWS account
 * principal (not only service principals), with or without an `sts:ExternalId` condition.
 */
export function roleTrustsService(role: TemplateResource): boolean {
  const doc = role.Properties?.AssumeRolePolicyDocument;
  if (!isPlainObject(doc)) return false;
  const statements = Array.isArray(doc.Statement) ? doc.Statement : [doc.Statement];
  return statements.some((s) => isPlainObject(s) && s.Effect === 'Allow' && isPlainObject(s.Principal) && s.Principal.AWS !== undefined);
}

interface PlannedResource {
  readonly logicalId: string;
  readonly resource: TemplateResource;
  readonly dependsOn: string[];
  readonly waiter: boolean;
  readonly path?: string;
}

interface Change {
  readonly kind: 'create' | 'update';
  readonly before?: ResourceState;
  readonly after: ResourceState;
}

/** A resource operation that failed during a deploy (what the rollback needs). */
interface Failure {
  readonly p: PlannedResource;
  readonly before?: ResourceState;
  readonly props?: Record<string, unknown>;
}

class RunFailure extends Error {}

/** A handler failure after onEvent succeeded (isComplete failed or timed out): the resource exists under `physicalId`. */
class WaiterError extends Error {
  constructor(message: string, readonly physicalId: string, readonly data: Record<string, unknown>) {
    super(message);
  }
}

/** Runs a local deployment (or destroy). Never throws for resource failures: see `success`. */
/** The embedded emulator's read mode: the option, else DPI_EMULATOR_READS, else minimal. */
export function readsOf(option: string | undefined): ReadMode {
  const v = option ?? process.env.DPI_EMULATOR_READS ?? 'minimal';
  if (!(READ_MODES as readonly string[]).includes(v)) {
    throw new Error(`reads '${v}' is not a read mode; use one of ${READ_MODES.join(', ')}`);
  }
  return v as ReadMode;
}

export async function runLocalDeploy(options: LocalDeployOptions = {}): Promise<LocalDeployResult> {
  const run = new Runner(options);
  return run.run();
}

class Runner {
  private readonly started = Date.now();
  private readonly stateFile: string;
  private readonly events: ProgressEvent[] = [];
  private readonly progress: (line: string) => void;
  private readonly output: (line: string) => void;
  private readonly sink: HandlerLogSink;
  private readonly secrets: string[] = [];
  private state: LocalState = emptyState();
  private emulator?: RunningEmulator;
  private journal?: JournalServer;
  private url?: string;
  private handler?: HandlerModule;
  private failed = false;
  private tokenValue?: string;
  private exports = new Map<string, string>();
  private configuredAccount?: string;
  private readonly tokenFromEnv: boolean;
  private readonly concurrency: number;
  private lastSave = 0;
  private saveTimer?: NodeJS.Timeout;

  constructor(private readonly options: LocalDeployOptions) {
    this.stateFile = resolve(options.stateFile ?? DEFAULT_STATE_FILE);
    this.concurrency = parseConcurrency(options.concurrency);
    this.progress = options.progress ?? ((l) => process.stderr.write(`${l}\n`));
    this.output = options.output ?? ((l) => process.stdout.write(`${l}\n`));
    const envToken = options.refreshToken ?? process.env[options.refreshTokenEnv ?? DEFAULT_REFRESH_TOKEN_ENV];
    this.tokenFromEnv = options.refreshToken === undefined && !!envToken;
    if (envToken) {
      this.tokenValue = envToken;
      this.secrets.push(envToken);
    }
    this.sink = { file: join(dirname(this.stateFile), 'handler.log'), echo: options.showHandlerLogs, redact: this.secrets };
  }

  async run(): Promise<LocalDeployResult> {
    let error: string | undefined;
    let unlock: (() => void) | undefined;
    try {
      unlock = lockState(this.stateFile);
      this.state = readState(this.stateFile);
      if (this.options.destroy) await this.destroy();
      else await this.deploy();
      // Events saved lazily (concurrency) are on disk before the run reports.
      if (this.saveTimer) this.saveNow();
    } catch (e) {
      this.failed = true;
      if (!(e instanceof RunFailure)) {
        error = redact((e as Error).message, this.secrets);
        this.progress(`❌  ${error}`);
      }
    } finally {
      if (this.saveTimer) {
        try {
          this.saveNow();
        } catch (e) {
          this.failed = true;
          error = error ?? redact((e as Error).message, this.secrets);
        }
      }
      if (this.journal) {
        try {
          await this.journal.stop();
        } catch (e) {
          this.failed = true;
          const message = `could not save the journal: ${redact((e as Error).message, this.secrets)}`;
          error = error ?? message;
          this.progress(`❌  ${message}`);
        }
      }
      if (this.emulator) await this.emulator.stop();
      unlock?.();
    }
    const rows = summaryRows(Object.values(this.state.resources));
    const elapsedMs = Date.now() - this.started;
    this.progress('');
    this.progress(`${this.failed ? '❌  local-deploy failed' : '✅  local-deploy complete'} (${this.options.destroy ? 'destroy' : 'deploy'}) in ${(elapsedMs / 1000).toFixed(2)}s`);
    for (const line of renderSummary(rows)) this.output(line);
    return { success: !this.failed, emulatorUrl: this.url, stateFile: this.stateFile, events: this.events, resources: rows, elapsedMs, error };
  }

  // ---------------------------------------------------------------------------------------------
  // Plumbing

  private get token(): string {
    if (this.tokenValue === undefined) {
      const env = this.options.refreshTokenEnv ?? DEFAULT_REFRESH_TOKEN_ENV;
      throw new Error(`no refresh token: set the environment variable ${env} to the refresh token of the emulator account`);
    }
    return this.tokenValue;
  }

  private async connect(): Promise<void> {
    if (this.url) return;
    if (this.options.emulatorUrl) {
      const url = this.options.emulatorUrl.replace(/\/+$/, '');
      // Reach it before anything else, so an unreachable URL is named instead of a bare "fetch failed" later.
      try {
        const res = await fetch(`${url}/_emulator/clock`, { signal: AbortSignal.timeout(10_000) });
        if (res.status !== 200) throw new Error(`GET /_emulator/clock answered ${res.status}`);
      } catch (e) {
        const cause = networkCode(e) ?? (e as { cause?: { message?: string } }).cause?.message ?? (e as Error).message;
        throw new Error(`cannot reach the emulator at ${url} (${cause}); start it with 'dpi emulator' and pass the URL it prints, `
          + 'or omit --emulator to use an embedded one');
      }
      this.url = url;
    } else {
      this.emulator = await startEmulator({ port: 0, stateFile: join(dirname(this.stateFile), 'emulator-state.json'), reads: readsOf(this.options.reads) });
      this.url = this.emulator.url;
      if (this.tokenFromEnv && this.tokenValue !== DEFAULT_REFRESH_TOKEN) {
        // A token exported for the real service (e.g. for dpi status) means nothing to the embedded emulator.
        this.progress(`${this.options.refreshTokenEnv ?? DEFAULT_REFRESH_TOKEN_ENV} is set, but the embedded emulator knows only its own `
          + 'token: using that one (the variable is used with --emulator <url>)');
        this.tokenValue = DEFAULT_REFRESH_TOKEN;
      }
      if (this.tokenValue === undefined) this.tokenValue = DEFAULT_REFRESH_TOKEN;
      this.progress(`Embedded emulator at ${this.url} (state ${join(dirname(this.stateFile), 'emulator-state.json')})`);
    }
    // Fail early (before any change) when no token is available.
    void this.token;
    this.handler = loadHandler(this.options.handlerPath ?? defaultHandlerPath());
    if (typeof this.handler.configureLocalRuntime !== 'function') {
      throw new Error('the handler bundle does not export configureLocalRuntime: rebuild it with \'npx projen bundle\'');
    }
    // The handler's lifecycle journal (DynamoDB in the cloud): a local DynamoDB-compatible server whose
    // tables and items live in journal.json beside the state file (kept by --destroy).
    const journalFile = join(dirname(this.stateFile), JOURNAL_STATE_FILE_NAME);
    this.journal = await startJournalServer({ stateFile: journalFile, forbidden: this.secrets });
    this.progress(`Journal at ${this.journal.endpoint} (state ${journalFile})`);
  }

  /**
   * Runs one handler invocation, then checkpoints the journal: every journal write is in its write-ahead log before
   * the handler sees the answer (a killed run loses nothing it stored), and the whole journal is saved when the log
   * has grown past a megabyte (and at the end of the run). A failed save fails the invocation, unless the invocation
   * itself failed (its error wins).
   */
  private async invokeHandler<T>(fnName: string, fnArn: string, budget: number, fn: (context: LambdaLikeContext) => Promise<T>): Promise<T> {
    let result: T;
    try {
      result = await invokeWithContext(fnName, fnArn, budget, this.sink, fn);
    } catch (e) {
      await this.journal?.checkpoint().catch(() => undefined);
      throw e;
    }
    if (this.journal) {
      try {
        await this.journal.checkpoint();
      } catch (e) {
        throw new Error(`could not save the journal after the invocation: ${(e as Error).message}`);
      }
    }
    return result;
  }

  /** Points the handler's local runtime at the stack's account (clears its caches only when the account changes). */
  private configureFor(account: string): void {
    if (this.configuredAccount === account) return;
    this.configuredAccount = account;
    const token = this.token;
    this.handler!.configureLocalRuntime!({
      readSecret: async () => token,
      callerAccountId: async () => account,
      journalEndpoint: this.journal?.endpoint,
    });
  }

  private emit(stack: string, status: string, type: string, logicalId: string, reason?: string, physicalId?: string): void {
    const e: ProgressEvent = {
      stack, time: new Date().toISOString(), status, type, logicalId, reason: reason ? redact(reason, this.secrets) : undefined, physicalId,
    };
    this.events.push(e);
    this.progress(formatEvent(e));
  }

  /**
   * Saves the state after a resource event. One at a time (concurrency 1) every event is saved at once. With
   * concurrency, saves are at most SAVE_INTERVAL_MS apart (each one writes the whole state, so one per event would
   * make a deploy of N resources cost O(N²)): a run killed meanwhile loses the last events of the state file, and the
   * next run sends their Create or Delete again, which the handler's lifecycle journal answers from what it recorded
   * (as for a CloudFormation retry). Stack-level changes and replaced resources are saved at once.
   */
  private save(): void {
    if (this.concurrency === 1) return this.saveNow();
    const wait = this.lastSave + SAVE_INTERVAL_MS - Date.now();
    if (wait <= 0) return this.saveNow();
    this.saveTimer ??= setTimeout(() => {
      this.saveTimer = undefined;
      try {
        this.saveNow();
      } catch {
        // Reported by the save at the end of the run, which fails the run.
      }
    }, wait);
  }

  private saveNow(): void {
    if (this.saveTimer) clearTimeout(this.saveTimer);
    this.saveTimer = undefined;
    writeState(this.stateFile, this.state, this.secrets);
    this.lastSave = Date.now();
  }

  private stackState(name: string): StackState | undefined {
    return this.state.stacks.find((s) => s.stackName === name);
  }

  private resourcesOf(stack: string): ResourceState[] {
    return Object.values(this.state.resources).filter((r) => r.stack === stack);
  }

  private async registerRoles(stack: AssemblyStack, ctx: ResolveContext): Promise<void> {
    const roles: Array<{ accountId: string; roleArn: string; trustsService: boolean }> = [];
    for (const [id, r] of Object.entries(stack.template.Resources ?? {})) {
      if (r.Type !== 'AWS::IAM::Role') continue;
      if (r.Condition && !evaluateCondition(r.Condition, id, ctx)) continue;
      const arn = resolveValue({ 'Fn::GetAtt': [id, 'Arn'] }, id, ctx);
      roles.push({ accountId: stack.account, roleArn: String(arn), trustsService: roleTrustsService(r) });
    }
    if (roles.length === 0) return;
    const res = await fetch(`${this.url}/_emulator/fixtures`, {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body: JSON.stringify({ cloudRoles: roles }),
    });
    if (!res.ok) throw new Error(`could not register the stack's IAM roles with the emulator: HTTP ${res.status} ${await res.text()}`);
  }

  // ---------------------------------------------------------------------------------------------
  // Handler invocation (the provider framework's behaviour)

  private async invoke(
    requestType: CustomResourceEvent['RequestType'],
    stack: StackState,
    r: { logicalId: string; type: string; waiter: boolean; properties: Record<string, unknown> },
    physicalId?: string,
    oldProperties?: Record<string, unknown>,
  ): Promise<{ physicalId: string; data: Record<string, unknown> }> {
    const url = this.url!;
    const props = withEmulatorUrl(r.properties, url);
    const serviceToken = typeof props.ServiceToken === 'string' ? props.ServiceToken : `arn:aws:lambda:${stack.region}:${stack.account}:function:local-provider`;
    const requestId = randomUUID();
    const event: CustomResourceEvent = {
      RequestType: requestType,
      ServiceToken: serviceToken,
      ResponseURL: 'local',
      StackId: stack.stackId,
      RequestId: requestId,
      LogicalResourceId: r.logicalId,
      ResourceType: r.type,
      ResourceProperties: props,
    };
    if (oldProperties) event.OldResourceProperties = withEmulatorUrl(oldProperties, url);
    if (physicalId !== undefined) event.PhysicalResourceId = physicalId;
    this.configureFor(stack.account);
    const budget = this.options.invocationBudgetMs ?? 600_000;
    const fnName = `${stack.stackName}-DpiProviderOnEvent`;
    const fnArn = `arn:${partitionOf(stack.region)}:lambda:${stack.region}:${stack.account}:function:${fnName}`;
    const handler = this.handler!;
    const response: OnEventResponse = (await this.invokeHandler(fnName, fnArn, budget, (c) => handler.onEvent(event, c))) ?? {};
    let newPhysical = response.PhysicalResourceId;
    if (newPhysical === undefined || newPhysical === '') {
      newPhysical = requestType === 'Create' ? requestId : physicalId!;
    }
    if (requestType === 'Delete' && newPhysical !== physicalId) {
      throw new Error(`DELETE: cannot change the physical resource ID from "${physicalId}" to "${newPhysical}" during deletion`);
    }
    let data: Record<string, unknown> = { ...(response.Data ?? {}) };
    if (r.waiter) {
      if (typeof handler.isComplete !== 'function') throw new Error(`the handler bundle does not export ${HandlerExports.IS_COMPLETE}`);
      const timeoutSeconds = Number(r.properties.TimeoutSeconds ?? DEFAULT_TIMEOUT_SECONDS) || DEFAULT_TIMEOUT_SECONDS;
      const deadline = Date.now() + timeoutSeconds * 1000;
      const isCompleteFn = handler.isComplete.bind(handler);
      const completeName = `${stack.stackName}-DpiProviderIsComplete`;
      const completeArn = `arn:${partitionOf(stack.region)}:lambda:${stack.region}:${stack.account}:function:${completeName}`;
      const physical = newPhysical;
      try {
        for (;;) {
          const completeEvent = { ...event, PhysicalResourceId: physical, Data: data };
          const done = await this.invokeHandler(completeName, completeArn, budget, (c) => isCompleteFn(completeEvent, c));
          if (done && done.IsComplete) {
            data = { ...data, ...(done.Data ?? {}) };
            break;
          }
          if (Date.now() >= deadline) throw new Error(`Operation timed out after ${timeoutSeconds} seconds (isComplete never returned true)`);
          await new Promise((res) => setTimeout(res, this.options.pollIntervalMs ?? 1000));
        }
      } catch (e) {
        throw new WaiterError((e as Error).message, physical, data);
      }
    }
    if (JSON.stringify({ PhysicalResourceId: newPhysical, Data: data }).length > MAX_DATA_BYTES) {
      throw new Error('Response object is too long.');
    }
    return { physicalId: newPhysical, data };
  }

  /** Sends a Delete (or skips it for Retain). Returns false when it failed. */
  private async deleteResource(stack: StackState, r: ResourceState, mode: 'delete' | 'rollback-create' | 'replace'): Promise<boolean> {
    const policy = mode === 'replace' ? r.updateReplacePolicy : r.deletionPolicy;
    const retained = policy === 'Retain' || (policy === 'RetainExceptOnCreate' && mode !== 'rollback-create');
    if (retained) {
      this.emit(stack.stackName, 'DELETE_SKIPPED', r.type, r.logicalId, `${mode === 'replace' ? 'UpdateReplacePolicy' : 'DeletionPolicy'}: ${policy} (physical ID ${r.physicalId} kept)`, r.physicalId);
      return true;
    }
    this.emit(stack.stackName, 'DELETE_IN_PROGRESS', r.type, r.logicalId, undefined, r.physicalId);
    if (r.physicalId === CREATE_FAILED_MARKER) {
      this.emit(stack.stackName, 'DELETE_COMPLETE', r.type, r.logicalId, undefined, r.physicalId);
      return true;
    }
    try {
      await this.invoke('Delete', stack, r, r.physicalId);
      this.emit(stack.stackName, 'DELETE_COMPLETE', r.type, r.logicalId, undefined, r.physicalId);
      return true;
    } catch (e) {
      this.emit(stack.stackName, 'DELETE_FAILED', r.type, r.logicalId, (e as Error).message, r.physicalId);
      return false;
    }
  }

  // ---------------------------------------------------------------------------------------------
  // Deploy

  private resolveContext(stack: AssemblyStack, stackId: string, placeholders: boolean): ResolveContext {
    return {
      env: { stackName: stack.stackName, stackId, account: stack.account, region: stack.region },
      template: stack.nested ? this.nestedTemplate(stack, placeholders) : stack.template,
      placeholders,
      deployed: (id) => {
        const s = this.state.resources[resourceKey(stack.stackName, id)];
        return s ? { physicalId: s.physicalId, attributes: s.attributes } : undefined;
      },
      importValue: (name) => this.exports.get(name),
    };
  }

  /**
   * A nested stack's template with the values its parent passes (the `Parameters` of the `AWS::CloudFormation::Stack`
   * resource, resolved in the parent's context) as the parameters' defaults.
   */
  private nestedTemplate(stack: AssemblyStack, placeholders: boolean): AssemblyStack['template'] {
    const origin = stack.nested!;
    const parent = origin.parent;
    const parentCtx = this.resolveContext(parent, this.stackState(parent.stackName)?.stackId
      ?? `arn:aws:cloudformation:${parent.region}:${parent.account}:stack/${parent.stackName}/validation`, placeholders);
    const parameters = { ...(stack.template.Parameters ?? {}) };
    for (const [name, expr] of Object.entries(origin.parameters)) {
      if (!parameters[name]) continue;
      parameters[name] = { ...parameters[name], Default: resolveValue(expr, `${origin.logicalId}.Parameters.${name}`, parentCtx) };
    }
    return { ...stack.template, Parameters: parameters };
  }

  private plan(stack: AssemblyStack, ctx: ResolveContext): PlannedResource[] {
    const resources = stack.template.Resources ?? {};
    const present = (id: string): boolean => {
      const r = resources[id];
      return !!r && isDpiType(r.Type) && (!r.Condition || evaluateCondition(r.Condition, id, ctx));
    };
    const deps = selectedDependencies(stack.template, present);
    const ids = Object.keys(resources).filter(present);
    const ordered = dependencyOrder(ids, deps);
    return ordered.map((id) => {
      const r = resources[id];
      const path = isPlainObject(r.Metadata) && typeof r.Metadata['aws:cdk:path'] === 'string' ? r.Metadata['aws:cdk:path'] : undefined;
      return { logicalId: id, resource: r, dependsOn: deps.get(id) ?? [], waiter: this.hasWaiter(stack, r), path };
    });
  }

  /** The resource's provider has an isComplete waiter (its ServiceToken is a provider framework with a user isComplete function). */
  private hasWaiter(stack: AssemblyStack, r: TemplateResource): boolean {
    const token = r.Properties?.ServiceToken;
    let target: string | undefined;
    if (isPlainObject(token)) {
      const ga = token['Fn::GetAtt'];
      if (Array.isArray(ga) && typeof ga[0] === 'string') target = ga[0];
      else if (typeof ga === 'string') target = ga.split('.')[0];
      else if (typeof token.Ref === 'string') target = token.Ref;
    }
    const fn = target ? stack.template.Resources?.[target] : undefined;
    if (fn && fn.Type === 'AWS::Lambda::Function') {
      const env = fn.Properties?.Environment;
      const vars = isPlainObject(env) ? env.Variables : undefined;
      return isPlainObject(vars) && FRAMEWORK_IS_COMPLETE_ENV in vars;
    }
    return WAITER_TYPES.has(r.Type);
  }

  private resolveProps(ctx: ResolveContext, p: PlannedResource): Record<string, unknown> {
    const resolved = resolveValue(p.resource.Properties ?? {}, p.logicalId, ctx);
    return (stringifyScalars(resolved) ?? {}) as Record<string, unknown>;
  }

  private async deploy(): Promise<void> {
    const app = this.options.app ?? './cdk.out';
    const stacks = readAssembly(app);
    // Validate every stack before changing anything: references resolvable, no type change.
    const plans = new Map<string, PlannedResource[]>();
    for (const stack of stacks) {
      const ctx = this.resolveContext(stack, this.stackState(stack.stackName)?.stackId ?? `arn:aws:cloudformation:${stack.region}:${stack.account}:stack/${stack.stackName}/validation`, true);
      const plan = this.plan(stack, ctx);
      for (const p of plan) {
        this.resolveProps(ctx, p);
        const prev = this.state.resources[resourceKey(stack.stackName, p.logicalId)];
        if (prev && prev.type !== p.resource.Type) {
          throw new Error(`${stack.stackName}/${p.logicalId}: Update of resource type is not permitted (${prev.type} -> ${p.resource.Type}); rename the construct to replace it`);
        }
      }
      plans.set(stack.artifactId, plan);
    }
    const known = new Set(stacks.map((s) => s.stackName));
    const removedNested = this.removedNestedStacks(known);
    for (const s of this.state.stacks) {
      if (!known.has(s.stackName) && !removedNested.includes(s.stackName)) this.progress(`${s.stackName} | not in the app: left as is (use --destroy to delete it)`);
    }
    for (const stack of stacks) {
      const ok = await this.deployStack(stack, plans.get(stack.artifactId)!);
      if (!ok) {
        this.failed = true;
        throw new RunFailure('deployment failed');
      }
    }
    // Nested stacks that their parent no longer has are deleted after every stack is updated (the parent's clean-up).
    if (removedNested.length > 0) await this.connect();
    for (const name of removedNested) await this.deleteStack(name);
    if (this.failed) throw new RunFailure('deployment failed');
  }

  /**
   * Nested stacks in the state whose parent is in the app but that the app no longer has, and their own nested
   * stacks, in deletion order (children first).
   */
  private removedNestedStacks(known: Set<string>): string[] {
    const removed = new Set<string>();
    for (let grew = true; grew;) {
      grew = false;
      for (const s of this.state.stacks) {
        if (!s.parentStack || known.has(s.stackName) || removed.has(s.stackName)) continue;
        if (known.has(s.parentStack) || removed.has(s.parentStack)) {
          removed.add(s.stackName);
          grew = true;
        }
      }
    }
    const names = [...removed];
    return dependencyOrder(names, new Map(names.map((n) => [n, this.stackState(n)!.dependencies.filter((d) => removed.has(d))]))).reverse();
  }

  private needsWork(stack: AssemblyStack, plan: PlannedResource[], ctx: ResolveContext): boolean {
    const keys = new Set(plan.map((p) => p.logicalId));
    if (this.resourcesOf(stack.stackName).some((r) => !keys.has(r.logicalId))) return true;
    if (this.state.orphans.some((o) => o.stack === stack.stackName)) return true;
    for (const p of plan) {
      const prev = this.state.resources[resourceKey(stack.stackName, p.logicalId)];
      if (!prev) return true;
      // Values resolved with placeholders differ only when a dependency changes, which is itself a change.
      if (!deepEqual(prev.properties, this.resolvePropsLenient(ctx, p))) return true;
    }
    return false;
  }

  private resolvePropsLenient(ctx: ResolveContext, p: PlannedResource): Record<string, unknown> | undefined {
    try {
      return this.resolveProps(ctx, p);
    } catch {
      return undefined;
    }
  }

  private async deployStack(stack: AssemblyStack, plan: PlannedResource[]): Promise<boolean> {
    const existing = this.stackState(stack.stackName);
    const stackState: StackState = existing ?? {
      stackName: stack.stackName,
      stackId: newStackId(stack.stackName, stack.account, stack.region),
      account: stack.account,
      region: stack.region,
      dependencies: [],
    };
    const ctx = this.resolveContext(stack, stackState.stackId, false);
    const isNew = !existing;
    const stackType = 'AWS::CloudFormation::Stack';
    if (!isNew && !this.needsWork(stack, plan, ctx)) {
      this.progress(`✅  ${stack.stackName} (no changes)`);
      this.collectExports(stack, ctx);
      return true;
    }
    await this.connect();
    await this.registerRoles(stack, ctx);
    if (isNew) {
      this.state.stacks.push(stackState);
    }
    const stackIndex = this.state.stacks.findIndex((s) => s.stackName === stack.stackName);
    this.state.stacks[stackIndex] = {
      ...stackState,
      dependencies: stack.dependencyStackNames,
      ...(stack.nested ? { parentStack: stack.nested.parent.stackName } : {}),
    };
    this.emit(stack.stackName, isNew ? 'CREATE_IN_PROGRESS' : 'UPDATE_IN_PROGRESS', stackType, stack.stackName);

    const changes: Change[] = [];
    const failures: Failure[] = [];
    const known = new Set(Object.keys(this.state.resources));
    const byId = new Map(plan.map((p) => [p.logicalId, p]));
    const step = async (logicalId: string): Promise<boolean> => {
      const p = byId.get(logicalId)!;
      const key = resourceKey(stack.stackName, p.logicalId);
      const before = this.state.resources[key];
      let props: Record<string, unknown> | undefined;
      try {
        props = this.resolveProps(ctx, p);
      } catch (e) {
        this.emit(stack.stackName, before ? 'UPDATE_FAILED' : 'CREATE_FAILED', p.resource.Type, p.logicalId, (e as Error).message);
        failures.push({ p, before });
        return false;
      }
      const base = {
        stack: stack.stackName,
        logicalId: p.logicalId,
        type: p.resource.Type,
        properties: props,
        dependsOn: p.dependsOn,
        deletionPolicy: p.resource.DeletionPolicy,
        updateReplacePolicy: p.resource.UpdateReplacePolicy,
        waiter: p.waiter,
        path: p.path,
      };
      if (before && deepEqual(before.properties, props)) {
        // Unchanged: no event. Keep template-level settings current.
        this.state.resources[key] = {
          ...before,
          dependsOn: base.dependsOn,
          deletionPolicy: base.deletionPolicy,
          updateReplacePolicy: base.updateReplacePolicy,
          waiter: base.waiter,
          path: base.path,
        };
        return true;
      }
      const kind = before ? 'UPDATE' : 'CREATE';
      this.emit(stack.stackName, `${kind}_IN_PROGRESS`, p.resource.Type, p.logicalId);
      try {
        const res = before
          ? await this.invoke('Update', stackState, base, before.physicalId, before.properties)
          : await this.invoke('Create', stackState, base);
        const after: ResourceState = { ...base, physicalId: res.physicalId, attributes: res.data };
        this.state.resources[key] = after;
        changes.push({ kind: before ? 'update' : 'create', before, after });
        if (before && before.physicalId !== res.physicalId) {
          // Persisted at once (CloudFormation remembers it too): a run killed before the clean-up deletes it next time.
          this.state.orphans.push({ ...before, replaced: true });
          this.saveNow();
          this.emit(stack.stackName, `${kind}_COMPLETE`, p.resource.Type, p.logicalId, `replaced: new physical ID ${res.physicalId} (old ${before.physicalId} is deleted after the update)`, res.physicalId);
        } else {
          this.save();
          this.emit(stack.stackName, `${kind}_COMPLETE`, p.resource.Type, p.logicalId, undefined, res.physicalId);
        }
        return true;
      } catch (e) {
        this.emit(stack.stackName, `${kind}_FAILED`, p.resource.Type, p.logicalId, (e as Error).message);
        if (e instanceof WaiterError && (!before || before.physicalId !== e.physicalId)) {
          // onEvent made a resource whose waiter failed: the rollback deletes it (CloudFormation got its physical ID).
          const after: ResourceState = { ...base, physicalId: e.physicalId, attributes: e.data };
          this.state.resources[key] = after;
          changes.push({ kind: before ? 'update' : 'create', before, after });
          this.save();
          failures.push({ p });
        } else {
          failures.push({ p, before, props });
        }
        return false;
      }
    };
    // Independent resources run concurrently (dependencies first); a failure starts no more, in-flight ones finish.
    await runScheduled(plan.map((p) => p.logicalId), (id) => byId.get(id)!.dependsOn, this.concurrency, step);
    this.keepPlanOrder(stack.stackName, plan, known);

    if (failures.length > 0) {
      await this.rollback(stackState, isNew, changes, failures);
      return false;
    }

    // Cleanup: old physical resources of replacements, resources removed from the app, orphans of earlier runs.
    const planned = new Set(plan.map((p) => p.logicalId));
    const removed = this.resourcesOf(stack.stackName).filter((r) => !planned.has(r.logicalId));
    const orphans = this.state.orphans.filter((o) => o.stack === stack.stackName);
    if (removed.length + orphans.length > 0) {
      this.emit(stack.stackName, isNew ? 'CREATE_COMPLETE_CLEANUP_IN_PROGRESS' : 'UPDATE_COMPLETE_CLEANUP_IN_PROGRESS', stackType, stack.stackName);
      this.state.orphans = this.state.orphans.filter((o) => o.stack !== stack.stackName);
      // Orphans of earlier runs first, then this run's replaced resources, newest first.
      const ordered = [...orphans.filter((o) => !o.replaced), ...orphans.filter((o) => o.replaced).reverse()];
      for (const o of ordered) {
        const ok = await this.deleteResource(stackState, o, o.replaced ? 'replace' : 'delete');
        if (!ok) {
          this.failed = true;
          this.state.orphans.push(o);
        }
        this.save();
      }
      const order = dependencyOrder(removed.map((r) => r.logicalId), new Map(removed.map((r) => [r.logicalId, r.dependsOn]))).reverse();
      const dependents = new Map<string, string[]>(order.map((id) => [id, []]));
      for (const r of removed) for (const d of r.dependsOn) dependents.get(d)?.push(r.logicalId);
      // Every removed resource is tried (as before): a failed one keeps its dependencies' order, not their delete.
      await runScheduled(order, (id) => dependents.get(id) ?? [], this.concurrency, async (id) => {
        const r = this.state.resources[resourceKey(stack.stackName, id)];
        const ok = await this.deleteResource(stackState, r, 'delete');
        if (ok) delete this.state.resources[resourceKey(stack.stackName, id)];
        else this.failed = true;
        this.save();
        return true;
      }, false);
    }
    this.emit(stack.stackName, isNew ? 'CREATE_COMPLETE' : 'UPDATE_COMPLETE', stackType, stack.stackName);
    this.saveNow();
    this.collectExports(stack, ctx);
    return true;
  }

  /**
   * Keeps the state (and so the summary) in a stable order whatever finished first: resources that existed before
   * the run keep their place, new ones follow in plan order (what a one-at-a-time run gives).
   */
  private keepPlanOrder(stackName: string, plan: PlannedResource[], known: ReadonlySet<string>): void {
    const next: Record<string, ResourceState> = {};
    for (const [k, v] of Object.entries(this.state.resources)) if (known.has(k)) next[k] = v;
    for (const p of plan) {
      const k = resourceKey(stackName, p.logicalId);
      if (!known.has(k) && this.state.resources[k]) next[k] = this.state.resources[k];
    }
    for (const [k, v] of Object.entries(this.state.resources)) if (!(k in next)) next[k] = v;
    this.state.resources = next;
  }

  private async rollback(
    stackState: StackState,
    isNew: boolean,
    changes: Change[],
    failures: Failure[],
  ): Promise<void> {
    const stackType = 'AWS::CloudFormation::Stack';
    const name = stackState.stackName;
    let ok = true;
    this.emit(name, isNew ? 'ROLLBACK_IN_PROGRESS' : 'UPDATE_ROLLBACK_IN_PROGRESS', stackType, name, `The following resource(s) failed: [${failures.map((f) => f.p.logicalId).join(', ')}]`);
    // 1. In-place updates (including the ones that failed) get an Update with old and new properties swapped.
    const inPlace: Array<{ before: ResourceState; current: ResourceState }> = [];
    for (const failure of failures) {
      if (failure.before && failure.props) {
        inPlace.push({ before: failure.before, current: { ...failure.before, properties: failure.props } });
      }
    }
    for (const c of [...changes].reverse()) {
      if (c.kind === 'update' && c.before && c.before.physicalId === c.after.physicalId) inPlace.push({ before: c.before, current: c.after });
    }
    for (const { before, current } of inPlace) {
      const key = resourceKey(name, before.logicalId);
      this.emit(name, 'UPDATE_IN_PROGRESS', before.type, before.logicalId, 'rollback');
      try {
        const res = await this.invoke('Update', stackState, before, current.physicalId, current.properties);
        this.state.resources[key] = { ...before, attributes: Object.keys(res.data).length > 0 ? res.data : before.attributes };
        this.emit(name, 'UPDATE_COMPLETE', before.type, before.logicalId, undefined, current.physicalId);
      } catch (e) {
        ok = false;
        this.emit(name, 'UPDATE_FAILED', before.type, before.logicalId, (e as Error).message);
      }
      this.save();
    }
    // 2. Resources created in this run, and new physical resources of replacements, are deleted; replaced ones get their old state back.
    if (!isNew) this.emit(name, 'UPDATE_ROLLBACK_COMPLETE_CLEANUP_IN_PROGRESS', stackType, name);
    for (const c of [...changes].reverse()) {
      const key = resourceKey(name, c.after.logicalId);
      if (c.kind === 'create') {
        const deleted = await this.deleteResource(stackState, c.after, 'rollback-create');
        if (deleted) delete this.state.resources[key];
        else ok = false;
      } else if (c.before && c.before.physicalId !== c.after.physicalId) {
        const deleted = await this.deleteResource(stackState, c.after, 'rollback-create');
        this.state.resources[key] = c.before;
        // The old resource stays: it is no longer waiting for the clean-up.
        this.state.orphans = this.state.orphans.filter((o) => !(o.replaced && o.stack === c.before!.stack && o.logicalId === c.before!.logicalId
          && o.physicalId === c.before!.physicalId));
        if (!deleted) {
          ok = false;
          this.state.orphans.push(c.after);
        }
      }
      this.save();
    }
    if (isNew && this.resourcesOf(name).length === 0 && ok) {
      this.state.stacks = this.state.stacks.filter((s) => s.stackName !== name);
    }
    this.emit(name, isNew ? (ok ? 'ROLLBACK_COMPLETE' : 'ROLLBACK_FAILED') : (ok ? 'UPDATE_ROLLBACK_COMPLETE' : 'UPDATE_ROLLBACK_FAILED'), stackType, name);
    this.saveNow();
  }

  private collectExports(stack: AssemblyStack, ctx: ResolveContext): void {
    for (const [id, o] of Object.entries(stack.template.Outputs ?? {})) {
      if (!o.Export) continue;
      try {
        const name = resolveValue(o.Export.Name, id, ctx);
        const value = resolveValue(o.Value, id, ctx);
        if (typeof name === 'string' && typeof value === 'string') this.exports.set(name, value);
      } catch {
        // exports that reference resources the runner does not model are not available locally
      }
    }
  }

  // ---------------------------------------------------------------------------------------------
  // Destroy

  private async destroy(): Promise<void> {
    if (this.state.stacks.length === 0 && Object.keys(this.state.resources).length === 0 && this.state.orphans.length === 0) {
      this.progress(`Nothing to destroy (${this.stateFile} has no resources).`);
      removeState(this.stateFile);
      return;
    }
    await this.connect();
    const names = this.state.stacks.map((s) => s.stackName);
    const order = dependencyOrder(names, new Map(this.state.stacks.map((s) => [s.stackName, s.dependencies]))).reverse();
    for (const name of order) await this.deleteStack(name);
    if (!this.failed && this.state.stacks.length === 0) {
      removeState(this.stateFile);
      this.progress(`State cleared (${this.stateFile} removed).`);
    }
  }

  /** Deletes the resources of one stack of the state (reverse dependency order) and, when all are gone, the stack. */
  private async deleteStack(name: string): Promise<void> {
    {
      const stackState = this.stackState(name)!;
      const stackType = 'AWS::CloudFormation::Stack';
      this.emit(name, 'DELETE_IN_PROGRESS', stackType, name);
      let ok = true;
      const orphans = this.state.orphans.filter((o) => o.stack === name);
      this.state.orphans = this.state.orphans.filter((o) => o.stack !== name);
      for (const o of orphans) {
        if (!(await this.deleteResource(stackState, o, o.replaced ? 'replace' : 'delete'))) {
          ok = false;
          this.state.orphans.push(o);
        }
        this.save();
      }
      const resources = this.resourcesOf(name);
      const ids = dependencyOrder(resources.map((r) => r.logicalId), new Map(resources.map((r) => [r.logicalId, r.dependsOn]))).reverse();
      // A resource is deleted after every resource that depends on it; one whose dependent failed is skipped.
      const dependents = new Map<string, string[]>(ids.map((id) => [id, []]));
      for (const r of resources) for (const d of r.dependsOn) dependents.get(d)?.push(r.logicalId);
      const result = await runScheduled(ids, (id) => dependents.get(id) ?? [], this.concurrency, async (id) => {
        const key = resourceKey(name, id);
        const r = this.state.resources[key];
        const deleted = await this.deleteResource(stackState, r, 'delete');
        if (deleted) delete this.state.resources[key];
        this.save();
        return deleted;
      }, false, (id) => {
        const r = this.state.resources[resourceKey(name, id)];
        this.emit(name, 'DELETE_SKIPPED', r.type, id, 'a resource that depends on it failed to delete');
      });
      if (result.failed.length > 0) ok = false;
      if (ok) this.state.stacks = this.state.stacks.filter((s) => s.stackName !== name);
      else this.failed = true;
      this.emit(name, ok ? 'DELETE_COMPLETE' : 'DELETE_FAILED', stackType, name);
      this.saveNow();
    }
  }
}

/** The system error code of a failed fetch (ECONNREFUSED, ...), looked for through `cause` and aggregated errors. */
function networkCode(e: unknown): string | undefined {
  let cur: unknown = e;
  for (let i = 0; i < 5 && cur && typeof cur === 'object'; i++) {
    const o = cur as { code?: unknown; cause?: unknown; errors?: unknown[] };
    if (typeof o.code === 'string' && /^E[A-Z]+$/.test(o.code)) return o.code;
    cur = o.cause ?? (Array.isArray(o.errors) ? o.errors[0] : undefined);
  }
  return undefined;
}
