/**
 * The registry of resource kinds is the ONE list every part iterates, and a kind's code is its folder
 * (src/kinds/<kind>/): a kind missing from one of the registry's lists (src/kinds/registry/), a kind folder missing a
 * part, a per-kind table outside the registry, or a journal state its handler does not declare fails here.
 */
import { existsSync, readdirSync, readFileSync, statSync } from 'node:fs';
import { join, relative, resolve } from 'node:path';
import { HANDLER_HOOK_TABLES, HANDLER_HOOKS } from '../../src/handler/kinds';
import { PLANNED_TYPES } from '../../src/handler/plan';
import * as api from '../../src/index';
import { CLOSED_STATES, KIND_TYPES, kindOf, KINDS, kindsInFixOrder, ResourceTypes } from '../../src/kinds';
import { CLI_HOOKS } from '../../src/kinds/registry/cli';
import { TYPE_WIDTH } from '../../src/local/output';
import { WAITER_TYPES } from '../../src/local/runner-helpers';

const SRC = resolve(__dirname, '..', '..', 'src');
const KINDS_DIR = join(SRC, 'kinds');

/** A kind's folder: its type's name in kebab case (`Custom::DpiHistoryRequest` -> `history-request`). */
function folderOf(type: string): string {
  return type.replace(/^Custom::Dpi/, '').replace(/([a-z0-9])([A-Z])/g, '$1-$2').toLowerCase();
}

function tsFiles(dir: string): string[] {
  return readdirSync(dir).flatMap((name) => {
    const p = join(dir, name);
    return statSync(p).isDirectory() ? tsFiles(p) : p.endsWith('.ts') ? [p] : [];
  });
}

const types = KINDS.map((k) => k.type).sort();

describe('the kinds registry', () => {
  test('lists every resource type of the contract, once', () => {
    // Each constant is its type's name in upper snake case (ResourceTypes is built from the kinds' definitions).
    expect(Object.entries(ResourceTypes).map(([name, type]) => [name, type.replace(/^Custom::Dpi/, '').replace(/([a-z0-9])([A-Z])/g, '$1_$2').toUpperCase()]))
      .toEqual(Object.entries(ResourceTypes).map(([name]) => [name, name]));
    expect(Object.values(ResourceTypes).sort()).toEqual(types);
    expect(types.every((t) => t.startsWith('Custom::Dpi'))).toBe(true);
    expect(new Set(KIND_TYPES).size).toBe(KINDS.length);
    expect(new Set(KINDS.map((k) => k.shortName)).size).toBe(KINDS.length);
  });

  test.each(Object.entries(HANDLER_HOOK_TABLES))('the handler hook table %s has exactly the kinds of the registry', (_name, table) => {
    expect(Object.keys(table).sort()).toEqual(types);
  });

  test('the command-line list has exactly the kinds of the registry, each with every hook', () => {
    expect(Object.keys(CLI_HOOKS).sort()).toEqual(types);
    for (const k of KINDS) {
      expect(typeof CLI_HOOKS[k.type].holdings).toBe('function');
      expect(typeof CLI_HOOKS[k.type].deleteProperties).toBe('function');
    }
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
    expect([...WAITER_TYPES].sort()).toEqual(KINDS.filter((k) => k.polled).map((k) => k.type).sort());
    expect(WAITER_TYPES.has(ResourceTypes.HISTORY_REQUEST)).toBe(true);
    expect(TYPE_WIDTH).toBeGreaterThanOrEqual(Math.max(...types.map((t) => t.length)));
    // What hangs off a subscription is removed before the subscription.
    const order = kindsInFixOrder().map((k) => k.type);
    expect(order.indexOf(ResourceTypes.SUBSCRIPTION)).toBe(order.length - 1);
    expect(order.indexOf(ResourceTypes.HISTORY_REQUEST)).toBeLessThan(order.indexOf(ResourceTypes.NOTIFICATION_PIPELINE));
  });

  test('kindOf knows the types of the registry only', () => {
    expect(kindOf(ResourceTypes.SUBSCRIPTION)?.shortName).toBe('Subscription');
    expect(kindOf('Custom::DpiSomethingElse')).toBeUndefined();
    expect(kindOf(undefined)).toBeUndefined();
  });

  test('every unconfirmed state has the check dpi journal resolve makes, and no state has two', () => {
    const checks = new Map<string, string[]>([['recording', ['the shared create']]]);
    for (const k of KINDS) {
      for (const s of Object.keys(CLI_HOOKS[k.type].attemptChecks ?? {})) {
        checks.set(s, [...(checks.get(s) ?? []), k.shortName]);
        // A kind checks only states of its own.
        expect(k.unconfirmedStates as readonly string[]).toContain(s);
      }
    }
    for (const k of KINDS) for (const s of k.unconfirmedStates) expect([k.shortName, s, checks.has(s)]).toEqual([k.shortName, s, true]);
    expect([...checks].filter(([, by]) => by.length > 1)).toEqual([]);
    // The states dpi journal resolve and dpi orphans --fix know are the kinds' (a new kind's states join them).
    expect(new Set(KINDS.flatMap((k) => k.unconfirmedStates))).toEqual(new Set(['posting', 'creating', 'recording']));
    expect(new Set(KINDS.flatMap((k) => k.undecidedStates))).toEqual(new Set(['recording', 'posting', 'adopting']));
  });

  test('every kind declares the closed states (the command line writes them on any record)', () => {
    for (const k of KINDS) expect(k.states).toEqual(expect.arrayContaining([...CLOSED_STATES]));
  });
});

/** Handler files outside the kind folders whose journal writes are a kind's (shared by the creates of several kinds). */
const SHARED_WRITERS: Record<string, string[]> = {
  [ResourceTypes.SUBSCRIPTION]: ['handler/creates.ts'],
  [ResourceTypes.NOTIFICATION_PIPELINE]: ['handler/creates.ts'],
};

/** The state literals a file writes (`journal.create<…>(key, 'x'` / `journal.save(rec, 'x'`). */
function writtenStates(file: string): string[] {
  const text = readFileSync(join(SRC, file), 'utf8');
  return [...text.matchAll(/journal\.(?:create|save)(?:<[^>]*>)?\([^,()]+,\s*'([a-z]+)'/g)].map((m) => m[1]);
}

describe('journal states', () => {
  test('the scan sees the states a handler writes', () => {
    expect(writtenStates('kinds/history-request/runtime/handler.ts')).toEqual(expect.arrayContaining(['creating', 'active', 'deleted']));
  });

  test.each(KINDS.map((k) => [k.type, k] as const))('every state the %s handler writes is one of its states', (type, k) => {
    const files = [...tsFiles(join(KINDS_DIR, folderOf(type))).map((f) => relative(SRC, f)), ...(SHARED_WRITERS[type] ?? [])];
    const written = [...new Set(files.flatMap(writtenStates))];
    expect(written.length).toBeGreaterThan(0);
    expect(written.filter((s) => !(k.states as readonly string[]).includes(s))).toEqual([]);
  });

  test('outside the kind folders, only the shared files write journal states', () => {
    const writers = tsFiles(join(SRC, 'handler')).map((f) => relative(SRC, f)).filter((f) => writtenStates(f).length > 0);
    const listed = new Set([...Object.values(SHARED_WRITERS).flat(), 'handler/common.ts', 'handler/journal.ts']);
    expect(writers.filter((f) => !listed.has(f))).toEqual([]);
  });
});

/**
 * The parts of a kind's folder (each file of that name; a part may be split into `<part>-<more>.ts`), by layer: pure and
 * construct directly in it, the Lambda's in runtime/, the command line's in tools/ (test/layers.test.ts).
 */
const PARTS = ['wire', 'construct', 'runtime/handler', 'runtime/drift', 'runtime/plan', 'runtime/repair', 'tools/orphans'] as const;

describe('a kind is its folder and one entry in each list of the registry', () => {
  test.each(KINDS.map((k) => [k.type, k] as const))('%s has its folder with every part', (type) => {
    const dir = join(KINDS_DIR, folderOf(type));
    expect(PARTS.filter((p) => !existsSync(join(dir, `${p}.ts`)))).toEqual([]);
    // Its definition is the folder's: the type literal is written there and nowhere else in src/.
    const writers = tsFiles(SRC).filter((f) => readFileSync(f, 'utf8').includes(`'${type}'`)).map((f) => relative(SRC, f));
    expect(writers).toEqual([`kinds/${folderOf(type)}/wire.ts`]);
  });

  test('the folders under src/kinds are the kinds of the registry and the registry itself', () => {
    const folders = readdirSync(KINDS_DIR).filter((n) => statSync(join(KINDS_DIR, n)).isDirectory()).sort();
    expect(folders).toEqual([...KINDS.map((k) => folderOf(k.type)), 'registry'].sort());
  });

  test('every kind\'s construct is in the registry\'s construct list, and that list is the public API', () => {
    const list = readFileSync(join(KINDS_DIR, 'registry', 'constructs.ts'), 'utf8');
    for (const k of KINDS) expect(list).toContain(`export * from '../${folderOf(k.type)}/construct';`);
    expect(readFileSync(join(SRC, 'index.ts'), 'utf8')).toContain("export * from './kinds/registry/constructs';");
    for (const name of ['Subscription', 'NotificationPipeline', 'LegacyNotificationPipeline', 'HistoryRequest', 'ProductOrderJobs']) {
      expect(typeof (api as Record<string, unknown>)[name]).toBe('function');
    }
  });

  test('no table of kinds is kept outside the registry (a new kind needs no entry anywhere else)', () => {
    const tables = tsFiles(SRC).filter((f) => !f.startsWith(join(KINDS_DIR, 'registry')))
      .flatMap((f) => [...readFileSync(f, 'utf8').matchAll(/:\s*PerKind</g)].map(() => relative(SRC, f)));
    expect(tables).toEqual([]);
    // The check sees a table: the registry's lists are ones.
    expect(readFileSync(join(KINDS_DIR, 'registry', 'cli.ts'), 'utf8')).toMatch(/:\s*PerKind</);
  });
});
