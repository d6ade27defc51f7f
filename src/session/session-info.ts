/**
 * pi's SessionInfo, computed incrementally: records are fed in file order, from the start or
 * from where the last pass stopped (files are append-only), and the summary is JSON-serializable
 * so a catalog can keep it.
 */
import type { SessionInfo } from "../format/types.js";

export interface SessionSummary {
  /** False when the first record is not a session header, or pi would reject the file. */
  valid: boolean;
  id: string;
  cwd: string;
  headerTimestamp: unknown;
  parentSessionPath?: string;
  /** Latest session_info name ("" = cleared), undefined when there is none. */
  name?: string;
  /** oh-my-pi: the header's title. */
  title?: string;
  /** oh-my-pi: the last compaction's shortSummary (the listing title when there is no title). */
  shortSummary?: string;
  messageCount: number;
  firstMessage: string;
  allMessagesText: string;
  lastActivityTime?: number;
  records: number;
}

export function emptySummary(): SessionSummary {
  return { valid: false, id: "", cwd: "", headerTimestamp: undefined, messageCount: 0, firstMessage: "", allMessagesText: "", records: 0 };
}

/** Adds one record (header first) to `summary`, exactly as pi's buildSessionInfo reads it. */
export function addRecord(summary: SessionSummary, record: Record<string, unknown>): void {
  summary.records++;
  if (summary.records === 1) {
    if (record.type !== "session") return;
    summary.valid = true;
    summary.id = record.id as string;
    summary.cwd = typeof record.cwd === "string" ? record.cwd : "";
    summary.headerTimestamp = record.timestamp;
    if (record.parentSession !== undefined) summary.parentSessionPath = record.parentSession as string;
    if (typeof record.title === "string" && record.title.trim()) summary.title = record.title.trim();
    return;
  }
  if (!summary.valid) return;
  if (record.type === "session_info") {
    summary.name = typeof record.name === "string" ? record.name.trim() : "";
  }
  if (record.type === "compaction") {
    summary.shortSummary = typeof record.shortSummary === "string" ? record.shortSummary.trim() || undefined : undefined;
  }
  if (record.type !== "message") return;
  summary.messageCount++;
  const message = record.message as Record<string, unknown> | undefined;
  if (!message || typeof message.role !== "string" || !("content" in message)) return;
  if (message.role !== "user" && message.role !== "assistant") return;
  if (typeof message.timestamp === "number") {
    summary.lastActivityTime = Math.max(summary.lastActivityTime ?? 0, message.timestamp);
  } else if (typeof record.timestamp === "string") {
    const t = new Date(record.timestamp).getTime();
    if (!Number.isNaN(t)) summary.lastActivityTime = Math.max(summary.lastActivityTime ?? 0, t);
  }
  let text: string;
  try {
    text = extractText(message.content);
  } catch {
    summary.valid = false; // pi's listing throws on such a file and leaves it out
    return;
  }
  if (!text) return;
  summary.allMessagesText = summary.allMessagesText ? `${summary.allMessagesText} ${text}` : text;
  if (!summary.firstMessage && message.role === "user") summary.firstMessage = text;
}

function extractText(content: unknown): string {
  if (typeof content === "string") return content;
  return (content as Array<{ type: string; text: string }>)
    .filter((block) => block.type === "text")
    .map((block) => block.text)
    .join(" ");
}

export function toSessionInfo(path: string, summary: SessionSummary, mtimeMs: number): SessionInfo {
  let modified: Date;
  if (typeof summary.lastActivityTime === "number" && summary.lastActivityTime > 0) {
    modified = new Date(summary.lastActivityTime);
  } else {
    const headerTime = typeof summary.headerTimestamp === "string" ? new Date(summary.headerTimestamp).getTime() : NaN;
    modified = Number.isNaN(headerTime) ? new Date(mtimeMs) : new Date(headerTime);
  }
  return {
    path,
    id: summary.id,
    cwd: summary.cwd,
    name: summary.name || undefined,
    title: summary.title ?? summary.shortSummary,
    parentSessionPath: summary.parentSessionPath,
    created: new Date(summary.headerTimestamp as string),
    modified,
    messageCount: summary.messageCount,
    firstMessage: summary.firstMessage || "(no messages)",
    allMessagesText: summary.allMessagesText,
  };
}
