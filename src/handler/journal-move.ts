/**
 * A deployed resource whose connection now names another lifecycle journal table (`journalTableName` or
 * `journalTable` changed): the handler reads and writes only the new table, so unless the old table's records were
 * copied into it, the new table does not know what earlier deploys made, which records were adopted or retained, or
 * which stack claims a subscription. Such an Update is refused before any service call when the new table holds no
 * record of the resource; the refusal's rollback (the old table again, which holds them) proceeds as usual.
 */
import { DEFAULT_JOURNAL_TABLE } from '../contract';
import { HandlerError } from './errors';
import { resourceKey } from './journal';
import type { Runtime } from './runtime';
import type { CfnEvent } from './types';

/** The journal table a resource's properties name (the default when none). */
export function journalTableOf(props: Record<string, unknown> | undefined): string {
  const conn = props?.Connection as { JournalTableName?: unknown } | undefined;
  const t = conn?.JournalTableName;
  return typeof t === 'string' && t !== '' ? t : DEFAULT_JOURNAL_TABLE;
}

/** Refuses an Update that moves a resource to a journal table that holds no record of it (see the file's comment). */
export async function checkJournalMove(event: CfnEvent, rt: Pick<Runtime, 'journal'>): Promise<void> {
  if (event.RequestType !== 'Update' || event.OldResourceProperties === undefined) return;
  const from = journalTableOf(event.OldResourceProperties);
  const to = journalTableOf(event.ResourceProperties);
  if (from === to) return;
  const key = resourceKey(event);
  if ((await rt.journal.records(key)).length > 0) return;
  throw new HandlerError(`the connection's lifecycle journal table changed from ${from} to ${to}, and ${to} holds no record of ${key}: `
    + `the handler would no longer know what earlier deploys made, adopted or retained. Keep the table ${from} (to manage it in `
    + 'CloudFormation, import the existing table into a stack and pass it as journalTable by the same name), or copy every item of '
    + `${from} into ${to} first; nothing was changed`);
}
