import { TxQueryError } from './errors';
import { TxQuery } from './types';

const INTEGER_PARAMS = ['subscription_id', 'limit', 'timestamp_from', 'timestamp_to', 'time_to_live', 'tree_depth'] as const;
const STRING_PARAMS = [
  'cursor', 'modified_at_from', 'modified_at_to', 'attribution_date', 'job_id', 'sender', 'status', 'parent',
  'payload_name', 'product_name', 'subscription_name', 'error_code', 'error_message', 'file_path',
] as const;
const BOOLEAN_PARAMS = ['tree'] as const;

/** Every parameter name accepted by `GET /service/transactions/tx`. */
export const TX_QUERY_PARAMETERS: readonly string[] = [...INTEGER_PARAMS, ...STRING_PARAMS, ...BOOLEAN_PARAMS];

function integerValue(name: string, v: unknown): number {
  if (typeof v === 'number') {
    if (!Number.isSafeInteger(v)) throw new TxQueryError(name, `must be an integer, got ${v}`);
    return v;
  }
  if (typeof v === 'string' && /^-?\d+$/.test(v.trim())) {
    const n = Number(v.trim());
    if (Number.isSafeInteger(n)) return n;
  }
  throw new TxQueryError(name, `must be an integer, got ${JSON.stringify(v)}`);
}

function treeValue(v: unknown): boolean {
  if (v === true || v === 'true') return true;
  if (v === false || v === 'false') return false;
  throw new TxQueryError('tree', `must be true or false, got ${JSON.stringify(v)}`);
}

/**
 * Checks a transaction query before it is sent (throws `TxQueryError` naming the parameter):
 * `subscription_id` present; no unknown parameter; every parameter once (no arrays);
 * integers are integers; `limit` 1-200; `tree_depth` 1-4 and only with `tree=true`;
 * `timestamp_from <= timestamp_to` (numeric) and `modified_at_from <= modified_at_to` (lexicographic).
 * `undefined` values count as absent.
 */
export function validateTxQuery(q: TxQuery): void {
  if (!q || typeof q !== 'object' || Array.isArray(q)) throw new TxQueryError('subscription_id', 'a query object is required');
  const rec = q as unknown as Record<string, unknown>;
  for (const [k, v] of Object.entries(rec)) {
    if (!TX_QUERY_PARAMETERS.includes(k)) {
      throw new TxQueryError(k, `unknown parameter; accepted: ${TX_QUERY_PARAMETERS.join(', ')}`);
    }
    if (Array.isArray(v)) throw new TxQueryError(k, 'may be given only once (multi-value filters are not supported)');
    if (v === null) throw new TxQueryError(k, 'must not be null (omit it instead)');
  }
  if (rec.subscription_id === undefined || rec.subscription_id === '') {
    throw new TxQueryError('subscription_id', 'is required on every call');
  }
  const ints: Record<string, number> = {};
  for (const k of INTEGER_PARAMS) {
    if (rec[k] !== undefined) ints[k] = integerValue(k, rec[k]);
  }
  for (const k of STRING_PARAMS) {
    const v = rec[k];
    if (v !== undefined && typeof v !== 'string') throw new TxQueryError(k, `must be a string, got ${JSON.stringify(v)}`);
  }
  if (rec.cursor === '') throw new TxQueryError('cursor', 'must not be empty (omit it for the first page)');
  if (ints.limit !== undefined && (ints.limit < 1 || ints.limit > 200)) {
    throw new TxQueryError('limit', `must be between 1 and 200, got ${ints.limit}`);
  }
  const tree = rec.tree === undefined ? false : treeValue(rec.tree);
  if (ints.tree_depth !== undefined) {
    if (!tree) throw new TxQueryError('tree_depth', 'is allowed only with tree=true');
    if (ints.tree_depth < 1 || ints.tree_depth > 4) throw new TxQueryError('tree_depth', `must be between 1 and 4, got ${ints.tree_depth}`);
  }
  if (ints.timestamp_from !== undefined && ints.timestamp_to !== undefined && ints.timestamp_from > ints.timestamp_to) {
    throw new TxQueryError('timestamp_from', `must not exceed timestamp_to (${ints.timestamp_from} > ${ints.timestamp_to})`);
  }
  const mf = rec.modified_at_from as string | undefined;
  const mt = rec.modified_at_to as string | undefined;
  if (mf !== undefined && mt !== undefined && mf > mt) {
    throw new TxQueryError('modified_at_from', `must not exceed modified_at_to ('${mf}' > '${mt}', compared as text)`);
  }
}

/** @internal Builds the URL query of a validated TxQuery (subscription_id first, then in the object's order). */
export function txSearchParams(q: TxQuery): URLSearchParams {
  const params = new URLSearchParams();
  const rec = q as unknown as Record<string, unknown>;
  params.set('subscription_id', String(integerValue('subscription_id', rec.subscription_id)));
  for (const [k, v] of Object.entries(rec)) {
    if (k === 'subscription_id' || v === undefined) continue;
    if (k === 'tree') params.set(k, treeValue(v) ? 'true' : 'false');
    else if ((INTEGER_PARAMS as readonly string[]).includes(k)) params.set(k, String(integerValue(k, v)));
    else params.set(k, String(v));
  }
  return params;
}
