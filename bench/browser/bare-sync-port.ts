/**
 * The appends' OPFS floor behind a StoragePort, for the bench's worker: one sync access handle per
 * file in one flat directory, an append is a write at the file's end, a sync is flush(); no path
 * checks, no queue, no locks, no change notifications. SessionManager on it shows what
 * SessionManager itself adds to the floor, apart from anything sessionkit's OPFS port does. Only
 * what the append workload calls is faithful.
 */
import type { SyncAccessHandle } from "../../adapters/opfs/directories.js";
import { clampByteRange, type ByteRange, type DirEntry, type FileStat, type StoragePort } from "../../src/port.js";

interface OpenFile {
  access: SyncAccessHandle;
  size: number;
}

export function bareSyncHandlePort(dir: FileSystemDirectoryHandle): StoragePort & { close(): Promise<void> } {
  const files = new Map<string, OpenFile>();
  const open = async (path: string): Promise<OpenFile> => {
    let file = files.get(path);
    if (!file) {
      const handle = (await dir.getFileHandle(path.replaceAll("/", "~"), { create: true })) as FileSystemFileHandle & { createSyncAccessHandle(): Promise<SyncAccessHandle> };
      file = { access: await handle.createSyncAccessHandle(), size: 0 };
      files.set(path, file);
    }
    return file;
  };
  return {
    kind: "bare-sync-handle",
    async read(path: string, range?: ByteRange): Promise<Uint8Array | null> {
      const file = files.get(path);
      if (!file) return null;
      const [start, end] = clampByteRange(range, file.size);
      const out = new Uint8Array(end - start);
      file.access.read(out, { at: start });
      return out;
    },
    async stat(path: string): Promise<FileStat | null> {
      const file = files.get(path);
      return file ? { size: file.size, mtimeMs: 0 } : null;
    },
    async list(): Promise<DirEntry[]> {
      return [];
    },
    async append(path: string, data: Uint8Array): Promise<void> {
      const file = files.get(path) ?? (await open(path));
      file.access.write(data, { at: file.size });
      file.size += data.length;
    },
    async write(path: string, data: Uint8Array): Promise<void> {
      const file = await open(path);
      file.access.truncate(0);
      file.access.write(data, { at: 0 });
      file.access.flush();
      file.size = data.length;
    },
    async truncate(path: string, size: number): Promise<void> {
      const file = await open(path);
      file.access.truncate(size);
      file.size = size;
    },
    async remove(path: string): Promise<void> {
      files.get(path)?.access.close();
      files.delete(path);
      await dir.removeEntry(path.replaceAll("/", "~")).catch(() => {});
    },
    async sync(path: string): Promise<void> {
      files.get(path)?.access.flush();
    },
    async close(): Promise<void> {
      for (const file of files.values()) file.access.close();
      files.clear();
    },
  };
}
