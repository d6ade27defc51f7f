/** The port's reads of real files: a byte range, a file's size and mtime, a directory's entries. */
import { open, readdir, stat, type FileHandle } from "node:fs/promises";
import nodePath from "node:path";
import { checkByteRange, clampByteRange, type ByteRange, type DirEntry, type FileStat } from "../../src/port.js";
import { isTempFile } from "./durable-writes.js";
import { isMissing, toStorageError } from "./errors.js";

/** The bytes of `file` (storage path `path`) in `range`, clamped to its end; null when there is no such file. */
export async function readRange(path: string, file: string, range?: ByteRange): Promise<Uint8Array | null> {
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
}

/** Size and mtime of `file`; null when it is not there or not a file. */
export async function statFile(path: string, file: string): Promise<FileStat | null> {
  try {
    const info = await stat(file);
    return info.isFile() ? { size: info.size, mtimeMs: info.mtimeMs } : null;
  } catch (error) {
    if (isMissing(error)) return null;
    throw toStorageError(error, "stat", path);
  }
}

/** The files and directories in `dirPath` (storage directory `dir`), by name, without temp files; [] when it is not there. */
export async function listDirectory(dir: string, dirPath: string): Promise<DirEntry[]> {
  try {
    const names = (await readdir(dirPath)).filter((name) => !isTempFile(name)).sort();
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
}
