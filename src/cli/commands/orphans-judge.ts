/**
 * `dpi orphans`, part 1: which journal records are judged, against what is deployed (CloudFormation or the
 * `dpi local-deploy` state), and whose they are. A record that still holds something while its stack or resource is
 * gone is either the library's to remove (an **orphan**: the resource made it) or the user's to keep (**retained**:
 * its removal policy is RETAIN, or it existed before the stack and was adopted). See docs/cli.md ("dpi orphans").
 */
import { existsSync } from 'node:fs';
import type { JournalClaim, JournalRecord } from '../../handler/journal';
import { isKindType, kindOf, KINDS, ResourceTypes, taggedKind } from '../../kinds';
import type { LocalState, ResourceState } from '../../local/state';
import { DeployedStack, journalKeyOf, resourcesByJournalKey } from '../deployed';
import { renderTable } from '../format';
import { deployedTableUse, TableUse, tableUseOf } from './journal-table';

export type Doc = Record<string, unknown>;
export type Rec = JournalRecord<Doc>;

/**
 * States in which a record holds nothing of the stack's: ended (`deleted`), never made (`abandoned`), or handed back
 * to the user (`released`: a RETAIN removal, or the end of an adoption). Such records are never listed.
 */
export const DONE: ReadonlySet<string> = new Set(['deleted', 'abandoned', 'released']);

/** Short names of the kinds (from the registry, src/kinds). */
export const SHORT_TYPE: Record<string, string> = Object.fromEntries(KINDS.map((k) => [k.type, k.shortName]));

export function shortType(t: string): string {
  return SHORT_TYPE[t] ?? t;
}

export const str = (v: unknown): string => (v === undefined || v === null ? '' : String(v));

/**
 * The resource type of a record: the kind its document is tagged with (documents written since the kinds registry),
 * else the local state's type when known, else (an untagged document of an older version) from the document's shape.
 */
export function recordType(doc: Doc, known?: string): string {
  const tagged = taggedKind(doc);
  if (tagged) return tagged;
  if (known && isKindType(known)) return known;
  return typeFromShape(doc);
}

/** The resource type of an untagged (older) document, from its shape; 'unknown' when it fits no kind. */
export function typeFromShape(doc: Doc): string {
  if (doc.selection !== undefined) return ResourceTypes.NOTIFICATION_PIPELINE;
  if (typeof doc.request === 'string') return ResourceTypes.HISTORY_REQUEST;
  if (doc.primaryJobId !== undefined) return ResourceTypes.PRODUCT_ORDER_JOBS;
  if (doc.product !== undefined) return ResourceTypes.SUBSCRIPTION;
  if (doc.identity !== undefined && doc.applied !== undefined) return ResourceTypes.LEGACY_NOTIFICATION_PIPELINE;
  return 'unknown';
}

/** What is deployed, as the orphan check sees it (CloudFormation or the local state). */
export interface DeployedView {
  readonly source: string;
  /** 'gone': the stack does not exist; 'busy': an operation is in progress (its records are not judged). */
  stack(name: string): 'live' | 'gone' | 'busy';
  /** The current resource of a key, when it exists, with the journal table its connection names. */
  resource(key: string): { physicalId?: string; type?: string; properties?: Record<string, unknown>; table?: TableUse } | undefined;
  /** The journal tables the `Custom::Dpi*` resources of a stack and its nested stacks name (none: it holds none). */
  tableUses(stack: string): TableUse[];
  /** A physical resource the local state keeps for a clean-up (an old replacement, a failed removal). */
  pendingCleanup(key: string, physicalId: string | undefined): ResourceState | undefined;
}

export function localView(state: LocalState, file: string): DeployedView {
  // By journal key: a fleet's pipelines (in nested stacks) carry their key in the JournalKey property.
  const byKey = new Map<string, ResourceState>();
  for (const r of Object.values(state.resources)) byKey.set(journalKeyOf(r.stack, r.logicalId, r.properties), r);
  const parents = new Map(state.stacks.map((s) => [s.stackName, s.parentStack]));
  const rootOfLocal = (name: string): string => {
    let cur = name;
    for (let i = 0; i < 20 && parents.get(cur) !== undefined; i++) cur = parents.get(cur)!;
    return cur;
  };
  const dpi = Object.values(state.resources).filter((r) => r.type.startsWith('Custom::Dpi'));
  return {
    // After a destroy the state file is gone: the report says so instead of naming a file that does not exist.
    source: existsSync(file) ? `local state ${file}` : `the local-deploy state (${file} does not exist: nothing is deployed locally)`,
    stack: (name) => (state.stacks.some((s) => s.stackName === name) ? 'live' : 'gone'),
    resource: (key) => {
      const r = byKey.get(key);
      if (!r) return undefined;
      return { physicalId: r.physicalId, type: r.type, properties: r.properties, table: tableUseOf(r.stack, r.logicalId, r.properties) };
    },
    tableUses: (stack) => dpi.filter((r) => rootOfLocal(r.stack) === stack).map((r) => tableUseOf(r.stack, r.logicalId, r.properties)),
    pendingCleanup: (key, physicalId) => state.orphans.find((o) => o.physicalId === physicalId
      && journalKeyOf(o.stack, o.logicalId, o.properties) === key),
  };
}

export function cloudView(stacks: Map<string, DeployedStack | undefined>, region: string | undefined,
  exportOf?: (name: string) => string | undefined): DeployedView {
  const byKey = resourcesByJournalKey(stacks);
  const live = [...new Set([...stacks.values()].filter((x): x is DeployedStack => x !== undefined))];
  const useOf = (s: DeployedStack, logicalId: string): TableUse | undefined => {
    const props = s.dpiProperties?.get(logicalId);
    return props === undefined ? undefined : deployedTableUse(s, s.stackName, logicalId, props, exportOf);
  };
  return {
    source: `CloudFormation${region ? ` (${region})` : ''}`,
    stack: (name) => {
      const s = stacks.get(name);
      if (!s) return 'gone';
      // A nested stack's operation runs within its parent's: either one in progress leaves the records unjudged.
      const busy = [...stacks.values()].some((x) => x !== undefined && x.status.endsWith('_IN_PROGRESS') && (x === s || rootOf(stacks, x) === name));
      return busy ? 'busy' : 'live';
    },
    resource: (key) => {
      const r = byKey.get(key);
      const s = r ? live.find((x) => x.stackName === r.stackName) : undefined;
      return r ? { physicalId: r.physicalId, type: r.type, ...(s && useOf(s, r.logicalId) ? { table: useOf(s, r.logicalId) } : {}) } : undefined;
    },
    tableUses: (stack) => live.filter((s) => s.stackName === stack || rootOf(stacks, s) === stack)
      .flatMap((s) => [...(s.dpiProperties?.keys() ?? [])].map((id) => useOf(s, id)!)),
    pendingCleanup: () => undefined,
  };
}

/** The top-level stack that holds a (nested) stack. */
function rootOf(stacks: Map<string, DeployedStack | undefined>, s: DeployedStack): string {
  let cur = s;
  for (let i = 0; i < 20 && cur.parentStack !== undefined; i++) {
    const p = stacks.get(cur.parentStack);
    if (!p) return cur.parentStack;
    cur = p;
  }
  return cur.stackName;
}

/**
 * How a listed record is treated: `orphan` (the resource made it: `--fix` ends it with the handler's Delete),
 * `retained` (the user's to keep: `--fix` releases it, no service call), `refused` (the connection's account cannot
 * read it: nothing is done).
 */
export type Verdict = 'orphan' | 'retained' | 'refused';

/** One journal record that holds something while its stack or resource is gone, and what it still holds. */
export interface Orphan {
  readonly key: string;
  readonly type: string;
  readonly record: string;
  readonly state: string;
  readonly physicalId?: string;
  /** Why it is no longer the resource's (stack gone, resource gone, replaced, ...). */
  readonly why: string;
  verdict: Verdict;
  /** Why it is the user's to keep (verdict `retained`). */
  kept?: string;
  /** The read the service refused (verdict `refused`). */
  refused?: string;
  /** Service IDs it refers to (e.g. `sub 1234`, `history 55`, `identity 362`). */
  serviceIds: string[];
  /** What it still holds, read from the service. */
  holds: string;
  /** Set when the library cannot remove it: the step that clears it. */
  unresolved?: string;
  /** The history request an unconfirmed attempt made (found by the lookup), removed by --fix. */
  madeHistory?: string;
  /** Holds nothing that a Delete could remove (order jobs of an ended subscription): not reported. */
  moot?: boolean;
  /** Properties of the resource as the local state recorded them (--local). */
  readonly properties?: Record<string, unknown>;
}

/** A record found by `findOrphans`, before the service is read. */
export type Candidate = Omit<Orphan, 'serviceIds' | 'holds' | 'verdict'>;

/**
 * Why a record is the user's to keep, or undefined when the resource made it (and `--fix` may end it). Kept: a record
 * that existed before the stack (adopted: `adopted` in its document, an `AdoptId` property, or a legacy pipeline,
 * which is always adopted) unless its removal policy is explicitly `destroy`; and a record with the removal policy
 * `retain` that CloudFormation had (a physical ID). The document's policy (what the handler saw last) wins over the
 * local state's properties. An attempt without a physical ID was never the stack's resource: it is cleaned up.
 */
export function keptBecause(rec: Rec, type: string, properties?: Record<string, unknown>): string | undefined {
  const d = rec.doc;
  const policy = (str(d.removalPolicy) || str(properties?.RemovalPolicy)).toLowerCase();
  if (policy === 'destroy') return undefined;
  const adopted = d.adopted === true || str(properties?.AdoptId) !== '' || kindOf(type)?.alwaysAdopted === true;
  if (adopted) return `adopted (it existed before the stack)${policy === 'retain' ? ', removal policy RETAIN' : ''}`;
  if (policy === 'retain' && rec.physicalId !== undefined) return 'removal policy RETAIN';
  return undefined;
}

/**
 * Why the records of a live stack are not judged in `table`: the stack's resources (the record's own resource when
 * it is live, else every `Custom::Dpi*` resource of the stack and its nested stacks) name another journal table, or
 * one that cannot be resolved here. Its records in `table` are then copies the stack no longer writes (a move to
 * another table): judging them could end what the stack later retained, or another stack adopted.
 */
export function elsewhereReason(stack: string, table: string, uses: readonly TableUse[]): string | undefined {
  const other = uses.filter((u) => u.table !== table);
  if (other.length === 0) return undefined;
  const names = [...new Set(other.map((u) => u.table ?? u.unresolved!))].join(', ');
  const resolved = other.some((u) => u.table !== undefined);
  return `stack ${stack}: its Custom::Dpi* resources name the journal table ${names}${resolved ? '' : ' (cannot be resolved here)'}, not ${table}: `
    + `its records in ${table} are not judged${resolved ? ` (dpi orphans --table ${other.find((u) => u.table !== undefined)!.table})` : ''}`;
}

/**
 * Judges every holding record against what is deployed. With `judged`, the records of a live stack whose resources
 * name another journal table than `judged.table` are left out, and each such stack's reason is set in
 * `judged.elsewhere` (`elsewhereReason`).
 */
export function findOrphans(records: Rec[], view: DeployedView, skipped: Set<string>,
  judged?: { table: string; elsewhere: Map<string, string> }): Candidate[] {
  const out: Candidate[] = [];
  for (const r of records) {
    if (DONE.has(r.state)) continue;
    const [stack] = r.key.split('/');
    const s = view.stack(stack);
    if (s === 'busy') {
      skipped.add(stack);
      continue;
    }
    const current = s === 'live' ? view.resource(r.key) : undefined;
    if (s === 'live' && judged) {
      const reason = elsewhereReason(stack, judged.table, current?.table ? [current.table] : view.tableUses(stack));
      if (reason !== undefined) {
        judged.elsewhere.set(stack, reason);
        continue;
      }
    }
    const pending = view.pendingCleanup(r.key, r.physicalId);
    let why: string | undefined;
    if (s === 'gone') {why = 'stack gone';} else if (!current) {why = 'resource gone';} else if (pending) {why = `${pending.replaced ? 'replaced' : 'removal failed'}: the clean-up did not remove it (current ${current.physicalId ?? '-'})`;} else if (r.physicalId !== current.physicalId) {
      // A record still 'deleting' had its Delete fail: CloudFormation abandons a clean-up Delete that fails.
      const abandoned = r.state === 'deleting' ? ': its clean-up Delete failed, abandoned' : '';
      why = r.physicalId === undefined ? `unfinished attempt (current ${current.physicalId ?? '-'})` : `replaced${abandoned} (current ${current.physicalId ?? '-'})`;
    }
    if (!why) continue;
    const type = recordType(r.doc, pending?.type ?? current?.type);
    // Properties only from a resource of the record's own kind (a key whose resource changed kind gives none).
    const currentOfKind = current?.type === type ? current : undefined;
    const properties = (pending?.type === undefined || pending.type === type ? pending?.properties : undefined)
      ?? (r.physicalId === undefined || r.physicalId === current?.physicalId ? currentOfKind?.properties : undefined);
    const kept = keptBecause(r, type, properties);
    out.push({
      key: r.key,
      type,
      record: r.id,
      state: r.state,
      physicalId: r.physicalId,
      why,
      ...(kept ? { kept } : {}),
      properties,
    });
  }
  return out;
}

/** A claim whose owner has no record in the journal, and whether the service still shows it live. */
export interface LooseClaim extends JournalClaim {
  status?: string;
  live: boolean;
  /** The owner's records: none at all, or all closed (`deleted` / `abandoned`). */
  ownerRecords: 'none' | 'closed';
}

/** The table of `dpi orphans` (orphans; retained records add the KEPT column, refused ones the REFUSED column). */
export function renderOrphans(orphans: Orphan[], extra?: 'kept' | 'refused', width?: number): string {
  const head = ['KEY', 'TYPE', 'SERVICE IDS', 'HOLDS', 'STATE', 'WHY'];
  return renderTable(extra ? [...head, extra.toUpperCase()] : head, orphans.map((o) => {
    const row = [o.key, shortType(o.type), o.serviceIds.join(', ') || '-', o.holds, o.state, o.why];
    return extra ? [...row, (extra === 'kept' ? o.kept : o.refused) ?? '-'] : row;
  }), width);
}
