/**
 * Parent/child tree of raw TX records (for `dpi tx --tree`), built only from the raw `parent` and
 * `children` links: IDs are never parsed, and the service's tree=true merging is not used.
 */
import { TxRecord } from '../client';
import { sanitize } from './format';

/** A node of the tree: a record, or a child reference whose record is not in the listing. */
export interface TxTreeNode {
  id: string;
  /** Absent for a referenced child that is not in the listing (filtered out, outside the range, or expired). */
  record?: TxRecord;
  children: TxTreeNode[];
  /** Descendants not shown because of the depth limit. */
  hiddenBelow: number;
}

function childIdsOf(r: TxRecord): string[] {
  return (r.children ?? []).map((c) => (typeof c === 'string' ? c : c.transaction_id)).filter((c) => typeof c === 'string' && c !== '');
}

/**
 * Builds the forest. Roots: records whose parent is empty or not in the set (in listing order, newest first).
 * Children of a node: its `children` links in their order, then records naming it as `parent` that the links
 * missed (listing order). A child reference not in the set becomes a node without record. Each record appears
 * once; records only reachable through a cycle become roots. `depth` = child levels shown below a root
 * (undefined = all).
 */
export function buildTxForest(records: TxRecord[], depth?: number): TxTreeNode[] {
  const byId = new Map<string, TxRecord>();
  const order: TxRecord[] = [];
  for (const r of records) {
    if (!byId.has(r.id)) order.push(r);
    byId.set(r.id, r);
  }
  const byParent = new Map<string, string[]>();
  for (const r of order) {
    if (!r.parent || !byId.has(r.parent)) continue;
    const l = byParent.get(r.parent) ?? [];
    l.push(r.id);
    byParent.set(r.parent, l);
  }
  const placed = new Set<string>();
  /** Counts (and marks as placed) the descendants hidden by the depth limit. */
  const hideBelow = (id: string): number => {
    let n = 0;
    for (const c of kidsOf(id)) {
      if (placed.has(c)) continue;
      placed.add(c);
      n += 1 + (byId.has(c) ? hideBelow(c) : 0);
    }
    return n;
  };
  const kidsOf = (id: string): string[] => {
    const r = byId.get(id);
    const out: string[] = [];
    for (const c of r ? childIdsOf(r) : []) if (!out.includes(c)) out.push(c);
    for (const c of byParent.get(id) ?? []) if (!out.includes(c)) out.push(c);
    return out;
  };
  const build = (id: string, level: number): TxTreeNode => {
    placed.add(id);
    const node: TxTreeNode = { id, record: byId.get(id), children: [], hiddenBelow: 0 };
    if (!node.record) return node;
    if (depth !== undefined && level >= depth) {
      node.hiddenBelow = hideBelow(id);
      return node;
    }
    for (const c of kidsOf(id)) {
      if (placed.has(c)) continue;
      node.children.push(build(c, level + 1));
    }
    return node;
  };
  const forest: TxTreeNode[] = [];
  for (const r of order) {
    if (r.parent && byId.has(r.parent)) continue;
    if (!placed.has(r.id)) forest.push(build(r.id, 0));
  }
  // Records only reachable through a cycle of links.
  for (const r of order) if (!placed.has(r.id)) forest.push(build(r.id, 0));
  return forest;
}

/** Renders the forest with box-drawing indentation, one node per line. */
export function renderTxForest(forest: TxTreeNode[], label: (r: TxRecord) => string): string {
  const lines: string[] = [];
  const walk = (node: TxTreeNode, prefix: string, connector: string, childPrefix: string): void => {
    let text = node.record ? `${node.id}  ${label(node.record)}` : `${node.id}  (not in this listing: filtered out, outside the time range, or expired)`;
    if (node.hiddenBelow > 0) text += `  [+${node.hiddenBelow} below --depth]`;
    lines.push(`${prefix}${connector}${sanitize(text)}`);
    node.children.forEach((c, i) => {
      const last = i === node.children.length - 1;
      walk(c, prefix + childPrefix, last ? '└─ ' : '├─ ', last ? '   ' : '│  ');
    });
  };
  for (const root of forest) walk(root, '', '', '');
  return lines.length > 0 ? lines.join('\n') + '\n' : '';
}
