/**
 * `dpi journal show|resolve <key>`: reads the handler's lifecycle journal (the DynamoDB table of the account and
 * region, or the `dpi local-deploy` journal with --local) and marks an attempt whose outcome only the service knows as
 * resolved, once the service has removed what it made (see docs/handler.md, "Residual cases"). Before it abandons a
 * subscription create (`recording`) or a history request (`creating`), it asks the service whether the attempt made
 * something that still exists, and refuses if so (see `checkAttempt`).
 */
import { existsSync } from 'node:fs';
import { dirname, join } from 'node:path';
// commander is bundled into the dpi CLI by esbuild, so a devDependency is enough.
// eslint-disable-next-line import/no-extraneous-dependencies
import { Command } from 'commander';
import { DpiClient } from '../../client';
import { READ_MODES, ReadMode } from '../../emulator/core';
import { DEFAULT_REFRESH_TOKEN } from '../../emulator/fixtures';
import { Journal, JournalRecord } from '../../handler/journal';
import { KINDS } from '../../kinds';
import { CLI_HOOKS, CliHooks } from '../../kinds/registry/cli';
import { DEFAULT_STATE_FILE } from '../../local/defaults';
import { readState } from '../../local/state';
import { addConnectionOptions, ConnectionFlags, hasServiceAddress } from '../connection';
import { connectFor, RunContext } from '../context';
import { CliError, EXIT, toCliError } from '../errors';
import { renderTable, terminalWidth } from '../format';
import { loadPart } from '../load-part';
import { Progress, waitReporter } from '../waits';

import { JournalFlags, lockLocalState, openJournal as openAt, OpenedJournal } from './journal-access';
import { AttemptCheck, attemptOf, Check, recordedCreateCheck, Service } from './journal-attempts';
import { chooseJournalTable, tableUseOf } from './journal-table';

export type { JournalFlags, OpenedJournal } from './journal-access';
export { openJournal } from './journal-access';

/**
 * Opens the journal of a `dpi journal` command: with --local, the table the local-deploy state's Custom::Dpi* resources
 * use (`--table` must be one of theirs); otherwise `--table`, else the default table. A missing table is never created.
 */
async function openJournal(flags: JournalFlags, command: string): Promise<OpenedJournal> {
  if (!flags.local) return openAt(flags.table ? flags : { ...flags, tableFrom: 'the default table; pass --table NAME, the connection\'s journal table' }, command);
  let state;
  try {
    state = readState(flags.state);
  } catch (e) {
    throw new CliError((e as Error).message);
  }
  const uses = Object.values(state.resources).filter((r) => r.type.startsWith('Custom::Dpi')).map((r) => tableUseOf(r.stack, r.logicalId, r.properties));
  const chosen = chooseJournalTable(flags.table, uses, { command, source: `the local-deploy state ${flags.state}` });
  return openAt({ ...flags, table: chosen.table, tableFrom: chosen.from }, command);
}

/** States of attempts whose outcome the service has not confirmed (a POST sent, its answer lost): every kind's. */
const UNCONFIRMED = new Set<string>(KINDS.flatMap((k) => k.unconfirmedStates));

/** The checks of the kinds' own unconfirmed states (by state; `recording` is the shared create's). */
const ATTEMPT_CHECKS = new Map<string, AttemptCheck>(Object.values(CLI_HOOKS).flatMap((h: CliHooks) => Object.entries(h.attemptChecks ?? {})));

function describe(r: JournalRecord<Record<string, unknown>>): string {
  const doc = r.doc;
  const what = [
    doc.identity !== undefined ? `identity ${String(doc.identity)}` : '',
    doc.subscriptionId !== undefined ? `subscription ${String(doc.subscriptionId)}` : '',
    typeof doc.postUnclear === 'string' ? `unclear: ${doc.postUnclear}` : '',
  ].filter((x) => x !== '').join(', ');
  return `${r.id}  ${r.state.padEnd(10)} ${r.physicalId ?? '-'}  ${r.updatedAt}${what ? `  ${what}` : ''}`;
}

/** The message of `dpi journal show` for a key without records: the key, the table, and where the keys are listed. */
function noRecords(key: string, where: string): string {
  const slash = key.indexOf('/');
  const prefix = slash > 0 ? ` --prefix '${key.slice(0, slash + 1)}'` : '';
  return `no journal records for key '${key}' in ${where}: a key is <stack name>/<logical ID> as the handler's messages name it `
    + `(a fleet pipeline's is its JournalKey); run dpi journal list${prefix} with the same options to see the keys it has`;
}

/** One resource key of `dpi journal list`. */
interface KeySummary {
  readonly key: string;
  readonly records: number;
  /** The state of its newest record (the latest attempt). */
  readonly state: string;
  readonly physicalId?: string;
  readonly updatedAt: string;
}

/** The keys of scanned records, each with its newest record (record IDs sort by creation time), in key order. */
function summarize(records: ReadonlyArray<JournalRecord<unknown>>): KeySummary[] {
  const byKey = new Map<string, { count: number; latest: JournalRecord<unknown> }>();
  for (const r of records) {
    const had = byKey.get(r.key);
    byKey.set(r.key, { count: (had?.count ?? 0) + 1, latest: !had || r.id > had.latest.id ? r : had.latest });
  }
  return [...byKey.entries()].sort(([a], [b]) => (a < b ? -1 : a > b ? 1 : 0)).map(([key, { count, latest }]) => ({
    key,
    records: count,
    state: latest.state,
    ...(latest.physicalId !== undefined ? { physicalId: latest.physicalId } : {}),
    updatedAt: latest.updatedAt,
  }));
}

function withOptions(cmd: Command): Command {
  return cmd
    .option('--local', 'the journal of dpi local-deploy (journal.json beside --state) instead of the DynamoDB table')
    .option('--state <file>', 'state file of dpi local-deploy (with --local)', DEFAULT_STATE_FILE)
    .option('--table <name>', 'lifecycle journal table (default: the connection\'s journal table, journalTableName or journalTable: with '
      + '--local the one the state\'s resources name, else dpi-lifecycle-journal); never created: a missing table is an error')
    .option('--region <region>', 'AWS region of the table (default: the AWS SDK\'s, e.g. AWS_REGION)')
    .option('--profile <name>', 'AWS profile (default: the AWS SDK\'s credential chain)')
    .option('--endpoint <url>', 'a DynamoDB-compatible endpoint instead of AWS (e.g. DynamoDB Local)')
    .option('--json', 'print JSON for scripts');
}

/** The flags of `dpi journal resolve`: where the journal is, and the service that shows what an attempt made. */
export interface ResolveFlags extends JournalFlags, ConnectionFlags {
  /** Resolve even when what an attempt may have made exists: every such record is left as it is in the service. */
  keepCandidates?: boolean;
}


/**
 * The service an attempt is checked against: the connection settings; or, with --local and no service address, the
 * embedded emulator of `dpi local-deploy` on its state (`emulator-state.json` beside --state), loaded only then.
 */
async function serviceFor(ctx: RunContext, flags: ResolveFlags, why: string, progress: Progress): Promise<Service> {
  if (flags.local && !hasServiceAddress(flags, ctx.io.env)) {
    const stateFile = join(dirname(flags.state), 'emulator-state.json');
    if (!existsSync(stateFile)) {
      throw new CliError(`${why}; checking it needs the service: set DPI_BASE_URL and DPI_REFRESH_TOKEN (the emulator dpi local-deploy `
        + `used with --emulator), since ${stateFile} does not exist; nothing was changed`);
    }
    const reads = (ctx.io.env.DPI_EMULATOR_READS ?? 'minimal') as ReadMode;
    if (!(READ_MODES as readonly string[]).includes(reads)) throw new CliError(`DPI_EMULATOR_READS: '${reads}' is not a read mode; use one of ${READ_MODES.join(', ')}`);
    const { startEmulator } = loadPart<typeof import('../../emulator/server')>('emulator/server', '../emulator/server');
    let emu: Awaited<ReturnType<typeof startEmulator>>;
    try {
      emu = await startEmulator({ host: '127.0.0.1', port: 0, stateFile, reads, otherClients: true });
    } catch (e) {
      throw new CliError((e as Error).message);
    }
    const u = emu.url;
    ctx.secrets.add(DEFAULT_REFRESH_TOKEN);
    // Reads only (a resolve changes the journal, never the service): the client's own attempts, and a line per
    // rate-limit wait on stderr.
    const client = new DpiClient({
      endpoints: { baseUrl: u, subscriptionsUrl: u, accountUrl: u, userUrl: u, remoteIdentityUrl: u, authUrl: u },
      refreshToken: DEFAULT_REFRESH_TOKEN,
      requestTimeoutMs: 30_000,
      onWait: waitReporter(ctx.io, progress),
    });
    const running = emu;
    return { client, origins: [u], close: () => running.stop() };
  }
  if (!hasServiceAddress(flags, ctx.io.env)) {
    throw new CliError(`${why}; checking it needs the service: set DPI_BASE_URL and DPI_REFRESH_TOKEN (or pass --base-url and `
      + '--refresh-token-file); nothing was changed');
  }
  const c = connectFor(ctx, flags, { progress });
  return { client: c.client, origins: c.origins, close: async () => undefined };
}


/**
 * Checks, before it is abandoned, whether an unconfirmed attempt made something the service still shows: the shared
 * create (`recording`, `recordedCreateCheck`) or a kind's own unconfirmed state (its `attemptChecks`, e.g. a history
 * request's `creating`). A state without a check (a unified create's `posting`: only the service can find and remove
 * what it made) is not checked (the step the residual case names is taken after the service removed it).
 */
async function checkAttempt(r: JournalRecord<Record<string, unknown>>, journal: Journal, service: () => Promise<Service>): Promise<Check> {
  const check = r.state === 'recording' ? recordedCreateCheck : ATTEMPT_CHECKS.get(r.state);
  return check ? check(r, journal, service) : {};
}

/** `dpi journal` */
export function journalCommand(ctx: RunContext): Command {
  const io = ctx.io;
  const journal = new Command('journal')
    .description('read the lifecycle journal of a resource, or resolve an attempt that only the service could clear');
  journal.addCommand(withOptions(new Command('show')
    .description('print the journal records of a resource (key <stack name>/<logical ID>); exit 2 when it has none')
    .argument('<key>', 'resource key: <stack name>/<logical ID>, as error messages name it'))
    .action(async (key: string, flags: JournalFlags) => {
      const j = await openJournal({ ...flags, readOnly: true }, 'dpi journal show');
      try {
        const recs = await j.journal.records<Record<string, unknown>>(key);
        if (recs.length === 0) throw new CliError(noRecords(key, j.where), EXIT.FAILURE);
        if (flags.json) io.stdout.write(`${JSON.stringify(recs, undefined, 2)}\n`);
        else for (const r of recs) io.stdout.write(`${describe(r)}\n`);
      } finally {
        await j.close();
      }
    }));
  journal.addCommand(withOptions(new Command('list')
    .description('list the resource keys the journal has records of, with the state of each one\'s newest record')
    .option('--prefix <key prefix>', 'only keys that start with this, e.g. MyStack/'))
    .action(async (flags: JournalFlags & { prefix?: string }) => {
      const j = await openJournal({ ...flags, readOnly: true }, 'dpi journal list');
      try {
        const keys = summarize((await j.journal.scan(flags.prefix)).records);
        if (flags.json) {
          io.stdout.write(`${JSON.stringify(keys, undefined, 2)}\n`);
        } else if (keys.length === 0) {
          io.stdout.write(`no records${flags.prefix ? ` with a key that starts with ${flags.prefix}` : ''} in ${j.where}\n`);
        } else {
          io.stdout.write(renderTable(['KEY', 'RECORDS', 'LATEST STATE', 'PHYSICAL ID', 'UPDATED'],
            keys.map((k) => [k.key, String(k.records), k.state, k.physicalId ?? '-', k.updatedAt]), terminalWidth(io)));
        }
      } finally {
        await j.close();
      }
    }));
  journal.addCommand(addConnectionOptions(withOptions(new Command('resolve')
    .description('mark the attempts of a resource whose outcome the service never confirmed as resolved (after the service removed '
      + 'what they made, or confirmed that they made nothing); the next deploy then starts anew. A subscription create or history '
      + 'request is first checked against the service (connection settings; with --local and none, the embedded emulator\'s state): '
      + 'if what it may have made exists, nothing is resolved (exit 2) unless --keep-candidates')
    .argument('<key>', 'resource key: <stack name>/<logical ID>, as error messages name it')
    .option('--keep-candidates', 'resolve even when records the attempt may have made exist; they are left as they are in the service '
      + '(end the one this resource made in the service first, if you know it)')))
    .action(async (key: string, flags: ResolveFlags) => {
      // --local: the local journal's files are written; not while a dpi local-deploy uses the state.
      const unlock = flags.local ? lockLocalState(flags.state) : undefined;
      let j: OpenedJournal;
      try {
        j = await openJournal(flags, 'dpi journal resolve');
      } catch (e) {
        unlock?.();
        throw e;
      }
      let opened: Service | undefined;
      try {
        const recs = await j.journal.records<Record<string, unknown>>(key);
        const open_ = recs.filter((r) => UNCONFIRMED.has(r.state));
        if (open_.length === 0) {
          throw new CliError(`${key} has no attempt without a confirmed outcome in ${j.where} (${recs.length} record(s): `
            + `${recs.map((r) => r.state).join(', ') || 'none'}); nothing to resolve`);
        }
        // Every attempt is checked before any is abandoned: a refusal changes nothing.
        let checking = 0;
        const progress = (): string => `checking attempt ${checking} of ${open_.length} of ${key}`;
        const service = async (r: JournalRecord<unknown>): Promise<Service> => {
          opened ??= await serviceFor(ctx, flags, `${key}: attempt ${r.id} (${r.state}) may have made a service record`, progress);
          return opened;
        };
        const refusals: string[] = [];
        for (const r of open_) {
          checking++;
          let check: Check;
          try {
            check = await checkAttempt(r, j.journal, () => service(r));
          } catch (e) {
            if (e instanceof CliError) throw e;
            const err = toCliError(e, { origins: opened?.origins });
            throw new CliError(`${key}: attempt ${r.id} (${r.state}) could not be checked against the service (${err.message}); nothing was changed`);
          }
          if (check.refusal) refusals.push(check.refusal);
          else if (check.note) io.stderr.write(`checked ${check.note}\n`);
        }
        const pipelines = refusals.filter((x) => x.includes('belongs to a notification pipeline that exists'));
        if (pipelines.length > 0) throw new CliError(`${key}: not resolved, nothing was changed: ${pipelines.join('; ')}`);
        if (refusals.length > 0 && flags.keepCandidates !== true) {
          throw new CliError(`${key}: not resolved, nothing was changed: ${refusals.join('; ')}; or run it with --keep-candidates to leave them as they are`);
        }
        for (const r of refusals) io.stderr.write(`left as it is in the service (--keep-candidates): ${r}\n`);
        const done: string[] = [];
        for (const r of open_) {
          await j.journal.save(r, 'abandoned', { ...r.doc, resolvedAt: new Date().toISOString(), resolvedFrom: r.state });
          const a = r.state === 'recording' ? attemptOf(r.doc) : undefined;
          // The creates lock, if this attempt still holds it (src/handler/creates.ts: kind `sub#<product>`, the
          // identity's part or the whole product, member `<key>|<record ID>`): other creates no longer wait for it to go stale.
          if (a !== undefined && a !== 'unreadable') {
            await j.journal.unlock(`sub#${a.product}`, `${r.key}|${r.id}`);
            if (a.identity !== undefined) await j.journal.unlock(`sub#${a.product}`, `${r.key}|${r.id}`, a.identity);
          }
          done.push(r.id);
        }
        if (flags.json) io.stdout.write(`${JSON.stringify({ key, resolved: done }, undefined, 2)}\n`);
        else io.stdout.write(`resolved ${done.length} attempt(s) of ${key} in ${j.where}: ${done.join(', ')}; the next deploy creates the resource anew\n`);
      } finally {
        await opened?.close();
        await j.close();
        unlock?.();
      }
    }));
  return journal;
}
