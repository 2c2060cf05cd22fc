/**
 * The local runner's planning: resolve contexts (nested stacks included), the plan of a stack, changes, exports.
 */
import type { CfnEvent } from '../handler';
import { AssemblyStack } from './assembly';
import { dependencyOrder, selectedDependencies } from './graph';
import { evaluateCondition, NestedStackView, partitionOf, ResolveError, resolveValue, ResolveContext, stringifyScalars } from './intrinsics';
import { DeclaredTable, declaredTables } from './journal-policies';
import { providerEnvironment, providerFunctions } from './provider-env';
import { FRAMEWORK_IS_COMPLETE_ENV, WAITER_TYPES, deepEqual, PlannedResource } from './runner-helpers';
import { RunnerInvoke } from './runner-invoke';
import { resourceKey, ResourceState } from './state';
import { isDpiType, isPlainObject, TemplateResource } from './template';

/** Planning and resolution of the stacks of a run. */
export abstract class RunnerPlan extends RunnerInvoke {
  protected resolveContext(stack: AssemblyStack, stackId: string, placeholders: boolean): ResolveContext {
    return {
      env: { stackName: stack.stackName, stackId, account: stack.account, region: stack.region },
      template: stack.nested ? this.nestedTemplate(stack, placeholders) : stack.template,
      placeholders,
      deployed: (id) => {
        const s = this.state.resources[resourceKey(stack.stackName, id)];
        return s ? { physicalId: s.physicalId, attributes: s.attributes } : undefined;
      },
      importValue: (name) => this.exports.get(name),
      nestedStack: (logicalId) => this.nestedStackView(stack, logicalId, placeholders),
    };
  }

  /**
   * The environment of the provider function an event goes to, resolved from the app's template (src/local/provider-env.ts):
   * the connections and stacks it serves. A stack or resource the app no longer has, or a value that cannot be resolved
   * locally: the binding of what the event's recorded properties name (RunnerInvoke).
   */
  protected environmentFor(event: CfnEvent): Record<string, string> {
    const name = this.state.stacks.find((s) => s.stackId === event.StackId)?.stackName;
    const stack = this.stacks.find((s) => s.stackName === name);
    if (stack && this.url) {
      const ctxOf = (s: AssemblyStack): ResolveContext => this.resolveContext(s, this.stackState(s.stackName)?.stackId
        ?? `arn:${partitionOf(s.region)}:cloudformation:${s.region}:${s.account}:stack/${s.stackName}/validation`, false);
      try {
        const env = providerEnvironment(stack, event.LogicalResourceId, ctxOf, this.url);
        if (env) return env;
      } catch (e) {
        if (!(e instanceof ResolveError)) throw e;
      }
    }
    return super.environmentFor(event);
  }

  /**
   * A nested stack of `parent` for the resolver: its stack ID (from the state, else the ID it will get) and its outputs,
   * resolved in its own context (a parent resource that reads one waits for the nested stack's tree: stack-tree.ts).
   */
  protected nestedStackView(parent: AssemblyStack, logicalId: string, placeholders: boolean): NestedStackView | undefined {
    const child = this.stacks.find((s) => s.nested?.parent.stackName === parent.stackName && s.nested.logicalId === logicalId);
    if (!child) return undefined;
    const stackId = this.stackState(child.stackName)?.stackId
      ?? `arn:${partitionOf(child.region)}:cloudformation:${child.region}:${child.account}:stack/${child.stackName}/validation`;
    return {
      stackId,
      output: (name) => {
        const o = child.template.Outputs?.[name];
        if (!o) throw new ResolveError(`${parent.stackName}/${logicalId}: the nested stack ${child.stackName} has no output '${name}'`);
        const key = `${child.stackName}/${name}`;
        if (this.resolvingOutputs.has(key)) throw new ResolveError(`${parent.stackName}/${logicalId}: circular reference through the output ${key}`);
        this.resolvingOutputs.add(key);
        try {
          return resolveValue(o.Value, `Outputs.${name}`, this.resolveContext(child, stackId, placeholders));
        } finally {
          this.resolvingOutputs.delete(key);
        }
      },
    };
  }

  /**
   * A nested stack's template with the values its parent passes (the `Parameters` of the `AWS::CloudFormation::Stack`
   * resource, resolved in the parent's context) as the parameters' defaults.
   */
  protected nestedTemplate(stack: AssemblyStack, placeholders: boolean): AssemblyStack['template'] {
    const origin = stack.nested!;
    const parent = origin.parent;
    const parentCtx = this.resolveContext(parent, this.stackState(parent.stackName)?.stackId
      ?? `arn:aws:cloudformation:${parent.region}:${parent.account}:stack/${parent.stackName}/validation`, placeholders);
    const parameters = { ...(stack.template.Parameters ?? {}) };
    for (const [name, expr] of Object.entries(origin.parameters)) {
      if (!parameters[name]) continue;
      parameters[name] = { ...parameters[name], Default: resolveValue(expr, `${origin.logicalId}.Parameters.${name}`, parentCtx) };
    }
    return { ...stack.template, Parameters: parameters };
  }

  protected plan(stack: AssemblyStack, ctx: ResolveContext): PlannedResource[] {
    const resources = stack.template.Resources ?? {};
    const present = (id: string): boolean => {
      const r = resources[id];
      return !!r && isDpiType(r.Type) && (!r.Condition || evaluateCondition(r.Condition, id, ctx));
    };
    const deps = selectedDependencies(stack.template, present);
    const ids = Object.keys(resources).filter(present);
    const ordered = dependencyOrder(ids, deps);
    return ordered.map((id) => {
      const r = resources[id];
      const path = isPlainObject(r.Metadata) && typeof r.Metadata['aws:cdk:path'] === 'string' ? r.Metadata['aws:cdk:path'] : undefined;
      return { logicalId: id, resource: r, dependsOn: deps.get(id) ?? [], waiter: this.hasWaiter(stack, r, id), path };
    });
  }

  /** The declared lifecycle journals (`LifecycleJournal`'s tables) of a stack's template, resolved. */
  protected declaredJournals(stack: AssemblyStack): DeclaredTable[] {
    const resources = stack.template.Resources ?? {};
    if (!Object.values(resources).some((r) => r.Type === 'AWS::DynamoDB::Table')) return [];
    const ctx = this.resolveContext(stack, this.stackState(stack.stackName)?.stackId
      ?? `arn:aws:cloudformation:${stack.region}:${stack.account}:stack/${stack.stackName}/validation`, true);
    return declaredTables(resources, (value, id) => resolveValue(value, id, ctx));
  }

  /**
   * The resource's provider has an isComplete waiter (its ServiceToken is a provider framework with a user isComplete
   * function; a fleet's nested stack reaches its parent's provider through a parameter).
   */
  protected hasWaiter(stack: AssemblyStack, r: TemplateResource, logicalId?: string): boolean {
    if (logicalId !== undefined && providerFunctions(stack, logicalId).isComplete !== undefined) return true;
    const token = r.Properties?.ServiceToken;
    let target: string | undefined;
    if (isPlainObject(token)) {
      const ga = token['Fn::GetAtt'];
      if (Array.isArray(ga) && typeof ga[0] === 'string') target = ga[0];
      else if (typeof ga === 'string') target = ga.split('.')[0];
      else if (typeof token.Ref === 'string') target = token.Ref;
    }
    const fn = target ? stack.template.Resources?.[target] : undefined;
    if (fn && fn.Type === 'AWS::Lambda::Function') {
      const env = fn.Properties?.Environment;
      const vars = isPlainObject(env) ? env.Variables : undefined;
      return isPlainObject(vars) && FRAMEWORK_IS_COMPLETE_ENV in vars;
    }
    return WAITER_TYPES.has(r.Type);
  }

  protected resolveProps(ctx: ResolveContext, p: PlannedResource): Record<string, unknown> {
    const resolved = resolveValue(p.resource.Properties ?? {}, p.logicalId, ctx);
    return (stringifyScalars(resolved) ?? {}) as Record<string, unknown>;
  }

  /**
   * Nested stacks in the state whose parent is in the app but that the app no longer has, and their own nested
   * stacks, in deletion order (children first).
   */
  protected removedNestedStacks(known: Set<string>): string[] {
    const removed = new Set<string>();
    for (let grew = true; grew;) {
      grew = false;
      for (const s of this.state.stacks) {
        if (!s.parentStack || known.has(s.stackName) || removed.has(s.stackName)) continue;
        if (known.has(s.parentStack) || removed.has(s.parentStack)) {
          removed.add(s.stackName);
          grew = true;
        }
      }
    }
    const names = [...removed];
    return dependencyOrder(names, new Map(names.map((n) => [n, this.stackState(n)!.dependencies.filter((d) => removed.has(d))]))).reverse();
  }

  protected needsWork(stack: AssemblyStack, plan: PlannedResource[], ctx: ResolveContext): boolean {
    const keys = new Set(plan.map((p) => p.logicalId));
    if (this.resourcesOf(stack.stackName).some((r) => !keys.has(r.logicalId))) return true;
    if (this.state.orphans.some((o) => o.stack === stack.stackName)) return true;
    for (const p of plan) {
      const prev = this.state.resources[resourceKey(stack.stackName, p.logicalId)];
      if (!prev) return true;
      // Values resolved with placeholders differ only when a dependency changes, which is itself a change.
      if (!deepEqual(prev.properties, this.resolvePropsLenient(ctx, p))) return true;
    }
    return false;
  }

  protected resolvePropsLenient(ctx: ResolveContext, p: PlannedResource): Record<string, unknown> | undefined {
    try {
      return this.resolveProps(ctx, p);
    } catch {
      return undefined;
    }
  }

  /**
   * Keeps the state (and so the summary) in a stable order whatever finished first: resources that existed before
   * the operation keep their place, new ones follow stack by stack in plan order (what a one-at-a-time run gives).
   */
  protected keepPlanOrder(plans: ReadonlyArray<readonly [string, PlannedResource[]]>, known: ReadonlySet<string>): void {
    const next: Record<string, ResourceState> = {};
    for (const [k, v] of Object.entries(this.state.resources)) if (known.has(k)) next[k] = v;
    for (const [stackName, plan] of plans) {
      for (const p of plan) {
        const k = resourceKey(stackName, p.logicalId);
        if (!known.has(k) && this.state.resources[k]) next[k] = this.state.resources[k];
      }
    }
    for (const [k, v] of Object.entries(this.state.resources)) if (!(k in next)) next[k] = v;
    this.state.resources = next;
  }

  protected collectExports(stack: AssemblyStack, ctx: ResolveContext): void {
    for (const [id, o] of Object.entries(stack.template.Outputs ?? {})) {
      if (!o.Export) continue;
      try {
        const name = resolveValue(o.Export.Name, id, ctx);
        const value = resolveValue(o.Value, id, ctx);
        if (typeof name === 'string' && typeof value === 'string') this.exports.set(name, value);
      } catch {
        // exports that reference resources the runner does not model are not available locally
      }
    }
  }
}
