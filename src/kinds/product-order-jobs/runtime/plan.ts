/**
 * The plan of `Custom::DpiProductOrderJobs`, from the handler's decisions (`ordersToSubmit` and the client's batch
 * plan).
 */
import { orderJobsDesiredOf } from './handler';
import { planOrderJobBatches } from '../../../client';
import {
  call, connectionEffect, paths, Planner, PlanParts, PropSpec, unknownChanges,
} from '../../../handler/plan-common';
import { ordersToSubmit } from '../../../handler/plan-decisions';
import { PlanInput, PlannedCall } from '../../../handler/plan-types';

/** The wire properties of product order jobs and the construct props that set them. */
export const PRODUCT_ORDER_JOBS_PROPS: readonly PropSpec[] = [
  { wire: 'SubscriptionId', prop: 'subscription' },
  { wire: 'OrderIds', prop: 'orderIds', asSet: true },
  { wire: 'StageId', prop: 'stageId' },
];

/** The placeholder of the subscription's primary job (read during the deploy) when the plan does not know it. */
export const PRIMARY_JOB = '{primary}';

/** The batch POSTs that submit `todo` (batches of 100, 15 minutes apart) under `primary`. */
function batchCalls(todo: string[], stageId: number, primary: string): PlannedCall[] {
  if (todo.length === 0) return [];
  const batches = planOrderJobBatches({ orderIds: todo, start: new Date(), stageId });
  return batches.map((b) => call('POST', paths.jobs(primary), `submit batch ${b.index + 1} of ${batches.length} (${b.orderIds.length} order IDs)`));
}

function jobsCreate(props: Record<string, unknown>): PlanParts {
  const d = orderJobsDesiredOf(props);
  const todo = ordersToSubmit(d.orderIds, new Set());
  const calls = batchCalls(todo, d.stageId, PRIMARY_JOB);
  return {
    action: calls.length > 0 ? 'create' : 'no-change',
    calls,
    effects: [`${todo.length} order IDs are submitted under the primary job of subscription ${d.subscriptionId} in ${calls.length} batch(es) `
      + 'of up to 100, 15 minutes apart'],
  };
}

function jobsUpdate(oldProps: Record<string, unknown>, newProps: Record<string, unknown>, input: PlanInput): PlanParts {
  const d = orderJobsDesiredOf(newProps);
  const old = orderJobsDesiredOf(oldProps);
  const extra = [...connectionEffect(oldProps, newProps), ...unknownChanges(PRODUCT_ORDER_JOBS_PROPS, oldProps, newProps)
    .map((k) => `property ${k} changed: the handler does not send it`)];
  if (d.subscriptionId !== old.subscriptionId) {
    const made = jobsCreate(newProps);
    return {
      action: 'replace',
      calls: made.calls,
      effects: [...made.effects, `the jobs of subscription ${old.subscriptionId} stay (jobs cannot be deleted)`, ...extra],
    };
  }
  // The journal keeps what was submitted per primary job and stage: another stage starts from nothing.
  const submitted = new Set(d.stageId === old.stageId ? old.orderIds : []);
  const todo = ordersToSubmit(d.orderIds, submitted);
  const dropped = old.orderIds.filter((o) => !d.orderIds.includes(o));
  const calls = batchCalls(todo, d.stageId, input.physicalId ?? PRIMARY_JOB);
  const effects = [
    ...(todo.length > 0 ? [`${todo.length} new order IDs are submitted in ${calls.length} batch(es) of up to 100`
      + `${d.stageId !== old.stageId ? ` (stage ${d.stageId}: every declared order ID is submitted again for it)` : ''}`] : []),
    ...(d.stageId === old.stageId && todo.length > 0 ? ['order IDs already submitted are not re-sent'] : []),
    ...(dropped.length > 0 ? [`${dropped.length} order IDs are no longer declared: their jobs stay (jobs cannot be deleted)`] : []),
    ...extra,
  ];
  return { action: calls.length > 0 ? 'update' : 'no-change', calls, effects };
}

export const productOrderJobsPlanner: Planner = {
  props: PRODUCT_ORDER_JOBS_PROPS,
  create: jobsCreate,
  update: jobsUpdate,
  remove: () => ({ action: 'retain', calls: [], effects: ['the submitted jobs stay (the service offers no delete)'] }),
};
