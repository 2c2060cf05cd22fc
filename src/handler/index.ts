/**
 * The custom-resource Lambda of the construct library (bundled to assets/handler/index/index.js).
 * Lambda handlers: `index.onEvent`, `index.isComplete` and `index.monitor` (SubscriptionMonitor). See docs/handler.md.
 */
export { onEvent, isComplete } from './dispatch';
export { monitor, setMetricSink } from './monitor';
export type { MonitorEvent } from './monitor';
export { configureLocalRuntime } from './runtime';
export type { LocalRuntime } from './runtime';
export type { CfnEvent, OnEventResult, IsCompleteResult } from './types';
