// commander is bundled into the dpi CLI by esbuild, so a devDependency is enough.
// eslint-disable-next-line import/no-extraneous-dependencies
import { Command, Option } from 'commander';
import { DpiClient, ServiceError } from '../../client';
import { CLASS_ORDER, StatusSummary, summarise, TxClass } from '../../client/classify';
import { addConnectionOptions, ConnectionFlags } from '../connection';
import { addJsonOption, RunContext, useColour } from '../context';
import { CliError, EXIT, FailureContext, toCliError } from '../errors';
import { Colour, isoSeconds, painter, parseIntFlag, renderTable, terminalWidth, truncate, wrapLine } from '../format';
import { HEALTH_NOT_SHOWN } from '../identity-health';
import { CliIo, interruption } from '../io';
import { addLocalOptions, openService } from './local-service';
import { AccountStatus, AccountStatusFilters, accountStatusJson, collectAccountStatus, renderAccountStatus } from './status-account';
import { errorText, fetchAllTx } from './tx';

/** Colour of each class on a terminal. */
export const CLASS_COLOUR: Record<TxClass, Colour> = {
  'error': 'red',
  'retrying': 'yellow',
  'unknown': 'magenta',
  'in-progress': 'cyan',
  'formatted-not-loaded': 'yellow',
  'loaded': 'green',
  'no-data': 'dim',
  'duplicate-skipped': 'dim',
};

interface StatusFlags extends ConnectionFlags {
  subscription?: string;
  status?: string;
  payload?: string;
  product?: string;
  name?: string;
  days: string;
  watch?: string;
  json?: boolean;
  local?: boolean;
  state: string;
  reads?: string;
}

/** Fetches the records of the last `days` days and summarises them. */
export async function collectStatus(client: DpiClient, subscription: string, days: number, io: CliIo, abort?: AbortSignal): Promise<StatusSummary> {
  const since = Math.floor(io.now() / 1000) - days * 86400;
  const records = await fetchAllTx(client, { subscription_id: subscription, timestamp_from: since, limit: 200 }, io, abort);
  return summarise(records);
}

/** Renders the status table (coloured when `colour`). */
export function renderStatus(s: StatusSummary, o: { subscription: string; days: number; now: number; colour: boolean; width?: number }): string {
  const paint = painter(o.colour);
  const since = isoSeconds(Math.floor(o.now / 1000) - o.days * 86400);
  let text = wrapLine(`subscription ${o.subscription}: last ${o.days} day${o.days === 1 ? '' : 's'} (since ${since}), `
    + `${s.fetched} record${s.fetched === 1 ? '' : 's'}, at ${isoSeconds(Math.floor(o.now / 1000))}`, o.width) + '\n';
  if (s.cells.length === 0) return text + 'no transactions in this period (records are kept 3 days)\n';
  text += renderTable(
    ['ATTRIBUTION DATE', 'PAYLOAD', 'STATE', 'RECORDS', 'LAST UPDATE', 'DETAIL'],
    s.cells.map((c) => {
      const counts = CLASS_ORDER.filter((k) => c.counts[k]).map((k) => `${c.counts[k]} ${k}`).join(', ');
      const first = c.errors[0];
      const detail = first
        ? truncate(`${errorText(first) || 'ERROR'} (${first.id}, ${first.sender})`, 100) + (c.errors.length > 1 ? ` (+${c.errors.length - 1} more)` : '')
        : '';
      return [c.attribution_date, c.payload_name, paint(CLASS_COLOUR[c.state], c.state), counts, isoSeconds(c.last_update) || '-', detail];
    }),
    o.width,
  );
  const errors = s.cells.reduce((n, c) => n + c.errors.length, 0);
  if (errors > 0) text += paint('red', `${errors} record${errors === 1 ? '' : 's'} in ERROR`) + '\n';
  return text;
}

/** The JSON document of `dpi status --json`. */
export function statusJson(s: StatusSummary, o: { subscription: string; days: number; now: number }): object {
  return {
    subscription_id: Number(o.subscription),
    days: o.days,
    since: Math.floor(o.now / 1000) - o.days * 86400,
    generated_at: Math.floor(o.now / 1000),
    has_error: s.hasError,
    records: s.fetched,
    cells: s.cells,
  };
}

/** Failures worth waiting out in --watch mode (connection, 429, 5xx). */
function transient(e: unknown): boolean {
  return e instanceof ServiceError && (e.status === undefined || e.status === 429 || e.status >= 500);
}

/** `dpi status` */
export function statusCommand(ctx: RunContext): Command {
  const cmd = new Command('status')
    .description('per attribution date x payload: is the data loaded? (exit code 1 when any record is in ERROR); '
      + 'without --subscription: every subscription and payload of the account from the healthchecks listing')
    .option('--subscription <id>', 'subscription ID (without it: the whole account, from the healthchecks listing)')
    .addOption(new Option('--days <n>', 'look back N days (records are kept 3 days)').default('3', '3'))
    .option('--watch <seconds>', 'refresh every SECONDS until interrupted (Ctrl-C)')
    .option('--status <status>', 'without --subscription: only rows with this healthcheck status (e.g. OK, ERROR)')
    .option('--payload <name>', 'without --subscription: only this payload')
    .option('--product <text>', 'without --subscription: product names containing TEXT (any case)')
    .option('--name <text>', 'without --subscription: subscription names containing TEXT (any case)');
  addLocalOptions(cmd);
  addJsonOption(cmd);
  addConnectionOptions(cmd);
  return cmd.action(async (opts: StatusFlags) => {
    const io = ctx.io;
    const accountWide = opts.subscription === undefined;
    const filterFlags = (['status', 'payload', 'product', 'name'] as const).filter((k) => opts[k] !== undefined);
    if (!accountWide && filterFlags.length > 0) {
      throw new CliError(`--${filterFlags[0]} applies to the whole account (dpi status without --subscription); `
        + 'one subscription\'s records are filtered with dpi tx --subscription <id>');
    }
    if (!accountWide && !/^\d+$/.test(opts.subscription!)) throw new CliError(`--subscription: expected an integer subscription ID, got '${opts.subscription}'`);
    let days: number;
    let watchMs: number | undefined;
    try {
      days = parseIntFlag('--days', opts.days, 1, 365);
      if (opts.watch !== undefined) {
        const w = Number(opts.watch);
        if (!/^\d+(\.\d+)?$/.test(opts.watch.trim()) || !(w > 0)) throw new Error(`--watch: expected a positive number of seconds, got '${opts.watch}'`);
        watchMs = Math.round(w * 1000);
      }
    } catch (e) {
      throw new CliError((e as Error).message);
    }
    if (opts.local && watchMs !== undefined) throw new CliError('--watch reads a running service: with --local, the saved state does not change');
    const service = await openService(ctx, opts);
    const { client, origins } = service;
    const fctx: FailureContext = accountWide ? { origins } : { transactions: true, subscription: opts.subscription, origins };
    const colour = useColour(ctx);
    const filters: AccountStatusFilters = {
      status: opts.status,
      payload: opts.payload,
      product: opts.product,
      name: opts.name,
      days: cmd.getOptionValueSource('days') === 'default' ? undefined : days,
    };
    type Report = { hasError: boolean; s?: StatusSummary; a?: AccountStatus };
    const collect = async (signal?: AbortSignal): Promise<Report> => {
      if (accountWide) {
        const a = await collectAccountStatus(client, filters, io.now());
        return { hasError: a.hasError, a };
      }
      const s = await collectStatus(client, opts.subscription!, days, io, signal);
      return { hasError: s.hasError, s };
    };
    let noted = false;
    const show = (r: Report, now: number): void => {
      const o = { subscription: opts.subscription ?? '', days, now };
      if (r.a && !noted && !('error' in r.a.identities) && !r.a.identities.known) {
        io.stderr.write(HEALTH_NOT_SHOWN + '\n');
        noted = true;
      }
      if (opts.json) {
        const doc = r.a ? accountStatusJson(r.a, o) : statusJson(r.s!, o);
        io.stdout.write(watchMs === undefined ? JSON.stringify(doc, null, 2) + '\n' : JSON.stringify(doc) + '\n');
        return;
      }
      const clear = watchMs !== undefined && io.isTTY.stdout ? '\x1b[2J\x1b[H' : '';
      const sep = watchMs !== undefined && !io.isTTY.stdout ? '\n' : '';
      const width = terminalWidth(io);
      io.stdout.write(clear + (r.a ? renderAccountStatus(r.a, { now, colour, width }) : renderStatus(r.s!, { ...o, colour, width })) + sep);
    };

    if (watchMs === undefined) {
      let r: Report;
      try {
        r = await collect();
      } catch (e) {
        throw toCliError(e, fctx);
      } finally {
        await service.close();
      }
      show(r, io.now());
      if (r.hasError) throw new CliError('', EXIT.DATA_ERROR);
      return;
    }

    // --watch: refresh until interrupted; the exit code reflects the last refresh.
    const intr = interruption(io);
    const stop = new AbortController();
    void intr.promise.then(() => stop.abort());
    let code: number = EXIT.OK;
    try {
      while (!stop.signal.aborted) {
        const run = collect(stop.signal);
        run.catch(() => undefined);
        const res = await Promise.race([run.then((s) => ({ s })), intr.promise.then(() => undefined)]).catch((e: unknown) => ({ e }));
        if (res === undefined) break;
        if ('e' in res) {
          if (!transient(res.e)) throw toCliError(res.e, fctx);
          io.stderr.write(`${toCliError(res.e, fctx).message} (retrying in ${watchMs / 1000} s)\n`);
          code = EXIT.FAILURE;
        } else {
          show(res.s, io.now());
          code = res.s.hasError ? EXIT.DATA_ERROR : EXIT.OK;
        }
        await io.sleep(watchMs, stop.signal);
      }
    } finally {
      intr.dispose();
    }
    if (code !== EXIT.OK) throw new CliError('', code);
  });
}
