/**
 * `dpi drift --fix`: for each resource reported MODIFIED whose record the journal proves the stack holds (made by the
 * resource, or adopted and not released), re-applies the declared state through the handler's own convergence code
 * (src/handler/repair.ts); reports per resource what was restored and what could not be. A DELETED resource, a
 * record the journal does not prove, a released one and a refused (403) one are never touched.
 */
import { shortType } from './drift-render';
import { DpiClient } from '../../client';
import { declaredRecord, DriftRow } from '../../handler/drift';
import type { Journal } from '../../handler/journal';
import { notOwned, repair, repairRuntime } from '../../handler/repair';
import { KINDS } from '../../kinds';
import { askOnStdin } from '../ask';
import { CliError } from '../errors';

/** Test seams: whether stdin is a terminal, and the interactive question (default: readline on stdin). */
export const driftSeams: { stdinIsTTY: () => boolean; ask: (question: string) => Promise<string> } = {
  stdinIsTTY: () => process.stdin.isTTY === true,
  ask: askOnStdin,
};

/** The outcome of one drifted resource. */
export interface FixOutcome {
  readonly key: string;
  readonly stack: string;
  readonly logicalId: string;
  readonly type: string;
  readonly physicalId: string;
  /** `restored`: everything that differed; `partly`: some of it; `not-restored`: nothing; `skipped`: left alone; `failed`: a call failed. */
  readonly result: 'restored' | 'partly' | 'not-restored' | 'skipped' | 'failed';
  readonly restored: string[];
  readonly notRestored: string[];
  readonly detail?: string;
}

/** Types whose record is a subscription claimed in the journal (`sub` claims). */
const CLAIMED = new Set<string>(KINDS.filter((k) => k.claim === 'sub').map((k) => k.type));

/** Asks before --fix changes anything (unless --yes); without a terminal it refuses. */
export async function confirmFix(count: number, yes: boolean): Promise<void> {
  if (count === 0 || yes) return;
  const what = `re-apply the declared state of ${count} modified resource${count === 1 ? '' : 's'}`;
  if (!driftSeams.stdinIsTTY()) throw new CliError(`refusing to ${what} without a confirmation: stdin is not a terminal; pass --yes`);
  const answer = await driftSeams.ask(`${what[0].toUpperCase()}${what.slice(1)}? [y/N] `);
  if (!/^y(es)?$/i.test(answer.trim())) throw new CliError('nothing was changed (not confirmed)');
}

/** The rows --fix acts on (MODIFIED) and reports on (DELETED: left alone). */
export function fixable(rows: readonly DriftRow[]): DriftRow[] {
  return rows.filter((r) => r.status === 'MODIFIED');
}

/** Repairs every MODIFIED row the journal proves the stack holds; DELETED rows are reported, never touched. */
export async function fixDrift(rows: readonly DriftRow[], deps: { client: DpiClient; journal: Journal; subscriptionsKey?: string },
  progress: (line: string) => void): Promise<FixOutcome[]> {
  const rt = repairRuntime({ client: deps.client, journal: deps.journal, metadataKeys: { subscriptions: deps.subscriptionsKey } });
  const out: FixOutcome[] = [];
  for (const row of rows) {
    const { key, stack, logicalId, type, physicalId } = row;
    const base = { key, stack, logicalId, type, physicalId, restored: [], notRestored: [] };
    if (row.status === 'DELETED') {
      out.push({
        ...base,
        result: 'skipped',
        detail: `DELETED (${row.reason ?? 'gone'}): --fix does not make records anew; change one of its `
        + 'properties and deploy (a subscription\'s or pipeline\'s name will do: an Update of a gone record creates a new one; a history '
        + 'request or order jobs: give it a new logical ID), or remove it from the app',
      });
      continue;
    }
    if (row.status !== 'MODIFIED') continue;
    const rec = declaredRecord(await deps.journal.records<unknown>(row.key), row.physicalId);
    const owner = CLAIMED.has(row.type) ? (await deps.journal.owners('sub', [row.physicalId])).get(row.physicalId) : undefined;
    const why = notOwned(row.type, row.key, row.physicalId, rec, owner);
    if (why !== undefined) {
      out.push({ ...base, result: 'skipped', detail: `${why}: nothing changed` });
      continue;
    }
    progress(`re-applying ${row.key} (${shortType(row.type)}, ${row.physicalId})...`);
    try {
      const r = await repair(rt, row.type, row.key, rec!);
      const result = r.restored.length === 0 ? 'not-restored' : r.notRestored.length > 0 ? 'partly' : 'restored';
      out.push({ ...base, result, restored: r.restored, notRestored: r.notRestored });
    } catch (e) {
      out.push({ ...base, result: 'failed', detail: (e as Error).message });
    }
  }
  return out;
}

/** The report of --fix: one line per resource (and one per property that could not be restored). */
export function renderFix(outcomes: readonly FixOutcome[]): string {
  if (outcomes.length === 0) return 'Nothing to re-apply.\n';
  let out = '';
  for (const o of outcomes) {
    const label = o.result === 'not-restored' ? 'not restored' : o.result === 'partly' ? 'partly restored' : o.result;
    const what = o.restored.length > 0 ? `: ${o.restored.join('; ')}` : o.detail ? `: ${o.detail}` : '';
    out += `${label}  ${o.key} (${shortType(o.type)}, ${o.physicalId || '-'})${what}\n`;
    for (const n of o.notRestored) out += `  not restored: ${n}\n`;
  }
  return out;
}

/** Whether every drifted row was fully restored. */
export function allRestored(drifted: readonly DriftRow[], outcomes: readonly FixOutcome[]): boolean {
  return drifted.every((r) => outcomes.some((o) => o.key === r.key && o.physicalId === r.physicalId && o.result === 'restored'));
}
