/**
 * Every handler hook of each resource kind, from the registry's Lambda and tools lists (src/kinds/registry/): the
 * onEvent and isComplete handlers (with the journal that tags what they write), the drift check, the planner and the
 * `drift --fix` repair. Not imported by the dispatch (the Lambda bundle does not carry the planners).
 */
import { KINDS, KindType, PerKind } from '../kinds';
import { Checker } from './drift-checkers';
import { eventHooks, IsCompleteFn, OnEventFn } from './kind-events';
import { Planner } from './plan-common';
import { Repairer } from './repair-common';
import { LAMBDA_HOOKS } from '../kinds/registry/lambda';
import { TOOLS_HOOKS } from '../kinds/registry/tools';

export { kindRuntime, taggingJournal } from './kind-events';
export type { IsCompleteFn, OnEventFn } from './kind-events';

/** Every hook of one kind. */
export interface HandlerHooks {
  readonly onEvent: OnEventFn;
  readonly isComplete?: IsCompleteFn;
  readonly drift: Checker;
  readonly planner: Planner;
  readonly repair: Repairer;
}

function hooksOf(type: KindType): HandlerHooks {
  return { ...eventHooks(type)!, drift: LAMBDA_HOOKS[type].drift, planner: TOOLS_HOOKS[type].planner, repair: TOOLS_HOOKS[type].repair };
}

/** The handler's hooks by resource type (the onEvent/isComplete ones tag the journal documents). */
export const HANDLER_HOOKS = Object.fromEntries(KINDS.map((k) => [k.type, hooksOf(k.type)])) as PerKind<HandlerHooks>;

/** The registry's handler lists (test/kinds checks each has every kind of the registry). */
export const HANDLER_HOOK_TABLES = { lambda: LAMBDA_HOOKS, tools: TOOLS_HOOKS } as const;
