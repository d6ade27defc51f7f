/**
 * Finding files and directories in the OPFS: the port's directory below the OPFS root (in the
 * origin's storage or a storage bucket), with directory handles remembered by path so that
 * reaching a file need not walk from the root.
 */
import { StorageError, baseName, parentDir } from "../../src/port.js";
import type { InTheWay } from "../kit/collision.js";
import { domErrorName } from "../kit/dom-errors.js";

/** FileSystemSyncAccessHandle (worker-only, so missing from TypeScript's DOM lib). */
export interface SyncAccessHandle {
  read(buffer: Uint8Array, options?: { at?: number }): number;
  write(buffer: Uint8Array, options?: { at?: number }): number;
  truncate(size: number): void;
  getSize(): number;
  flush(): void;
  close(): void;
}

export type FileHandle = FileSystemFileHandle & {
  createSyncAccessHandle?(): Promise<SyncAccessHandle>;
  move?(destination: FileSystemDirectoryHandle, name: string): Promise<void>;
};

export type DirectoryHandle = FileSystemDirectoryHandle & { values(): AsyncIterable<FileSystemHandle> };

/** Where the files live: the origin's StorageManager, or a storage bucket (same two methods). */
export interface StorageArea {
  getDirectory(): Promise<FileSystemDirectoryHandle>;
  estimate(): Promise<StorageEstimate>;
}

interface StorageBucketManager {
  open(name: string): Promise<StorageArea>;
}

export class OpfsDirectories {
  private rootDir: Promise<DirectoryHandle> | undefined;
  /** Directory handles by path below the root, so that finding a file need not walk from the root. */
  private readonly dirs = new Map<string, DirectoryHandle>();

  /**
   * @param filesDir the directory below the OPFS root that holds the files (OpfsLocation.root)
   * @param bucket a storage bucket's name, or undefined for the origin's storage
   */
  constructor(
    private readonly filesDir: string,
    private readonly bucket: string | undefined,
  ) {}

  async requireFile(path: string): Promise<FileHandle> {
    const file = await this.file(path, false);
    if (!file) throw new StorageError("not-found", `no such file ${JSON.stringify(path)}`, { path });
    return file;
  }

  /**
   * The handle of a file (created with `create`); null if missing. Looks in the remembered
   * directory handle first; a miss there may mean the directory itself was removed (by another
   * tab), so it is confirmed by a walk from the root.
   */
  async file(path: string, create: true): Promise<FileHandle>;
  async file(path: string, create: boolean): Promise<FileHandle | null>;
  async file(path: string, create: boolean): Promise<FileHandle | null> {
    const dirPath = parentDir(path);
    const remembered = this.dirs.get(dirPath);
    if (remembered) {
      const file = await fileIn(remembered, baseName(path), create).catch((error: unknown) => {
        if (domErrorName(error) === "NotFoundError") return null;
        throw error;
      });
      if (file) return file;
      this.forget(dirPath);
    }
    const dir = await this.directory(dirPath, create);
    return dir ? fileIn(dir, baseName(path), create) : null;
  }

  /** The directory at `dir` below the root (creating it with `create`); null if missing. Walks from the root. */
  async directory(dir: string, create: true): Promise<DirectoryHandle>;
  async directory(dir: string, create: boolean): Promise<DirectoryHandle | null>;
  async directory(dir: string, create: boolean): Promise<DirectoryHandle | null> {
    let handle = await this.rootDirectory();
    let walked = "";
    for (const segment of dir === "" ? [] : dir.split("/")) {
      try {
        handle = (await handle.getDirectoryHandle(segment, { create })) as DirectoryHandle;
      } catch (error) {
        // A TypeMismatchError (a file where a directory must be) goes to the port, which names it.
        if (!create && domErrorName(error) === "NotFoundError") return null;
        throw error;
      }
      walked = walked === "" ? segment : `${walked}/${segment}`;
      this.dirs.set(walked, handle);
    }
    return handle;
  }

  /**
   * What keeps `path` from being a file: a file at one of its parent paths, or a directory at it;
   * undefined when nothing does. Walks from the root.
   */
  async inTheWay(path: string): Promise<InTheWay | undefined> {
    let handle: FileSystemDirectoryHandle = await this.rootDirectory();
    const segments = path.split("/");
    for (const [i, segment] of segments.entries()) {
      try {
        handle = await handle.getDirectoryHandle(segment);
      } catch (error) {
        // A TypeMismatchError above the last segment: that one is a file. Else nothing is in the way.
        if (domErrorName(error) === "TypeMismatchError" && i < segments.length - 1) return { path: segments.slice(0, i + 1).join("/"), kind: "file" };
        return undefined;
      }
    }
    return { path, kind: "dir" };
  }

  /** Drops the remembered handles of a directory and everything below it. */
  forget(dir: string): void {
    for (const path of this.dirs.keys()) if (path === dir || path.startsWith(`${dir}/`)) this.dirs.delete(path);
  }

  private rootDirectory(): Promise<DirectoryHandle> {
    this.rootDir ??= (async () => {
      let handle = (await (await this.storageArea()).getDirectory()) as DirectoryHandle;
      for (const segment of this.filesDir === "" ? [] : this.filesDir.split("/")) {
        handle = (await handle.getDirectoryHandle(segment, { create: true })) as DirectoryHandle;
      }
      return handle;
    })().catch((error: unknown) => {
      this.rootDir = undefined;
      throw error;
    });
    return this.rootDir;
  }

  storageArea(): Promise<StorageArea> {
    if (typeof navigator === "undefined" || !navigator.storage?.getDirectory) {
      return Promise.reject(new StorageError("unsupported", "the Origin Private File System is not available here"));
    }
    if (this.bucket === undefined) return Promise.resolve(navigator.storage);
    const buckets = (navigator as Navigator & { storageBuckets?: StorageBucketManager }).storageBuckets;
    if (!buckets) return Promise.reject(new StorageError("unsupported", "storage buckets (navigator.storageBuckets) are not available here"));
    return buckets.open(this.bucket);
  }
}

/** The file `name` in `dir` (created with `create`); null if missing; a TypeMismatchError if it is a directory. */
export async function fileIn(dir: FileSystemDirectoryHandle, name: string, create: true): Promise<FileHandle>;
export async function fileIn(dir: FileSystemDirectoryHandle, name: string, create: boolean): Promise<FileHandle | null>;
export async function fileIn(dir: FileSystemDirectoryHandle, name: string, create: boolean): Promise<FileHandle | null> {
  try {
    return (await dir.getFileHandle(name, { create })) as FileHandle;
  } catch (error) {
    if (!create && domErrorName(error) === "NotFoundError") return null;
    throw error;
  }
}
