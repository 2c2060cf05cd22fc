/** Shared by the continuation tests: a provider that may continue in isComplete, its deadlines and its polls. */
import { delay } from './delivery-helpers';
import { HandlerHarness } from './helpers';
import { CONTINUATION_ENV } from '../../src/contract';
import { CfnEvent, configureLocalRuntime, OnEventResult } from '../../src/handler';
import { DEADLINE_MARGIN_MS } from '../../src/handler/runtime';

/** A Lambda context with `ms` left after the handler's deadline margin. */
export const left = (ms: number) => ({ getRemainingTimeInMillis: () => DEADLINE_MARGIN_MS + ms });

/** The event the waiter gives isComplete after `answer`: its physical ID and Data. */
export const polled = (event: CfnEvent, answer: OnEventResult): CfnEvent => ({
  ...event, PhysicalResourceId: answer.PhysicalResourceId, Data: answer.Data,
});

/**
 * Before each test, the harness's provider may continue (`DPI_CONTINUATION`) and its sleeps take real time; after it,
 * the harness's own runtime again.
 */
export function useContinuingProvider(harness: () => HandlerHarness): void {
  beforeEach(() => {
    const h = harness();
    configureLocalRuntime({ ...h.runtime(), environment: () => ({ ...h.environment(), [CONTINUATION_ENV]: '1' }) });
    h.onSleep = (ms) => delay(ms);
  });
  afterEach(() => {
    const h = harness();
    h.onSleep = undefined;
    h.configure();
  });
}
