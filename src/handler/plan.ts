/**
 * `planResource`: what one deploy does to one `Custom::Dpi*` resource, in the service's terms, from the handler's own
 * decision functions (plan-decisions.ts, which the event handlers call too), so the plan and the deploy cannot
 * disagree. The plan compares the deployed and the declared properties; it assumes the record is live and as last
 * deployed (a record that is gone or invalid is made anew by the deploy, which no template comparison can tell).
 */
import { isKindType, KINDS } from '../kinds';
import { asDelivered, change, changedProps, Planner, PlanParts } from './plan-common';
import { PlanAction, PlanEntry, PlanInput, PropertyChange } from './plan-types';
import { TOOLS_HOOKS } from '../kinds/registry/tools';

export * from './plan-types';

/** The resource types `planResource` knows (every kind of the registry). */
export const PLANNED_TYPES: readonly string[] = KINDS.map((k) => k.type);

/**
 * The planned change of one resource: `create` when `oldProps` is undefined (new in the stack), `delete` or `retain`
 * when `newProps` is undefined (it leaves the stack), otherwise what the handler's Update decides. Properties are as
 * the template has them (numbers and booleans are taken as the strings CloudFormation delivers; an unresolved
 * intrinsic stands for itself). A declaration the handler would refuse (invalid properties, a refused change) gives
 * `failure` and no calls, never an exception. `changes` name the construct props; each says what that change alone
 * would make of the resource.
 */
export function planResource(given: PlanInput): PlanEntry {
  // Without physical IDs (`--from`), an adopted record's ID is the one its deployed declaration adopted.
  const adoptedId = given.oldProps?.AdoptId;
  const input: PlanInput = given.physicalId === undefined && typeof adoptedId === 'string' && adoptedId !== ''
    ? { ...given, physicalId: adoptedId } : given;
  const head = {
    type: input.type,
    stack: input.stack,
    logicalId: input.logicalId,
    ...(input.constructPath !== undefined ? { constructPath: input.constructPath } : {}),
    ...(input.physicalId !== undefined ? { physicalId: input.physicalId } : {}),
  };
  const oldProps = input.oldProps === undefined ? undefined : asDelivered(input.oldProps) as Record<string, unknown>;
  const newProps = input.newProps === undefined ? undefined : asDelivered(input.newProps) as Record<string, unknown>;
  const planner = isKindType(input.type) ? TOOLS_HOOKS[input.type].planner : undefined;
  let parts: PlanParts;
  let changes: PropertyChange[] = [];
  if (!planner) {
    parts = { action: 'no-change', calls: [], effects: [`${input.type} is not a resource type of this provider: not planned`] };
  } else if (oldProps === undefined && newProps === undefined) {
    parts = { action: 'no-change', calls: [], effects: [] };
  } else {
    parts = guarded(oldProps === undefined ? 'create' : newProps === undefined ? 'delete' : 'update', () => {
      if (oldProps === undefined) return planner.create(newProps!, input);
      if (newProps === undefined) return planner.remove(oldProps, input);
      return planner.update(oldProps, newProps, input);
    });
    if (oldProps !== undefined && newProps !== undefined) changes = changesOf(planner, oldProps, newProps, input);
  }
  const possible = planner && oldProps !== undefined && newProps !== undefined && parts.failure === undefined
    ? worstCase(planner, oldProps, newProps, input, parts.action) : undefined;
  if (possible) parts = { ...parts, effects: [...parts.effects, ...possible.effects] };
  return {
    ...head,
    action: parts.action,
    changes,
    calls: parts.failure !== undefined ? [] : parts.calls,
    effects: parts.failure !== undefined ? [...parts.effects, `the deploy fails: ${parts.failure}`] : parts.effects,
    ...(parts.failure !== undefined ? { failure: parts.failure } : {}),
    ...(possible ? { possibleAction: possible.action } : {}),
  };
}

/** How bad an Update's action is, for the worst case of a deploy-time value. */
const SEVERITY: Partial<Record<PlanAction, number>> = { 'no-change': 0, 'update': 1, 'rebuild': 2, 'replace': 3 };

/** A value as it would be if the deploy-time parts of it changed (every string differs). */
function changedValue(v: unknown): unknown {
  if (typeof v === 'string') return `${v}{changed at deploy time}`;
  if (Array.isArray(v)) return v.map(changedValue);
  if (v !== null && typeof v === 'object') {
    return Object.fromEntries(Object.entries(v).map(([k, x]) => [k, changedValue(x)]));
  }
  return v;
}

/**
 * The worst case of the props whose value is known only at deploy time (`input.deployTime`): for each, the handler's
 * decision if that value changes (the rest as declared); the worst action when it is worse than `action`, with one
 * sentence per prop that would make it worse.
 */
function worstCase(planner: Planner, oldProps: Record<string, unknown>, newProps: Record<string, unknown>, input: PlanInput,
  action: PlanAction): { action: PlanAction; effects: string[] } | undefined {
  const base = SEVERITY[action];
  if (base === undefined || input.deployTime === undefined) return undefined;
  let worst: PlanAction | undefined;
  const effects: string[] = [];
  for (const [wire, source] of Object.entries(input.deployTime)) {
    if (newProps[wire] === undefined) continue;
    const simulated = { ...newProps, [wire]: changedValue(newProps[wire]) };
    const sim = guarded('update', () => planner.update(oldProps, simulated, input));
    // A stand-in the handler would refuse (e.g. not a removal policy) says nothing about a real value.
    if (sim.failure !== undefined) continue;
    const a = sim.action;
    const rank = SEVERITY[a];
    if (rank === undefined || rank <= base) continue;
    const prop = planner.props.find((p) => p.wire === wire)?.prop ?? wire;
    effects.push(`${prop} comes from ${source}: if its value changes, this is a ${a === 'update' ? 'update in place' : a}`);
    if (worst === undefined || rank > SEVERITY[worst]!) worst = a;
  }
  return worst !== undefined ? { action: worst, effects } : undefined;
}

/** Runs a planner; a handler error (the handler would refuse the properties) becomes `failure`. */
function guarded(action: PlanAction, fn: () => PlanParts): PlanParts {
  try {
    return fn();
  } catch (e) {
    return { action, calls: [], effects: [], failure: e instanceof Error ? e.message : String(e) };
  }
}

/** The changed props, each with what that change alone makes of the resource (the handler's decision on it alone). */
function changesOf(planner: Planner, oldProps: Record<string, unknown>, newProps: Record<string, unknown>, input: PlanInput): PropertyChange[] {
  return changedProps(planner.props, oldProps, newProps).map(([spec, from, to]) => {
    const alone: Record<string, unknown> = { ...oldProps };
    if (to === undefined) delete alone[spec.wire];
    else alone[spec.wire] = to;
    const a = guarded('update', () => planner.update(oldProps, alone, input)).action;
    return change(spec, from, to, a === 'replace' || a === 'rebuild' ? a : 'update');
  });
}
