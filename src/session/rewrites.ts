/**
 * SessionManager's operations that write a whole file rather than append to one: branching into a
 * new session, oh-my-pi's fork, forkFrom, moveTo, its rename in the header, rewriteEntries and the
 * migration rewrite. Each runs on the journal's queue under the writer lock and is atomic: a
 * failure leaves storage and memory as they were and throws "rewrite-failed".
 */
import { BlobStore } from "../blobs/blob-store.js";
import { hasImagesToConvert, imagesInForm } from "../blobs/images.js";
import { SessionError } from "../errors.js";
import type { JsonlTail } from "../format/jsonl-reader.js";
import { createSessionId } from "../format/ids.js";
import { encodeSessionFile, readSessionFile } from "../format/session-file.js";
import { CURRENT_SESSION_VERSION, type SessionEntry } from "../format/types.js";
import { baseName, joinPath, type StoragePort } from "../port.js";
import { writtenPath } from "./file-state.js";
import type { Journal } from "./journal.js";
import { layoutDialect, sameCwd, storeSessionDir, storeSessionFileName, type StoreLayout } from "./paths.js";
import { relocateSession, replaceFirstLine } from "./relocate.js";
import { newHeader, nowIso, type SessionTree } from "./session-tree.js";
import { storeImageForm, type StoreOwner } from "./store-owner.js";

/** What the rewrites read and change: the facade's session, journal and the calls they share with it. */
export interface RewriteHost {
  readonly storage: StoragePort;
  readonly session: SessionTree;
  readonly journal: Journal;
  readonly onWarning: (message: string) => void;
  assertWritable(): void;
  /** SessionManager.newSession. */
  newSession(options: { parentSession?: string }): void;
  /** Writes this terminal's breadcrumb for the session's file (when asked for). */
  rememberBreadcrumb(): void;
}

/** SessionManager.createBranchedSession. */
export function createBranchedSession(host: RewriteHost, leafId: string): string | undefined {
  host.assertWritable();
  const { session } = host;
  const previousFile = writtenPath(session.file);
  const entries = session.branchWithLabels(leafId);
  host.newSession({ parentSession: previousFile });
  session.setEntries(entries);
  host.journal.startIfDue();
  return writtenPath(session.file);
}

/** SessionManager.fork. */
export async function fork(host: RewriteHost): Promise<{ oldSessionFile: string; newSessionFile: string } | undefined> {
  host.assertWritable();
  const { session, journal, storage } = host;
  const oldSessionFile = writtenPath(session.file);
  if (oldSessionFile === undefined) return undefined;
  const id = createSessionId();
  const timestamp = nowIso();
  const path = joinPath(session.sessionDir, storeSessionFileName(session.layout, timestamp, id));
  const header = newHeader(session.dialect, { id, timestamp, cwd: session.cwd, parentSession: session.header.id, title: session.header.title });
  try {
    await journal.exclusive(async () => {
      const lock = await journal.lockForNewPath(path);
      try {
        await storage.write(path, await journal.encode([header, ...session.entries.all()], session.dialect));
        await storage.sync?.(path);
      } catch (error) {
        await storage.remove(path).catch(() => {});
        await lock?.release().catch(() => {});
        throw error;
      }
      await journal.adoptLock(path, lock);
      session.header = header;
      session.startFile({ kind: "open", path });
      journal.synced(oldSessionFile);
    });
  } catch (error) {
    throw rewriteError(session, "fork", error);
  }
  host.rememberBreadcrumb();
  return { oldSessionFile, newSessionFile: path };
}

/**
 * SessionManager.forkFrom's file: `sourcePath`'s header and entries (images in the owner's form)
 * as a new session of `targetCwd` in `dir`. Returns its path.
 */
export async function writeForkOf(
  storage: StoragePort,
  sourcePath: string,
  target: { cwd: string; dir: string; layout: StoreLayout; owner: StoreOwner; onWarning?: (message: string) => void },
): Promise<string> {
  const source = await readSessionFile(storage, sourcePath);
  if (source.kind !== "session") {
    throw new SessionError("not-a-session", `cannot fork: ${sourcePath} is ${source.kind === "missing" ? "missing" : "empty"}`, { path: sourcePath });
  }
  const { layout } = target;
  const form = storeImageForm(target.owner);
  const blobs = new BlobStore(storage);
  const entries: SessionEntry[] = [];
  for (const entry of source.entries) {
    const missing = (ref: string) => target.onWarning?.(`${sourcePath}: entry ${entry.id}: missing blob ${ref}`);
    entries.push(hasImagesToConvert(entry, form) ? await imagesInForm(entry, form, blobs, missing) : entry);
  }
  const id = createSessionId();
  const timestamp = nowIso();
  const path = joinPath(target.dir, storeSessionFileName(layout, timestamp, id));
  const parentSession = layout === "omp" ? source.header.id : sourcePath;
  const header = newHeader(layoutDialect(layout), { id, timestamp, cwd: target.cwd, parentSession, title: layout === "omp" ? source.header.title : undefined });
  await storage.write(path, encodeSessionFile(layoutDialect(layout), header, entries));
  return path;
}

/** SessionManager.setSessionName in oh-my-pi's layout: the header's `title`, its line rewritten once the file exists. */
export async function setTitle(host: RewriteHost, name: string): Promise<void> {
  host.assertWritable();
  const { session } = host;
  const previous = session.header;
  const title = name.trim();
  const { title: _old, ...rest } = previous;
  session.header = title ? { ...rest, title } : rest;
  if (session.file.kind !== "open") return;
  try {
    // The path as it is when the rewrite runs: a move queued before it may change it.
    await host.journal.exclusive(() => rewriteHeaderLine(host, session.file.path!));
  } catch (error) {
    session.header = previous;
    throw rewriteError(session, "rename", error);
  }
}

/** SessionManager.moveTo. */
export async function moveTo(host: RewriteHost, newCwd: string): Promise<void> {
  host.assertWritable();
  const { session, journal } = host;
  if (sameCwd(newCwd, session.cwd)) return;
  const managedDir = session.sessionDir === storeSessionDir(session.layout, session.cwd);
  const nextDir = managedDir ? storeSessionDir(session.layout, newCwd) : session.sessionDir;
  const previous = { header: session.header, cwd: session.cwd, dir: session.sessionDir };
  session.cwd = newCwd;
  session.header = { ...session.header, cwd: newCwd };
  session.sessionDir = nextDir;
  const oldFile = writtenPath(session.file);
  if (oldFile === undefined) return;
  const newFile = joinPath(nextDir, baseName(oldFile));
  try {
    await journal.exclusive(async () => {
      // Whether the file exists is read when the move runs: appends queued before it may start it.
      const started = session.file.kind === "open";
      if (newFile === oldFile) {
        if (started) await rewriteHeaderLine(host, oldFile);
        return;
      }
      // A session not written yet has no file to lock, only maybe a side folder to move.
      const lock = started ? await journal.lockForNewPath(newFile) : null;
      try {
        const headerLine = started ? await journal.encode([session.header], session.dialect) : null;
        // The old file's lines are moved as bytes (lines that did not load too); a file someone
        // removed, or one whose images are not in the store's form, is written again from memory.
        const rewrite = async (original: Uint8Array | null) =>
          (original && withHeaderLine(host, oldFile, original, headerLine!)) ?? { bytes: await journal.encode([session.header, ...session.entries.all()], session.dialect), delta: null };
        const moved = await relocateSession(host.storage, oldFile, newFile, headerLine ? rewrite : null);
        if (moved && moved.delta === null) session.fileWrittenFromMemory();
        if (session.tailToRepair?.path === oldFile) {
          session.tailToRepair = moved?.delta == null ? null : { path: newFile, tail: shiftTail(session.tailToRepair.tail, moved.delta) };
        }
      } catch (error) {
        await lock?.release().catch(() => {});
        throw error;
      }
      if (started) await journal.adoptLock(newFile, lock);
      journal.moved(oldFile, newFile);
      session.file = { ...session.file, path: newFile };
    });
  } catch (error) {
    session.cwd = previous.cwd;
    session.header = previous.header;
    session.sessionDir = previous.dir;
    throw rewriteError(session, "move", error);
  }
  host.rememberBreadcrumb();
}

/** SessionManager.rewriteEntries. */
export async function rewriteEntries(host: RewriteHost): Promise<void> {
  host.assertWritable();
  const { session } = host;
  const leafId = session.leafId;
  session.setEntries(session.entries.all());
  if (leafId === null || session.entries.has(leafId)) session.leafId = leafId;
  if (session.file.kind !== "open") return;
  try {
    await host.journal.exclusive(() => rewriteFromMemory(host, session.file.path!));
  } catch (error) {
    throw rewriteError(session, "rewrite", error);
  }
}

/** SessionManager.rewriteAssistantToolCallArgs. */
export async function rewriteAssistantToolCallArgs(host: RewriteHost, toolCallId: string, args: Record<string, unknown>): Promise<boolean> {
  host.assertWritable();
  const { session } = host;
  const found = session.withToolCallArgs(toolCallId, args);
  if (!found) return false;
  session.entries.set(found.index, found.updated);
  if (session.file.kind !== "open") return true;
  try {
    await host.journal.exclusive(() => rewriteFromMemory(host, session.file.path!));
  } catch (error) {
    session.entries.set(found.index, found.entry);
    throw rewriteError(session, "rewrite", error);
  }
  return true;
}

/**
 * Migration rewrite: the original is kept as `<file>.v<N>.bak` until the new file is written
 * and synced, so a crash at any point leaves one complete copy. When the loader skipped lines,
 * the backup stays: the rewrite cannot carry bytes that did not parse.
 */
export async function rewriteMigrated(host: RewriteHost, path: string, fromVersion: number, entries: readonly SessionEntry[], keepBackup: boolean): Promise<void> {
  const { storage, session } = host;
  const original = await storage.read(path);
  if (!original) throw new SessionError("persist-failed", `${path} vanished during migration`, { path });
  const backup = `${path}.v${fromVersion}.bak`;
  await storage.write(backup, original);
  await storage.sync?.(backup);
  // Truncation would drop text the old file holds: a migration only puts images in the owner's form.
  await storage.write(path, await host.journal.encode([session.header, ...entries], session.dialect, "", { truncate: false }));
  await storage.sync?.(path);
  session.fileHasBlobRefs = false;
  if (keepBackup) {
    host.onWarning(`${path}: migrated from v${fromVersion}; skipped lines are kept in ${backup}`);
  } else {
    await storage.remove(backup);
    host.onWarning(`${path}: migrated from v${fromVersion} to v${CURRENT_SESSION_VERSION}`);
  }
}

function rewriteError(session: SessionTree, what: string, error: unknown): SessionError {
  if (error instanceof SessionError && (error.code === "persist-failed" || error.code === "rewrite-failed")) return error;
  const cause = error as Error;
  const path = session.file.path;
  return new SessionError("rewrite-failed", `${what} of session ${path ?? session.header.id} failed, nothing changed: ${cause?.message ?? String(error)}`, {
    path,
    cause,
  });
}

/**
 * Replaces the header line of the file at `path` by an atomic rewrite. The other lines are copied
 * as bytes, lines that did not load included.
 */
async function rewriteHeaderLine(host: RewriteHost, path: string): Promise<void> {
  const { session, journal } = host;
  await journal.takeLock(path);
  const bytes = await host.storage.read(path);
  if (!bytes) throw new SessionError("rewrite-failed", `${path} vanished`, { path });
  const replaced = withHeaderLine(host, path, bytes, await journal.encode([session.header], session.dialect));
  if (!replaced) return rewriteFromMemory(host, path);
  const { bytes: out, delta } = replaced;
  await replaceFile(host, path, out, bytes);
  if (session.tailToRepair?.path === path) session.tailToRepair = { path, tail: shiftTail(session.tailToRepair.tail, delta) };
  journal.synced(path);
}

/**
 * The file's bytes with `headerLine` in place of its first line, or null when the file is to be
 * written from memory instead: it holds blob refs the store's agent cannot read (see
 * SessionTree.fileHasBlobRefs). A file with lines that did not load keeps its bytes (a rewrite
 * could not carry those lines), with a warning.
 */
function withHeaderLine(host: RewriteHost, path: string, original: Uint8Array, headerLine: Uint8Array): { bytes: Uint8Array; delta: number } | null {
  const owner = host.journal.owner();
  if (host.session.fileHasBlobRefs && storeImageForm(owner) === "inline") {
    if (!host.session.problems.some((p) => p.kind !== "glued")) return null;
    host.onWarning(`${path}: holds blob refs, which ${owner} does not resolve; its lines are kept as they are, as some did not load`);
  }
  return replaceFirstLine(original, headerLine);
}

/** The whole file from memory, atomically; the old bytes kept aside when lines did not load. */
async function rewriteFromMemory(host: RewriteHost, path: string): Promise<void> {
  const { storage, session, journal } = host;
  await journal.takeLock(path);
  const original = await storage.read(path);
  if (!original) throw new SessionError("rewrite-failed", `${path} vanished`, { path });
  const lost = session.problems.some((p) => p.kind !== "glued");
  if (lost) {
    const backup = `${path}.rewrite-${Date.now()}.bak`;
    await storage.write(backup, original);
    await storage.sync?.(backup);
    host.onWarning(`${path}: rewritten from memory; lines that did not load are kept in ${backup}`);
  }
  await replaceFile(host, path, await journal.encode([session.header, ...session.entries.all()], session.dialect), original);
  session.fileWrittenFromMemory();
}

/**
 * Writes `bytes` over `path` (atomic) and syncs it. When the sync fails after the write, the
 * `original` bytes are written back: the caller reports a failure, so the file must be the old one.
 */
async function replaceFile(host: RewriteHost, path: string, bytes: Uint8Array, original: Uint8Array): Promise<void> {
  const { storage } = host;
  let written = false;
  try {
    await storage.write(path, bytes);
    written = true;
    await storage.sync?.(path);
  } catch (error) {
    if (written) {
      await storage.write(path, original).catch((undo: unknown) => {
        throw new SessionError("rewrite-failed", `${path}: syncing the rewrite failed (${(error as Error)?.message}) and so did restoring it (${(undo as Error)?.message})`, { path, cause: error });
      });
    }
    throw error;
  }
  host.journal.synced(path);
}

/** A torn or unterminated tail after the bytes before it grew by `delta`. */
function shiftTail(tail: JsonlTail, delta: number): JsonlTail {
  return tail.kind === "torn" ? { ...tail, offset: tail.offset + delta } : tail;
}
