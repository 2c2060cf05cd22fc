/**
 * Resolution of CloudFormation intrinsic functions for the local runner.
 *
 * Supports `Ref`, `Fn::GetAtt`, `Fn::Join`, `Fn::Select`, `Fn::Split`, `Fn::Sub`,
 * `Fn::FindInMap`, `Fn::Base64`, `Fn::GetAZs`, `Fn::If` (with `Fn::Equals`,
 * `Fn::And`, `Fn::Or`, `Fn::Not`, `Condition`), `Fn::ImportValue` (exports of stacks
 * deployed earlier in the same run) and the pseudo parameters.
 *
 * References to resources that the runner does not deploy resolve to deterministic
 * stand-ins, the way CloudFormation hands them on: IAM roles, secrets, Lambda
 * functions, state machines and log groups as before; the common types of
 * `RESOURCE_IDS` (resource-ids.ts: an SNS topic's `Ref` is its ARN, an SQS queue's its
 * URL, an S3 bucket's or a KMS key's its name or ID, `Arn` an ARN in the type's service
 * namespace); any other type through the general fallback (a generated name, an ARN in
 * the service namespace of `AWS::<Service>::<Kind>`, a placeholder for other
 * attributes). A nested stack (`AWS::CloudFormation::Stack`) resolves `Ref` to its
 * stack ID and `Outputs.<Name>` to the nested template's output (`nestedStack`).
 * Names and IDs derive from the account, region, stack name and logical ID (or the
 * name the template gives): the same app resolves the same on every run.
 */
import { generatedName, partitionOf, stringifyScalars } from './names';
import { fakeHash as hash, FakeResourceEnv, identityOf, placeholderAttribute } from './resource-ids';
import { isDpiType, isPlainObject, Template, TemplateResource } from './template';

export { generatedName, partitionOf, referencedResources, stringifyScalars } from './names';

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
  /**
   * A nested stack of this stack (an `AWS::CloudFormation::Stack` resource whose template the assembly holds): its
   * stack ID and the value of one of its outputs (resolved in the nested stack's context). Undefined for a nested
   * stack from elsewhere: its `Ref` and outputs resolve to stand-ins.
   */
  readonly nestedStack?: (logicalId: string) => NestedStackView | undefined;
}

/** What the resolver reads of a nested stack. */
export interface NestedStackView {
  readonly stackId: string;
  /** The value of the output `name` (throws ResolveError when it has none or it cannot be resolved). */
  output(name: string): unknown;
}

/** Marker for `Ref: AWS::NoValue` (the property is removed). */
const NO_VALUE = Symbol('AWS::NoValue');

/** Placeholder produced in validation mode. */
export const PLACEHOLDER_PREFIX = '<<deploy-time:';

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
      return this.otherResource(id, res, attr);
    } finally {
      this.resolving.delete(key);
    }
  }

  /** A resource the runner does not deploy: a nested stack, or the stand-in of its type. */
  private otherResource(id: string, res: TemplateResource, attr: string | undefined): unknown {
    switch (res.Type) {
      case 'AWS::CloudFormation::Stack':
        return this.nestedStack(id, attr);
      default:
        return this.standIn(id, res, attr);
    }
  }

  /** A nested stack: its stack ID, or one of its outputs (`Outputs.<Name>`). */
  private nestedStack(id: string, attr: string | undefined): unknown {
    const { partition, region, account } = this.env;
    const view = this.ctx.nestedStack?.(id);
    const name = generatedName(this.env.stackName, id, 128);
    const stackId = view?.stackId ?? `arn:${partition}:cloudformation:${region}:${account}:stack/${name}/${hash(`${this.env.stackName}/${id}`, 8).toLowerCase()}`;
    if (attr === undefined) return stackId;
    if (attr.startsWith('Outputs.')) {
      const output = attr.slice('Outputs.'.length);
      if (view) return view.output(output);
      return placeholderAttribute(this.fakeEnv(id, 'AWS::CloudFormation::Stack'), attr);
    }
    return placeholderAttribute(this.fakeEnv(id, 'AWS::CloudFormation::Stack'), attr);
  }

  private fakeEnv(id: string, type: string): FakeResourceEnv {
    const { partition, region, account, urlSuffix, stackName } = this.env;
    return { partition, region, account, urlSuffix, stackName, logicalId: id, type };
  }

  /**
   * A resource the runner does not deploy: the stand-in of its type (RESOURCE_IDS, else the fallback), named by its
   * name property when the template gives one, else by a generated ID or name.
   */
  private standIn(id: string, res: TemplateResource, attr: string | undefined): unknown {
    const identity = identityOf(res.Type);
    const env = this.fakeEnv(id, res.Type);
    const prop = (p: string): string | undefined => {
      const v = res.Properties?.[p];
      return v === undefined ? undefined : this.resolveString(v, `${id}.${p}`);
    };
    const name = (identity.nameProperty ? prop(identity.nameProperty) : undefined)
      ?? identity.generatedId?.(env)
      ?? this.generated(id, identity.maxLength ?? 128, identity.lowerCase === true);
    if (attr === undefined) return identity.ref(name, env, prop);
    const fn = identity.attributes?.[attr];
    return fn ? fn(name, env, prop) : placeholderAttribute(env, attr);
  }

  private generated(id: string, maxLength: number, lowerCase: boolean): string {
    const name = generatedName(this.env.stackName, id, maxLength);
    return lowerCase ? name.toLowerCase() : name;
  }

}
