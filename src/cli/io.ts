/**
 * Everything `dpi` touches outside itself, injectable so tests run commands in-process.
 */

/** Something text can be written to (a process stream, or a test buffer). */
export interface TextSink {
  write(text: string): unknown;
}

/** Interrupt signals `dpi` waits for (`dpi emulator`, `dpi status --watch`). */
export type InterruptSignal = 'SIGINT' | 'SIGTERM';

/** The world of one `dpi` run. */
export interface CliIo {
  /** Results (tables, JSON). */
  readonly stdout: TextSink;
  /** Messages, errors and progress. */
  readonly stderr: TextSink;
  /** Environment variables (DPI_*, NO_COLOR). */
  readonly env: Record<string, string | undefined>;
  /** Whether stdout / stderr are terminals (colours and screen clearing on stdout, progress on stderr). */
  readonly isTTY: { readonly stdout: boolean; readonly stderr: boolean };
  /** The width of stdout's terminal, in columns, when it is one (tables fit it; `COLUMNS` otherwise). */
  readonly columns?: number;
  /** Current time, epoch milliseconds. */
  now(): number;
  /** Waits `ms` milliseconds; resolves early when `signal` aborts. */
  sleep(ms: number, signal?: AbortSignal): Promise<void>;
  /** Calls `handler` once on SIGINT or SIGTERM; returns a function that removes the subscription. */
  onInterrupt(handler: (signal: InterruptSignal) => void): () => void;
}

/** Partial IO for `buildProgram` / `runDpi`: anything omitted comes from the process. */
export type CliIoInit = Partial<Omit<CliIo, 'isTTY'>> & { isTTY?: Partial<CliIo['isTTY']> | boolean };

/** The process's own IO. */
export function processIo(): CliIo {
  return {
    stdout: process.stdout,
    stderr: process.stderr,
    env: process.env,
    isTTY: { stdout: process.stdout.isTTY === true, stderr: process.stderr.isTTY === true },
    columns: process.stdout.isTTY === true ? process.stdout.columns : undefined,
    now: () => Date.now(),
    sleep: (ms, signal) => new Promise<void>((resolve) => {
      if (signal?.aborted) return resolve();
      const done = (): void => {
        clearTimeout(timer);
        signal?.removeEventListener('abort', done);
        resolve();
      };
      const timer = setTimeout(done, ms);
      signal?.addEventListener('abort', done);
    }),
    onInterrupt(handler) {
      const onInt = (): void => {
        off();
        handler('SIGINT');
      };
      const onTerm = (): void => {
        off();
        handler('SIGTERM');
      };
      const off = (): void => {
        process.removeListener('SIGINT', onInt);
        process.removeListener('SIGTERM', onTerm);
      };
      process.on('SIGINT', onInt);
      process.on('SIGTERM', onTerm);
      return off;
    },
  };
}

/** Completes a partial IO with the process's own. */
export function resolveIo(init: CliIoInit = {}): CliIo {
  const p = processIo();
  const tty = init.isTTY;
  const isTTY = typeof tty === 'boolean'
    ? { stdout: tty, stderr: tty }
    : { stdout: tty?.stdout ?? (init.stdout ? false : p.isTTY.stdout), stderr: tty?.stderr ?? (init.stderr ? false : p.isTTY.stderr) };
  return {
    stdout: init.stdout ?? p.stdout,
    stderr: init.stderr ?? p.stderr,
    env: init.env ?? p.env,
    isTTY,
    columns: init.columns ?? (init.stdout ? undefined : p.columns),
    now: init.now ?? p.now,
    sleep: init.sleep ?? p.sleep,
    onInterrupt: init.onInterrupt ?? p.onInterrupt,
  };
}

/** Resolves when an interrupt arrives; `dispose` removes the subscription. */
export function interruption(io: CliIo): { promise: Promise<InterruptSignal>; fired(): boolean; dispose(): void } {
  let fired = false;
  let off: () => void = () => undefined;
  const promise = new Promise<InterruptSignal>((resolve) => {
    off = io.onInterrupt((sig) => {
      fired = true;
      resolve(sig);
    });
  });
  return { promise, fired: () => fired, dispose: () => off() };
}
