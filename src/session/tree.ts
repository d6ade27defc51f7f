/** getTree: the session as nodes with resolved labels, as pi builds it. */
import type { SessionEntry, SessionTreeNode } from "../format/types.js";

/**
 * An entry's current label and when it was set.
 *
 * @inline
 */
export interface LabelState {
  /** The label. */
  label: string;
  /** When it was set (ISO 8601). */
  timestamp: string;
}

/**
 * A session's entries as a tree of nodes with their labels, as pi's `getTree()` builds it.
 * Roots are entries whose parentId is null, themselves, or missing (orphans). Children are
 * sorted by timestamp, oldest first (a stable sort keeps file order for equal times).
 *
 * @param labels each labelled entry's id → its label
 * @category Sessions
 */
export function buildTree(entries: readonly SessionEntry[], labels: ReadonlyMap<string, LabelState>): SessionTreeNode[] {
  const nodes = new Map<string, SessionTreeNode>();
  for (const entry of entries) {
    const label = labels.get(entry.id);
    nodes.set(entry.id, { entry, children: [], label: label?.label, labelTimestamp: label?.timestamp });
  }
  const roots: SessionTreeNode[] = [];
  for (const entry of entries) {
    const node = nodes.get(entry.id)!;
    const parent = entry.parentId === null || entry.parentId === entry.id ? undefined : nodes.get(entry.parentId);
    if (parent) parent.children.push(node);
    else roots.push(node);
  }
  // Iterative: real sessions are deep chains that would overflow a recursive walk.
  const stack = [...roots];
  while (stack.length > 0) {
    const node = stack.pop()!;
    if (node.children.length > 1) node.children.sort((a, b) => Date.parse(a.entry.timestamp) - Date.parse(b.entry.timestamp));
    for (const child of node.children) stack.push(child);
  }
  return roots;
}
