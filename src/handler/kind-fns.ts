/** The signatures of a kind's event handlers (apart from kind-events.ts, which dispatches to the registry's). */
import type { Runtime } from './runtime';
import type { CfnEvent, IsCompleteResult, OnEventResult } from './types';

export type OnEventFn = (event: CfnEvent, rt: Runtime) => Promise<OnEventResult>;
export type IsCompleteFn = (event: CfnEvent, rt: Runtime) => Promise<IsCompleteResult>;
