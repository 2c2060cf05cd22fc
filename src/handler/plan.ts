/**
 * `planResource`: what one deploy does to one `Custom::Dpi*` resource, in the service's terms, from the handler's own
 * decision functions (plan-decisions.ts, which the event handlers call too), so the plan and the deploy cannot
 * disagree. The plan compares the deployed and the declared properties; it assumes the record is live and as last
 * deployed (a record that is gone or invalid is made anew by the deploy, which no template comparison can tell).
 */
import { ResourceTypes } from '../contract';
import { asDelivered, change, changedProps, Planner, PlanParts } from './plan-common';
import { historyRequestPlanner, productOrderJobsPlanner } from './plan-jobs';
import { legacyPipelinePlanner } from './plan-legacy-pipeline';
import { notificationPipelinePlanner } from './plan-notification-pipeline';
import { subscriptionPlanner } from './plan-subscription';
import { PlanAction, PlanEntry, PlanInput, PropertyChange } from './plan-types';

export * from './plan-types';

const PLANNERS: Record<string, Planner> = {
  [ResourceTypes.SUBSCRIPTION]: subscriptionPlanner,
  [ResourceTypes.NOTIFICATION_PIPELINE]: notificationPipelinePlanner,
  [ResourceTypes.LEGACY_NOTIFICATION_PIPELINE]: legacyPipelinePlanner,
  [ResourceTypes.HISTORY_REQUEST]: historyRequestPlanner,
  [ResourceTypes.PRODUCT_ORDER_JOBS]: productOrderJobsPlanner,
};

/** The resource types `planResource` knows. */
export const PLANNED_TYPES: readonly string[] = Object.keys(PLANNERS);

/**
 * The planned change of one resource: `create` when `oldProps` is undefined (new in the stack), `delete` or `retain`
 * when `newProps` is undefined (it leaves the stack), otherwise what the handler's Update decides. Properties are as
 * the template has them (numbers and booleans are taken as the strings CloudFormation delivers; an unresolved
 * intrinsic stands for itself). A declaration the handler would refuse (invalid properties, a refused change) gives
 * `failure` and no calls, never an exception. `changes` name the construct props; each says what that change alone
 * would make of the resource.
 */
export function planResource(input: PlanInput): PlanEntry {
  const head = {
    type: input.type,
    stack: input.stack,
    logicalId: input.logicalId,
    ...(input.constructPath !== undefined ? { constructPath: input.constructPath } : {}),
    ...(input.physicalId !== undefined ? { physicalId: input.physicalId } : {}),
  };
  const oldProps = input.oldProps === undefined ? undefined : asDelivered(input.oldProps) as Record<string, unknown>;
  const newProps = input.newProps === undefined ? undefined : asDelivered(input.newProps) as Record<string, unknown>;
  const planner = PLANNERS[input.type];
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
  return {
    ...head,
    action: parts.action,
    changes,
    calls: parts.failure !== undefined ? [] : parts.calls,
    effects: parts.failure !== undefined ? [...parts.effects, `the deploy fails: ${parts.failure}`] : parts.effects,
    ...(parts.failure !== undefined ? { failure: parts.failure } : {}),
  };
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
