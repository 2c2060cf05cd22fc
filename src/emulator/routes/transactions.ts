import { createHash } from 'node:crypto';
// fastify is bundled into the dpi CLI by esbuild, so a devDependency is enough.
// eslint-disable-next-line import/no-extraneous-dependencies
import { FastifyInstance } from 'fastify';
import { ApiError, Ctx, fail, isObj, principal } from '../core';
import { TxRecord } from '../state';

export const TX_TTL_SECONDS = 3 * 86400;
export const SENDERS = ['scheduler', 'supervisor', 'ftpsync', 'zeroadmin'];
export const TX_STATUSES = ['UNPROCESSED', 'PROCESSING', 'IN_PROGRESS', 'RETRY', 'ERROR', 'PROCESSED', 'SUCCESS', 'NO_DATA', 'IGNORED'];
export const COMPLETED = ['PROCESSED', 'SUCCESS', 'NO_DATA', 'IGNORED'];
export const MAX_ERROR_BYTES = 8000;

const STRING_FIELDS = ['subscription_name', 'product_name', 'payload_name', 'job_id', 'attribution_date', 'file_path', 'error_code'] as const;
type StringField = typeof STRING_FIELDS[number];
/** Fields a child inherits from its parent when absent. */
const INHERITED = ['subscription_id', 'subscription_name', 'product_name', 'payload_name', 'attribution_date', 'file_path'] as const;

/** Cuts a string to at most `max` UTF-8 bytes without splitting a character. */
export function truncateUtf8(s: string, max: number): string {
  if (Buffer.byteLength(s, 'utf8') <= max) return s;
  let bytes = 0;
  let out = '';
  for (const ch of s) {
    const n = Buffer.byteLength(ch, 'utf8');
    if (bytes + n > max) break;
    bytes += n;
    out += ch;
  }
  return out;
}

function badTx(detail: string): never {
  fail(400, `invalid TX report: ${detail}`);
}

const indexes = new WeakMap<TxRecord[], Map<string, TxRecord>>();

/** ID index of the current transaction array (rebuilt when the array is replaced: reset, purge, state load). */
function txIndex(ctx: Ctx): Map<string, TxRecord> {
  let m = indexes.get(ctx.s.transactions);
  if (!m || m.size !== ctx.s.transactions.length) {
    m = new Map(ctx.s.transactions.map((t) => [t.id, t]));
    indexes.set(ctx.s.transactions, m);
  }
  return m;
}

/**
 * The records of each subscription in listing order (timestamp descending, ID ascending), with their effective
 * attributes: built once per change of the store (an ingest, an expiry, a reset), so a page costs O(log n + limit)
 * instead of a sort of every record.
 */
interface Listing {
  readonly store: TxRecord[];
  readonly generation: number;
  readonly bySub: Map<number, Array<{ t: TxRecord; a: Attrs }>>;
  /** The earliest expiry of any record (nothing to purge before it). */
  readonly nextExpiry: number;
}
const listings = new WeakMap<Ctx, Listing>();
const generations = new WeakMap<Ctx, number>();

/** Marks the store changed (the listing is rebuilt on the next page). */
function changed(ctx: Ctx): void {
  generations.set(ctx, (generations.get(ctx) ?? 0) + 1);
}

function listingOf(ctx: Ctx): Listing {
  const generation = generations.get(ctx) ?? 0;
  const cached = listings.get(ctx);
  if (cached && cached.store === ctx.s.transactions && cached.generation === generation) return cached;
  const byId = txIndex(ctx);
  const bySub = new Map<number, Array<{ t: TxRecord; a: Attrs }>>();
  let nextExpiry = Infinity;
  for (const t of ctx.s.transactions) {
    nextExpiry = Math.min(nextExpiry, t.time_to_live);
    const a = effective(byId, t);
    const sid = a.subscription_id;
    if (typeof sid !== 'number') continue;
    let list = bySub.get(sid);
    if (!list) bySub.set(sid, list = []);
    list.push({ t, a });
  }
  for (const list of bySub.values()) list.sort((x, y) => before(x.t, y.t));
  const listing = { store: ctx.s.transactions, generation, bySub, nextExpiry };
  listings.set(ctx, listing);
  return listing;
}

function purgeExpired(ctx: Ctx): void {
  const now = ctx.now();
  const cached = listings.get(ctx);
  if (cached && cached.store === ctx.s.transactions && cached.generation === (generations.get(ctx) ?? 0) && now < cached.nextExpiry) return;
  if (ctx.s.transactions.some((t) => now >= t.time_to_live)) {
    ctx.s.transactions = ctx.s.transactions.filter((t) => now < t.time_to_live);
    changed(ctx);
  }
}

function modifiedText(ts: number): string {
  return new Date(ts * 1000).toISOString().replace(/\.(\d{3})Z$/, '.$1000Z');
}

/** Merges one TX report into the store (the spec's merge rules). */
export function ingestTx(ctx: Ctx, body: unknown): TxRecord {
  if (!isObj(body)) badTx('body must be a JSON object');
  const r = body;
  if (typeof r.id !== 'string' || r.id === '') badTx('id must be a non-empty string');
  if (typeof r.sender !== 'string' || !SENDERS.includes(r.sender)) badTx(`sender must be one of ${SENDERS.join(', ')}`);
  if (typeof r.status !== 'string' || !TX_STATUSES.includes(r.status)) badTx(`status must be one of ${TX_STATUSES.join(', ')}`);
  // Unix seconds up to 9999-12-31 (a larger number, e.g. 1e308, is no time and no safe integer).
  if (r.timestamp !== undefined && (typeof r.timestamp !== 'number' || !Number.isFinite(r.timestamp) || r.timestamp < 0 || r.timestamp > 253402300799)) {
    badTx('timestamp must be Unix seconds (0-253402300799)');
  }
  if (r.modified_at !== undefined && typeof r.modified_at !== 'string') badTx('modified_at must be a string');
  if (r.subscription_id !== undefined && r.subscription_id !== null && (typeof r.subscription_id !== 'number' || !Number.isSafeInteger(r.subscription_id))) {
    badTx('subscription_id must be an integer');
  }
  for (const k of [...STRING_FIELDS, 'error_message', 'parent']) {
    if (r[k] !== undefined && r[k] !== null && typeof r[k] !== 'string') badTx(`${k} must be a string`);
  }
  if (r.children !== undefined && (!Array.isArray(r.children) || r.children.some((c) => typeof c !== 'string' || c === ''))) {
    badTx('children must be an array of TX ID strings');
  }
  purgeExpired(ctx);
  const s = ctx.s;
  const now = ctx.now();
  const ts = typeof r.timestamp === 'number' ? r.timestamp : now;
  const modified = typeof r.modified_at === 'string' && r.modified_at !== '' ? r.modified_at : modifiedText(ts);
  const index = txIndex(ctx);
  let rec = index.get(r.id);
  const sender = r.sender;
  const status = r.status;
  if (!rec) {
    rec = {
      id: r.id,
      sender,
      status,
      modified_at: modified,
      timestamp: Math.floor(ts),
      time_to_live: now + TX_TTL_SECONDS,
      parent: '',
      children: [],
      seq: ++s.counters.txSeq,
      reports: 0,
    };
    s.transactions.push(rec);
    index.set(rec.id, rec);
    // Children reported before their parent.
    for (const t of s.transactions) if (t.parent === rec.id) rec.children.push(t.id);
  } else {
    const curRank = SENDERS.indexOf(rec.sender);
    const newRank = SENDERS.indexOf(sender);
    if (newRank > curRank || (newRank === curRank && !COMPLETED.includes(rec.status))) {
      rec.sender = sender;
      rec.status = status;
    }
    if (Math.floor(ts) >= rec.timestamp) {
      rec.timestamp = Math.floor(ts);
      rec.modified_at = modified;
    }
  }
  rec.reports++;
  if (typeof r.subscription_id === 'number') rec.subscription_id = r.subscription_id;
  for (const k of STRING_FIELDS) {
    const v = r[k];
    if (typeof v === 'string' && v !== '') (rec as unknown as Record<StringField, string>)[k] = v;
  }
  if (typeof r.error_message === 'string') rec.error_message = truncateUtf8(r.error_message, MAX_ERROR_BYTES);
  if (typeof r.parent === 'string' && r.parent !== '') rec.parent = r.parent;
  for (const c of (r.children as string[] | undefined) ?? []) if (!rec.children.includes(c)) rec.children.push(c);
  // Keep links consistent in both directions.
  if (rec.parent) {
    const parent = index.get(rec.parent);
    if (parent && !parent.children.includes(rec.id)) parent.children.push(rec.id);
  }
  for (const c of rec.children) {
    const child = index.get(c);
    if (child && !child.parent) child.parent = rec.id;
  }
  changed(ctx);
  return rec;
}

type Attrs = Record<string, unknown>;

function ownAttrs(t: TxRecord): Attrs {
  return {
    subscription_id: t.subscription_id ?? null,
    subscription_name: t.subscription_name ?? '',
    product_name: t.product_name ?? '',
    payload_name: t.payload_name ?? '',
    job_id: t.job_id ?? '',
    attribution_date: t.attribution_date ?? '',
    sender: t.sender,
    status: t.status,
    modified_at: t.modified_at,
    timestamp: t.timestamp,
    time_to_live: t.time_to_live,
    file_path: t.file_path ?? '',
    parent: t.parent,
    children: [...t.children],
    error_code: t.error_code ?? '',
    error_message: t.error_message ?? '',
  };
}

const empty = (v: unknown): boolean => v === undefined || v === null || v === '' || v === 0 || (Array.isArray(v) && v.length === 0);

/** Attributes with values inherited from the parent chain where absent. */
function effective(byId: Map<string, TxRecord>, t: TxRecord, depth = 0): Attrs {
  const a = ownAttrs(t);
  if (t.parent && depth < 16) {
    const p = byId.get(t.parent);
    if (p) {
      const pa = effective(byId, p, depth + 1);
      for (const k of INHERITED) if (empty(a[k])) a[k] = pa[k];
    }
  }
  return a;
}

export function txToApi(t: TxRecord, byId?: Map<string, TxRecord>): { id: string; attributes: Attrs } {
  return { id: t.id, attributes: byId ? effective(byId, t) : ownAttrs(t) };
}

const ALLOWED = ['subscription_id', 'limit', 'cursor', 'timestamp_from', 'timestamp_to', 'modified_at_from', 'modified_at_to',
  'attribution_date', 'job_id', 'sender', 'status', 'parent', 'payload_name', 'product_name', 'subscription_name', 'error_code',
  'error_message', 'file_path', 'time_to_live', 'tree', 'tree_depth'];
const EXACT = ['attribution_date', 'job_id', 'sender', 'status', 'parent', 'payload_name', 'product_name', 'subscription_name',
  'error_code', 'error_message', 'file_path'];

function unprocessable(detail: string): never {
  throw new ApiError(422, { errors: [{ status: '422', title: 'Unprocessable Entity', detail }] }, detail);
}

function int(q: Record<string, string>, name: string): number | undefined {
  const v = q[name];
  if (v === undefined) return undefined;
  if (!/^-?\d{1,15}$/.test(v)) unprocessable(`${name}: invalid integer`);
  return Number(v);
}

interface CursorData { t: number; i: string; f: string }

function fingerprint(q: Record<string, string>): string {
  const parts = Object.keys(q).filter((k) => k !== 'cursor' && k !== 'limit').sort().map((k) => `${k}=${q[k]}`);
  return createHash('sha256').update(parts.join('&')).digest('hex').slice(0, 16);
}

function encodeCursor(c: CursorData): string {
  return Buffer.from(JSON.stringify({ v: 1, ...c })).toString('base64url');
}

function decodeCursor(raw: string, fp: string): CursorData {
  let c: unknown;
  try {
    if (!/^[A-Za-z0-9_-]+$/.test(raw)) throw new Error('bad');
    c = JSON.parse(Buffer.from(raw, 'base64url').toString('utf8'));
  } catch {
    unprocessable('cursor: invalid cursor');
  }
  if (!isObj(c) || c.v !== 1 || typeof c.t !== 'number' || typeof c.i !== 'string' || typeof c.f !== 'string') unprocessable('cursor: invalid cursor');
  if (c.f !== fp) unprocessable('cursor: invalid cursor (it belongs to a different subscription, filter or tree setting)');
  return { t: c.t, i: c.i, f: c.f };
}

const before = (a: TxRecord, b: TxRecord): number => (b.timestamp - a.timestamp) || (a.id < b.id ? -1 : a.id > b.id ? 1 : 0);

export function registerTxRoutes(app: FastifyInstance, ctx: Ctx): void {
  app.get('/service/transactions/tx', async (req, reply) => {
    const who = principal(req);
    const raw = (isObj(req.query) ? req.query : {}) as Record<string, string | string[]>;
    if (raw.subscription_id === undefined) return reply.status(403).send({ message: 'Forbidden' });
    for (const [k, v] of Object.entries(raw)) if (Array.isArray(v)) unprocessable(`${k}: repeated parameter`);
    const q = raw as Record<string, string>;
    const sid = int(q, 'subscription_id')!;
    const sub = ctx.s.subscriptions.find((x) => x.id === sid);
    if (!sub || sub.account !== who.account) return reply.status(403).send({ message: 'Forbidden' });
    for (const k of Object.keys(q)) if (!ALLOWED.includes(k)) unprocessable(`${k}: unsupported parameter`);
    const limit = int(q, 'limit') ?? 50;
    if (limit < 1 || limit > 200) unprocessable('limit: out of range (1-200)');
    const tsFrom = int(q, 'timestamp_from');
    const tsTo = int(q, 'timestamp_to');
    if (tsFrom !== undefined && tsTo !== undefined && tsFrom > tsTo) unprocessable('timestamp_from: greater than timestamp_to');
    const mFrom = q.modified_at_from;
    const mTo = q.modified_at_to;
    if (mFrom !== undefined && mTo !== undefined && mFrom > mTo) unprocessable('modified_at_from: greater than modified_at_to');
    const ttl = int(q, 'time_to_live');
    if (q.tree !== undefined && q.tree !== 'true' && q.tree !== 'false') unprocessable("tree: must be 'true' or 'false'");
    const tree = q.tree === 'true';
    let depth = 4;
    if (q.tree_depth !== undefined) {
      if (!tree) unprocessable('tree_depth: allowed only with tree=true');
      depth = int(q, 'tree_depth')!;
      if (depth < 1 || depth > 4) unprocessable('tree_depth: out of range (1-4)');
    }
    const fp = fingerprint(q);
    const cursor = q.cursor !== undefined ? decodeCursor(q.cursor, fp) : undefined;

    purgeExpired(ctx);
    const byId = txIndex(ctx);
    const all = listingOf(ctx).bySub.get(sid) ?? [];
    // The first record after the cursor (the order is monotonic in it): a binary search, not a scan.
    const after = (x: { t: TxRecord }): boolean => !!cursor && (x.t.timestamp < cursor.t || (x.t.timestamp === cursor.t && x.t.id > cursor.i));
    let lo = 0;
    let hi = all.length;
    if (cursor) {
      while (lo < hi) {
        const mid = Math.floor((lo + hi) / 2);
        if (after(all[mid])) hi = mid;
        else lo = mid + 1;
      }
    }
    const first = cursor ? lo : 0;
    const evaluated = all.slice(first, first + limit);
    const more = all.length - first > limit;
    const last = evaluated[evaluated.length - 1];
    const next = more && last ? encodeCursor({ t: last.t.timestamp, i: last.t.id, f: fp }) : null;
    const matched = evaluated.filter(({ a }) => {
      const ts = a.timestamp as number;
      if (tsFrom !== undefined && ts < tsFrom) return false;
      if (tsTo !== undefined && ts > tsTo) return false;
      if (mFrom !== undefined && (a.modified_at as string) < mFrom) return false;
      if (mTo !== undefined && (a.modified_at as string) > mTo) return false;
      if (ttl !== undefined && a.time_to_live !== ttl) return false;
      for (const k of EXACT) {
        if (q[k] === undefined) continue;
        if (k === 'job_id' && a.job_id === '') return false;
        if (a[k] !== q[k]) return false;
      }
      return true;
    });
    if (!tree) return { data: matched.map(({ t, a }) => ({ id: t.id, attributes: a })), meta: { next_cursor: next } };

    const out: Array<{ id: string; attributes: Attrs }> = [];
    const expand = (path: TxRecord[]): void => {
      const node = path[path.length - 1];
      const atDepth = path.length - 1 >= depth;
      if (node.children.length === 0 || atDepth) {
        out.push(mergeBranch(byId, path, atDepth));
        return;
      }
      for (const cid of node.children) {
        const child = byId.get(cid);
        if (!child) throw new ApiError(500, { error: `tree expansion failed: referenced child transaction ${cid} of ${node.id} is not available` });
        expand([...path, child]);
      }
    };
    for (const { t } of matched) expand([t]);
    return { data: out, meta: { next_cursor: next } };
  });
}

function mergeBranch(byId: Map<string, TxRecord>, path: TxRecord[], cut: boolean): { id: string; attributes: Attrs } {
  const merged: Attrs = effective(byId, path[0]);
  for (const node of path.slice(1)) {
    const a = effective(byId, node);
    for (const [k, v] of Object.entries(a)) {
      if (k === 'children' || k === 'parent') continue;
      if (!empty(v)) merged[k] = v;
    }
  }
  const last = path[path.length - 1];
  merged.parent = last.parent;
  merged.children = cut
    ? last.children.map((c) => {
      const child = byId.get(c);
      return child ? { transaction_id: c, ...effective(byId, child) } : c;
    })
    : [];
  return { id: last.id, attributes: merged };
}
