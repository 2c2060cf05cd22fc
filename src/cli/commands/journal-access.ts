/**
 * How the commands that read the lifecycle journal (`dpi journal`, `dpi orphans`, `dpi drift`) open it, and how its
 * failures are said to the person running the CLI. The journal's own messages advise the deploy ("check that the
 * provider role may use the table"): the CLI reads the table with the AWS SDK's credential chain of its user, so its
 * messages name what that user can check instead (AWS credentials, --profile, --region, --endpoint, --local).
 */
import { existsSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { DEFAULT_JOURNAL_TABLE } from '../../contract';
import { dynamoJournal, Journal, JournalOptions } from '../../handler/journal';
import { MISSING_JOURNAL_TABLE } from '../../handler/journal-provided';
import { JOURNAL_STATE_FILE_NAME, JournalServer, startJournalServer } from '../../local/journal-server';
import { lockState, readState } from '../../local/state';
import { CliError } from '../errors';

/** Where a command reads the lifecycle journal (the flags `dpi journal`, `dpi drift` and `dpi orphans` share). */
export interface JournalFlags {
  local?: boolean;
  state: string;
  /** The table (`--table`; the commands fill it in from their stacks' resources when it is not given: journal-table.ts). */
  table?: string;
  /** Where the table's name came from (`--table`, the resources' connection, the default), said when it does not exist. */
  tableFrom?: string;
  region?: string;
  profile?: string;
  endpoint?: string;
  json?: boolean;
  /**
   * Only reads (`dpi plan`, `dpi drift` and `dpi orphans` without `--fix`, `dpi journal show|list`): with --local the
   * local-deploy journal is opened read-only (its files are never written, so a `dpi local-deploy` running meanwhile
   * loses nothing); a command that writes takes the local-deploy state's lock instead.
   */
  readOnly?: boolean;
}

/** An open journal: where it is (for messages), its DynamoDB-compatible endpoint when not DynamoDB itself, and how to close it. */
export interface OpenedJournal {
  readonly journal: Journal;
  /** The table read. */
  readonly table: string;
  readonly where: string;
  readonly endpoint?: string;
  close(): Promise<void>;
}

/**
 * Test seam: how the journal is made from its options (default: the handler's DynamoDB journal). The CLI's journal is
 * always a "provided" one: the handler's `checkProvidedTable` checks that the table exists and has the journal's key
 * schema, and nothing here ever creates a table (a read of a missing table must not make an empty one, which would then
 * read as "nothing is owned").
 */
export const journalSeams: { make: (opts: JournalOptions) => Journal } = {
  make: (opts) => dynamoJournal(opts),
};

/** Waits (the journal polls while it creates its table). */
const sleep = (ms: number): Promise<void> => new Promise((r) => setTimeout(r, ms));

/**
 * Opens the journal the flags name: the local-deploy journal (--local), a DynamoDB-compatible endpoint, or DynamoDB.
 * Every failure of the journal's calls is said for the CLI (`journalFailure`); `command` names the command in them.
 */
export async function openJournal(flags: JournalFlags, command = 'dpi'): Promise<OpenedJournal> {
  const table = flags.table !== undefined && flags.table !== '' ? flags.table : DEFAULT_JOURNAL_TABLE;
  const from = flags.tableFrom ?? (flags.table ? '--table' : 'the default table');
  const missing = (where: string, check: string): CliError => new CliError(`the lifecycle journal table ${table} (${from}) does not exist `
    + `${where}; ${command} only reads a journal table and never creates one: ${check}`);
  if (flags.local) {
    const file = join(dirname(flags.state), JOURNAL_STATE_FILE_NAME);
    // No local journal yet: nothing was ever recorded by the local runner's handler, which is the truth there, unless the
    // state shows deployed resources or failed removals: then the journal was lost, and reading it as empty would say
    // "nothing is owned" of records that are.
    if (!existsSync(file) && !existsSync(`${file}.wal`)) {
      const state = existsSync(flags.state) ? readState(flags.state) : undefined;
      const made = state ? Object.values(state.resources).filter((r) => r.type.startsWith('Custom::Dpi')).length + state.orphans.length : 0;
      if (made > 0) {
        throw new CliError(`the local-deploy journal ${file} does not exist, but the state ${flags.state} holds ${made} Custom::Dpi resource(s) `
          + `or pending clean-up(s): the journal that recorded them is lost, so ${command} cannot tell what they own; restore ${file} `
          + '(or destroy the local deployment with dpi local-deploy --destroy and deploy it again)');
      }
      return emptyJournal(table, `${file} (does not exist yet: nothing recorded)`, command);
    }
    let server: JournalServer;
    try {
      server = await startJournalServer({ stateFile: file, readOnly: flags.readOnly === true });
    } catch (e) {
      throw new CliError((e as Error).message);
    }
    const where = file;
    const notThere = (): CliError => missing(`in the local-deploy journal ${file}`, 'check --table (default: the table of the connection of the '
      + 'local-deploy state\'s resources, journalTableName or journalTable) and --state (the state the stacks were deployed with)');
    return {
      journal: guarded(journalSeams.make({ table, endpoint: server.endpoint, sleep, provided: true }),
        (e) => (isMissingTable(e) ? notThere() : journalFailure(e, { what: `the lifecycle journal (${where})`, command, local: true }))),
      table,
      where,
      endpoint: server.endpoint,
      close: () => server.stop(),
    };
  }
  if (flags.endpoint) {
    const where = `table ${table} at ${flags.endpoint}`;
    const endpoint = flags.endpoint;
    const notThere = (): CliError => missing(`at ${endpoint}`, 'check --table (default: the connection\'s journal table, journalTableName or '
      + 'journalTable) and --endpoint');
    return {
      journal: guarded(journalSeams.make({ table, endpoint, sleep, provided: true }),
        (e) => (isMissingTable(e) ? notThere() : journalFailure(e, { what: `the lifecycle journal (${where})`, command, endpoint }))),
      table,
      where,
      endpoint,
      close: async () => undefined,
    };
  }
  if (flags.profile) process.env.AWS_PROFILE = flags.profile;
  if (flags.region) process.env.AWS_REGION = flags.region;
  const where = `DynamoDB table ${table}${flags.region ? ` (${flags.region})` : ''}`;
  const region = flags.region ?? process.env.AWS_REGION ?? process.env.AWS_DEFAULT_REGION;
  const notThere = (): CliError => missing(`in ${region ? `region ${region}` : 'the AWS SDK\'s region'}${flags.profile ? ` (profile ${flags.profile})` : ''}`,
    'check --table (default: the connection\'s journal table, journalTableName or journalTable), --region and --profile (the account and '
    + 'region the stacks were deployed to)');
  return {
    journal: guarded(journalSeams.make({ table, sleep, provided: true }),
      (e) => (isMissingTable(e) ? notThere() : awsFailure(e, `the lifecycle journal (${where})`, command))),
    table,
    where,
    close: async () => undefined,
  };
}

/**
 * Takes the `dpi local-deploy` state's lock for a command that writes the local journal (--local with --fix, `dpi journal
 * resolve`): a running local-deploy holds it, and two writers of the journal's files would lose each other's writes.
 * Returns the release.
 */
export function lockLocalState(stateFile: string): () => void {
  try {
    return lockState(stateFile);
  } catch (e) {
    throw new CliError((e as Error).message);
  }
}

/** Whether an error is the provided-table check's "does not exist" (src/handler/journal-provided.ts). */
function isMissingTable(e: unknown): boolean {
  return (e instanceof Error ? e.message : String(e)).includes(MISSING_JOURNAL_TABLE);
}

/** The journal of `--local` before the local runner wrote one: empty; a write (a --fix) is refused. */
function emptyJournal(table: string, where: string, command: string): OpenedJournal {
  const refuse = async (): Promise<never> => {
    throw new CliError(`${command}: there is no local-deploy journal (${where}); nothing to change`);
  };
  return {
    journal: {
      records: async () => [],
      create: refuse,
      save: refuse,
      claim: refuse,
      owners: async () => new Map<string, string>(),
      transfer: refuse,
      lock: refuse,
      unlock: refuse,
      fact: async () => undefined,
      setFact: refuse,
      dropFact: refuse,
      scan: async () => ({ records: [], claims: [] }),
    },
    table,
    where,
    close: async () => undefined,
  };
}

/** A journal whose every call's failure goes through `fail`. */
function guarded(inner: Journal, fail: (e: unknown) => Error): Journal {
  const call = async <T>(fn: () => Promise<T>): Promise<T> => {
    try {
      return await fn();
    } catch (e) {
      throw fail(e);
    }
  };
  return {
    records: (key) => call(() => inner.records(key)),
    create: (key, state, doc, physicalId) => call(() => inner.create(key, state, doc, physicalId)),
    save: (rec, state, doc, physicalId) => call(() => inner.save(rec, state, doc, physicalId)),
    claim: (kind, id, owner) => call(() => inner.claim(kind, id, owner)),
    owners: (kind, ids) => call(() => inner.owners(kind, ids)),
    transfer: (kind, id, from, to) => call(() => inner.transfer(kind, id, from, to)),
    lock: (kind, member, staleBefore, part) => call(() => inner.lock(kind, member, staleBefore, part)),
    unlock: (kind, member, part) => call(() => inner.unlock(kind, member, part)),
    fact: (kind, name) => call(() => inner.fact(kind, name)),
    setFact: (kind, name, value, expected) => call(() => inner.setFact(kind, name, value, expected)),
    dropFact: (kind, name) => call(() => inner.dropFact(kind, name)),
    scan: (prefix) => call(() => inner.scan(prefix)),
  };
}

/** The journal's advice to the deploy, which does not apply to the CLI. */
const PROVIDER_ROLE_ADVICE = /;\s*check that the provider role may use the table, then deploy again\s*$/;

/** The ways to read a journal that need no AWS credentials (said with every AWS failure). */
const NO_AWS = '--local (the dpi local-deploy journal) and --endpoint URL (a DynamoDB-compatible journal) need no AWS credentials';

/** The text of an error: its name and message (the journal puts the SDK error's name into its message). */
function textOf(e: unknown): string {
  return `${(e as { name?: string }).name ?? ''}: ${e instanceof Error ? e.message : String(e)}`;
}

/** A message without the deploy's advice, cut to a readable length. */
function messageOf(e: unknown): string {
  const t = (e instanceof Error ? e.message : String(e)).replace(PROVIDER_ROLE_ADVICE, '');
  return t.length > 300 ? `${t.slice(0, 300)}...` : t;
}

/**
 * The error of an AWS call of a command itself (the journal table, CloudFormation), said for the CLI's user: which
 * credentials or region are missing, unknown or rejected, and what to check; never the deploy's provider role.
 * A `CliError` is returned as it is; an error it cannot tell is returned as it is unless it carries the journal's
 * advice to the deploy, which is replaced.
 */
export function awsFailure(e: unknown, what: string, command = 'dpi'): Error {
  if (e instanceof CliError) return e;
  const text = textOf(e);
  const region = process.env.AWS_REGION ?? process.env.AWS_DEFAULT_REGION;
  if (/CredentialsProviderError|Could not load credentials|credential is missing|no credentials|Token is expired.*sso|SSO session/i.test(text)) {
    return new CliError(`${command} has no AWS credentials to read ${what}: the AWS SDK's credential chain found none (AWS_ACCESS_KEY_ID and `
      + 'AWS_SECRET_ACCESS_KEY, AWS_PROFILE or --profile, an SSO session, or an instance or container role); set them (and --region), '
      + `or: ${NO_AWS}`);
  }
  if (/Region is missing|region.*(not set|missing)/i.test(text)) {
    return new CliError(`${command} has no AWS region to read ${what}: pass --region or set AWS_REGION (or a profile with a region); ${NO_AWS}`);
  }
  if (/Invalid region|ENOTFOUND|EAI_AGAIN|getaddrinfo/i.test(text)) {
    const host = /(?:ENOTFOUND|EAI_AGAIN)\s+([A-Za-z0-9.-]+[A-Za-z0-9])/.exec(text)?.[1];
    return new CliError(`${command} cannot reach AWS to read ${what}${host ? ` (${host} is not found)` : ''}: check --region `
      + `(${region ? `'${region}'` : 'none set'}: is it an AWS region, the one of the table?) and the network; ${NO_AWS}`);
  }
  if (/ExpiredToken|UnrecognizedClient|InvalidClientTokenId|security token included in the request is (invalid|expired)|InvalidSignature|SignatureDoesNotMatch/i.test(text)) {
    return new CliError(`the AWS credentials of ${command} were rejected while reading ${what} (${messageOf(e)}): refresh them `
      + `(e.g. aws sso login) or choose others with --profile, and check --region${region ? ` ('${region}': a region your account has enabled?)` : ''}; ${NO_AWS}`);
  }
  if (/AccessDenied|not authorized to perform/i.test(text)) {
    if (/CreateTable/.test(text)) {
      return new CliError(`${what} does not exist${region ? ` in ${region}` : ''} (the credentials of ${command} may not create it, nor should they): `
        + 'check --table (the connection\'s journal table, journalTableName or journalTable), --region and --profile (the account the stacks were deployed to)');
    }
    return new CliError(`the AWS credentials of ${command} may not read ${what} (${messageOf(e)}): the commands need `
      + 'dynamodb:DescribeTable, dynamodb:Query and dynamodb:Scan on the journal table, and (dpi orphans, dpi drift) '
      + 'cloudformation:DescribeStacks, ListStackResources and GetTemplate on the stacks (and ListExports where a journal table is imported); '
      + 'use credentials that may, or --profile');
  }
  const message = e instanceof Error ? e.message : String(e);
  if (PROVIDER_ROLE_ADVICE.test(message)) {
    return new CliError(`${messageOf(e)}; ${command} read it with the AWS SDK's credential chain: check the network, --region and the `
      + `credentials (--profile); ${NO_AWS}`);
  }
  return e instanceof Error ? e : new Error(message);
}

/** A failure of a journal at a DynamoDB-compatible endpoint (--endpoint) or of the local-deploy journal (--local). */
export function journalFailure(e: unknown, at: { what: string; command: string; endpoint?: string; local?: boolean }): Error {
  if (e instanceof CliError) return e;
  const message = e instanceof Error ? e.message : String(e);
  if (!PROVIDER_ROLE_ADVICE.test(message)) return e instanceof Error ? e : new Error(message);
  const check = at.endpoint !== undefined
    ? `check that --endpoint ${at.endpoint} is a running DynamoDB-compatible endpoint (e.g. DynamoDB Local) and --table`
    : 'run it again (another dpi command may hold the local journal); the file is kept as it is';
  return new CliError(`${messageOf(e)}; ${at.command} could not read ${at.what}: ${check}`);
}
