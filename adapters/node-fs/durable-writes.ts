/**
 * The port's changes to files: appends through the append handle cache, atomic writes (temp file
 * in the same directory, fsync, rename, directory fsync), truncation, removal and sync, each file's
 * changes in call order. Why each step: docs/DESIGN.md, "node-fs".
 */
import { randomBytes } from "node:crypto";
import { constants } from "node:fs";
import { open, rename } from "node:fs/promises";
import nodePath from "node:path";
import { checkStoragePath, StorageError, type FileToWrite } from "../../src/port.js";
import { AppendHandles } from "./append-handles.js";
import { unlinkIfPresent } from "./errors.js";
import { PathQueue } from "../kit/path-queue.js";
import { openNoFollow, refuseLink, type StorageRoot } from "./paths.js";

const TEMP_FILE = /^\..+\.[0-9a-f]{12}\.tmp$/;

/** Files `writeFiles` writes at once: their fsyncs overlap on the thread pool. */
const FILES_AT_ONCE = 8;

/** Whether a file name is one of an atomic write's temp files (never listed nor reported by watch). */
export function isTempFile(name: string): boolean {
  return TEMP_FILE.test(name);
}

/** A new temp file beside `file`, in the directory its rename stays in: `.<name>.<12 hex digits>.tmp`. */
function tempFileFor(file: string): string {
  return nodePath.join(nodePath.dirname(file), `.${nodePath.basename(file)}.${randomBytes(6).toString("hex")}.tmp`);
}

/** Each method resolves once the change is made; a failure is a StorageError. */
export class DurableWrites {
  private readonly queue = new PathQueue();
  private readonly appendHandles: AppendHandles;
  /**
   * Paths whose last change was a `write`, which fsyncs the file and its directory before it
   * resolves: a `sync` of one has nothing left to do (an import syncs every file it wrote).
   */
  private readonly durablyWritten = new Set<string>();

  constructor(private readonly paths: StorageRoot) {
    this.appendHandles = new AppendHandles(this.queue, paths);
  }

  async append(path: string, data: Uint8Array): Promise<void> {
    checkStoragePath(path);
    return this.queue.run(path, async () => {
      this.durablyWritten.delete(path);
      try {
        await this.appendHandles.append(path, data);
      } catch (error) {
        throw await this.paths.failure(error, "append to", path);
      }
    });
  }

  /**
   * Replaces the file atomically: a crash leaves the old bytes or the new ones, durably. A link
   * there is refused, not replaced.
   */
  async write(path: string, data: Uint8Array): Promise<void> {
    checkStoragePath(path);
    return this.queue.run(path, async () => {
      const dirs = new Set<string>();
      await this.replace(path, data, dirs);
      await Promise.all([...dirs].map(syncDirectory));
      this.durablyWritten.add(path);
    });
  }

  /**
   * Replaces each file as `write` does, FILES_AT_ONCE at a time, but fsyncs each directory once,
   * after the last rename, not once per file: durable together when this resolves. `onWritten`
   * is told each path once its rename is made.
   */
  async writeFiles(files: readonly FileToWrite[], onWritten: (path: string) => void): Promise<void> {
    for (const file of files) checkStoragePath(file.path);
    const dirs = new Set<string>();
    let next = 0;
    let failure: { error: unknown } | undefined;
    const writeInTurn = async (): Promise<void> => {
      while (failure === undefined && next < files.length) {
        const { path, bytes } = files[next++]!;
        try {
          // Asked for outside the queue: the caller reads its bytes while other files are written.
          const data = await bytes();
          await this.queue.run(path, () => this.replace(path, data, dirs));
          onWritten(path);
        } catch (error) {
          failure ??= { error };
        }
      }
    };
    await Promise.all(Array.from({ length: Math.min(FILES_AT_ONCE, files.length) }, writeInTurn));
    if (failure) throw failure.error;
    await Promise.all([...dirs].map(syncDirectory));
  }

  /**
   * Writes `data` to a temp file beside `path`'s file, fsyncs it and renames it over the file:
   * after a crash the file holds the old bytes or the new ones. The rename survives a crash once
   * the directories added to `dirs` are fsynced: the file's, and those `mkdir -p` made new entries in.
   */
  private async replace(path: string, data: Uint8Array, dirs: Set<string>): Promise<void> {
    let temp: string | undefined;
    try {
      const { file, newDirParents } = await this.paths.fileToCreate(path, "write");
      await refuseLink(file, "write", path);
      for (const parent of newDirParents) dirs.add(parent);
      // The append handle points at the inode the rename is about to replace.
      await this.appendHandles.drop(path);
      this.durablyWritten.delete(path);
      temp = tempFileFor(file);
      const handle = await open(temp, "wx");
      try {
        await handle.writeFile(data);
        await handle.sync();
      } finally {
        await handle.close();
      }
      await rename(temp, file);
      dirs.add(nodePath.dirname(file));
    } catch (error) {
      if (temp !== undefined) await unlinkIfPresent(temp).catch(() => {});
      throw await this.paths.failure(error, "write", path);
    }
  }

  /** Cuts the file to `size` bytes, no more than it holds. */
  async truncate(path: string, size: number): Promise<void> {
    checkStoragePath(path);
    return this.queue.run(path, async () => {
      this.durablyWritten.delete(path);
      try {
        const handle = await this.openExisting(path, "truncate");
        try {
          const current = (await handle.stat()).size;
          if (!Number.isSafeInteger(size) || size < 0 || size > current) {
            throw new StorageError("invalid", `cannot truncate ${JSON.stringify(path)} (${current} bytes) to ${size} bytes`, {
              path,
            });
          }
          await handle.truncate(size);
        } finally {
          await handle.close();
        }
      } catch (error) {
        throw await this.paths.failure(error, "truncate", path);
      }
    });
  }

  /** Removes the file; one that is not there is removed already. A link there is refused, not removed. */
  async remove(path: string): Promise<void> {
    checkStoragePath(path);
    return this.queue.run(path, async () => {
      this.durablyWritten.delete(path);
      let file: string | null;
      try {
        file = await this.paths.existingFile(path, "remove");
        await this.appendHandles.drop(path);
        if (file !== null) {
          await refuseLink(file, "remove", path);
          await unlinkIfPresent(file);
        }
      } catch (error) {
        throw await this.paths.failure(error, "remove", path);
      }
      // Its directory is missing: nothing to remove, unless a file is where that directory must be.
      const collision = file === null ? await this.paths.collision("remove", path) : undefined;
      if (collision) throw collision;
    });
  }

  /** fsyncs the file, once every change queued on it before is made. */
  async sync(path: string): Promise<void> {
    checkStoragePath(path);
    return this.queue.run(path, async () => {
      if (this.durablyWritten.delete(path)) return;
      try {
        if (await this.appendHandles.syncIfOpen(path)) return;
        const handle = await this.openExisting(path, "sync");
        try {
          await handle.sync();
        } finally {
          await handle.close();
        }
      } catch (error) {
        throw await this.paths.failure(error, "sync", path);
      }
    });
  }

  /** Opens an existing file for reading and writing; StorageError "not-found" when it is not there. */
  private async openExisting(path: string, action: string) {
    const file = await this.paths.existingFile(path, action);
    if (file === null) throw (await this.paths.collision(action, path)) ?? new StorageError("not-found", `cannot ${action} ${JSON.stringify(path)}: no such file`, { path });
    return openNoFollow(file, constants.O_RDWR, action, path);
  }

  /** Closes the append handles, each once the changes queued on its file are made. */
  async close(): Promise<void> {
    const paths = this.appendHandles.openPaths();
    await Promise.all(paths.map((path) => this.queue.run(path, () => this.appendHandles.drop(path)).catch(() => {})));
  }
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
