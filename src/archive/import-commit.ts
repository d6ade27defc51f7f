/**
 * Committing a planned import: blobs first, then sessions, several at once; a storage failure
 * undoes what was written.
 */
import { BlobStore } from "../blobs/blob-store.js";
import { isStorageError, type StorageLock, type StoragePort } from "../port.js";
import { forEachInOrder } from "./concurrency.js";
import { ArchiveError } from "./errors.js";
import type { BlobSource } from "./import-form.js";
import type { ArchiveProgress } from "./verify.js";

/** A planned write: a new file whole, or new entries after a stored session's. */
export type WriteOp =
  | { kind: "write"; path: string; bytes: () => Promise<Uint8Array>; locks: boolean }
  | { kind: "append"; path: string; bytes: () => Promise<Uint8Array>; locks: boolean };

/**
 * Files written at once: their fsyncs and renames overlap (node-fs: 200 blobs take ~3× longer one
 * by one). Each records its undo before it starts; a failure waits for the others to settle.
 */
const WRITE_CONCURRENCY = 8;

/** Blobs first (a session never points at a blob that is not there yet), then sessions. */
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
    await forEachInOrder(
      blobs,
      WRITE_CONCURRENCY,
      async (blob) => {
        const path = blobStore.pathOf(blob.hash);
        await failingAt(path, async () => writeWithUndo(storage, path, await blob.read(), undo));
        return path;
      },
      (path) => onProgress?.({ phase: "write", member: path, done: ++done, total }),
    );
    for (const op of ops) {
      current = op.path;
      const bytes = await op.bytes();
      if (op.kind === "append") {
        const before = await storage.stat(op.path);
        undo.push({ path: op.path, run: () => (before ? storage.truncate(op.path, before.size) : storage.remove(op.path)) });
        await storage.append(op.path, bytes);
      } else {
        await writeWithUndo(storage, op.path, bytes, undo);
      }
      onProgress?.({ phase: "write", member: op.path, done: ++done, total });
    }
    const sync = storage.sync?.bind(storage);
    if (sync) {
      await forEachInOrder([...new Set(undo.map((u) => u.path))], WRITE_CONCURRENCY, (path) => failingAt(path, () => sync(path)));
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

async function writeWithUndo(storage: StoragePort, path: string, bytes: Uint8Array, undo: { path: string; run: () => Promise<void> }[]): Promise<void> {
  const before = (await storage.stat(path)) === null ? null : await storage.read(path);
  undo.push({ path, run: () => (before ? storage.write(path, before) : storage.remove(path)) });
  await storage.write(path, bytes);
}
