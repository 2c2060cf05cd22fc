/**
 * The handler's hooks of each resource kind (the registry in src/kinds is the one list of kinds): the onEvent and
 * isComplete handlers (kind-events.ts, what the provider's dispatch uses), the drift check, the planner and the
 * `drift --fix` repair. Each table is a `PerKind` (the compiler refuses one that misses a kind); test/kinds checks every
 * kind has every hook. Not imported by the dispatch (the Lambda bundle does not carry the planners).
 */
import { KINDS, KindType, PerKind } from '../kinds';
import { CHECKERS, Checker } from './drift-checkers';
import { eventHooks, IS_COMPLETE, IsCompleteFn, ON_EVENT, OnEventFn } from './kind-events';
import { PLANNERS } from './plan';
import { Planner } from './plan-common';
import { REPAIRERS, Repairer } from './repair';

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
  return { ...eventHooks(type)!, drift: CHECKERS[type], planner: PLANNERS[type], repair: REPAIRERS[type] };
}

/** The handler's hooks by resource type (the onEvent/isComplete ones tag the journal documents). */
export const HANDLER_HOOKS = Object.fromEntries(KINDS.map((k) => [k.type, hooksOf(k.type)])) as PerKind<HandlerHooks>;

/** The raw tables (test/kinds checks each has every kind of the registry). */
export const HANDLER_HOOK_TABLES = { onEvent: ON_EVENT, isComplete: IS_COMPLETE, drift: CHECKERS, planner: PLANNERS, repair: REPAIRERS } as const;
