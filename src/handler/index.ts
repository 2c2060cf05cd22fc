/**
 * The custom-resource Lambda of the construct library (bundled to assets/handler/index/index.js).
 * Lambda handlers: `index.onEvent`, `index.isComplete`, `index.monitor` (SubscriptionMonitor) and `index.drift` (DriftMonitor).
 * See docs/handler.md.
 */
export { onEvent, isComplete } from './dispatch';
export { monitor, setMetricSink } from './monitor';
export type { MonitorEvent } from './monitor';
export { drift, setStackResourceLister, setStackTemplateReader } from './drift-check';
export type { DriftEvent, DriftRunResult } from './drift-check';
export { configureLocalRuntime } from './runtime';
export type { LocalRuntime } from './runtime';
export type { CfnEvent, OnEventResult, IsCompleteResult } from './types';
