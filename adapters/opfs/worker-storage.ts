/**
 * The OPFS StoragePort on the Origin Private File System itself, meant for a dedicated worker
 * (sessionkit-opfs-worker.ts; `opfsWorkerStorage`): it holds a FileSystemSyncAccessHandle per open
 * file, so an append is one write at the tracked end, O(appended bytes). Sync handles are
 * exclusive per file across the origin: writers take `acquireLock` first, reads use `File`
 * snapshots. Atomic writes, call order and the createWritable fallback: docs/DESIGN.md §2 ("OPFS").
 */
import {
  StorageError,
  baseName,
  checkStoragePath,
  parentDir,
  checkByteRange,
  clampByteRange,
  writeFilesThenSync,
  type ByteRange,
  type DirEntry,
  type FileStat,
  type FileToWrite,
  type StorageLock,
  type FullStoragePort,
  type StorageWatch,
} from "../../src/port.js";
import { BroadcastChanges } from "../kit/broadcast-changes.js";
import { collisionError } from "../kit/collision.js";
import { domErrorName, toStorageError } from "../kit/dom-errors.js";
import { PathQueue } from "../kit/path-queue.js";
import { acquireWebLock } from "../kit/web-locks.js";
import { fileIn, OpfsDirectories, type FileHandle, type SyncAccessHandle } from "./directories.js";

/** Which OPFS directory a port works in. Ports with the same location share their files. */
export interface OpfsLocation {
  /** Directory below the OPFS root that holds the files, "/"-separated; default "sessionkit". */
  root?: string;
  /** A Chromium storage bucket (navigator.storageBuckets) whose OPFS to use, for its own quota and eviction. */
  bucket?: string;
}

/**
 * The OPFS port (in a page or in a worker): a StoragePort with every optional method. `sync`
 * resolves once the file's bytes are flushed to disk; a lock is a Web Lock, shared with every tab
 * and worker of the origin (StorageError "locked" when taken); `watch` reports the changes of any
 * port on the same directory (this page, other tabs, workers), over a BroadcastChannel; `close`
 * closes the open file handles (in a page: ends the storage worker too).
 */
export type OpfsStorage = FullStoragePort & {
  /** Always "opfs". */
  readonly kind: "opfs";
};

/** The OPFS directory ports use unless `root` says otherwise. */
export const DEFAULT_OPFS_ROOT = "sessionkit";

/** The BroadcastChannel on which every port of one OPFS directory reports its changes. */
export function opfsChangesChannel(location: OpfsLocation): string {
  return `sessionkit:opfs:${location.bucket ?? ""}:${location.root ?? DEFAULT_OPFS_ROOT}`;
}

/** Names of in-flight `write` temp files; `list` hides them. */
const TEMP_PREFIX = ".sessionkit-tmp-";

/** Sync handles kept open at once; the least recently used is closed beyond this. */
const MAX_OPEN_HANDLES = 64;


interface OpenFile {
  access: SyncAccessHandle;
  size: number;
  mtimeMs: number;
}


/**
 * The OPFS port without a worker hop, for code that runs in a dedicated worker itself (such as a
 * SessionManager kept in a worker). In a page use {@link opfsStorage}.
 */
export function opfsWorkerStorage(options?: OpfsLocation): OpfsStorage {
  return new OpfsPort(options ?? {});
}

class OpfsPort implements OpfsStorage {
  readonly kind = "opfs";
  private readonly syncHandles: boolean;
  private readonly directories: OpfsDirectories;
  /** The Web Lock names of this directory's locks start with it. */
  private readonly lockPrefix: string;
  /** Open sync handles by path, least recently used first. */
  private readonly open = new Map<string, OpenFile>();
  /** Every operation on a file, read or change, runs in its path's turn. */
  private readonly queue = new PathQueue();
  private readonly changes: BroadcastChanges;

  constructor(options: OpfsLocation) {
    this.changes = new BroadcastChanges(opfsChangesChannel(options));
    const filesDir = options.root ?? DEFAULT_OPFS_ROOT;
    if (filesDir !== "") checkStoragePath(filesDir);
    this.directories = new OpfsDirectories(filesDir, options.bucket);
    this.lockPrefix = `sessionkit:opfs:${options.bucket ?? ""}:${filesDir}:`;
    this.syncHandles = typeof FileSystemFileHandle !== "undefined" && "createSyncAccessHandle" in FileSystemFileHandle.prototype;
  }

  async read(path: string, range?: ByteRange): Promise<Uint8Array | null> {
    checkStoragePath(path);
    checkByteRange(path, range);
    return this.exclusive(path, "read", async () => {
      const open = this.open.get(path);
      if (open) {
        const [start, end] = clampByteRange(range, open.size);
        const out = new Uint8Array(end - start);
        if (open.access.read(out, { at: start }) !== out.length) throw new StorageError("io", `short read of ${path}`, { path });
        return out;
      }
      const file = await this.directories.file(path, false).catch(noFileThere);
      if (!file) return null;
      const snapshot = await file.getFile();
      const [start, end] = clampByteRange(range, snapshot.size);
      return new Uint8Array(await snapshot.slice(start, end).arrayBuffer());
    });
  }

  async stat(path: string): Promise<FileStat | null> {
    checkStoragePath(path);
    return this.exclusive(path, "stat", () => this.statNow(path).catch(noFileThere));
  }

  /** Directories have no timestamps in OPFS: their entries carry mtimeMs 0. */
  async list(dir: string): Promise<DirEntry[]> {
    checkStoragePath(dir, { allowRoot: true });
    try {
      const handle = await this.directories.directory(dir, false).catch(noFileThere);
      if (!handle) return [];
      const entries: DirEntry[] = [];
      for await (const child of handle.values()) {
        if (child.name.startsWith(TEMP_PREFIX)) continue;
        if (child.kind === "directory") {
          entries.push({ name: child.name, kind: "dir", size: 0, mtimeMs: 0 });
          continue;
        }
        const stat = await this.statNow(dir === "" ? child.name : `${dir}/${child.name}`);
        if (stat) entries.push({ name: child.name, kind: "file", ...stat });
      }
      return entries.sort((a, b) => (a.name < b.name ? -1 : a.name > b.name ? 1 : 0));
    } catch (error) {
      throw toStorageError(error, `opfs list ${dir}`, dir);
    }
  }

  async append(path: string, data: Uint8Array): Promise<void> {
    checkStoragePath(path);
    // The file's handle is open and nothing of it is queued: written now (no copy, no turn).
    const idle = this.idleOpenFile(path);
    if (idle) {
      await this.now("append", path, () => appendTo(idle, data, path));
      return this.changes.notify([path]);
    }
    const bytes = data.slice(); // the caller may reuse its buffer before our turn comes
    return this.changing(path, "append", async () => {
      if (!this.syncHandles) return this.writeWritable(await this.directories.file(path, true), bytes, "append", path);
      appendTo(await this.openFile(path, true), bytes, path);
    });
  }

  async write(path: string, data: Uint8Array): Promise<void> {
    checkStoragePath(path);
    const bytes = data.slice();
    return this.changing(path, "write", async () => {
      const dir = await this.directories.directory(parentDir(path), true);
      const name = baseName(path);
      const existing = await fileIn(dir, name, false); // fails now if `path` is a directory
      if (!this.syncHandles) {
        try {
          return await this.writeWritable(existing ?? (await fileIn(dir, name, true)), bytes, "replace", path);
        } catch (error) {
          if (!existing) await dir.removeEntry(name).catch(() => {}); // as it was: no file
          throw error;
        }
      }
      const temp = await fileIn(dir, `${TEMP_PREFIX}${crypto.randomUUID()}`, true);
      try {
        if (!temp.move) throw new StorageError("unsupported", "this browser's OPFS cannot move files (FileSystemFileHandle.move)", { path });
        const access = await temp.createSyncAccessHandle!();
        try {
          writeFully(access, bytes, 0, path);
          access.flush();
        } finally {
          access.close();
        }
        this.release(path); // move fails while our own handle holds the target
        await temp.move(dir, name);
      } catch (error) {
        await dir.removeEntry(temp.name).catch(() => {});
        throw error;
      }
    });
  }

  async truncate(path: string, size: number): Promise<void> {
    checkStoragePath(path);
    return this.changing(path, "truncate", async () => {
      const current = await this.statNow(path);
      if (!current) throw new StorageError("not-found", `cannot truncate ${JSON.stringify(path)}: no such file`, { path });
      if (!Number.isSafeInteger(size) || size < 0 || size > current.size) {
        throw new StorageError("invalid", `cannot truncate ${JSON.stringify(path)} (${current.size} bytes) to ${size} bytes`, { path });
      }
      if (!this.syncHandles) {
        const writable = await (await this.directories.requireFile(path)).createWritable({ keepExistingData: true });
        await writable.truncate(size);
        return writable.close();
      }
      const open = await this.openFile(path, false);
      if (!open) throw new StorageError("not-found", `cannot truncate ${JSON.stringify(path)}: no such file`, { path });
      open.access.truncate(size);
      open.size = size;
      open.mtimeMs = Date.now();
    });
  }

  async remove(path: string): Promise<void> {
    checkStoragePath(path);
    return this.changing(path, "remove", async () => {
      this.release(path);
      const dir = await this.directories.directory(parentDir(path), false);
      if (!dir || !(await fileIn(dir, baseName(path), false))) return;
      await dir.removeEntry(baseName(path));
    });
  }

  async sync(path: string): Promise<void> {
    checkStoragePath(path);
    const idle = this.idleOpenFile(path);
    if (idle) return this.now("sync", path, () => idle.access.flush());
    return this.exclusive(path, "sync", async () => {
      const open = this.open.get(path);
      if (open) return open.access.flush();
      // Not open: its last change went through a closed handle or writable, already persisted.
      if (!(await this.directories.file(path, false))) {
        throw new StorageError("not-found", `cannot sync ${JSON.stringify(path)}: no such file`, { path });
      }
    });
  }

  /** Each file written (flushed before its move), then synced. */
  async writeFiles(files: readonly FileToWrite[]): Promise<void> {
    return writeFilesThenSync(this, files);
  }

  /**
   * A writer lock on a path also covers its sync handle: releasing the lock closes the handle
   * first, or the next holder (another tab's worker) could not open one.
   */
  async acquireLock(key: string): Promise<StorageLock> {
    checkStoragePath(key);
    const lock = await acquireWebLock(`${this.lockPrefix}${key}`, key);
    return {
      release: async () => {
        await this.exclusive(key, "unlock", async () => this.release(key)).catch(() => {});
        await lock.release();
      },
    };
  }

  watch(dir: string, onChange: (path: string) => void): Promise<StorageWatch> {
    return this.changes.watch(dir, onChange);
  }

  async close(): Promise<void> {
    await this.queue.settled();
    for (const path of [...this.open.keys()]) this.release(path);
  }

  /**
   * Runs operations on one path one at a time, in call order (sync-handle calls are synchronous,
   * but finding and opening handles is not). Failures become StorageErrors.
   */
  private exclusive<T>(path: string, op: string, operation: () => Promise<T>): Promise<T> {
    return this.queue.run(path, async () => {
      try {
        return await operation();
      } catch (error) {
        throw await this.failure(error, op, path);
      }
    });
  }

  /** `error` of `op` on `path` as a StorageError: a TypeMismatchError is "collision" when a file or directory is in the way. */
  private async failure(error: unknown, op: string, path: string): Promise<StorageError> {
    const blocker = domErrorName(error) === "TypeMismatchError" ? await this.directories.inTheWay(path).catch(() => undefined) : undefined;
    return blocker ? collisionError(op, path, blocker, error) : toStorageError(error, `opfs ${op} ${path}`, path);
  }

  /**
   * The open sync handle of a file none of whose operations is queued (marked most recently
   * used), else undefined: an append or sync on it can run at once, in call order.
   */
  private idleOpenFile(path: string): OpenFile | undefined {
    if (this.queue.busy(path)) return undefined;
    const open = this.open.get(path);
    if (!open) return undefined;
    this.open.delete(path); // re-insert: most recently used last
    this.open.set(path, open);
    return open;
  }

  /** Runs a synchronous operation now; a failure becomes a rejected StorageError. */
  private async now(op: string, path: string, operation: () => void): Promise<void> {
    try {
      operation();
    } catch (error) {
      throw toStorageError(error, `opfs ${op} ${path}`, path);
    }
  }

  /** An `exclusive` operation that changes the file: reported to watchers once it succeeded. */
  private async changing(path: string, op: string, operation: () => Promise<void>): Promise<void> {
    await this.exclusive(path, op, operation);
    this.changes.notify([path]);
  }

  /** The open sync handle of a file, opening (and with `create`, creating) it; null if missing. */
  private async openFile(path: string, create: true): Promise<OpenFile>;
  private async openFile(path: string, create: boolean): Promise<OpenFile | null>;
  private async openFile(path: string, create: boolean): Promise<OpenFile | null> {
    const cached = this.open.get(path);
    if (cached) {
      this.open.delete(path); // re-insert: most recently used last
      this.open.set(path, cached);
      return cached;
    }
    const file = await this.directories.file(path, create);
    if (!file) return null;
    const access = await file.createSyncAccessHandle!();
    const opened = { access, size: access.getSize(), mtimeMs: (await file.getFile()).lastModified };
    this.open.set(path, opened);
    if (this.open.size > MAX_OPEN_HANDLES) this.release(this.open.keys().next().value as string);
    return opened;
  }

  /** Closes a file's sync handle, if open, so others (move, remove, other tabs) can take it. */
  private release(path: string): void {
    const open = this.open.get(path);
    if (!open) return;
    this.open.delete(path);
    open.access.close();
  }

  /** A file's size and mtime, from its open handle or a File snapshot; null if missing. */
  private async statNow(path: string): Promise<FileStat | null> {
    const open = this.open.get(path);
    if (open) return { size: open.size, mtimeMs: open.mtimeMs };
    const file = await this.directories.file(path, false);
    if (!file) return null;
    const snapshot = await file.getFile();
    return { size: snapshot.size, mtimeMs: snapshot.lastModified };
  }

  /**
   * Appends or replaces through createWritable. Its swap file lands on close() (so a replace is
   * atomic) and an aborted one leaves the file as it was; but keepExistingData copies the whole
   * file into the swap file first, so an append costs O(file size).
   */
  private async writeWritable(file: FileHandle, data: Uint8Array, mode: "append" | "replace", path: string): Promise<void> {
    const position = mode === "append" ? (await file.getFile()).size : 0;
    const writable = await file.createWritable({ keepExistingData: mode === "append" });
    try {
      await writable.write({ type: "write", position, data: data as Uint8Array<ArrayBuffer> });
      await writable.close();
    } catch (error) {
      await writable.abort().catch(() => {});
      throw await this.explainWriteFailure(error, data.length, path);
    }
  }

  /**
   * Chromium can report a writable that ran out of quota as "AbortError: Failed to write data to
   * data pipe" (the backend closes the pipe before its QuotaExceededError arrives): when the
   * bytes could not have fit, call it "quota".
   */
  private async explainWriteFailure(error: unknown, bytes: number, path: string): Promise<unknown> {
    if (domErrorName(error) === "QuotaExceededError") return error;
    const { usage, quota } = await (await this.directories.storageArea()).estimate().catch(() => ({}) as StorageEstimate);
    if (usage === undefined || quota === undefined || usage + bytes <= quota) return error;
    return new StorageError("quota", `opfs: out of quota writing ${bytes} bytes to ${JSON.stringify(path)}`, { path, cause: error });
  }


}


/** For a read: a TypeMismatchError (a directory where the file would be, or a file where a directory would be) means no file there. */
function noFileThere(error: unknown): null {
  if (domErrorName(error) === "TypeMismatchError") return null;
  throw error;
}

/** Writes `data` at the end of an open file. */
function appendTo(open: OpenFile, data: Uint8Array, path: string): void {
  writeFully(open.access, data, open.size, path);
  open.size += data.length;
  open.mtimeMs = Date.now();
}

/**
 * Writes all of `data` at `at`. A short write means the quota ran out (Chromium writes what fits
 * and returns the count): cut the file back to `at` and fail with "quota", leaving it as it was.
 */
function writeFully(access: SyncAccessHandle, data: Uint8Array, at: number, path: string): void {
  let written = 0;
  try {
    written = access.write(data, { at });
  } catch (error) {
    access.truncate(at);
    throw error;
  }
  if (written !== data.length) {
    access.truncate(at);
    throw new StorageError("quota", `opfs: out of quota writing ${data.length} bytes to ${JSON.stringify(path)}`, { path });
  }
}
