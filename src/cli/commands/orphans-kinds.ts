/**
 * The command line's hooks of each resource kind for `dpi orphans` (the registry in src/kinds is the one list of
 * kinds): what a record still holds, and the properties of the Delete that ends it. Each table is a `PerKind` (the
 * compiler refuses one that misses a kind); test/kinds checks every kind has every hook. The kind's names (TYPE
 * column) and facts (removal policy, adoption, fix order) come from the registry itself.
 */
import { DELETE_PROPERTIES } from './orphans-fix';
import { HOLDINGS } from './orphans-holdings';

/** The raw tables (test/kinds checks each has every kind of the registry). */
export const ORPHAN_HOOK_TABLES = { holdings: HOLDINGS, deleteProperties: DELETE_PROPERTIES } as const;
