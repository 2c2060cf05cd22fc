import type { FieldCode, Typed } from '../kinds';
import { HandlerError } from './errors';

/** Reads properties delivered by CloudFormation (every scalar arrives as a string). */
export class Props {
  constructor(private readonly raw: Record<string, unknown> | undefined, private readonly what: string) {}

  /** The raw value. */
  public get(name: string): unknown {
    return this.raw?.[name];
  }

  /** A string, or undefined when absent or empty. */
  public optString(name: string): string | undefined {
    const v = this.raw?.[name];
    if (v === undefined || v === null || v === '') return undefined;
    if (typeof v === 'object') throw new HandlerError(`${this.what}: property ${name} must be a string`);
    return String(v);
  }

  /** A required string. */
  public string(name: string): string {
    const v = this.optString(name);
    if (v === undefined) throw new HandlerError(`${this.what}: property ${name} is required`);
    return v;
  }

  /** A boolean from `true`/`false` (also accepts real booleans). */
  public bool(name: string, dflt = false): boolean {
    const v = this.raw?.[name];
    if (v === undefined || v === null || v === '') return dflt;
    if (v === true || v === 'true' || v === 'True' || v === 'TRUE') return true;
    if (v === false || v === 'false' || v === 'False' || v === 'FALSE') return false;
    throw new HandlerError(`${this.what}: property ${name} must be 'true' or 'false', got ${JSON.stringify(v)}`);
  }

  /** An optional integer. */
  public optInt(name: string): number | undefined {
    const v = this.optString(name);
    if (v === undefined) return undefined;
    if (!/^\s*-?\d+\s*$/.test(v)) throw new HandlerError(`${this.what}: property ${name} must be an integer, got ${JSON.stringify(v)}`);
    return Number(v);
  }

  /** A required integer. */
  public int(name: string): number {
    const v = this.optInt(name);
    if (v === undefined) throw new HandlerError(`${this.what}: property ${name} is required`);
    return v;
  }

  /** A list of strings (absent -> []). */
  public list(name: string): string[] {
    const v = this.raw?.[name];
    if (v === undefined || v === null || v === '') return [];
    if (!Array.isArray(v)) throw new HandlerError(`${this.what}: property ${name} must be a list`);
    return v.map((x) => String(x));
  }

  /** A flat string map (absent -> {}). */
  public map(name: string): Record<string, string> {
    const v = this.raw?.[name];
    if (v === undefined || v === null || v === '') return {};
    if (typeof v !== 'object' || Array.isArray(v)) throw new HandlerError(`${this.what}: property ${name} must be a map of strings`);
    return Object.fromEntries(Object.entries(v as Record<string, unknown>).map(([k, x]) => [k, String(x)]));
  }
}

function readField(p: Props, name: string, code: FieldCode): unknown {
  switch (code) {
    case 'string': return p.string(name);
    case 'string?': return p.optString(name);
    case 'int': return p.int(name);
    case 'int?': return p.optInt(name);
    case 'bool': return p.bool(name);
    case 'list': return p.list(name);
    case 'map': return p.map(name);
  }
}

/**
 * The properties of a kind, typed and coerced per its field spec (see `WireSpec` in src/kinds): e.g.
 * `readProps(raw, SUBSCRIPTION_FIELDS, 'Subscription').ProductId` is a number. Fails on the first bad value, naming
 * the kind, the property and the value (as `Props`). Properties the spec does not name are not read.
 */
export function readProps<S extends Readonly<Record<string, FieldCode>>>(raw: Record<string, unknown> | undefined, spec: S, what: string): Typed<S> {
  const p = new Props(raw, what);
  const out: Record<string, unknown> = {};
  for (const name of Object.keys(spec)) out[name] = readField(p, name, spec[name]);
  return out as Typed<S>;
}

/** Same elements regardless of order and duplicates. */
export function sameSet(a: string[], b: string[]): boolean {
  const x = [...new Set(a)].sort();
  const y = [...new Set(b)].sort();
  return x.length === y.length && x.every((v, i) => v === y[i]);
}

/** True when a physical ID is a numeric service ID (not a placeholder the framework invented). */
export function isNumericId(id: string | undefined): id is string {
  return typeof id === 'string' && /^[1-9]\d{0,15}$/.test(id);
}

/** The AWS account ID of an IAM role ARN, else undefined. */
export function accountOfArn(arn: string | undefined): string | undefined {
  if (!arn) return undefined;
  const m = /^arn:aws[a-z-]*:iam::(\d{12}):/.exec(arn);
  return m ? m[1] : undefined;
}
