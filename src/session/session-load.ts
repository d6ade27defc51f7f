/**
 * How a SessionManager's session begins: new and empty, or read from its file (the writer lock
 * first, then the file, lazily or in full, its images resolved, a migrated file rewritten); and,
 * for `follow`, read on as another process writes the file.
 */
import { BlobStore } from "../blobs/blob-store.js";
import { resolveImages } from "../blobs/images.js";
import { SessionError } from "../errors.js";
import { entryOf, readSessionFileLazily, type LazyEntry } from "../format/lazy-session-file.js";
import { readSessionFile } from "../format/session-file.js";
import type { SessionEntry } from "../format/types.js";
import { UnparsedEntry } from "../format/unparsed-entry.js";
import { createSessionId } from "../format/ids.js";
import { joinPath, type StoragePort } from "../port.js";
import { BreadcrumbWriter } from "./breadcrumbs.js";
import { writtenPath } from "./file-state.js";
import { Journal } from "./journal.js";
import { followSession as followFile, type FollowOptions, type FollowTarget, type FollowUpdate, type SessionFollow } from "./follow.js";
import { rewriteMigrated, type RewriteHost } from "./rewrites.js";
import { layoutDialect, storeSessionFileName } from "./paths.js";
import { layoutOf, resolveOptions, type NewSessionOptions, type ResolvedOptions, type SessionManagerOptions } from "./session-options.js";
import { newHeader, nowIso, SessionTree } from "./session-tree.js";
import { ownerLayout } from "./store-owner.js";

/** A SessionManager's parts, as loading, following and the rewrites use them. */
export interface SessionParts extends RewriteHost {
  readonly options: ResolvedOptions;
  readonly blobs: BlobStore;
  /** Whether the manager writes (false in memory and read-only). */
  readonly persist: boolean;
  /** The layout was given (or the owner's), not inferred from the file opened. */
  readonly layoutGiven: boolean;
  readonly breadcrumbs: BreadcrumbWriter | undefined;
}

/** The parts of a new SessionManager; `manager` is what they call back in it. */
export function sessionParts(
  storage: StoragePort,
  cwd: string,
  sessionDir: string,
  persist: boolean,
  options: SessionManagerOptions,
  manager: Pick<RewriteHost, "assertWritable" | "newSession">,
): SessionParts {
  const settings = resolveOptions(options);
  const blobs = new BlobStore(storage);
  const session = new SessionTree(cwd, sessionDir, layoutOf(options));
  const breadcrumbs = options.terminalBreadcrumb && new BreadcrumbWriter(storage, options.terminalBreadcrumb, settings.onWarning);
  return {
    storage,
    session,
    journal: new Journal({ ...settings, storage, blobs, owner: options.owner }, session),
    options: settings,
    blobs,
    persist: persist && !options.readOnly,
    layoutGiven: options.layout !== undefined || (options.owner !== undefined && ownerLayout(options.owner) !== undefined),
    breadcrumbs,
    onWarning: settings.onWarning,
    assertWritable: manager.assertWritable,
    newSession: manager.newSession,
    rememberBreadcrumb: () => breadcrumbs?.remember(session.cwd, writtenPath(session.file)),
  };
}

/** SessionManager.newSession: a new, empty session, its file written with the first assistant message. */
export function startSession(parts: SessionParts, options: NewSessionOptions): string | undefined {
  const { session } = parts;
  const id = options.id ?? createSessionId();
  const timestamp = nowIso();
  session.dialect = layoutDialect(session.layout);
  session.header = newHeader(session.dialect, { id, timestamp, cwd: session.cwd, parentSession: options.parentSession });
  session.setEntries([]);
  const path = () => joinPath(session.sessionDir, storeSessionFileName(session.layout, timestamp, id));
  session.startFile(parts.persist ? { kind: "unstarted", path: path() } : { kind: "memory", path: parts.options.readOnly ? path() : undefined });
  parts.rememberBreadcrumb();
  return session.file.path;
}

/** SessionManager.setSessionFile: the writes queued for the current file land first, then `path` is loaded. */
export async function switchSession(parts: SessionParts, path: string): Promise<void> {
  const { journal } = parts;
  await journal.settle(); // under the current file's lock
  const previous = parts.session.file.path;
  try {
    await loadSession(parts, path);
  } catch (error) {
    if (previous && parts.persist) await journal.takeLock(previous).catch(() => {});
    throw error;
  }
}

/** Makes the file at `path` the session: its header, entries and what they need to be written on. */
export async function loadSession(parts: SessionParts, path: string, cwdOverride?: string): Promise<void> {
  const { session, journal, persist, options } = parts;
  // Locked before reading: what we read (a torn tail's offset) must still hold when we write.
  if (persist) await journal.takeLock(path);
  const file = options.parse === "lazy" ? await readSessionFileLazily(parts.storage, path) : await readSessionFile(parts.storage, path);
  session.loadedExtent = file.kind === "session" ? file.extent : null;
  if (file.kind !== "session") {
    // Missing or empty: a new session at this explicit path. An empty file holds nothing to
    // lose, so it gets its header now, as pi does.
    parts.newSession({});
    session.file = persist ? { kind: "unstarted", path } : { kind: "memory", path };
    parts.rememberBreadcrumb();
    if (file.kind === "empty" && persist) journal.start(path);
    return journal.settle();
  }
  session.file = persist ? { kind: "open", path } : { kind: "memory", path };
  session.dialect = file.dialect;
  if (!parts.layoutGiven) session.layout = file.dialect === "seed003" ? "seed003" : "pi";
  session.header = file.header;
  if (cwdOverride === undefined && typeof file.header.cwd === "string") session.cwd = file.header.cwd;
  session.problems = file.problems;
  session.migratedFrom = file.migratedFrom;
  session.fileHasBlobRefs = file.entriesWithBlobRefs.size > 0;
  for (const problem of file.problems) options.onWarning(`${path}: ${problem.message}`);
  const entries = options.resolveImages === "eager" ? await resolveEntryImages(parts, file.entries, file.entriesWithBlobRefs) : file.entries;
  session.setEntries(entries);
  session.tailToRepair = file.tail.kind === "clean" ? null : { path, tail: file.tail };
  parts.rememberBreadcrumb();
  if (file.migratedFrom !== null && persist) {
    session.tailToRepair = null; // the rewrite replaces the whole file
    const keepBackup = file.problems.some((p) => p.kind !== "glued");
    journal.enqueue(() => rewriteMigrated(parts, path, file.migratedFrom!, file.entries.map(entryOf), keepBackup));
    await journal.settle();
  }
}

/** The entries with the blob refs of their messages resolved (`resolveImages: "eager"`). */
async function resolveEntryImages<E extends LazyEntry>(parts: SessionParts, entries: E[], withRefs: ReadonlySet<SessionEntry>): Promise<Array<E | SessionEntry>> {
  if (withRefs.size === 0) return entries;
  const out: Array<E | SessionEntry> = entries.slice();
  for (let i = 0; i < out.length; i++) {
    const entry = out[i]!;
    if (!(entry instanceof UnparsedEntry) && withRefs.has(entry) && (entry.type === "message" || entry.type === "custom_message")) {
      out[i] = await resolveImages(entry, parts.blobs, (ref) => parts.options.onWarning(`${parts.session.file.path ?? "session"}: entry ${entry.id}: missing blob ${ref}`));
    }
  }
  return out;
}

/** SessionManager.follow: the session's file, read on as another process writes it. */
export async function followSession(parts: SessionParts, listener: (update: FollowUpdate) => void, options: FollowOptions): Promise<SessionFollow> {
  const { session, options: settings } = parts;
  const path = session.file.path;
  if (!settings.readOnly || !path) {
    throw new SessionError("not-read-only", `follow needs a session opened with readOnly: true (${path ?? "in memory"} is written by this manager)`, { path });
  }
  const target: FollowTarget = {
    storage: parts.storage,
    path,
    // A file migrated in memory cannot be read on from a byte offset: each change reloads it.
    extent: session.migratedFrom === null ? session.loadedExtent : null,
    dialect: () => session.dialect,
    lastTimestamp: () => session.lastTimestamp(),
    knows: (id) => session.entries.has(id),
    add: async (entries, withBlobRefs, problems) => {
      for (const problem of problems) settings.onWarning(`${path}: ${problem.message}`);
      session.problems = [...session.problems, ...problems];
      const resolved = settings.resolveImages === "eager" ? await resolveEntryImages(parts, entries, withBlobRefs) : entries;
      for (const entry of resolved) session.add(entry);
    },
    reload: async () => {
      await loadSession(parts, path);
      return { exists: session.loadedExtent !== null, extent: session.migratedFrom === null ? session.loadedExtent : null };
    },
  };
  const onError = (error: unknown) => settings.onWarning(`${path}: following failed: ${error instanceof Error ? error.message : String(error)}`);
  return followFile(target, listener, { onError, ...options });
}
