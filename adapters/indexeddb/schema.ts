/**
 * The database's layout: a `files` store of one FileMeta per file (key path "path"), and a
 * `chunks` store of the bytes as Uint8Array records under the out-of-line key [path, offset], the
 * offset being the record's first byte in the file; plus the key ranges and the range read that
 * layout gives (docs/DESIGN.md §2, "IndexedDB").
 */
import { wrap, type DBSchema, type IDBPDatabase, type IDBPTransaction } from "idb";
import { StorageError, parentDir } from "../../src/port.js";
import { collisionError, type InTheWay } from "../kit/collision.js";

/** Per-file metadata in the `files` store. */
export interface FileMeta {
  /** The file's storage path (the store's key). */
  path: string;
  /** The file's length in bytes. */
  size: number;
  /** Number of records in `chunks` for this file. */
  chunkCount: number;
  /** Starting offset of the last chunk (0 when there is none). */
  lastChunkOffset: number;
  /**
   * Where the trailing small records that appends added one each begin (`size` when there are
   * none); they are merged into one record once they reach TAIL_MERGE_BYTES. Absent in records
   * written before this field existed: read as `size`.
   */
  tailOffset?: number;
  /** Last modification, in milliseconds since the epoch. */
  mtimeMs: number;
}

type ChunkKey = [path: string, offset: number];

interface StorageSchema extends DBSchema {
  files: { key: string; value: FileMeta };
  chunks: { key: ChunkKey; value: Uint8Array };
}

export type Database = IDBPDatabase<StorageSchema>;
export type Transaction<Mode extends IDBTransactionMode = IDBTransactionMode> = IDBPTransaction<StorageSchema, ["files", "chunks"], Mode>;
export type Durability = "relaxed" | "strict";

/** Largest chunk record: writes and large appends are cut into records of this size. */
export const CHUNK_BYTES = 1 << 20;

/** A file's trailing small records are merged once they hold this much, when the file is idle. */
export const TAIL_MERGE_BYTES = 64 << 10;

/** An append merges the trailing small records itself before they would pass this. */
export const TAIL_LIMIT_BYTES = 16 << 20;

/** Creates the stores a database lacks (in its upgrade transaction). */
export function createStores(db: IDBDatabase): void {
  if (!db.objectStoreNames.contains("files")) db.createObjectStore("files", { keyPath: "path" });
  if (!db.objectStoreNames.contains("chunks")) db.createObjectStore("chunks");
}

export function hasStores(db: Database): boolean {
  return db.objectStoreNames.contains("files") && db.objectStoreNames.contains("chunks");
}

/** idb's promise API over a raw transaction of our two stores. */
export function withPromises<Mode extends IDBTransactionMode>(tx: IDBTransaction): Transaction<Mode> {
  const wrapped = wrap(tx) as unknown as Transaction<Mode>;
  // idb makes a `done` of its own for the transaction; an abort is reported through ours
  // (transactionDone), so idb's must not go unhandled.
  wrapped.done.catch(() => {});
  return wrapped;
}

/** Keys of `chunks` for one file from byte `from` (inclusive) to `to` (exclusive). */
export function chunkKeys(path: string, from: number, to = Infinity): IDBKeyRange {
  return IDBKeyRange.bound([path, from], [path, to], false, true);
}

/** Keys of `files` strictly below a directory: "dir/" ≤ key < "dir0" ("0" follows "/"). */
export function pathsBelow(dir: string): IDBKeyRange {
  return IDBKeyRange.bound(`${dir}/`, `${dir}0`, false, true);
}

/** What keeps `path` from being a file: a file at one of its parent paths, or files below it (a directory). */
async function inTheWay(tx: Transaction, path: string): Promise<InTheWay | undefined> {
  const files = tx.objectStore("files");
  for (let dir = parentDir(path); dir !== ""; dir = parentDir(dir)) {
    if ((await files.getKey(dir)) !== undefined) return { path: dir, kind: "file" };
  }
  if ((await files.getKey(pathsBelow(path))) !== undefined) return { path, kind: "dir" };
  return undefined;
}

/** Fails with "collision" when `path` cannot be a file (the rules of a real file system): for a new file, and a remove of a missing one. */
export async function checkNewFile(tx: Transaction, path: string, action = "create file"): Promise<void> {
  const blocker = await inTheWay(tx, path);
  if (blocker) throw collisionError(action, path, blocker);
}

/** The error of `action` on a file that is not there: "collision" when something is in the way, else "not-found". */
export async function noFile(tx: Transaction, action: string, path: string): Promise<StorageError> {
  await checkNewFile(tx, path, action);
  return new StorageError("not-found", `cannot ${action} ${JSON.stringify(path)}: no such file`, { path });
}

/** Reads bytes [start, end) of a file (start < end ≤ size), loading only the chunks they overlap. */
export async function readBytes(tx: Transaction, meta: FileMeta, start: number, end: number): Promise<Uint8Array> {
  const { path } = meta;
  const chunks = tx.objectStore("chunks");
  // The chunk holding byte `start` is the last one starting at or before it.
  const first = await chunks.openKeyCursor(IDBKeyRange.bound([path, 0], [path, start]), "prev");
  if (!first) throw corrupt(path, `no chunk holds byte ${start}`);
  const firstOffset = first.key[1];
  const [keys, records] = await Promise.all([
    chunks.getAllKeys(chunkKeys(path, firstOffset, end)),
    chunks.getAll(chunkKeys(path, firstOffset, end)),
  ]);
  const out = new Uint8Array(end - start);
  let offset = firstOffset;
  records.forEach((record, i) => {
    if (keys[i]?.[1] !== offset) throw corrupt(path, `chunk at ${keys[i]?.[1]} where ${offset} was expected`);
    const from = Math.max(start, offset);
    const to = Math.min(end, offset + record.length);
    if (to > from) out.set(record.subarray(from - offset, to - offset), from - start);
    offset += record.length;
  });
  if (offset < end) throw corrupt(path, `chunks end at byte ${offset} of ${meta.size}`);
  return out;
}

export function corrupt(path: string, detail: string): StorageError {
  return new StorageError("corrupt", `IndexedDB chunks of ${JSON.stringify(path)} are inconsistent: ${detail}`, { path });
}
