/**
 * pi's SessionInfo, computed incrementally: records are fed in file order, from the start or from
 * where the last pass stopped (files are append-only). The summary is bounded, as a catalog keeps
 * one per session: the first message, the name and oh-my-pi's title and short summary are capped,
 * and the text of all messages (pi's allMessagesText) is collected only when asked for (`FullText`).
 */
import { ascii, type MessageLineHead } from "../format/message-line.js";
import type { SessionInfo } from "../format/types.js";

/** Characters of the first user message a summary keeps (pi's picker shows one line of it). */
const FIRST_MESSAGE_CAP = 4096;
/** Characters of the session name a summary keeps. */
const NAME_CAP = 1024;

export interface SessionSummary {
  /** False when the first record is not a session header, or pi would reject the file. */
  valid: boolean;
  id: string;
  cwd: string;
  headerTimestamp: unknown;
  parentSessionPath?: string;
  /** Latest session_info name ("" = cleared), undefined when there is none; at most NAME_CAP chars. */
  name?: string;
  /** oh-my-pi: the header's title (at most FIRST_MESSAGE_CAP chars). */
  title?: string;
  /** oh-my-pi: the last compaction's shortSummary (the listing title when there is no title; capped likewise). */
  shortSummary?: string;
  messageCount: number;
  /** The first user message with text, at most FIRST_MESSAGE_CAP chars. */
  firstMessage: string;
  lastActivityTime?: number;
  records: number;
}

/** The unbounded texts pi's SessionInfo carries, collected on request. */
export interface FullText {
  allMessagesText: string;
  firstMessage: string;
}

export function emptySummary(): SessionSummary {
  return { valid: false, id: "", cwd: "", headerTimestamp: undefined, messageCount: 0, firstMessage: "", records: 0 };
}

/**
 * Adds one record (header first) to `summary`, exactly as pi's buildSessionInfo reads it; with
 * `full`, also the texts pi keeps whole.
 */
export function addRecord(summary: SessionSummary, record: Record<string, unknown>, full?: FullText): void {
  summary.records++;
  if (summary.records === 1) {
    if (record.type !== "session") return;
    summary.valid = true;
    summary.id = record.id as string;
    summary.cwd = typeof record.cwd === "string" ? record.cwd : "";
    summary.headerTimestamp = record.timestamp;
    if (record.parentSession !== undefined) summary.parentSessionPath = record.parentSession as string;
    if (typeof record.title === "string" && record.title.trim()) summary.title = record.title.trim().slice(0, FIRST_MESSAGE_CAP);
    return;
  }
  if (!summary.valid) return;
  if (record.type === "session_info") {
    summary.name = typeof record.name === "string" ? record.name.trim().slice(0, NAME_CAP) : "";
  }
  if (record.type === "compaction") {
    summary.shortSummary = typeof record.shortSummary === "string" ? record.shortSummary.trim().slice(0, FIRST_MESSAGE_CAP) || undefined : undefined;
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
  if (full) {
    full.allMessagesText = full.allMessagesText ? `${full.allMessagesText} ${text}` : text;
    if (!full.firstMessage && message.role === "user") full.firstMessage = text;
  }
  if (!summary.firstMessage && message.role === "user") summary.firstMessage = text.slice(0, FIRST_MESSAGE_CAP);
}

/**
 * Adds a message line proved from its bytes (`bytes`: format/message-line.ts) exactly as addRecord
 * would add its record, without decoding or parsing it. Returns false, adding nothing, when that
 * needs the message's text: a user message while the first one is not found yet, or a content
 * whose text cannot be read (addRecord marks the file invalid then). The caller parses those.
 */
export function addMessageLine(summary: SessionSummary, head: MessageLineHead, bytes: Uint8Array): boolean {
  const talks = head.role === "user" || head.role === "assistant";
  if (summary.valid && talks && head.content !== "absent" && (head.content === "other" || (head.role === "user" && !summary.firstMessage))) return false;
  summary.records++;
  // A message as the first record: no header, the file is no session (addRecord's first test).
  if (summary.records === 1 || !summary.valid) return true;
  summary.messageCount++;
  if (!talks || head.content === "absent") return true;
  const time =
    head.messageTimestampStart >= 0 ? Number(ascii(bytes, head.messageTimestampStart, head.messageTimestampEnd)) : new Date(ascii(bytes, head.timestampStart, head.timestampEnd)).getTime();
  if (!Number.isNaN(time)) summary.lastActivityTime = Math.max(summary.lastActivityTime ?? 0, time);
  return true;
}

function extractText(content: unknown): string {
  if (typeof content === "string") return content;
  return (content as Array<{ type: string; text: string }>)
    .filter((block) => block.type === "text")
    .map((block) => block.text)
    .join(" ");
}

/** The SessionInfo of a summary; with `full`, pi's whole first message and allMessagesText. */
export function toSessionInfo(path: string, summary: SessionSummary, mtimeMs: number, full?: FullText): SessionInfo {
  let modified: Date;
  if (typeof summary.lastActivityTime === "number" && summary.lastActivityTime > 0) {
    modified = new Date(summary.lastActivityTime);
  } else {
    const headerTime = typeof summary.headerTimestamp === "string" ? new Date(summary.headerTimestamp).getTime() : NaN;
    modified = Number.isNaN(headerTime) ? new Date(mtimeMs) : new Date(headerTime);
  }
  const info: SessionInfo = {
    path,
    id: summary.id,
    cwd: summary.cwd,
    name: summary.name || undefined,
    title: summary.title ?? summary.shortSummary,
    parentSessionPath: summary.parentSessionPath,
    created: new Date(summary.headerTimestamp as string),
    modified,
    messageCount: summary.messageCount,
    firstMessage: (full ? full.firstMessage : summary.firstMessage) || "(no messages)",
  };
  if (full) info.allMessagesText = full.allMessagesText;
  return info;
}
