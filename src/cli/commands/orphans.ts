/**
 * `dpi orphans`: the lifecycle journal's records that still hold something in the service while their stack or
 * logical resource no longer exists (CloudFormation says so, or the `dpi local-deploy` state with --local), with what
 * each still holds. Records the resource made are **orphans** (`--fix` ends them the way a Delete would, by running
 * the handler's own Delete in process); records that are the user's to keep (removal policy RETAIN, adopted) are
 * **retained** (`--fix` releases them, nothing is ended); records the service refuses to show are **refused**
 * (nothing is done). See docs/cli.md ("dpi orphans") and docs/handler.md ("Recovery paths and residual cases").
 *
 * Parts: orphans-judge.ts (what is deployed, whose a record is), orphans-reads.ts (the service reads),
 * orphans-holdings.ts (what a record holds: each kind's `holdings` hook, src/kinds/<kind>/tools/orphans.ts), orphans-fix.ts
 * (`--fix`).
 */
import { existsSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { DpiClient } from '../../client';
import { DEFAULT_JOURNAL_TABLE } from '../../contract';
import { DEFAULT_REFRESH_TOKEN } from '../../emulator/fixtures';
import { defaultHandlerPath, HandlerModule, loadHandler } from '../../local/handler';
import { LocalState, readState } from '../../local/state';
import { askOnStdin } from '../ask';
import { ConnectionFlags, connect, resolveEndpoints } from '../connection';
import { RunContext } from '../context';
import { CloudFormationSender, cloudFormationClient, deployedResources } from '../deployed';
import { CliError, EXIT, toCliError } from '../errors';
import { terminalWidth } from '../format';
import { loadPart } from '../load-part';
import type { Progress } from '../waits';
import { awsFailure, JournalFlags, lockLocalState, openJournal } from './journal-access';
import { chooseJournalTable, dpiPropertiesOf, exportLookup, tableUseOf } from './journal-table';
import { dropFixedCleanups, fix } from './orphans-fix';
import { describeHolding, looseClaims, readAhead, ServiceReads } from './orphans-holdings';
import { cloudView, DeployedView, DONE, findOrphans, localView, LooseClaim, Orphan, Rec, renderOrphans } from './orphans-judge';

export interface OrphansFlags extends ConnectionFlags, JournalFlags {
  prefix?: string;
  fix?: boolean;
  yes?: boolean;
  handlerLogs?: boolean;
}

/**
 * Test seams: a CloudFormation client instead of the SDK's, the interactive confirmation (default: stdin is a
 * terminal, and a `y` answer on it), and the handler `--fix` runs (default: the bundled one).
 */
export const orphansSeams: {
  cloudFormation?: CloudFormationSender;
  stdinIsTTY: () => boolean;
  ask: (question: string) => Promise<string>;
  handler?: HandlerModule;
} = {
  stdinIsTTY: () => process.stdin.isTTY === true,
  ask: askOnStdin,
};

/** Whether the command line or the environment names a service address. */
function hasAddress(flags: ConnectionFlags, env: Record<string, string | undefined>): boolean {
  const f = flags as Record<string, unknown>;
  return ['baseUrl', 'subscriptionsUrl', 'accountUrl', 'userUrl', 'remoteIdentityUrl', 'authUrl'].some((k) => f[k] !== undefined)
    || Object.keys(env).some((k) => /^DPI_[A-Z_]*URL$/.test(k) && (env[k] ?? '').trim() !== '');
}

/** The service side of a run. */
interface Service {
  readonly client: DpiClient;
  readonly urls: Record<string, string>;
  readonly token: string;
  readonly origins: string[];
  /** Sets what the wait lines (the service's rate limit, on stderr) say the run has done so far. */
  setProgress(progress: Progress | undefined): void;
  stop(): Promise<void>;
}

/** The service connection: the connection options, or with --local and no address the embedded emulator of the state. */
async function serviceFor(ctx: RunContext, flags: OrphansFlags): Promise<Service> {
  if (flags.local && !hasAddress(flags, ctx.io.env)) {
    const stateFile = join(dirname(flags.state), 'emulator-state.json');
    if (!existsSync(stateFile)) {
      throw new CliError(`no service address: set DPI_BASE_URL or pass --base-url URL (the emulator dpi local-deploy used); ${stateFile} `
        + 'does not exist, so the state was not deployed to an embedded emulator');
    }
    const { startEmulator } = loadPart<typeof import('../../emulator/server')>('emulator/server', '../emulator/server');
    const emu = await startEmulator({ port: 0, stateFile, otherClients: true });
    ctx.secrets.add(DEFAULT_REFRESH_TOKEN);
    ctx.io.stderr.write(`No service address: using the embedded emulator of ${stateFile} at ${emu.url} (as dpi local-deploy does)\n`);
    const base = { baseUrl: emu.url };
    const c = connect(base, { ...ctx.io, env: { DPI_REFRESH_TOKEN: DEFAULT_REFRESH_TOKEN } });
    const urls = resolveEndpoints(base, {}) as unknown as Record<string, string>;
    return { client: c.client, urls, token: DEFAULT_REFRESH_TOKEN, origins: c.origins, setProgress: c.setProgress, stop: () => emu.stop() };
  }
  // Outside --local the journal table the deploy's provider shares its request budget in is the one read here.
  const table = flags.table ?? DEFAULT_JOURNAL_TABLE;
  const shared = !flags.local && flags.budgetTable === undefined;
  const c = connect(shared ? { ...flags, budgetTable: table, budgetEndpoint: flags.endpoint } : flags, ctx.io);
  for (const s of c.secrets) ctx.secrets.add(s);
  const urls = c.endpoints as unknown as Record<string, string>;
  return { client: c.client, urls, token: c.secrets[0], origins: c.origins, setProgress: c.setProgress, stop: async () => undefined };
}

/** Runs `dpi orphans` (the command's definition is in orphans-command.ts; this part is loaded only when it runs). */
export async function runOrphans(ctx: RunContext, flags: OrphansFlags): Promise<void> {
  const io = ctx.io;
  if (flags.yes && !flags.fix) throw new CliError('--yes is only meaningful with --fix');
  if (flags.profile) process.env.AWS_PROFILE = flags.profile;
  if (flags.region) process.env.AWS_REGION = flags.region;
  const unlock = flags.local ? lockLocalState(flags.state) : undefined;
  let j: Awaited<ReturnType<typeof openJournal>> | undefined;
  let svc: Service | undefined;
  try {
    let state: LocalState | undefined;
    if (flags.local) {
      try {
        state = readState(flags.state);
      } catch (e) {
        throw new CliError((e as Error).message);
      }
    }
    svc = await serviceFor(ctx, flags);
    // The journal the stacks use (their resources' Connection.JournalTableName); never created, a missing one refused.
    j = await openJournal(journalFlagsOf(flags, state), 'dpi orphans');
    const scan = await j.journal.scan(flags.prefix);
    const records = scan.records as Rec[];
    const claims = scan.claims.filter((c) => !flags.prefix || c.owner.startsWith(flags.prefix));
    let view: DeployedView;
    if (state) {
      view = localView(state, flags.state);
    } else {
      const cfn = orphansSeams.cloudFormation ?? cloudFormationClient({ region: flags.region, profile: flags.profile });
      const names = records.filter((r) => !DONE.has(r.state)).map((r) => r.key.split('/')[0]);
      // Every live stack's template too: the journal table its resources name (records of a stack that writes to another
      // table are not judged here).
      const stacks = await deployedResources(names, cfn, { nested: true, templates: true }).catch((e: unknown) => {
        throw awsFailure(e, 'the stacks (CloudFormation)', 'dpi orphans');
      });
      const exportOf = await exportLookup(dpiPropertiesOf(stacks.values()), cfn).catch((e: unknown) => {
        throw awsFailure(e, 'the exports (CloudFormation)', 'dpi orphans');
      });
      view = cloudView(stacks, flags.region, exportOf);
    }
    const busy = new Set<string>();
    const elsewhere = new Map<string, string>();
    const found = findOrphans(records, view, busy, { table: j.table, elsewhere });
    for (const s of busy) io.stderr.write(`${s}: an operation is in progress; its records are not judged (run dpi orphans again when it ends)\n`);
    for (const reason of elsewhere.values()) io.stderr.write(`${reason}\n`);
    const byId = new Map(records.map((r) => [`${r.key}#${r.id}`, r]));
    // Bulk reads: listings answer most records (docs/cli.md, "dpi orphans": calls per run).
    const reads = new ServiceReads(svc.client);
    let judged = 0;
    svc.setProgress(() => `${judged} of ${found.length} journal records read`);
    await readAhead(reads, found, byId);
    const listed: Orphan[] = [];
    for (const o of found) {
      const described = await describeHolding(reads, j.journal, o, byId.get(`${o.key}#${o.record}`)!);
      judged++;
      if (!described.moot) listed.push(described);
    }
    svc.setProgress(() => `${found.length} journal records read; checking ${claims.length} claims`);
    const orphans = listed.filter((o) => o.verdict === 'orphan');
    const retained = listed.filter((o) => o.verdict === 'retained');
    const refused = listed.filter((o) => o.verdict === 'refused');
    const loose = await looseClaims(reads, claims, records);
    for (const note of reads.notes) io.stderr.write(`${note}\n`);
    const liveLoose = loose.filter((c) => c.live);
    const notJudged = [...elsewhere.entries()].map(([stack, reason]) => ({ stack, reason }));
    const report = { journal: j.where, deployed: view.source, orphans, retained, refused, looseClaims: loose, notJudged };

    if (!flags.fix) {
      if (flags.json) io.stdout.write(`${JSON.stringify(report, undefined, 2)}\n`);
      else printReport(ctx, { orphans, retained, refused, loose }, j.where, view.source);
      // Retained records are the user's: they do not count.
      if (orphans.length + refused.length + liveLoose.length > 0) throw new CliError('', EXIT.DATA_ERROR);
      return;
    }
    if (!flags.json) printReport(ctx, { orphans, retained, refused, loose }, j.where, view.source);
    await confirm(orphans.filter((o) => !o.unresolved).length, retained.length, flags.yes === true);
    const outcomes = await fix(ctx, {
      orphans: listed,
      records: byId,
      journal: j.journal,
      journalEndpoint: j.endpoint,
      urls: svc.urls,
      token: svc.token,
      table: j.table,
      handlerLog: flags.local ? join(dirname(flags.state), 'handler.log') : undefined,
      echo: flags.handlerLogs === true,
      loadHandler: () => orphansSeams.handler ?? loadHandler(defaultHandlerPath()),
    });
    if (state) dropFixedCleanups(flags.state, state, listed, outcomes, [svc.token]);
    if (flags.json) {
      io.stdout.write(`${JSON.stringify({ ...report, fixed: outcomes }, undefined, 2)}\n`);
    } else {
      for (const x of outcomes) {
        io.stdout.write(`${x.result.padEnd(7)}  ${x.key} (${x.record})${x.detail ? `: ${x.detail}` : ''}\n`);
      }
    }
    const failed = outcomes.filter((x) => x.result === 'failed');
    if (failed.length > 0) {
      throw new CliError(`${failed.length} record(s) could not be removed or released: ${failed.map((x) => `${x.key}: ${x.detail}`).join('; ')}`);
    }
    if (outcomes.some((x) => x.result === 'skipped') || liveLoose.length > 0) throw new CliError('', EXIT.DATA_ERROR);
  } catch (e) {
    throw toCliError(e, { origins: svc?.origins });
  } finally {
    await j?.close();
    await svc?.stop();
    unlock?.();
  }
}

/**
 * The journal of a run: with --local, the table the local-deploy state's Custom::Dpi* resources use (`--table` must be
 * one of theirs); otherwise `--table`, else the default table (a missing table is refused, never created).
 */
function journalFlagsOf(flags: OrphansFlags, state: LocalState | undefined): OrphansFlags {
  if (!state) {
    // Outside --local the stacks' journal table is not read before the scan: a fix judged in a table the stacks no longer
    // use (after a move to another table) could end what they retained or another stack adopted, so --fix names it.
    if (flags.fix && !flags.table) {
      throw new CliError('dpi orphans --fix needs --table NAME outside --local: the journal table of the stacks\' connection '
        + `(journalTableName or journalTable; default ${DEFAULT_JOURNAL_TABLE}), so the records are judged and removed in the journal the stacks write to`);
    }
    return flags.table ? flags : { ...flags, tableFrom: 'the default table; pass --table NAME, the connection\'s journal table' };
  }
  const uses = Object.values(state.resources).filter((r) => r.type.startsWith('Custom::Dpi'))
    .map((r) => tableUseOf(r.stack, r.logicalId, r.properties));
  const chosen = chooseJournalTable(flags.table, uses, { command: 'dpi orphans', source: `the local-deploy state ${flags.state}` });
  return { ...flags, table: chosen.table, tableFrom: chosen.from, readOnly: !flags.fix };
}

/** Asks before --fix changes anything (unless --yes); without a terminal it refuses. */
async function confirm(removable: number, retained: number, yes: boolean): Promise<void> {
  if ((removable === 0 && retained === 0) || yes) return;
  const remove = `remove ${removable} orphan(s) the way a Delete would`;
  const release = `release ${retained} retained record(s) (kept in the service; the journal only lets go of them)`;
  const what = [removable > 0 ? remove : '', retained > 0 ? release : ''].filter((x) => x !== '').join(' and ');
  if (!orphansSeams.stdinIsTTY()) {
    const short = [removable > 0 ? `remove ${removable} orphan(s)` : '', retained > 0 ? `release ${retained} retained record(s)` : '']
      .filter((x) => x !== '').join(' and ');
    throw new CliError(`refusing to ${short} without a confirmation: stdin is not a terminal; pass --yes`);
  }
  const answer = await orphansSeams.ask(`${what[0].toUpperCase()}${what.slice(1)}? [y/N] `);
  if (!/^y(es)?$/i.test(answer.trim())) throw new CliError('nothing was removed (not confirmed)');
}

function printReport(ctx: RunContext, found: { orphans: Orphan[]; retained: Orphan[]; refused: Orphan[]; loose: LooseClaim[] },
  journal: string, deployed: string): void {
  const io = ctx.io;
  const { orphans, retained, refused, loose } = found;
  const plural = (n: number, word: string): string => `${n} ${word}${n === 1 ? '' : 's'}`;
  if (orphans.length > 0) {
    io.stdout.write(`${plural(orphans.length, 'orphan')} in ${journal} (checked against ${deployed}):\n`);
    io.stdout.write(renderOrphans(orphans, undefined, terminalWidth(ctx.io)));
    for (const o of orphans.filter((x) => x.unresolved)) io.stdout.write(`unresolved: ${o.key} (${o.record}): ${o.unresolved}; --fix skips it\n`);
  } else if (retained.length + refused.length > 0) {
    io.stdout.write(`no orphans in ${journal} (checked against ${deployed})\n`);
  } else {
    io.stdout.write(`no orphans: every record of ${journal} that holds something belongs to a resource of ${deployed}\n`);
  }
  if (retained.length > 0) {
    io.stdout.write(`${plural(retained.length, 'retained record')} (kept in the service: the user's to keep, not orphans; --fix releases `
      + 'them in the journal and ends nothing):\n');
    io.stdout.write(renderOrphans(retained, 'kept', terminalWidth(ctx.io)));
  }
  if (refused.length > 0) {
    io.stdout.write(`${plural(refused.length, 'refused record')} (the connection's account cannot read it: another account's record or a `
      + 'rotated secret; nothing done, --fix skips them):\n');
    io.stdout.write(renderOrphans(refused, 'refused', terminalWidth(ctx.io)));
  }
  for (const c of loose) {
    io.stdout.write(`claim whose owner holds nothing: ${c.kind} ${c.id} owned by ${c.owner} (${c.ownerRecords === 'none' ? 'no record' : 'records closed'}`
      + `${c.status ? `; service: ${c.status}` : ''})`
      + `${c.live ? ': still live, check it by hand' : ''}\n`);
  }
}
