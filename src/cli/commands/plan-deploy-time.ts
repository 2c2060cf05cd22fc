/**
 * Values of a declared `Custom::Dpi*` property that no template comparison can know, because they are decided at
 * deploy time: a template parameter (a `CfnParameter`, an SSM parameter), an `Fn::ImportValue`, a dynamic reference
 * (`{{resolve:...}}`), or a `Ref` / `Fn::GetAtt` of a resource whose definition differs between the two sides (it may
 * be replaced), is new, or itself uses such a value. The same text on both sides may then stand for another value,
 * so `dpi plan` asks the handler's decisions what the change of such a value would do (`PlanInput.deployTime`).
 *
 * A nested stack's parameter is known when its parent passes it the same text on both sides and that text is known
 * in the parent (a fleet's role ARNs): only a parameter the parent passes differently, or from a deploy-time value,
 * counts as deploy-time.
 */
import type { PlanAction } from '../../handler/plan-types';
import { isDpiType, isPlainObject, Template, TemplateResource } from '../../local/template';

/** How a stack's parameter gets its value: its source in words when it is decided at deploy time, else undefined. */
export type ParameterSource = (name: string) => string | undefined;

/** Stable text of a value (object keys sorted), for comparing definitions. */
function stableText(v: unknown): string {
  const norm = (x: unknown): unknown => {
    if (Array.isArray(x)) return x.map(norm);
    if (isPlainObject(x)) return Object.fromEntries(Object.keys(x).sort().map((k) => [k, norm(x[k])]));
    return x;
  };
  return JSON.stringify(norm(v) ?? null);
}

/** The definition CloudFormation acts on (metadata, e.g. asset paths, does not replace a resource). */
function definition(r: TemplateResource | undefined): string {
  return stableText(r ? { Type: r.Type, Properties: r.Properties ?? {}, Condition: r.Condition } : undefined);
}

const DYNAMIC_REFERENCE = /\{\{resolve:[^}]*\}\}/;

/** The deploy-time sources of one stack's values (the declared side, against the deployed template). */
export class DeployTimeSources {
  private readonly memo = new Map<string, string | undefined>();
  private readonly visiting = new Set<string>();

  /**
   * @param newTemplate the declared template; @param oldTemplate the deployed one (undefined: not deployed);
   * @param parameterSource how the stack's parameters get their values (default: every parameter is deploy-time);
   * @param changing the `Custom::Dpi*` resources this deploy makes anew (filled while the stack is planned);
   * @param possible those it may replace or rebuild (a worst case), by logical ID.
   */
  constructor(private readonly newTemplate: Template, private readonly oldTemplate: Template | undefined,
    private readonly parameterSource: ParameterSource = (name) => `parameter ${name}`,
    readonly changing: Set<string> = new Set(), readonly possible: Map<string, PlanAction> = new Map()) {}

  /** The first deploy-time source found in `value`, in words; undefined when the value is known from the template. */
  sourceOf(value: unknown): string | undefined {
    if (typeof value === 'string') {
      const m = DYNAMIC_REFERENCE.exec(value);
      return m ? `dynamic reference ${m[0]}` : undefined;
    }
    if (Array.isArray(value)) return first(value, (v) => this.sourceOf(v));
    if (!isPlainObject(value)) return undefined;
    const keys = Object.keys(value);
    if (keys.length === 1) {
      const [k] = keys;
      const inner = value[k];
      if (k === 'Ref' && typeof inner === 'string') return this.nameSource(inner);
      if (k === 'Fn::GetAtt') {
        const [id] = typeof inner === 'string' ? inner.split('.') : Array.isArray(inner) ? inner : [];
        return typeof id === 'string' ? this.resourceSource(id) : undefined;
      }
      if (k === 'Fn::ImportValue') return `import ${typeof inner === 'string' ? inner : stableText(inner)}`;
      if (k === 'Fn::Sub') return this.subSource(inner);
    }
    return first(keys, (key) => this.sourceOf(value[key]));
  }

  /** A name of `Ref` or `${...}`: a pseudo parameter (known), a template parameter or a resource. */
  private nameSource(name: string): string | undefined {
    if (name.startsWith('AWS::')) return undefined;
    if (this.newTemplate.Parameters?.[name] !== undefined) return this.parameterSource(name);
    return this.resourceSource(name);
  }

  private subSource(inner: unknown): string | undefined {
    const text = typeof inner === 'string' ? inner : Array.isArray(inner) && typeof inner[0] === 'string' ? inner[0] : '';
    const vars = Array.isArray(inner) && isPlainObject(inner[1]) ? inner[1] : {};
    const dyn = DYNAMIC_REFERENCE.exec(text);
    if (dyn) return `dynamic reference ${dyn[0]}`;
    for (const m of text.matchAll(/\$\{([^}!][^}]*)\}/g)) {
      const name = m[1].trim();
      const src = name in vars ? this.sourceOf(vars[name]) : this.nameSource(name.split('.')[0]);
      if (src !== undefined) return src;
    }
    return undefined;
  }

  /** A resource's values are decided at deploy time when the deploy makes it anew or may (see the module comment). */
  private resourceSource(id: string): string | undefined {
    if (this.memo.has(id)) return this.memo.get(id);
    const r = this.newTemplate.Resources?.[id];
    if (!r || this.visiting.has(id)) return undefined;
    let src: string | undefined;
    if (isDpiType(r.Type)) {
      if (this.changing.has(id)) src = `resource ${id} (made anew by this deploy)`;
      else if (this.possible.has(id)) src = `resource ${id} (this deploy may ${this.possible.get(id)} it)`;
      // Not memoized: the stack's own resources are planned in order, and these sets grow meanwhile.
      return src;
    }
    const old = this.oldTemplate?.Resources?.[id];
    if (this.oldTemplate !== undefined && old === undefined) {
      src = `resource ${id} (new in this deploy)`;
    } else if (old !== undefined && definition(old) !== definition(r)) {
      src = `resource ${id} (its definition changed: it may be replaced)`;
    } else {
      this.visiting.add(id);
      const inner = this.sourceOf(r.Properties ?? {});
      this.visiting.delete(id);
      if (inner !== undefined) src = `resource ${id}, which uses ${inner}`;
    }
    this.memo.set(id, src);
    return src;
  }

  /**
   * The source of parameter `name` of the nested stack that this stack's resource `holder` holds: deploy-time when
   * this stack passes it another text than the deployed one, or a value decided at deploy time here.
   */
  nestedParameterSource(holder: string, name: string): string | undefined {
    const passed = (t: Template | undefined): unknown => {
      const params = t?.Resources?.[holder]?.Properties?.Parameters;
      return isPlainObject(params) ? params[name] : undefined;
    };
    const now = passed(this.newTemplate);
    if (this.oldTemplate?.Resources?.[holder] !== undefined && stableText(passed(this.oldTemplate)) !== stableText(now)) {
      return `parameter ${name} (the parent stack passes another value)`;
    }
    const src = this.sourceOf(now);
    return src !== undefined ? `parameter ${name}, which the parent stack passes from ${src}` : undefined;
  }
}

function first<T>(items: readonly T[], fn: (x: T) => string | undefined): string | undefined {
  for (const x of items) {
    const v = fn(x);
    if (v !== undefined) return v;
  }
  return undefined;
}
