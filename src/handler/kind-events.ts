/**
 * The event hooks (onEvent, isComplete) that the provider's dispatch runs for each resource kind, from the registry's
 * Lambda list (src/kinds/registry/lambda.ts; the planners and repairs are in its tools list, which the Lambda bundle
 * does not carry).
 *
 * Every onEvent/isComplete runs with a journal that tags what it writes with the kind (`kind` in the document), so
 * `dpi orphans` reads a record's kind instead of guessing it from the document's shape.
 */
import { isKindType, KindType, tagDoc } from '../kinds';
import { Journal } from './journal';
import type { IsCompleteFn, OnEventFn } from './kind-fns';
import { Runtime } from './runtime';
import { CfnEvent } from './types';
import { LAMBDA_HOOKS } from '../kinds/registry/lambda';

export type { IsCompleteFn, OnEventFn } from './kind-fns';

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
  const { onEvent, isComplete: complete } = LAMBDA_HOOKS[type];
  return { onEvent: tagged(type, onEvent), ...(complete ? { isComplete: tagged(type, complete) } : {}) };
}
