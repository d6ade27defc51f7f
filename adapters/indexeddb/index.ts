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
 * Chunks are at most CHUNK_BYTES (1 MiB). A small append adds a record of its own (no read, no
 * rewrite). Once the file's trailing small records (from `tailOffset` on) hold TAIL_MERGE_BYTES
 * (64 KiB) or more, they are merged into records of ≤ CHUNK_BYTES by a transaction of their own
 * when the file has had no write from this port for MERGE_IDLE_MS (or when the port closes): not
 * on a flush's way, where merging cost a flush every 64 KiB about as much as 14 flushes (browser
 * bench: 10k appends 1.30–1.39× the strict-transaction floor with merges inline, 1.15–1.17×
 * without). A writer that never pauses merges inline before its tail would pass TAIL_LIMIT_BYTES
 * (16 MiB, ~4,000 records of a session's size), so reads stay bounded; so does an append of
 * TAIL_MERGE_BYTES or more, which adds records of its own. Each byte is rewritten about once, and
 * a session at rest keeps a record or two per MiB (whole-file reads cost per record).
 *
 * Every mutation (append, write, truncate, remove) joins a batch; a batch is committed in one
 * readwrite transaction once its turn comes (at the latest one microtask later), so appends
 * issued together (`Promise.all`, a burst of entries) cost one transaction, and consecutive
 * appends to one file are applied as one. Transactions are created in call order, which
 * IndexedDB turns into execution order; each caller's promise settles with its batch's
 * `tx.done`. A quota failure aborts the whole batch: nothing of it lands and every caller in it
 * gets StorageError "quota".
 *
 * Metadata: the port remembers the FileMeta it last wrote per file (and the bytes of the file's
 * trailing small records, so merging them needs no read), so an append does not wait for a read.
 * The transaction still gets the stored record, in parallel with the writes built on the
 * remembered one, and compares before it commits: if another tab or port changed the file in
 * between, the transaction is aborted and redone from what is stored, before any later operation
 * of this port starts (the batch keeps its place in the order until the check is done). While the
 * port holds a file's writer lock (`acquireLock(path)`, as SessionManager, import and delete take
 * it before they write), no other writer that keeps to the locks can change it: the check is
 * skipped and the transaction commits as soon as its writes are issued, one request round trip
 * less per flush. What the port remembered of a file is dropped when it takes the lock.
 *
 * Group commit: a write batch stays open until the previous one's transaction has completed, so
 * flushes of several sessions issued while a transaction commits share the next one.
 *
 * Durability: transactions are "relaxed" by default (the browser acknowledges once the OS has
 * the bytes). `sync(path)` issued while a batch is open (as `flush()` issues it, right after its
 * append) joins it and makes that batch's transaction "strict": the bytes and the barrier commit
 * together. Otherwise `sync` commits a "strict" transaction of its own that re-puts the file's
 * metadata. IndexedDB commits in order and a strict commit flushes everything before it, so once
 * `sync` resolves every earlier write of this connection is on disk.
 */
import { unwrap, wrap, type DBSchema, type IDBPDatabase, type IDBPTransaction } from "idb";
import {
  StorageError,
  checkStoragePath,
  parentDir,
  checkByteRange,
  clampByteRange,
  listChildren,
  type ByteRange,
  type DirEntry,
  type FileStat,
  type StorageLock,
  type StoragePort,
  type StorageWatch,
} from "../../src/port.js";
import { BroadcastChanges } from "../broadcast-changes.js";
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
  /** Changes by this port at once; by other tabs, workers and ports of the database over a BroadcastChannel. */
  watch(dir: string, onChange: (path: string) => void): Promise<StorageWatch>;
  close(): Promise<void>;
};

/** Per-file metadata in the `files` store. */
export interface FileMeta {
  path: string;
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
type Durability = "relaxed" | "strict";

const DEFAULT_DB_NAME = "sessionkit";

/** Largest chunk record: writes and large appends are cut into records of this size. */
export const CHUNK_BYTES = 1 << 20;

/** A file's trailing small records are merged once they hold this much, when the file is idle. */
export const TAIL_MERGE_BYTES = 64 << 10;

/** An append merges the trailing small records itself before they would pass this. */
export const TAIL_LIMIT_BYTES = 16 << 20;

/** A file is idle, and its due merge runs, after this long without a write from this port. */
export const MERGE_IDLE_MS = 200;

/** The trailing records' bytes are remembered (so a merge needs no read) up to this much. */
const REMEMBERED_TAIL_BYTES = 1 << 20;

/** Files whose metadata the port remembers (the most recently written). */
const REMEMBERED_FILES = 64;

/** What the port remembers of a file it wrote. */
interface RememberedFile {
  meta: FileMeta;
  /** The file's trailing small records (from `tailOffset` to `size`), one array item each, when known. */
  tail: Uint8Array[] | undefined;
}

/**
 * Per file, what it will be once every transaction this port created has committed, least
 * recently written first: a guess to build on, checked in each transaction against the stored
 * record unless this port holds the file's writer lock.
 */
class RememberedFiles {
  private readonly files = new Map<string, RememberedFile>();
  /** Paths whose writer lock this port holds (Web Locks: one holder per path). */
  private readonly locked = new Set<string>();

  get(path: string): RememberedFile | undefined {
    return this.files.get(path);
  }

  set(path: string, file: RememberedFile): void {
    this.files.delete(path); // re-inserted last: most recently written
    this.files.set(path, file);
    if (this.files.size > REMEMBERED_FILES) this.files.delete(this.files.keys().next().value as string);
  }

  delete(path: string): void {
    this.files.delete(path);
  }

  clear(): void {
    this.files.clear();
  }

  /** No other writer keeping to the locks can change a file whose lock this port holds. */
  trusted(path: string): boolean {
    return this.locked.has(path);
  }

  /** The lock of `path` is held from now on; what was remembered before may be stale. */
  lockTaken(path: string): void {
    this.files.delete(path);
    this.locked.add(path);
  }

  lockReleased(path: string): void {
    this.locked.delete(path);
  }
}

export function indexedDbStorage(options?: IndexedDbStorageOptions): IndexedDbStorage {
  return new IndexedDbPort(options?.indexedDB, options?.dbName ?? DEFAULT_DB_NAME, options?.durability ?? "relaxed");
}

/** What a batch does: the mutations, and `sync` when it joins a batch. */
type BatchOperation =
  | { kind: "append"; path: string; data: Uint8Array }
  | { kind: "write"; path: string; data: Uint8Array }
  | { kind: "truncate"; path: string; size: number }
  | { kind: "remove"; path: string }
  | { kind: "sync"; path: string }
  /** The trailing small records merged (the port's own, when the file is idle): no change of content. */
  | { kind: "merge"; path: string };

interface QueuedOperation {
  operation: BatchOperation;
  resolve: () => void;
  reject: (error: unknown) => void;
}

interface Batch {
  callers: QueuedOperation[];
  /** "strict" once a sync joined. */
  durability: Durability;
}

/** One step of a batch: an operation, or several appends to one file merged into one. */
interface BatchStep {
  operation: BatchOperation;
  callers: QueuedOperation[];
}

/** A place in the order of transaction creation. */
interface Turn {
  /** Resolves once every earlier operation has created its transaction. */
  ready: Promise<void>;
  /** Lets the next operation create its transaction. */
  pass: () => void;
}

/**
 * The stored metadata differed from the remembered metadata a transaction built on: another tab
 * or port wrote the file. The attempt is aborted and redone from reads.
 */
class StaleMeta extends Error {}

class IndexedDbPort implements IndexedDbStorage {
  readonly kind = "indexeddb";
  private opening: Promise<Database> | undefined;
  /** The open connection; unset when another tab's upgrade or the browser closed it. */
  private live: Database | undefined;
  private lastTurn: Promise<void> = Promise.resolve();
  /** The batch still accepting operations, if any. */
  private batch: Batch | undefined;
  /** Settles when the last write batch's transaction has completed (or failed). */
  private lastWrite: Promise<void> = Promise.resolve();
  private readonly remembered = new RememberedFiles();
  private readonly changes: BroadcastChanges;
  /** Per file with a merge due: when this port last wrote it, and the timer that checks for idleness. */
  private readonly mergesDue = new Map<string, { lastWrite: number; timer: ReturnType<typeof setTimeout> }>();

  constructor(
    private readonly factory: IDBFactory | undefined,
    private readonly dbName: string,
    private readonly durability: Durability,
  ) {
    this.changes = new BroadcastChanges(`sessionkit:indexeddb:${dbName}`);
  }

  async read(path: string, range?: ByteRange): Promise<Uint8Array | null> {
    checkStoragePath(path);
    checkByteRange(path, range);
    return this.run(this.takeTurn(), "readonly", () => this.durability, `read ${path}`, path, async (raw) => {
      const tx = withPromises<"readonly">(raw);
      const meta = await tx.objectStore("files").get(path);
      if (!meta) return null;
      const [start, end] = clampByteRange(range, meta.size);
      return start === end ? new Uint8Array(0) : readBytes(tx, meta, start, end);
    });
  }

  async stat(path: string): Promise<FileStat | null> {
    checkStoragePath(path);
    const meta = await this.run(this.takeTurn(), "readonly", () => this.durability, `stat ${path}`, path, (raw) => withPromises<"readonly">(raw).objectStore("files").get(path));
    return meta ? { size: meta.size, mtimeMs: meta.mtimeMs } : null;
  }

  async list(dir: string): Promise<DirEntry[]> {
    checkStoragePath(dir, { allowRoot: true });
    const metas = await this.run(this.takeTurn(), "readonly", () => this.durability, `list ${dir}`, dir, (raw) =>
      withPromises<"readonly">(raw).objectStore("files").getAll(dir === "" ? undefined : pathsBelow(dir)),
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
    // Issued right after appends (SessionManager's flush): one strict transaction for both.
    if (this.batch) return this.enqueue({ kind: "sync", path });
    await this.run(this.takeTurn(), "readwrite", () => "strict", `sync ${path}`, path, async (raw) => {
      const files = withPromises<"readwrite">(raw).objectStore("files");
      const meta = await files.get(path);
      if (!meta) throw notFound("sync", path);
      await files.put(meta);
    });
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

  /**
   * Notes a committed append to a file. Once its trailing small records are due for merging, a
   * timer checks for idleness: the merge runs once the file has had no write for MERGE_IDLE_MS
   * and no batch is open (a writer resuming), so it never lands in a flush's transaction. A write
   * only updates the time (re-arming a timer per flush cost 18 µs of a flush's ~1.3 ms).
   */
  private scheduleMerge(path: string): void {
    const due = this.mergesDue.get(path);
    if (due) {
      due.lastWrite = Date.now();
      return;
    }
    const meta = this.remembered.get(path)?.meta;
    if (!meta || meta.size - (meta.tailOffset ?? meta.size) < TAIL_MERGE_BYTES) return;
    const check = (): void => {
      const idleFor = Date.now() - entry.lastWrite;
      if (idleFor < MERGE_IDLE_MS || this.batch) {
        entry.timer = setTimeout(check, Math.max(1, MERGE_IDLE_MS - idleFor));
        return;
      }
      this.mergesDue.delete(path);
      this.enqueue({ kind: "merge", path }).catch(() => {}); // the records stay as they are
    };
    const entry = { lastWrite: Date.now(), timer: setTimeout(check, MERGE_IDLE_MS) };
    this.mergesDue.set(path, entry);
  }

  /** Closes the connection once issued operations (and due merges) are done; a later call reopens it. */
  async close(): Promise<void> {
    const merges = [...this.mergesDue].map(([path, { timer }]) => {
      clearTimeout(timer);
      return this.enqueue({ kind: "merge", path });
    });
    this.mergesDue.clear();
    const turn = this.takeTurn();
    await turn.ready;
    turn.pass();
    // IDBDatabase.close() lets running transactions finish, so no caller loses its write.
    this.live?.close();
    this.forget(this.live);
    await Promise.allSettled(merges);
  }

  /** Queues an operation into the open batch, starting one (with its own turn) if needed. */
  private enqueue(operation: BatchOperation): Promise<void> {
    return new Promise<void>((resolve, reject) => {
      const queued = { operation, resolve, reject };
      if (this.batch) {
        this.batch.callers.push(queued);
        if (operation.kind === "sync") this.batch.durability = "strict";
        return;
      }
      const batch: Batch = { callers: [queued], durability: operation.kind === "sync" ? "strict" : this.durability };
      const turn = this.takeTurn();
      this.batch = batch;
      const closeBatch = () => {
        if (this.batch === batch) this.batch = undefined;
      };
      const steps = () => mergeAppends(batch.callers);
      // Group commit: the batch takes operations until the previous write transaction is done.
      const previous = this.lastWrite;
      const written = this.run(
        turn,
        "readwrite",
        () => batch.durability,
        "write transaction",
        operation.path,
        (tx, release, done) => new BatchTransaction(tx, done, this.remembered).apply(batch.callers, steps(), release),
        { onTurn: closeBatch, holdTurn: true, after: previous },
      );
      this.lastWrite = written.then(
        () => {},
        () => {},
      );
      written.then(
        (failures) => {
          batch.callers.forEach((caller, i) => (failures[i] ? caller.reject(failures[i]) : caller.resolve()));
          const changed = batch.callers.filter((caller, i) => !failures[i] && caller.operation.kind !== "sync" && caller.operation.kind !== "merge");
          // Committed: tell watchers (here and in other tabs) which files changed.
          this.changes.notify(changed.map((caller) => caller.operation.path));
          for (const { operation } of changed) if (operation.kind === "append") this.scheduleMerge(operation.path);
        },
        (error: unknown) => {
          // What the port remembered may include this batch's writes, which did not land.
          this.remembered.clear();
          batch.callers.forEach((caller) => caller.reject(callerError(caller.operation, error)));
        },
      );
    });
  }

  /**
   * Runs `body` in a transaction over both stores and resolves after the transaction completes.
   * Transactions are created in call order (see Turn): the next one may be created once this one
   * exists, or, with `holdTurn`, once `body` calls `release` (or ends). With `after`, the
   * transaction is created once that has settled too (`onTurn` runs then). When the connection was
   * dropped (closed for another tab's upgrade, or by the browser), it reopens and retries once;
   * the retried transaction may then run after operations issued later. When `body` finds that
   * remembered metadata was stale, the attempt is aborted and retried at once, still holding the
   * turn.
   */
  private async run<Mode extends IDBTransactionMode, T>(
    turn: Turn,
    mode: Mode,
    durability: () => Durability,
    action: string,
    path: string,
    body: (tx: IDBTransaction, release: () => void, done: Promise<void>) => Promise<T>,
    options?: { onTurn?: () => void; holdTurn?: boolean; after?: Promise<void> },
  ): Promise<T> {
    let passed = false;
    const pass = () => {
      if (!passed) turn.pass();
      passed = true;
    };
    try {
      await turn.ready;
      await options?.after;
      options?.onTurn?.();
      for (let reopened = false; ; ) {
        const db = await this.connection();
        let tx: IDBTransaction;
        try {
          // The raw transaction: idb's wrapper (a proxy, listeners added and removed for `done`)
          // cost ~170 ms of page CPU per 10,000 flushes; reads wrap it where they need promises.
          tx = unwrap(db).transaction(["files", "chunks"], mode, { durability: durability() });
        } catch (error) {
          // InvalidStateError: the connection closed under us (versionchange, browser).
          this.forget(db);
          if (!reopened && domErrorName(error) === "InvalidStateError") {
            reopened = true;
            continue;
          }
          throw toStorageError(error, `indexeddb ${action}`, path);
        } finally {
          if (!options?.holdTurn) pass();
        }
        const done = transactionDone(tx);
        done.catch(() => {}); // observed below; keeps an abort during `body` from going unhandled
        try {
          const result = await body(tx, pass, done);
          await done;
          return result;
        } catch (error) {
          abortQuietly(tx);
          if (error instanceof StaleMeta) {
            this.remembered.clear();
            continue;
          }
          if (error instanceof StorageError) throw error;
          if (!reopened && this.live !== db) {
            reopened = true;
            continue;
          }
          // An abort's reason (QuotaExceededError) is on tx.error; request errors only say AbortError.
          throw toStorageError(tx.error ?? error, `indexeddb ${action}`, path);
        }
      }
    } finally {
      pass();
    }
  }

  /** Takes the next place in transaction-creation order; later operations start a new batch. */
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
    // Whatever happens to the database until we reopen (even its deletion) is not ours to know.
    this.remembered.clear();
  }
}

/**
 * One attempt at a batch in its readwrite transaction. Tracks each file's metadata as of this
 * point of the transaction; a file the port remembers is taken as remembered (no waiting for a
 * read), with the stored record fetched in the same transaction and checked before the attempt
 * may commit or let the next transaction start (unless the port holds the file's lock).
 */
class BatchTransaction {
  /** Each touched file's metadata after the steps issued so far; null: no such file. */
  private readonly current = new Map<string, FileMeta | null>();
  /** Each touched file's trailing small records after the steps issued so far, when known. */
  private readonly currentTail = new Map<string, Uint8Array[] | undefined>();
  /** Checks of remembered metadata against the stored records; they reject with StaleMeta. */
  private readonly checks: Promise<void>[] = [];
  /**
   * The stores without idb's wrapper, for writes: their outcome is the transaction's (a failed
   * request aborts it, which `done` reports), so they need no promise or listeners of their own
   * (idb's per-request wrapping cost about as much page CPU as the requests themselves).
   */
  private readonly rawFiles: IDBObjectStore;
  private readonly rawChunks: IDBObjectStore;
  /** idb's promise API over the transaction, made on the first read that needs it. */
  private withPromises: WriteTransaction | undefined;
  /** Write requests issued. */
  private writes = 0;
  /** Set as soon as a check fails, before any later request of the transaction reports back. */
  private stale = false;

  constructor(
    private readonly tx: IDBTransaction,
    /** Settles when the transaction commits; rejects when it aborts. */
    private readonly done: Promise<void>,
    private readonly remembered: RememberedFiles,
  ) {
    this.rawFiles = tx.objectStore("files");
    this.rawChunks = tx.objectStore("chunks");
  }

  private get files() {
    return this.promised().objectStore("files");
  }

  private get chunks() {
    return this.promised().objectStore("chunks");
  }

  private promised(): WriteTransaction {
    return (this.withPromises ??= withPromises<"readwrite">(this.tx));
  }

  /**
   * Applies the steps in order. Returns, per caller, the StorageError its own operation failed
   * with (a missing file, a bad size), or undefined; such an operation changes nothing, so the
   * rest of the batch still commits. Any other failure aborts the whole transaction.
   */
  async apply(callers: QueuedOperation[], steps: BatchStep[], release: () => void): Promise<(StorageError | undefined)[]> {
    const failures = new Map<QueuedOperation, StorageError>();
    // Rejects when the transaction aborts. Requests still pending then need not ever report back
    // (Chromium: after `commit()`, a QuotaExceededError abort leaves them unsettled), so every
    // await of the attempt is raced against it.
    const aborted = new Promise<never>((_, reject) => void this.done.catch(reject)); // only hooks the abort: .catch's own promise never rejects
    const attempt = this.applySteps(steps, failures, release);
    attempt.catch(() => {}); // may reject after the abort has already decided the outcome
    try {
      await Promise.race([attempt, aborted]);
    } catch (error) {
      // A request that failed because the remembered metadata was stale says little: redo.
      throw this.stale ? new StaleMeta() : error;
    }
    return callers.map((caller) => failures.get(caller));
  }

  private async applySteps(steps: BatchStep[], failures: Map<QueuedOperation, StorageError>, release: () => void): Promise<void> {
    for (const step of steps) {
      try {
        await this.step(step.operation);
      } catch (error) {
        if (!(error instanceof StorageError)) throw error;
        for (const caller of step.callers) failures.set(caller, error);
      }
    }
    // A strict commit is a barrier only if the transaction writes something.
    if (this.writes === 0 && steps.some((step) => step.operation.kind === "sync")) this.rewriteMeta(steps);
    await this.checked();
    release();
    // Every request is issued: commit now instead of after our callbacks for them have run.
    this.tx.commit();
  }

  private async step(operation: BatchOperation): Promise<void> {
    const { path } = operation;
    switch (operation.kind) {
      case "append":
        return this.append(path, operation.data);
      case "write": {
        const meta = await this.meta(path);
        if (!meta) await this.checkNewFile(path);
        this.issue(this.rawChunks.delete(chunkKeys(path, 0)));
        const added = this.addChunks(path, 0, operation.data);
        const size = operation.data.length;
        this.put({ path, size, chunkCount: added.count, lastChunkOffset: added.lastOffset ?? 0, tailOffset: size, mtimeMs: Date.now() }, []);
        return;
      }
      case "truncate": {
        const { size } = operation;
        const meta = await this.meta(path);
        await this.checked(); // the reads below must see the stored file
        if (!meta) throw notFound("truncate", path);
        if (!Number.isSafeInteger(size) || size < 0 || size > meta.size) {
          throw new StorageError("invalid", `cannot truncate ${JSON.stringify(path)} (${meta.size} bytes) to ${size} bytes`, { path });
        }
        const dropped = await this.chunks.count(chunkKeys(path, size));
        await this.chunks.delete(chunkKeys(path, size));
        // The last remaining chunk may reach past the new end: cut it.
        const last = size > 0 ? await this.chunks.openCursor(chunkKeys(path, 0, size), "prev") : null;
        if (last && last.key[1] + last.value.length > size) await last.update(last.value.slice(0, size - last.key[1]));
        const tailOffset = Math.min(meta.tailOffset ?? meta.size, size);
        this.put({ ...meta, size, chunkCount: meta.chunkCount - dropped, lastChunkOffset: last?.key[1] ?? 0, tailOffset, mtimeMs: Date.now() }, undefined);
        return;
      }
      case "remove": {
        const meta = await this.meta(path);
        if (!meta) return;
        this.issue(this.rawChunks.delete(chunkKeys(path, 0)), this.rawFiles.delete(path));
        this.current.set(path, null);
        this.currentTail.set(path, undefined);
        this.remembered.delete(path);
        return;
      }
      case "sync": {
        if (!(await this.meta(path))) throw notFound("sync", path);
        return;
      }
      case "merge": {
        const meta = await this.meta(path);
        if (!meta) return; // removed since it was due
        const tailOffset = meta.tailOffset ?? meta.size;
        if (meta.size - tailOffset < TAIL_MERGE_BYTES) return; // rewritten or merged since

        const merged = await this.mergeRecords(path, tailOffset, meta.size, this.currentTail.get(path));
        const lastChunkOffset = merged.lastOffset ?? meta.lastChunkOffset;
        this.put({ ...meta, chunkCount: meta.chunkCount - merged.fewer, lastChunkOffset, tailOffset: meta.size }, []);
        return;
      }
    }
  }

  /**
   * Adds the bytes as a record of their own at the end (records of ≤ CHUNK_BYTES when large).
   * Before the trailing small records would pass TAIL_LIMIT_BYTES, or before a large append, they
   * are merged here (else once the file is idle: scheduleMerge).
   */
  private async append(path: string, data: Uint8Array): Promise<void> {
    const meta = (await this.meta(path)) ?? (await this.newFile(path));
    const tailOffset = meta.tailOffset ?? meta.size;
    const large = data.length >= TAIL_MERGE_BYTES;
    let { chunkCount, lastChunkOffset } = meta;
    let nextTailOffset = tailOffset;
    let tail = this.currentTail.get(path);
    if (large || meta.size - tailOffset + data.length > TAIL_LIMIT_BYTES) {
      const merged = await this.mergeRecords(path, tailOffset, meta.size, tail);
      chunkCount -= merged.fewer;
      lastChunkOffset = merged.lastOffset ?? lastChunkOffset;
      nextTailOffset = meta.size;
      tail = [];
    }
    const added = this.addChunks(path, meta.size, data);
    const size = meta.size + data.length;
    const tailBytes = size - nextTailOffset;
    this.put(
      {
        path,
        size,
        chunkCount: chunkCount + added.count,
        lastChunkOffset: added.lastOffset ?? lastChunkOffset,
        tailOffset: large ? size : nextTailOffset,
        mtimeMs: Date.now(),
      },
      large ? [] : tail && tailBytes <= REMEMBERED_TAIL_BYTES ? [...tail, data] : undefined,
    );
  }

  /**
   * Merges the records holding bytes [from, to) into records of ≤ CHUNK_BYTES; returns how many
   * records fewer there are and where the last one starts (unset: nothing changed). `known`:
   * those records' bytes as this port wrote them (else they are read).
   */
  private async mergeRecords(path: string, from: number, to: number, known: Uint8Array[] | undefined): Promise<{ fewer: number; lastOffset?: number }> {
    if (from === to) return { fewer: 0 };
    const range = chunkKeys(path, from, to);
    let records = known;
    if (!records || records.reduce((sum, record) => sum + record.length, 0) !== to - from) {
      await this.checked(); // the records read below must be the stored file's
      const [keys, stored] = await Promise.all([this.chunks.getAllKeys(range), this.chunks.getAll(range)]);
      let offset = from;
      stored.forEach((record, i) => {
        if (keys[i]?.[1] !== offset) throw corrupt(path, `chunk at ${keys[i]?.[1]} where ${offset} was expected`);
        offset += record.length;
      });
      if (offset !== to) throw corrupt(path, `chunks from ${from} end at ${offset}, not ${to}`);
      records = stored;
    }
    if (records.length <= 1) return { fewer: 0 };
    this.issue(this.rawChunks.delete(range));
    const added = this.addChunks(path, from, concat(records));
    return { fewer: records.length - added.count, ...(added.lastOffset === undefined ? {} : { lastOffset: added.lastOffset }) };
  }

  /**
   * The file's metadata as of this point of the transaction: from an earlier step, else the
   * remembered one (checked against the stored record in parallel), else the stored one.
   */
  private async meta(path: string): Promise<FileMeta | null> {
    const current = this.current.get(path);
    if (current !== undefined) return current;
    const remembered = this.remembered.get(path);
    if (remembered) {
      const { meta } = remembered;
      this.current.set(path, meta);
      this.currentTail.set(path, remembered.tail);
      if (this.remembered.trusted(path)) return meta;
      const check = this.files.get(path).then((stored) => {
        if (stored && sameMeta(stored, meta)) return;
        this.stale = true;
        throw new StaleMeta(`${path}: the stored metadata changed`);
      });
      check.catch(() => {}); // observed by checked(), perhaps only after other awaits
      this.checks.push(check);
      return meta;
    }
    const stored = (await this.files.get(path)) ?? null;
    this.current.set(path, stored);
    this.currentTail.set(path, undefined);
    return stored;
  }

  /** Resolves once every remembered metadata used so far matched the stored record. */
  private async checked(): Promise<void> {
    await Promise.all(this.checks);
  }

  /** Metadata for a file about to be created, after checking the path can be one. */
  private async newFile(path: string): Promise<FileMeta> {
    await this.checkNewFile(path);
    this.currentTail.set(path, []);
    return { path, size: 0, chunkCount: 0, lastChunkOffset: 0, tailOffset: 0, mtimeMs: Date.now() };
  }

  /** No ancestor may be a file and the path may not be a directory (the rules of a real file system). */
  private async checkNewFile(path: string): Promise<void> {
    for (let dir = parentDir(path); dir !== ""; dir = parentDir(dir)) {
      if ((await this.files.getKey(dir)) !== undefined) {
        throw new StorageError("io", `cannot create file ${JSON.stringify(path)}: ${JSON.stringify(dir)} is a file`, { path });
      }
    }
    if ((await this.files.getKey(pathsBelow(path))) !== undefined) {
      throw new StorageError("io", `cannot create file ${JSON.stringify(path)}: it is a directory`, { path });
    }
  }

  /** Adds records of ≤ CHUNK_BYTES for `data` starting at byte `offset`. */
  private addChunks(path: string, offset: number, data: Uint8Array): { count: number; lastOffset?: number } {
    let count = 0;
    let lastOffset: number | undefined;
    for (let at = 0; at < data.length; at += CHUNK_BYTES, count++) {
      lastOffset = offset + at;
      // `add`, not `put`: an existing key here would mean the metadata is wrong; fail loudly.
      // `data` is the port's own copy: stored as is when it fits one record.
      const record = at === 0 && data.length <= CHUNK_BYTES ? data : data.slice(at, at + CHUNK_BYTES);
      this.issue(this.rawChunks.add(record, [path, lastOffset]));
    }
    return lastOffset === undefined ? { count } : { count, lastOffset };
  }

  /** Counts write requests (made on the raw stores: their failure is the transaction's). */
  private issue(...requests: IDBRequest[]): void {
    this.writes += requests.length;
  }

  /** Puts a file's metadata; `tail`: the bytes of its trailing small records, when known. */
  private put(meta: FileMeta, tail: Uint8Array[] | undefined): void {
    this.issue(this.rawFiles.put(meta));
    this.current.set(meta.path, meta);
    this.currentTail.set(meta.path, tail);
    this.remembered.set(meta.path, { meta, tail });
  }

  /** Re-puts a synced file's metadata, so that the strict commit has something to write. */
  private rewriteMeta(steps: BatchStep[]): void {
    for (const { operation } of steps) {
      const meta = this.current.get(operation.path);
      if (operation.kind === "sync" && meta) return this.issue(this.rawFiles.put(meta));
    }
  }
}

function sameMeta(a: FileMeta, b: FileMeta): boolean {
  return (
    a.path === b.path &&
    a.size === b.size &&
    a.chunkCount === b.chunkCount &&
    a.lastChunkOffset === b.lastChunkOffset &&
    a.tailOffset === b.tailOffset &&
    a.mtimeMs === b.mtimeMs
  );
}

/** idb's promise API over a raw transaction of our two stores. */
function withPromises<Mode extends IDBTransactionMode>(tx: IDBTransaction): Transaction<Mode> {
  const wrapped = wrap(tx) as unknown as Transaction<Mode>;
  // idb makes a `done` of its own for the transaction; an abort is reported through ours
  // (transactionDone), so idb's must not go unhandled.
  wrapped.done.catch(() => {});
  return wrapped;
}

/**
 * Settles when `tx` commits, or rejects with its error when a request fails or it aborts, as
 * idb's `tx.done` does, through the handler properties: no listeners added and removed per
 * transaction.
 */
function transactionDone(tx: IDBTransaction): Promise<void> {
  return new Promise<void>((resolve, reject) => {
    tx.oncomplete = () => resolve();
    tx.onerror = tx.onabort = () => reject(tx.error ?? new DOMException("AbortError", "AbortError"));
  });
}

function hasStores(db: Database): boolean {
  return db.objectStoreNames.contains("files") && db.objectStoreNames.contains("chunks");
}

function abortQuietly(tx: IDBTransaction): void {
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

function notFound(action: string, path: string): StorageError {
  return new StorageError("not-found", `cannot ${action} ${JSON.stringify(path)}: no such file`, { path });
}

/** A batch's failure as seen by one of its callers: same code, naming the caller's operation. */
function callerError(operation: BatchOperation, error: unknown): unknown {
  if (!(error instanceof StorageError)) return error;
  const { kind, path } = operation;
  return new StorageError(error.code, `${kind} ${JSON.stringify(path)}: ${error.message}`, { path, cause: error });
}

/**
 * Merges consecutive appends to one file (with no other operation on that file between them) into
 * one step, so a burst of appends becomes one chunk record. Operations on different files are
 * independent, so steps keep per-file order only.
 */
function mergeAppends(batch: QueuedOperation[]): BatchStep[] {
  const steps: (BatchStep & { appended?: Uint8Array[] })[] = [];
  const openAppend = new Map<string, BatchStep & { appended?: Uint8Array[] }>();
  for (const caller of batch) {
    const { operation } = caller;
    const open = openAppend.get(operation.path);
    if (operation.kind === "append" && open?.appended) {
      open.appended.push(operation.data);
      open.callers.push(caller);
      continue;
    }
    const step = { operation, callers: [caller], ...(operation.kind === "append" ? { appended: [operation.data] } : {}) };
    steps.push(step);
    openAppend.set(operation.path, step);
  }
  return steps.map(({ operation, callers, appended }) =>
    appended && appended.length > 1 ? { operation: { kind: "append", path: operation.path, data: concat(appended) }, callers } : { operation, callers },
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
