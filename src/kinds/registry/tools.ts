/**
 * The registry's list of each kind's tool hooks, which the command line and the local runner run through the
 * handler's code but the Lambda does not: the planner of `dpi plan` and the repair of `dpi drift --fix`, from the
 * kind's folder. Kept apart from lambda.ts so the Lambda bundle does not carry them; the compiler refuses a kind that
 * is missing.
 */
import { HistoryRequestKind, LegacyNotificationPipelineKind, NotificationPipelineKind, PerKind, ProductOrderJobsKind, SubscriptionKind } from './kinds';
import type { Planner } from '../../handler/plan-common';
import type { Repairer } from '../../handler/repair-common';
import { historyRequestPlanner } from '../history-request/runtime/plan';
import { historyRepair } from '../history-request/runtime/repair';
import { legacyPipelinePlanner } from '../legacy-notification-pipeline/runtime/plan';
import { legacyRepair } from '../legacy-notification-pipeline/runtime/repair';
import { notificationPipelinePlanner } from '../notification-pipeline/runtime/plan';
import { pipelineRepair } from '../notification-pipeline/runtime/repair';
import { productOrderJobsPlanner } from '../product-order-jobs/runtime/plan';
import { orderJobsRepair } from '../product-order-jobs/runtime/repair';
import { subscriptionPlanner } from '../subscription/runtime/plan';
import { subscriptionRepair } from '../subscription/runtime/repair';

/** The tool hooks of one kind. */
export interface ToolHooks {
  /** What `dpi plan` says a change does. */
  readonly planner: Planner;
  /** How `dpi drift --fix` re-applies the declared state (a kind that cannot be changed says why). */
  readonly repair: Repairer;
  /**
   * The journal states in which a resource holds its record and `drift --fix` may repair it.
   * @default undefined: the repair changes nothing, so any state may be reported
   */
  readonly repairableStates?: ReadonlySet<string>;
}

const ACTIVE: ReadonlySet<string> = new Set(['active']);

/** The tool hooks of each kind. */
export const TOOLS_HOOKS: PerKind<ToolHooks> = {
  [NotificationPipelineKind.type]: { planner: notificationPipelinePlanner, repair: pipelineRepair, repairableStates: ACTIVE },
  [LegacyNotificationPipelineKind.type]: { planner: legacyPipelinePlanner, repair: legacyRepair, repairableStates: ACTIVE },
  [SubscriptionKind.type]: { planner: subscriptionPlanner, repair: subscriptionRepair, repairableStates: ACTIVE },
  [HistoryRequestKind.type]: { planner: historyRequestPlanner, repair: historyRepair },
  [ProductOrderJobsKind.type]: { planner: productOrderJobsPlanner, repair: orderJobsRepair },
};
