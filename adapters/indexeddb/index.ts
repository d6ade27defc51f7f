/**
 * IndexedDB StoragePort (on `idb`): a file is a metadata record in `files` and its bytes as chunk
 * records keyed [path, offset] in `chunks` (schema.ts), so an append adds a record and costs only
 * the bytes appended however large the file grows. Mutations are batched into one readwrite
 * transaction per turn, with group commit (writer.ts, batch.ts); the port builds on the metadata
 * it last wrote (metadata-cache.ts) and merges a file's trailing small records once the file is
 * idle (merge.ts). docs/DESIGN.md §2 ("IndexedDB") has the design and its measurements.
 *
 * @module sessionkit/adapters/indexeddb
 */
import {
  checkByteRange,
  checkStoragePath,
  clampByteRange,
  listChildren,
  writeFilesThenSync,
  type ByteRange,
  type DirEntry,
  type FileStat,
  type FileToWrite,
  type StorageLock,
  type FullStoragePort,
  type StorageWatch,
} from "../../src/port.js";
import { BroadcastChanges } from "../kit/broadcast-changes.js";
import { acquireWebLock } from "../kit/web-locks.js";
import { Connection } from "./connection.js";
import { IdleMerges } from "./merge.js";
import { RememberedFiles } from "./metadata-cache.js";
import { noFile, pathsBelow, readBytes, withPromises, type Durability } from "./schema.js";
import { Transactions, type Turn } from "./transactions.js";
import { Writer } from "./writer.js";

export { MERGE_IDLE_MS } from "./merge.js";
export { CHUNK_BYTES, TAIL_LIMIT_BYTES, TAIL_MERGE_BYTES, type FileMeta } from "./schema.js";

/** Options of {@link indexedDbStorage}. */
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
  /**
   * Called when the browser, opening the database, found it corrupt and replaced it with an empty
   * one: everything the database held is gone. Chromium does this (its upgradeneeded event's
   * `dataLoss: "total"`), e.g. after a crash left a torn record in LevelDB's log (docs/DESIGN.md).
   * An app can tell its user, and restore from a copy kept elsewhere.
   */
  onDataLoss?: (loss: IndexedDbDataLoss) => void;
}

/** What the browser said when it replaced a corrupt database with an empty one. */
export interface IndexedDbDataLoss {
  /** The database that was replaced (the port's `dbName`). */
  dbName: string;
  /** The browser's own words, e.g. "IndexedDB (database was corrupt): checksum mismatch". */
  message: string;
}

/**
 * The IndexedDB port: a StoragePort with every optional method. `sync` resolves once the file's
 * changes so far are flushed to disk (a "strict" transaction); a lock is a Web Lock, shared with
 * every tab and worker of the origin (StorageError "locked" when taken); `watch` reports this
 * port's changes at once, those of other tabs, workers and ports of the database over a
 * BroadcastChannel; `close` closes the connection once issued operations (and due merges) are
 * done, and a later call reopens it.
 */
export type IndexedDbStorage = FullStoragePort & {
  /** Always "indexeddb". */
  readonly kind: "indexeddb";
};

const DEFAULT_DB_NAME = "sessionkit";

/**
 * A StoragePort in the browser's IndexedDB (one database, "sessionkit" by default): sessions of
 * any size, appends that cost only the bytes appended, changes seen by every tab of the origin.
 */
export function indexedDbStorage(options?: IndexedDbStorageOptions): IndexedDbStorage {
  return new IndexedDbPort(options?.indexedDB, options?.dbName ?? DEFAULT_DB_NAME, options?.durability ?? "relaxed", options?.onDataLoss);
}

class IndexedDbPort implements IndexedDbStorage {
  readonly kind = "indexeddb";
  private readonly remembered = new RememberedFiles();
  private readonly connection: Connection;
  private readonly transactions: Transactions;
  private readonly writer: Writer;
  private readonly merges: IdleMerges;
  private readonly changes: BroadcastChanges;

  constructor(
    factory: IDBFactory | undefined,
    private readonly dbName: string,
    private readonly durability: Durability,
    onDataLoss: ((loss: IndexedDbDataLoss) => void) | undefined,
  ) {
    // Whatever happens to the database until the port reopens it (even its deletion) is not the port's to know.
    this.connection = new Connection(factory, dbName, () => this.remembered.clear(), onDataLoss && ((message) => onDataLoss({ dbName, message })));
    this.transactions = new Transactions(this.connection, this.remembered);
    this.writer = new Writer(this.transactions, this.remembered, durability, (changed) => {
      // Committed: tell watchers (here and in other tabs) which files changed.
      this.changes.notify(changed.map((operation) => operation.path));
      for (const operation of changed) if (operation.kind === "append") this.merges.appended(operation.path);
    });
    this.merges = new IdleMerges(
      this.remembered,
      () => this.writer.batchOpen,
      (path) => this.writer.enqueue({ kind: "merge", path }),
    );
    this.changes = new BroadcastChanges(`sessionkit:indexeddb:${dbName}`);
  }

  async read(path: string, range?: ByteRange): Promise<Uint8Array | null> {
    checkStoragePath(path);
    checkByteRange(path, range);
    return this.transactions.run(this.takeTurn(), "readonly", () => this.durability, `read ${path}`, path, async (raw) => {
      const tx = withPromises<"readonly">(raw);
      const meta = await tx.objectStore("files").get(path);
      if (!meta) return null;
      const [start, end] = clampByteRange(range, meta.size);
      return start === end ? new Uint8Array(0) : readBytes(tx, meta, start, end);
    });
  }

  async stat(path: string): Promise<FileStat | null> {
    checkStoragePath(path);
    const meta = await this.transactions.run(this.takeTurn(), "readonly", () => this.durability, `stat ${path}`, path, (raw) =>
      withPromises<"readonly">(raw).objectStore("files").get(path),
    );
    return meta ? { size: meta.size, mtimeMs: meta.mtimeMs } : null;
  }

  async list(dir: string): Promise<DirEntry[]> {
    checkStoragePath(dir, { allowRoot: true });
    const metas = await this.transactions.run(this.takeTurn(), "readonly", () => this.durability, `list ${dir}`, dir, (raw) =>
      withPromises<"readonly">(raw).objectStore("files").getAll(dir === "" ? undefined : pathsBelow(dir)),
    );
    return listChildren(dir, metas);
  }

  async append(path: string, data: Uint8Array): Promise<void> {
    checkStoragePath(path);
    // A copy: the caller may reuse its buffer, and a view would store its whole ArrayBuffer.
    return this.writer.enqueue({ kind: "append", path, data: data.slice() });
  }

  async write(path: string, data: Uint8Array): Promise<void> {
    checkStoragePath(path);
    return this.writer.enqueue({ kind: "write", path, data: data.slice() });
  }

  async truncate(path: string, size: number): Promise<void> {
    checkStoragePath(path);
    return this.writer.enqueue({ kind: "truncate", path, size });
  }

  async remove(path: string): Promise<void> {
    checkStoragePath(path);
    return this.writer.enqueue({ kind: "remove", path });
  }

  async sync(path: string): Promise<void> {
    checkStoragePath(path);
    // Issued right after appends (SessionManager's flush): one strict transaction for both.
    if (this.writer.batchOpen) return this.writer.enqueue({ kind: "sync", path });
    await this.transactions.run(this.takeTurn(), "readwrite", () => "strict", `sync ${path}`, path, async (raw) => {
      const tx = withPromises<"readwrite">(raw);
      const files = tx.objectStore("files");
      const meta = await files.get(path);
      if (!meta) throw await noFile(tx, "sync", path);
      await files.put(meta);
    });
  }

  /** Each file written, then synced: the syncs join the writes' batch and make it strict. */
  async writeFiles(files: readonly FileToWrite[]): Promise<void> {
    return writeFilesThenSync(this, files);
  }

  async acquireLock(key: string): Promise<StorageLock> {
    checkStoragePath(key);
    const lock = await acquireWebLock(`sessionkit:indexeddb:${this.dbName}:${key}`, key);
    this.remembered.lockTaken(key);
    let released = false;
    return {
      release: async () => {
        if (!released) this.remembered.lockReleased(key);
        released = true;
        await lock.release();
      },
    };
  }

  watch(dir: string, onChange: (path: string) => void): Promise<StorageWatch> {
    return this.changes.watch(dir, onChange);
  }

  async close(): Promise<void> {
    const merges = this.merges.runAll();
    const turn = this.takeTurn();
    await turn.ready;
    turn.pass();
    // IDBDatabase.close() lets running transactions finish, so no caller loses its write.
    this.connection.close();
    await Promise.allSettled(merges);
  }

  /** Takes the next place in transaction-creation order; later mutations start a new batch. */
  private takeTurn(): Turn {
    this.writer.closeBatch();
    return this.transactions.takeTurn();
  }
}
