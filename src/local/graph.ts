/**
 * Dependency order of the resources the runner deploys.
 */
import { referencedResources } from './intrinsics';
import { dependsOnList, Template } from './template';

/**
 * For each selected resource (e.g. the `Custom::Dpi*` ones), the selected resources it
 * depends on: directly (`DependsOn`, `Ref`, `Fn::GetAtt`, `Fn::Sub`) or through
 * resources that are not selected (a custom resource that references a role which
 * depends on another custom resource depends on that custom resource).
 */
export function selectedDependencies(template: Template, selected: (logicalId: string) => boolean): Map<string, string[]> {
  const resources = template.Resources ?? {};
  const direct = new Map<string, string[]>();
  const directOf = (id: string): string[] => {
    let d = direct.get(id);
    if (!d) {
      const r = resources[id];
      const set = new Set<string>(r ? dependsOnList(r).filter((x) => x in resources) : []);
      if (r) for (const x of referencedResources(r.Properties ?? {}, template)) set.add(x);
      set.delete(id);
      d = [...set];
      direct.set(id, d);
    }
    return d;
  };
  const memo = new Map<string, Set<string>>();
  const visiting = new Set<string>();
  // Selected resources reachable from `id` without passing through another selected resource.
  const reach = (id: string): Set<string> => {
    const known = memo.get(id);
    if (known) return known;
    if (visiting.has(id)) throw new Error(`circular dependency between resources involving ${id}`);
    visiting.add(id);
    const out = new Set<string>();
    for (const dep of directOf(id)) {
      if (selected(dep)) out.add(dep);
      else for (const x of reach(dep)) out.add(x);
    }
    visiting.delete(id);
    memo.set(id, out);
    return out;
  };
  const result = new Map<string, string[]>();
  for (const id of Object.keys(resources)) {
    if (!selected(id)) continue;
    const deps = new Set<string>();
    for (const dep of directOf(id)) {
      if (selected(dep)) deps.add(dep);
      else for (const x of reach(dep)) deps.add(x);
    }
    deps.delete(id);
    result.set(id, [...deps]);
  }
  return result;
}

/**
 * Topological order (dependencies first). Ties keep the order of `ids`.
 * Dependencies that are not in `ids` are ignored. Throws on a cycle, naming it.
 */
export function dependencyOrder(ids: readonly string[], deps: ReadonlyMap<string, readonly string[]>): string[] {
  const present = new Set(ids);
  const remaining = new Map<string, Set<string>>();
  for (const id of ids) remaining.set(id, new Set((deps.get(id) ?? []).filter((d) => present.has(d) && d !== id)));
  const order: string[] = [];
  const done = new Set<string>();
  while (order.length < ids.length) {
    const next = ids.find((id) => !done.has(id) && [...remaining.get(id)!].every((d) => done.has(d)));
    if (next === undefined) {
      const stuck = ids.filter((id) => !done.has(id));
      throw new Error(`circular dependency between ${stuck.join(', ')}`);
    }
    order.push(next);
    done.add(next);
  }
  return order;
}
