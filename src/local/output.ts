/**
 * Progress lines and the summary table of a local deployment (shaped like `cdk deploy`).
 */
import { KINDS } from '../kinds';
import type { ResourceState } from './state';

/** One progress event. */
export interface ProgressEvent {
  readonly stack: string;
  /** ISO timestamp. */
  readonly time: string;
  /** CloudFormation-style status, e.g. `CREATE_IN_PROGRESS`, `UPDATE_FAILED`, `DELETE_SKIPPED`. */
  readonly status: string;
  readonly type: string;
  readonly logicalId: string;
  readonly physicalId?: string;
  readonly reason?: string;
}

/** Every status a local run reports (the progress column is as wide as the longest). */
export const PROGRESS_STATUSES = [
  'CREATE_IN_PROGRESS', 'CREATE_COMPLETE', 'CREATE_FAILED', 'CREATE_COMPLETE_CLEANUP_IN_PROGRESS',
  'UPDATE_IN_PROGRESS', 'UPDATE_COMPLETE', 'UPDATE_FAILED', 'UPDATE_COMPLETE_CLEANUP_IN_PROGRESS',
  'UPDATE_ROLLBACK_IN_PROGRESS', 'UPDATE_ROLLBACK_COMPLETE', 'UPDATE_ROLLBACK_FAILED', 'UPDATE_ROLLBACK_COMPLETE_CLEANUP_IN_PROGRESS',
  'ROLLBACK_IN_PROGRESS', 'ROLLBACK_COMPLETE', 'ROLLBACK_FAILED',
  'DELETE_IN_PROGRESS', 'DELETE_COMPLETE', 'DELETE_FAILED', 'DELETE_SKIPPED',
] as const;

/** Width of the status column: the longest status. */
export const STATUS_WIDTH = Math.max(...PROGRESS_STATUSES.map((x) => x.length));
/** Width of the type column: the longest type of a resource the runner drives, or of a stack. */
export const TYPE_WIDTH = Math.max('AWS::CloudFormation::Stack'.length, ...KINDS.map((k) => k.type.length));

/** Formats a progress event: `<Stack> | <time> | <STATUS> | <Type> | <LogicalId> [reason]`. */
export function formatEvent(e: ProgressEvent, statusWidth = STATUS_WIDTH, typeWidth = TYPE_WIDTH): string {
  const time = e.time.slice(11, 19);
  const reason = e.reason ? ` ${e.reason}` : '';
  return `${e.stack} | ${time} | ${e.status.padEnd(statusWidth)} | ${e.type.padEnd(typeWidth)} | ${e.logicalId}${reason}`;
}

/** Attributes shown in the summary table, in this order, when a resource has them. */
export const KEY_ATTRIBUTES = ['SubscribedTypes', 'FailedTypes', 'BucketName', 'Prefix', 'Status', 'BatchCount', 'PrimaryJobId'];

/** A row of the summary table. */
export interface SummaryRow {
  readonly stack: string;
  readonly logicalId: string;
  readonly type: string;
  readonly physicalId: string;
  /** Key attributes (see KEY_ATTRIBUTES). */
  readonly attributes: Record<string, string>;
}

/** Summary rows of deployed resources. */
export function summaryRows(resources: readonly ResourceState[]): SummaryRow[] {
  return resources.map((r) => {
    const attributes: Record<string, string> = {};
    for (const k of KEY_ATTRIBUTES) {
      const v = r.attributes[k];
      if (v !== undefined && v !== null && String(v) !== '') attributes[k] = String(v);
    }
    return { stack: r.stack, logicalId: r.logicalId, type: r.type, physicalId: r.physicalId, attributes };
  });
}

/** Renders rows as an aligned text table. */
export function renderTable(headers: readonly string[], rows: readonly (readonly string[])[]): string[] {
  const widths = headers.map((h, i) => Math.max(h.length, ...rows.map((r) => (r[i] ?? '').length)));
  const line = (cells: readonly string[]): string => cells.map((c, i) => (i === cells.length - 1 ? c : c.padEnd(widths[i]))).join('  ').trimEnd();
  return [line(headers), line(widths.map((w) => '-'.repeat(w))), ...rows.map(line)];
}

/** The summary table of what exists. */
export function renderSummary(rows: readonly SummaryRow[]): string[] {
  if (rows.length === 0) return ['No resources deployed.'];
  return renderTable(
    ['Stack', 'Logical ID', 'Type', 'Physical ID', 'Attributes'],
    rows.map((r) => [
      r.stack,
      r.logicalId,
      r.type,
      r.physicalId,
      Object.entries(r.attributes).map(([k, v]) => `${k}=${v}`).join(' '),
    ]),
  );
}
