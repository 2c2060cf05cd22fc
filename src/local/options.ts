/**
 * The options and the result of `runLocalDeploy` (a light module: it imports no server, so the testing entry point's
 * types, `data-pipeline-integration-cdk/testing`, stay free of the bundled parts' dependencies).
 */
import type { ProgressEvent, SummaryRow } from './output';
import type { EmulatorFixtures } from '../emulator/fixtures';

/** Fixtures of the embedded emulator: a JSON file's path (as `dpi emulator --fixtures`) or the object. */
export type FixturesSource = string | EmulatorFixtures;

/** Options of a local deployment run. */
export interface LocalDeployOptions {
  /** Cloud assembly directory. @default './cdk.out' */
  readonly app?: string;
  /**
   * URL of a running emulator. Plain `http://` only to this machine (a loopback address); another host needs
   * `https://` (the refresh token goes there). @default an embedded emulator started for the run
   */
  readonly emulatorUrl?: string;
  /**
   * Fixtures of the embedded emulator (the format of `dpi emulator --fixtures`, docs/emulator.md): a JSON file's path
   * or the object. They seed a new emulator state; into a saved one, the records it lacks are added and the others kept
   * (see docs/local-deploy.md, "Fixtures"); refused together with
   * `emulatorUrl` (give a running emulator its fixtures when starting it). @default none (the emulator's defaults)
   */
  readonly fixtures?: FixturesSource;
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
  /**
   * The wait between isComplete calls (ms of cloud time), overriding the waiter's. For tests.
   * @default the waiter state machine's retry policy in the template (this library's: every 30 s, 120 times)
   */
  readonly pollIntervalMs?: number;
  /**
   * Every clock of the run passes this many times as fast as the wall clock (1 to 3600), all at once: the embedded
   * emulator's (its rate window, `Retry-After`, jobs, latency), the handler's in its containers (`Date`, `setTimeout`:
   * its waits, deadline and leases), Lambda's timeouts, the waiter's polling and CloudFormation's service timeout. At
   * 60 an hour of the cloud runs in a minute, the handler's constants unchanged. Needs the embedded emulator and
   * isolated containers; refused with `waits: 'emulator-clock'`.
   * @default 1 (the wall clock)
   */
  readonly timeScale?: number;
  /**
   * The embedded emulator's latency: every service request waits `ms` (plus or minus up to `jitterMs` at random) of
   * service time before it is handled, so locks and concurrency meet the cloud's timing. Refused with `emulatorUrl`
   * (a running emulator has its own: `dpi emulator --latency MS[~JITTER]`).
   * @default none
   */
  readonly latency?: { readonly ms: number; readonly jitterMs?: number };
  /**
   * Time budget of every handler invocation (the Lambda timeout), overriding the template's.
   * @default each function's `Timeout` in the template (Lambda's 3 s when it sets none); 600000 for a resource the app
   * no longer declares
   */
  readonly invocationBudgetMs?: number;
  /**
   * A fault: when this promise resolves, the operation in progress (a stack and its nested stacks) is cancelled as a
   * failure of another resource would cancel it: every Create and Update in flight is cancelled (its invocation runs
   * on), nothing new starts, and the whole tree rolls back. For fault tests (the fault matrix's `cancel` kind).
   * @default never
   */
  readonly cancelWhen?: Promise<unknown>;
  /**
   * How the embedded emulator answers reads: `minimal` (only what the spec shows) or `vendor` (the service vendor's
   * documented shapes). @default the DPI_EMULATOR_READS environment variable, else 'minimal'
   */
  readonly reads?: 'minimal' | 'vendor';
  /**
   * Resource operations of a stack in flight at once (independent resources run concurrently, dependencies first,
   * like CloudFormation; stacks one after another in dependency order). 1 runs one resource at a time in plan order.
   * @default 10
   */
  readonly concurrency?: number;
  /**
   * The embedded emulator's rate limit: `{ requests, seconds }` per client address in a rolling window, or `'off'`
   * (`dpi local-deploy --rate-limit N/SECONDS|off`). Refused with `emulatorUrl` (a running emulator has its own).
   * @default the service's documented limit, 1,000 requests per 300 seconds
   */
  readonly rateLimit?: 'off' | { readonly requests: number; readonly seconds: number };
  /**
   * How the handler's waits pass: the service's `Retry-After` when it refuses a request for the rate limit, the
   * client's backoff, a job's polling. `'real'` sleeps. `'emulator-clock'` moves the emulator's clock forward by the
   * wait instead (`POST /_emulator/clock {advance}`, the clock the rate limit and jobs run on) and moves the handler's
   * own clock (its deadline, its leases) with it, so a run that meets the rate limit takes no wall time; the wait lines
   * still say how long the service asked to wait. For tests and rehearsals of large fleets against the emulator.
   * @default 'real'
   */
  readonly waits?: 'real' | 'emulator-clock';
  /**
   * Where the handler runs. `isolated`, as Lambda runs it: every invocation in a container (a worker thread) with its
   * own module state, one invocation at a time per container, warm containers reused by later invocations of the same
   * function and a new one when all are busy; the function's timeout stops the container and its `MemorySize` bounds
   * its heap. `shared`: one in-process handler module serves every invocation and a timeout only fails the invocation
   * (kinder than the cloud; for a debugger).
   * @default 'isolated'
   */
  readonly containers?: 'isolated' | 'shared';
  /**
   * Lambda delivers an event at least once: every onEvent event of the run is delivered again, as a fault. `at-once`:
   * twice at the same time, in two containers (CloudFormation takes the answer that arrives first; the other runs on,
   * and the run waits for it before it ends). `after-answer`: again after the first delivery ended, whose answer is
   * lost (the provider framework's re-invoke after an invoke error): CloudFormation gets the second one's.
   * @default 'never'
   */
  readonly redeliver?: 'never' | 'at-once' | 'after-answer';
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
  /**
   * Where the refresh token appeared that the cloud would keep (the handler's log, a resource's failure reason): a
   * leak of the handler, which fails the run. `handler.log` keeps the line as written; the run's output has `***`.
   * @default none
   */
  readonly secretLeaks?: readonly string[];
  readonly stateFile: string;
  /** Every progress event, in order. */
  readonly events: ProgressEvent[];
  /** What exists after the run. */
  readonly resources: SummaryRow[];
  readonly elapsedMs: number;
  /** Why the run failed before or outside resource events (e.g. an unresolvable reference). */
  readonly error?: string;
  /**
   * The Lambda containers of the run (`containers: 'isolated'`): how many served it (each one its own token, account
   * and product caches, so each pays for them once) and how many of those started cold.
   * @default none with `containers: 'shared'` or when no handler ran
   */
  readonly containers?: { readonly used: number; readonly coldStarts: number };
  /**
   * Physical resources whose Delete failed in an update's clean-up (a replaced resource's old one, or a resource removed
   * from the app): CloudFormation never retries such a Delete and removes the resource from the stack, so they are
   * left in the service. The run fails; `dpi orphans --local` lists them.
   * @default none
   */
  readonly abandoned?: readonly AbandonedResource[];
  /**
   * The service requests the embedded emulator received during the run (token exchanges included; what the rate limit
   * counts) and how many it refused with `429` (its rate limit or a fault), from its request log.
   * @default none with a running emulator (`emulatorUrl`: read its `GET /_emulator/requests`) or when none started
   */
  readonly serviceRequests?: ServiceRequestCount;
}

/** The service requests of a run (`LocalDeployResult.serviceRequests`). */
export interface ServiceRequestCount {
  /** Requests received (the admin routes under `/_emulator/` are not service requests). */
  readonly total: number;
  /** Requests answered `429`. */
  readonly throttled: number;
}

/** A physical resource left behind by a failed clean-up Delete. */
export interface AbandonedResource {
  readonly stack: string;
  readonly logicalId: string;
  readonly type: string;
  readonly physicalId: string;
}
