/**
 * The append handle cache: one open "a" FileHandle per file appended to, so an append is one
 * write (appendFile opens and closes the file every time). At most `MAX_APPEND_HANDLES` stay
 * open; the least recently used one is closed beyond that.
 */
import { constants } from "node:fs";
import type { FileHandle } from "node:fs/promises";
import type { PathQueue } from "../kit/path-queue.js";
import { openNoFollow, type StorageRoot } from "./paths.js";

/** Open append handles kept at once. */
const MAX_APPEND_HANDLES = 32;

/** Every method is to be called inside `queue.run(path, …)`, the queue the handles' files are changed through. */
export class AppendHandles {
  /** path -> open "a" handle; Map order is recency order (oldest first). */
  private readonly handles = new Map<string, FileHandle>();

  constructor(
    private readonly queue: PathQueue,
    private readonly paths: StorageRoot,
  ) {}

  /** Appends all of `data` to storage path `path`, creating the file and its directories. */
  async append(path: string, data: Uint8Array): Promise<void> {
    const handle = await this.handleFor(path);
    let written = 0;
    while (written < data.length) {
      written += (await handle.write(data, written, data.length - written)).bytesWritten;
    }
  }

  /** fsyncs `path` through its open handle; false when it has none. */
  async syncIfOpen(path: string): Promise<boolean> {
    const handle = this.handles.get(path);
    if (!handle) return false;
    await handle.sync();
    return true;
  }

  /** Closes `path`'s handle, before its file is replaced or removed. */
  async drop(path: string): Promise<void> {
    const handle = this.handles.get(path);
    if (!handle) return;
    this.handles.delete(path);
    await handle.close();
  }

  /** The paths that have a handle open. */
  openPaths(): string[] {
    return [...this.handles.keys()];
  }

  /** A handle stays on its file's inode: a directory renamed or replaced by a link later does not move it. */
  private async handleFor(path: string): Promise<FileHandle> {
    const cached = this.handles.get(path);
    if (cached) {
      this.handles.delete(path);
      this.handles.set(path, cached);
      return cached;
    }
    const { file } = await this.paths.fileToCreate(path, "append to");
    const handle = await openNoFollow(file, constants.O_WRONLY | constants.O_CREAT | constants.O_APPEND, "append to", path);
    this.handles.set(path, handle);
    for (const [evictedPath, evicted] of this.handles) {
      if (this.handles.size <= MAX_APPEND_HANDLES) break;
      this.handles.delete(evictedPath);
      // Closed through its own path's queue, so an append in flight on it finishes first.
      void this.queue.run(evictedPath, () => evicted.close()).catch(() => {});
    }
    return handle;
  }
}
