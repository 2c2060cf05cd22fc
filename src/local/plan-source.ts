/**
 * What `dpi plan --local` compares: the `dpi local-deploy` state (resolved properties, as deployed) and the app's
 * declared properties resolved the way the runner resolves them before it deploys (runner-plan.ts, reused here, not
 * copied): deployed physical IDs and attributes from the state, exports of the stacks before, nested stacks' parameters
 * from their parents. A reference to a resource whose physical ID or attributes the deploy changes (a new or replaced
 * resource, `markChanging`) resolves to a deploy-time placeholder, so what depends on it shows the change too.
 * Never calls the handler or a service, and writes nothing.
 */
import { AssemblyStack } from './assembly';
import { ResolveContext } from './intrinsics';
import { PlannedResource } from './runner-helpers';
import { RunnerPlan } from './runner-plan';
import { LocalState, resourceKey, ResourceState } from './state';

/** A declared `Custom::Dpi*` resource of a stack, in the runner's dependency order. */
export interface LocalDeclaredResource {
  readonly logicalId: string;
  readonly type: string;
  /** Construct path (`aws:cdk:path` metadata), when the template has it. */
  readonly path?: string;
  readonly deletionPolicy?: string;
}

/** The declared resources of one stack and how to resolve each (call `resolve` in the order given). */
export interface LocalStackPlan {
  readonly resources: readonly LocalDeclaredResource[];
  /** The resolved, stringified properties of a declared resource (throws a ResolveError naming what failed). */
  resolve(logicalId: string): Record<string, unknown>;
  /** Collects the stack's exports (call after every resource of the stack is resolved and planned). */
  finish(): void;
}

/** Reads the runner's state and resolves the app's declarations against it (see the module comment). */
export class LocalPlanSource extends RunnerPlan {
  private readonly changing = new Set<string>();

  constructor(stacks: readonly AssemblyStack[], state: LocalState) {
    super({ progress: () => undefined, output: () => undefined });
    this.stacks = [...stacks];
    this.state = state;
  }

  /** The deployed resource `<stack>/<logicalId>` of the state, if any. */
  deployed(stackName: string, logicalId: string): ResourceState | undefined {
    return this.state.resources[resourceKey(stackName, logicalId)];
  }

  /** Deployed resources of a stack (the state's order). */
  deployedOf(stackName: string): ResourceState[] {
    return this.resourcesOf(stackName);
  }

  /**
   * Nested stacks in the state whose parent is in the app but that the app no longer has (the deploy deletes them and
   * their resources after updating every stack), children first.
   */
  removedNested(): string[] {
    return this.removedNestedStacks(new Set(this.stacks.map((s) => s.stackName)));
  }

  /** The resource's physical ID or attributes change in this deploy: references to it resolve to placeholders. */
  markChanging(stackName: string, logicalId: string): void {
    this.changing.add(resourceKey(stackName, logicalId));
  }

  /** The declared resources of `stack` in dependency order, and their resolution. */
  stackPlan(stack: AssemblyStack): LocalStackPlan {
    const ctx = this.contextOf(stack);
    const planned = this.plan(stack, ctx);
    const byId = new Map<string, PlannedResource>(planned.map((p) => [p.logicalId, p]));
    return {
      resources: planned.map((p) => ({
        logicalId: p.logicalId,
        type: p.resource.Type,
        ...(p.path !== undefined ? { path: p.path } : {}),
        ...(p.resource.DeletionPolicy !== undefined ? { deletionPolicy: p.resource.DeletionPolicy } : {}),
      })),
      // A fresh context per resource: the resolver reads `changing` when it meets a reference.
      resolve: (logicalId) => this.resolveProps(this.contextOf(stack), byId.get(logicalId)!),
      finish: () => this.collectExports(stack, this.contextOf(stack)),
    };
  }

  private contextOf(stack: AssemblyStack): ResolveContext {
    const stackId = this.stackState(stack.stackName)?.stackId
      ?? `arn:aws:cloudformation:${stack.region}:${stack.account}:stack/${stack.stackName}/validation`;
    return this.resolveContext(stack, stackId, true);
  }

  /** The runner's context in validation mode, except that a changing resource counts as not deployed yet. */
  protected resolveContext(stack: AssemblyStack, stackId: string, placeholders: boolean): ResolveContext {
    const base = super.resolveContext(stack, stackId, placeholders);
    const deployed = base.deployed!;
    return {
      ...base,
      placeholders: true,
      deployed: (id) => (this.changing.has(resourceKey(stack.stackName, id)) ? undefined : deployed(id)),
    };
  }
}
