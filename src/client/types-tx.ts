/** Transaction record and query types of the client (conventions: types.ts). */
import type { Id } from './id';

/** TX status values (case-sensitive). */
export type TxStatus =
  | 'UNPROCESSED' | 'PROCESSING' | 'IN_PROGRESS' | 'RETRY' | 'ERROR'
  | 'PROCESSED' | 'SUCCESS' | 'NO_DATA' | 'IGNORED';

/** Reporting components, lowest to highest merge precedence. */
export type TxSender = 'scheduler' | 'supervisor' | 'ftpsync' | 'zeroadmin';

/** Attributes of a TX. Every field may be empty or absent depending on the sender. */
export interface TxAttributes {
  subscription_id?: number;
  subscription_name?: string;
  product_name?: string;
  payload_name?: string;
  job_id?: string;
  /** Data date requested upstream: `YYYY-MM-DD` or `YYYY-MM-DDTHH:MM`. */
  attribution_date?: string;
  sender?: TxSender | string;
  status?: TxStatus | string;
  /** UTC timestamp text (fractional seconds, trailing Z possible). */
  modified_at?: string;
  /** Unix seconds. */
  timestamp?: number;
  /** Expiry, Unix seconds. */
  time_to_live?: number;
  file_path?: string;
  /** Parent TX ID; empty string for a root. */
  parent?: string;
  /** Raw mode: child TX IDs. Tree mode: expanded children can remain (ID in `transaction_id`). */
  children?: Array<string | TxTreeChild>;
  error_code?: string;
  error_message?: string;
}

/** An expanded child left in `children` by tree mode. */
export interface TxTreeChild extends TxAttributes {
  transaction_id: string;
}

/** A TX record, flattened: `{ id, ...attributes }`. */
export interface TxRecord extends TxAttributes {
  /** TX ID (in tree mode: the descendant reached). */
  id: string;
}

/** One page of a TX listing. */
export interface TxPage {
  /** The records of the page (may be empty even when more pages follow). */
  records: TxRecord[];
  /** `meta.next_cursor`: the cursor of the next page, `null` when this is the last page. */
  nextCursor: string | null;
}

/**
 * Query of `GET /service/transactions/tx`, with the wire parameter names.
 * Integer parameters accept a number or its decimal string (e.g. from a command line).
 * Omitted / `undefined` parameters are not sent. Checked by `validateTxQuery` before sending.
 */
export interface TxQuery {
  /** Required on every call, including every later page. */
  subscription_id: Id;
  /** 1-200, default 50 (records evaluated before filters and tree expansion). */
  limit?: number | string;
  /** Opaque cursor from `meta.next_cursor` (the client URL-encodes it). */
  cursor?: string;
  /** Inclusive lower bound, Unix seconds. */
  timestamp_from?: number | string;
  /** Inclusive upper bound, Unix seconds. */
  timestamp_to?: number | string;
  /** Inclusive lower bound on the stored timestamp text (lexicographic). */
  modified_at_from?: string;
  /** Inclusive upper bound on the stored timestamp text (lexicographic). */
  modified_at_to?: string;
  attribution_date?: string;
  job_id?: string;
  sender?: TxSender | string;
  status?: TxStatus | string;
  parent?: string;
  payload_name?: string;
  product_name?: string;
  subscription_name?: string;
  error_code?: string;
  error_message?: string;
  file_path?: string;
  time_to_live?: number | string;
  /** Expand parent/child trees. Default false. */
  tree?: boolean | 'true' | 'false';
  /** 1-4, default 4; only with `tree: true`. */
  tree_depth?: number | string;
}
