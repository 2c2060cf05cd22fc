import { ConnectionProperties, ResourceTypes } from '../contract';
import { HandlerError, reasonOf } from './errors';
import { historyRequest, historyRequestComplete } from './history-request';
import { legacyNotificationPipeline } from './legacy-notification-pipeline';
import { log, logEvent } from './log';
import { notificationPipeline } from './notification-pipeline';
import { productOrderJobs } from './product-order-jobs';
import { Runtime, runtimeFor } from './runtime';
import { subscription } from './subscription';
import { CfnEvent, IsCompleteResult, LambdaContextLike, OnEventResult } from './types';

type OnEventFn = (event: CfnEvent, rt: Runtime) => Promise<OnEventResult>;

const HANDLERS: Record<string, OnEventFn> = {
  [ResourceTypes.NOTIFICATION_PIPELINE]: notificationPipeline,
  [ResourceTypes.LEGACY_NOTIFICATION_PIPELINE]: legacyNotificationPipeline,
  [ResourceTypes.SUBSCRIPTION]: subscription,
  [ResourceTypes.HISTORY_REQUEST]: historyRequest,
  [ResourceTypes.PRODUCT_ORDER_JOBS]: productOrderJobs,
};

function connectionOf(event: CfnEvent): ConnectionProperties {
  return event.ResourceProperties?.Connection as ConnectionProperties;
}

/** Runs `fn`; a failure becomes one short, scrubbed sentence (the reason CloudFormation shows). */
async function guarded<T>(what: string, event: CfnEvent, fn: () => Promise<T>): Promise<T> {
  const started = Date.now();
  try {
    const out = await fn();
    log({ msg: `${what} done`, RequestType: event.RequestType, LogicalResourceId: event.LogicalResourceId, ms: Date.now() - started, result: out });
    return out;
  } catch (e) {
    const reason = reasonOf(e);
    log({ msg: `${what} failed`, RequestType: event.RequestType, LogicalResourceId: event.LogicalResourceId, ms: Date.now() - started, reason });
    throw new Error(reason);
  }
}

/** The provider framework's onEvent: dispatches on `ResourceType`. */
export async function onEvent(event: CfnEvent, context?: LambdaContextLike): Promise<OnEventResult> {
  logEvent('onEvent', event);
  return guarded('onEvent', event, async () => {
    const fn = HANDLERS[event.ResourceType];
    if (!fn) throw new HandlerError(`unknown resource type ${event.ResourceType}; this provider serves ${Object.values(ResourceTypes).join(', ')}`);
    if (event.RequestType !== 'Create' && event.RequestType !== 'Update' && event.RequestType !== 'Delete') {
      throw new HandlerError(`unknown request type ${String(event.RequestType)}`);
    }
    const rt = runtimeFor(connectionOf(event), context);
    return fn(event, rt);
  });
}

/** The provider framework's isComplete (only history requests wait; everything else is complete at once). */
export async function isComplete(event: CfnEvent, context?: LambdaContextLike): Promise<IsCompleteResult> {
  logEvent('isComplete', event);
  return guarded('isComplete', event, async () => {
    if (event.ResourceType !== ResourceTypes.HISTORY_REQUEST) return { IsComplete: true };
    return historyRequestComplete(event, runtimeFor(connectionOf(event), context));
  });
}
