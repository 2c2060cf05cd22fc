/**
 * The environment of the provider function a resource's events go to, as its template sets it: the handler refuses
 * events that differ from the connections and stacks bound there (src/handler/binding.ts), so the local runner gives
 * the handler that environment, resolved like the resource's properties (tokens included), with the
 * service addresses sent to the emulator as the events' are (`withEmulatorUrl`).
 */
import {
  BOUND_CONNECTION_FIELDS, BOUND_CONNECTIONS_ENV, BOUND_STACK_ID_ENV, BOUND_STACKS_ENV, CREATED_JOURNAL_TABLES_ENV, DECLARED_JOURNAL_TABLES_ENV,
  DEFAULT_JOURNAL_TABLE, PROVIDED_JOURNAL_TABLES_ENV, REQUEST_BUDGET_ENV,
} from '../contract';
import { AssemblyStack } from './assembly';
import { resolveValue, ResolveContext } from './intrinsics';
import { isPlainObject, TemplateResource } from './template';
import { WAITER_STATE_MACHINE_ENV, WaiterPolicy, waiterPolicy } from './waiter';

/** The provider framework's variables naming the user's onEvent and isComplete functions (aws-cdk-lib custom-resources). */
const USER_ON_EVENT_ENV = 'USER_ON_EVENT_FUNCTION_ARN';
const USER_IS_COMPLETE_ENV = 'USER_IS_COMPLETE_FUNCTION_ARN';
/** Lambda's timeout of a function whose template sets none (3 s). */
const LAMBDA_DEFAULT_TIMEOUT_MS = 3_000;
/** Lambda's memory of a function whose template sets none (128 MB). */
const LAMBDA_DEFAULT_MEMORY_MB = 128;

interface FunctionRef {
  readonly stack: AssemblyStack;
  readonly logicalId: string;
}

function variablesOf(r: TemplateResource | undefined): Record<string, unknown> | undefined {
  const env = r?.Properties?.Environment;
  const vars = isPlainObject(env) ? env.Variables : undefined;
  return isPlainObject(vars) ? vars : undefined;
}

/** The function a function-ARN expression names: `Fn::GetAtt` of a function of the template, or a nested stack's parameter. */
function functionOf(stack: AssemblyStack, expr: unknown): FunctionRef | undefined {
  if (!isPlainObject(expr)) return undefined;
  const ga = expr['Fn::GetAtt'];
  const target = Array.isArray(ga) && typeof ga[0] === 'string' ? ga[0] : typeof ga === 'string' ? ga.split('.')[0] : undefined;
  if (target !== undefined) {
    return stack.template.Resources?.[target]?.Type === 'AWS::Lambda::Function' ? { stack, logicalId: target } : undefined;
  }
  const ref = expr.Ref;
  if (typeof ref === 'string' && stack.nested && Object.prototype.hasOwnProperty.call(stack.nested.parameters, ref)) {
    // A nested stack using its parent's provider (a fleet's): the service token is passed in as a parameter.
    return functionOf(stack.nested.parent, stack.nested.parameters[ref]);
  }
  return undefined;
}

/** The handler function behind a resource's `ServiceToken`: the provider framework's onEvent function, else the function itself. */
export function providerFunctionOf(stack: AssemblyStack, logicalId: string): FunctionRef | undefined {
  const fn = functionOf(stack, stack.template.Resources?.[logicalId]?.Properties?.ServiceToken);
  if (!fn) return undefined;
  const user = variablesOf(fn.stack.template.Resources?.[fn.logicalId])?.[USER_ON_EVENT_ENV];
  return user === undefined ? fn : functionOf(fn.stack, user);
}

/** A function's `Timeout` (ms) as its template sets it; undefined when it is not a number there (a token). */
function timeoutOf(fn: FunctionRef): number | undefined {
  const t = fn.stack.template.Resources?.[fn.logicalId]?.Properties?.Timeout;
  if (t === undefined) return LAMBDA_DEFAULT_TIMEOUT_MS;
  return typeof t === 'number' && t > 0 ? t * 1000 : undefined;
}

/** A function's `MemorySize` (MB) as its template sets it (Lambda's 128 when it sets none); undefined for a token. */
function memoryOf(fn: FunctionRef): number | undefined {
  const m = fn.stack.template.Resources?.[fn.logicalId]?.Properties?.MemorySize;
  if (m === undefined) return LAMBDA_DEFAULT_MEMORY_MB;
  return typeof m === 'number' && m > 0 ? m : undefined;
}

/** A Lambda function of the app as the local runner runs it. */
export interface LocalFunction {
  /** Which function it is (`<stack>/<logicalId>`): invocations of one function share its warm containers. */
  readonly key: string;
  /** Its `Timeout` (ms); undefined when the template gives a token. */
  readonly timeoutMs?: number;
  /** Its `MemorySize` (MB); undefined when the template gives a token. */
  readonly memoryMb?: number;
}

function localFunction(fn: FunctionRef | undefined): LocalFunction | undefined {
  if (!fn) return undefined;
  return { key: `${fn.stack.stackName}/${fn.logicalId}`, timeoutMs: timeoutOf(fn), memoryMb: memoryOf(fn) };
}

/** The functions of a provider and its waiter's polling. */
export interface ProviderFunctions {
  readonly onEvent?: LocalFunction;
  readonly isComplete?: LocalFunction;
  readonly waiter?: WaiterPolicy;
}

/**
 * The handler functions behind a resource's `ServiceToken`, as Lambda would run them: the provider framework's user
 * onEvent function and, with a waiter, its isComplete function (each with its template's `Timeout` and `MemorySize`)
 * and how the waiter state machine polls it. Undefined where the template names no function of the app.
 */
export function providerFunctions(stack: AssemblyStack, logicalId: string): ProviderFunctions {
  const fn = functionOf(stack, stack.template.Resources?.[logicalId]?.Properties?.ServiceToken);
  if (!fn) return {};
  const vars = variablesOf(fn.stack.template.Resources?.[fn.logicalId]);
  const onEvent = vars?.[USER_ON_EVENT_ENV] === undefined ? fn : functionOf(fn.stack, vars[USER_ON_EVENT_ENV]);
  const isComplete = vars?.[USER_IS_COMPLETE_ENV] === undefined ? undefined : functionOf(fn.stack, vars[USER_IS_COMPLETE_ENV]);
  const waiter = waiterPolicy(fn.stack.template.Resources, vars?.[WAITER_STATE_MACHINE_ENV]);
  return { onEvent: localFunction(onEvent), isComplete: localFunction(isComplete), ...(waiter ? { waiter } : {}) };
}

/** Rewrites the service addresses of the bound connections to the emulator's URL. */
function withEmulatorUrls(json: string, url: string): string {
  let conns: unknown;
  try {
    conns = JSON.parse(json);
  } catch {
    return json; // the handler refuses it, naming the variable
  }
  if (!Array.isArray(conns)) return json;
  return JSON.stringify(conns.map((c) => (Array.isArray(c) ? c.map((v, i) => (BOUND_CONNECTION_FIELDS[i]?.endsWith('Url') ? url : v)) : c)));
}

/**
 * The environment of the provider function of resource `logicalId` of `stack`, resolved in the context of the stack
 * that holds the function; undefined when the resource's service token names no function of the app's templates with
 * a binding (a provider of an older version, or one made elsewhere).
 */
export function providerEnvironment(stack: AssemblyStack, logicalId: string, ctxOf: (s: AssemblyStack) => ResolveContext,
  emulatorUrl: string): Record<string, string> | undefined {
  const fn = providerFunctionOf(stack, logicalId);
  const vars = fn ? variablesOf(fn.stack.template.Resources?.[fn.logicalId]) : undefined;
  if (!fn || !vars || !(BOUND_CONNECTIONS_ENV in vars)) return undefined;
  const resolved = resolveValue(vars, fn.logicalId, ctxOf(fn.stack));
  const env: Record<string, string> = {};
  for (const [k, v] of Object.entries(isPlainObject(resolved) ? resolved : {})) env[k] = typeof v === 'string' ? v : JSON.stringify(v);
  if (env[BOUND_CONNECTIONS_ENV] !== undefined) env[BOUND_CONNECTIONS_ENV] = withEmulatorUrls(env[BOUND_CONNECTIONS_ENV], emulatorUrl);
  return localJournalTables(env);
}

const listOf = (v: string | undefined): string[] => (v ?? '').split(',').map((t) => t.trim()).filter((t) => t !== '');

/**
 * The runner makes the declared journals (`LifecycleJournal`) as CloudFormation would, but no other table of the app:
 * a table a connection supplies (`journalTable`) is the handler's to create on first use here (docs/constructs.md, "A
 * journal table you manage"), so it moves from the supplied list to the created one. Declared journals stay checked.
 */
function localJournalTables(env: Record<string, string>): Record<string, string> {
  const declared = listOf(env[DECLARED_JOURNAL_TABLES_ENV]);
  const supplied = listOf(env[PROVIDED_JOURNAL_TABLES_ENV]).filter((t) => !declared.includes(t));
  if (supplied.length === 0) return env;
  return {
    ...env,
    [PROVIDED_JOURNAL_TABLES_ENV]: listOf(env[PROVIDED_JOURNAL_TABLES_ENV]).filter((t) => declared.includes(t)).join(','),
    [CREATED_JOURNAL_TABLES_ENV]: [...listOf(env[CREATED_JOURNAL_TABLES_ENV]), ...supplied].join(','),
  };
}

/**
 * A binding of one connection and the stacks `stackNames` (and the nested stacks of `parents`, for a fleet's journal
 * keys). The local runner binds so what a resource's recorded properties name when the app no longer has its template
 * (the state file is the runner's own record of what it deployed from earlier templates); `dpi orphans --fix` binds
 * the connection and the stacks of its own Deletes.
 */
export function recordedEnvironment(connection: unknown, stackNames: readonly string[], parents: readonly string[] = [],
  providerStackId?: string, createJournal = false): Record<string, string> {
  const c = isPlainObject(connection) ? connection : {};
  const values = BOUND_CONNECTION_FIELDS.map((f) => (f === 'JournalTableName' && (c[f] === undefined || c[f] === '') ? DEFAULT_JOURNAL_TABLE : String(c[f] ?? '')));
  const stacks = [...stackNames, ...parents.flatMap((p) => [p, `${p}-*`])];
  return {
    [BOUND_CONNECTIONS_ENV]: JSON.stringify([values]),
    [BOUND_STACKS_ENV]: JSON.stringify(stacks),
    ...(providerStackId !== undefined ? { [BOUND_STACK_ID_ENV]: providerStackId } : {}),
    // The runner's own Deletes of what the app no longer has: the recorded table is the handler's to make when
    // missing, as the runner makes every journal but a declared one (a cancelled Create may never have opened it).
    // `dpi orphans --fix` creates no table.
    ...(createJournal ? { [CREATED_JOURNAL_TABLES_ENV]: values[BOUND_CONNECTION_FIELDS.indexOf('JournalTableName')] } : {}),
  };
}

/** The request budget (`DPI_REQUEST_BUDGET`) a stack's provider functions set (the first literal one), if any. */
export function templateBudget(stack: AssemblyStack): string | undefined {
  for (const r of Object.values(stack.template.Resources ?? {})) {
    const v = r.Type === 'AWS::Lambda::Function' ? variablesOf(r)?.[REQUEST_BUDGET_ENV] : undefined;
    if (typeof v === 'string') return v;
  }
  return undefined;
}
