/**
 * SessionManager: pi's API over a StoragePort, a facade over the session in memory
 * (session-tree.ts), its write path (journal.ts), loading (session-load.ts) and the whole-file
 * rewrites (rewrites.ts); its file's state is one union (file-state.ts).
 */
import { resolveImages } from "../blobs/images.js";
import { SessionError } from "../errors.js";
import type { SessionDialect } from "../format/dialect.js";
import { createEntryId } from "../format/ids.js";
import type { LineProblem } from "../format/jsonl-reader.js";
import type {
  AgentMessage,
  BranchSummaryEntry,
  CompactionEntry,
  CustomEntry,
  CustomMessageEntry,
  ImageContent,
  LabelEntry,
  LeafEntry,
  MessageEntry,
  ModeChangeEntry,
  ModelChangeEntry,
  SessionContext,
  SessionEntry,
  SessionHeader,
  SessionInfo,
  SessionInfoEntry,
  SessionInitEntry,
  SessionTreeNode,
  TextContent,
  ThinkingLevelChangeEntry,
  TtsrInjectionEntry,
} from "../format/types.js";
import { parentDir, type StoragePort } from "../port.js";
import { readBreadcrumb } from "./breadcrumbs.js";
import { detachedPort } from "./detached-port.js";
import type { FollowOptions, FollowUpdate, SessionFollow } from "./follow.js";
import { Journal } from "./journal.js";
import { followSession, loadSession, sessionParts, startSession, switchSession, type SessionParts } from "./session-load.js";
import { listCwdSessions, listAllSessions, findMostRecentSession, type ListOptions } from "./listing.js";
import { sessionStoragePath } from "./session-path.js";
import { sameCwd, storeSessionDir, type StoreLayout } from "./paths.js";
import * as rewrites from "./rewrites.js";
import { layoutOf, type NewSessionOptions, type SessionManagerOptions } from "./session-options.js";
import { nowIso, type SessionTree } from "./session-tree.js";
import { defaultStoreOwner, type StoreOwner } from "./store-owner.js";

export type { NewSessionOptions, SessionManagerOptions } from "./session-options.js";

/**
 * One coding-agent session, with pi's SessionManager API over any StoragePort: open, create or
 * continue a session with the static methods, append entries, walk its tree, build the model's
 * context.
 *
 * Appends change memory at once and return the new entry's id; writes go through one queue, and
 * `await flush()` resolves when they are durable. The first write error is latched: every later
 * append and `flush()` throws that SessionError "persist-failed". Methods that touch storage are
 * async; those that only read or change memory are synchronous, as in pi. Call `close()` when done
 * (it flushes and releases the session's writer lock).
 * @category Sessions
 */
export class SessionManager {
  readonly #session: SessionTree;
  readonly #journal: Journal;
  /** The session, its journal and settings, as loading and the rewrites work on them. */
  readonly #parts: SessionParts;

  private constructor(storage: StoragePort, cwd: string, sessionDir: string, persist: boolean, options: SessionManagerOptions) {
    this.#parts = sessionParts(storage, cwd, sessionDir, persist, options, {
      assertWritable: () => this.#assertWritable(),
      newSession: (o) => this.newSession(o),
    });
    this.#session = this.#parts.session;
    this.#journal = this.#parts.journal;
  }

  // ---- Construction ----

  /** A new session for `cwd`; its file (and folder) appear with the first assistant message. */
  static async create(storage: StoragePort, cwd: string, options: SessionManagerOptions = {}): Promise<SessionManager> {
    const sm = new SessionManager(storage, cwd, options.sessionDir ?? storeSessionDir(layoutOf(options), cwd), true, options);
    // No lock yet: nobody else knows a new session's path, and a lock now would leave a folder
    // behind for a session that never writes. The first write takes it.
    sm.newSession();
    return sm;
  }

  /**
   * Opens a session file: a storage path, or an absolute file path inside the port's `root`. A
   * missing file starts a new session at that path. A file that is not a session throws
   * SessionError "not-a-session" and is left untouched.
   */
  static async open(
    storage: StoragePort,
    filePath: string,
    options: SessionManagerOptions & { cwdOverride?: string } = {},
  ): Promise<SessionManager> {
    const path = sessionStoragePath(storage, filePath);
    const sm = new SessionManager(storage, options.cwdOverride ?? "", options.sessionDir ?? parentDir(path), true, options);
    try {
      await loadSession(sm.#parts, path, options.cwdOverride);
    } catch (error) {
      await sm.#journal.releaseLock(); // the caller gets no session to close
      throw error;
    }
    return sm;
  }

  /**
   * The session this terminal used last (its breadcrumb, when `terminalBreadcrumb` is given and it
   * names an existing file of the same cwd), else the most recently modified valid session of
   * `cwd`, else a new one.
   */
  static async continueRecent(storage: StoragePort, cwd: string, options: SessionManagerOptions = {}): Promise<SessionManager> {
    const layout = layoutOf(options);
    const dir = options.sessionDir ?? storeSessionDir(layout, cwd);
    const crumb = options.terminalBreadcrumb ? await readBreadcrumb(storage, options.terminalBreadcrumb) : null;
    const fromCrumb = crumb && sameCwd(crumb.cwd, cwd) && (await storage.stat(crumb.path)) !== null ? crumb.path : null;
    const recent = fromCrumb ?? (await findMostRecentSession(storage, dir, layout === "seed003" ? { cwd } : {}));
    if (recent) return SessionManager.open(storage, recent, { ...options, sessionDir: dir, cwdOverride: cwd });
    return SessionManager.create(storage, cwd, { ...options, sessionDir: dir });
  }

  /** A session that is never written anywhere. */
  static inMemory(cwd = "", options: Omit<SessionManagerOptions, "readOnly" | "sessionDir"> = {}): SessionManager {
    const sm = new SessionManager(detachedPort(), cwd, "", false, options);
    sm.newSession();
    return sm;
  }

  /**
   * A new session in `targetCwd` holding the full history of `sourcePath` (migrated first), with
   * `parentSession` = the source path (oh-my-pi's layout: the source's id, as oh-my-pi writes). The
   * new file is in the dialect of the layout, its images in the owner's form.
   */
  static async forkFrom(
    storage: StoragePort,
    sourceFile: string,
    targetCwd: string,
    options: SessionManagerOptions = {},
  ): Promise<SessionManager> {
    const sourcePath = sessionStoragePath(storage, sourceFile);
    const layout = layoutOf(options);
    const dir = options.sessionDir ?? storeSessionDir(layout, targetCwd);
    const owner = options.owner ?? defaultStoreOwner(storage, layout);
    const path = await rewrites.writeForkOf(storage, sourcePath, { cwd: targetCwd, dir, layout, owner, onWarning: options.onWarning });
    return SessionManager.open(storage, path, { ...options, sessionDir: dir, cwdOverride: targetCwd });
  }

  /** Sessions of one cwd, most recently modified first (a flat seed-003 store: those whose header cwd is `cwd`). */
  static list(storage: StoragePort, cwd: string, options: ListOptions & { sessionDir?: string; layout?: StoreLayout } = {}): Promise<SessionInfo[]> {
    return listCwdSessions(storage, cwd, options);
  }

  /** Sessions of every cwd (every layout's folders), most recently modified first. */
  static listAll(storage: StoragePort, options: ListOptions = {}): Promise<SessionInfo[]> {
    return listAllSessions(storage, options);
  }

  /** Starts a new, empty session (its file is written with the first assistant message). */
  newSession(options: NewSessionOptions = {}): string | undefined {
    this.#assertOpen();
    return startSession(this.#parts, options);
  }

  /** Switches to another session file (resume): a storage path, or an absolute file path inside the port's `root`. */
  async setSessionFile(filePath: string): Promise<void> {
    this.#assertOpen();
    await switchSession(this.#parts, sessionStoragePath(this.#parts.storage, filePath));
  }

  /** Resolves blob refs in messages (for sessions opened with `resolveImages: "lazy"`). */
  resolveImages<T>(value: T): Promise<T> {
    return resolveImages(value, this.#parts.blobs, (ref) => this.#parts.onWarning(`missing blob ${ref}`));
  }

  // ---- State ----

  /** False for a session made by {@link SessionManager.inMemory} (never written), true otherwise. */
  isPersisted(): boolean {
    return this.#parts.persist;
  }
  /** True when opened with `readOnly`: appends and rewrites throw SessionError "read-only". */
  isReadOnly(): boolean {
    return this.#parts.options.readOnly;
  }
  /** The working directory the session belongs to. */
  getCwd(): string {
    return this.#session.cwd;
  }
  /** The storage directory new session files of this manager go to. */
  getSessionDir(): string {
    return this.#session.sessionDir;
  }
  /** The current session's id. */
  getSessionId(): string {
    return this.#session.header.id;
  }
  /** The storage path of the session file; undefined in memory. */
  getSessionFile(): string | undefined {
    return this.#session.file.path;
  }
  /** The storage the session lives in. */
  getStorage(): StoragePort {
    return this.#parts.storage;
  }
  /** The dialect the session file is read and written in. */
  getDialect(): SessionDialect {
    return this.#session.dialect;
  }
  /** The store layout new files follow (see {@link SessionManagerOptions.layout}). */
  getLayout(): StoreLayout {
    return this.#session.layout;
  }
  /** Whose store the session is written in: what decides the form of its images (see StoreOwner). */
  getOwner(): StoreOwner {
    return this.#journal.owner();
  }
  /** Lines the loader skipped or recovered, with line numbers. */
  getLoadProblems(): readonly LineProblem[] {
    return this.#session.problems;
  }
  /** The version the file was migrated from on load (v1, v2), or null when it was current. */
  getMigratedFrom(): number | null {
    return this.#session.migratedFrom;
  }

  // ---- Appending ----

  #append<T extends SessionEntry>(fields: Omit<T, "id" | "parentId" | "timestamp">, parentId = this.#session.leafId): T {
    this.#assertWritable();
    const session = this.#session;
    const entry = { type: fields.type, id: createEntryId(session.entries), parentId, timestamp: nowIso(), ...fields } as unknown as T;
    session.add(entry);
    this.#journal.record(entry);
    return entry;
  }

  /** Appends a message as a child of the leaf; returns its id. */
  appendMessage(message: AgentMessage): string {
    return this.#append<MessageEntry>({ type: "message", message }).id;
  }

  /** Appends a thinking-level change as a child of the leaf; returns its id. */
  appendThinkingLevelChange(thinkingLevel: string): string {
    return this.#append<ThinkingLevelChangeEntry>({ type: "thinking_level_change", thinkingLevel }).id;
  }

  /** pi's model change: {provider, modelId}. */
  appendModelChange(provider: string, modelId: string): string {
    return this.#append<ModelChangeEntry>({ type: "model_change", provider, modelId }).id;
  }

  /** omp's model change: {model: "provider/modelId", role}. */
  appendRoleModelChange(model: string, role?: string): string {
    return this.#append<ModelChangeEntry>({ type: "model_change", model, role }).id;
  }

  /**
   * Appends a compaction: from here on the model's context holds `summary` in place of the entries
   * before `firstKeptEntryId`. Returns its id.
   */
  appendCompaction(summary: string, firstKeptEntryId: string, tokensBefore: number, details?: unknown, fromHook?: boolean): string {
    return this.#append<CompactionEntry>({ type: "compaction", summary, firstKeptEntryId, tokensBefore, details, fromHook }).id;
  }

  /** Appends an extension's own data (never sent to the model); returns its id. */
  appendCustomEntry(customType: string, data?: unknown): string {
    return this.#append<CustomEntry>({ type: "custom", customType, data }).id;
  }

  /** Appends a message from an extension (`display`: whether the UI shows it); returns its id. */
  appendCustomMessageEntry(customType: string, content: string | Array<TextContent | ImageContent>, display: boolean, details?: unknown): string {
    return this.#append<CustomMessageEntry>({ type: "custom_message", customType, content, display, details }).id;
  }

  /** Names the session (trimmed); an empty name clears it. */
  appendSessionInfo(name: string): string {
    return this.#append<SessionInfoEntry>({ type: "session_info", name: name.trim() }).id;
  }

  /** Sets or (with undefined or "") clears the label of an entry. */
  appendLabelChange(targetId: string, label: string | undefined): string {
    this.#session.requireEntry(targetId);
    return this.#append<LabelEntry>({ type: "label", targetId, label }).id;
  }

  /** omp */
  appendTtsrInjection(injectedRules: string[]): string {
    return this.#append<TtsrInjectionEntry>({ type: "ttsr_injection", injectedRules }).id;
  }

  /** omp */
  appendModeChange(mode: string, data?: unknown): string {
    return this.#append<ModeChangeEntry>({ type: "mode_change", mode, data }).id;
  }

  /** omp */
  appendSessionInit(init: { systemPrompt?: string; task?: string; tools?: string[]; outputSchema?: unknown }): string {
    return this.#append<SessionInitEntry>({ type: "session_init", ...init }).id;
  }

  /**
   * The latest session_info name (an empty latest name means unnamed); without one, the header's
   * `title` (oh-my-pi's name).
   */
  getSessionName(): string | undefined {
    return this.#session.sessionName();
  }

  // ---- Tree ----

  /** The id of the leaf, the entry the next append becomes a child of; null before the first entry. */
  getLeafId(): string | null {
    return this.#session.leafId;
  }
  /** The leaf entry; undefined before the first entry. */
  getLeafEntry(): SessionEntry | undefined {
    return this.#session.leafEntry();
  }
  /** The entry with this id; undefined when there is none. */
  getEntry(id: string): SessionEntry | undefined {
    return this.#session.entries.get(id);
  }
  /** The entries whose parent is `parentId`, in file order. */
  getChildren(parentId: string): SessionEntry[] {
    return this.#session.children(parentId);
  }
  /** The current label of an entry; undefined when it has none. */
  getLabel(id: string): string | undefined {
    return this.#session.labels.get(id)?.label;
  }
  /** All entries in file order (a copy of the list). */
  getEntries(): SessionEntry[] {
    return this.#session.entries.all();
  }
  /** The session file's header line (in pi's shape, whatever the file's dialect). */
  getHeader(): SessionHeader | null {
    return this.#session.header ?? null;
  }
  /** Root → entry path (the leaf by default); [] for an unknown id. */
  getBranch(fromId?: string): SessionEntry[] {
    return this.#session.branch(fromId ?? this.#session.leafId);
  }
  /** The whole session as a tree (every branch), with labels; roots first, children oldest first. */
  getTree(): SessionTreeNode[] {
    return this.#session.tree();
  }
  /** The context at the leaf, or at `leafId`, by the rules of the file's dialect. */
  buildSessionContext(leafId?: string | null): SessionContext {
    return this.#session.context(leafId === undefined ? this.#session.leafId : leafId);
  }

  /**
   * Moves the leaf; the next append starts a branch there. In a seed-003 file the move is durable,
   * as its seed does it: a `leaf` entry (child of the old leaf, pointing at `branchFromId`) is
   * appended.
   */
  branch(branchFromId: string): void {
    this.#session.requireEntry(branchFromId);
    if (this.#session.dialect === "seed003" && !this.#parts.options.readOnly) {
      this.#append<LeafEntry>({ type: "leaf", targetId: branchFromId });
      return;
    }
    this.#session.leafId = branchFromId;
  }

  /** The next append starts a new root. */
  resetLeaf(): void {
    this.#session.leafId = null;
  }

  /** Moves the leaf to `branchFromId` (null: before the first entry) and appends a branch summary. */
  branchWithSummary(branchFromId: string | null, summary: string, details?: unknown, fromHook?: boolean): string {
    if (branchFromId !== null) this.#session.requireEntry(branchFromId);
    this.#session.leafId = branchFromId;
    return this.#append<BranchSummaryEntry>({ type: "branch_summary", fromId: branchFromId ?? "root", summary, details, fromHook }, branchFromId).id;
  }

  /**
   * Replaces this session with a new one holding only the root → `leafId` path; labels on the
   * path are re-emitted after it. Returns the new file's path (undefined in memory); the file is
   * written now if the path has an assistant message, else with the first one.
   */
  createBranchedSession(leafId: string): string | undefined {
    return rewrites.createBranchedSession(this.#parts, leafId);
  }

  // ---- Persistence ----

  #assertOpen(): void {
    const file = this.#session.file;
    if (file.kind === "closed") throw new SessionError("closed", `session ${file.path ?? this.#session.header.id} is closed`, { path: file.path });
  }

  #assertWritable(): void {
    this.#assertOpen();
    if (this.#journal.failure) throw this.#journal.failure;
    if (this.#parts.options.readOnly) {
      const path = this.#session.file.path;
      throw new SessionError("read-only", `session ${path} is open read-only`, { path });
    }
  }

  /**
   * Follows the file while another process writes it (sessions opened with `readOnly: true`): on
   * each change only the bytes after the last complete line are read, the new entries join the
   * index and tree (leaf, labels, context), and `listener` hears about them. A rewritten file (other
   * bytes before that point) is loaded again. See ./follow.ts.
   */
  async follow(listener: (update: FollowUpdate) => void, options: FollowOptions = {}): Promise<SessionFollow> {
    this.#assertOpen();
    return followSession(this.#parts, listener, options);
  }

  /** Resolves when every write so far is durable (synced); rejects with the latched error. */
  flush(): Promise<void> {
    return this.#journal.flush();
  }

  /** Flushes, then releases the writer lock. Later calls throw "closed". */
  async close(): Promise<void> {
    if (this.#session.file.kind === "closed") return;
    try {
      if (this.#parts.persist) await this.flush();
    } finally {
      this.#session.file = { kind: "closed", path: this.#session.file.path };
      await this.#parts.breadcrumbs?.settled();
      await this.#journal.releaseLock();
    }
  }

  // ---- oh-my-pi's operations: name in the header, fork, move, rewrites ----

  /**
   * Names the session. In oh-my-pi's layout the name is the header's `title`: set in memory, and
   * once the file exists, its header line is rewritten atomically (the rest of the file is kept
   * byte for byte). Elsewhere it appends a `session_info` entry, as pi does.
   */
  async setSessionName(name: string): Promise<void> {
    if (this.#session.layout !== "omp") {
      this.appendSessionInfo(name);
      return;
    }
    await rewrites.setTitle(this.#parts, name);
  }

  /**
   * oh-my-pi's fork: a new session (new id and file, in the same folder and dialect) holding the
   * whole history, with `parentSession` = the old session's id and the title kept; this manager
   * continues in it. Returns both files, or undefined when the session is not persisted.
   */
  fork(): Promise<
    | {
        /** The file this manager was on. */
        oldSessionFile: string;
        /** The new session's file, which this manager continues in. */
        newSessionFile: string;
      }
    | undefined
  > {
    return rewrites.fork(this.#parts);
  }

  /**
   * oh-my-pi's move: the session now belongs to `newCwd`. Its file and its side folder (the file's
   * path without `.jsonl`, where tools keep artifacts) move to the new cwd's folder, the header's
   * `cwd` is rewritten, the breadcrumb follows. A failure at any step undoes the steps before it:
   * storage holds the old files or the new ones, never a mix. In a flat (seed-003) store or a
   * folder of the caller's choosing the file stays where it is; only its header changes.
   */
  moveTo(newCwd: string): Promise<void> {
    return rewrites.moveTo(this.#parts, newCwd);
  }

  /**
   * Rewrites the whole file from memory, atomically (oh-my-pi's rewriteEntries): for callers that
   * changed entries in place (pruned tool output). The entries are indexed again; the leaf stays.
   * When the file had lines that did not load, the rewrite cannot carry them: the old file is kept
   * as `<file>.rewrite-<time>.bak`.
   */
  rewriteEntries(): Promise<void> {
    return rewrites.rewriteEntries(this.#parts);
  }

  /**
   * Replaces the `arguments` of the newest assistant `toolCall` with id `toolCallId` and rewrites
   * the file. Returns false, changing nothing, when there is no such call.
   */
  rewriteAssistantToolCallArgs(toolCallId: string, args: Record<string, unknown>): Promise<boolean> {
    return rewrites.rewriteAssistantToolCallArgs(this.#parts, toolCallId, args);
  }
}
