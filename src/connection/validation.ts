import { Token } from 'aws-cdk-lib';
import { IConstruct } from 'constructs';

/**
 * Synth-time validation helpers shared by the constructs (internal, not exported
 * from the package entry point).
 *
 * Every message has the form
 * `<construct path>: <prop> '<value>' <problem>; <what to do>`.
 */

/** Build the standard validation message. */
export function invalid(scope: IConstruct, prop: string, value: unknown, problem: string, fix: string): Error {
  return new Error(`${scope.node.path}: ${prop} '${show(value)}' ${problem}; ${fix}`);
}

/** Render a value for an error message. */
export function show(value: unknown): string {
  if (Array.isArray(value)) {
    return value.map((v) => String(v)).join(', ');
  }
  return String(value);
}

/** True when the value is an unresolved token (validated at deploy time instead). */
export function isToken(value: unknown): boolean {
  if (typeof value === 'string' || typeof value === 'number') {
    return Token.isUnresolved(value);
  }
  if (Array.isArray(value)) {
    return Token.isUnresolved(value);
  }
  return false;
}

/** Integer ID check (positive integer). Tokens pass. */
export function requirePositiveInteger(scope: IConstruct, prop: string, value: number | undefined): void {
  if (value === undefined || isToken(value)) {
    return;
  }
  if (typeof value !== 'number' || !Number.isInteger(value) || value < 1) {
    throw invalid(scope, prop, value, 'is not a positive integer ID', 'use the numeric ID shown by the service (for example `dpi identities`)');
  }
}

/**
 * The ID of an existing service record to adopt (`existing...Id` props): a positive integer (subscriptions) or,
 * with `opaque`, a non-empty ID of letters, digits, `-` and `_` (history transaction IDs, which the spec does not
 * define as numbers). Tokens pass.
 */
export function requireAdoptableId(scope: IConstruct, prop: string, value: number | string | undefined, opaque = false): void {
  if (value === undefined || isToken(value)) {
    return;
  }
  if (opaque) {
    if (typeof value !== 'string' || !/^[A-Za-z0-9_-]{1,64}$/.test(value)) {
      throw invalid(scope, prop, value, 'is not a history transaction ID', 'use the ID the service gave the request (letters, digits, - or _)');
    }
    return;
  }
  if (typeof value !== 'number' || !Number.isInteger(value) || value < 1 || value > Number.MAX_SAFE_INTEGER) {
    throw invalid(scope, prop, value, 'is not a subscription ID', 'use the numeric ID of the existing subscription (see `dpi import` or `dpi status`)');
  }
}

const DATE_RE = /^(\d{4})-(\d{2})-(\d{2})$/;

/** True when `value` is a real calendar date in `YYYY-MM-DD` form. */
export function isCalendarDate(value: string): boolean {
  const m = DATE_RE.exec(value);
  if (!m) {
    return false;
  }
  const y = Number(m[1]);
  const mo = Number(m[2]);
  const d = Number(m[3]);
  const date = new Date(Date.UTC(y, mo - 1, d));
  return date.getUTCFullYear() === y && date.getUTCMonth() === mo - 1 && date.getUTCDate() === d;
}

const DATETIME_RE = /^(\d{4}-\d{2}-\d{2}) ([01]\d|2[0-3]):([0-5]\d):([0-5]\d)$/;

/** True when `value` is `YYYY-MM-DD HH:MM:SS` with a real date and time. */
export function isDateTime(value: string): boolean {
  const m = DATETIME_RE.exec(value);
  return !!m && isCalendarDate(m[1]);
}

const ISO_RE = /^(\d{4}-\d{2}-\d{2})T([01]\d|2[0-3]):[0-5]\d(:[0-5]\d(\.\d+)?)?(Z|[+-]([01]\d|2[0-3]):?[0-5]\d)?$/;

/** True when `value` is an ISO 8601 datetime (`YYYY-MM-DDTHH:MM[:SS[.fff]][Z|±HH:MM]`) or a date. */
export function isIsoDateTime(value: string): boolean {
  if (isCalendarDate(value)) {
    return true;
  }
  const m = ISO_RE.exec(value);
  return !!m && isCalendarDate(m[1]);
}

/** A number as a string property value (tokens stay tokens). */
export function numStr(n: number): string {
  return Token.isUnresolved(n) ? Token.asString(n) : String(n);
}
