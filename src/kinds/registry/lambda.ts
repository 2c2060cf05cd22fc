/**
 * The registry's list of each kind's Lambda hooks: onEvent, isComplete (the kinds the provider polls) and the drift
 * check, from the kind's folder. The provider's function (src/handler) iterates this list; the compiler refuses a
 * kind that is missing. The plan and repair hooks, which the Lambda does not run, are in tools.ts.
 */
import { HistoryRequestKind, LegacyNotificationPipelineKind, NotificationPipelineKind, PerKind, ProductOrderJobsKind, SubscriptionKind } from './kinds';
import type { Checker } from '../../handler/drift-checkers';
import type { IsCompleteFn, OnEventFn } from '../../handler/kind-fns';
import { historyDrift } from '../history-request/runtime/drift';
import { historyRequest, historyRequestComplete } from '../history-request/runtime/handler';
import { legacyDrift } from '../legacy-notification-pipeline/runtime/drift';
import { legacyNotificationPipeline } from '../legacy-notification-pipeline/runtime/handler';
import { pipelineDrift } from '../notification-pipeline/runtime/drift';
import { notificationPipeline } from '../notification-pipeline/runtime/handler';
import { orderJobsDrift } from '../product-order-jobs/runtime/drift';
import { productOrderJobs } from '../product-order-jobs/runtime/handler';
import { subscriptionDrift } from '../subscription/runtime/drift';
import { subscription } from '../subscription/runtime/handler';

/** The Lambda hooks of one kind. */
export interface LambdaHooks {
  readonly onEvent: OnEventFn;
  /** Only for the kinds the provider polls (`polled` in the definition). */
  readonly isComplete?: IsCompleteFn;
  readonly drift: Checker;
}

/** The Lambda hooks of each kind. */
export const LAMBDA_HOOKS: PerKind<LambdaHooks> = {
  [NotificationPipelineKind.type]: { onEvent: notificationPipeline, drift: pipelineDrift as Checker },
  [LegacyNotificationPipelineKind.type]: { onEvent: legacyNotificationPipeline, drift: legacyDrift as Checker },
  [SubscriptionKind.type]: { onEvent: subscription, drift: subscriptionDrift as Checker },
  [HistoryRequestKind.type]: { onEvent: historyRequest, isComplete: historyRequestComplete, drift: historyDrift as Checker },
  [ProductOrderJobsKind.type]: { onEvent: productOrderJobs, drift: orderJobsDrift as Checker },
};
