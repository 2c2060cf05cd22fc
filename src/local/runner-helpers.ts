/**
 * Constants, shapes and small functions of the local runner (runner-*.ts).
 */
import type { ReadMode } from '../emulator';
import { READ_MODES } from '../emulator/core';
import { KINDS } from '../kinds';
import { ResourceState } from './state';
import { isPlainObject, TemplateResource } from './template';

export const CONNECTION = 'Connection';
export const FRAMEWORK_IS_COMPLETE_ENV = 'USER_IS_COMPLETE_FUNCTION_ARN';
/** The kinds whose completion the provider polls (isComplete). */
export const WAITER_TYPES = new Set<string>(KINDS.filter((k) => k.polled).map((k) => k.type));
export const MAX_DATA_BYTES = 4096;
/** With concurrency, the state file is written at most this often during a stack's resource events (see `save`). */
export const SAVE_INTERVAL_MS = 500;
/** Physical ID the CDK provider framework reports for a failed Create (its Delete is not passed to the handler). */
export const CREATE_FAILED_MARKER = 'AWSCDK::CustomResourceProviderFramework::CREATE_FAILED';

/**
 * The embedded emulator's rate limit when the run sets none: its `DEFAULT_RATE_LIMIT` (src/emulator/core.ts; a test
 * keeps them equal). A copy, so that the runner's bundle does not carry the emulator, which it loads only on demand.
 */
export const EMBEDDED_EMULATOR_RATE_LIMIT = { requests: 1000, seconds: 300 } as const;

/** Rewrites every `Connection.*Url` property to the emulator's URL. */
export function withEmulatorUrl(props: Record<string, unknown>, url: string): Record<string, unknown> {
  const c = props[CONNECTION];
  if (!isPlainObject(c)) return props;
  const conn: Record<string, unknown> = { ...c };
  for (const k of Object.keys(conn)) if (k.endsWith('Url')) conn[k] = url;
  return { ...props, [CONNECTION]: conn };
}

export function deepEqual(a: unknown, b: unknown): boolean {
  return JSON.stringify(canonical(a)) === JSON.stringify(canonical(b));
}
export function canonical(v: unknown): unknown {
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

export interface PlannedResource {
  readonly logicalId: string;
  readonly resource: TemplateResource;
  readonly dependsOn: string[];
  readonly waiter: boolean;
  readonly path?: string;
}

/** A planned resource with its resolved properties, as the state records it (without what the handler answers). */
export type DeclaredResource = Omit<ResourceState, 'physicalId' | 'attributes'>;

/** The state's view of a planned resource of `stack` with its resolved properties. */
export function declaredResource(stack: string, p: PlannedResource, properties: Record<string, unknown>): DeclaredResource {
  return {
    stack,
    logicalId: p.logicalId,
    type: p.resource.Type,
    properties,
    dependsOn: p.dependsOn,
    deletionPolicy: p.resource.DeletionPolicy,
    updateReplacePolicy: p.resource.UpdateReplacePolicy,
    waiter: p.waiter,
    path: p.path,
  };
}

export interface Change {
  readonly kind: 'create' | 'update';
  readonly before?: ResourceState;
  readonly after: ResourceState;
}

/** A resource operation that failed during a deploy (what the rollback needs). */
export interface Failure {
  readonly p: PlannedResource;
  readonly before?: ResourceState;
  readonly props?: Record<string, unknown>;
  /**
   * CloudFormation stopped waiting for it (another resource of the operation failed): its invocation runs on, and the
   * rollback sends a cancelled Create a Delete with an invented physical ID, a cancelled Update the swapped Update.
   */
  readonly cancelled?: boolean;
}

export class RunFailure extends Error {}

/** A handler failure after onEvent succeeded (isComplete failed or timed out): the resource exists under `physicalId`. */
export class WaiterError extends Error {
  constructor(message: string, readonly physicalId: string, readonly data: Record<string, unknown>) {
    super(message);
  }
}

/** The embedded emulator's read mode: the option, else DPI_EMULATOR_READS, else minimal. */
export function readsOf(option: string | undefined): ReadMode {
  const v = option ?? process.env.DPI_EMULATOR_READS ?? 'minimal';
  if (!(READ_MODES as readonly string[]).includes(v)) {
    throw new Error(`reads '${v}' is not a read mode; use one of ${READ_MODES.join(', ')}`);
  }
  return v as ReadMode;
}

/** The system error code of a failed fetch (ECONNREFUSED, ...), looked for through `cause` and aggregated errors. */
export function networkCode(e: unknown): string | undefined {
  let cur: unknown = e;
  for (let i = 0; i < 5 && cur && typeof cur === 'object'; i++) {
    const o = cur as { code?: unknown; cause?: unknown; errors?: unknown[] };
    if (typeof o.code === 'string' && /^E[A-Z]+$/.test(o.code)) return o.code;
    cur = o.cause ?? (Array.isArray(o.errors) ? o.errors[0] : undefined);
  }
  return undefined;
}

/** A custom resource's `ServiceTimeout` property in seconds (1 to 3600; CloudFormation's default and maximum: 3600). */
export function serviceTimeoutSeconds(properties: Record<string, unknown>): number {
  const n = Number(properties.ServiceTimeout);
  return Number.isInteger(n) && n >= 1 && n <= 3600 ? n : 3600;
}

/** CloudFormation's reason when a custom resource did not answer within its ServiceTimeout. */
export function serviceTimedOut(properties: Record<string, unknown>): string {
  return `CloudFormation did not receive a response from your Custom Resource within its ServiceTimeout (${serviceTimeoutSeconds(properties)} seconds)`;
}
