/**
 * The plans of `Custom::DpiHistoryRequest` and `Custom::DpiProductOrderJobs`, from the handler's decisions
 * (`historyRequestsAnew`, `historyCancellable`, `removalPolicyOf`, `ordersToSubmit` and the client's batch plan).
 */
import { planOrderJobBatches } from '../client';
import { historyDesiredOf, HistoryDesired, requestKey } from './history-request';
import {
  call, connectionEffect, keptByCloudFormation, paths, Planner, PlanParts, PropSpec, removalOf, unknownChanges, unlessAdopted,
} from './plan-common';
import { historyRequestsAnew, ordersToSubmit } from './plan-decisions';
import { PlanInput, PlannedCall } from './plan-types';
import { orderJobsDesiredOf } from './product-order-jobs';

/** The wire properties of a history request and the construct props that set them. */
export const HISTORY_REQUEST_PROPS: readonly PropSpec[] = [
  { wire: 'SubscriptionId', prop: 'subscription' },
  { wire: 'StartDate', prop: 'startDate' },
  { wire: 'EndDate', prop: 'endDate' },
  { wire: 'Dates', prop: 'dates' },
  { wire: 'StageId', prop: 'stageId' },
  { wire: 'ProductId', prop: 'productId' },
  { wire: 'StartTime', prop: 'startTime' },
  { wire: 'WaitForCompletion', prop: 'waitForCompletion' },
  { wire: 'TimeoutSeconds', prop: 'timeout' },
  { wire: 'AdoptId', prop: 'existingHistoryTransactionId' },
];

function requested(d: HistoryDesired): string {
  const r = d.request;
  const when = r.dates ? `dates ${r.dates.join(', ')}` : `${r.start_date ?? '?'} to ${r.end_date ?? '?'}`;
  return `a history request for subscription ${d.subscriptionId} (${when}${r.stage_id !== undefined ? `, stage ${r.stage_id}` : ''})`;
}

function historyCreate(props: Record<string, unknown>): PlanParts {
  const d = historyDesiredOf(props);
  if (d.adoptId !== undefined) {
    return { action: 'no-change', calls: [], effects: [`existing history request ${d.adoptId} is adopted: nothing is sent`] };
  }
  return {
    action: 'create',
    calls: [call('POST', paths.historyCreate(d.subscriptionId), 'request the history')],
    effects: [`${requested(d)} is made${d.waitForCompletion ? '; the deploy waits for it to complete' : ''}`],
  };
}

function historyRemoval(oldProps: Record<string, unknown>, id: string, input: PlanInput): PlanParts {
  const kept = keptByCloudFormation(input);
  if (kept) return kept;
  // The handler counts a request as adopted when its journal record says so or the deployed properties name an adoption.
  if (removalOf(oldProps, input, typeof oldProps.AdoptId === 'string') === 'retain') {
    return { action: 'retain', calls: [], effects: [`history request ${id} is kept in the service (released)`] };
  }
  return {
    action: 'delete',
    calls: [call('PATCH', paths.history(id), `cancel history request ${id} if it is still pending or processing`)],
    effects: [`history request ${id} is cancelled if still pending or processing (a finished one stays: nothing is sent then)${unlessAdopted(input)}`],
  };
}

function historyUpdate(oldProps: Record<string, unknown>, newProps: Record<string, unknown>, input: PlanInput): PlanParts {
  const d = historyDesiredOf(newProps);
  const old = historyDesiredOf(oldProps);
  const id = input.physicalId ?? '{deployed}';
  const extra = [...connectionEffect(oldProps, newProps), ...unknownChanges(HISTORY_REQUEST_PROPS, oldProps, newProps)
    .map((k) => `property ${k} changed: the handler does not send it`)];
  if (!historyRequestsAnew(requestKey(old), requestKey(d), id, d.adoptId)) {
    const noCall = old.waitForCompletion !== d.waitForCompletion || old.timeoutSeconds !== d.timeoutSeconds
      ? ['waitForCompletion / timeout apply to the next request: nothing is sent'] : [];
    return { action: 'no-change', calls: [], effects: [...noCall, ...extra] };
  }
  const made = historyCreate(newProps);
  const ended = historyRemoval(oldProps, id, input);
  return {
    action: 'replace',
    calls: [...made.calls, ...ended.calls],
    effects: [`a history request cannot be changed: ${made.effects[0]}`, ...ended.effects, ...extra],
  };
}

export const historyRequestPlanner: Planner = {
  props: HISTORY_REQUEST_PROPS,
  create: historyCreate,
  update: historyUpdate,
  remove: (oldProps, input) => historyRemoval(oldProps, input.physicalId ?? '{deployed}', input),
};

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
