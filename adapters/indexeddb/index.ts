/**
 * IndexedDB StoragePort (on `idb`): appends stay O(appended bytes) however large a file grows.
 *
 * Layout, in one database:
 * - `files`  (key path "path"): one FileMeta per file. `list` and `stat` read only this store;
 *   directories are implicit in the paths.
 * - `chunks` (out-of-line key [path, offset]): the file's bytes as Uint8Array records. The key's
 *   second part is the chunk's starting byte offset (the "seq" of DESIGN.md §2: unique and
 *   increasing per file), so the chunk holding any byte is one reverse key-cursor step away
 *   (O(log n) in the B-tree) and a range read fetches exactly the chunks it overlaps (O(range)),
 *   with no per-chunk index to maintain.
 *
 * Chunks are at most CHUNK_BYTES (1 MiB). A small append tops up the file's last chunk while that
 * stays within TOP_UP_BYTES (64 KiB): a bounded read-modify-write of one record, never of the
 * file, which keeps a session written line by line at ~16 records per MiB instead of one per
 * line (whole-file reads cost per record). Larger appends add records of their own.
 *
 * Every mutation (append, write, truncate, remove) joins a batch; a batch is committed in one
 * readwrite transaction once its turn comes (at the latest one microtask later), so appends
 * issued together (`Promise.all`, a burst of entries) cost one transaction, and consecutive
 * appends to one file are applied as one. Transactions are created in call order, which
 * IndexedDB turns into execution order; each caller's promise settles with its batch's
 * `tx.done`. A quota failure aborts the whole batch: nothing of it lands and every caller in it
 * gets StorageError "quota".
 *
 * Durability: transactions are "relaxed" by default (the browser acknowledges once the OS has
 * the bytes); `sync(path)` commits a "strict" transaction that re-puts the file's metadata.
 * IndexedDB commits in order and a strict commit flushes everything before it, so once `sync`
 * resolves every earlier write of this connection is on disk.
 */
import { wrap, type DBSchema, type IDBPDatabase, type IDBPTransaction } from "idb";
import {
  StorageError,
  checkStoragePath,
  parentDir,
  type ByteRange,
  type DirEntry,
  type FileStat,
  type StorageLock,
  type StoragePort,
} from "../../src/port.js";
import { checkByteRange, clampByteRange } from "../byte-range.js";
import { listChildren } from "../flat-listing.js";
import { domErrorName, toStorageError } from "../dom-errors.js";
import { acquireWebLock } from "../web-locks.js";

export interface IndexedDbStorageOptions {
  /** Database name; default "sessionkit". */
  dbName?: string;
  /** Durability of ordinary transactions; default "relaxed". `sync()` is always "strict". */
  durability?: "relaxed" | "strict";
  /**
   * The IndexedDB to use; default `globalThis.indexedDB`. Pass a storage bucket's
   * (`(await navigator.storageBuckets.open(name, policy)).indexedDB`) to keep sessions under that
   * bucket's quota and eviction policy, or fake-indexeddb's factory under Node.
   */
  indexedDB?: IDBFactory;
}

export type IndexedDbStorage = StoragePort & {
  readonly kind: "indexeddb";
  sync(path: string): Promise<void>;
  acquireLock(key: string): Promise<StorageLock>;
  close(): Promise<void>;
};

/** Per-file metadata in the `files` store. */
export interface FileMeta {
  path: string;
  size: number;
  /** Number of records in `chunks` for this file. */
  chunkCount: number;
  /** Starting offset of the last chunk (0 when there is none): where small appends top up. */
  lastChunkOffset: number;
  mtimeMs: number;
}

type ChunkKey = [path: string, offset: number];

interface StorageSchema extends DBSchema {
  files: { key: string; value: FileMeta };
  chunks: { key: ChunkKey; value: Uint8Array };
}

type Database = IDBPDatabase<StorageSchema>;
type Transaction<Mode extends IDBTransactionMode = IDBTransactionMode> = IDBPTransaction<StorageSchema, ["files", "chunks"], Mode>;
type WriteTransaction = Transaction<"readwrite">;

const DEFAULT_DB_NAME = "sessionkit";

/** Largest chunk record: writes and large appends are cut into records of this size. */
export const CHUNK_BYTES = 1 << 20;

/** An append tops up the last chunk instead of adding a record while that chunk stays this small. */
export const TOP_UP_BYTES = 64 << 10;

export function indexedDbStorage(options?: IndexedDbStorageOptions): IndexedDbStorage {
  return new IndexedDbPort(options?.indexedDB, options?.dbName ?? DEFAULT_DB_NAME, options?.durability ?? "relaxed");
}

type Mutation =
  | { kind: "append"; path: string; data: Uint8Array }
  | { kind: "write"; path: string; data: Uint8Array }
  | { kind: "truncate"; path: string; size: number }
  | { kind: "remove"; path: string };

interface QueuedMutation {
  mutation: Mutation;
  resolve: () => void;
  reject: (error: unknown) => void;
}

/** One step of a batch: a mutation, or several appends to one file merged into one. */
interface BatchStep {
  mutation: Mutation;
  callers: QueuedMutation[];
}

/** A place in the order of transaction creation. */
interface Turn {
  /** Resolves once every earlier operation has created its transaction. */
  ready: Promise<void>;
  /** Lets the next operation create its transaction. */
  pass: () => void;
}

class IndexedDbPort implements IndexedDbStorage {
  readonly kind = "indexeddb";
  private opening: Promise<Database> | undefined;
  /** The open connection; unset when another tab's upgrade or the browser closed it. */
  private live: Database | undefined;
  private lastTurn: Promise<void> = Promise.resolve();
  /** The batch still accepting mutations, if any. */
  private batch: QueuedMutation[] | undefined;

  constructor(
    private readonly factory: IDBFactory | undefined,
    private readonly dbName: string,
    private readonly durability: "relaxed" | "strict",
  ) {}

  async read(path: string, range?: ByteRange): Promise<Uint8Array | null> {
    checkStoragePath(path);
    checkByteRange(path, range);
    return this.run(this.takeTurn(), "readonly", this.durability, `read ${path}`, path, async (tx) => {
      const meta = await tx.objectStore("files").get(path);
      if (!meta) return null;
      const [start, end] = clampByteRange(range, meta.size);
      return start === end ? new Uint8Array(0) : readBytes(tx, meta, start, end);
    });
  }

  async stat(path: string): Promise<FileStat | null> {
    checkStoragePath(path);
    const meta = await this.run(this.takeTurn(), "readonly", this.durability, `stat ${path}`, path, (tx) => tx.objectStore("files").get(path));
    return meta ? { size: meta.size, mtimeMs: meta.mtimeMs } : null;
  }

  async list(dir: string): Promise<DirEntry[]> {
    checkStoragePath(dir, { allowRoot: true });
    const metas = await this.run(this.takeTurn(), "readonly", this.durability, `list ${dir}`, dir, (tx) =>
      tx.objectStore("files").getAll(dir === "" ? undefined : pathsBelow(dir)),
    );
    return listChildren(dir, metas);
  }

  async append(path: string, data: Uint8Array): Promise<void> {
    checkStoragePath(path);
    // A copy: the caller may reuse its buffer, and a view would store its whole ArrayBuffer.
    return this.enqueue({ kind: "append", path, data: data.slice() });
  }

  async write(path: string, data: Uint8Array): Promise<void> {
    checkStoragePath(path);
    return this.enqueue({ kind: "write", path, data: data.slice() });
  }

  async truncate(path: string, size: number): Promise<void> {
    checkStoragePath(path);
    return this.enqueue({ kind: "truncate", path, size });
  }

  async remove(path: string): Promise<void> {
    checkStoragePath(path);
    return this.enqueue({ kind: "remove", path });
  }

  async sync(path: string): Promise<void> {
    checkStoragePath(path);
    await this.run(this.takeTurn(), "readwrite", "strict", `sync ${path}`, path, async (tx) => {
      const files = tx.objectStore("files");
      const meta = await files.get(path);
      if (!meta) throw new StorageError("not-found", `cannot sync ${JSON.stringify(path)}: no such file`, { path });
      await files.put(meta);
    });
  }

  async acquireLock(key: string): Promise<StorageLock> {
    checkStoragePath(key);
    return acquireWebLock(`sessionkit:indexeddb:${this.dbName}:${key}`, key);
  }

  /** Closes the connection once issued operations are under way; a later call reopens it. */
  async close(): Promise<void> {
    const turn = this.takeTurn();
    await turn.ready;
    turn.pass();
    // IDBDatabase.close() lets running transactions finish, so no caller loses its write.
    this.live?.close();
    this.forget(this.live);
  }

  /** Queues a mutation into the open batch, starting one (with its own turn) if needed. */
  private enqueue(mutation: Mutation): Promise<void> {
    return new Promise<void>((resolve, reject) => {
      const queued = { mutation, resolve, reject };
      if (this.batch) {
        this.batch.push(queued);
        return;
      }
      const batch = [queued];
      const turn = this.takeTurn();
      this.batch = batch;
      const closeBatch = () => {
        if (this.batch === batch) this.batch = undefined;
      };
      this.run(turn, "readwrite", this.durability, "write transaction", mutation.path, (tx) => applyBatch(tx, batch), closeBatch).then(
        (failures) => batch.forEach((caller, i) => (failures[i] ? caller.reject(failures[i]) : caller.resolve())),
        (error: unknown) => batch.forEach((caller) => caller.reject(callerError(caller.mutation, error))),
      );
    });
  }

  /**
   * Runs `body` in a transaction over both stores and resolves after the transaction completes.
   * Transactions are created in call order (see Turn). When the connection was dropped (closed
   * for another tab's upgrade, or by the browser), it reopens and retries once; the retried
   * transaction may then run after operations issued later.
   */
  private async run<Mode extends IDBTransactionMode, T>(
    turn: Turn,
    mode: Mode,
    durability: "relaxed" | "strict",
    action: string,
    path: string,
    body: (tx: Transaction<Mode>) => Promise<T>,
    onTurn?: () => void,
  ): Promise<T> {
    let passed = false;
    const pass = () => {
      if (!passed) turn.pass();
      passed = true;
    };
    try {
      await turn.ready;
      onTurn?.();
      for (let attempt = 1; ; attempt++) {
        const db = await this.connection();
        let tx: Transaction<Mode>;
        try {
          tx = db.transaction(["files", "chunks"], mode, { durability });
        } catch (error) {
          // InvalidStateError: the connection closed under us (versionchange, browser).
          this.forget(db);
          if (attempt === 1 && domErrorName(error) === "InvalidStateError") continue;
          throw toStorageError(error, `indexeddb ${action}`, path);
        } finally {
          pass();
        }
        const done = tx.done;
        done.catch(() => {}); // observed below; keeps an abort during `body` from going unhandled
        try {
          const result = await body(tx);
          await done;
          return result;
        } catch (error) {
          abortQuietly(tx);
          if (error instanceof StorageError) throw error;
          if (attempt === 1 && this.live !== db) continue;
          // An abort's reason (QuotaExceededError) is on tx.error; request errors only say AbortError.
          throw toStorageError(tx.error ?? error, `indexeddb ${action}`, path);
        }
      }
    } finally {
      pass();
    }
  }

  /** Takes the next place in transaction-creation order; later mutations start a new batch. */
  private takeTurn(): Turn {
    this.batch = undefined;
    const ready = this.lastTurn;
    let pass: () => void = () => {};
    this.lastTurn = new Promise<void>((resolve) => (pass = resolve));
    return { ready, pass };
  }

  private connection(): Promise<Database> {
    this.opening ??= this.open().catch((error: unknown) => {
      this.opening = undefined;
      throw toStorageError(error, `opening IndexedDB database ${JSON.stringify(this.dbName)}`);
    });
    return this.opening;
  }

  private async open(): Promise<Database> {
    const factory = this.factory ?? globalThis.indexedDB;
    if (factory === undefined) throw new StorageError("unsupported", "IndexedDB is not available here");
    let db = await this.openDatabase(factory, undefined);
    if (!hasStores(db)) {
      // The database exists without our stores (e.g. created by other code): add them.
      const version = db.version + 1;
      db.close();
      db = await this.openDatabase(factory, version);
    }
    this.live = db;
    return db;
  }

  /** Opens (creating or upgrading to `version` when given) and watches the connection. */
  private async openDatabase(factory: IDBFactory, version: number | undefined): Promise<Database> {
    const request = factory.open(this.dbName, version);
    request.addEventListener("upgradeneeded", () => {
      const db = request.result;
      if (!db.objectStoreNames.contains("files")) db.createObjectStore("files", { keyPath: "path" });
      if (!db.objectStoreNames.contains("chunks")) db.createObjectStore("chunks");
    });
    const db = (await wrap(request)) as unknown as Database;
    // Another tab wants to upgrade or delete the database: let it, and reopen on our next operation.
    db.addEventListener("versionchange", () => {
      db.close();
      this.forget(db);
    });
    // The browser closed the connection (storage cleared, IndexedDB backend lost).
    db.addEventListener("close", () => this.forget(db));
    return db;
  }

  /** Drops a connection that is closed or closing, so the next operation reopens. */
  private forget(db: Database | undefined): void {
    if (db === undefined || this.live !== db) return;
    this.live = undefined;
    this.opening = undefined;
  }
}

function hasStores(db: Database): boolean {
  return db.objectStoreNames.contains("files") && db.objectStoreNames.contains("chunks");
}

function abortQuietly(tx: Transaction): void {
  try {
    tx.abort();
  } catch {
    // Already committed or aborted.
  }
}

/** Keys of `chunks` for one file from byte `from` (inclusive) to `to` (exclusive). */
function chunkKeys(path: string, from: number, to = Infinity): IDBKeyRange {
  return IDBKeyRange.bound([path, from], [path, to], false, true);
}

/** Keys of `files` strictly below a directory: "dir/" ≤ key < "dir0" ("0" follows "/"). */
function pathsBelow(dir: string): IDBKeyRange {
  return IDBKeyRange.bound(`${dir}/`, `${dir}0`, false, true);
}

/** Reads bytes [start, end) of a file (start < end ≤ size), loading only the chunks they overlap. */
async function readBytes(tx: Transaction, meta: FileMeta, start: number, end: number): Promise<Uint8Array> {
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

function corrupt(path: string, detail: string): StorageError {
  return new StorageError("corrupt", `IndexedDB chunks of ${JSON.stringify(path)} are inconsistent: ${detail}`, { path });
}

/** A batch's failure as seen by one of its callers: same code, naming the caller's operation. */
function callerError(mutation: Mutation, error: unknown): unknown {
  if (!(error instanceof StorageError)) return error;
  const { kind, path } = mutation;
  return new StorageError(error.code, `${kind} ${JSON.stringify(path)}: ${error.message}`, { path, cause: error });
}

/**
 * Applies a batch in one transaction. Returns, per caller, the StorageError its own mutation
 * failed with (a missing file, a bad size), or undefined; such a mutation changes nothing, so
 * the rest of the batch still commits. Any other failure aborts the whole transaction.
 */
async function applyBatch(tx: WriteTransaction, batch: QueuedMutation[]): Promise<(StorageError | undefined)[]> {
  const failures = new Map<QueuedMutation, StorageError>();
  for (const step of mergeAppends(batch)) {
    try {
      await applyMutation(tx, step.mutation);
    } catch (error) {
      if (!(error instanceof StorageError)) throw error;
      for (const caller of step.callers) failures.set(caller, error);
    }
  }
  return batch.map((caller) => failures.get(caller));
}

/**
 * Merges consecutive appends to one file (with no other mutation of that file between them) into
 * one step, so a burst of appends becomes one chunk record. Mutations of different files are
 * independent, so steps keep per-file order only.
 */
function mergeAppends(batch: QueuedMutation[]): BatchStep[] {
  const steps: (BatchStep & { appended?: Uint8Array[] })[] = [];
  const openAppend = new Map<string, BatchStep & { appended?: Uint8Array[] }>();
  for (const caller of batch) {
    const { mutation } = caller;
    const open = openAppend.get(mutation.path);
    if (mutation.kind === "append" && open?.appended) {
      open.appended.push(mutation.data);
      open.callers.push(caller);
      continue;
    }
    const step = { mutation, callers: [caller], ...(mutation.kind === "append" ? { appended: [mutation.data] } : {}) };
    steps.push(step);
    openAppend.set(mutation.path, step);
  }
  return steps.map(({ mutation, callers, appended }) =>
    appended && appended.length > 1 ? { mutation: { kind: "append", path: mutation.path, data: concat(appended) }, callers } : { mutation, callers },
  );
}

function concat(parts: Uint8Array[]): Uint8Array {
  const out = new Uint8Array(parts.reduce((sum, part) => sum + part.length, 0));
  let offset = 0;
  for (const part of parts) {
    out.set(part, offset);
    offset += part.length;
  }
  return out;
}

async function applyMutation(tx: WriteTransaction, mutation: Mutation): Promise<void> {
  const files = tx.objectStore("files");
  const chunks = tx.objectStore("chunks");
  const { path } = mutation;
  const meta = await files.get(path);
  const now = Date.now();
  switch (mutation.kind) {
    case "append": {
      const file = meta ?? (await newFile(tx, path));
      const { data } = mutation;
      const size = file.size + data.length;
      const lastChunkBytes = file.size - file.lastChunkOffset;
      if (file.chunkCount > 0 && data.length > 0 && lastChunkBytes + data.length <= TOP_UP_BYTES) {
        const lastKey: ChunkKey = [path, file.lastChunkOffset];
        const last = await chunks.get(lastKey);
        if (last?.length !== lastChunkBytes) throw corrupt(path, `last chunk at ${file.lastChunkOffset} is not ${lastChunkBytes} bytes`);
        await Promise.all([chunks.put(concat([last, data]), lastKey), files.put({ ...file, size, mtimeMs: now })]);
        return;
      }
      const added = addChunks(tx, path, file.size, data);
      const lastChunkOffset = added.lastOffset ?? file.lastChunkOffset;
      const chunkCount = file.chunkCount + added.requests.length;
      await Promise.all([...added.requests, files.put({ ...file, size, chunkCount, lastChunkOffset, mtimeMs: now })]);
      return;
    }
    case "write": {
      if (!meta) await newFile(tx, path);
      const deleted = chunks.delete(chunkKeys(path, 0));
      const added = addChunks(tx, path, 0, mutation.data);
      const written = { path, size: mutation.data.length, chunkCount: added.requests.length, lastChunkOffset: added.lastOffset ?? 0, mtimeMs: now };
      await Promise.all([deleted, ...added.requests, files.put(written)]);
      return;
    }
    case "truncate": {
      const { size } = mutation;
      if (!meta) throw new StorageError("not-found", `cannot truncate ${JSON.stringify(path)}: no such file`, { path });
      if (!Number.isSafeInteger(size) || size < 0 || size > meta.size) {
        throw new StorageError("invalid", `cannot truncate ${JSON.stringify(path)} (${meta.size} bytes) to ${size} bytes`, { path });
      }
      const dropped = await chunks.count(chunkKeys(path, size));
      await chunks.delete(chunkKeys(path, size));
      // The last remaining chunk may reach past the new end: cut it.
      const last = size > 0 ? await chunks.openCursor(chunkKeys(path, 0, size), "prev") : null;
      if (last && last.key[1] + last.value.length > size) await last.update(last.value.slice(0, size - last.key[1]));
      await files.put({ ...meta, size, chunkCount: meta.chunkCount - dropped, lastChunkOffset: last?.key[1] ?? 0, mtimeMs: now });
      return;
    }
    case "remove": {
      if (!meta) return;
      await Promise.all([chunks.delete(chunkKeys(path, 0)), files.delete(path)]);
      return;
    }
  }
}

/**
 * Adds records of ≤ CHUNK_BYTES for `data` starting at byte `offset`. Returns their requests and
 * the offset of the last one (undefined when `data` is empty).
 */
function addChunks(tx: WriteTransaction, path: string, offset: number, data: Uint8Array): { requests: Promise<ChunkKey>[]; lastOffset?: number } {
  const chunks = tx.objectStore("chunks");
  const requests: Promise<ChunkKey>[] = [];
  let lastOffset: number | undefined;
  for (let at = 0; at < data.length; at += CHUNK_BYTES) {
    lastOffset = offset + at;
    // `add`, not `put`: an existing key here would mean the metadata is wrong; fail loudly.
    requests.push(chunks.add(data.slice(at, at + CHUNK_BYTES), [path, lastOffset]));
  }
  return lastOffset === undefined ? { requests } : { requests, lastOffset };
}

/**
 * Metadata for a file about to be created, after checking that no ancestor is a file and the
 * path is not a directory (the same rules as a real file system).
 */
async function newFile(tx: WriteTransaction, path: string): Promise<FileMeta> {
  const files = tx.objectStore("files");
  for (let dir = parentDir(path); dir !== ""; dir = parentDir(dir)) {
    if ((await files.getKey(dir)) !== undefined) {
      throw new StorageError("io", `cannot create file ${JSON.stringify(path)}: ${JSON.stringify(dir)} is a file`, { path });
    }
  }
  if ((await files.getKey(pathsBelow(path))) !== undefined) {
    throw new StorageError("io", `cannot create file ${JSON.stringify(path)}: it is a directory`, { path });
  }
  return { path, size: 0, chunkCount: 0, lastChunkOffset: 0, mtimeMs: Date.now() };
}
