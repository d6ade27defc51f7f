/**
 * The session tree. A chain (an entry with one child) stays at one level, as in pi's tree view:
 * real sessions are chains of thousands of entries with a few branch points. Each branch at a
 * branch point is an indented, collapsible list. Entries on the root → leaf path are marked, the
 * leaf itself carries the leaf marker; clicking an entry asks to view the session up to it.
 */
import type { SessionEntry, SessionTreeNode } from "../../../src/index.js";
import { el, preview } from "./dom.js";

export interface TreeOptions {
  /** The entry viewed as the leaf (null: none). */
  leafId: string | null;
  onSelect: (entryId: string) => void;
}

/** Each rendered tree's rows by entry id, and the rows currently marked. */
const treeState = new WeakMap<HTMLElement, { rows: Map<string, HTMLElement>; marked: HTMLElement[] }>();

export function renderTree(roots: readonly SessionTreeNode[], options: TreeOptions): HTMLElement {
  const top = el("ul", { class: "tree", role: "tree" });
  const rows = new Map<string, HTMLElement>();
  // Iterative: chains are long, and branch points can nest deeply.
  const pending: { node: SessionTreeNode; list: HTMLUListElement }[] = [];
  if (roots.length === 1) pending.push({ node: roots[0]!, list: top });
  else for (const [i, root] of roots.entries()) pending.push({ node: root, list: branchList(top, i, roots.length) });
  while (pending.length > 0) {
    let { node, list } = pending.pop()!;
    for (;;) {
      const row = renderRow(node);
      rows.set(node.entry.id, row);
      list.append(row);
      if (node.children.length !== 1) break;
      node = node.children[0]!;
    }
    const branches = node.children;
    for (const [i, child] of branches.entries()) pending.push({ node: child, list: branchList(list, i, branches.length) });
  }
  top.addEventListener("click", (event) => {
    const row = (event.target as Element).closest<HTMLElement>(".tree-entry");
    if (row?.dataset.entryId) options.onSelect(row.dataset.entryId);
  });
  treeState.set(top, { rows, marked: [] });
  showLeaf(top, options.leafId);
  return top;
}

/**
 * Marks `leafId` as the leaf and the entries on its root → leaf path, in place: only the rows of
 * the old and the new path are touched, and collapsed branches stay collapsed.
 */
export function showLeaf(tree: HTMLElement, leafId: string | null): void {
  const state = treeState.get(tree);
  if (!state) throw new Error("showLeaf: not a tree made by renderTree");
  for (const row of state.marked) {
    row.classList.remove("on-path", "is-leaf");
    row.removeAttribute("aria-current");
    row.querySelector(".leaf-marker")?.remove();
  }
  state.marked = [];
  const leaf = leafId === null ? undefined : state.rows.get(leafId);
  if (!leaf) return;
  leaf.classList.add("is-leaf");
  leaf.setAttribute("aria-current", "true");
  leaf.querySelector("button")!.append(el("span", { class: "leaf-marker" }, "◀ leaf"));
  const seen = new Set<HTMLElement>();
  for (let row: HTMLElement | undefined = leaf; row && !seen.has(row); row = state.rows.get(row.dataset.parentId ?? "")) {
    seen.add(row);
    row.classList.add("on-path");
    state.marked.push(row);
  }
}

/** A collapsible branch under `parent`; returns the list its entries go into. */
function branchList(parent: HTMLUListElement, index: number, count: number): HTMLUListElement {
  const list = el("ul", { class: "tree", role: "group" });
  const toggle = el("button", { class: "branch-toggle", type: "button", "aria-expanded": "true" }, `branch ${index + 1} of ${count}`);
  toggle.addEventListener("click", () => {
    const expanded = toggle.getAttribute("aria-expanded") === "true";
    toggle.setAttribute("aria-expanded", String(!expanded));
    list.hidden = expanded;
  });
  parent.append(el("li", { class: "tree-branch", role: "treeitem" }, toggle, list));
  return list;
}

function renderRow(node: SessionTreeNode): HTMLLIElement {
  const { entry } = node;
  return el(
    "li",
    { class: `tree-entry kind-${entryKind(entry)}`, role: "treeitem", "data-entry-id": entry.id, "data-parent-id": entry.parentId ?? undefined },
    el(
      "button",
      { type: "button", title: `${entry.type} ${entry.id} · ${entry.timestamp}` },
      el("span", { class: "entry-text" }, entrySummary(entry)),
      node.label && el("span", { class: "label" }, node.label),
    ),
  );
}

function entryKind(entry: SessionEntry): string {
  return entry.type === "message" ? `message-${String(entry.message?.role).replace(/[^A-Za-z0-9_-]/g, "_")}` : entry.type.replace(/[^A-Za-z0-9_-]/g, "_");
}

/** The first text of message content. */
function firstText(content: unknown): string {
  if (typeof content === "string") return content;
  if (!Array.isArray(content)) return "";
  for (const block of content) {
    if (block?.type === "text" && typeof block.text === "string" && block.text.trim()) return block.text;
  }
  const tools = content.filter((b) => b?.type === "toolCall").map((b) => String(b.name));
  if (tools.length > 0) return `→ ${tools.join(", ")}`;
  return content.some((b) => b?.type === "image") ? "[image]" : "";
}

/** One line describing an entry. */
export function entrySummary(entry: SessionEntry): string {
  const str = (value: unknown) => (typeof value === "string" ? value : "");
  switch (entry.type) {
    case "message": {
      const message = entry.message ?? { role: "?" };
      if (message.role === "toolResult") return `result ${str(message.toolName)}: ${preview(firstText(message.content), 60)}`;
      if (message.role === "bashExecution") return `$ ${preview(str(message.command), 70)}`;
      return `${message.role}: ${preview(firstText(message.content), 70)}`;
    }
    case "model_change":
      return `model → ${typeof entry.model === "string" ? entry.model : `${str(entry.provider)}/${str(entry.modelId)}`}${entry.role ? ` (${str(entry.role)})` : ""}`;
    case "thinking_level_change":
      return `thinking → ${str(entry.thinkingLevel)}`;
    case "compaction":
      return `compaction: ${preview(str(entry.summary), 60)}`;
    case "branch_summary":
      return `branch summary: ${preview(str(entry.summary), 60)}`;
    case "custom_message":
      return `${str(entry.customType)}: ${preview(firstText(entry.content), 60)}`;
    case "custom":
      return `custom ${str(entry.customType)}`;
    case "label":
      return entry.label ? `label “${str(entry.label)}” on ${str(entry.targetId)}` : `label removed from ${str(entry.targetId)}`;
    case "session_info":
      return `name: ${str(entry.name)}`;
    default:
      return entry.type;
  }
}
