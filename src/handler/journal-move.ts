/**
 * A deployed resource whose connection now names another lifecycle journal table (`journalTableName` or
 * `journalTable` changed). The handler reads and writes only the new table; unless the old table's records were copied
 * into it, the new table does not know what earlier deploys made, which records were adopted or retained, or which
 * stack claims a subscription. So an Update under a changed table:
 * - proceeds as usual when the new table holds the resource's live record (copied, or the rollback of a refused move,
 *   whose old table still holds it);
 * - is refused before any service call when the previous table can be read and holds that live record (a move without
 *   copying; the refusal's rollback returns to the table that holds it);
 * - otherwise (the previous table is not readable, e.g. the provider role may use the new table only, or holds no live
 *   record either) proceeds without proof: a record made anew from the previous properties is kept as adopted, never
 *   ended by a later Delete, and a warning says why. Never a refusal there, so a rollback always finishes.
 * Neither table is ever created by these reads.
 */
import { DEFAULT_JOURNAL_TABLE } from '../contract';
import { RELEASED_OR_DONE } from './common';
import { HandlerError } from './errors';
import { Journal, JournalRecord, resourceKey } from './journal';
import { log } from './log';
import type { Runtime } from './runtime';
import type { CfnEvent } from './types';

/** The journal table a resource's properties name (the default when none). */
export function journalTableOf(props: Record<string, unknown> | undefined): string {
  const conn = props?.Connection as { JournalTableName?: unknown } | undefined;
  const t = conn?.JournalTableName;
  return typeof t === 'string' && t !== '' ? t : DEFAULT_JOURNAL_TABLE;
}

/** The records of `key` in a table, or undefined when the table cannot be read (missing: none). */
async function readable(journal: Journal, key: string): Promise<Array<JournalRecord<unknown>> | undefined> {
  try {
    return await journal.records(key);
  } catch (e) {
    if (/does not exist/.test(e instanceof Error ? e.message : String(e))) return [];
    return undefined;
  }
}

/**
 * Checks an Update whose journal table changed (see the module comment). Returns the reason to log when it proceeds
 * without proof (the caller passes it on as `Runtime.journalUnproven`), undefined when nothing is unusual; throws a
 * refusal when the previous table holds the resource's live record and the new one does not.
 */
export async function checkJournalMove(event: CfnEvent, rt: Pick<Runtime, 'journalAt'>): Promise<{ from: string; reason: string } | undefined> {
  if (event.RequestType !== 'Update' || event.OldResourceProperties === undefined) return undefined;
  const from = journalTableOf(event.OldResourceProperties);
  const to = journalTableOf(event.ResourceProperties);
  if (from === to) return undefined;
  const key = resourceKey(event);
  const id = event.PhysicalResourceId;
  const live = (recs: Array<JournalRecord<unknown>> | undefined): Array<JournalRecord<unknown>> =>
    (recs ?? []).filter((r) => r.physicalId === id && !RELEASED_OR_DONE.has(r.state));
  if (live(await readable(rt.journalAt(to), key)).length > 0) return undefined;
  const previous = await readable(rt.journalAt(from), key);
  // A record made without proof (an earlier move of this kind, e.g. the forward move this Update rolls back) proves nothing.
  if (live(previous).some((r) => (r.doc as { unprovenFrom?: unknown } | undefined)?.unprovenFrom === undefined)) {
    throw new HandlerError(`the connection's lifecycle journal table changed from ${from} to ${to}, and ${to} holds no record of ${key} while ${from} `
      + 'does: the handler would no longer know what earlier deploys made, adopted or retained. Keep the table '
      + `${from} (to manage it in CloudFormation, import the existing table into a stack and pass it as journalTable by the same name), or `
      + `copy every item of ${from} into ${to} first; nothing was changed`);
  }
  const reason = `the connection's lifecycle journal table changed from ${from} to ${to}; ${to} holds no record of ${key} and ${from} `
    + `${previous === undefined ? 'cannot be read here' : 'holds none either'}: nothing proves that the stack made physical ID ${id ?? '-'}, so it is `
    + `kept as adopted (a Delete releases it, never ends it); copy the items of ${from} into ${to} to keep what it recorded`;
  log({ level: 'WARNING', msg: 'journal table changed without the resource\'s records', from, to, key, physicalId: id });
  return { from, reason };
}
