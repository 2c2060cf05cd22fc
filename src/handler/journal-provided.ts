/**
 * A lifecycle journal table the user supplied (`ServiceConnectionProps.journalTable`, a table managed in
 * CloudFormation): the handler never creates it, it only checks at first use that the table exists, is usable and has
 * the key schema the journal needs. See docs/handler.md ("The lifecycle journal").
 */
import type * as ddb from '@aws-sdk/client-dynamodb';
import {
  CREATED_JOURNAL_TABLES_ENV, DECLARED_JOURNAL_TABLES_ENV, JOURNAL_GUARD_SID, JOURNAL_ITEM_WRITES, JOURNAL_MARKER_TAG, JOURNAL_MARKER_VALUE,
  JOURNAL_TABLE_CHANGES, JOURNAL_WRITERS_SID, journalWriterPath, PROVIDED_JOURNAL_TABLES_ENV,
} from '../contract';
import { HandlerError } from './errors';
import { log } from './log';

export { PROVIDED_JOURNAL_TABLES_ENV } from '../contract';

/** The words of the error for a journal table that does not exist (the CLI recognizes it: src/cli/commands/journal-access.ts). */
export const MISSING_JOURNAL_TABLE = 'does not exist; the handler creates no table the app did not ask it to create';

/** The journal table does not exist (a supplied or declared table, which the handler never creates). */
export class MissingJournalTableError extends HandlerError {}

/** The key schema the journal needs: partition key `pk` and sort key `sk`, both strings. */
export const JOURNAL_KEY_SCHEMA = 'partition key pk (String) and sort key sk (String)';

/** A provider function's environment (the process environment in Lambda). */
export type JournalEnvironment = Readonly<Record<string, string | undefined>>;

function listOf(env: JournalEnvironment, name: string): string[] {
  return (env[name] ?? '').split(',').map((t) => t.trim()).filter((t) => t !== '');
}

/** The journal tables supplied by the connections of this function's stack (from its environment). */
export function providedJournalTables(env: JournalEnvironment = process.env): string[] {
  return listOf(env, PROVIDED_JOURNAL_TABLES_ENV);
}

/** The declared journals (`LifecycleJournal`) among the supplied tables (from the function's environment). */
export function declaredJournalTables(env: JournalEnvironment = process.env): string[] {
  return listOf(env, DECLARED_JOURNAL_TABLES_ENV);
}

/** The journal tables the app asked the handler to create (`journalTableName`; from the function's environment). */
export function createdJournalTables(env: JournalEnvironment = process.env): string[] {
  return listOf(env, CREATED_JOURNAL_TABLES_ENV);
}

/**
 * How the handler treats journal table `table` in a function with environment `env`: a declared journal is checked in
 * full (tag, deletion protection, write fence); a table the app asked the handler to create is created when missing;
 * any other table (supplied, or named by no list) is checked for its key schema and never created.
 */
export function journalMode(table: string, env: JournalEnvironment): 'declared' | 'create' | 'provided' {
  if (declaredJournalTables(env).includes(table)) return 'declared';
  if (providedJournalTables(env).includes(table)) return 'provided';
  return createdJournalTables(env).includes(table) ? 'create' : 'provided';
}

type DdbModule = typeof import('@aws-sdk/client-dynamodb');

function sdk(): DdbModule {
  // The Lambda runtime provides the SDK (external in the bundle); `dpi local-deploy` ships it as a dependency.
  // eslint-disable-next-line @typescript-eslint/no-require-imports, import/no-extraneous-dependencies
  return require('@aws-sdk/client-dynamodb') as DdbModule;
}

const TYPE_NAMES: Record<string, string> = { S: 'String', N: 'Number', B: 'Binary' };

/** What is wrong with a table's key schema for the journal (undefined when it is right). */
export function keySchemaProblem(table: ddb.TableDescription): string | undefined {
  const keys = table.KeySchema ?? [];
  const types = new Map((table.AttributeDefinitions ?? []).map((d) => [d.AttributeName, d.AttributeType]));
  const hash = keys.find((k) => k.KeyType === 'HASH')?.AttributeName;
  const range = keys.find((k) => k.KeyType === 'RANGE')?.AttributeName;
  if (hash === 'pk' && range === 'sk' && keys.length === 2 && types.get('pk') === 'S' && types.get('sk') === 'S') return undefined;
  const part = (name: string | undefined): string => (name === undefined ? 'none' : `${name} (${TYPE_NAMES[types.get(name) ?? ''] ?? types.get(name) ?? '?'})`);
  return `has partition key ${part(hash)} and sort key ${part(range)}`;
}

/**
 * Checks a supplied journal table before its first use: it must exist (the handler never creates it), become usable
 * (ACTIVE or UPDATING; waits up to 2 minutes while it is CREATING) and have the journal's key schema.
 */
export async function checkProvidedTable(client: ddb.DynamoDBClient, table: string, sleep: (ms: number) => Promise<void>,
  declared = false): Promise<void> {
  const m = sdk();
  const describe = async (): Promise<ddb.TableDescription | undefined> => {
    try {
      return (await client.send(new m.DescribeTableCommand({ TableName: table }))).Table;
    } catch (e) {
      if ((e as { name?: string }).name === 'ResourceNotFoundException') return undefined;
      throw e;
    }
  };
  const usable = (t: ddb.TableDescription | undefined): boolean => t?.TableStatus === 'ACTIVE' || t?.TableStatus === 'UPDATING';
  let t = await describe();
  for (let i = 0; i < 120 && t?.TableStatus === 'CREATING'; i++) {
    if (i === 0) log({ msg: 'waiting for the supplied lifecycle journal table to become ACTIVE', table });
    await sleep(1000);
    t = await describe();
  }
  if (t === undefined) {
    throw new MissingJournalTableError(`the lifecycle journal table ${table} ${MISSING_JOURNAL_TABLE} `
      + `(the connection's ${declared ? 'journal' : 'journalTable'}): deploy the journal (LifecycleJournal, or a table with ${JOURNAL_KEY_SCHEMA}) before the resources that use it`);
  }
  if (!usable(t)) {
    throw new HandlerError(`the lifecycle journal table ${table} (the connection's journalTable) is ${t.TableStatus ?? 'in an unknown state'}, not ACTIVE; `
      + 'deploy again once it is ACTIVE');
  }
  const problem = keySchemaProblem(t);
  if (problem) {
    throw new HandlerError(`the lifecycle journal table ${table} (the connection's journalTable) ${problem}; the journal needs ${JOURNAL_KEY_SCHEMA}: `
      + 'supply a table with that key schema');
  }
  if (declared) await checkDeclaredTable(client, t, sleep);
}


/**
 * A declared journal (`LifecycleJournal`) is used only when it is one: it carries the journal tag, its deletion
 * protection is on, and its resource policy denies item writes to every principal but the journal's writers. A table
 * someone made first under the journal's name, without that fence, is refused before any record is read or written.
 * (The local journal server answers the resource-policy calls; it reports no deletion protection, so that check is
 * made only where DynamoDB reports it.)
 */
async function checkDeclaredTable(client: ddb.DynamoDBClient, t: ddb.TableDescription, sleep: (ms: number) => Promise<void>): Promise<void> {
  const m = sdk();
  const table = t.TableName ?? '?';
  const refuse = (why: string): HandlerError => new HandlerError(`the lifecycle journal table ${table} (the connection's journal) ${why}; `
    + 'the handler uses a declared journal only as LifecycleJournal makes it: deploy the journal\'s stack, or check that the table is the one it made');
  if (t.DeletionProtectionEnabled === false) throw refuse('has deletion protection off');
  const arn = t.TableArn ?? '';
  // Tags and resource policies are eventually consistent: right after the journal's stack made or changed them, a
  // read may not show them yet. A missing tag or policy is asked again for about 20 seconds before it is refused.
  for (let attempt = 0; ; attempt++) {
    const again = attempt < 10;
    const tags = (await client.send(new m.ListTagsOfResourceCommand({ ResourceArn: arn }))).Tags ?? [];
    if (!tags.some((g) => g.Key === JOURNAL_MARKER_TAG && g.Value === JOURNAL_MARKER_VALUE)) {
      if (again) {
        await sleep(2000);
        continue;
      }
      throw refuse(`does not carry the tag ${JOURNAL_MARKER_TAG}=${JOURNAL_MARKER_VALUE}`);
    }
    let policy: string | undefined;
    try {
      policy = (await client.send(new m.GetResourcePolicyCommand({ ResourceArn: arn }))).Policy;
    } catch (e) {
      const name = (e as { name?: string }).name ?? '';
      if (name !== 'PolicyNotFoundException') throw e;
      if (again) {
        await sleep(2000);
        continue;
      }
      throw refuse('has no resource policy');
    }
    const problem = fenceProblem(policy, table);
    if (problem) throw refuse(problem);
    return;
  }
}

const list = (v: unknown): unknown[] => (Array.isArray(v) ? v : v === undefined ? [] : [v]);
const escape = (t: string): string => t.replace(/[.*+?^${}()|[\]\\]/g, '\\$&');
/** An IAM role or user ARN without wildcards (a maintainer; kept in step with src/connection/lifecycle-journal.ts). */
const PRINCIPAL_ARN = /^arn:aws[a-z-]*:iam::\d{12}:(role|user)\/[\w+=,.@/-]+$/;

/** What is wrong with one statement of the fence (undefined when it is as LifecycleJournal makes it). */
function statementProblem(st: Record<string, unknown>, actions: readonly string[], writers: RegExp | undefined): string | undefined {
  if (st.Effect !== 'Deny') return 'is not a Deny';
  if (st.NotAction !== undefined || st.NotPrincipal !== undefined || st.NotResource !== undefined) return 'uses NotAction, NotPrincipal or NotResource';
  const principal = st.Principal;
  if (!(principal === '*' || (list((principal as { AWS?: unknown } | undefined)?.AWS).length === 1 && list((principal as { AWS?: unknown }).AWS)[0] === '*'))) {
    return 'does not apply to every principal';
  }
  if (!list(st.Resource).every((r) => r === '*') || list(st.Resource).length === 0) return 'does not apply to the whole table';
  const given = list(st.Action).map(String);
  const missing = actions.filter((a) => !given.includes(a) && !given.includes('dynamodb:*') && !given.includes('*'));
  if (missing.length > 0) return `does not deny ${missing.join(', ')}`;
  const cond = (st.Condition ?? {}) as Record<string, Record<string, unknown>>;
  const ops = Object.keys(cond);
  if (ops.length !== 1 || ops[0] !== 'ArnNotLike' || Object.keys(cond.ArnNotLike ?? {}).join() !== 'aws:PrincipalArn') {
    return 'has conditions other than ArnNotLike aws:PrincipalArn';
  }
  const except = list(cond.ArnNotLike['aws:PrincipalArn']).map(String);
  const others = writers ? except.filter((a) => !writers.test(a)) : except;
  if (writers && others.length === except.length) return 'does not name the providers\' roles by their IAM path';
  if (except.length === 0 || others.some((a) => !PRINCIPAL_ARN.test(a))) return 'exempts a principal by a pattern (a wildcard) or not by its ARN';
  return undefined;
}

/**
 * What is wrong with a declared journal's resource policy (undefined when it is as LifecycleJournal makes it): exactly
 * its two Deny statements, to every principal, on the whole table, of at least their actions, with no exception but
 * principals by ARN (the providers' roles by their IAM path; maintainers and the deploying role without wildcards),
 * and nothing else (an Allow, another statement, a narrower resource, another condition) that could open it.
 */
export function fenceProblem(policy: string | undefined, table: string): string | undefined {
  let doc: { Statement?: unknown };
  try {
    doc = JSON.parse(policy ?? '') as { Statement?: unknown };
  } catch {
    return 'has a resource policy that is not JSON';
  }
  const statements = list(doc.Statement) as Array<Record<string, unknown>>;
  const sids = statements.map((x) => x?.Sid);
  if (statements.length !== 2 || !sids.includes(JOURNAL_WRITERS_SID) || !sids.includes(JOURNAL_GUARD_SID)) {
    return `has a resource policy that is not LifecycleJournal's (exactly the statements ${JOURNAL_WRITERS_SID} and ${JOURNAL_GUARD_SID})`;
  }
  const writers = new RegExp(`^arn:aws[a-z-]*:iam::\\d{12}:role${escape(journalWriterPath(table))}\\*$`);
  for (const st of statements) {
    const writing = st.Sid === JOURNAL_WRITERS_SID;
    const problem = statementProblem(st, writing ? JOURNAL_ITEM_WRITES : JOURNAL_TABLE_CHANGES, writing ? writers : undefined);
    if (problem) return `has a resource policy whose statement ${String(st.Sid)} ${problem}`;
  }
  return undefined;
}
