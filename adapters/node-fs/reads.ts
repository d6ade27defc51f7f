/** The port's reads of real files: a byte range, a file's size and mtime, a directory's entries. */
import { constants } from "node:fs";
import { lstat, readdir, type FileHandle } from "node:fs/promises";
import nodePath from "node:path";
import { checkByteRange, clampByteRange, type ByteRange, type DirEntry, type FileStat } from "../../src/port.js";
import { isTempFile } from "./durable-writes.js";
import { isMissing, toStorageError } from "./errors.js";
import { linkRefused, openNoFollow, type StorageRoot } from "./paths.js";

/** The bytes of storage path `path` in `range`, clamped to its end; null when there is no such file. */
export async function readRange(paths: StorageRoot, path: string, range?: ByteRange): Promise<Uint8Array | null> {
  checkByteRange(path, range);
  let handle: FileHandle;
  try {
    const file = await paths.existingFile(path, "read");
    if (file === null) return null;
    handle = await openNoFollow(file, constants.O_RDONLY, "read", path);
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
}

/** Size and mtime of storage path `path`; null when it is not there or not a file. */
export async function statFile(paths: StorageRoot, path: string): Promise<FileStat | null> {
  try {
    const file = await paths.existingFile(path, "stat");
    if (file === null) return null;
    const info = await lstat(file);
    if (info.isSymbolicLink()) throw linkRefused("stat", path);
    return info.isFile() ? { size: info.size, mtimeMs: info.mtimeMs } : null;
  } catch (error) {
    if (isMissing(error)) return null;
    throw toStorageError(error, "stat", path);
  }
}

/**
 * The files and directories in storage directory `dir`, by name, without temp files and links
 * (never followed, so not listed); [] when it is not there.
 */
export async function listDirectory(paths: StorageRoot, dir: string): Promise<DirEntry[]> {
  try {
    const dirPath = await paths.existingDir(dir, "list");
    if (dirPath === null) return [];
    const names = (await readdir(dirPath)).filter((name) => !isTempFile(name)).sort();
    const entries = await Promise.all(
      names.map(async (name): Promise<DirEntry | null> => {
        try {
          const info = await lstat(nodePath.join(dirPath, name));
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
}
