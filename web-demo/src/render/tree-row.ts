/** One row of the tree sidebar: connectors, the path marker, the label, and pi's one-line text of the entry. */
import type { SessionEntry } from "../../../src/format/types.js";
import { contentText } from "../model/content-text.js";
import type { SessionModel } from "../model/session-model.js";
import { treePrefix, type EntrySet, type TreeRow } from "../model/tree-layout.js";
import { el, forkIcon, oneLine, shortenPath, type Child } from "./dom.js";

type Block = Record<string, unknown>;
const isObject = (value: unknown): value is Block => typeof value === "object" && value !== null;
const str = (value: unknown): string => (typeof value === "string" ? value : "");

/** pi's short form of a tool call: [read: ~/x.ts:1-20], [bash: npm test], … */
export function formatToolCall(name: string, args: Block): string {
  const path = shortenPath(str(args.path ?? args.file_path));
  switch (name) {
    case "read": {
      const offset = typeof args.offset === "number" ? args.offset : undefined;
      const limit = typeof args.limit === "number" ? args.limit : undefined;
      const range = offset === undefined && limit === undefined ? "" : `:${offset ?? 1}${limit !== undefined ? `-${(offset ?? 1) + limit - 1}` : ""}`;
      return `[read: ${path}${range}]`;
    }
    case "write":
    case "edit":
      return `[${name}: ${path}]`;
    case "bash": {
      const command = str(args.command);
      const flat = command.replace(/[\n\t]/g, " ").trim();
      return `[bash: ${flat.slice(0, 50)}${command.length > 50 ? "..." : ""}]`;
    }
    case "grep":
      return `[grep: /${str(args.pattern)}/ in ${path || "."}]`;
    case "find":
      return `[find: ${str(args.pattern)} in ${path || "."}]`;
    case "ls":
      return `[ls: ${path || "."}]`;
    default: {
      const json = JSON.stringify(args) ?? "";
      return `[${name}: ${json.slice(0, 40)}${json.length > 40 ? "..." : ""}]`;
    }
  }
}

const span = (cls: string, ...children: Child[]) => el("span", { class: cls }, ...children);

/** The role-coloured text of an entry's row (pi's getTreeNodeDisplayHtml, as DOM). */
export function entryRowText(entry: SessionEntry, model: SessionModel): Child[] {
  switch (entry.type) {
    case "message": {
      const message: Block = isObject(entry.message) ? entry.message : {};
      const role = str(message.role);
      if (role === "user") return [span("role-user", "user:"), ` ${oneLine(contentText(message.content))}`];
      if (role === "assistant") {
        const text = oneLine(contentText(message.content));
        if (text) return [span("role-assistant", "assistant:"), ` ${text}`];
        if (message.stopReason === "aborted") return [span("role-assistant", "assistant:"), " ", span("muted", "(aborted)")];
        if (message.errorMessage) return [span("role-assistant", "assistant:"), " ", span("error-text", oneLine(str(message.errorMessage)))];
        return [span("role-assistant", "assistant:"), " ", span("muted", "(no text)")];
      }
      if (role === "toolResult") {
        const call = model.toolCall(str(message.toolCallId));
        return [span("role-tool", call ? formatToolCall(call.name, call.arguments) : `[${str(message.toolName) || "tool"}]`)];
      }
      if (role === "bashExecution") return [span("role-tool", "[bash]:"), ` ${oneLine(str(message.command))}`];
      return [span("muted", `[${role}]`), ` ${oneLine(contentText(message.content))}`];
    }
    case "compaction":
      return [span("role-compaction", `[compaction: ${typeof entry.tokensBefore === "number" ? Math.round(entry.tokensBefore / 1000) : "?"}k tokens]`)];
    case "branch_summary":
      return [span("role-branch-summary", "[branch summary]:"), ` ${oneLine(str(entry.summary))}`];
    case "custom_message":
      return [span("role-custom", `[${str(entry.customType)}]:`), ` ${oneLine(contentText(entry.content))}`];
    case "model_change":
      return [span("muted", `[model: ${typeof entry.model === "string" ? entry.model : str(entry.modelId)}]`)];
    case "thinking_level_change":
      return [span("muted", `[thinking: ${str(entry.thinkingLevel)}]`)];
    case "label":
      return [span("muted", `[label: ${str(entry.label) || "(removed)"}]`)];
    case "session_info":
      return [span("muted", `[name: ${str(entry.name)}]`)];
    case "custom":
      return [span("muted", `[custom: ${str(entry.customType)}]`)];
    default:
      return [span("muted", `[${entry.type}]`)];
  }
}

export interface TreeRowState {
  /** Entries on the root → viewed leaf path, by number (shaded). */
  activePath: EntrySet;
  /** The viewed leaf (bold, marked ●). */
  leafId: string | null;
  /** The entry being read in the messages (or its nearest listed ancestor). */
  readingId: string | null;
  /** The entry the view scrolled to (pi's "active" row). */
  targetId: string | null;
  /** The row the keyboard is on. */
  cursorId: string | null;
}

export function renderTreeRow(row: TreeRow, model: SessionModel, state: TreeRowState): HTMLElement {
  const { entry } = row;
  const label = model.labels.get(entry.id);
  const onPath = state.activePath.has(model.indexOf(entry.id) ?? -1);
  const classes = ["tree-node"];
  if (onPath) classes.push("in-path");
  if (entry.id === state.targetId) classes.push("active");
  if (entry.id === state.cursorId) classes.push("cursor");
  if (entry.id === state.readingId) classes.push("reading");
  const leaf = entry.id === state.leafId;
  if (leaf) classes.push("leaf");
  return el(
    "div",
    {
      class: classes.join(" "),
      role: "treeitem",
      "data-entry-id": entry.id,
      "aria-selected": String(entry.id === state.cursorId),
      "aria-expanded": row.foldable ? String(!row.folded) : undefined,
      "aria-current": leaf ? "location" : undefined,
    },
    span("tree-prefix", treePrefix(row)),
    row.foldable
      ? el("button", { type: "button", class: "fold", "data-action": "fold", tabindex: "-1", title: row.folded ? "Unfold" : "Fold", "aria-label": row.folded ? "Unfold" : "Fold" }, row.folded ? "▸" : "▾")
      : span("tree-marker", leaf ? "●" : onPath ? "•" : " "),
    label && span("tree-label", `[${label}]`),
    label && " ",
    span("tree-content", ...entryRowText(entry, model)),
    row.childCount > 1 && span("branch-count", " ", forkIcon(), String(row.childCount)),
    row.folded && span("fold-count", ` +${row.hiddenBelow}`),
  );
}
