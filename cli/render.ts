/** Human-readable text for sessions: context messages, the entry tree, the listing table. */
import { BLOB_REF_PREFIX } from "../src/blobs/blob-store.js";
import { neutralizeControls } from "./terminal-text.js";
import { displayWidth, padToWidth, truncateToWidth } from "./text-width.js";
import type { AgentMessage, SessionContext, SessionEntry, SessionInfo, SessionTreeNode } from "../src/format/types.js";

/** Tool output and bash output beyond this many lines are cut (the JSON output has it all). */
const OUTPUT_LINES = 12;
const SHORT = 72;
/** A line break as sessions hold them (a CR left at a line's end would be printed as \x0d). */
const LINE_BREAK = /\r?\n/;

/** Whitespace collapsed to single spaces, control characters neutralised, cut to `max` terminal columns. */
export function oneLine(text: string, max: number): string {
  return truncateToWidth(neutralizeControls(text.replace(/\s+/g, " ").trim()), max);
}

function limitLines(lines: string[], max: number): string[] {
  if (lines.length <= max) return lines;
  return [...lines.slice(0, max), `… ${lines.length - max} more lines`];
}

/** Decoded size of base64 text. */
function base64Bytes(data: string): number {
  const padding = data.endsWith("==") ? 2 : data.endsWith("=") ? 1 : 0;
  return Math.floor((data.length * 3) / 4) - padding;
}

type Block = { type?: unknown; [key: string]: unknown };

function imageText(block: Block): string {
  const mime = typeof block.mimeType === "string" ? block.mimeType : "unknown type";
  const data = typeof block.data === "string" ? block.data : "";
  // A ref left in place means the blob was missing when the session was opened.
  if (data.startsWith(BLOB_REF_PREFIX)) return `[image ${mime}, missing blob ${data.slice(BLOB_REF_PREFIX.length, BLOB_REF_PREFIX.length + 12)}…]`;
  return `[image ${mime}, ${base64Bytes(data)} bytes]`;
}

function blockLines(block: Block): string[] {
  switch (block.type) {
    case "text":
      return String(block.text ?? "").split(LINE_BREAK);
    case "image":
      return [imageText(block)];
    case "thinking":
      return [`[thinking] ${oneLine(String(block.thinking ?? ""), 200)}`];
    case "toolCall":
      return [`→ ${String(block.name)}(${oneLine(JSON.stringify(block.arguments ?? {}), 200)})`];
    default:
      return [`[${String(block.type)} block]`];
  }
}

function contentLines(content: unknown): string[] {
  if (typeof content === "string") return content.split(LINE_BREAK);
  if (!Array.isArray(content)) return [];
  return content.flatMap((block) => (typeof block === "object" && block !== null ? blockLines(block as Block) : []));
}

/** The text of a message's content: text blocks only, on one line. */
function plainText(content: unknown): string {
  if (typeof content === "string") return content;
  if (!Array.isArray(content)) return "";
  return content
    .filter((block): block is Block => typeof block === "object" && block !== null && block.type === "text")
    .map((block) => String(block.text))
    .join(" ");
}

function messageTitle(message: AgentMessage): string {
  const m = message as Record<string, unknown>;
  switch (message.role) {
    case "assistant": {
      const model = [m.provider, m.model].filter((part) => typeof part === "string" && part !== "").join("/");
      const stop = m.stopReason === "error" || m.stopReason === "aborted" ? ` · ${String(m.stopReason)}` : "";
      return `assistant${model ? ` · ${model}` : ""}${stop}`;
    }
    case "toolResult":
      return `tool result · ${String(m.toolName)}${m.isError ? " · error" : ""}`;
    case "bashExecution":
      return `bash · exit ${String(m.exitCode ?? "?")}`;
    case "custom":
      return `custom · ${String(m.customType)}${m.display === false ? " · hidden" : ""}`;
    case "branchSummary":
      return `branch summary · from ${String(m.fromId)}`;
    case "compactionSummary":
      return `compaction summary · ${String(m.tokensBefore)} tokens before`;
    default:
      return message.role;
  }
}

function messageBody(message: AgentMessage): string[] {
  const m = message as Record<string, unknown>;
  switch (message.role) {
    case "user":
    case "custom":
      return contentLines(m.content);
    case "assistant": {
      const lines = contentLines(m.content);
      if (typeof m.errorMessage === "string") lines.push(`[error] ${m.errorMessage}`);
      return lines;
    }
    case "toolResult":
      return limitLines(contentLines(m.content), OUTPUT_LINES);
    case "bashExecution": {
      const lines = [`$ ${String(m.command)}`, ...limitLines(String(m.output ?? "").split(LINE_BREAK), OUTPUT_LINES)];
      if (m.cancelled) lines.push("(command cancelled)");
      return lines;
    }
    case "branchSummary":
    case "compactionSummary":
      return String(m.summary ?? "").split(LINE_BREAK);
    default:
      return "content" in m ? contentLines(m.content) : [oneLine(JSON.stringify(m), 300)];
  }
}

export function renderMessages(messages: readonly AgentMessage[]): string[] {
  const lines: string[] = [];
  for (const message of messages) {
    lines.push(`── ${messageTitle(message)} ──`, ...messageBody(message), "");
  }
  return lines;
}

export function renderContextSummary(context: SessionContext): string {
  const model = context.model ? `${context.model.provider}/${context.model.modelId}` : "none";
  // Context messages include compaction and branch summaries and custom messages: not the
  // listing's count of message entries on all branches.
  let line = `${context.messages.length} messages in context · thinking ${context.thinkingLevel} · model ${model}`;
  if (context.omp) {
    const roles = Object.entries(context.omp.models).map(([role, id]) => `${role}=${id}`);
    line += ` · omp mode ${context.omp.mode}`;
    if (roles.length > 0) line += ` · models ${roles.join(", ")}`;
    if (context.omp.injectedTtsrRules.length > 0) line += ` · ttsr rules ${context.omp.injectedTtsrRules.join(", ")}`;
  }
  return line;
}

/** One short line for an entry. */
export function describeEntry(entry: SessionEntry): string {
  const e = entry as Record<string, unknown>;
  switch (entry.type) {
    case "message": {
      const m = entry.message as Record<string, unknown>;
      const text = plainText(m.content);
      if (m.role === "toolResult") return `toolResult ${String(m.toolName)}: ${oneLine(text, SHORT)}`;
      if (m.role === "bashExecution") return `bashExecution $ ${oneLine(String(m.command), SHORT)}`;
      if (m.role === "assistant" && !text.trim() && Array.isArray(m.content)) {
        const tools = (m.content as Block[]).filter((b) => b.type === "toolCall").map((b) => String(b.name));
        if (tools.length > 0) return `assistant → ${tools.join(", ")}`;
      }
      if (m.role === "branchSummary" || m.role === "compactionSummary") return `${entry.message.role}: ${oneLine(String(m.summary), SHORT)}`;
      return `${entry.message.role}: ${oneLine(text, SHORT)}`;
    }
    case "thinking_level_change":
      return `thinking level ${entry.thinkingLevel}`;
    case "model_change":
      return typeof entry.model === "string" ? `model ${entry.model}${entry.role ? ` (${entry.role})` : ""}` : `model ${entry.provider}/${entry.modelId}`;
    case "compaction":
      return `compaction (${entry.tokensBefore} tokens before): ${oneLine(entry.summary, SHORT)}`;
    case "branch_summary":
      return `branch summary: ${oneLine(entry.summary, SHORT)}`;
    case "custom":
      return `custom ${entry.customType}`;
    case "custom_message":
      return `custom message ${entry.customType}: ${oneLine(plainText(entry.content), SHORT)}`;
    case "label":
      return entry.label ? `label ${entry.targetId} = "${entry.label}"` : `label ${entry.targetId} cleared`;
    case "session_info":
      return entry.name ? `session name "${entry.name}"` : "session name cleared";
    case "ttsr_injection":
      return `ttsr rules ${entry.injectedRules.join(", ")}`;
    case "session_init":
      return `session init${entry.task ? `: ${oneLine(entry.task, SHORT)}` : ""}`;
    case "mode_change":
      return `mode ${entry.mode}`;
    default:
      return String(e.type);
  }
}

/**
 * The tree as indented text. A chain continues at its indentation; only a node with several
 * children opens branches (├─ / └─). Walked with an explicit stack: sessions are chains
 * thousands of entries deep.
 */
export function renderTree(roots: readonly SessionTreeNode[], leafId: string | null): string[] {
  const lines: string[] = [];
  type Item = { node: SessionTreeNode; linePrefix: string; childPrefix: string };
  const branches = (nodes: readonly SessionTreeNode[], prefix: string): Item[] =>
    nodes.map((node, i) => {
      const last = i === nodes.length - 1;
      return { node, linePrefix: prefix + (last ? "└─ " : "├─ "), childPrefix: prefix + (last ? "   " : "│  ") };
    });
  const stack: Item[] = roots.length === 1 ? [{ node: roots[0]!, linePrefix: "", childPrefix: "" }] : branches(roots, "").reverse();
  while (stack.length > 0) {
    const { node, linePrefix, childPrefix } = stack.pop()!;
    const label = node.label ? ` [${node.label}]` : "";
    const leaf = node.entry.id === leafId ? "  ← leaf" : "";
    lines.push(`${linePrefix}${node.entry.id} ${describeEntry(node.entry)}${label}${leaf}`);
    if (node.children.length === 1) stack.push({ node: node.children[0]!, linePrefix: childPrefix, childPrefix });
    else stack.push(...branches(node.children, childPrefix).reverse());
  }
  return lines;
}

function formatTime(date: Date): string {
  const pad = (n: number) => String(n).padStart(2, "0");
  return `${date.getFullYear()}-${pad(date.getMonth() + 1)}-${pad(date.getDate())} ${pad(date.getHours())}:${pad(date.getMinutes())}`;
}

/**
 * The shortest prefix length (at least 8) that tells the ids apart: UUIDv7 ids made close in
 * time share their first 8 to 12 characters.
 */
function distinctPrefixLength(ids: readonly string[]): number {
  const distinct = new Set(ids).size;
  const longest = Math.max(0, ...ids.map((id) => id.length));
  let length = 8;
  while (length < longest && new Set(ids.map((id) => id.slice(0, length))).size < distinct) length++;
  return length;
}

/** The listing as a table; paths are absolute file paths (usable as file arguments). */
export function renderSessionTable(infos: ReadonlyArray<SessionInfo & { agent: string }>): string[] {
  const idLength = distinctPrefixLength(infos.map((info) => info.id));
  const rows = infos.map((info) => [
    formatTime(info.modified),
    String(info.messageCount),
    info.agent,
    info.id.slice(0, idLength),
    oneLine(info.name ?? info.title ?? info.firstMessage, 48),
    neutralizeControls(info.path),
  ]);
  const header = ["MODIFIED", "MESSAGES (ALL BRANCHES)", "AGENT", "ID", "NAME / FIRST MESSAGE", "PATH"];
  // By terminal columns: a CJK character or an emoji takes two.
  const widths = header.map((title, column) => Math.max(title.length, ...rows.map((row) => displayWidth(row[column]!))));
  const format = (row: string[]) =>
    row
      .map((cell, column) => (column === row.length - 1 ? cell : padToWidth(cell, widths[column]!, column === 1 ? "start" : "end")))
      .join("  ");
  return [format(header), ...rows.map(format)];
}
