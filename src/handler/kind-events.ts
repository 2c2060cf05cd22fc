/**
 * The event hooks of each resource kind (onEvent, isComplete) that the provider's dispatch uses, kept apart from the
 * other hooks (drift, plan, repair: src/handler/kinds.ts) so the Lambda bundle does not carry the planners.
 *
 * Every onEvent/isComplete runs with a journal that tags what it writes with the kind (`kind` in the document), so
 * `dpi orphans` reads a record's kind instead of guessing it from the document's shape.
 */
import { ResourceTypes } from '../contract';
import { isKindType, KindType, PerKind, tagDoc } from '../kinds';
import { historyRequest, historyRequestComplete } from './history-request';
import { Journal } from './journal';
import { legacyNotificationPipeline } from './legacy-notification-pipeline';
import { notificationPipeline } from './notification-pipeline';
import { productOrderJobs } from './product-order-jobs';
import { Runtime } from './runtime';
import { subscription } from './subscription';
import { CfnEvent, IsCompleteResult, OnEventResult } from './types';

export type OnEventFn = (event: CfnEvent, rt: Runtime) => Promise<OnEventResult>;
export type IsCompleteFn = (event: CfnEvent, rt: Runtime) => Promise<IsCompleteResult>;

/** A journal that writes every document with the kind's tag (reads are unchanged: old documents have none). */
export function taggingJournal(journal: Journal, type: KindType): Journal {
  return {
    ...journal,
    create: (key, state, doc, physicalId) => journal.create(key, state, tagDoc(doc, type), physicalId),
    save: (rec, state, doc, physicalId) => journal.save(rec, state, tagDoc(doc, type), physicalId),
  };
}

/** The runtime of one event of kind `type` (its journal tags the documents). */
export function kindRuntime(rt: Runtime, type: KindType): Runtime {
  return { ...rt, journal: taggingJournal(rt.journal, type) };
}

/** onEvent of each kind (one per kind of the registry). */
export const ON_EVENT: PerKind<OnEventFn> = {
  [ResourceTypes.NOTIFICATION_PIPELINE]: notificationPipeline,
  [ResourceTypes.LEGACY_NOTIFICATION_PIPELINE]: legacyNotificationPipeline,
  [ResourceTypes.SUBSCRIPTION]: subscription,
  [ResourceTypes.HISTORY_REQUEST]: historyRequest,
  [ResourceTypes.PRODUCT_ORDER_JOBS]: productOrderJobs,
};

/** isComplete of the kinds the provider polls (`polled` in the registry); undefined: complete at once. */
export const IS_COMPLETE: PerKind<IsCompleteFn | undefined> = {
  [ResourceTypes.NOTIFICATION_PIPELINE]: undefined,
  [ResourceTypes.LEGACY_NOTIFICATION_PIPELINE]: undefined,
  [ResourceTypes.SUBSCRIPTION]: undefined,
  [ResourceTypes.HISTORY_REQUEST]: historyRequestComplete,
  [ResourceTypes.PRODUCT_ORDER_JOBS]: undefined,
};

/** The event hooks of one kind, with the tagging journal. */
export interface EventHooks {
  readonly onEvent: OnEventFn;
  readonly isComplete?: IsCompleteFn;
}

function tagged<R>(type: KindType, fn: (event: CfnEvent, rt: Runtime) => Promise<R>): (event: CfnEvent, rt: Runtime) => Promise<R> {
  return (event, rt) => fn(event, kindRuntime(rt, type));
}

/** The event hooks of a resource type of the registry, undefined for any other type. */
export function eventHooks(type: string): EventHooks | undefined {
  if (!isKindType(type)) return undefined;
  const complete = IS_COMPLETE[type];
  return { onEvent: tagged(type, ON_EVENT[type]), ...(complete ? { isComplete: tagged(type, complete) } : {}) };
}
