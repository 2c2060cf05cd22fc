/** The vocabulary of the drift check (src/handler/drift.ts), apart so that the kinds' checks can name it. */

/** One deployed resource to check. */
export interface DriftResource {
  /** Stack name. */
  readonly stack: string;
  readonly logicalId: string;
  /** `Custom::Dpi*` */
  readonly type: string;
  readonly physicalId: string;
  /** Journal key; default `<stack>/<logicalId>` (as the handler's `resourceKey()` builds it). */
  readonly key?: string;
}

/** The verdict of one resource. */
export type DriftStatus = 'IN_SYNC' | 'MODIFIED' | 'DELETED' | 'NOT_CHECKED';

/** One property that differs: the declared value (journal) and the live one (service). */
export interface DriftDifference {
  /** The construct prop's name (`status`, `name`, `stageIds`, `productParameters.<key>`, ...). */
  readonly property: string;
  readonly declared: string;
  readonly live: string;
}

/** The result of one resource. */
export interface DriftRow {
  readonly stack: string;
  readonly logicalId: string;
  readonly key: string;
  readonly type: string;
  readonly physicalId: string;
  readonly status: DriftStatus;
  /** MODIFIED: each differing property. */
  readonly differences: DriftDifference[];
  /** Declared properties the service's reads do not show (never reported as drift). */
  readonly notChecked: string[];
  /** Why a resource is DELETED or NOT_CHECKED (and notes, e.g. a history request's live status). */
  readonly reason?: string;
}

/**
 * Stored product parameters by subscription ID, as the vendor's parameter reads show them; `undefined` when the
 * service does not show them (the spec lists no such read).
 */
export type ShownParameters = ReadonlyMap<string, Record<string, string>> | undefined;
