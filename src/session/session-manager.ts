/**
 * SessionManager: pi's API over a StoragePort. In-memory state changes at once; every write goes
 * through one queue; the first persistence error is latched and rethrown by every later write.
 */
import { BlobStore } from "../blobs/blob-store.js";
import { hasImagesToConvert, imagesInForm, resolveImages } from "../blobs/images.js";
import { SessionError } from "../errors.js";
import { ReusedEncodeBuffer } from "../format/bytes.js";
import { encodeRecord, type SessionDialect } from "../format/dialect.js";
import { encodeJsonl, encodeSessionFile, readSessionFile } from "../format/session-file.js";
import { entryOf, readSessionFileLazily, type LazyEntry } from "../format/lazy-session-file.js";
import { UnparsedEntry } from "../format/unparsed-entry.js";
import { createEntryId, createSessionId } from "../format/ids.js";
import type { JsonlTail, LineProblem } from "../format/jsonl-reader.js";
import {
  CURRENT_SESSION_VERSION,
  type AgentMessage,
  type BranchSummaryEntry,
  type CompactionEntry,
  type CustomEntry,
  type CustomMessageEntry,
  type ImageContent,
  type LabelEntry,
  type LeafEntry,
  type MessageEntry,
  type ModeChangeEntry,
  type ModelChangeEntry,
  type SessionContext,
  type SessionEntry,
  type SessionHeader,
  type SessionInfo,
  type SessionInfoEntry,
  type SessionInitEntry,
  type SessionTreeNode,
  type TextContent,
  type ThinkingLevelChangeEntry,
  type TtsrInjectionEntry,
} from "../format/types.js";
import { baseName, joinPath, parentDir, type StorageLock, type StoragePort } from "../port.js";
import { BreadcrumbWriter, readBreadcrumb } from "./breadcrumbs.js";
import { detachedPort } from "./detached-port.js";
import { followSession, type FileExtent, type FollowOptions, type FollowUpdate, type SessionFollow } from "./follow.js";
import { buildContextOf, pathToRoot } from "./context.js";
import { EntryList } from "./entry-list.js";
import { listSessions, listAllSessions, findMostRecentSession, type ListOptions } from "./listing.js";
import { relocateSession, replaceFirstLine } from "./relocate.js";
import { sessionStoragePath } from "./session-path.js";
import { layoutDialect, sameCwd, SESSIONS_DIR, storeSessionDir, storeSessionFileName, type StoreLayout } from "./paths.js";
import { layoutOf, resolveOptions, type NewSessionOptions, type ResolvedOptions, type SessionManagerOptions } from "./session-options.js";
import { defaultStoreOwner, ownerLayout, storeImageForm, storeLimitsContent, type StoreOwner } from "./store-owner.js";
import { prepareValueForPersistence } from "./persist-transform.js";
import { buildTree, type LabelState } from "./tree.js";

export type { NewSessionOptions, SessionManagerOptions } from "./session-options.js";

type Op = () => Promise<void>;

interface AppendBatch {
  path: string;
  dialect: SessionDialect;
  entries: SessionEntry[];
  /** A flush() is waiting on this batch: sync the file together with the append. */
  syncAfter: boolean;
}

/** Batches up to this many characters are encoded into #batchBytes (its buffer at most 3× that). */
const BATCH_BUFFER_CHARS = 64 << 10;

let isoMs = Number.NaN;
let iso = "";
/** The time as ISO text, formatted once per millisecond (appends come several to a millisecond). */
function nowIso(): string {
  const ms = Date.now();
  if (ms !== isoMs) {
    iso = new Date(ms).toISOString();
    isoMs = ms;
  }
  return iso;
}

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
  readonly #storage: StoragePort;
  /**
   * Each append batch's bytes, until the next batch is encoded: a port is done with them once its
   * append settles (StoragePort.append), and batches are written one after the other.
   */
  readonly #batchBytes = new ReusedEncodeBuffer(BATCH_BUFFER_CHARS);
  readonly #persist: boolean;
  readonly #options: ResolvedOptions;
  readonly #blobs: BlobStore;
  #cwd: string;
  #sessionDir: string;
  #layout: StoreLayout;
  /** The layout was given (or the owner's), not inferred from the file opened. */
  readonly #layoutGiven: boolean;
  readonly #ownerGiven: StoreOwner | undefined;
  /** The dialect of the session file: what it is read and written in. */
  #dialect: SessionDialect = "pi";
  readonly #breadcrumbs: BreadcrumbWriter | undefined;
  #sessionFile: string | undefined;
  #sessionId = "";
  #header!: SessionHeader;
  #entries = new EntryList();
  #labels = new Map<string, LabelState>();
  #leafId: string | null = null;
  #hasAssistant = false;
  /** The file exists and holds the header and every entry appended so far (pi's "flushed"). */
  #fileStarted = false;
  #problems: LineProblem[] = [];
  /** The version the loaded file was migrated from, null when it was current. */
  #migratedFrom: number | null = null;
  /**
   * The file held blob refs when it was loaded, and has not been written whole since. In a store
   * that keeps images inline they are refs its agent cannot read (written before sessionkit kept
   * owners' formats): a move or a header rewrite writes the file from memory, images inline.
   */
  #fileHasBlobRefs = false;
  /** How the loaded file ended; a torn or unterminated tail is repaired before the next append. */
  #tailToRepair: { path: string; tail: JsonlTail } | null = null;
  /** How far the load read the file, where `follow` reads on; null when it read no session. */
  #loadedExtent: FileExtent | null = null;

  #queue: Promise<void> = Promise.resolve();
  #openBatch: AppendBatch | null = null;
  #persistError: Error | null = null;
  #lock: { path: string; lock: Promise<StorageLock> } | null = null;
  /** Files written since the last sync. */
  #unsynced = new Set<string>();
  #closed = false;

  private constructor(storage: StoragePort, cwd: string, sessionDir: string, persist: boolean, options: SessionManagerOptions) {
    this.#storage = storage;
    this.#cwd = cwd;
    this.#sessionDir = sessionDir;
    this.#layout = layoutOf(options);
    this.#layoutGiven = options.layout !== undefined || (options.owner !== undefined && ownerLayout(options.owner) !== undefined);
    this.#ownerGiven = options.owner;
    this.#persist = persist && !options.readOnly;
    this.#options = resolveOptions(options);
    this.#breadcrumbs = options.terminalBreadcrumb && new BreadcrumbWriter(storage, options.terminalBreadcrumb, this.#options.onWarning);
    this.#blobs = new BlobStore(storage);
  }

  // ===========================================================================
  // Construction
  // ===========================================================================

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
      await sm.#load(path, options.cwdOverride);
    } catch (error) {
      await sm.#releaseLock(); // the caller gets no session to close
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
    const source = await readSessionFile(storage, sourcePath);
    if (source.kind !== "session") {
      throw new SessionError("not-a-session", `cannot fork: ${sourcePath} is ${source.kind === "missing" ? "missing" : "empty"}`, { path: sourcePath });
    }
    const layout = layoutOf(options);
    const dir = options.sessionDir ?? storeSessionDir(layout, targetCwd);
    const form = storeImageForm(options.owner ?? defaultStoreOwner(storage, layout));
    const blobs = new BlobStore(storage);
    const entries: SessionEntry[] = [];
    for (const entry of source.entries) {
      const missing = (ref: string) => options.onWarning?.(`${sourcePath}: entry ${entry.id}: missing blob ${ref}`);
      entries.push(hasImagesToConvert(entry, form) ? await imagesInForm(entry, form, blobs, missing) : entry);
    }
    const id = createSessionId();
    const timestamp = nowIso();
    const path = joinPath(dir, storeSessionFileName(layout, timestamp, id));
    const parentSession = layout === "omp" ? source.header.id : sourcePath;
    const header = newHeader(layoutDialect(layout), { id, timestamp, cwd: targetCwd, parentSession, title: layout === "omp" ? source.header.title : undefined });
    await storage.write(path, encodeSessionFile(layoutDialect(layout), header, entries));
    return SessionManager.open(storage, path, { ...options, sessionDir: dir, cwdOverride: targetCwd });
  }

  /** Sessions of one cwd, most recently modified first (a flat seed-003 store: those whose header cwd is `cwd`). */
  static list(storage: StoragePort, cwd: string, options: ListOptions & { sessionDir?: string; layout?: StoreLayout } = {}): Promise<SessionInfo[]> {
    const layout = options.layout ?? "pi";
    const dir = options.sessionDir ?? storeSessionDir(layout, cwd);
    return listSessions(storage, dir, layout === "seed003" && dir === SESSIONS_DIR ? { ...options, cwd } : options);
  }

  /** Sessions of every cwd (every layout's folders), most recently modified first. */
  static listAll(storage: StoragePort, options: ListOptions = {}): Promise<SessionInfo[]> {
    return listAllSessions(storage, options);
  }

  /** Starts a new, empty session (its file is written with the first assistant message). */
  newSession(options: NewSessionOptions = {}): string | undefined {
    this.#assertOpen();
    this.#sessionId = options.id ?? createSessionId();
    const timestamp = nowIso();
    this.#dialect = layoutDialect(this.#layout);
    this.#header = newHeader(this.#dialect, { id: this.#sessionId, timestamp, cwd: this.#cwd, parentSession: options.parentSession });
    this.#setEntries([]);
    this.#fileStarted = false;
    this.#problems = [];
    this.#migratedFrom = null;
    this.#fileHasBlobRefs = false;
    this.#tailToRepair = null;
    this.#sessionFile = this.#persist || this.#options.readOnly ? joinPath(this.#sessionDir, storeSessionFileName(this.#layout, timestamp, this.#sessionId)) : undefined;
    if (this.#sessionFile) this.#rememberBreadcrumb();
    return this.#sessionFile;
  }

  /** Switches to another session file (resume): a storage path, or an absolute file path inside the port's `root`. */
  async setSessionFile(filePath: string): Promise<void> {
    this.#assertOpen();
    const path = sessionStoragePath(this.#storage, filePath);
    await this.#settle(); // writes queued for the current file land first, under its lock
    const previous = this.#sessionFile;
    try {
      await this.#load(path);
    } catch (error) {
      if (previous && this.#persist) await this.#takeLock(previous).catch(() => {});
      throw error;
    }
  }

  async #load(path: string, cwdOverride?: string): Promise<void> {
    // Locked before reading: what we read (a torn tail's offset) must still hold when we write.
    if (this.#persist) await this.#takeLock(path);
    const file = this.#options.parse === "lazy" ? await readSessionFileLazily(this.#storage, path) : await readSessionFile(this.#storage, path);
    this.#loadedExtent = file.kind === "session" ? file.extent : null;
    if (file.kind !== "session") {
      // Missing or empty: a new session at this explicit path. An empty file holds nothing to
      // lose, so it gets its header now, as pi does.
      this.newSession();
      this.#sessionFile = path;
      this.#rememberBreadcrumb();
      if (file.kind === "empty" && this.#persist) {
        this.#fileStarted = true;
        this.#enqueueFullWrite(path);
      }
      return this.#settle();
    }
    this.#sessionFile = path;
    this.#dialect = file.dialect;
    if (!this.#layoutGiven) this.#layout = file.dialect === "seed003" ? "seed003" : "pi";
    this.#header = file.header;
    this.#sessionId = file.header.id;
    if (cwdOverride === undefined && typeof file.header.cwd === "string") this.#cwd = file.header.cwd;
    this.#problems = file.problems;
    this.#migratedFrom = file.migratedFrom;
    this.#fileHasBlobRefs = file.entriesWithBlobRefs.size > 0;
    for (const problem of file.problems) this.#options.onWarning(`${path}: ${problem.message}`);
    const entries = this.#options.resolveImages === "eager" ? await this.#resolveEntryImages(file.entries, file.entriesWithBlobRefs) : file.entries;
    this.#setEntries(entries);
    this.#fileStarted = true;
    this.#tailToRepair = file.tail.kind === "clean" ? null : { path, tail: file.tail };
    this.#rememberBreadcrumb();
    if (file.migratedFrom !== null && this.#persist) {
      this.#tailToRepair = null; // the rewrite replaces the whole file
      const keepBackup = file.problems.some((p) => p.kind !== "glued");
      this.#enqueue(() => this.#rewriteMigrated(path, file.migratedFrom!, file.entries.map(entryOf), keepBackup));
      await this.#settle();
    }
  }

  async #resolveEntryImages<E extends LazyEntry>(entries: E[], withRefs: ReadonlySet<SessionEntry>): Promise<Array<E | SessionEntry>> {
    if (withRefs.size === 0) return entries;
    const out: Array<E | SessionEntry> = entries.slice();
    for (let i = 0; i < out.length; i++) {
      const entry = out[i]!;
      if (!(entry instanceof UnparsedEntry) && withRefs.has(entry) && (entry.type === "message" || entry.type === "custom_message")) {
        out[i] = await resolveImages(entry, this.#blobs, (ref) => this.#options.onWarning(`${this.#sessionFile ?? "session"}: entry ${entry.id}: missing blob ${ref}`));
      }
    }
    return out;
  }

  /** Resolves blob refs in messages (for sessions opened with `resolveImages: "lazy"`). */
  resolveImages<T>(value: T): Promise<T> {
    return resolveImages(value, this.#blobs, (ref) => this.#options.onWarning(`missing blob ${ref}`));
  }

  // ===========================================================================
  // State and indexes
  // ===========================================================================

  #setEntries(entries: readonly LazyEntry[]): void {
    this.#entries = new EntryList();
    this.#labels = new Map();
    this.#leafId = null;
    this.#hasAssistant = false;
    for (const entry of entries) {
      this.#entries.push(entry);
      this.#index(entry);
    }
  }

  /** Indexes the entry just added: the leaf, labels, whether an assistant spoke. */
  #index(head: LazyEntry): void {
    if (head.type === "leaf") {
      // seed 003's durable navigation: the leaf moves to the target, not to this entry.
      const { targetId } = this.#entries.entry(head) as LeafEntry;
      if (this.#entries.has(targetId)) this.#leafId = targetId;
    } else {
      this.#leafId = head.id;
    }
    if (head.type === "label") {
      const entry = this.#entries.entry(head) as LabelEntry;
      if (entry.label) this.#labels.set(entry.targetId, { label: entry.label, timestamp: entry.timestamp });
      else this.#labels.delete(entry.targetId);
    } else if (head.type === "message" && this.#entries.role(head) === "assistant") {
      this.#hasAssistant = true;
    }
  }

  /** False for a session made by {@link SessionManager.inMemory} (never written), true otherwise. */
  isPersisted(): boolean {
    return this.#persist;
  }
  /** True when opened with `readOnly`: appends and rewrites throw SessionError "read-only". */
  isReadOnly(): boolean {
    return this.#options.readOnly;
  }
  /** The working directory the session belongs to. */
  getCwd(): string {
    return this.#cwd;
  }
  /** The storage directory new session files of this manager go to. */
  getSessionDir(): string {
    return this.#sessionDir;
  }
  /** The current session's id. */
  getSessionId(): string {
    return this.#sessionId;
  }
  /** The storage path of the session file; undefined in memory. */
  getSessionFile(): string | undefined {
    return this.#sessionFile;
  }
  /** The storage the session lives in. */
  getStorage(): StoragePort {
    return this.#storage;
  }
  /** The dialect the session file is read and written in. */
  getDialect(): SessionDialect {
    return this.#dialect;
  }
  /** The store layout new files follow (see {@link SessionManagerOptions.layout}). */
  getLayout(): StoreLayout {
    return this.#layout;
  }
  /** Whose store the session is written in: what decides the form of its images (see StoreOwner). */
  getOwner(): StoreOwner {
    return this.#ownerGiven ?? defaultStoreOwner(this.#storage, this.#layout);
  }
  /** Lines the loader skipped or recovered, with line numbers. */
  getLoadProblems(): readonly LineProblem[] {
    return this.#problems;
  }
  /** The version the file was migrated from on load (v1, v2), or null when it was current. */
  getMigratedFrom(): number | null {
    return this.#migratedFrom;
  }

  // ===========================================================================
  // Appending
  // ===========================================================================

  #append<T extends SessionEntry>(fields: Omit<T, "id" | "parentId" | "timestamp">, parentId = this.#leafId): T {
    this.#assertWritable();
    const entry = { type: fields.type, id: createEntryId(this.#entries), parentId, timestamp: nowIso(), ...fields } as unknown as T;
    this.#entries.push(entry);
    this.#index(entry);
    this.#persistEntry(entry);
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
    this.#requireEntry(targetId);
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
    for (let i = this.#entries.length - 1; i >= 0; i--) {
      if (this.#entries.heads[i]!.type !== "session_info") continue;
      return (this.#entries.at(i) as SessionInfoEntry).name?.trim() || undefined;
    }
    return typeof this.#header?.title === "string" ? this.#header.title.trim() || undefined : undefined;
  }

  // ===========================================================================
  // Tree
  // ===========================================================================

  /** The id of the leaf, the entry the next append becomes a child of; null before the first entry. */
  getLeafId(): string | null {
    return this.#leafId;
  }
  /** The leaf entry; undefined before the first entry. */
  getLeafEntry(): SessionEntry | undefined {
    return this.#leafId ? this.#entries.get(this.#leafId) : undefined;
  }
  /** The entry with this id; undefined when there is none. */
  getEntry(id: string): SessionEntry | undefined {
    return this.#entries.get(id);
  }
  /** The entries whose parent is `parentId`, in file order. */
  getChildren(parentId: string): SessionEntry[] {
    return this.#entries.heads.filter((head) => head.parentId === parentId).map((head) => this.#entries.entry(head));
  }
  /** The current label of an entry; undefined when it has none. */
  getLabel(id: string): string | undefined {
    return this.#labels.get(id)?.label;
  }
  /** All entries in file order (a copy of the list). */
  getEntries(): SessionEntry[] {
    return this.#entries.all();
  }
  /** The session file's header line (in pi's shape, whatever the file's dialect). */
  getHeader(): SessionHeader | null {
    return this.#header ?? null;
  }
  /** Root → entry path (the leaf by default); [] for an unknown id. */
  getBranch(fromId?: string): SessionEntry[] {
    const start = fromId ?? this.#leafId;
    return pathToRoot(start ? this.#entries.byId.get(start) : undefined, this.#entries.byId).map((head) => this.#entries.entry(head));
  }
  /** The whole session as a tree (every branch), with labels; roots first, children oldest first. */
  getTree(): SessionTreeNode[] {
    return buildTree(this.#entries.all(), this.#labels);
  }
  /** The context at the leaf, or at `leafId`, by the rules of the file's dialect. */
  buildSessionContext(leafId?: string | null): SessionContext {
    return buildContextOf(this.#entries, leafId === undefined ? this.#leafId : leafId, { dialect: this.#dialect });
  }

  /**
   * Moves the leaf; the next append starts a branch there. In a seed-003 file the move is durable,
   * as its seed does it: a `leaf` entry (child of the old leaf, pointing at `branchFromId`) is
   * appended.
   */
  branch(branchFromId: string): void {
    this.#requireEntry(branchFromId);
    if (this.#dialect === "seed003" && !this.#options.readOnly) {
      this.#append<LeafEntry>({ type: "leaf", targetId: branchFromId });
      return;
    }
    this.#leafId = branchFromId;
  }

  /** The next append starts a new root. */
  resetLeaf(): void {
    this.#leafId = null;
  }

  /** Moves the leaf to `branchFromId` (null: before the first entry) and appends a branch summary. */
  branchWithSummary(branchFromId: string | null, summary: string, details?: unknown, fromHook?: boolean): string {
    if (branchFromId !== null) this.#requireEntry(branchFromId);
    this.#leafId = branchFromId;
    return this.#append<BranchSummaryEntry>({ type: "branch_summary", fromId: branchFromId ?? "root", summary, details, fromHook }, branchFromId).id;
  }

  /**
   * Replaces this session with a new one holding only the root → `leafId` path; labels on the
   * path are re-emitted after it. Returns the new file's path (undefined in memory); the file is
   * written now if the path has an assistant message, else with the first one.
   */
  createBranchedSession(leafId: string): string | undefined {
    this.#assertWritable();
    const previousFile = this.#sessionFile;
    const path = this.getBranch(leafId);
    if (path.length === 0) throw new SessionError("entry-not-found", `Entry ${leafId} not found`);
    const kept = path.filter((e) => e.type !== "label");
    const keptIds = new Set(kept.map((e) => e.id));
    const labels: LabelEntry[] = [];
    let parentId: string | null = kept[kept.length - 1]?.id ?? null;
    for (const [targetId, state] of this.#labels) {
      if (!keptIds.has(targetId)) continue;
      const id = createEntryId(keptIds);
      keptIds.add(id);
      labels.push({ type: "label", id, parentId, timestamp: state.timestamp, targetId, label: state.label });
      parentId = id;
    }
    this.newSession({ parentSession: this.#persist ? previousFile : undefined });
    this.#setEntries([...kept, ...labels]);
    if (this.#persist && (this.#hasAssistant || !this.#options.deferUntilAssistant)) {
      this.#fileStarted = true;
      this.#enqueueFullWrite(this.#sessionFile!);
    }
    return this.#persist ? this.#sessionFile : undefined;
  }

  #requireEntry(id: string): void {
    if (!this.#entries.has(id)) throw new SessionError("entry-not-found", `Entry ${id} not found`);
  }

  // ===========================================================================
  // Persistence
  // ===========================================================================

  #assertOpen(): void {
    if (this.#closed) throw new SessionError("closed", `session ${this.#sessionFile ?? this.#sessionId} is closed`, { path: this.#sessionFile });
  }

  #assertWritable(): void {
    this.#assertOpen();
    if (this.#persistError) throw this.#persistError;
    if (this.#options.readOnly) throw new SessionError("read-only", `session ${this.#sessionFile} is open read-only`, { path: this.#sessionFile });
  }

  #persistEntry(entry: SessionEntry): void {
    if (!this.#persist || !this.#sessionFile) return;
    if (this.#fileStarted) {
      this.#enqueueAppend(this.#sessionFile, entry);
    } else if (this.#hasAssistant || !this.#options.deferUntilAssistant) {
      this.#fileStarted = true;
      this.#enqueueFullWrite(this.#sessionFile);
    }
  }

  #enqueue(op: Op): void {
    this.#openBatch = null; // later appends must land after this op
    this.#queue = this.#queue.then(async () => {
      if (this.#persistError) return;
      try {
        await op();
      } catch (error) {
        this.#latch(error);
      }
    });
  }

  #latch(error: unknown): void {
    if (this.#persistError) return;
    const cause = error as Error;
    const where = this.#sessionFile ?? this.#sessionId;
    const latched = new SessionError("persist-failed", `failed to persist session ${where}: ${cause?.message ?? String(error)}`, { path: this.#sessionFile, cause });
    this.#persistError = latched;
    this.#options.onWarning(latched.message);
  }

  /** Appends made before the batch's queued write starts share one storage append. */
  #enqueueAppend(path: string, entry: SessionEntry): void {
    const open = this.#openBatch;
    if (open && open.path === path) {
      open.entries.push(entry);
      return;
    }
    const batch: AppendBatch = { path, dialect: this.#dialect, entries: [entry], syncAfter: false };
    this.#enqueue(async () => {
      if (this.#openBatch === batch) this.#openBatch = null;
      await this.#writeBatch(batch);
    });
    this.#openBatch = batch;
  }

  /** Writes the header and every entry, replacing whatever is at `path`. */
  #enqueueFullWrite(path: string): void {
    const records: unknown[] = [this.#header, ...this.#entries.all()];
    const dialect = this.#dialect;
    this.#enqueue(async () => {
      await this.#takeLock(path);
      await this.#storage.write(path, await this.#encode(records, dialect));
      this.#unsynced.add(path);
    });
  }

  async #writeBatch(batch: AppendBatch): Promise<void> {
    await this.#takeLock(batch.path);
    let prefix = "";
    if (this.#tailToRepair?.path === batch.path) {
      prefix = await this.#repairTail(batch.path, this.#tailToRepair.tail);
      this.#tailToRepair = null;
    }
    const bytes = await this.#encode(batch.entries, batch.dialect, prefix, { truncate: this.#truncates(), into: this.#batchBytes });
    const appended = this.#storage.append(batch.path, bytes);
    if (batch.syncAfter && this.#storage.sync) {
      // Issued together (ports order operations on one path as called): a port can commit both
      // in one transaction or one round trip instead of two.
      await Promise.all([appended, this.#storage.sync(batch.path)]);
      this.#unsynced.delete(batch.path);
    } else {
      await appended;
      this.#unsynced.add(batch.path);
    }
  }

  /**
   * A torn last line (a crash mid-append) is cut off and kept in a side file; a complete last
   * line without "\n" gets one. Returns what must precede the next line.
   */
  async #repairTail(path: string, tail: JsonlTail): Promise<string> {
    if (tail.kind === "missing-newline") return "\n";
    if (tail.kind !== "torn") return "";
    const size = (await this.#storage.stat(path))?.size;
    if (size !== tail.offset + tail.length) {
      // Someone wrote since we read (a writer that ignores our lock, such as pi): cut nothing we
      // have not seen; start our lines on a line of their own.
      this.#options.onWarning(`${path}: changed since it was read; its torn last line was left in place`);
      return "\n";
    }
    const torn = await this.#storage.read(path, { offset: tail.offset, length: tail.length });
    const side = `${path}.torn-${Date.now()}`;
    await this.#storage.write(side, torn ?? new Uint8Array());
    await this.#storage.truncate(path, tail.offset);
    this.#options.onWarning(`${path}: removed a torn last line (${tail.length} bytes, kept in ${side})`);
    return "";
  }

  /** Whether what is written is cut to oh-my-pi's persistence limits: as asked, else as the owner does. */
  #truncates(): boolean {
    return this.#options.truncateLargeContent ?? storeLimitsContent(this.getOwner());
  }

  /** JSONL of canonical records in `dialect`, prepared for disk (truncation, images in the owner's form); in `options.into` where given. */
  async #encode(
    records: readonly unknown[],
    dialect: SessionDialect,
    prefix = "",
    options: { truncate: boolean; into?: ReusedEncodeBuffer } = { truncate: this.#truncates() },
  ): Promise<Uint8Array> {
    const prepared: unknown[] = [];
    const owner = this.getOwner();
    const form = storeImageForm(owner);
    const missing = (ref: string) => this.#options.onWarning(`${this.#sessionFile ?? "session"}: missing blob ${ref}: written as the ref, which ${owner} does not resolve`);
    for (const record of records) {
      let persisted = options.truncate ? prepareValueForPersistence(record) : record;
      // Checked first: nearly no record has an image to convert, and then the batch waits on nothing.
      if (hasImagesToConvert(persisted, form)) persisted = await imagesInForm(persisted, form, this.#blobs, missing);
      prepared.push(encodeRecord(dialect, persisted as Record<string, unknown>));
    }
    const bytes = encodeJsonl(prepared, prefix ? undefined : options.into);
    if (!prefix) return bytes;
    const head = new TextEncoder().encode(prefix);
    const out = new Uint8Array(head.length + bytes.length);
    out.set(head);
    out.set(bytes, head.length);
    return out;
  }

  /**
   * Migration rewrite: the original is kept as `<file>.v<N>.bak` until the new file is written
   * and synced, so a crash at any point leaves one complete copy. When the loader skipped lines,
   * the backup stays: the rewrite cannot carry bytes that did not parse.
   */
  async #rewriteMigrated(path: string, fromVersion: number, entries: readonly SessionEntry[], keepBackup: boolean): Promise<void> {
    const original = await this.#storage.read(path);
    if (!original) throw new SessionError("persist-failed", `${path} vanished during migration`, { path });
    const backup = `${path}.v${fromVersion}.bak`;
    await this.#storage.write(backup, original);
    await this.#storage.sync?.(backup);
    // Truncation would drop text the old file holds: a migration only puts images in the owner's form.
    await this.#storage.write(path, await this.#encode([this.#header, ...entries], this.#dialect, "", { truncate: false }));
    await this.#storage.sync?.(path);
    this.#fileHasBlobRefs = false;
    if (keepBackup) {
      this.#options.onWarning(`${path}: migrated from v${fromVersion}; skipped lines are kept in ${backup}`);
    } else {
      await this.#storage.remove(backup);
      this.#options.onWarning(`${path}: migrated from v${fromVersion} to v${CURRENT_SESSION_VERSION}`);
    }
  }

  /**
   * One writer per file: the lock follows the file this session writes. Concurrent callers share
   * one acquisition (open() and a queued write may both ask for it).
   */
  async #takeLock(path: string): Promise<void> {
    if (!this.#options.lock || !this.#storage.acquireLock) return;
    if (this.#lock?.path !== path) {
      const previous = this.#lock;
      const acquiring = (async () => {
        await (await previous?.lock.catch(() => null))?.release();
        return this.#storage.acquireLock!(path);
      })();
      this.#lock = { path, lock: acquiring };
      acquiring.catch(() => {
        if (this.#lock?.lock === acquiring) this.#lock = null; // a later call may try again
      });
    }
    await this.#lock!.lock;
  }

  async #releaseLock(): Promise<void> {
    const held = this.#lock;
    this.#lock = null;
    await (await held?.lock.catch(() => null))?.release();
  }

  /** Waits for queued writes; throws the latched error. */
  async #settle(): Promise<void> {
    await this.#queue;
    if (this.#persistError) throw this.#persistError;
  }

  /**
   * Follows the file while another process writes it (sessions opened with `readOnly: true`): on
   * each change only the bytes after the last complete line are read, the new entries join the
   * index and tree (leaf, labels, context), and `listener` hears about them. A rewritten file (other
   * bytes before that point) is loaded again. See ./follow.ts.
   */
  async follow(listener: (update: FollowUpdate) => void, options: FollowOptions = {}): Promise<SessionFollow> {
    this.#assertOpen();
    const path = this.#sessionFile;
    if (!this.#options.readOnly || !path) {
      throw new SessionError("not-read-only", `follow needs a session opened with readOnly: true (${path ?? "in memory"} is written by this manager)`, { path });
    }
    return followSession(
      {
        storage: this.#storage,
        path,
        // A file migrated in memory cannot be read on from a byte offset: each change reloads it.
        extent: this.#migratedFrom === null ? this.#loadedExtent : null,
        dialect: () => this.#dialect,
        lastTimestamp: () => this.#entries.heads.at(-1)?.timestamp ?? this.#header.timestamp,
        knows: (id) => this.#entries.has(id),
        add: async (entries, withBlobRefs, problems) => {
          for (const problem of problems) this.#options.onWarning(`${path}: ${problem.message}`);
          this.#problems = [...this.#problems, ...problems];
          const resolved = this.#options.resolveImages === "eager" ? await this.#resolveEntryImages(entries, withBlobRefs) : entries;
          for (const entry of resolved) {
            this.#entries.push(entry);
            this.#index(entry);
          }
        },
        reload: async () => {
          await this.#load(path);
          return { exists: this.#loadedExtent !== null, extent: this.#migratedFrom === null ? this.#loadedExtent : null };
        },
      },
      listener,
      { onError: (error) => this.#options.onWarning(`${path}: following failed: ${error instanceof Error ? error.message : String(error)}`), ...options },
    );
  }

  /** Resolves when every write so far is durable (synced); rejects with the latched error. */
  async flush(): Promise<void> {
    if (this.#openBatch) this.#openBatch.syncAfter = true;
    this.#openBatch = null;
    await this.#settle();
    if (this.#unsynced.size === 0 || !this.#storage.sync) return;
    const paths = [...this.#unsynced];
    this.#unsynced.clear();
    this.#enqueue(async () => {
      for (const path of paths) await this.#storage.sync!(path);
    });
    await this.#settle();
  }

  /** Flushes, then releases the writer lock. Later calls throw "closed". */
  async close(): Promise<void> {
    if (this.#closed) return;
    try {
      if (this.#persist) await this.flush();
    } finally {
      this.#closed = true;
      await this.#breadcrumbs?.settled();
      await this.#releaseLock();
    }
  }

  // ===========================================================================
  // oh-my-pi's operations: name in the header, fork, move, rewrites
  // ===========================================================================

  /**
   * Names the session. In oh-my-pi's layout the name is the header's `title`: set in memory, and
   * once the file exists, its header line is rewritten atomically (the rest of the file is kept
   * byte for byte). Elsewhere it appends a `session_info` entry, as pi does.
   */
  async setSessionName(name: string): Promise<void> {
    if (this.#layout !== "omp") {
      this.appendSessionInfo(name);
      return;
    }
    this.#assertWritable();
    const previous = this.#header;
    const title = name.trim();
    const { title: _old, ...rest } = previous;
    this.#header = title ? { ...rest, title } : rest;
    if (!this.#persist || !this.#sessionFile || !this.#fileStarted) return;
    try {
      await this.#exclusive(() => this.#rewriteHeaderLine(this.#sessionFile!));
    } catch (error) {
      this.#header = previous;
      throw this.#rewriteError("rename", error);
    }
  }

  /**
   * oh-my-pi's fork: a new session (new id and file, in the same folder and dialect) holding the
   * whole history, with `parentSession` = the old session's id and the title kept; this manager
   * continues in it. Returns both files, or undefined when the session is not persisted.
   */
  async fork(): Promise<
    | {
        /** The file this manager was on. */
        oldSessionFile: string;
        /** The new session's file, which this manager continues in. */
        newSessionFile: string;
      }
    | undefined
  > {
    this.#assertWritable();
    if (!this.#persist || !this.#sessionFile) return undefined;
    const oldSessionFile = this.#sessionFile;
    const id = createSessionId();
    const timestamp = nowIso();
    const path = joinPath(this.#sessionDir, storeSessionFileName(this.#layout, timestamp, id));
    const header = newHeader(this.#dialect, { id, timestamp, cwd: this.#cwd, parentSession: this.#sessionId, title: this.#header.title });
    try {
      await this.#exclusive(async () => {
        const lock = await this.#lockForNewPath(path);
        try {
          await this.#storage.write(path, await this.#encode([header, ...this.#entries.all()], this.#dialect));
          await this.#storage.sync?.(path);
        } catch (error) {
          await this.#storage.remove(path).catch(() => {});
          await lock?.release().catch(() => {});
          throw error;
        }
        await this.#adoptLock(path, lock);
      });
    } catch (error) {
      throw this.#rewriteError("fork", error);
    }
    this.#sessionId = id;
    this.#header = header;
    this.#sessionFile = path;
    this.#fileStarted = true;
    this.#problems = [];
    this.#migratedFrom = null;
    this.#fileHasBlobRefs = false;
    this.#tailToRepair = null;
    this.#unsynced.delete(oldSessionFile);
    this.#rememberBreadcrumb();
    return { oldSessionFile, newSessionFile: path };
  }

  /**
   * oh-my-pi's move: the session now belongs to `newCwd`. Its file and its side folder (the file's
   * path without `.jsonl`, where tools keep artifacts) move to the new cwd's folder, the header's
   * `cwd` is rewritten, the breadcrumb follows. A failure at any step undoes the steps before it:
   * storage holds the old files or the new ones, never a mix. In a flat (seed-003) store or a
   * folder of the caller's choosing the file stays where it is; only its header changes.
   */
  async moveTo(newCwd: string): Promise<void> {
    this.#assertWritable();
    if (sameCwd(newCwd, this.#cwd)) return;
    const managedDir = this.#sessionDir === storeSessionDir(this.#layout, this.#cwd);
    const nextDir = managedDir ? storeSessionDir(this.#layout, newCwd) : this.#sessionDir;
    const previous = { header: this.#header, cwd: this.#cwd, dir: this.#sessionDir };
    this.#cwd = newCwd;
    this.#header = { ...this.#header, cwd: newCwd };
    this.#sessionDir = nextDir;
    if (!this.#persist || !this.#sessionFile) return;
    const oldFile = this.#sessionFile;
    const newFile = joinPath(nextDir, baseName(oldFile));
    try {
      await this.#exclusive(async () => {
        if (newFile === oldFile) {
          if (this.#fileStarted) await this.#rewriteHeaderLine(oldFile);
          return;
        }
        // A session not written yet has no file to lock, only maybe a side folder to move.
        const lock = this.#fileStarted ? await this.#lockForNewPath(newFile) : null;
        try {
          const headerLine = this.#fileStarted ? await this.#encode([this.#header], this.#dialect) : null;
          // The old file's lines are moved as bytes (lines that did not load too); a file someone
          // removed, or one whose images are not in the store's form, is written again from memory.
          const rewrite = async (original: Uint8Array | null) =>
            (original && this.#withHeaderLine(oldFile, original, headerLine!)) ?? { bytes: await this.#encode([this.#header, ...this.#entries.all()], this.#dialect), delta: null };
          const moved = await relocateSession(this.#storage, oldFile, newFile, headerLine ? rewrite : null);
          if (moved && moved.delta === null) {
            this.#problems = [];
            this.#fileHasBlobRefs = false;
          }
          if (this.#tailToRepair?.path === oldFile) {
            this.#tailToRepair = moved?.delta == null ? null : { path: newFile, tail: shiftTail(this.#tailToRepair.tail, moved.delta) };
          }
        } catch (error) {
          await lock?.release().catch(() => {});
          throw error;
        }
        if (this.#fileStarted) await this.#adoptLock(newFile, lock);
        if (this.#unsynced.delete(oldFile)) this.#unsynced.add(newFile);
        this.#sessionFile = newFile;
      });
    } catch (error) {
      this.#cwd = previous.cwd;
      this.#header = previous.header;
      this.#sessionDir = previous.dir;
      throw this.#rewriteError("move", error);
    }
    this.#rememberBreadcrumb();
  }

  /**
   * Rewrites the whole file from memory, atomically (oh-my-pi's rewriteEntries): for callers that
   * changed entries in place (pruned tool output). The entries are indexed again; the leaf stays.
   * When the file had lines that did not load, the rewrite cannot carry them: the old file is kept
   * as `<file>.rewrite-<time>.bak`.
   */
  async rewriteEntries(): Promise<void> {
    this.#assertWritable();
    const leafId = this.#leafId;
    this.#setEntries(this.#entries.all());
    if (leafId === null || this.#entries.has(leafId)) this.#leafId = leafId;
    if (!this.#persist || !this.#sessionFile || !this.#fileStarted) return;
    try {
      await this.#exclusive(() => this.#rewriteFromMemory(this.#sessionFile!));
    } catch (error) {
      throw this.#rewriteError("rewrite", error);
    }
  }

  /**
   * Replaces the `arguments` of the newest assistant `toolCall` with id `toolCallId` and rewrites
   * the file. Returns false, changing nothing, when there is no such call.
   */
  async rewriteAssistantToolCallArgs(toolCallId: string, args: Record<string, unknown>): Promise<boolean> {
    this.#assertWritable();
    for (let i = this.#entries.length - 1; i >= 0; i--) {
      const head = this.#entries.heads[i]!;
      if (head.type !== "message" || this.#entries.role(head) !== "assistant") continue;
      const entry = this.#entries.at(i) as MessageEntry;
      if (!Array.isArray(entry.message.content)) continue;
      const blocks = entry.message.content as Array<Record<string, unknown>>;
      const at = blocks.findIndex((block) => block?.type === "toolCall" && block.id === toolCallId);
      if (at < 0) continue;
      const content = blocks.slice();
      content[at] = { ...blocks[at], arguments: args };
      const updated: MessageEntry = { ...entry, message: { ...entry.message, content } };
      this.#replaceEntry(i, updated);
      if (!this.#persist || !this.#sessionFile || !this.#fileStarted) return true;
      try {
        await this.#exclusive(() => this.#rewriteFromMemory(this.#sessionFile!));
      } catch (error) {
        this.#replaceEntry(i, entry);
        throw this.#rewriteError("rewrite", error);
      }
      return true;
    }
    return false;
  }

  #replaceEntry(index: number, entry: SessionEntry): void {
    this.#entries.set(index, entry);
  }

  /**
   * Runs `op` on the write queue (after every write queued before it, before any queued after it)
   * and returns its result. Unlike appends, its failure is the caller's, not latched: the rewrites
   * that use it leave the file as it was when they fail.
   */
  #exclusive<T>(op: () => Promise<T>): Promise<T> {
    this.#openBatch = null;
    const run = this.#queue.then(() => {
      if (this.#persistError) throw this.#persistError;
      return op();
    });
    this.#queue = run.then(
      () => {},
      () => {},
    );
    return run;
  }

  #rewriteError(what: string, error: unknown): SessionError {
    if (error instanceof SessionError && (error.code === "persist-failed" || error.code === "rewrite-failed")) return error;
    const cause = error as Error;
    return new SessionError("rewrite-failed", `${what} of session ${this.#sessionFile ?? this.#sessionId} failed, nothing changed: ${cause?.message ?? String(error)}`, {
      path: this.#sessionFile,
      cause,
    });
  }

  /**
   * Replaces the header line of the file at `path` by an atomic rewrite. The other lines are copied
   * as bytes, lines that did not load included.
   */
  async #rewriteHeaderLine(path: string): Promise<void> {
    await this.#takeLock(path);
    const bytes = await this.#storage.read(path);
    if (!bytes) throw new SessionError("rewrite-failed", `${path} vanished`, { path });
    const replaced = this.#withHeaderLine(path, bytes, await this.#encode([this.#header], this.#dialect));
    if (!replaced) return this.#rewriteFromMemory(path);
    const { bytes: out, delta } = replaced;
    await this.#replaceFile(path, out, bytes);
    if (this.#tailToRepair?.path === path) this.#tailToRepair = { path, tail: shiftTail(this.#tailToRepair.tail, delta) };
    this.#unsynced.delete(path);
  }

  /**
   * The file's bytes with `headerLine` in place of its first line, or null when the file is to be
   * written from memory instead: it holds blob refs the store's agent cannot read (see
   * #fileHasBlobRefs). A file with lines that did not load keeps its bytes (a rewrite could not
   * carry those lines), with a warning.
   */
  #withHeaderLine(path: string, original: Uint8Array, headerLine: Uint8Array): { bytes: Uint8Array; delta: number } | null {
    const owner = this.getOwner();
    if (this.#fileHasBlobRefs && storeImageForm(owner) === "inline") {
      if (!this.#problems.some((p) => p.kind !== "glued")) return null;
      this.#options.onWarning(`${path}: holds blob refs, which ${owner} does not resolve; its lines are kept as they are, as some did not load`);
    }
    return replaceFirstLine(original, headerLine);
  }

  /** The whole file from memory, atomically; the old bytes kept aside when lines did not load. */
  async #rewriteFromMemory(path: string): Promise<void> {
    await this.#takeLock(path);
    const original = await this.#storage.read(path);
    if (!original) throw new SessionError("rewrite-failed", `${path} vanished`, { path });
    const lost = this.#problems.some((p) => p.kind !== "glued");
    if (lost) {
      const backup = `${path}.rewrite-${Date.now()}.bak`;
      await this.#storage.write(backup, original);
      await this.#storage.sync?.(backup);
      this.#options.onWarning(`${path}: rewritten from memory; lines that did not load are kept in ${backup}`);
    }
    await this.#replaceFile(path, await this.#encode([this.#header, ...this.#entries.all()], this.#dialect), original);
    this.#problems = [];
    this.#fileHasBlobRefs = false;
    this.#tailToRepair = null;
  }

  /**
   * Writes `bytes` over `path` (atomic) and syncs it. When the sync fails after the write, the
   * `original` bytes are written back: the caller reports a failure, so the file must be the old one.
   */
  async #replaceFile(path: string, bytes: Uint8Array, original: Uint8Array): Promise<void> {
    let written = false;
    try {
      await this.#storage.write(path, bytes);
      written = true;
      await this.#storage.sync?.(path);
    } catch (error) {
      if (written) {
        await this.#storage.write(path, original).catch((undo: unknown) => {
          throw new SessionError("rewrite-failed", `${path}: syncing the rewrite failed (${(error as Error)?.message}) and so did restoring it (${(undo as Error)?.message})`, { path, cause: error });
        });
      }
      throw error;
    }
    this.#unsynced.delete(path);
  }

  /** A lock for a path this session is about to take over (held with the current one). */
  async #lockForNewPath(path: string): Promise<StorageLock | null> {
    if (!this.#options.lock || !this.#storage.acquireLock) return null;
    return this.#storage.acquireLock(path);
  }

  /** Makes `lock` (on `path`) this session's writer lock, releasing the one it held. */
  async #adoptLock(path: string, lock: StorageLock | null): Promise<void> {
    const previous = this.#lock;
    this.#lock = lock ? { path, lock: Promise.resolve(lock) } : null;
    await (await previous?.lock.catch(() => null))?.release().catch(() => {});
  }

  /** Writes this terminal's breadcrumb (never waited on; a failure is a warning). */
  #rememberBreadcrumb(): void {
    if (this.#persist) this.#breadcrumbs?.remember(this.#cwd, this.#sessionFile);
  }
}

/** A torn or unterminated tail after the bytes before it grew by `delta`. */
function shiftTail(tail: JsonlTail, delta: number): JsonlTail {
  return tail.kind === "torn" ? { ...tail, offset: tail.offset + delta } : tail;
}

/** A new session's header in `dialect` (pi's carries the version; seed 003's has none). */
function newHeader(dialect: SessionDialect, fields: { id: string; timestamp: string; cwd: string; parentSession?: string; title?: string }): SessionHeader {
  const { id, timestamp, cwd, parentSession, title } = fields;
  const header: SessionHeader =
    dialect === "pi" ? { type: "session", version: CURRENT_SESSION_VERSION, id, timestamp, cwd } : { type: "session", id, timestamp, cwd };
  if (title !== undefined) header.title = title;
  if (parentSession !== undefined) header.parentSession = parentSession;
  return header;
}
