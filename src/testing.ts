/**
 * The testing entry point of the package, `data-pipeline-integration-cdk/testing` (TypeScript and JavaScript only; not
 * part of the jsii API): the service emulator (`startEmulator`) and the local CloudFormation-like runner
 * (`runLocalDeploy`, what `dpi local-deploy` runs), to deploy a synthesized app's `Custom::Dpi*` resources through the
 * real handler in a test, without an account. See docs/local-deploy.md, "From code and tests".
 *
 * At run time the functions load the package's bundles (`assets/emulator/server`, `assets/local/runner`: the emulator
 * and the runner with their own dependencies); the types here import no server code.
 *
 * @example
 * import { EMULATOR_REFRESH_TOKEN, runLocalDeploy, startEmulator } from 'data-pipeline-integration-cdk/testing';
 * const emulator = await startEmulator({ fixtures: { remoteIdentities: [{ id: 2001, account: 1001, remote_identity_type_id: 17 }] } });
 * const options = { app: 'cdk.out', emulatorUrl: emulator.url, refreshToken: EMULATOR_REFRESH_TOKEN, stateFile: 'tmp/state.json' };
 * const deployed = await runLocalDeploy(options);
 * const destroyed = await runLocalDeploy({ ...options, destroy: true });
 * await emulator.stop();
 */
import { existsSync } from 'node:fs';
import { basename, join } from 'node:path';
import type { EmulatorFixtures } from './emulator/fixtures';
import type { EmulatorStateSnapshot } from './emulator/state';
import type { LocalDeployOptions, LocalDeployResult } from './local/options';

export type * from './emulator/fixtures';
export type { EmulatorStateSnapshot } from './emulator/state';
export type { AbandonedResource, LocalDeployOptions, LocalDeployResult, FixturesSource, ServiceRequestCount } from './local/options';
export type { ProgressEvent, SummaryRow } from './local/output';

/** How the emulator answers reads: `minimal` (only what the interface specification shows) or `vendor` (the vendor's documented shapes). */
export type ReadMode = 'minimal' | 'vendor';

/** A request rate limit: `requests` per client address in a rolling window of `seconds`. */
export interface RateLimit {
  readonly requests: number;
  readonly seconds: number;
}

/** Options of `startEmulator` (docs/emulator.md). */
export interface EmulatorOptions {
  /** Address to listen on. @default '127.0.0.1' */
  readonly host?: string;
  /**
   * Port; 0 is a free one.
   * @default 0, except with a `stateFile` whose last emulator listened on this host (at a port from 1024), and not
   * `otherClients`: that port when it is free (the service keeps its address, and the rate window saved with the state
   * is kept only at that address)
   */
  readonly port?: number;
  /**
   * Records merged over the default fixtures (the format of `dpi emulator --fixtures`). With a `stateFile` that
   * exists, the records its state lacks are added and the others kept as saved (see `RunningEmulator.fixturesMerge`).
   * @default none
   */
  readonly fixtures?: EmulatorFixtures;
  /** Lifetime of issued access tokens in seconds. @default 3600 */
  readonly tokenTtlSeconds?: number;
  /**
   * Keep the state in this JSON file (loaded at start when it exists, saved on every change and on stop), with the
   * clock, the address (see `port`) and the rate window. @default memory only
   */
  readonly stateFile?: string;
  /**
   * Its clients are not the state file's usual ones: a command line that reads the service from another client address
   * than the provider's functions. It listens on `port` as given, its rate window starts empty, and it writes the saved
   * address and window back as it found them (its own requests count in no later run's window). @default false
   */
  readonly otherClients?: boolean;
  /** Initial clock (Unix seconds); the clock then advances. @default real time (or the state file's clock) */
  readonly now?: number;
  /**
   * The clock passes this many times as fast as real time (1 to 3600); the latency and faults' delays take 1/timeScale
   * of their time. @default 1
   */
  readonly timeScale?: number;
  /** Latency of every service request (service time): `ms`, plus or minus up to `jitterMs` at random. @default none */
  readonly latency?: { readonly ms: number; readonly jitterMs?: number };
  /** Wire shape of the service routes' responses. @default 'minimal' */
  readonly reads?: ReadMode;
  /**
   * Requests per client address in a rolling window (over it: 429 with `Retry-After`), or `'off'`.
   * @default the service's documented 1,000 requests per 5 minutes
   */
  readonly rateLimit?: RateLimit | 'off';
  /**
   * Whether the account healthchecks listing is served; `false` answers it 404, like a service that does not serve
   * it (`dpi status` and `SubscriptionMonitor` then fall back to transactions).
   * @default true
   */
  readonly healthchecks?: boolean;
  /**
   * Whether lists are paginated (the vendor's `links`/`meta.pagination` envelope); `false` answers every list with all
   * its records as `{data: [...]}`, like a service that does not paginate (the transaction listing's cursor stays).
   * @default true
   */
  readonly pagination?: boolean;
}

/** A running emulator. */
export interface RunningEmulator {
  /** Its base URL, e.g. `http://127.0.0.1:49152` (every service address of a connection). */
  readonly url: string;
  /**
   * What `fixtures` did to the state loaded from an existing `stateFile`: records added and kept (by fixtures key,
   * e.g. `{ remoteIdentities: 10 }`) and settings applied. Undefined when no saved state was loaded or no fixtures given.
   */
  readonly fixturesMerge?: { readonly added: Record<string, number>; readonly kept: Record<string, number>; readonly set: string[] };
  /**
   * The address the state file's last emulator listened on, when this one listens on the same host at another port
   * (that port was taken, or another was asked for): the rate window saved with the state was not kept. A start on
   * another host, or of `otherClients`, never keeps the saved window and does not set it. Undefined otherwise.
   */
  readonly movedFrom?: string;
  /** Stops it (and saves the state file, when it has one). */
  stop(): Promise<void>;
  /** The whole state: fixtures, subscriptions, pipelines, customer-cloud resources, ... */
  state(): EmulatorStateSnapshot;
  /** How many times the state file was written (0 without a state file). */
  stateWrites(): number;
}

/** The default refresh token of the emulator (emulator only, not a secret): what `runLocalDeploy` needs with `emulatorUrl`. */
export const EMULATOR_REFRESH_TOKEN = 'emulator-refresh-token';

/**
 * Loads a part of the package: from the package (lib/testing.js) its bundle under assets/ (the runner and the
 * emulator are bundled with their own dependencies, which are not dependencies of the package), from the sources
 * (ts-node, jest) the module itself.
 */
function load<T>(part: string, source: string): T {
  // A require with a computed argument: nothing of the bundles is compiled into this module.
  const req = require;
  if (basename(__dirname) === 'lib') {
    const bundled = join(__dirname, '..', 'assets', ...part.split('/'), 'index.js');
    if (!existsSync(bundled)) throw new Error(`${bundled} is missing: the package is incomplete (its bundles are built by 'npx projen bundle')`);
    return req(bundled) as T;
  }
  return req(join(__dirname, ...source.split('/'))) as T;
}

/**
 * Starts the service emulator on real HTTP (127.0.0.1 and a free port unless told otherwise); `stop()` it at the end.
 * See docs/emulator.md for the fixtures, the rate limit, the read modes, the state file and the admin API.
 */
export function startEmulator(options: EmulatorOptions = {}): Promise<RunningEmulator> {
  const server = load<{ startEmulator(o: EmulatorOptions): Promise<RunningEmulator> }>('emulator/server', 'emulator/server');
  return server.startEmulator(options);
}

/**
 * Deploys (or destroys, `destroy: true`) the `Custom::Dpi*` resources of a synthesized app through the real handler,
 * as `dpi local-deploy` does. Never throws for resource failures: see `success`, `events` and `error` of the result.
 */
export function runLocalDeploy(options: LocalDeployOptions = {}): Promise<LocalDeployResult> {
  const runner = load<{ runLocalDeploy(o: LocalDeployOptions): Promise<LocalDeployResult> }>('local/runner', 'local/runner');
  return runner.runLocalDeploy(options);
}
