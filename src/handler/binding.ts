/**
 * What the provider serves, bound at synth time (src/connection/provider.ts writes it into the handler functions'
 * environment), and the checks of each event against it. Every check runs before the refresh token secret is read and
 * before any call (service, journal): an event is refused when
 * - its stack is not one the provider serves (`DPI_BOUND_STACKS`);
 * - its connection differs from every connection the provider serves in an address, the secret or the journal table
 *   (`DPI_BOUND_CONNECTIONS`);
 * - a service address is not https (plain http only to a loopback address, and only in local runs);
 * - its `JournalKey` names another stack than its own (or, for a nested stack of a fleet, than the stack whose provider
 *   serves it).
 * See docs/handler.md ("What the provider binds").
 */
import { BOUND_CONNECTION_FIELDS, BOUND_CONNECTIONS_ENV, BOUND_STACK_ID_ENV, BOUND_STACKS_ENV, DEFAULT_JOURNAL_TABLE } from '../contract';
import { HandlerError, reasonOf } from './errors';
import { log } from './log';
import type { CfnEvent } from './types';

/** An environment (the process's, or the one a local runner gives for the function an event is sent to). */
export type Environment = Readonly<Record<string, string | undefined>>;

/** What the provider serves. */
export interface Binding {
  /** Each bound connection: the values of `BOUND_CONNECTION_FIELDS`, in that order. */
  readonly connections: ReadonlyArray<readonly string[]>;
  /** Stack names served. */
  readonly stacks: readonly string[];
  /** Stacks whose nested stacks (`<name>-...`) are served too. */
  readonly nestedOf: readonly string[];
}

export const REDEPLOY = 'deploy the stack with this version of the library (it binds what its functions serve at synth time); nothing was done';

function parsed(env: Environment, name: string): unknown {
  const raw = env[name];
  if (raw === undefined || raw === '') {
    throw new HandlerError(`the function's environment has no ${name}, so it cannot tell which connections and stacks it serves; ${REDEPLOY}`);
  }
  try {
    return JSON.parse(raw);
  } catch {
    throw new HandlerError(`the provider function's environment variable ${name} is not JSON; ${REDEPLOY}`);
  }
}

const isStrings = (v: unknown): v is string[] => Array.isArray(v) && v.every((x) => typeof x === 'string' && x !== '');

/** The binding in an environment; refuses (HandlerError) when it is missing or malformed. */
export function bindingOf(env: Environment): Binding {
  const conns = parsed(env, BOUND_CONNECTIONS_ENV);
  if (!Array.isArray(conns) || conns.length === 0 || !conns.every((c) => isStrings(c) && c.length === BOUND_CONNECTION_FIELDS.length)) {
    throw new HandlerError(`the provider function's environment variable ${BOUND_CONNECTIONS_ENV} is not a list of connections; ${REDEPLOY}`);
  }
  const names = parsed(env, BOUND_STACKS_ENV);
  if (!isStrings(names) || names.length === 0) {
    throw new HandlerError(`the provider function's environment variable ${BOUND_STACKS_ENV} is not a list of stack names; ${REDEPLOY}`);
  }
  return {
    connections: conns as string[][],
    stacks: names.filter((n) => !n.endsWith('-*')),
    nestedOf: names.filter((n) => n.endsWith('-*')).map((n) => n.slice(0, -2)),
  };
}

/** The stack name of a stack ID (`arn:aws:cloudformation:<region>:<account>:stack/<name>/<uuid>`). */
export function stackNameOf(stackId: unknown): string | undefined {
  return typeof stackId === 'string' ? /:stack\/([^/]+)\//.exec(stackId)?.[1] : undefined;
}

/**
 * Whether a URL host is this machine: 127.0.0.0/8, `localhost` or `[::1]`. Kept in step with `isLoopbackHost` of
 * src/local/transport.ts (the handler imports nothing from src/local; test/handler/bound-connection.test.ts checks both).
 */
export function isLoopbackHost(hostname: string): boolean {
  const h = hostname.toLowerCase().replace(/\.$/, '');
  if (h === 'localhost' || h === '[::1]' || h === '::1') return true;
  const m = /^(\d{1,3})\.(\d{1,3})\.(\d{1,3})\.(\d{1,3})$/.exec(h);
  return m !== null && m[1] === '127' && m.slice(2).every((x) => Number(x) <= 255);
}

/** A URL for messages: scheme, host, port and path; never credentials, query or fragment. */
function shown(value: string): string {
  try {
    const u = new URL(value);
    return `${u.protocol}//${u.host}${u.pathname === '/' ? '' : u.pathname}`;
  } catch {
    return value.length > 80 ? `${value.slice(0, 80)}...` : value;
  }
}

/**
 * Why a service address must not carry the refresh token (undefined when it may): https always; plain http only to a
 * loopback address and only when `loopbackHttp` (local runs: `dpi local-deploy`, tests; never the Lambda).
 */
export function transportProblem(field: string, value: string, loopbackHttp: boolean): string | undefined {
  if (typeof value !== 'string' || value === '') return `Connection.${field} is missing`;
  let u: URL;
  try {
    u = new URL(value);
  } catch {
    return `Connection.${field} '${shown(value)}' is not a URL`;
  }
  if (u.username || u.password) return `Connection.${field} '${u.protocol}//***@${u.host}' carries credentials; keep them in the refresh token secret`;
  if (u.protocol === 'https:') return undefined;
  if (u.protocol === 'http:' && loopbackHttp && isLoopbackHost(u.hostname)) return undefined;
  return `Connection.${field} '${shown(value)}' is not https: the refresh token and the access tokens made from it are sent only over https`
    + `${loopbackHttp ? ' (plain http only to a loopback address: 127.0.0.0/8, localhost, [::1])' : ''}`;
}

/** The event's stack, refused unless the provider serves it. */
function checkStack(event: CfnEvent, b: Binding): string {
  const name = stackNameOf(event.StackId);
  if (name === undefined) throw new HandlerError(`StackId '${String(event.StackId)}' is not a CloudFormation stack ID; nothing was done`);
  if (b.stacks.includes(name) || b.nestedOf.some((p) => name.startsWith(`${p}-`))) return name;
  const served = [...b.stacks, ...b.nestedOf.map((p) => `the nested stacks of ${p}`)].join(', ');
  throw new HandlerError(`stack ${name} is not served by this provider (it serves ${served}); a stack uses the provider of its own `
    + 'ServiceConnection, never another stack\'s service token; nothing was done');
}

/** The event's connection, refused unless it is one the provider serves (in every bound field). */
function checkConnection(event: CfnEvent, b: Binding): void {
  checkConnectionValues(event.ResourceProperties?.Connection, b.connections, 'the provider');
}

/** A connection, refused unless it equals one of `bound` in every bound field (`who` serves them, for the message). */
function checkConnectionValues(connection: unknown, bound: ReadonlyArray<readonly string[]>, who: string): void {
  const c = connection as Record<string, unknown> | undefined;
  if (!c || typeof c !== 'object') throw new HandlerError('the Connection property is missing');
  const values = BOUND_CONNECTION_FIELDS.map((f) => (f === 'JournalTableName' && (c[f] === undefined || c[f] === '') ? DEFAULT_JOURNAL_TABLE : c[f]));
  const differing = bound.map((b) => BOUND_CONNECTION_FIELDS.filter((_, i) => values[i] !== b[i]));
  if (differing.some((d) => d.length === 0)) return;
  let best = 0;
  differing.forEach((d, i) => { if (d.length < differing[best].length) best = i; });
  const what = differing[best].map((f) => {
    const i = BOUND_CONNECTION_FIELDS.indexOf(f);
    const show = (v: unknown): string => (typeof v === 'string' && f.endsWith('Url') ? shown(v) : String(v));
    return `Connection.${f} '${show(values[i])}' (${who} serves '${show(bound[best][i])}')`;
  });
  throw new HandlerError(`${what.join(', ')}: not a connection ${who} serves; it serves only the connections bound to it at `
    + 'synth time (its addresses, refresh token secret and journal table); nothing was done');
}

/** Every service address of a connection, refused unless it may carry the refresh token (`transportProblem`). */
export function checkTransport(connection: Record<string, string>, loopbackHttp: boolean): void {
  for (const f of BOUND_CONNECTION_FIELDS) {
    if (!f.endsWith('Url')) continue;
    const problem = transportProblem(f, connection[f], loopbackHttp);
    if (problem) throw new HandlerError(`${problem}; nothing was done`);
  }
}

/**
 * The event's `JournalKey`, refused unless its stack part (before the first `/`) is the event's own stack, or, for a
 * nested stack served by its parent's provider (a fleet's, named `<parent>-...`), that parent.
 */
function checkJournalKey(event: CfnEvent, b: Binding, stack: string): void {
  const key = event.ResourceProperties?.JournalKey;
  // resourceKey ignores anything but a non-empty string (the key is then `<event's stack>/<logical ID>`).
  if (typeof key !== 'string' || key === '') return;
  const owner = key.includes('/') ? key.slice(0, key.indexOf('/')) : '';
  // A nested stack (named `<parent>-...`) may use its parent's namespace only for a fleet's keys
  // (`<parent>/<fleet path>/<nested stack>/<identity>`), never for the parent's own resources (`<parent>/<logical ID>`):
  // a top-level stack named like a nested one must not reach them.
  const fleetKey = key.split('/').length >= 4;
  if (owner !== '' && (owner === stack || (fleetKey && b.nestedOf.includes(owner) && stack.startsWith(`${owner}-`)))) return;
  throw new HandlerError(`JournalKey '${key}' belongs to ${owner === '' ? 'no stack' : `stack ${owner}`}, not to stack ${stack} of this resource: `
    + 'a journal key starts with the name of the resource\'s own stack (or of the parent stack whose provider serves it); nothing was done');
}

/** Checks an event against what the provider serves (see the module comment); throws a HandlerError refusal. */
export function checkEvent(event: CfnEvent, env: Environment, loopbackHttp: boolean): void {
  const b = bindingOf(env);
  const stack = checkStack(event, b);
  checkConnection(event, b);
  checkTransport(event.ResourceProperties.Connection as Record<string, string>, loopbackHttp);
  checkJournalKey(event, b, stack);
}

/** `checkEvent`, logging a refusal (one line: what was refused and why) before it is thrown. */
export function refuseUnserved(what: string, event: CfnEvent, env: Environment, loopbackHttp: boolean): void {
  try {
    checkEvent(event, env, loopbackHttp);
  } catch (e) {
    const fields = { level: 'WARNING', msg: `${what} refused`, RequestType: event?.RequestType, LogicalResourceId: event?.LogicalResourceId };
    log({ ...fields, StackId: event?.StackId, reason: reasonOf(e) });
    throw e;
  }
}

/** What CloudFormation says of a stack (DescribeStacks): its parent's and its root's stack IDs; none for a top-level stack. */
export interface StackLineage {
  readonly ParentId?: string;
  readonly RootId?: string;
}

/**
 * An event of a stack that the provider serves only as a nested stack of its own (`<name>-*`: a fleet's) must come
 * from a stack that CloudFormation says is one: its parent or root is the provider's stack (`DPI_BOUND_STACK_ID`). A
 * top-level stack merely named `<name>-...` is refused, before the secret is read or any call to the service or the
 * journal. Events of the provider's own stacks need no proof.
 */
export async function proveNestedStack(event: CfnEvent, env: Environment,
  lineage: (stackId: string) => Promise<StackLineage | undefined>): Promise<void> {
  const b = bindingOf(env);
  const name = stackNameOf(event.StackId);
  if (name === undefined || b.stacks.includes(name)) return;
  const bound = env[BOUND_STACK_ID_ENV];
  if (bound === undefined || bound === '') {
    throw new HandlerError(`the provider function's environment has no ${BOUND_STACK_ID_ENV}, so it cannot prove that stack ${name} is one of its `
      + `nested stacks; ${REDEPLOY}`);
  }
  let l: StackLineage | undefined;
  try {
    l = await lineage(String(event.StackId));
  } catch (e) {
    throw new HandlerError(`stack ${name} could not be proven a nested stack of this provider's stack (DescribeStacks: ${reasonOf(e)}); nothing was done`);
  }
  if (l?.ParentId === bound || l?.RootId === bound) return;
  throw new HandlerError(`stack ${name} is named like a nested stack of this provider's stack, but CloudFormation gives it `
    + `${l?.ParentId ? `the parent ${l.ParentId}` : 'no parent'}; only the provider's own nested stacks may use it; nothing was done`);
}

/** `proveNestedStack`, logging a refusal as `refuseUnserved` does. */
export async function refuseUnprovenNested(what: string, event: CfnEvent, env: Environment,
  lineage: (stackId: string) => Promise<StackLineage | undefined>): Promise<void> {
  try {
    await proveNestedStack(event, env, lineage);
  } catch (e) {
    const fields = { level: 'WARNING', msg: `${what} refused`, RequestType: event?.RequestType, LogicalResourceId: event?.LogicalResourceId };
    log({ ...fields, StackId: event?.StackId, reason: reasonOf(e) });
    throw e;
  }
}
