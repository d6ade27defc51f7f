/**
 * StoragePort over a directory of real files (Node, Electron main process).
 *
 * Appends go through one cached "a" FileHandle per path (several times faster than appendFile);
 * writes are atomic (temp file + fsync + rename); locks are O_EXCL lock files that name their
 * owner so a crashed owner's lock can be taken over.
 *
 * A lock's owner is dead when, on this host, its pid is gone, or (Linux) the host booted since, or
 * the process now holding that pid started at another time than the owner did (the kernel reuses
 * pids: a dead writer's pid may belong to any process later). The start time is field 22 of
 * `/proc/<pid>/stat` (clock ticks since boot), kept in the lock file with the boot id.
 *
 * @module sessionkit/adapters/node-fs
 */
import { randomBytes } from "node:crypto";
import { open, mkdir, readFile, readdir, rename, stat, truncate, unlink, type FileHandle } from "node:fs/promises";
import os from "node:os";
import nodePath from "node:path";
import {
  StorageError,
  baseName,
  checkStoragePath,
  checkByteRange,
  clampByteRange,
  type ByteRange,
  type DirEntry,
  type FileStat,
  type StorageLock,
  type StoragePort,
  type StorageWatch,
} from "../../src/port.js";
import { WatcherSet } from "../watchers.js";
import { watchTree, type WatchMode } from "./watch-tree.js";

/** Options of {@link nodeFsStorage}. */
export interface NodeFsStorageOptions {
  /** Directory that holds everything; "~/" expands to the home directory. Created on first write. */
  root: string;
  /**
   * How `watch` sees changes made by other processes: "auto" (default) uses fs.watch and polls
   * where it is unsupported or fails; "poll" always polls. This port's own changes are reported
   * at once either way.
   */
  watchMode?: WatchMode;
  /** How often a polling watch looks; default 500 ms. */
  pollIntervalMs?: number;
}

/** The port over a directory: a StoragePort with every optional method. */
export type NodeFsStorage = StoragePort & {
  /** Always "node-fs". */
  readonly kind: "node-fs";
  /** The absolute root directory. */
  readonly root: string;
  /** fsyncs the file (a file just written by `write` is durable already). */
  sync(path: string): Promise<void>;
  /**
   * A lock file (`<key>.lock`, created exclusively) that names its owner, so other processes see
   * it and a dead owner's lock is taken over.
   */
  acquireLock(key: string): Promise<StorageLock>;
  /** Reports changes below `dir`, this process's and (through fs.watch or polling) others'. */
  watch(dir: string, onChange: (path: string) => void): Promise<StorageWatch>;
  /** Closes the file handles kept open for appends. */
  close(): Promise<void>;
};

/** Open append handles kept at once; the least recently used one is closed beyond this. */
const MAX_APPEND_HANDLES = 32;
const DEFAULT_POLL_INTERVAL_MS = 500;
/** An unreadable lock file younger than this may be one whose owner is still writing it. */
const UNREADABLE_LOCK_GRACE_MS = 10_000;
const TEMP_FILE = /^\..+\.[0-9a-f]{12}\.tmp$/;

interface LockOwner {
  pid: number;
  hostname: string;
  acquiredAt: string;
  /** Linux: the owner's start time, field 22 of /proc/<pid>/stat (clock ticks since boot). */
  startTime?: number;
  /** Linux: /proc/sys/kernel/random/boot_id when the lock was taken; start times count from that boot. */
  bootId?: string;
}

/**
 * A StoragePort over a directory of real files, for Node and Electron's main process: a storage
 * path "sessions/a.jsonl" is the file `<root>/sessions/a.jsonl`. Appends are fast (a cached
 * handle per file), writes atomic (temp file, fsync, rename), locks shared with other processes.
 */
export function nodeFsStorage(options: NodeFsStorageOptions): NodeFsStorage {
  const root = nodePath.resolve(expandHome(options.root));
  /** path -> open "a" handle; Map order is recency order (oldest first). */
  const appendHandles = new Map<string, FileHandle>();
  /**
   * Paths whose last change was a `write`, which fsyncs the file and its directory before it
   * resolves: a `sync` of one has nothing left to do (an import syncs every file it wrote).
   */
  const durablyWritten = new Set<string>();
  /** path -> tail of the chain of operations that change that file, so they run in call order. */
  const queues = new Map<string, Promise<void>>();
  /** Subscribers of `watch`, told of this port's own changes as soon as they are made. */
  const ownChanges = new WatcherSet();
  const changed = (path: string) => () => ownChanges.notify(path);

  function toFile(path: string): string {
    return nodePath.join(root, ...checkStoragePath(path).split("/"));
  }

  function serialize<T>(path: string, operation: () => Promise<T>): Promise<T> {
    const previous = queues.get(path) ?? Promise.resolve();
    const result = previous.then(operation);
    const tail = result.then(ignore, ignore);
    queues.set(path, tail);
    void tail.then(() => {
      if (queues.get(path) === tail) queues.delete(path);
    });
    return result;
  }

  /** Call inside `serialize(path, …)`. */
  async function appendHandle(path: string, file: string): Promise<FileHandle> {
    const cached = appendHandles.get(path);
    if (cached) {
      appendHandles.delete(path);
      appendHandles.set(path, cached);
      return cached;
    }
    let handle: FileHandle;
    try {
      handle = await open(file, "a");
    } catch (error) {
      if (errorCode(error) !== "ENOENT") throw error;
      await mkdir(nodePath.dirname(file), { recursive: true });
      handle = await open(file, "a");
    }
    appendHandles.set(path, handle);
    for (const [evictedPath, evicted] of appendHandles) {
      if (appendHandles.size <= MAX_APPEND_HANDLES) break;
      appendHandles.delete(evictedPath);
      // Closed through its own path's queue, so an append in flight on it finishes first.
      void serialize(evictedPath, () => evicted.close()).catch(ignore);
    }
    return handle;
  }

  /** Call inside `serialize(path, …)`. */
  async function dropAppendHandle(path: string): Promise<void> {
    const handle = appendHandles.get(path);
    if (!handle) return;
    appendHandles.delete(path);
    await handle.close();
  }

  async function lockOwner(lockFile: string): Promise<{ owner: LockOwner | null; mtimeMs: number } | "gone"> {
    let text: string;
    let mtimeMs: number;
    try {
      mtimeMs = (await stat(lockFile)).mtimeMs;
      text = await readText(lockFile);
    } catch (error) {
      if (errorCode(error) === "ENOENT") return "gone";
      throw error;
    }
    return { owner: parseLockOwner(text), mtimeMs };
  }

  async function tryAcquire(key: string, lockFile: string, mayTakeOver: boolean): Promise<StorageLock> {
    const identity = await processIdentity(process.pid);
    const owner: LockOwner = { pid: process.pid, hostname: os.hostname(), acquiredAt: new Date().toISOString(), ...identity };
    try {
      await createExclusive(lockFile, JSON.stringify(owner));
    } catch (error) {
      if (errorCode(error) !== "EEXIST") throw error;
      const found = await lockOwner(lockFile);
      if (found === "gone") {
        if (mayTakeOver) return tryAcquire(key, lockFile, false);
        throw new StorageError("locked", `${key} is locked (its lock file changed while it was being acquired)`, {
          path: key,
          cause: error,
        });
      }
      const stale =
        found.owner === null ? Date.now() - found.mtimeMs > UNREADABLE_LOCK_GRACE_MS : found.owner.hostname === os.hostname() && (await ownerIsGone(found.owner));
      if (stale && mayTakeOver) {
        await unlinkIfPresent(lockFile);
        return tryAcquire(key, lockFile, false);
      }
      const by = found.owner ? `by pid ${found.owner.pid} on host ${found.owner.hostname}` : "by an unreadable lock file";
      throw new StorageError("locked", `${key} is locked ${by}`, { path: key, cause: error });
    }
    let released = false;
    return {
      async release() {
        if (released) return;
        released = true;
        try {
          await unlinkIfPresent(lockFile);
        } catch (error) {
          throw toStorageError(error, "release lock", key);
        }
      },
    };
  }

  return {
    kind: "node-fs",
    root,

    async read(path: string, range?: ByteRange): Promise<Uint8Array | null> {
      const file = toFile(path);
      checkByteRange(path, range);
      let handle: FileHandle;
      try {
        handle = await open(file, "r");
      } catch (error) {
        if (isMissing(error)) return null;
        throw toStorageError(error, "read", path);
      }
      try {
        const info = await handle.stat();
        if (!info.isFile()) return null;
        const [start, end] = clampByteRange(range, info.size);
        const bytes = new Uint8Array(end - start);
        let filled = 0;
        while (filled < bytes.length) {
          const { bytesRead } = await handle.read(bytes, filled, bytes.length - filled, start + filled);
          if (bytesRead === 0) return bytes.subarray(0, filled); // truncated while we read
          filled += bytesRead;
        }
        return bytes;
      } catch (error) {
        throw toStorageError(error, "read", path);
      } finally {
        await handle.close();
      }
    },

    async stat(path: string): Promise<FileStat | null> {
      const file = toFile(path);
      try {
        const info = await stat(file);
        return info.isFile() ? { size: info.size, mtimeMs: info.mtimeMs } : null;
      } catch (error) {
        if (isMissing(error)) return null;
        throw toStorageError(error, "stat", path);
      }
    },

    async list(dir: string): Promise<DirEntry[]> {
      checkStoragePath(dir, { allowRoot: true });
      const dirPath = dir === "" ? root : toFile(dir);
      try {
        const names = (await readdir(dirPath)).filter((name) => !TEMP_FILE.test(name)).sort();
        const entries = await Promise.all(
          names.map(async (name): Promise<DirEntry | null> => {
            try {
              const info = await stat(nodePath.join(dirPath, name));
              if (info.isFile()) return { name, kind: "file", size: info.size, mtimeMs: info.mtimeMs };
              if (info.isDirectory()) return { name, kind: "dir", size: 0, mtimeMs: info.mtimeMs };
              return null;
            } catch (error) {
              if (isMissing(error)) return null; // removed since readdir
              throw error;
            }
          }),
        );
        return entries.filter((entry) => entry !== null);
      } catch (error) {
        if (isMissing(error)) return [];
        throw toStorageError(error, "list", dir);
      }
    },

    async append(path: string, data: Uint8Array): Promise<void> {
      const file = toFile(path);
      return serialize(path, async () => {
        durablyWritten.delete(path);
        try {
          const handle = await appendHandle(path, file);
          let written = 0;
          while (written < data.length) {
            written += (await handle.write(data, written, data.length - written)).bytesWritten;
          }
        } catch (error) {
          throw toStorageError(error, "append to", path);
        }
      }).then(changed(path));
    },

    async write(path: string, data: Uint8Array): Promise<void> {
      const file = toFile(path);
      return serialize(path, async () => {
        const dir = nodePath.dirname(file);
        const temp = nodePath.join(dir, `.${baseName(path)}.${randomBytes(6).toString("hex")}.tmp`);
        try {
          // The append handle points at the inode the rename is about to replace.
          await dropAppendHandle(path);
          durablyWritten.delete(path);
          await syncNewDirectories(await mkdir(dir, { recursive: true }), dir);
          const handle = await open(temp, "wx");
          try {
            await handle.writeFile(data);
            await handle.sync();
          } finally {
            await handle.close();
          }
          await rename(temp, file);
        } catch (error) {
          await unlinkIfPresent(temp).catch(ignore);
          throw toStorageError(error, "write", path);
        }
        await syncDirectory(dir);
        durablyWritten.add(path);
      }).then(changed(path));
    },

    async truncate(path: string, size: number): Promise<void> {
      const file = toFile(path);
      return serialize(path, async () => {
        durablyWritten.delete(path);
        try {
          const current = (await stat(file)).size;
          if (!Number.isSafeInteger(size) || size < 0 || size > current) {
            throw new StorageError("invalid", `cannot truncate ${JSON.stringify(path)} (${current} bytes) to ${size} bytes`, {
              path,
            });
          }
          await truncate(file, size);
        } catch (error) {
          throw toStorageError(error, "truncate", path);
        }
      }).then(changed(path));
    },

    async remove(path: string): Promise<void> {
      const file = toFile(path);
      return serialize(path, async () => {
        durablyWritten.delete(path);
        try {
          await dropAppendHandle(path);
          await unlinkIfPresent(file);
        } catch (error) {
          throw toStorageError(error, "remove", path);
        }
      }).then(changed(path));
    },

    async sync(path: string): Promise<void> {
      const file = toFile(path);
      return serialize(path, async () => {
        if (durablyWritten.delete(path)) return;
        try {
          const cached = appendHandles.get(path);
          if (cached) return await cached.sync();
          const handle = await open(file, "r+");
          try {
            await handle.sync();
          } finally {
            await handle.close();
          }
        } catch (error) {
          throw toStorageError(error, "sync", path);
        }
      });
    },

    async acquireLock(key: string): Promise<StorageLock> {
      const lockFile = `${toFile(key)}.lock`;
      try {
        await mkdir(nodePath.dirname(lockFile), { recursive: true });
        return await tryAcquire(key, lockFile, true);
      } catch (error) {
        throw toStorageError(error, "lock", key);
      }
    },

    async watch(dir: string, onChange: (path: string) => void): Promise<StorageWatch> {
      checkStoragePath(dir, { allowRoot: true });
      const tree = await watchTree(root, dir, onChange, {
        mode: options.watchMode ?? "auto",
        pollIntervalMs: options.pollIntervalMs ?? DEFAULT_POLL_INTERVAL_MS,
        ignore: (name) => TEMP_FILE.test(name),
      });
      return ownChanges.add(dir, onChange, () => tree.close());
    },

    async close(): Promise<void> {
      const paths = [...appendHandles.keys()];
      await Promise.all(paths.map((path) => serialize(path, () => dropAppendHandle(path)).catch(ignore)));
    },
  };
}

/** "~" and "~/…" name the home directory; other paths are returned as they are. */
export function expandHome(path: string): string {
  return path === "~" || path.startsWith("~/") ? nodePath.join(os.homedir(), path.slice(2)) : path;
}

async function createExclusive(file: string, text: string): Promise<void> {
  const handle = await open(file, "wx");
  try {
    await handle.writeFile(text);
  } finally {
    await handle.close();
  }
}

async function readText(file: string): Promise<string> {
  const handle = await open(file, "r");
  try {
    return await handle.readFile("utf8");
  } finally {
    await handle.close();
  }
}

function parseLockOwner(text: string): LockOwner | null {
  try {
    const value: unknown = JSON.parse(text);
    if (typeof value !== "object" || value === null) return null;
    const { pid, hostname, acquiredAt, startTime, bootId } = value as Record<string, unknown>;
    if (!Number.isSafeInteger(pid) || (pid as number) <= 0 || typeof hostname !== "string") return null;
    return {
      pid: pid as number,
      hostname,
      acquiredAt: typeof acquiredAt === "string" ? acquiredAt : "",
      ...(Number.isSafeInteger(startTime) ? { startTime: startTime as number } : {}),
      ...(typeof bootId === "string" ? { bootId } : {}),
    };
  } catch {
    return null;
  }
}

/**
 * Whether the owner of a lock taken on this host is dead: its pid is gone, the host booted since,
 * or the pid now names a process that started at another time (a reused pid). Lock files without
 * a start time (older ones, other platforms) are judged by the pid alone.
 */
async function ownerIsGone(owner: LockOwner): Promise<boolean> {
  if (!isProcessAlive(owner.pid)) return true;
  if (owner.startTime === undefined || owner.bootId === undefined) return false;
  const now = await processIdentity(owner.pid);
  if (now.bootId === undefined) return false;
  if (now.bootId !== owner.bootId) return true;
  // The pid's process may have exited between the two looks: no start time then, and it is gone.
  return now.startTime !== owner.startTime;
}

/** Linux: a process's start time and the boot it counts from; nothing elsewhere (or when unreadable). */
async function processIdentity(pid: number): Promise<{ startTime?: number; bootId?: string }> {
  let bootId: string;
  try {
    bootId = (await readFile("/proc/sys/kernel/random/boot_id", "utf8")).trim();
  } catch {
    return {};
  }
  try {
    const startTime = parseStartTime(await readFile(`/proc/${pid}/stat`, "utf8"));
    return startTime === undefined ? { bootId } : { startTime, bootId };
  } catch {
    return { bootId };
  }
}

/**
 * Field 22 (starttime) of a /proc/<pid>/stat line. Field 2 is the command name in parentheses and
 * may itself hold spaces and parentheses, so fields are counted from the last ")".
 */
function parseStartTime(stat: string): number | undefined {
  const fields = stat.slice(stat.lastIndexOf(")") + 2).split(" ");
  const value = Number(fields[22 - 3]);
  return Number.isSafeInteger(value) && value >= 0 ? value : undefined;
}

function isProcessAlive(pid: number): boolean {
  try {
    process.kill(pid, 0);
    return true;
  } catch (error) {
    // EPERM: the process exists but belongs to another user.
    return errorCode(error) !== "ESRCH";
  }
}

/**
 * Makes directories `mkdir -p` just created durable in their parents (`first` is the outermost
 * one it created, as `mkdir` returns it; `dir` the innermost, which its caller syncs itself).
 */
async function syncNewDirectories(first: string | undefined, dir: string): Promise<void> {
  if (first === undefined) return;
  const parents: string[] = [];
  for (let created = dir; ; created = nodePath.dirname(created)) {
    parents.push(nodePath.dirname(created));
    if (created === first || nodePath.dirname(created) === created) break;
  }
  for (const parent of parents) await syncDirectory(parent);
}

/** Makes a rename durable; some platforms (Windows) cannot open a directory, so best effort. */
async function syncDirectory(dir: string): Promise<void> {
  try {
    const handle = await open(dir, "r");
    try {
      await handle.sync();
    } finally {
      await handle.close();
    }
  } catch {
    // The rename itself succeeded; only its durability across a crash is not guaranteed here.
  }
}

async function unlinkIfPresent(file: string): Promise<void> {
  try {
    await unlink(file);
  } catch (error) {
    if (errorCode(error) !== "ENOENT") throw error;
  }
}

function errorCode(error: unknown): string | undefined {
  return typeof error === "object" && error !== null && "code" in error && typeof error.code === "string"
    ? error.code
    : undefined;
}

function isMissing(error: unknown): boolean {
  const code = errorCode(error);
  return code === "ENOENT" || code === "ENOTDIR";
}

function toStorageError(error: unknown, action: string, path: string): StorageError {
  if (error instanceof StorageError) return error;
  const code = errorCode(error);
  // EEXIST only means "locked" for lock files, and tryAcquire reports that itself.
  const kind = code === "ENOENT" ? "not-found" : code === "ENOSPC" || code === "EDQUOT" ? "quota" : "io";
  const reason = error instanceof Error ? error.message : String(error);
  return new StorageError(kind, `cannot ${action} ${JSON.stringify(path)}: ${reason}`, { path, cause: error });
}

function ignore(): void {}

export { terminalId, nodeTerminalBreadcrumb, type NodeTerminalBreadcrumb, type TerminalEnvironment } from "./terminal.js";
export { nodeArchiveCodecs, nodeCrc32, nodeDeflateSession, nodeInflateRaw, nodeSha256 } from "./archive-codecs.js";
