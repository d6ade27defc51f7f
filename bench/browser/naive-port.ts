/**
 * The peer: the naive way to keep a growing file in IndexedDB, as ZenFS's IndexedDB backend and
 * pi's web UI do (DESIGN.md §2): the whole file is one record, and every append reads it, extends
 * it and puts it back in one transaction (browser-default durability, no separate sync). Each
 * append costs O(file size), so a session written entry by entry costs O(n²). Only what the
 * bench needs is faithful: `list` shows files, not subdirectories.
 */
import { openDB, type IDBPDatabase } from "idb";
import { parentDir, type ByteRange, type DirEntry, type FileStat, type StoragePort } from "../../src/port.js";

interface FileRecord {
  path: string;
  data: Uint8Array;
  mtimeMs: number;
}

const STORE = "files";

export function wholeFileRewriteStorage(dbName: string): StoragePort & { close(): Promise<void> } {
  let db: Promise<IDBPDatabase> | undefined;
  const connection = () => (db ??= openDB(dbName, 1, { upgrade: (database) => database.createObjectStore(STORE, { keyPath: "path" }) }));

  const get = async (path: string) => (await (await connection()).get(STORE, path)) as FileRecord | undefined;

  /** Reads, changes and puts back one whole file record in one readwrite transaction. */
  async function rewrite(path: string, change: (data: Uint8Array) => Uint8Array): Promise<void> {
    const tx = (await connection()).transaction(STORE, "readwrite");
    const store = tx.objectStore(STORE);
    const record = (await store.get(path)) as FileRecord | undefined;
    await store.put({ path, data: change(record?.data ?? new Uint8Array()), mtimeMs: Date.now() } satisfies FileRecord);
    await tx.done;
  }

  return {
    kind: "naive-indexeddb",
    async read(path: string, range?: ByteRange) {
      const record = await get(path);
      if (!record) return null;
      return range ? record.data.slice(range.offset, range.length === undefined ? undefined : range.offset + range.length) : record.data;
    },
    async stat(path: string): Promise<FileStat | null> {
      const record = await get(path);
      return record ? { size: record.data.length, mtimeMs: record.mtimeMs } : null;
    },
    async list(dir: string): Promise<DirEntry[]> {
      const records = (await (await connection()).getAll(STORE)) as FileRecord[];
      return records
        .filter((record) => parentDir(record.path) === dir)
        .map((record) => ({ name: record.path.slice(dir === "" ? 0 : dir.length + 1), kind: "file", size: record.data.length, mtimeMs: record.mtimeMs }));
    },
    append: (path, data) =>
      rewrite(path, (old) => {
        const out = new Uint8Array(old.length + data.length);
        out.set(old);
        out.set(data, old.length);
        return out;
      }),
    write: (path, data) => rewrite(path, () => data.slice()),
    truncate: (path, size) => rewrite(path, (old) => old.slice(0, size)),
    remove: async (path) => {
      await (await connection()).delete(STORE, path);
    },
    close: async () => {
      (await db)?.close();
      db = undefined;
    },
  };
}
