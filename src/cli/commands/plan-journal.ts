/**
 * What the lifecycle journal records of the deployed resources a plan ends or replaces, for `dpi plan`: the handler
 * decides ownership from the journal (a record adopted earlier is released, never ended, even after
 * `existingSubscriptionId` was dropped), so the plan reads the same records when it can: `--local` the local-deploy
 * journal beside the state file, otherwise the journal table (`--table`, default each resource's connection's
 * `JournalTableName`) when it exists and the AWS credentials may read it. Read only: a missing table is not created.
 */
import { existsSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { openJournal } from './journal-access';
import { RELEASED_OR_DONE } from '../../handler/common';
import type { Journal } from '../../handler/journal';
import type { PlanJournalHint } from '../../handler/plan-types';
import { JOURNAL_STATE_FILE_NAME } from '../../local/journal-server';
import { CliError } from '../errors';
import type { TableUse } from './journal-table';

/** One deployed resource whose journal record the plan wants. */
export interface JournalTarget {
  /** The caller's reference (e.g. `<stack>\0<logical ID>`). */
  readonly ref: string;
  /** The table, or (`{ unresolved }`) the intrinsic that names it and cannot be resolved here. */
  readonly table: string | { readonly unresolved: string };
  /** The resource's journal key (`<deployed stack name>/<logical ID>`, or its `JournalKey`). */
  readonly key: string;
  readonly physicalId: string;
}

/** Opens the journal table `table` for reading; undefined when there is none to read (nothing is created). */
export type PlanJournalOpener = (table: string) => Promise<{ journal: Journal; close(): Promise<void> } | undefined>;

/**
 * The journal table of a deployed resource (`use`: its connection's, resolved where the caller could): `--table` when
 * given, which must then be the resource's own table when that is known (reading another journal would plan the end of
 * records it never proved; a `CliError` names both), else the resource's table, else the intrinsic that names it.
 */
export function tableOf(use: TableUse, flag: string | undefined): string | { unresolved: string } {
  if (flag !== undefined && flag !== '') {
    if (use.table !== undefined && use.table !== flag) {
      throw new CliError(`dpi plan: --table ${flag} is not the lifecycle journal table of ${use.stack}/${use.logicalId}: its connection uses `
        + `${use.table}; reading another journal would plan the end of records it never proved. Pass --table ${use.table} (or leave it out)`);
    }
    return flag;
  }
  return use.table ?? { unresolved: use.unresolved ?? '' };
}

/** The parts of a journal record's document the plan reads. */
interface RecordedDoc {
  adopted?: boolean;
  removalPolicy?: string;
  previous?: { params?: Record<string, string> };
  kept?: Record<string, string>;
}

function hintOf(doc: RecordedDoc): PlanJournalHint {
  const policy = doc.removalPolicy;
  return {
    adopted: doc.adopted === true,
    ...(policy === 'retain' || policy === 'destroy' ? { removalPolicy: policy } : {}),
    ...(doc.previous?.params !== undefined ? { previousParameters: doc.previous.params } : {}),
    ...(doc.kept !== undefined ? { keptParameters: doc.kept } : {}),
  };
}

/**
 * The journal's facts of each target (`{}` when it holds no live record of it), or the reason it could not be read.
 */
export async function readJournalHints(targets: readonly JournalTarget[], open: PlanJournalOpener):
Promise<{ hints: Map<string, PlanJournalHint> } | { error: string }> {
  const hints = new Map<string, PlanJournalHint>();
  const unknown = targets.find((t) => typeof t.table !== 'string');
  if (unknown !== undefined) {
    return {
      error: `the journal table of ${unknown.key} is ${(unknown.table as { unresolved: string }).unresolved}, which cannot be resolved here: `
      + 'pass --table NAME, the connection\'s journal table',
    };
  }
  for (const table of [...new Set(targets.map((t) => t.table as string))]) {
    let opened;
    try {
      opened = await open(table);
    } catch (e) {
      return { error: (e as Error).message };
    }
    if (!opened) return { error: `the lifecycle journal table ${table} was not found` };
    try {
      for (const t of targets.filter((x) => x.table === table)) {
        const recs = await opened.journal.records<RecordedDoc>(t.key);
        const rec = recs.find((r) => r.physicalId === t.physicalId && !RELEASED_OR_DONE.has(r.state));
        hints.set(t.ref, rec ? hintOf(rec.doc) : {});
      }
    } catch (e) {
      return { error: (e as Error).message };
    } finally {
      await opened.close().catch(() => undefined);
    }
  }
  return { hints };
}

/** `--local`: the local-deploy journal beside the state file (none there: nothing to read). */
export function localJournalOpener(state: string): PlanJournalOpener {
  return async (table) => {
    if (!existsSync(join(dirname(state), JOURNAL_STATE_FILE_NAME))) return undefined;
    const j = await openJournal({ local: true, state, table, readOnly: true }, 'dpi plan');
    return { journal: j.journal, close: () => j.close() };
  };
}

type DdbModule = typeof import('@aws-sdk/client-dynamodb');

/** CloudFormation mode: the DynamoDB journal table, only when it exists (DescribeTable first: a read never creates it). */
export function dynamoJournalOpener(o: { region?: string; profile?: string; state: string }): PlanJournalOpener {
  return async (table) => {
    // eslint-disable-next-line @typescript-eslint/no-require-imports, import/no-extraneous-dependencies
    const m = require('@aws-sdk/client-dynamodb') as DdbModule;
    if (o.profile) process.env.AWS_PROFILE = o.profile;
    const client = new m.DynamoDBClient(o.region ? { region: o.region } : {});
    try {
      await client.send(new m.DescribeTableCommand({ TableName: table }));
    } catch (e) {
      if ((e as { name?: string }).name === 'ResourceNotFoundException') return undefined;
      throw e;
    } finally {
      client.destroy();
    }
    const j = await openJournal({ local: false, state: o.state, table, region: o.region, profile: o.profile }, 'dpi plan');
    return { journal: j.journal, close: () => j.close() };
  };
}
