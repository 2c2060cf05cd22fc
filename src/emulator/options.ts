/** The options of `startEmulator` and what it returns (server.ts). */
import { Latency } from './clock';
import { RateLimit, ReadMode } from './core';
import { FixturesMerge } from './fixture-merge';
import { EmulatorFixtures } from './fixtures';
import { EmulatorStateSnapshot } from './state';

export interface EmulatorOptions {
  /** Default 127.0.0.1. */
  host?: string;
  /**
   * Default 0: a free port, except with a `stateFile` whose last emulator listened on this host (at a port from 1024,
   * never a privileged one), and not `otherClients`: that port when it is free (the service keeps its address, and the
   * rate window saved with it is kept only at that address).
   */
  port?: number;
  /**
   * Merged over DEFAULT_FIXTURES. With a `stateFile` that exists, the records the saved state lacks are added to it
   * (the ones it has stay as they are) and the settings are applied; `RunningEmulator.fixturesMerge` says what.
   */
  fixtures?: EmulatorFixtures;
  /** Lifetime of issued access tokens; default 3600. */
  tokenTtlSeconds?: number;
  /**
   * Load state from this JSON file at start when it exists; every change is saved before it is answered (the writes
   * of concurrent requests coalesced into one), and on stop. It keeps the clock, the address (see `port`) and the
   * rate window: a restart at the same address meets the requests of the last window, as the service does.
   */
  stateFile?: string;
  /**
   * Its clients are not the state file's usual ones: a command line that reads the service from another client address
   * than the provider's functions. It listens on `port` as given, its rate window starts empty, and it writes the saved
   * address and window back as it found them (its own requests count in no later run's window). Default false.
   */
  otherClients?: boolean;
  /** Initial clock (Unix seconds); default real time (or where the state file's clock was). The clock then advances. */
  now?: number;
  /**
   * The clock passes this many times as fast as real time (1 to 3600): the rate window, `Retry-After`, tokens, jobs
   * and history requests all run on it, and the latency and faults' delays take 1/timeScale of their time. A client
   * whose own clock runs at the same scale meets the service's timing, an hour in a minute at 60. Default 1.
   */
  timeScale?: number;
  /**
   * Latency of every service request (not the admin API), in service time: each one waits `ms`, plus or minus up to
   * `jitterMs` at random, before it is handled (and counted by the rate limit). Default none.
   */
  latency?: Latency;
  /**
   * Attributes of the service routes' read, create and update responses (the admin API and `state()` always show
   * the full state). Both modes serve the same routes, envelopes (paginated lists), query parameters and filters.
   * `minimal` (default): each record shows only the attributes the interface specification shows (e.g. a
   * subscription is `{type, id, attributes: {status}}`). `vendor`: the attributes the vendor's public API docs show
   * (the v2 subscription representation, identity and user fields, ...) and numeric job and history IDs. See
   * docs/emulator.md, "Read modes".
   */
  reads?: ReadMode;
  /**
   * Request rate limit per client address, on the emulator clock: over it, service routes answer 429 with
   * `Retry-After` (the seconds until the window has room, at most 60); the admin API is never limited.
   * Default: the service's documented 1,000 requests per 5 minutes. `'off'` disables it.
   */
  rateLimit?: RateLimit | 'off';
  /**
   * Serve the vendor's healthchecks listing (`GET /service/healthchecks/{environment}/healthchecks/account/{id}`).
   * `false`: the route answers 404, like a service that does not serve it. Default true.
   */
  healthchecks?: boolean;
  /**
   * Paginate the lists (the vendor's envelope: `links`, `meta.pagination`, `page`/`page_size`). `false`: every list
   * answers all its records as `{data: [...]}` without `links` or `meta`, like a service that does not paginate
   * (the interface specification shows lists without pagination). The transaction listing's cursor
   * (`meta.next_cursor`, in the specification) is not affected. Default true.
   */
  pagination?: boolean;
}

/** A running emulator. */
export interface RunningEmulator {
  url: string;
  /** What the fixtures did to the state loaded from an existing state file (undefined otherwise). */
  readonly fixturesMerge?: FixturesMerge;
  /**
   * The address the state file's last emulator listened on, when this one listens on the same host at another port
   * (that port was taken, or another was asked for): the rate window saved with the state was not kept. A start on
   * another host, or of `otherClients`, never keeps the saved window and does not set it.
   */
  readonly movedFrom?: string;
  stop(): Promise<void>;
  state(): EmulatorStateSnapshot;
  /** How many times the state file was written (0 without a state file). */
  stateWrites(): number;
}
