/**
 * In-memory StoragePort: for tests and sessions that never touch a disk.
 *
 * Files live in a Map of path -> growable buffer; directories are implicit, derived from the
 * paths of the files below them (so a directory disappears with its last file).
 *
 * @module sessionkit/adapters/memory
 */
import {
  StorageError,
  checkStoragePath,
  parentDir,
  checkByteRange,
  clampByteRange,
  listChildren,
  writeFilesThenSync,
  type ByteRange,
  type DirEntry,
  type FileStat,
  type StorageLock,
  type StoragePortWith,
  type StorageWatch,
} from "../../src/port.js";
import { collisionError, type InTheWay } from "../kit/collision.js";
import { WatcherSet } from "../kit/watchers.js";

/**
 * The in-memory port: a StoragePort whose optional `sync`, `writeFiles`, `acquireLock` and `watch`
 * are always there. `sync` has nothing to make durable and resolves at once (StorageError
 * "not-found" for a missing file); `writeFiles` writes each file in turn; a lock is one within this port (there is no other process to share it with);
 * `watch` reports this port's own changes.
 */
export type MemoryStorage = StoragePortWith<"sync" | "writeFiles" | "acquireLock" | "watch"> & {
  /** Always "memory". */
  readonly kind: "memory";
};

interface MemoryFile {
  /** Bytes [0, size) are the file; the rest is spare capacity so appends stay O(1) amortized. */
  buffer: Uint8Array;
  size: number;
  mtimeMs: number;
}

const MIN_CAPACITY = 256;

/** A new, empty in-memory store: for tests, demos and sessions that never touch a disk. Its files go with it. */
export function memoryStorage(): MemoryStorage {
  const files = new Map<string, MemoryFile>();
  /** Directory path -> number of files below it; a directory exists while its count is > 0. */
  const dirFileCounts = new Map<string, number>();
  const heldLocks = new Set<string>();
  const watchers = new WatcherSet();

  function ancestors(path: string): string[] {
    const dirs: string[] = [];
    for (let dir = parentDir(path); dir !== ""; dir = parentDir(dir)) dirs.push(dir);
    return dirs;
  }

  /** What keeps `path` from being a file: a file at a parent path, or files below it; undefined when nothing does. */
  function inTheWay(path: string): InTheWay | undefined {
    if (dirFileCounts.has(path)) return { path, kind: "dir" };
    const fileAncestor = ancestors(path).find((dir) => files.has(dir));
    return fileAncestor === undefined ? undefined : { path: fileAncestor, kind: "file" };
  }

  /** The error of an operation on a file that is not there: "collision" when something is in the way, else "not-found". */
  function noFile(action: string, path: string): StorageError {
    const blocker = inTheWay(path);
    return blocker ? collisionError(action, path, blocker) : new StorageError("not-found", `cannot ${action} ${JSON.stringify(path)}: no such file`, { path });
  }

  /** Registers a new file, rejecting paths that would make one name both a file and a directory. */
  function createFile(action: string, path: string, buffer: Uint8Array, size: number): MemoryFile {
    const blocker = inTheWay(path);
    if (blocker) throw collisionError(action, path, blocker);
    for (const dir of ancestors(path)) dirFileCounts.set(dir, (dirFileCounts.get(dir) ?? 0) + 1);
    const file = { buffer, size, mtimeMs: Date.now() };
    files.set(path, file);
    return file;
  }

  function deleteFile(path: string): void {
    if (!files.delete(path)) return;
    for (const dir of ancestors(path)) {
      const count = (dirFileCounts.get(dir) ?? 1) - 1;
      if (count === 0) dirFileCounts.delete(dir);
      else dirFileCounts.set(dir, count);
    }
  }

  const port: MemoryStorage = {
    kind: "memory",

    async read(path: string, range?: ByteRange): Promise<Uint8Array | null> {
      checkStoragePath(path);
      checkByteRange(path, range);
      const file = files.get(path);
      if (!file) return null;
      const [start, end] = clampByteRange(range, file.size);
      return file.buffer.slice(start, end);
    },

    async stat(path: string): Promise<FileStat | null> {
      checkStoragePath(path);
      const file = files.get(path);
      return file ? { size: file.size, mtimeMs: file.mtimeMs } : null;
    },

    async list(dir: string): Promise<DirEntry[]> {
      checkStoragePath(dir, { allowRoot: true });
      return listChildren(dir, Array.from(files, ([path, file]) => ({ path, size: file.size, mtimeMs: file.mtimeMs })));
    },

    async append(path: string, data: Uint8Array): Promise<void> {
      checkStoragePath(path);
      const file = files.get(path) ?? createFile("append to", path, new Uint8Array(Math.max(MIN_CAPACITY, data.length)), 0);
      const needed = file.size + data.length;
      if (needed > file.buffer.length) {
        const grown = new Uint8Array(Math.max(needed, file.buffer.length * 2));
        grown.set(file.buffer.subarray(0, file.size));
        file.buffer = grown;
      }
      file.buffer.set(data, file.size);
      file.size = needed;
      file.mtimeMs = Date.now();
      watchers.notify(path);
    },

    async write(path: string, data: Uint8Array): Promise<void> {
      checkStoragePath(path);
      const file = files.get(path);
      if (file) {
        file.buffer = data.slice();
        file.size = data.length;
        file.mtimeMs = Date.now();
      } else {
        createFile("write", path, data.slice(), data.length);
      }
      watchers.notify(path);
    },

    async truncate(path: string, size: number): Promise<void> {
      checkStoragePath(path);
      const file = files.get(path);
      if (!file) throw noFile("truncate", path);
      if (!Number.isSafeInteger(size) || size < 0 || size > file.size) {
        throw new StorageError("invalid", `cannot truncate ${JSON.stringify(path)} (${file.size} bytes) to ${size} bytes`, {
          path,
        });
      }
      file.size = size;
      file.mtimeMs = Date.now();
      watchers.notify(path);
    },

    async remove(path: string): Promise<void> {
      checkStoragePath(path);
      if (!files.has(path)) {
        const blocker = inTheWay(path);
        if (blocker) throw collisionError("remove", path, blocker);
        return;
      }
      deleteFile(path);
      watchers.notify(path);
    },

    async sync(path: string): Promise<void> {
      checkStoragePath(path);
      if (!files.has(path)) throw noFile("sync", path);
    },

    // Nothing to make durable: each file written in turn.
    writeFiles: (toWrite) => writeFilesThenSync(port, toWrite),

    async acquireLock(key: string): Promise<StorageLock> {
      checkStoragePath(key);
      if (heldLocks.has(key)) throw new StorageError("locked", `${key} is locked by this process`, { path: key });
      heldLocks.add(key);
      let released = false;
      return {
        async release() {
          // Only the first release frees the key: a later one must not free a newer holder's lock.
          if (released) return;
          released = true;
          heldLocks.delete(key);
        },
      };
    },

    async watch(dir: string, onChange: (path: string) => void): Promise<StorageWatch> {
      return watchers.add(dir, onChange);
    },
  };
  return port;
}

