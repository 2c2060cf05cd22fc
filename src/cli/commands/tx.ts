// commander is bundled into the dpi CLI by esbuild, so a devDependency is enough.
// eslint-disable-next-line import/no-extraneous-dependencies
import { Command } from 'commander';
import { DpiClient, TxPage, TxQuery, TxRecord, validateTxQuery } from '../../client';
import { SENDERS, TX_STATUSES } from '../../client/classify';
import { addConnectionOptions, ConnectionFlags } from '../connection';
import { addJsonOption, connectFor, printJson, RunContext } from '../context';
import { CliError, FailureContext, toCliError } from '../errors';
import { isoSeconds, parseIntFlag, parseTimeFlag, renderTable, terminalWidth, truncate } from '../format';
import { CliIo } from '../io';
import { buildTxForest, renderTxForest } from '../tree';

/**
 * Calls `onPage` with the records of every page (through empty pages), in order, with progress on a terminal's
 * stderr. The next page is requested as soon as its cursor is known, so `onPage` runs while it is on its way.
 */
export async function forEachTxPage(client: DpiClient, q: TxQuery, io: CliIo, onPage: (records: TxRecord[]) => void,
  abort?: AbortSignal): Promise<number> {
  validateTxQuery(q);
  const progress = io.isTTY.stderr;
  let pages = 0;
  let count = 0;
  const seen = new Set<string>();
  let next: Promise<TxPage> | undefined = client.tx.listPage(q);
  try {
    while (next) {
      const page: TxPage = await next;
      next = undefined;
      pages++;
      if (page.nextCursor !== null && !abort?.aborted) {
        if (seen.has(page.nextCursor)) throw new Error('transaction listing returned a cursor it had returned before; stopping to avoid a loop');
        seen.add(page.nextCursor);
        next = client.tx.listPage({ ...q, cursor: page.nextCursor });
        // A failure of the prefetched page is reported when it is awaited (not as an unhandled rejection meanwhile).
        next.catch(() => undefined);
      }
      count += page.records.length;
      onPage(page.records);
      if (progress) io.stderr.write(`\r\x1b[Kfetched ${count} record${count === 1 ? '' : 's'}… (${pages} page${pages === 1 ? '' : 's'})`);
    }
  } finally {
    if (progress && pages > 0) io.stderr.write('\r\x1b[K');
  }
  return count;
}

/** Fetches every record of every page (through empty pages), with progress on a terminal's stderr. */
export async function fetchAllTx(client: DpiClient, q: TxQuery, io: CliIo, abort?: AbortSignal): Promise<TxRecord[]> {
  const out: TxRecord[] = [];
  await forEachTxPage(client, q, io, (records) => {
    for (const r of records) out.push(r);
  }, abort);
  return out;
}

/** The error text of a record (`code: message`). */
export function errorText(r: Pick<TxRecord, 'error_code' | 'error_message'>): string {
  const code = r.error_code ?? '';
  const msg = r.error_message ?? '';
  return code && msg ? `${code}: ${msg}` : code || msg;
}

interface TxFlags extends ConnectionFlags {
  subscription: string;
  status?: string;
  sender?: string;
  jobId?: string;
  payload?: string;
  attributionDate?: string;
  from?: string;
  to?: string;
  parent?: string;
  tree?: boolean;
  depth?: string;
  limit?: string;
  json?: boolean;
}

function usage(fn: () => number): number {
  try {
    return fn();
  } catch (e) {
    throw new CliError((e as Error).message);
  }
}

/** Builds the wire query of `dpi tx` (raw listing: tree=true is never sent). */
export function txQueryOf(o: TxFlags): TxQuery {
  if (!/^\d+$/.test(o.subscription)) throw new CliError(`--subscription: expected an integer subscription ID, got '${o.subscription}'`);
  const q: TxQuery = { subscription_id: o.subscription };
  if (o.limit !== undefined) q.limit = usage(() => parseIntFlag('--limit', o.limit!, 1, 200));
  if (o.from !== undefined) q.timestamp_from = usage(() => parseTimeFlag('--from', o.from!));
  if (o.to !== undefined) q.timestamp_to = usage(() => parseTimeFlag('--to', o.to!));
  if (q.timestamp_from !== undefined && q.timestamp_to !== undefined && Number(q.timestamp_from) > Number(q.timestamp_to)) {
    throw new CliError(`--from (${isoSeconds(Number(q.timestamp_from))}) must not be after --to (${isoSeconds(Number(q.timestamp_to))})`);
  }
  if (o.status !== undefined) {
    if (!(TX_STATUSES as readonly string[]).includes(o.status)) {
      throw new CliError(`--status: '${o.status}' is not a transaction status; use one of ${TX_STATUSES.join(', ')} (upper case, as stored)`);
    }
    q.status = o.status;
  }
  if (o.sender !== undefined) {
    if (!(SENDERS as readonly string[]).includes(o.sender)) {
      throw new CliError(`--sender: '${o.sender}' is not a sender; use one of ${SENDERS.join(', ')}`);
    }
    q.sender = o.sender;
  }
  if (o.jobId !== undefined) q.job_id = o.jobId;
  if (o.payload !== undefined) q.payload_name = o.payload;
  if (o.attributionDate !== undefined) {
    if (!/^\d{4}-\d{2}-\d{2}(T\d{2}:\d{2})?$/.test(o.attributionDate)) {
      throw new CliError(`--attribution-date: '${o.attributionDate}' is not YYYY-MM-DD or YYYY-MM-DDTHH:MM (the value is matched exactly as stored)`);
    }
    q.attribution_date = o.attributionDate;
  }
  if (o.parent !== undefined) q.parent = o.parent;
  return q;
}

/** Width of the error column of the table. */
const ERROR_WIDTH = 80;

/** One-line label of a record in the tree. */
export function treeLabel(r: TxRecord): string {
  const parts = [
    isoSeconds(r.timestamp) || '-',
    `${r.sender || '-'} ${r.status || '-'}`,
    r.payload_name || '-',
    r.attribution_date || '-',
  ];
  if (r.job_id) parts.push(`job ${r.job_id}`);
  const err = errorText(r);
  if (err) parts.push(truncate(err, ERROR_WIDTH));
  return parts.join('  ');
}

/** `dpi tx` */
export function txCommand(ctx: RunContext): Command {
  const cmd = new Command('tx')
    .description('list the transactions (processing snapshots) of a subscription, every page; --tree shows parent/child links')
    .requiredOption('--subscription <id>', 'subscription ID (required)')
    .option('--status <status>', 'exact status, upper case (e.g. ERROR, PROCESSED)')
    .option('--sender <sender>', 'exact sender: scheduler, supervisor, ftpsync or zeroadmin')
    .option('--job-id <id>', 'exact job ID')
    .option('--payload <name>', 'exact payload name')
    .option('--attribution-date <date>', 'exact stored attribution date (a date alone does not match a value with a time)')
    .option('--from <time>', 'processed at or after: Unix seconds or ISO time (timestamp_from)')
    .option('--to <time>', 'processed at or before: Unix seconds or ISO time (timestamp_to)')
    .option('--parent <id>', 'exact parent TX ID (children of a TX, raw)')
    .option('--tree', 'show an indented parent/child tree built from the raw links')
    .option('--depth <n>', 'with --tree: child levels shown below each root')
    .option('--limit <n>', 'page size, 1-200 (every page is fetched anyway)');
  addJsonOption(cmd);
  addConnectionOptions(cmd);
  return cmd.action(async (opts: TxFlags) => {
    const q = txQueryOf(opts);
    let depth: number | undefined;
    if (opts.depth !== undefined) {
      if (!opts.tree) throw new CliError('--depth is allowed only with --tree');
      depth = usage(() => parseIntFlag('--depth', opts.depth!, 1));
    }
    const { client, origins } = connectFor(ctx, opts);
    const fctx: FailureContext = { transactions: true, tree: opts.tree === true, subscription: opts.subscription, origins };
    let records: TxRecord[];
    try {
      records = await fetchAllTx(client, q, ctx.io);
    } catch (e) {
      throw toCliError(e, fctx);
    }
    if (opts.json) return printJson(ctx, records);
    const out = ctx.io.stdout;
    if (records.length === 0) {
      out.write(`no transactions for subscription ${opts.subscription} with these filters (records are kept 3 days)\n`);
      return;
    }
    if (opts.tree) {
      out.write(renderTxForest(buildTxForest(records, depth), treeLabel));
      return;
    }
    out.write(renderTable(
      ['ID', 'TIME', 'SENDER', 'STATUS', 'PAYLOAD', 'ATTRIBUTION DATE', 'JOB', 'ERROR'],
      records.map((r) => [
        r.id, isoSeconds(r.timestamp) || '-', r.sender || '-', r.status || '-', r.payload_name || '-',
        r.attribution_date || '-', r.job_id || '-', truncate(errorText(r), ERROR_WIDTH) || '-',
      ]),
      terminalWidth(ctx.io),
    ));
  });
}
