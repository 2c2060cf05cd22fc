/**
 * The stacks of one operation (a top-level stack and its nested stacks) as CloudFormation orders them: which stack
 * waits for which, which parent resources a nested stack waits for, which parent resources wait for a nested stack's
 * tree, and the circles CloudFormation refuses.
 */
import { AssemblyStack, NESTED_STACK_TYPE } from './assembly';
import { Cancellation } from './cancellation';
import { dependencyOrder, selectedDependencies } from './graph';
import { PlannedResource } from './runner-helpers';
import { StackProgress } from './stack-gate';

/**
 * The parent's resources a nested stack waits for: those of the parent's plan its `AWS::CloudFormation::Stack`
 * resource depends on, directly or through resources the runner does not deploy.
 */
export function parentNeeds(parent: AssemblyStack, nestedLogicalId: string, plans: ReadonlyMap<string, PlannedResource[]>): string[] {
  const planned = new Set((plans.get(parent.artifactId) ?? []).map((p) => p.logicalId));
  const deps = selectedDependencies(parent.template, (id) => planned.has(id) || id === nestedLogicalId).get(nestedLogicalId) ?? [];
  return deps.filter((id) => planned.has(id));
}

/** What the stacks of one operation share. */
export interface TreeOperation {
  readonly tree: readonly AssemblyStack[];
  readonly plans: ReadonlyMap<string, PlannedResource[]>;
  readonly progress: ReadonlyMap<string, StackProgress>;
  readonly cancellation: Cancellation;
}

/** Refuses a stack whose planned resources and nested stacks depend on each other in a circle, naming them. */
export function checkNoCircle(stack: AssemblyStack, plan: readonly PlannedResource[], tree: readonly AssemblyStack[]): void {
  const nested = tree.filter((s) => s.nested?.parent.stackName === stack.stackName).map((s) => s.nested!.logicalId);
  if (nested.length === 0) return;
  const ids = [...plan.map((p) => p.logicalId), ...nested];
  const members = new Set(ids);
  try {
    dependencyOrder(ids, selectedDependencies(stack.template, (id) => members.has(id)));
  } catch (e) {
    throw new Error(`${stack.stackName}: ${(e as Error).message} (CloudFormation refuses such a template)`);
  }
}

/** True when `s` is a nested stack of `ancestor`, at any depth. */
export function isBelow(s: AssemblyStack, ancestor: AssemblyStack): boolean {
  for (let o = s.nested; o; o = o.parent.nested) if (o.parent.stackName === ancestor.stackName) return true;
  return false;
}

/**
 * For each resource of `stack`'s plan that depends on one of its nested stacks (reads its outputs, or `DependsOn`
 * it), the stacks of those nested stacks' trees: it starts only when they all ended.
 */
export function nestedStacksRead(stack: AssemblyStack, plan: readonly PlannedResource[], tree: readonly AssemblyStack[]): Map<string, string[]> {
  const children = new Map(tree.filter((s) => s.nested?.parent.stackName === stack.stackName).map((s) => [s.nested!.logicalId, s]));
  const out = new Map<string, string[]>();
  if (children.size === 0) return out;
  const planned = new Set(plan.map((p) => p.logicalId));
  const deps = selectedDependencies(stack.template, (id) => planned.has(id) || children.has(id));
  for (const id of planned) {
    const read = (deps.get(id) ?? []).filter((d) => children.has(d)).map((d) => children.get(d)!);
    if (read.length > 0) out.set(id, tree.filter((s) => read.some((c) => s === c || isBelow(s, c))).map((s) => s.stackName));
  }
  return out;
}

/** How deep a stack is in its tree (0: a top-level stack). */
export function depthOf(s: AssemblyStack): number {
  let d = 0;
  for (let r = s; r.nested; r = r.nested.parent) d++;
  return d;
}

/** The top-level stack of a nested stack's tree (a top-level stack is its own). */
export function rootOf(s: AssemblyStack): AssemblyStack {
  let r = s;
  while (r.nested) r = r.nested.parent;
  return r;
}

/**
 * The stacks of its tree a stack waits for: its other dependencies, and for a nested stack the nested stacks its
 * `AWS::CloudFormation::Stack` resource depends on in the parent's template.
 */
export function stackDependencies(s: AssemblyStack, byName: ReadonlyMap<string, AssemblyStack>): string[] {
  const deps = new Set(s.dependencyStackNames.filter((n) => byName.has(n) && n !== s.nested?.parent.stackName));
  const origin = s.nested;
  if (origin) {
    // Not the parent as a whole: its resources the nested stack needs (parentNeeds, at the parent's gate).
    const resources = origin.parent.template.Resources ?? {};
    const nestedIds = selectedDependencies(origin.parent.template, (id) => resources[id]?.Type === NESTED_STACK_TYPE).get(origin.logicalId) ?? [];
    // A sibling counts as done when its whole tree is: its outputs may come from its own nested stacks.
    for (const sibling of byName.values()) {
      if (sibling.nested?.parent.stackName !== origin.parent.stackName || !nestedIds.includes(sibling.nested.logicalId)) continue;
      for (const t of byName.values()) if (t === sibling || isBelow(t, sibling)) deps.add(t.stackName);
    }
  }
  return [...deps];
}
