/**
 * Progress lines and the summary table of a local deployment (shaped like `cdk deploy`).
 */
import { KINDS } from '../kinds';
import type { ResourceState } from './state';
import { fitColumns } from './width';

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

/** The status column of a progress line: the usual statuses (`CREATE_IN_PROGRESS`) fit, rarer longer ones overflow it. */
export const PROGRESS_STATUS_COLUMN = 'CREATE_IN_PROGRESS'.length;
/** The type column of a progress line: `AWS::CloudFormation::Stack` and most resource types fit. */
export const PROGRESS_TYPE_COLUMN = 'AWS::CloudFormation::Stack'.length;
/** The width progress lines fit when the terminal's is not known (output not to a terminal). */
export const DEFAULT_PROGRESS_WIDTH = 100;

/** Columns a progress line keeps for the stack name and the logical ID together. */
const MIN_NAMES_ROOM = 24;
/** In a narrow terminal: the type column's width (shortened in the middle), and the least a status is cut to. */
const NARROW_TYPE_COLUMN = 14;
const NARROW_STATUS_COLUMN = 12;

/** `text` at most `max` characters, its middle replaced by `…` (the start and the end, e.g. a hash, stay). */
export function middleTruncate(text: string, max: number): string {
  if (text.length <= max) return text;
  if (max <= 1) return '…'.slice(0, max);
  const tail = Math.floor((max - 1) / 2);
  return `${text.slice(0, max - 1 - tail)}…${text.slice(text.length - tail)}`;
}

/**
 * A nested stack's name as a person reads it: CDK names it `<Parent>-<Id>NestedStack<Id>NestedStackResource<HASH>`;
 * the progress shows `<Parent>-<Id>` (the JSON result and the state keep the full name).
 */
export function shortStackName(name: string): string {
  return name.replace(/NestedStack.+NestedStackResource[0-9A-F]{8}$/, '') || name;
}

/** Wraps `text` at spaces into lines of at most `width` characters, each starting with `indent`. */
function wrap(text: string, width: number, indent: string): string[] {
  const lines: string[] = [];
  let line = indent;
  for (const word of text.split(/\s+/).filter((w) => w !== '')) {
    if (line !== indent && line.length + 1 + word.length > width) {
      lines.push(line);
      line = indent;
    }
    line = line === indent ? `${indent}${word}` : `${line} ${word}`;
  }
  if (line !== indent) lines.push(line);
  return lines;
}

/**
 * Formats a progress event: `<Stack> | <time> | <STATUS> | <Type> | <LogicalId>`, at most `width` columns (a nested
 * stack by its short name, a long stack name or logical ID shortened in the middle), and the reason, if any, on the
 * lines below it (indented, wrapped to `width`).
 */
export function formatEvent(e: ProgressEvent, width = DEFAULT_PROGRESS_WIDTH): string {
  const time = e.time.slice(11, 19);
  let stack = shortStackName(e.stack);
  // A nested stack's own events name it (its stack name, or its logical ID in the parent): by its short name too.
  let logicalId = e.type === 'AWS::CloudFormation::Stack' ? shortStackName(e.logicalId) : e.logicalId;
  const need = Math.min(MIN_NAMES_ROOM, stack.length + logicalId.length);
  // A long status with a long type: the type without its namespace (`Stack`, `DpiLegacyNotificationPipeline`); in a
  // narrow terminal also without the time and with the type shortened; at last the status shortened in the middle.
  const shortType = e.type.replace(/^(Custom|AWS::CloudFormation)::/, '');
  const forms = [
    ` | ${time} | ${e.status.padEnd(PROGRESS_STATUS_COLUMN)} | ${e.type.padEnd(PROGRESS_TYPE_COLUMN)} | `,
    ` | ${time} | ${e.status} | ${shortType} | `,
    ` | ${e.status} | ${middleTruncate(shortType, NARROW_TYPE_COLUMN)} | `,
  ];
  const fixed = forms.find((f) => width - f.length >= need) ?? (() => {
    const type = middleTruncate(shortType, NARROW_TYPE_COLUMN);
    return ` | ${middleTruncate(e.status, Math.max(NARROW_STATUS_COLUMN, width - need - type.length - 9))} | ${type} | `;
  })();
  const room = Math.max(need, width - fixed.length);
  if (stack.length + logicalId.length > room) {
    // The stack gets up to half of the room, the logical ID the rest.
    stack = middleTruncate(stack, Math.max(Math.ceil(room / 2), room - logicalId.length));
    logicalId = middleTruncate(logicalId, room - stack.length);
  }
  const head = `${stack}${fixed}${logicalId}`;
  return e.reason ? [head, ...wrap(e.reason, width, '    ')].join('\n') : head;
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

/**
 * Renders rows as an aligned text table. With `width`, the widest columns are shortened (cells cut in the middle, so a
 * physical ID's start and end stay) until every line fits it.
 */
export function renderTable(headers: readonly string[], rows: readonly (readonly string[])[], width?: number): string[] {
  let widths = headers.map((h, i) => Math.max(h.length, ...rows.map((r) => (r[i] ?? '').length)));
  if (width !== undefined) widths = fitColumns(widths, headers.map((h) => h.length), width);
  const cut = (cells: readonly string[]): string[] => cells.map((c, i) => middleTruncate(c, widths[i] ?? c.length));
  const line = (cells: readonly string[]): string => cut(cells).map((c, i) => (i === cells.length - 1 ? c : c.padEnd(widths[i]))).join('  ').trimEnd();
  return [line(headers), line(widths.map((w) => '-'.repeat(w))), ...rows.map(line)];
}

/** The summary table of what exists, fitted to `width` (`outputWidth()`) when given. */
export function renderSummary(rows: readonly SummaryRow[], width?: number): string[] {
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
    width,
  );
}
