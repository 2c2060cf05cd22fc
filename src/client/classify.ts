/**
 * How a transaction record is read (pure functions; see docs/cli.md "How status classifies records"): shared by
 * `dpi status` and the SubscriptionMonitor Lambda, so it lives beside the client, below both.
 */
import { TxRecord } from './types';

/** What a TX (its sender and status, read together) says about the data. */
export type TxClass =
  | 'error'
  | 'retrying'
  | 'unknown'
  | 'in-progress'
  | 'formatted-not-loaded'
  | 'loaded'
  | 'no-data'
  | 'duplicate-skipped';

/**
 * Relevance of each class, most relevant first: a cell shows the first class any of its records has.
 * Problems first (they need action), then work not finished, then the outcomes; among outcomes a load
 * outranks "nothing new" (a cell with one loaded and one NO_DATA record did load data).
 */
export const CLASS_ORDER: readonly TxClass[] = [
  'error',
  'retrying',
  'unknown',
  'in-progress',
  'formatted-not-loaded',
  'loaded',
  'no-data',
  'duplicate-skipped',
];

/** Senders, lowest to highest merge precedence. */
export const SENDERS = ['scheduler', 'supervisor', 'ftpsync', 'zeroadmin'] as const;
/** Every TX status of the spec (case-sensitive). */
export const TX_STATUSES = ['UNPROCESSED', 'PROCESSING', 'IN_PROGRESS', 'RETRY', 'ERROR', 'PROCESSED', 'SUCCESS', 'NO_DATA', 'IGNORED'] as const;

/**
 * Classifies one TX by its sender and status.
 *
 * - `zeroadmin` PROCESSED or SUCCESS: loaded into the destination (the only load).
 * - PROCESSED or SUCCESS from any other sender (scheduler, supervisor, ftpsync): completed upstream
 *   (ftpsync PROCESSED = formatting completed), NOT loaded: `formatted-not-loaded`.
 * - NO_DATA (any sender): `no-data` (no upstream data; not a load).
 * - IGNORED (any sender): `duplicate-skipped` (exact duplicate skipped; not a new load).
 * - UNPROCESSED, PROCESSING, IN_PROGRESS: `in-progress`; RETRY: `retrying`; ERROR: `error`.
 * - A status outside the spec (statuses are case-sensitive: `processed` is not PROCESSED), or a completion from
 *   a sender outside the spec: `unknown`.
 */
export function classifyTx(sender: string | undefined, status: string | undefined): TxClass {
  switch (status) {
    case 'ERROR': return 'error';
    case 'RETRY': return 'retrying';
    case 'UNPROCESSED':
    case 'PROCESSING':
    case 'IN_PROGRESS': return 'in-progress';
    case 'NO_DATA': return 'no-data';
    case 'IGNORED': return 'duplicate-skipped';
    case 'PROCESSED':
    case 'SUCCESS':
      if (sender === 'zeroadmin') return 'loaded';
      if (sender === 'scheduler' || sender === 'supervisor' || sender === 'ftpsync') return 'formatted-not-loaded';
      return 'unknown';
    default: return 'unknown';
  }
}

/** The more relevant of two classes (see CLASS_ORDER). */
export function moreRelevant(a: TxClass, b: TxClass): TxClass {
  return CLASS_ORDER.indexOf(a) <= CLASS_ORDER.indexOf(b) ? a : b;
}

/** One error shown in a status cell. */
export interface CellError {
  id: string;
  sender: string;
  error_code: string;
  error_message: string;
}

/** One attribution date x payload cell of `dpi status`. */
export interface StatusCell {
  attribution_date: string;
  payload_name: string;
  /** The most relevant class of the cell's records. */
  state: TxClass;
  /** Number of records per class. */
  counts: Partial<Record<TxClass, number>>;
  /** Records considered. */
  records: number;
  /** Latest processing time of the cell's records, Unix seconds. */
  last_update: number;
  /** Records in ERROR (with their code and message). */
  errors: CellError[];
}

/** Summary of a subscription for `dpi status`. */
export interface StatusSummary {
  cells: StatusCell[];
  /** True when any considered record is in ERROR (exit code 1). */
  hasError: boolean;
  /** Records fetched (after de-duplication by TX ID). */
  fetched: number;
  /** Records considered (leaves, plus ancestors in error or retrying). */
  considered: number;
}

/** Keeps the newest snapshot of each TX ID (a listing is not frozen: a TX can move between pages while it runs). */
export function latestById(records: Iterable<TxRecord>): TxRecord[] {
  const byId = new Map<string, TxRecord>();
  for (const r of records) {
    const prev = byId.get(r.id);
    if (!prev || (r.timestamp ?? 0) >= (prev.timestamp ?? 0)) byId.set(r.id, r);
  }
  return [...byId.values()];
}

/** IDs of the children of a record, from its raw `children` links and from records naming it as `parent`. */
function childIndex(records: TxRecord[]): Map<string, Set<string>> {
  const ids = new Set(records.map((r) => r.id));
  const kids = new Map<string, Set<string>>();
  const add = (p: string, c: string): void => {
    if (!ids.has(p) || !ids.has(c) || p === c) return;
    let s = kids.get(p);
    if (!s) kids.set(p, s = new Set());
    s.add(c);
  };
  for (const r of records) {
    for (const c of r.children ?? []) add(r.id, typeof c === 'string' ? c : c.transaction_id);
    if (r.parent) add(r.parent, r.id);
  }
  return kids;
}

const NO_VALUE = '-';

/**
 * Summarises raw records per attribution date x payload.
 *
 * Which records count: every LEAF (a record none of whose children is in the listing; a root without
 * children is its own leaf), because leaves carry the outcome of the work. A parent's status is not derived
 * from its children (the spec), and a parent that still says PROCESSING while its children loaded must not
 * hold the cell in-progress; so a record with children counts only when it is itself in `error` or
 * `retrying` (a job-level problem, e.g. retrieval failed).
 */
export function summarise(raw: Iterable<TxRecord>): StatusSummary {
  const records = latestById(raw);
  const kids = childIndex(records);
  const cells = new Map<string, StatusCell>();
  let hasError = false;
  let considered = 0;
  for (const r of records) {
    const cls = classifyTx(r.sender, r.status);
    const isLeaf = !kids.has(r.id);
    if (!isLeaf && cls !== 'error' && cls !== 'retrying') continue;
    considered++;
    const date = r.attribution_date || NO_VALUE;
    const payload = r.payload_name || NO_VALUE;
    const key = `${date}\u0000${payload}`;
    let cell = cells.get(key);
    if (!cell) {
      cell = { attribution_date: date, payload_name: payload, state: cls, counts: {}, records: 0, last_update: 0, errors: [] };
      cells.set(key, cell);
    }
    cell.state = moreRelevant(cell.state, cls);
    cell.counts[cls] = (cell.counts[cls] ?? 0) + 1;
    cell.records++;
    cell.last_update = Math.max(cell.last_update, r.timestamp ?? 0);
    if (cls === 'error') {
      hasError = true;
      cell.errors.push({ id: r.id, sender: r.sender ?? '', error_code: r.error_code ?? '', error_message: r.error_message ?? '' });
    }
  }
  const sorted = [...cells.values()].sort((a, b) =>
    (a.attribution_date < b.attribution_date ? 1 : a.attribution_date > b.attribution_date ? -1 : 0)
    || (a.payload_name < b.payload_name ? -1 : a.payload_name > b.payload_name ? 1 : 0));
  return { cells: sorted, hasError, fetched: records.length, considered };
}
