/**
 * The custom-resource Lambda of the construct library (bundled to assets/handler/index/index.js).
 * Lambda handlers: `index.onEvent` and `index.isComplete`. See docs/handler.md.
 */
export { onEvent, isComplete } from './dispatch';
export { configureLocalRuntime } from './runtime';
export type { LocalRuntime } from './runtime';
export type { CfnEvent, OnEventResult, IsCompleteResult } from './types';
