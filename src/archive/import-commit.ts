/**
 * Committing a planned import: blobs first, several at once and durable together, then sessions;
 * a storage failure undoes what was written.
 */
import { BlobStore } from "../blobs/blob-store.js";
import { isStorageError, writeFilesThenSync, type FileToWrite, type StorageLock, type StoragePort } from "../port.js";
import { forEachInOrder } from "./concurrency.js";
import { ArchiveError } from "./errors.js";
import type { BlobSource } from "./import-form.js";
import type { ArchiveProgress } from "./verify.js";

/** A planned write: a new file whole, or new entries after a stored session's. */
export type WriteOp =
  | { kind: "write"; path: string; bytes: () => Promise<Uint8Array>; locks: boolean }
  | { kind: "append"; path: string; bytes: () => Promise<Uint8Array>; locks: boolean };

/** Sessions synced at once: their fsyncs overlap (node-fs). */
const SYNC_CONCURRENCY = 8;

/**
 * Blobs first, in one `writeFiles` (a port shares their durability: node-fs fsyncs each directory
 * once, not once per blob), durable before a session names them; then sessions, each synced.
 */
export async function commit(storage: StoragePort, blobStore: BlobStore, blobs: readonly BlobSource[], ops: readonly WriteOp[], onProgress?: (p: ArchiveProgress) => void): Promise<void> {
  const undo: { path: string; run: () => Promise<void> }[] = [];
  const locks: StorageLock[] = [];
  const total = blobs.length + ops.length;
  let done = 0;
  let current = "";
  try {
    for (const path of new Set(ops.filter((op) => op.locks).map((op) => op.path))) {
      current = path;
      if (storage.acquireLock) locks.push(await storage.acquireLock(path));
    }
    const blobFiles: FileToWrite[] = blobs.map((blob) => {
      const path = blobStore.pathOf(blob.hash);
      const bytes = () =>
        failingAt(path, async () => {
          // Asked for by the port right before it writes the blob: its undo is recorded first.
          await recordUndo(storage, path, undo);
          const read = await blob.read();
          onProgress?.({ phase: "write", member: path, done: ++done, total });
          return read;
        });
      return { path, bytes };
    });
    try {
      await (storage.writeFiles ? storage.writeFiles(blobFiles) : writeFilesThenSync(storage, blobFiles));
    } catch (error) {
      if (error instanceof FailedAt) throw error;
      const path = isStorageError(error) ? error.path : undefined;
      throw new FailedAt(path !== undefined && blobFiles.some((file) => file.path === path) ? path : blobStore.dir, error);
    }
    for (const op of ops) {
      current = op.path;
      const bytes = await op.bytes();
      if (op.kind === "append") {
        const before = await storage.stat(op.path);
        undo.push({ path: op.path, run: () => (before ? storage.truncate(op.path, before.size) : storage.remove(op.path)) });
        await storage.append(op.path, bytes);
      } else {
        await recordUndo(storage, op.path, undo);
        await storage.write(op.path, bytes);
      }
      onProgress?.({ phase: "write", member: op.path, done: ++done, total });
    }
    const sync = storage.sync?.bind(storage);
    if (sync) {
      await forEachInOrder([...new Set(ops.map((op) => op.path))], SYNC_CONCURRENCY, (path) => failingAt(path, () => sync(path)));
    }
  } catch (thrown) {
    const { path: member, cause: error } = thrown instanceof FailedAt ? thrown : { path: current, cause: thrown };
    const failedUndo: string[] = [];
    for (const step of undo.reverse()) {
      try {
        await step.run();
      } catch {
        failedUndo.push(step.path);
      }
    }
    if (error instanceof ArchiveError) throw error;
    const cause = error as Error;
    if (isStorageError(error, "locked")) throw new ArchiveError("conflict", `the session is open for writing elsewhere (${cause.message})`, { member, cause });
    const outcome = failedUndo.length === 0 ? "every change of this import was undone" : `undoing failed for ${failedUndo.join(", ")}`;
    throw new ArchiveError("write-failed", `storage failed (${cause?.message ?? String(error)}); ${outcome}`, { member, cause });
  } finally {
    for (const lock of locks) await lock.release().catch(() => {});
  }
}

/** A failure and the path it happened at: writes run a few at a time, so the last path started is not it. */
class FailedAt {
  constructor(
    readonly path: string,
    readonly cause: unknown,
  ) {}
}

async function failingAt<T>(path: string, run: () => Promise<T>): Promise<T> {
  try {
    return await run();
  } catch (error) {
    throw new FailedAt(path, error);
  }
}

/** Records how to put `path` back as it is now: removed when missing, else its bytes written back. */
async function recordUndo(storage: StoragePort, path: string, undo: { path: string; run: () => Promise<void> }[]): Promise<void> {
  const before = (await storage.stat(path)) === null ? null : await storage.read(path);
  undo.push({ path, run: () => (before ? storage.write(path, before) : storage.remove(path)) });
}
