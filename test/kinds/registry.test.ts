/**
 * The registry of resource kinds is the ONE list every part iterates: a kind missing from a hook table (handler or
 * command line), from the contract's list of types, or with a journal state its handler does not declare fails here.
 */
import { readdirSync, readFileSync } from 'node:fs';
import { join, resolve } from 'node:path';
import { DELETE_PROPERTIES } from '../../src/cli/commands/orphans-fix';
import { ORPHAN_HOOK_TABLES } from '../../src/cli/commands/orphans-kinds';
import { ResourceTypes } from '../../src/contract';
import { HANDLER_HOOK_TABLES, HANDLER_HOOKS } from '../../src/handler/kinds';
import { PLANNED_TYPES } from '../../src/handler/plan';
import { CLOSED_STATES, KIND_TYPES, kindOf, KINDS, kindsInFixOrder } from '../../src/kinds';
import { TYPE_WIDTH } from '../../src/local/output';
import { WAITER_TYPES } from '../../src/local/runner-helpers';

const types = KINDS.map((k) => k.type).sort();

describe('the kinds registry', () => {
  test('lists every resource type of the contract, once', () => {
    expect(types).toEqual(Object.values(ResourceTypes).sort());
    expect(new Set(KIND_TYPES).size).toBe(KINDS.length);
    expect(new Set(KINDS.map((k) => k.shortName)).size).toBe(KINDS.length);
  });

  test.each(Object.entries(HANDLER_HOOK_TABLES))('the handler hook table %s has exactly the kinds of the registry', (_name, table) => {
    expect(Object.keys(table).sort()).toEqual(types);
  });

  test.each(Object.entries(ORPHAN_HOOK_TABLES))('the orphans hook table %s has exactly the kinds of the registry', (_name, table) => {
    expect(Object.keys(table).sort()).toEqual(types);
    for (const t of types) expect(typeof (table as Record<string, unknown>)[t]).toBe('function');
  });

  test.each(KINDS.map((k) => [k.type, k] as const))('%s has every hook (isComplete exactly when it is polled)', (type, k) => {
    const hooks = HANDLER_HOOKS[type];
    expect(typeof hooks.onEvent).toBe('function');
    expect(typeof hooks.drift).toBe('function');
    expect(typeof hooks.repair).toBe('function');
    expect(hooks.planner.props.length).toBeGreaterThan(0);
    expect(hooks.isComplete !== undefined).toBe(k.polled);
    // The planner's property table names only wire properties the kind reads (or the common ones).
    const wire = new Set([...Object.keys(k.fields), 'Connection', 'ServiceToken', 'JournalKey']);
    expect(hooks.planner.props.map((p) => p.wire).filter((w) => !wire.has(w))).toEqual([]);
  });

  test('the plan, the local runner and the orphans fix order iterate the registry', () => {
    expect([...PLANNED_TYPES].sort()).toEqual(types);
    expect([...WAITER_TYPES]).toEqual([ResourceTypes.HISTORY_REQUEST]);
    expect(TYPE_WIDTH).toBeGreaterThanOrEqual(Math.max(...types.map((t) => t.length)));
    // What hangs off a subscription is removed before the subscription.
    const order = kindsInFixOrder().map((k) => k.type);
    expect(order.indexOf(ResourceTypes.SUBSCRIPTION)).toBe(order.length - 1);
    expect(order.indexOf(ResourceTypes.HISTORY_REQUEST)).toBeLessThan(order.indexOf(ResourceTypes.NOTIFICATION_PIPELINE));
    expect(Object.keys(DELETE_PROPERTIES).sort()).toEqual(types);
  });

  test('kindOf knows the types of the registry only', () => {
    expect(kindOf(ResourceTypes.SUBSCRIPTION)?.shortName).toBe('Subscription');
    expect(kindOf('Custom::DpiSomethingElse')).toBeUndefined();
    expect(kindOf(undefined)).toBeUndefined();
  });

  test('every kind declares the closed states (the command line writes them on any record)', () => {
    for (const k of KINDS) expect(k.states).toEqual(expect.arrayContaining([...CLOSED_STATES]));
  });
});

/** The handler files of each kind (the journal writes in them are the kind's). */
const HANDLER_FILES: Record<string, string[]> = {
  [ResourceTypes.SUBSCRIPTION]: ['subscription.ts', 'subscription-state.ts', 'subscription-adoption.ts', 'creates.ts'],
  [ResourceTypes.NOTIFICATION_PIPELINE]: ['notification-pipeline.ts', 'notification-pipeline-state.ts'],
  [ResourceTypes.LEGACY_NOTIFICATION_PIPELINE]: ['legacy-notification-pipeline.ts'],
  [ResourceTypes.HISTORY_REQUEST]: ['history-request.ts'],
  [ResourceTypes.PRODUCT_ORDER_JOBS]: ['product-order-jobs.ts'],
};

const HANDLER_DIR = resolve(__dirname, '..', '..', 'src', 'handler');

/** The state literals a file writes (`journal.create<…>(key, 'x'` / `journal.save(rec, 'x'`). */
function writtenStates(file: string): string[] {
  const text = readFileSync(join(HANDLER_DIR, file), 'utf8');
  return [...text.matchAll(/journal\.(?:create|save)(?:<[^>]*>)?\([^,()]+,\s*'([a-z]+)'/g)].map((m) => m[1]);
}

describe('journal states', () => {
  test('the scan sees the states a handler writes', () => {
    expect(writtenStates('history-request.ts')).toEqual(expect.arrayContaining(['creating', 'active', 'deleted']));
  });

  test.each(KINDS.map((k) => [k.type, k] as const))('every state the %s handler writes is one of its states', (type, k) => {
    const files = HANDLER_FILES[type];
    expect(files).toBeDefined();
    const written = [...new Set(files.flatMap(writtenStates))];
    expect(written.length).toBeGreaterThan(0);
    expect(written.filter((s) => !(k.states as readonly string[]).includes(s))).toEqual([]);
  });

  test('every handler file of a kind is listed (a new handler file of a kind must name its kind)', () => {
    const writers = readdirSync(HANDLER_DIR).filter((f) => f.endsWith('.ts') && writtenStates(f).length > 0);
    const listed = new Set([...Object.values(HANDLER_FILES).flat(), 'common.ts', 'journal.ts']);
    expect(writers.filter((f) => !listed.has(f))).toEqual([]);
  });
});
