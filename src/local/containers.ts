/**
 * Lambda's execution environments for the local runner: every invocation runs in a container (a worker thread) that
 * has loaded the handler bundle with its own module state (token cache, rate-limit bookkeeping, caches), one
 * invocation at a time. A container that finishes is kept warm and reused by a later invocation of the same function
 * (also of a later run in the same process, as Lambda keeps environments between deployments); when all of a
 * function's containers are busy, a new one starts (a cold start). The function's timeout stops the
 * container (the code stops where it is, as Lambda's does) and its memory size bounds the container's heap.
 */
import { randomUUID } from 'node:crypto';
import { readFileSync } from 'node:fs';
import { Worker } from 'node:worker_threads';
import type { CloudClock } from './cloud-clock';
import { CONTAINER_MAIN } from './container-main';
import { HandlerLogSink, holdsSecret, missingClientMessage, redact, withLocalConsole, writeHandlerLine } from './handler';
import { isVendorId, vendorBundlePath, VENDOR_IDS } from './vendor-load';

/** What a container needs from the run for one invocation. */
export interface ContainerRuntime {
  /** The AWS account of the stack (the handler's caller account). */
  readonly account: string;
  /** The provider function's environment (what it serves). */
  readonly environment: Record<string, string>;
  /** What CloudFormation says of the event's stack (its parent and root stack IDs), for the nested-stack proof. */
  readonly lineage?: { readonly stackId: string; readonly parentId?: string; readonly rootId?: string };
  /** The local journal's endpoint. */
  readonly journalEndpoint?: string;
}

/** One invocation of a function in a container. */
export interface ContainerInvocation {
  /** The function (its warm containers are reused). */
  readonly functionKey: string;
  readonly functionName: string;
  readonly functionArn: string;
  /** The function's memory size (MB): the container's heap limit. @default no limit (the template gives a token) */
  readonly memoryMb?: number;
  /** The function's timeout (ms): the container is stopped when it passes. */
  readonly timeoutMs: number;
  readonly method: 'onEvent' | 'isComplete';
  readonly event: unknown;
  readonly runtime: ContainerRuntime;
}

/** What a run gives its containers. */
export interface ContainerOptions {
  /** The handler bundle. */
  readonly handlerFile: string;
  /** The refresh token the local Secrets Manager stand-in serves. */
  readonly token: string;
  /** Where the handler's log lines go. */
  readonly sink: HandlerLogSink;
  /**
   * With the emulator's clock (`waits: 'emulator-clock'`): the handler's waits move it (`wait`), and the handler's
   * clock is ahead of the real one by `offset[0]` ms.
   */
  readonly clock?: { readonly wait: (ms: number) => Promise<void>; readonly offset: BigInt64Array };
  /**
   * The cloud's clock (`timeScale`): a container's `Date` and `setTimeout` run on it, its timeout is in its time.
   * @default the wall clock
   */
  readonly cloud?: CloudClock;
}

/** Warm containers kept at most in the process (the one idle longest stops first). */
const MAX_WARM = 8;
/** A warm container unused this long stops (Lambda keeps an idle environment for minutes; a local run needs less). */
const WARM_MS = 15_000;

type Reply = { kind: 'ready' }
| { kind: 'result'; id: string; value?: unknown; error?: { name?: string; message: string } }
| { kind: 'log'; level: string; requestId: string; text: string }
| { kind: 'sleep'; id: string; ms: number }
| { kind: 'warning'; message: string; type: string; code?: string };

interface Pending {
  readonly id: string;
  readonly resolve: (v: unknown) => void;
  readonly reject: (e: Error) => void;
  readonly timer: NodeJS.Timeout;
}

/** One execution environment of a function: a worker thread that loaded the handler bundle. */
class Container {
  readonly worker: Worker;
  pending?: Pending;
  /** The run of the invocation in progress, or of the last one (where late log lines go). */
  run: ContainerOptions;
  stopped = false;
  idleSince = 0;
  idleTimer?: NodeJS.Timeout;
  /** Resolved when the container has loaded the bundle (Lambda's init phase, outside the invoke timeout). */
  private readonly ready: Promise<void>;
  private readyCallbacks?: { resolve: () => void; reject: (e: Error) => void };
  /** Lambda freezes an environment between invocations: the worker blocks on this until the next one (1 = run). */
  private readonly thaw = new Int32Array(new SharedArrayBuffer(4));

  constructor(readonly kind: string, readonly code: string, memoryMb: number | undefined, run: ContainerOptions) {
    this.run = run;
    this.ready = new Promise((resolve, reject) => {
      this.readyCallbacks = { resolve, reject };
    });
    this.ready.catch(() => undefined);
    this.worker = new Worker(CONTAINER_MAIN, {
      eval: true,
      workerData: {
        code,
        file: run.handlerFile,
        vendor: vendorLocations(),
        thaw: this.thaw,
        // A scaled clock is the container's own from its start (the handler's module may keep Date or setTimeout).
        clock: run.cloud?.shifted ? run.cloud.anchor : undefined,
        // The message of a missing client, with NUL where its name goes (one text, handler.ts's).
        missingClient: missingClientMessage(run.handlerFile, '\u0000'),
      },
      ...(memoryMb !== undefined ? { resourceLimits: { maxOldGenerationSizeMb: memoryMb } } : {}),
    });
    this.worker.on('message', (m: Reply) => this.onMessage(m));
    this.worker.on('error', (e) => this.end(`Runtime exited with error: ${e.message}`, (e as { code?: string }).code));
    this.worker.on('exit', (status) => this.end(`Runtime exited with error: exit status ${status}`));
    // After the listeners (adding a 'message' listener refs the worker again): a warm container keeps no process alive.
    this.worker.unref();
  }

  async invoke(inv: ContainerInvocation, run: ContainerOptions): Promise<unknown> {
    this.run = run;
    await this.ready;
    if (this.stopped) throw new Error('Runtime exited with error: the container stopped before the invocation');
    const id = randomUUID();
    const requestId = randomUUID();
    // The deadline on the container's clock (the cloud's when it is shifted, as the container's Date then is).
    const clock = run.cloud;
    const deadline = (clock?.shifted ? clock.now() : Date.now()) + inv.timeoutMs;
    return new Promise((resolve, reject) => {
      const timer = setTimeout(() => {
        // Lambda stops the environment at its timeout: nothing of the invocation runs on.
        this.stop();
        this.settle((p) => p.reject(new Error(`Task timed out after ${(inv.timeoutMs / 1000).toFixed(2)} seconds`)));
      }, clock ? clock.realMs(inv.timeoutMs) : inv.timeoutMs);
      this.pending = { id, resolve, reject, timer };
      // Thawed for this invocation (its timers and promises due meanwhile run now, as in Lambda).
      Atomics.store(this.thaw, 0, 1);
      Atomics.notify(this.thaw, 0);
      try {
        this.worker.postMessage({
          kind: 'invoke',
          id,
          method: inv.method,
          event: inv.event,
          deadline,
          runtime: { ...inv.runtime, token: run.token },
          clock: run.clock?.offset,
          anchor: clock?.shifted ? clock.anchor : undefined,
          context: {
            callbackWaitsForEmptyEventLoop: true,
            functionName: inv.functionName,
            functionVersion: '$LATEST',
            invokedFunctionArn: inv.functionArn,
            memoryLimitInMB: String(inv.memoryMb ?? 128),
            awsRequestId: requestId,
            logGroupName: `/aws/lambda/${inv.functionName}`,
            logStreamName: `local/${requestId}`,
          },
        });
      } catch (e) {
        this.stop();
        this.settle((p) => p.reject(new Error(`the event could not be sent to the container: ${(e as Error).message}`)));
      }
    });
  }

  stop(): void {
    if (this.idleTimer) clearTimeout(this.idleTimer);
    warm.delete(this);
    if (this.stopped) return;
    this.stopped = true;
    void this.worker.terminate();
  }

  private settle(fn: (p: Pending) => void): void {
    const p = this.pending;
    if (!p) return;
    this.pending = undefined;
    clearTimeout(p.timer);
    fn(p);
  }

  /** The container ended (a crash, its memory, or stopped): the invocation in it fails, and it is not used again. */
  private end(message: string, code?: string): void {
    warm.delete(this);
    if (this.idleTimer) clearTimeout(this.idleTimer);
    this.stopped = true;
    this.readyCallbacks?.reject(new Error(message));
    const why = code === 'ERR_WORKER_OUT_OF_MEMORY' ? 'Runtime exited with error: out of memory (the function\'s MemorySize)' : message;
    this.settle((p) => p.reject(new Error(why)));
  }

  private onMessage(m: Reply): void {
    if (m.kind === 'ready') {
      this.readyCallbacks?.resolve();
    } else if (m.kind === 'log') {
      try {
        writeHandlerLine(this.run.sink, m.requestId, m.level, m.text);
      } catch {
        // A log that cannot be written (e.g. a finished run's folder is gone) must not take the run's process down.
      }
    } else if (m.kind === 'warning') {
      // A warning is the run's to show (the SDK's on the Node.js version); one holding a secret is a leak, as on stderr.
      const secrets = this.run.sink.secrets;
      if (holdsSecret(m.message, secrets)) this.run.sink.onSecret?.();
      process.emitWarning(redact(m.message, secrets), { type: m.type, ...(m.code !== undefined ? { code: m.code } : {}) });
    } else if (m.kind === 'sleep') {
      const wait = this.run.clock?.wait(m.ms) ?? Promise.resolve();
      wait.then(() => undefined, (e: Error) => e.message).then((error) => {
        if (!this.stopped) this.worker.postMessage({ kind: 'slept', id: m.id, error });
      }, () => undefined);
    } else if (m.kind === 'result' && this.pending?.id === m.id) {
      if (m.error) {
        const e = new Error(m.error.message);
        if (m.error.name) e.name = m.error.name;
        this.settle((p) => p.reject(e));
      } else {
        this.settle((p) => p.resolve(m.value));
      }
    }
  }
}

/** The idle containers of the process, by function: a later run of the same app finds them warm, as Lambda would. */
const warm = new Set<Container>();

/** How many warm containers the process holds. */
export function warmContainerCount(): number {
  return warm.size;
}

/** Stops every warm container of the process (a test's clean-up; a process that exits needs none). */
export function stopWarmContainers(): void {
  for (const c of [...warm]) c.stop();
}

let vendorFound: { bundle?: string; paths: Record<string, string> } | undefined;

/** Where a container finds the vendor modules the handler requires (the AWS SDK clients): looked up once per process. */
function vendorLocations(): { bundle?: string; paths: Record<string, string> } {
  vendorFound ??= findVendor();
  return vendorFound;
}

function findVendor(): { bundle?: string; paths: Record<string, string> } {
  const bundle = vendorBundlePath();
  if (bundle !== undefined) return { bundle, paths: {} };
  const paths: Record<string, string> = {};
  for (const id of VENDOR_IDS) {
    if (!isVendorId(id) || !id.startsWith('@aws-sdk/')) continue;
    try {
      paths[id] = require.resolve(id);
    } catch {
      // Not installed: the handler's require of it fails in the container, saying so.
    }
  }
  return { paths };
}

/** A run's use of the containers: it takes warm ones of its functions, or starts new ones when none is free. */
export class LambdaContainers {
  private readonly code: string;
  private readonly busy = new Set<Container>();
  private readonly seen = new Set<Container>();
  /** How many containers this run started (cold starts). */
  coldStarts = 0;

  constructor(private readonly options: ContainerOptions) {
    this.code = withLocalConsole(readFileSync(options.handlerFile, 'utf8'));
  }

  /** How many containers served this run (each one has its own caches: token, account, products). */
  get used(): number {
    return this.seen.size;
  }

  /** Runs one invocation in a warm container of its function, or in a new one when none is free. */
  async invoke(inv: ContainerInvocation): Promise<unknown> {
    const container = this.take(inv);
    this.busy.add(container);
    this.seen.add(container);
    try {
      return await container.invoke(inv, this.options);
    } finally {
      this.busy.delete(container);
      if (!container.stopped) this.keepWarm(container);
    }
  }

  /** The run ended: a container still busy with one of its invocations is stopped; what warm ones log goes nowhere. */
  close(): void {
    for (const c of this.busy) c.stop();
    this.busy.clear();
    for (const c of this.seen) if (c.run === this.options) c.run = { ...this.options, sink: { secrets: this.options.sink.secrets } };
  }

  private take(inv: ContainerInvocation): Container {
    const kind = `${this.options.handlerFile}\n${inv.memoryMb ?? ''}\n${inv.functionKey}\n${this.options.cloud?.shifted ? this.options.cloud.scale : 'wall clock'}`;
    for (const c of warm) {
      if (c.kind === kind && c.code === this.code) {
        warm.delete(c);
        if (c.idleTimer) clearTimeout(c.idleTimer);
        return c;
      }
    }
    this.coldStarts++;
    return new Container(kind, this.code, inv.memoryMb, this.options);
  }

  private keepWarm(c: Container): void {
    c.idleSince = Date.now();
    warm.add(c);
    c.idleTimer = setTimeout(() => c.stop(), WARM_MS);
    c.idleTimer.unref();
    const idle = [...warm].sort((a, b) => a.idleSince - b.idleSince);
    for (const old of idle.slice(0, Math.max(0, idle.length - MAX_WARM))) old.stop();
  }
}
