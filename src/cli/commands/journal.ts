/**
 * `dpi journal show|resolve <key>`: reads the handler's lifecycle journal (the DynamoDB table of the account and
 * region, or the `dpi local-deploy` journal with --local) and marks an attempt whose outcome only the service knows as
 * resolved, once the service has removed what it made (see docs/handler.md, "Residual cases").
 */
import { dirname, join } from 'node:path';
// commander is bundled into the dpi CLI by esbuild, so a devDependency is enough.
// eslint-disable-next-line import/no-extraneous-dependencies
import { Command } from 'commander';
import { DEFAULT_JOURNAL_TABLE } from '../../contract';
import { dynamoJournal, Journal, JournalRecord } from '../../handler/journal';
import { DEFAULT_STATE_FILE } from '../../local/defaults';
import { JOURNAL_STATE_FILE_NAME, JournalServer, startJournalServer } from '../../local/journal-server';
import { RunContext } from '../context';
import { CliError } from '../errors';

/** Where a command reads the lifecycle journal (the flags `dpi journal` and `dpi drift` share). */
export interface JournalFlags {
  local?: boolean;
  state: string;
  table: string;
  region?: string;
  profile?: string;
  endpoint?: string;
  json?: boolean;
}

/** States of attempts whose outcome the service has not confirmed (a POST sent, its answer lost). */
/** Waits (the journal polls while it creates its table). */
const sleep = (ms: number): Promise<void> => new Promise((r) => setTimeout(r, ms));

const UNCONFIRMED = new Set(['posting', 'creating', 'recording']);

/** An open journal: where it is (for messages), its DynamoDB-compatible endpoint when not DynamoDB itself, and how to close it. */
export interface OpenedJournal {
  readonly journal: Journal;
  readonly where: string;
  readonly endpoint?: string;
  close(): Promise<void>;
}

/** Opens the journal the flags name: the local-deploy journal (--local), a DynamoDB-compatible endpoint, or DynamoDB. */
export async function openJournal(flags: JournalFlags): Promise<OpenedJournal> {
  if (flags.local) {
    const file = join(dirname(flags.state), JOURNAL_STATE_FILE_NAME);
    let server: JournalServer;
    try {
      server = await startJournalServer({ stateFile: file });
    } catch (e) {
      throw new CliError((e as Error).message);
    }
    return {
      journal: dynamoJournal({ table: flags.table, endpoint: server.endpoint, sleep }),
      where: file,
      endpoint: server.endpoint,
      close: () => server.stop(),
    };
  }
  if (flags.endpoint) {
    return {
      journal: dynamoJournal({ table: flags.table, endpoint: flags.endpoint, sleep }),
      where: `table ${flags.table} at ${flags.endpoint}`,
      endpoint: flags.endpoint,
      close: async () => undefined,
    };
  }
  if (flags.profile) process.env.AWS_PROFILE = flags.profile;
  if (flags.region) process.env.AWS_REGION = flags.region;
  return {
    journal: dynamoJournal({ table: flags.table, sleep }),
    where: `DynamoDB table ${flags.table}${flags.region ? ` (${flags.region})` : ''}`,
    close: async () => undefined,
  };
}

function describe(r: JournalRecord<Record<string, unknown>>): string {
  const doc = r.doc;
  const what = [
    doc.identity !== undefined ? `identity ${String(doc.identity)}` : '',
    doc.subscriptionId !== undefined ? `subscription ${String(doc.subscriptionId)}` : '',
    typeof doc.postUnclear === 'string' ? `unclear: ${doc.postUnclear}` : '',
  ].filter((x) => x !== '').join(', ');
  return `${r.id}  ${r.state.padEnd(10)} ${r.physicalId ?? '-'}  ${r.updatedAt}${what ? `  ${what}` : ''}`;
}

function withOptions(cmd: Command): Command {
  return cmd
    .option('--local', 'the journal of dpi local-deploy (journal.json beside --state) instead of the DynamoDB table')
    .option('--state <file>', 'state file of dpi local-deploy (with --local)', DEFAULT_STATE_FILE)
    .option('--table <name>', 'journal table (the connection\'s journalTableName)', DEFAULT_JOURNAL_TABLE)
    .option('--region <region>', 'AWS region of the table (default: the AWS SDK\'s, e.g. AWS_REGION)')
    .option('--profile <name>', 'AWS profile (default: the AWS SDK\'s credential chain)')
    .option('--endpoint <url>', 'a DynamoDB-compatible endpoint instead of AWS (e.g. DynamoDB Local)')
    .option('--json', 'print JSON for scripts');
}

/** `dpi journal` */
export function journalCommand(ctx: RunContext): Command {
  const io = ctx.io;
  const journal = new Command('journal')
    .description('read the lifecycle journal of a resource, or resolve an attempt that only the service could clear');
  journal.addCommand(withOptions(new Command('show')
    .description('print the journal records of a resource (key <stack name>/<logical ID>)')
    .argument('<key>', 'resource key: <stack name>/<logical ID>, as error messages name it'))
    .action(async (key: string, flags: JournalFlags) => {
      const j = await openJournal(flags);
      try {
        const recs = await j.journal.records<Record<string, unknown>>(key);
        if (flags.json) {
          io.stdout.write(`${JSON.stringify(recs, undefined, 2)}\n`);
        } else if (recs.length === 0) {
          io.stdout.write(`no records for ${key} in ${j.where}\n`);
        } else {
          for (const r of recs) io.stdout.write(`${describe(r)}\n`);
        }
      } finally {
        await j.close();
      }
    }));
  journal.addCommand(withOptions(new Command('resolve')
    .description('mark the attempts of a resource whose outcome the service never confirmed as resolved (after the service removed '
      + 'what they made, or confirmed that they made nothing); the next deploy then starts anew')
    .argument('<key>', 'resource key: <stack name>/<logical ID>, as error messages name it'))
    .action(async (key: string, flags: JournalFlags) => {
      const j = await openJournal(flags);
      try {
        const recs = await j.journal.records<Record<string, unknown>>(key);
        const open_ = recs.filter((r) => UNCONFIRMED.has(r.state));
        if (open_.length === 0) {
          throw new CliError(`${key} has no attempt without a confirmed outcome in ${j.where} (${recs.length} record(s): `
            + `${recs.map((r) => r.state).join(', ') || 'none'}); nothing to resolve`);
        }
        const done: string[] = [];
        for (const r of open_) {
          await j.journal.save(r, 'abandoned', { ...r.doc, resolvedAt: new Date().toISOString(), resolvedFrom: r.state });
          done.push(r.id);
        }
        if (flags.json) io.stdout.write(`${JSON.stringify({ key, resolved: done }, undefined, 2)}\n`);
        else io.stdout.write(`resolved ${done.length} attempt(s) of ${key} in ${j.where}: ${done.join(', ')}; the next deploy creates the resource anew\n`);
      } finally {
        await j.close();
      }
    }));
  return journal;
}
