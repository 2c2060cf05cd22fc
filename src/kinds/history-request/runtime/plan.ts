/**
 * The plan of `Custom::DpiHistoryRequest`, from the handler's decisions (`historyRequestsAnew`, `historyCancellable`,
 * `removalPolicyOf`).
 */
import { historyDesiredOf, HistoryDesired, requestKey } from './handler';
import {
  call, connectionEffect, keptByCloudFormation, paths, Planner, PlanParts, PropSpec, removalOf, unknownChanges, unlessAdopted,
} from '../../../handler/plan-common';
import { historyRequestsAnew } from '../../../handler/plan-decisions';
import { PlanInput } from '../../../handler/plan-types';

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
