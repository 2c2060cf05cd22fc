/**
 * Fixtures given to an emulator that starts from an existing state file: the records the state does not have yet are
 * added (new identities, subscriptions, ...), the records it has are kept as the state has them (the app may have
 * changed them since), and the settings (`pageSize`, `historyMaxRequests`, the `failing*` lists) are applied. Nothing
 * is ignored without a word: the result counts what was added, kept and set.
 */
import { Ctx, isObj } from './core';
import { applyFixtures, KEYS, LISTS } from './domain';
import type { EmulatorFixtures } from './fixture-types';
import type { EmulatorState } from './state';

/** What fixtures did to an existing state: records added, records already there (kept as they are), settings applied. */
export interface FixturesMerge {
  /** Records added, by fixtures key (e.g. `{ remoteIdentities: 10 }`). */
  readonly added: Record<string, number>;
  /** Records the state already had (same key), kept unchanged, by fixtures key. */
  readonly kept: Record<string, number>;
  /** Settings applied (`pageSize`, `historyMaxRequests`, `failing*`). */
  readonly set: string[];
}

/** The state list a fixtures key's records are compared with, and the key of a state record. */
function stateKeys(s: EmulatorState, name: string): Set<string> {
  const keyed = (list: readonly unknown[] | undefined, key: (r: Record<string, unknown>) => string | undefined): Set<string> =>
    new Set((list ?? []).map((r) => (isObj(r) ? key(r as Record<string, unknown>) : undefined)).filter((k): k is string => k !== undefined));
  const id = (r: Record<string, unknown>): string | undefined => (r.id === undefined ? undefined : String(r.id));
  switch (name) {
    case 'productCards': return keyed(s.products, id);
    case 'legacyPipelines': return keyed(s.legacyPipelines, (r) => String(r.subscriptionId));
    case 'subscriptions': return keyed(s.subscriptions, id);
    default: return keyed((s as unknown as Record<string, unknown[] | undefined>)[name], KEYS[name] ?? id);
  }
}

/**
 * Splits fixtures against an existing state: the returned `fixtures` hold the records the state lacks (plus the
 * settings, and any invalid record, so that applying them reports it), `merge` says what was added, kept and set.
 */
export function newFixtureRecords(s: EmulatorState, fx: EmulatorFixtures): { fixtures: EmulatorFixtures; merge: FixturesMerge } {
  const out: Record<string, unknown> = {};
  const added: Record<string, number> = {};
  const kept: Record<string, number> = {};
  const set: string[] = [];
  for (const [name, value] of Object.entries(fx as Record<string, unknown>)) {
    if (!(name in KEYS) || !Array.isArray(value)) {
      out[name] = value;
      if (name === 'pageSize' || name === 'historyMaxRequests' || (LISTS as readonly string[]).includes(name)) set.push(name);
      continue;
    }
    const have = stateKeys(s, name);
    const key = KEYS[name];
    const fresh = value.filter((r) => {
      const k = isObj(r) ? key(r as Record<string, unknown>) : undefined;
      return k === undefined || !have.has(k);
    });
    out[name] = fresh;
    if (fresh.length > 0) added[name] = fresh.length;
    if (value.length > fresh.length) kept[name] = value.length - fresh.length;
  }
  return { fixtures: out as EmulatorFixtures, merge: { added, kept, set } };
}

/** Merges fixtures into the state loaded from `stateFile` (see the module comment); an invalid record names the file. */
export function mergeIntoSavedState(ctx: Ctx, fx: EmulatorFixtures, stateFile: string): FixturesMerge {
  const split = newFixtureRecords(ctx.s, fx);
  try {
    applyFixtures(ctx, split.fixtures);
  } catch (e) {
    throw new Error(`fixtures cannot be merged into the state of ${stateFile}: ${(e as Error).message}`);
  }
  return split.merge;
}

/** One line saying what fixtures did to an existing state, e.g. `added 10 remoteIdentities; kept 54 records ...`. */
export function describeFixturesMerge(m: FixturesMerge): string {
  const list = (c: Record<string, number>): string => Object.entries(c).map(([k, n]) => `${n} ${k}`).join(', ');
  const keptCount = Object.values(m.kept).reduce((a, b) => a + b, 0);
  const parts = [
    Object.keys(m.added).length > 0 ? `added ${list(m.added)}` : 'added no records (the state has every fixture record already)',
    ...(keptCount > 0 ? [`kept ${keptCount} record${keptCount === 1 ? '' : 's'} the state already has, as the state has them (${list(m.kept)})`] : []),
    ...(m.set.length > 0 ? [`set ${m.set.join(', ')}`] : []),
  ];
  return parts.join('; ');
}
