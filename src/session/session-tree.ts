/**
 * A session in memory, as SessionManager holds it: where it lives and its file's state, what the
 * loaded file held beyond its entries, the header, and the entries indexed by id with their
 * labels and leaf, with the reads over them (branch, tree, context). Nothing here writes.
 */
import { SessionError } from "../errors.js";
import type { SessionDialect } from "../format/dialect.js";
import { createEntryId } from "../format/ids.js";
import type { JsonlTail, LineProblem } from "../format/jsonl-reader.js";
import type { LazyEntry } from "../format/lazy-session-file.js";
import {
  CURRENT_SESSION_VERSION,
  type LabelEntry,
  type LeafEntry,
  type MessageEntry,
  type SessionContext,
  type SessionEntry,
  type SessionHeader,
  type SessionInfoEntry,
  type SessionTreeNode,
} from "../format/types.js";
import { buildContextOf, pathToRoot } from "./context.js";
import { EntryList } from "./entry-list.js";
import type { FileState } from "./file-state.js";
import type { FileExtent } from "./follow.js";
import type { StoreLayout } from "./paths.js";
import { buildTree, type LabelState } from "./tree.js";

/** One SessionManager's session in memory (its fields are the manager's state; the other parts change them). */
export class SessionTree {
  cwd: string;
  /** Where new session files of this manager go. */
  sessionDir: string;
  layout: StoreLayout;
  /** The dialect of the session file: what it is read and written in. */
  dialect: SessionDialect = "pi";
  #file: FileState = { kind: "memory", path: undefined };
  header!: SessionHeader;

  /** Lines the loader skipped or recovered. */
  problems: LineProblem[] = [];
  /** The version the loaded file was migrated from, null when it was current. */
  migratedFrom: number | null = null;
  /**
   * The file held blob refs when it was loaded, and has not been written whole since. In a store
   * that keeps images inline they are refs its agent cannot read (written before sessionkit kept
   * owners' formats): a move or a header rewrite writes the file from memory, images inline.
   */
  fileHasBlobRefs = false;
  /** How the loaded file ended; a torn or unterminated tail is repaired before the next append. */
  tailToRepair: { path: string; tail: JsonlTail } | null = null;
  /** How far the load read the file, where `follow` reads on; null when it read no session. */
  loadedExtent: FileExtent | null = null;

  entries = new EntryList();
  labels = new Map<string, LabelState>();
  leafId: string | null = null;
  hasAssistant = false;

  constructor(cwd: string, sessionDir: string, layout: StoreLayout) {
    this.cwd = cwd;
    this.sessionDir = sessionDir;
    this.layout = layout;
  }

  get file(): FileState {
    return this.#file;
  }
  /** Closed is final: a load or a rewrite that ends after close() only changes the path it names. */
  set file(next: FileState) {
    this.#file = this.#file.kind === "closed" && next.kind !== "closed" ? { kind: "closed", path: next.path } : next;
  }

  /** The session's file is `file`, written (or to be written) from memory: no load facts are left. */
  startFile(file: FileState): void {
    this.file = file;
    this.migratedFrom = null;
    this.fileWrittenFromMemory();
  }

  /** The file now holds exactly what memory holds: no lines that did not load, no refs, no torn tail. */
  fileWrittenFromMemory(): void {
    this.problems = [];
    this.fileHasBlobRefs = false;
    this.tailToRepair = null;
  }

  /** Replaces every entry (the leaf becomes the last one's, labels are indexed again). */
  setEntries(entries: readonly LazyEntry[]): void {
    this.entries = new EntryList();
    this.labels = new Map();
    this.leafId = null;
    this.hasAssistant = false;
    for (const entry of entries) this.add(entry);
  }

  add(entry: LazyEntry): void {
    this.entries.push(entry);
    this.#index(entry);
  }

  /** Indexes the entry just added: the leaf, labels, whether an assistant spoke. */
  #index(head: LazyEntry): void {
    if (head.type === "leaf") {
      // seed 003's durable navigation: the leaf moves to the target, not to this entry.
      const { targetId } = this.entries.entry(head) as LeafEntry;
      if (this.entries.has(targetId)) this.leafId = targetId;
    } else {
      this.leafId = head.id;
    }
    if (head.type === "label") {
      const entry = this.entries.entry(head) as LabelEntry;
      if (entry.label) this.labels.set(entry.targetId, { label: entry.label, timestamp: entry.timestamp });
      else this.labels.delete(entry.targetId);
    } else if (head.type === "message" && this.entries.role(head) === "assistant") {
      this.hasAssistant = true;
    }
  }

  requireEntry(id: string): void {
    if (!this.entries.has(id)) throw new SessionError("entry-not-found", `Entry ${id} not found`);
  }

  sessionName(): string | undefined {
    for (let i = this.entries.length - 1; i >= 0; i--) {
      if (this.entries.heads[i]!.type !== "session_info") continue;
      return (this.entries.at(i) as SessionInfoEntry).name?.trim() || undefined;
    }
    return typeof this.header?.title === "string" ? this.header.title.trim() || undefined : undefined;
  }

  leafEntry(): SessionEntry | undefined {
    return this.leafId ? this.entries.get(this.leafId) : undefined;
  }

  children(parentId: string): SessionEntry[] {
    return this.entries.heads.filter((head) => head.parentId === parentId).map((head) => this.entries.entry(head));
  }

  branch(fromId: string | null | undefined): SessionEntry[] {
    return pathToRoot(fromId ? this.entries.byId.get(fromId) : undefined, this.entries.byId).map((head) => this.entries.entry(head));
  }

  tree(): SessionTreeNode[] {
    return buildTree(this.entries.all(), this.labels);
  }

  context(leafId: string | null): SessionContext {
    return buildContextOf(this.entries, leafId, { dialect: this.dialect });
  }

  lastTimestamp(): string {
    return this.entries.heads.at(-1)?.timestamp ?? this.header.timestamp;
  }

  /** The root → `leafId` path without its labels, then the labels on it re-emitted as a chain after it. */
  branchWithLabels(leafId: string): SessionEntry[] {
    const path = this.branch(leafId);
    if (path.length === 0) throw new SessionError("entry-not-found", `Entry ${leafId} not found`);
    const kept = path.filter((e) => e.type !== "label");
    const keptIds = new Set(kept.map((e) => e.id));
    const labels: LabelEntry[] = [];
    let parentId: string | null = kept[kept.length - 1]?.id ?? null;
    for (const [targetId, state] of this.labels) {
      if (!keptIds.has(targetId)) continue;
      const id = createEntryId(keptIds);
      keptIds.add(id);
      labels.push({ type: "label", id, parentId, timestamp: state.timestamp, targetId, label: state.label });
      parentId = id;
    }
    return [...kept, ...labels];
  }

  /**
   * The newest assistant message with a `toolCall` of id `toolCallId`: its index, the entry, and
   * the entry with that call's `arguments` replaced by `args`; undefined when there is none.
   */
  withToolCallArgs(toolCallId: string, args: Record<string, unknown>): { index: number; entry: MessageEntry; updated: MessageEntry } | undefined {
    for (let i = this.entries.length - 1; i >= 0; i--) {
      const head = this.entries.heads[i]!;
      if (head.type !== "message" || this.entries.role(head) !== "assistant") continue;
      const entry = this.entries.at(i) as MessageEntry;
      if (!Array.isArray(entry.message.content)) continue;
      const blocks = entry.message.content as Array<Record<string, unknown>>;
      const at = blocks.findIndex((block) => block?.type === "toolCall" && block.id === toolCallId);
      if (at < 0) continue;
      const content = blocks.slice();
      content[at] = { ...blocks[at], arguments: args };
      return { index: i, entry, updated: { ...entry, message: { ...entry.message, content } } };
    }
    return undefined;
  }
}

let isoMs = Number.NaN;
let iso = "";
/** The time as ISO text, formatted once per millisecond (appends come several to a millisecond). */
export function nowIso(): string {
  const ms = Date.now();
  if (ms !== isoMs) {
    iso = new Date(ms).toISOString();
    isoMs = ms;
  }
  return iso;
}

/** A new session's header in `dialect` (pi's carries the version; seed 003's has none). */
export function newHeader(dialect: SessionDialect, fields: { id: string; timestamp: string; cwd: string; parentSession?: string; title?: string }): SessionHeader {
  const { id, timestamp, cwd, parentSession, title } = fields;
  const header: SessionHeader =
    dialect === "pi" ? { type: "session", version: CURRENT_SESSION_VERSION, id, timestamp, cwd } : { type: "session", id, timestamp, cwd };
  if (title !== undefined) header.title = title;
  if (parentSession !== undefined) header.parentSession = parentSession;
  return header;
}
