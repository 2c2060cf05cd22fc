/**
 * Loads the bundled custom-resource handler and invokes it like Lambda would.
 */
import { AsyncLocalStorage } from 'node:async_hooks';
import { randomUUID } from 'node:crypto';
import { existsSync, mkdirSync, readFileSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { format } from 'node:util';
import { HANDLER_ASSET_DIR, HandlerExports } from '../contract';
import type { CfnEvent, LocalRuntime } from '../handler';
import { appendPrivateFile } from './private-files';
import { isVendorId, loadVendor, VENDOR_IDS } from './vendor-load';

/** Name of this package (to find its root). */
export const PACKAGE_NAME = 'data-pipeline-integration-cdk';

/**
 * The CloudFormation custom resource event the provider framework passes to `onEvent`: the handler's
 * event, with the fields the framework always sets made required.
 */
export interface CustomResourceEvent extends CfnEvent {
  ServiceToken: string;
  ResponseURL: string;
}

/** What `onEvent` returns. */
export interface OnEventResponse {
  PhysicalResourceId?: string;
  Data?: Record<string, unknown>;
  NoEcho?: boolean;
}

/** What `isComplete` returns. */
export interface IsCompleteResponse {
  IsComplete: boolean;
  Data?: Record<string, unknown>;
  /** The framework merges the answer into its response: a physical ID here is the one CloudFormation gets. */
  PhysicalResourceId?: string;
}

/** Local replacements of the handler's AWS calls (the handler's own type). */
export type { LocalRuntime };

/** The handler module's exports used by the runner. */
export interface HandlerModule {
  onEvent(event: CustomResourceEvent, context: LambdaLikeContext): Promise<OnEventResponse | undefined>;
  isComplete?(event: CustomResourceEvent & OnEventResponse, context: LambdaLikeContext): Promise<IsCompleteResponse>;
  configureLocalRuntime?(runtime: LocalRuntime): void;
}

/** The parts of the Lambda context a handler may use. */
export interface LambdaLikeContext {
  callbackWaitsForEmptyEventLoop: boolean;
  functionName: string;
  functionVersion: string;
  invokedFunctionArn: string;
  memoryLimitInMB: string;
  awsRequestId: string;
  logGroupName: string;
  logStreamName: string;
  getRemainingTimeInMillis(): number;
  done(): void;
  fail(): void;
  succeed(): void;
}

/** Finds the package root (the directory of this package's package.json) above `from`. */
export function findPackageRoot(from: string = __dirname): string {
  let dir = from;
  for (;;) {
    const pkg = join(dir, 'package.json');
    if (existsSync(pkg)) {
      try {
        const name = (JSON.parse(readFileSync(pkg, 'utf8')) as { name?: string }).name;
        if (name === PACKAGE_NAME) return dir;
      } catch {
        // not a readable package.json: keep looking
      }
    }
    const parent = dirname(dir);
    if (parent === dir) throw new Error(`cannot find the ${PACKAGE_NAME} package root above ${from}`);
    dir = parent;
  }
}

/** Path of the bundled handler (`assets/handler/index/index.js` under the package root). */
export function defaultHandlerPath(): string {
  return join(findPackageRoot(), HANDLER_ASSET_DIR, 'index.js');
}

interface InternalModule {
  filename: string;
  paths: string[];
  exports: unknown;
  require(id: string): unknown;
  _compile(code: string, filename: string): void;
}
interface ModuleStatics {
  prototype: InternalModule;
  new (id: string, parent?: unknown): InternalModule;
  _nodeModulePaths(dir: string): string[];
}

/**
 * Makes the module's free `console` the handler console (a module-scoped
 * variable declared after the 'use strict' directive, if any).
 */
export function withLocalConsole(code: string): string {
  const decl = 'var console = module.localConsole;';
  const m = /^(#![^\n]*\n)?(\s*(['"])use strict\3;?)?/.exec(code);
  const head = m ? m[0] : '';
  return `${head}${decl}${code.slice(head.length)}`;
}

/**
 * The `require` of the loaded handler. The handler bundle keeps `@aws-sdk/*` external (the Lambda runtime provides the
 * SDK); the package has no dependency on the SDK, so the clients the handler uses locally (DynamoDB for the journal;
 * CloudFormation) come from the package's vendor bundle (vendor-load.ts; from the sources: node_modules). Any other
 * module resolves as usual from the handler's directory; a missing `@aws-sdk/*` client is an error that says so.
 */
/** Why the handler bundle `file` cannot have the AWS SDK client `id` in a local run. */
export function missingClientMessage(file: string, id: string): string {
  const provided = VENDOR_IDS.filter((v) => v.startsWith('@aws-sdk/')).join(', ');
  return `the handler bundle ${file} requires ${id}, which local runs do not provide (they provide ${provided}; `
    + 'secrets, the caller account and IAM are local stand-ins): install it next to your app, or report the handler call that needs it';
}

function handlerRequire(file: string, own: (id: string) => unknown): (id: string) => unknown {
  return (id) => {
    if (isVendorId(id) && id.startsWith('@aws-sdk/')) return loadVendor(id);
    try {
      return own(id);
    } catch (e) {
      if (id.startsWith('@aws-sdk/') && (e as { code?: string }).code === 'MODULE_NOT_FOUND') throw new Error(missingClientMessage(file, id));
      throw e;
    }
  };
}

/**
 * Loads a fresh instance of the handler bundle (module state such as token caches
 * is not shared between runs, nor with another copy loaded by `require`).
 */
export function loadHandler(file: string): HandlerModule {
  if (!existsSync(file)) {
    throw new Error(`the handler bundle ${file} is missing: run 'npx projen bundle' first`);
  }
  // Required here: node:module is loaded only when a handler is (not at the start-up of every dpi command).
  // eslint-disable-next-line @typescript-eslint/no-require-imports
  const M = require('node:module') as unknown as ModuleStatics;
  const m = new M(file) as InternalModule & { localConsole?: unknown };
  m.filename = file;
  m.paths = M._nodeModulePaths(dirname(file));
  m.localConsole = handlerConsole;
  // The module's own require (Node's `require` inside the module calls `module.require`), scoped to this handler.
  m.require = handlerRequire(file, M.prototype.require.bind(m));
  m._compile(withLocalConsole(readFileSync(file, 'utf8')), file);
  const exp = m.exports as Partial<HandlerModule>;
  if (typeof exp[HandlerExports.ON_EVENT] !== 'function') {
    throw new Error(`the handler bundle ${file} does not export ${HandlerExports.ON_EVENT}: rebuild it with 'npx projen bundle'`);
  }
  return exp as HandlerModule;
}

/** Where the handler's console output goes while it runs. */
export interface HandlerLogSink {
  /** File the handler's log lines are appended to. */
  readonly file?: string;
  /** Also write them to stderr. */
  readonly echo?: boolean;
  /** Values the handler must never log (secrets): replaced by `***` in what the sink passes on, except `raw` below. */
  readonly secrets: readonly string[];
  /**
   * The file keeps every line as the handler wrote it, as CloudWatch Logs would (the local runner, whose token is the
   * emulator's): a check of the file sees a leak. Otherwise the file gets the secrets replaced too (a run against
   * the real service, with the real token). @default false
   */
  readonly raw?: boolean;
  /** Called for every line that holds one of the secrets (a leak: the cloud would keep it). */
  readonly onSecret?: () => void;
  /** Receives every captured line (redacted, without the timestamp and request ID), e.g. to report waits. */
  readonly onLine?: (line: string) => void;
}

/** True when `text` holds one of the secrets. */
export function holdsSecret(text: string, secrets: readonly string[]): boolean {
  return secrets.some((s) => s.length > 0 && text.includes(s));
}

/** Replaces every occurrence of the secrets in `text`. */
export function redact(text: string, secrets: readonly string[]): string {
  let out = text;
  for (const s of secrets) if (s.length > 0) out = out.split(s).join('***');
  return out;
}

type ConsoleMethod = 'log' | 'info' | 'warn' | 'error' | 'debug' | 'trace';
const METHODS: ConsoleMethod[] = ['log', 'info', 'warn', 'error', 'debug', 'trace'];

/** The sink of the invocation in progress: per async context, so concurrent invocations each log under their own request ID. */
const currentSink = new AsyncLocalStorage<{ sink: HandlerLogSink; requestId: string }>();

function writeLine(level: ConsoleMethod, args: unknown[]): void {
  const active = currentSink.getStore();
  // Outside an invocation (e.g. at load time): kept out of the progress output too.
  if (active) writeHandlerLine(active.sink, active.requestId, level, format(...args));
}

/** Writes one line the handler logged (`raw`, as written) during the invocation `requestId` to the sink. */
export function writeHandlerLine(sink: HandlerLogSink, requestId: string, level: string, raw: string): void {
  const stamp = `${new Date().toISOString()}\t${requestId}\t${level.toUpperCase()}\t`;
  const leaked = holdsSecret(raw, sink.secrets);
  const line = leaked ? redact(raw, sink.secrets) : raw;
  if (sink.file) appendPrivateFile(sink.file, `${stamp}${sink.raw ? raw : line}\n`);
  if (leaked) sink.onSecret?.();
  if (sink.echo) process.stderr.write(`${stamp}${line}\n`);
  sink.onLine?.(line);
}

/**
 * The `console` the loaded handler sees: every line goes to the sink of the
 * invocation in progress (the handler log file, as written; a line with a secret is reported to the sink).
 */
export const handlerConsole: Pick<Console, ConsoleMethod> = Object.fromEntries(
  METHODS.map((m) => [m, (...args: unknown[]) => writeLine(m, args)]),
) as unknown as Pick<Console, ConsoleMethod>;

/**
 * Runs `fn` (a handler invocation) with the console redirected to the sink,
 * and a Lambda-like context whose remaining time counts down from `budgetMs`.
 */
export async function invokeWithContext<T>(
  functionName: string,
  functionArn: string,
  budgetMs: number,
  sink: HandlerLogSink,
  fn: (context: LambdaLikeContext) => Promise<T>,
): Promise<T> {
  const deadline = Date.now() + budgetMs;
  const requestId = randomUUID();
  const context: LambdaLikeContext = {
    callbackWaitsForEmptyEventLoop: true,
    functionName,
    functionVersion: '$LATEST',
    invokedFunctionArn: functionArn,
    memoryLimitInMB: '256',
    awsRequestId: requestId,
    logGroupName: `/aws/lambda/${functionName}`,
    logStreamName: `local/${requestId}`,
    getRemainingTimeInMillis: () => Math.max(0, Math.floor(deadline - Date.now())),
    done: () => undefined,
    fail: () => undefined,
    succeed: () => undefined,
  };
  if (sink.file) mkdirSync(dirname(sink.file), { recursive: true });
  let timer: NodeJS.Timeout | undefined;
  try {
    const timeout = new Promise<never>((_, reject) => {
      timer = setTimeout(() => reject(new Error(`Task timed out after ${(budgetMs / 1000).toFixed(2)} seconds`)), budgetMs);
    });
    return await currentSink.run({ sink, requestId }, () => Promise.race([fn(context), timeout]));
  } finally {
    if (timer) clearTimeout(timer);
  }
}
