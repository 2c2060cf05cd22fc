/**
 * The local runner's plumbing: options, the emulator and journal connection, progress events and state saves
 * (runner-invoke.ts makes the handler invocations; runner.ts runs it).
 */
import { dirname, join, resolve } from 'node:path';
import type { RunningEmulator } from '../emulator';
import { AssemblyStack } from './assembly';
import { checkedTimeScale, CloudClock } from './cloud-clock';
import { LambdaContainers } from './containers';
import { DEFAULT_REFRESH_TOKEN_ENV, DEFAULT_STATE_FILE } from './defaults';
import { planFixtures, startEmbeddedEmulator } from './embedded';
import { defaultHandlerPath, HandlerLogSink, HandlerModule, loadHandler, redact, holdsSecret } from './handler';
import { evaluateCondition, resolveValue, ResolveContext } from './intrinsics';
import { JOURNAL_STATE_FILE_NAME, JournalServer, startJournalServer } from './journal-server';
import type { AbandonedResource, LocalDeployOptions } from './options';
import { formatEvent, ProgressEvent } from './output';
import { SAVE_INTERVAL_MS, roleTrustsService, readsOf, networkCode } from './runner-helpers';
import { parseConcurrency } from './scheduler';
import { emptyState, LocalState, ResourceState, StackState, writeState } from './state';
import { requireSecureEmulatorUrl } from './transport';
import { WaitReporter } from './waits';
import { outputWidth } from './width';
import { DEFAULT_REFRESH_TOKEN } from '../emulator/default-fixtures';

/** The runner's state and plumbing (the deploy and destroy parts extend it). */
export abstract class RunnerBase {
  protected readonly started = Date.now();
  protected readonly stateFile: string;
  protected readonly events: ProgressEvent[] = [];
  protected readonly progress: (line: string) => void;
  protected readonly output: (line: string) => void;
  protected readonly sink: HandlerLogSink;
  protected readonly waits: WaitReporter;
  protected stacks: AssemblyStack[] = [];
  protected readonly resolvingOutputs = new Set<string>();
  protected readonly secrets: string[] = [];
  protected state: LocalState = emptyState();
  protected emulator?: RunningEmulator;
  protected journal?: JournalServer;
  protected url?: string;
  protected handler?: HandlerModule;
  protected failed = false;
  protected tokenValue?: string;
  protected exports = new Map<string, string>();
  protected configuredAccount?: string;
  protected readonly tokenFromEnv: boolean;
  protected readonly concurrency: number;
  protected lastSave = 0;
  protected saveTimer?: NodeJS.Timeout;
  /** Physical resources whose clean-up Delete failed: left behind, as CloudFormation leaves them. */
  protected readonly abandoned: AbandonedResource[] = [];
  /** Where a secret appeared that the cloud would keep (see `leaked`). */
  protected readonly secretLeaks: string[] = [];
  /** With `waits: 'emulator-clock'`: the milliseconds the handler's waits moved the clocks. */
  protected waitedMs = 0;
  /** The same, rounded, shared with the containers (the handler's clock there). */
  protected readonly clockOffset = new BigInt64Array(new SharedArrayBuffer(8));
  /**
   * Invocations CloudFormation no longer listens to, still running: second deliveries (`redeliver: 'at-once'`), and
   * Creates and Updates it stopped waiting for (a cancelled operation, a ServiceTimeout). The run ends after them.
   */
  protected readonly stragglers = new Set<Promise<unknown>>();
  private connecting?: Promise<void>;
  /** The handler's containers (`containers: 'isolated'`). */
  protected containers?: LambdaContainers;
  /** The cloud's clock (`timeScale`): set at connect, on the embedded emulator's clock. */
  protected clock = new CloudClock(1);
  /** True when the run's fixtures are merged into a saved embedded emulator state (it starts even when nothing changes). */
  protected fixturesToMerge = false;

  constructor(protected readonly options: LocalDeployOptions) {
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
    this.waits = new WaitReporter((l) => this.progress(l));
    this.sink = {
      file: join(dirname(this.stateFile), 'handler.log'),
      echo: options.showHandlerLogs,
      // handler.log stands in for CloudWatch Logs: it keeps what the handler wrote, and a leak fails the run.
      secrets: this.secrets,
      raw: true,
      onSecret: () => this.leaked('the handler log (handler.log)'),
      onLine: (l) => this.waits.observe(l),
    };
  }

  /** Options that cannot work together, or an emulator URL that must not receive the token: refused before anything. */
  protected checkOptions(): void {
    const waits = this.options.waits;
    if (waits !== undefined && waits !== 'real' && waits !== 'emulator-clock') {
      throw new Error(`waits must be 'real' or 'emulator-clock' (got ${JSON.stringify(waits)})`);
    }
    const redeliver = this.options.redeliver;
    if (redeliver !== undefined && !['never', 'at-once', 'after-answer'].includes(redeliver)) {
      throw new Error(`redeliver must be 'never', 'at-once' or 'after-answer' (got ${JSON.stringify(redeliver)})`);
    }
    const containers = this.options.containers;
    if (containers !== undefined && containers !== 'isolated' && containers !== 'shared') {
      throw new Error(`containers must be 'isolated' or 'shared' (got ${JSON.stringify(containers)})`);
    }
    const scale = checkedTimeScale(this.options.timeScale);
    if (scale > 1 && containers === 'shared') {
      throw new Error('timeScale needs isolated containers: a shared handler module runs on the runner\'s own clock');
    }
    if (scale > 1 && waits === 'emulator-clock') {
      throw new Error('timeScale and waits: \'emulator-clock\' are two ways to pass the cloud\'s time: choose one');
    }
    if (!this.options.emulatorUrl) {
      // Other fixtures for a saved emulator state are merged into it even when the app has nothing to change.
      if (this.options.fixtures !== undefined) this.fixturesToMerge = planFixtures(dirname(this.stateFile), this.options.fixtures).merge;
      return;
    }
    requireSecureEmulatorUrl('emulatorUrl', this.options.emulatorUrl);
    if (this.options.fixtures !== undefined) {
      throw new Error('fixtures seed the embedded emulator: give them to the running emulator instead (dpi emulator --fixtures FILE, '
        + 'or POST /_emulator/fixtures), or omit the emulator URL');
    }
    if (this.options.rateLimit !== undefined) {
      throw new Error('the rate limit is the embedded emulator\'s: a running emulator has its own (dpi emulator --rate-limit N/SECONDS|off), '
        + 'or omit the emulator URL');
    }
    if (this.options.latency !== undefined) {
      throw new Error('the latency is the embedded emulator\'s: a running emulator has its own (dpi emulator --latency MS[~JITTER]), '
        + 'or omit the emulator URL');
    }
    if (scale > 1) {
      throw new Error('timeScale runs the embedded emulator\'s clock with the run\'s: a running emulator keeps its own (dpi emulator '
        + '--time-scale N), so omit the emulator URL');
    }
  }

  protected get token(): string {
    if (this.tokenValue === undefined) {
      const env = this.options.refreshTokenEnv ?? DEFAULT_REFRESH_TOKEN_ENV;
      throw new Error(`no refresh token: set the environment variable ${env} to the refresh token of the emulator account`);
    }
    return this.tokenValue;
  }

  /** Connects once: the stacks of an operation (nested stacks in parallel) share the first connection. */
  protected connect(): Promise<void> {
    this.connecting ??= this.connectOnce();
    return this.connecting;
  }

  private async connectOnce(): Promise<void> {
    if (this.options.emulatorUrl) {
      const url = this.options.emulatorUrl.replace(/\/+$/, '');
      requireSecureEmulatorUrl('emulatorUrl', url);
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
      const embedded = await startEmbeddedEmulator({
        stateDir: dirname(this.stateFile),
        reads: readsOf(this.options.reads),
        fixtures: this.options.fixtures,
        ...(this.options.rateLimit !== undefined ? { rateLimit: this.options.rateLimit } : {}),
        ...(this.options.latency !== undefined ? { latency: this.options.latency } : {}),
        ...(this.options.timeScale !== undefined ? { timeScale: this.options.timeScale } : {}),
      });
      this.emulator = embedded.emulator;
      this.url = this.emulator.url;
      // The cloud's clock goes on from the emulator's (which its state file keeps from run to run).
      this.clock = new CloudClock(checkedTimeScale(this.options.timeScale), await emulatorClockMs(this.url));
      if (this.clock.scale > 1) this.progress(`Time scale ${this.clock.scale}: every clock of the run passes ${this.clock.scale} times as fast as the wall clock`);
      if (this.tokenFromEnv && this.tokenValue !== DEFAULT_REFRESH_TOKEN) {
        // A token exported for the real service (e.g. for dpi status) means nothing to the embedded emulator.
        this.progress(`${this.options.refreshTokenEnv ?? DEFAULT_REFRESH_TOKEN_ENV} is set, but the embedded emulator knows only its own `
          + 'token: using that one (the variable is used with --emulator <url>)');
        this.tokenValue = DEFAULT_REFRESH_TOKEN;
      }
      if (this.tokenValue === undefined) this.tokenValue = DEFAULT_REFRESH_TOKEN;
      // The embedded emulator's token is a secret like any other: a leak of it is a leak of the real one.
      if (!this.secrets.includes(this.tokenValue)) this.secrets.push(this.tokenValue);
      this.progress(`Embedded emulator at ${this.url} (state ${join(dirname(this.stateFile), 'emulator-state.json')})`);
      if (this.emulator.movedFrom) {
        // The service keeps its address, and with it the rate window and the request budget (scoped by the address).
        this.progress(`Embedded emulator: the address of the last run, ${this.emulator.movedFrom}, is taken; at this one the service's rate `
          + 'window starts empty and the provider\'s request budget starts afresh');
      }
      if (embedded.seededWith) this.progress(`Embedded emulator seeded with ${embedded.seededWith}`);
      if (embedded.mergedWith) this.progress(`Embedded emulator: fixtures ${embedded.mergedWith.name} merged into the saved state: ${embedded.mergedWith.summary}`);
    }
    // Fail early (before any change) when no token is available.
    void this.token;
    const handlerFile = this.options.handlerPath ?? defaultHandlerPath();
    // Loaded here too when it runs in containers: a bundle that cannot serve is refused before any change.
    this.handler = loadHandler(handlerFile);
    if (typeof this.handler.configureLocalRuntime !== 'function') {
      throw new Error('the handler bundle does not export configureLocalRuntime: rebuild it with \'npx projen bundle\'');
    }
    if (this.options.containers !== 'shared') {
      this.containers = new LambdaContainers({
        handlerFile,
        token: this.token,
        sink: this.sink,
        cloud: this.clock,
        ...(this.options.waits === 'emulator-clock' ? { clock: { wait: (ms: number) => this.waitOnEmulatorClock(ms), offset: this.clockOffset } } : {}),
      });
    }
    // The handler's lifecycle journal (DynamoDB in the cloud): a local DynamoDB-compatible server whose
    // tables and items live in journal.json beside the state file (kept by --destroy).
    const journalFile = join(dirname(this.stateFile), JOURNAL_STATE_FILE_NAME);
    this.journal = await startJournalServer({ stateFile: journalFile, forbidden: this.secrets });
    this.progress(`Journal at ${this.journal.endpoint} (state ${journalFile})`);
  }

  /** A handler wait with `waits: 'emulator-clock'`: the emulator's clock and the handler's move on by `ms` at once. */
  protected async waitOnEmulatorClock(ms: number): Promise<void> {
    if (!(ms > 0)) return;
    this.waitedMs += ms;
    Atomics.store(this.clockOffset, 0, BigInt(Math.round(this.waitedMs)));
    const res = await fetch(`${this.url}/_emulator/clock`, {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body: JSON.stringify({ advance: ms / 1000 }),
      signal: AbortSignal.timeout(10_000),
    });
    if (res.status !== 200) throw new Error(`could not move the emulator's clock for a wait of ${ms} ms: POST /_emulator/clock answered ${res.status}`);
  }

  /**
   * A secret (the refresh token) appeared where the cloud would keep it: CloudWatch Logs, a CloudFormation event. The
   * run fails and says where; what the runner prints and saves has it replaced by `***`.
   */
  protected leaked(where: string): void {
    this.failed = true;
    if (this.secretLeaks.includes(where)) return;
    this.secretLeaks.push(where);
    this.progress(`❌  the refresh token appears in ${where}: the cloud would keep it there (a leak of the handler; the run fails)`);
  }

  /** `text` with the secrets replaced; a text that held one is reported as a leak in `where`. */
  protected scrubbed(text: string, where: string): string {
    if (!holdsSecret(text, this.secrets)) return text;
    this.leaked(where);
    return redact(text, this.secrets);
  }

  protected emit(stack: string, status: string, type: string, logicalId: string, reason?: string, physicalId?: string): void {
    const said = reason !== undefined && status.endsWith('_FAILED') ? withFixturesHint(reason, this.emulator !== undefined) : reason;
    const e: ProgressEvent = {
      stack, time: new Date().toISOString(), status, type, logicalId, reason: said ? this.scrubbed(said, `the reason of ${stack}/${logicalId} ${status}`) : undefined, physicalId,
    };
    this.events.push(e);
    this.progress(formatEvent(e, progressWidth(this.options.progress === undefined)));
  }

  /**
   * Saves the state after a resource event. One at a time (concurrency 1) every event is saved at once. With
   * concurrency, saves are at most SAVE_INTERVAL_MS apart (each one writes the whole state, so one per event would
   * make a deploy of N resources cost O(N²)): a run killed meanwhile loses the last events of the state file, and the
   * next run sends their Create or Delete again, which the handler's lifecycle journal answers from what it recorded
   * (as for a CloudFormation retry). Stack-level changes and replaced resources are saved at once.
   */
  protected save(): void {
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

  protected saveNow(): void {
    if (this.saveTimer) clearTimeout(this.saveTimer);
    this.saveTimer = undefined;
    writeState(this.stateFile, this.state, this.secrets);
    this.lastSave = Date.now();
  }

  protected stackState(name: string): StackState | undefined {
    return this.state.stacks.find((s) => s.stackName === name);
  }

  protected resourcesOf(stack: string): ResourceState[] {
    return Object.values(this.state.resources).filter((r) => r.stack === stack);
  }

  protected async registerRoles(stack: AssemblyStack, ctx: ResolveContext): Promise<void> {
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

}

/** The emulator's clock (epoch ms, fractions included). */
async function emulatorClockMs(url: string): Promise<number> {
  const res = await fetch(`${url}/_emulator/clock`, { signal: AbortSignal.timeout(10_000) });
  if (res.status !== 200) throw new Error(`could not read the emulator's clock: GET /_emulator/clock answered ${res.status}`);
  const body = (await res.json()) as { now?: number; exact?: number };
  return (body.exact ?? body.now ?? Date.now() / 1000) * 1000;
}

/**
 * A failure that names a remote identity, storage group or subscription the embedded emulator does not know: the
 * emulator holds its default fixtures plus the run's `--fixtures`, so the reason says how to add the app's.
 */
export function withFixturesHint(reason: string, embedded: boolean): string {
  if (!embedded || !/(remote identity|storage group|storage) \S+ (was )?not found|(identity|storage)[^;]* does not exist/i.test(reason)) return reason;
  return `${reason} (the embedded emulator knows its default fixtures and those of --fixtures FILE: add your app's identities and storage `
    + 'groups there; docs/local-deploy.md, "Fixtures: your app\'s identities")';
}

/** The width progress lines fit: the terminal's when they go to one (stderr), else `COLUMNS`, else 100; at least 60. */
function progressWidth(toStderr: boolean): number {
  return outputWidth(toStderr && process.stderr.isTTY ? process.stderr.columns : undefined, process.env);
}
