/**
 * Resolution of CloudFormation intrinsic functions for the local runner.
 *
 * Supports `Ref`, `Fn::GetAtt`, `Fn::Join`, `Fn::Select`, `Fn::Split`, `Fn::Sub`,
 * `Fn::FindInMap`, `Fn::Base64`, `Fn::GetAZs`, `Fn::If` (with `Fn::Equals`,
 * `Fn::And`, `Fn::Or`, `Fn::Not`, `Condition`), `Fn::ImportValue` (exports of stacks
 * deployed earlier in the same run) and the pseudo parameters. References to
 * resources that the runner does not deploy are resolved to deterministic names and
 * ARNs for the kinds custom resources need (IAM roles, secrets, Lambda functions,
 * state machines, log groups); anything else fails, naming the logical ID.
 */
import { createHash } from 'node:crypto';
import { isDpiType, isPlainObject, Template, TemplateResource } from './template';

/** Thrown when a value cannot be resolved; the message names the resource and the reference. */
export class ResolveError extends Error {
  constructor(message: string) {
    super(message);
    this.name = 'ResolveError';
  }
}

/** The environment of a stack, for pseudo parameters and generated names. */
export interface StackEnvironment {
  readonly stackName: string;
  readonly stackId: string;
  readonly account: string;
  readonly region: string;
  /** Default `aws` (derived from the region: `aws-cn`, `aws-us-gov`). */
  readonly partition?: string;
  /** Default `amazonaws.com` (`amazonaws.com.cn` in China regions). */
  readonly urlSuffix?: string;
}

/** What the resolver needs besides the template. */
export interface ResolveContext {
  readonly env: StackEnvironment;
  readonly template: Template;
  /**
   * Physical ID and attributes of a resource served by the runner (a `Custom::Dpi*`
   * resource), or undefined when it has not been deployed (yet).
   */
  readonly deployed?: (logicalId: string) => { physicalId: string; attributes: Record<string, unknown> } | undefined;
  /** Value of a cross-stack export. */
  readonly importValue?: (name: string) => string | undefined;
  /**
   * Validation mode: references to not-yet-deployed custom resources resolve to a
   * placeholder instead of failing (used to check a template before any change).
   */
  readonly placeholders?: boolean;
}

/** Marker for `Ref: AWS::NoValue` (the property is removed). */
const NO_VALUE = Symbol('AWS::NoValue');

/** Placeholder produced in validation mode. */
export const PLACEHOLDER_PREFIX = '<<deploy-time:';

/** Partition of a region. */
export function partitionOf(region: string): string {
  if (region.startsWith('cn-')) return 'aws-cn';
  if (region.startsWith('us-gov-')) return 'aws-us-gov';
  return 'aws';
}

function hash(text: string, length: number, alphabet = 'ABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789'): string {
  const digest = createHash('sha256').update(text).digest();
  let out = '';
  for (let i = 0; i < length; i++) out += alphabet[digest[i % digest.length] % alphabet.length];
  return out;
}

/**
 * A deterministic stand-in for a name CloudFormation would generate:
 * `<stack>-<logicalId>` when it fits, else truncated parts and a hash (as CloudFormation does).
 */
export function generatedName(stackName: string, logicalId: string, maxLength: number): string {
  const plain = `${stackName}-${logicalId}`;
  if (plain.length <= maxLength) return plain;
  const suffix = hash(plain, 12);
  const room = maxLength - suffix.length - 2;
  const stackPart = stackName.slice(0, Math.min(stackName.length, Math.floor(room / 3)));
  const idPart = logicalId.slice(0, room - stackPart.length);
  return `${stackPart}-${idPart}-${suffix}`;
}

/** CloudFormation delivers every scalar property as a string; arrays and objects recursively. `null` values are dropped. */
export function stringifyScalars(value: unknown): unknown {
  if (value === null || value === undefined) return undefined;
  if (typeof value === 'string') return value;
  if (typeof value === 'number' || typeof value === 'boolean' || typeof value === 'bigint') return String(value);
  if (Array.isArray(value)) return value.filter((v) => v !== null && v !== undefined).map((v) => stringifyScalars(v));
  if (isPlainObject(value)) {
    const out: Record<string, unknown> = {};
    for (const [k, v] of Object.entries(value)) {
      const s = stringifyScalars(v);
      if (s !== undefined) out[k] = s;
    }
    return out;
  }
  return String(value);
}

function asString(value: unknown, where: string, what: string): string {
  if (typeof value === 'string') return value;
  if (typeof value === 'number' || typeof value === 'boolean') return String(value);
  throw new ResolveError(`${where}: ${what} must resolve to a string, got ${JSON.stringify(value)}`);
}

function describe(value: unknown): string {
  const s = JSON.stringify(value);
  return s.length > 200 ? `${s.slice(0, 197)}...` : s;
}

/**
 * Resolves the intrinsic functions of `value` (a property tree of the resource
 * `logicalId`). Throws ResolveError naming `logicalId` and the failing reference.
 */
export function resolveValue(value: unknown, logicalId: string, ctx: ResolveContext): unknown {
  const r = new Resolver(ctx, logicalId);
  const out = r.resolve(value);
  return out === NO_VALUE ? undefined : out;
}

/** Evaluates a named condition of the template. */
export function evaluateCondition(name: string, logicalId: string, ctx: ResolveContext): boolean {
  return new Resolver(ctx, logicalId).condition(name);
}

class Resolver {
  private readonly env: Required<StackEnvironment>;
  private readonly resolving = new Set<string>();
  private readonly conditions = new Map<string, boolean>();

  constructor(private readonly ctx: ResolveContext, private readonly where: string) {
    const partition = ctx.env.partition ?? partitionOf(ctx.env.region);
    this.env = {
      ...ctx.env,
      partition,
      urlSuffix: ctx.env.urlSuffix ?? (partition === 'aws-cn' ? 'amazonaws.com.cn' : 'amazonaws.com'),
    };
  }

  private fail(message: string): never {
    throw new ResolveError(`${this.ctx.env.stackName}/${this.where}: ${message}`);
  }

  resolve(value: unknown): unknown {
    if (Array.isArray(value)) {
      return value.map((v) => this.resolve(v)).filter((v) => v !== NO_VALUE);
    }
    if (!isPlainObject(value)) return value;
    const keys = Object.keys(value);
    if (keys.length === 1 && (keys[0] === 'Ref' || keys[0].startsWith('Fn::') || keys[0] === 'Condition')) {
      return this.intrinsic(keys[0], value[keys[0]]);
    }
    const out: Record<string, unknown> = {};
    for (const k of keys) {
      const v = this.resolve(value[k]);
      if (v !== NO_VALUE && v !== undefined) out[k] = v;
    }
    return out;
  }

  private resolveString(value: unknown, what: string): string {
    const v = this.resolve(value);
    return asString(v, `${this.ctx.env.stackName}/${this.where}`, what);
  }

  private resolveList(value: unknown, what: string): unknown[] {
    const v = this.resolve(value);
    if (!Array.isArray(v)) this.fail(`${what} must resolve to a list, got ${describe(v)}`);
    return v;
  }

  private intrinsic(fn: string, arg: unknown): unknown {
    switch (fn) {
      case 'Ref':
        if (typeof arg !== 'string') this.fail(`Ref takes a logical ID or pseudo parameter name, got ${describe(arg)}`);
        return this.ref(arg);
      case 'Fn::GetAtt': {
        let id: unknown;
        let attr: unknown;
        if (typeof arg === 'string') {
          const dot = arg.indexOf('.');
          if (dot <= 0) this.fail(`Fn::GetAtt '${arg}' must be 'LogicalId.Attribute'`);
          id = arg.slice(0, dot);
          attr = arg.slice(dot + 1);
        } else if (Array.isArray(arg) && arg.length === 2) {
          id = arg[0];
          attr = this.resolve(arg[1]);
        } else {
          this.fail(`Fn::GetAtt takes [LogicalId, Attribute], got ${describe(arg)}`);
        }
        if (typeof id !== 'string' || typeof attr !== 'string') this.fail(`Fn::GetAtt takes [LogicalId, Attribute], got ${describe(arg)}`);
        return this.getAtt(id, attr);
      }
      case 'Fn::Join': {
        if (!Array.isArray(arg) || arg.length !== 2) this.fail(`Fn::Join takes [delimiter, list], got ${describe(arg)}`);
        const delimiter = this.resolveString(arg[0], 'the Fn::Join delimiter');
        const list = this.resolveList(arg[1], 'the Fn::Join list');
        return list.map((v) => asString(v, `${this.ctx.env.stackName}/${this.where}`, 'an Fn::Join element')).join(delimiter);
      }
      case 'Fn::Select': {
        if (!Array.isArray(arg) || arg.length !== 2) this.fail(`Fn::Select takes [index, list], got ${describe(arg)}`);
        const index = Number(this.resolve(arg[0]));
        const list = this.resolveList(arg[1], 'the Fn::Select list');
        if (!Number.isInteger(index) || index < 0 || index >= list.length) {
          this.fail(`Fn::Select index ${describe(arg[0])} is out of range for a list of ${list.length}`);
        }
        return list[index];
      }
      case 'Fn::Split': {
        if (!Array.isArray(arg) || arg.length !== 2) this.fail(`Fn::Split takes [delimiter, string], got ${describe(arg)}`);
        const delimiter = this.resolveString(arg[0], 'the Fn::Split delimiter');
        const text = this.resolveString(arg[1], 'the Fn::Split source');
        return text.split(delimiter);
      }
      case 'Fn::Sub':
        return this.sub(arg);
      case 'Fn::FindInMap': {
        if (!Array.isArray(arg) || arg.length < 3) this.fail(`Fn::FindInMap takes [map, key, key], got ${describe(arg)}`);
        const [m, k1, k2] = [0, 1, 2].map((i) => this.resolveString(arg[i], 'an Fn::FindInMap key'));
        const v = this.ctx.template.Mappings?.[m]?.[k1]?.[k2];
        if (v === undefined) this.fail(`Fn::FindInMap: no value for ${m}/${k1}/${k2}`);
        return v;
      }
      case 'Fn::Base64':
        return Buffer.from(this.resolveString(arg, 'the Fn::Base64 argument'), 'utf8').toString('base64');
      case 'Fn::GetAZs': {
        const region = this.resolve(arg);
        const r = typeof region === 'string' && region !== '' ? region : this.env.region;
        return ['a', 'b', 'c'].map((z) => `${r}${z}`);
      }
      case 'Fn::ImportValue': {
        const name = this.resolveString(arg, 'the Fn::ImportValue name');
        const v = this.ctx.importValue?.(name);
        if (v === undefined) {
          if (this.ctx.placeholders) return `${PLACEHOLDER_PREFIX}import ${name}>>`;
          this.fail(`Fn::ImportValue '${name}': no stack deployed in this run exports that name`);
        }
        return v;
      }
      case 'Fn::If': {
        if (!Array.isArray(arg) || arg.length !== 3 || typeof arg[0] !== 'string') this.fail(`Fn::If takes [condition, then, else], got ${describe(arg)}`);
        return this.condition(arg[0]) ? this.resolve(arg[1]) : this.resolve(arg[2]);
      }
      case 'Fn::Equals':
      case 'Fn::And':
      case 'Fn::Or':
      case 'Fn::Not':
      case 'Condition':
        return this.conditionExpr({ [fn]: arg });
      default:
        return this.fail(`unsupported intrinsic function ${fn} (${describe(arg)})`);
    }
  }

  condition(name: string): boolean {
    const known = this.conditions.get(name);
    if (known !== undefined) return known;
    const expr = this.ctx.template.Conditions?.[name];
    if (expr === undefined) this.fail(`unknown condition '${name}'`);
    const key = `condition:${name}`;
    if (this.resolving.has(key)) this.fail(`condition '${name}' refers to itself`);
    this.resolving.add(key);
    const v = this.conditionExpr(expr);
    this.resolving.delete(key);
    this.conditions.set(name, v);
    return v;
  }

  private conditionExpr(expr: unknown): boolean {
    if (typeof expr === 'boolean') return expr;
    if (expr === 'true' || expr === 'false') return expr === 'true';
    if (!isPlainObject(expr) || Object.keys(expr).length !== 1) this.fail(`invalid condition ${describe(expr)}`);
    const [fn] = Object.keys(expr);
    const arg = expr[fn];
    switch (fn) {
      case 'Condition':
        if (typeof arg !== 'string') this.fail(`Condition takes a name, got ${describe(arg)}`);
        return this.condition(arg);
      case 'Fn::Equals': {
        if (!Array.isArray(arg) || arg.length !== 2) this.fail(`Fn::Equals takes two values, got ${describe(arg)}`);
        const [a, b] = arg.map((v) => JSON.stringify(stringifyScalars(this.resolve(v))));
        return a === b;
      }
      case 'Fn::And':
        if (!Array.isArray(arg)) this.fail(`Fn::And takes a list, got ${describe(arg)}`);
        return arg.every((c) => this.conditionExpr(c));
      case 'Fn::Or':
        if (!Array.isArray(arg)) this.fail(`Fn::Or takes a list, got ${describe(arg)}`);
        return arg.some((c) => this.conditionExpr(c));
      case 'Fn::Not':
        if (!Array.isArray(arg) || arg.length !== 1) this.fail(`Fn::Not takes a list of one condition, got ${describe(arg)}`);
        return !this.conditionExpr(arg[0]);
      default:
        return this.fail(`unsupported condition function ${fn}`);
    }
  }

  private sub(arg: unknown): string {
    let text: unknown;
    let vars: Record<string, unknown> = {};
    if (typeof arg === 'string') {
      text = arg;
    } else if (Array.isArray(arg) && arg.length === 2 && isPlainObject(arg[1])) {
      text = arg[0];
      vars = arg[1];
    } else {
      this.fail(`Fn::Sub takes a string or [string, {variables}], got ${describe(arg)}`);
    }
    if (typeof text !== 'string') this.fail(`Fn::Sub template must be a string, got ${describe(text)}`);
    return text.replace(/\$\{([^}]*)\}/g, (whole, name: string) => {
      if (name.startsWith('!')) return `\${${name.slice(1)}}`;
      const trimmed = name.trim();
      if (Object.prototype.hasOwnProperty.call(vars, trimmed)) {
        return asString(this.resolve(vars[trimmed]), `${this.ctx.env.stackName}/${this.where}`, `Fn::Sub variable ${trimmed}`);
      }
      const dot = trimmed.indexOf('.');
      if (dot > 0 && !trimmed.startsWith('AWS::')) {
        return asString(this.getAtt(trimmed.slice(0, dot), trimmed.slice(dot + 1)), `${this.ctx.env.stackName}/${this.where}`, whole);
      }
      return asString(this.ref(trimmed), `${this.ctx.env.stackName}/${this.where}`, whole);
    });
  }

  private pseudo(name: string): unknown {
    const e = this.env;
    switch (name) {
      case 'AWS::AccountId': return e.account;
      case 'AWS::Region': return e.region;
      case 'AWS::Partition': return e.partition;
      case 'AWS::StackName': return e.stackName;
      case 'AWS::StackId': return e.stackId;
      case 'AWS::URLSuffix': return e.urlSuffix;
      case 'AWS::NoValue': return NO_VALUE;
      case 'AWS::NotificationARNs': return [];
      default: return this.fail(`unknown pseudo parameter ${name}`);
    }
  }

  private ref(name: string): unknown {
    if (name.startsWith('AWS::')) return this.pseudo(name);
    const param = this.ctx.template.Parameters?.[name];
    if (param) {
      if (param.Default === undefined) this.fail(`Ref ${name}: parameter has no default value (parameters cannot be passed to local-deploy)`);
      if (param.Type && param.Type.startsWith('AWS::SSM::Parameter::Value')) {
        this.fail(`Ref ${name}: SSM parameter values are not available locally`);
      }
      return param.Default;
    }
    return this.resourceValue(name, undefined);
  }

  private getAtt(id: string, attr: string): unknown {
    return this.resourceValue(id, attr);
  }

  private resourceValue(id: string, attr: string | undefined): unknown {
    const what = attr === undefined ? `Ref ${id}` : `Fn::GetAtt ${id}.${attr}`;
    const res = this.ctx.template.Resources?.[id];
    if (!res) this.fail(`${what}: no resource or parameter named '${id}' in the template`);
    if (isDpiType(res.Type)) {
      const d = this.ctx.deployed?.(id);
      if (!d) {
        if (this.ctx.placeholders) return `${PLACEHOLDER_PREFIX}${id}${attr ? `.${attr}` : ''}>>`;
        this.fail(`${what}: ${id} (${res.Type}) has not been deployed`);
      }
      if (attr === undefined) return d.physicalId;
      if (!(attr in d.attributes)) {
        this.fail(`${what}: CustomResource attribute error: Vendor response doesn't contain ${attr} attribute`);
      }
      return d.attributes[attr];
    }
    const key = `resource:${id}`;
    if (this.resolving.has(key)) this.fail(`${what}: circular reference through ${id}`);
    this.resolving.add(key);
    try {
      return this.otherResource(id, res, attr, what);
    } finally {
      this.resolving.delete(key);
    }
  }

  /** A name property of another resource (resolved), or a deterministic generated name. */
  private nameOf(id: string, res: TemplateResource, prop: string, maxLength: number): string {
    const given = res.Properties?.[prop];
    if (given !== undefined) return this.resolveString(given, `${id}.${prop}`);
    return generatedName(this.env.stackName, id, maxLength);
  }

  private otherResource(id: string, res: TemplateResource, attr: string | undefined, what: string): unknown {
    const { partition, region, account } = this.env;
    const unsupported = (): never => this.fail(
      `${what}: cannot resolve ${attr === undefined ? 'a Ref' : `attribute ${attr}`} of ${id} (${res.Type}) locally; ` +
      'local-deploy resolves IAM roles, secrets, Lambda functions, state machines and log groups, and the Custom::Dpi* resources it deploys',
    );
    switch (res.Type) {
      case 'AWS::IAM::Role': {
        const name = this.nameOf(id, res, 'RoleName', 64);
        const path = res.Properties?.Path !== undefined ? this.resolveString(res.Properties.Path, `${id}.Path`) : '/';
        if (attr === undefined) return name;
        if (attr === 'Arn') return `arn:${partition}:iam::${account}:role${path}${name}`;
        if (attr === 'RoleId') return `AROA${hash(`${this.env.stackName}/${id}`, 17)}`;
        return unsupported();
      }
      case 'AWS::SecretsManager::Secret': {
        const name = this.nameOf(id, res, 'Name', 256);
        const arn = `arn:${partition}:secretsmanager:${region}:${account}:secret:${name}-${hash(`${this.env.stackName}/${id}`, 6, 'abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ')}`;
        if (attr === undefined || attr === 'Id') return arn;
        return unsupported();
      }
      case 'AWS::Lambda::Function': {
        const name = this.nameOf(id, res, 'FunctionName', 64);
        if (attr === undefined) return name;
        if (attr === 'Arn') return `arn:${partition}:lambda:${region}:${account}:function:${name}`;
        return unsupported();
      }
      case 'AWS::StepFunctions::StateMachine': {
        const name = this.nameOf(id, res, 'StateMachineName', 80);
        const arn = `arn:${partition}:states:${region}:${account}:stateMachine:${name}`;
        if (attr === undefined || attr === 'Arn') return arn;
        if (attr === 'Name') return name;
        return unsupported();
      }
      case 'AWS::Logs::LogGroup': {
        const name = this.nameOf(id, res, 'LogGroupName', 512);
        if (attr === undefined) return name;
        if (attr === 'Arn') return `arn:${partition}:logs:${region}:${account}:log-group:${name}:*`;
        return unsupported();
      }
      default:
        return unsupported();
    }
  }
}

/**
 * Logical IDs of template resources referenced by `value` (through `Ref`,
 * `Fn::GetAtt` and `Fn::Sub`); pseudo parameters and template parameters excluded.
 */
export function referencedResources(value: unknown, template: Template): Set<string> {
  const out = new Set<string>();
  const resources = template.Resources ?? {};
  const add = (id: string): void => {
    if (Object.prototype.hasOwnProperty.call(resources, id)) out.add(id);
  };
  const walk = (v: unknown): void => {
    if (Array.isArray(v)) {
      v.forEach(walk);
      return;
    }
    if (!isPlainObject(v)) return;
    for (const [k, inner] of Object.entries(v)) {
      if (k === 'Ref' && typeof inner === 'string') {
        add(inner);
      } else if (k === 'Fn::GetAtt') {
        if (typeof inner === 'string') add(inner.split('.')[0]);
        else if (Array.isArray(inner) && typeof inner[0] === 'string') add(inner[0]);
        walk(inner);
      } else if (k === 'Fn::Sub') {
        const text = typeof inner === 'string' ? inner : Array.isArray(inner) ? inner[0] : undefined;
        const vars = Array.isArray(inner) && isPlainObject(inner[1]) ? inner[1] : {};
        if (typeof text === 'string') {
          for (const m of text.matchAll(/\$\{([^}!][^}]*)\}/g)) {
            const name = m[1].trim();
            if (!Object.prototype.hasOwnProperty.call(vars, name)) add(name.split('.')[0]);
          }
        }
        walk(vars);
      } else {
        walk(inner);
      }
    }
  };
  walk(value);
  return out;
}
