/**
 * A SessionManager's write path: one queue for every write, appends batched into one storage
 * append and encoded into a reused buffer, the first failure latched, the writer lock, syncs, and
 * the repair of a torn tail before the next append (docs/DESIGN.md, "The write path and loading").
 */
import type { BlobStore } from "../blobs/blob-store.js";
import { hasImagesToConvert, imagesInForm } from "../blobs/images.js";
import { SessionError } from "../errors.js";
import { ReusedEncodeBuffer } from "../format/bytes.js";
import { encodeRecord, type SessionDialect } from "../format/dialect.js";
import type { JsonlTail } from "../format/jsonl-reader.js";
import { encodeJsonl } from "../format/session-file.js";
import type { SessionEntry } from "../format/types.js";
import type { StorageLock, StoragePort } from "../port.js";
import { prepareValueForPersistence } from "./persist-transform.js";
import type { SessionTree } from "./session-tree.js";
import { defaultStoreOwner, storeImageForm, storeLimitsContent, type StoreOwner } from "./store-owner.js";

/** What the journal writes with, fixed for the session's life. */
export interface JournalSettings {
  readonly storage: StoragePort;
  readonly blobs: BlobStore;
  /** Take the storage's writer lock for each file written. */
  readonly lock: boolean;
  /** pi's rule: write nothing until the session has an assistant message. */
  readonly deferUntilAssistant: boolean;
  /** Undefined: the owner's. */
  readonly truncateLargeContent: boolean | undefined;
  readonly onWarning: (message: string) => void;
  /** Whose store the session is written in, as given; undefined: the default of the port and layout. */
  readonly owner: StoreOwner | undefined;
}

type Op = () => Promise<void>;

interface AppendBatch {
  path: string;
  dialect: SessionDialect;
  entries: SessionEntry[];
  /** A flush() is waiting on this batch: sync the file together with the append. */
  syncAfter: boolean;
}

/** Batches up to this many characters are encoded into #batchBytes (its buffer at most 3× that). */
const BATCH_BUFFER_CHARS = 64 << 10;

/** The write queue of one SessionManager, over the storage and the session it writes. */
export class Journal {
  readonly #settings: JournalSettings;
  readonly #storage: StoragePort;
  /** The session written: its file's path and id name the latched error, its torn tail is repaired here. */
  readonly #session: SessionTree;
  /**
   * Each append batch's bytes, until the next batch is encoded: a port is done with them once its
   * append settles (StoragePort.append), and batches are written one after the other.
   */
  readonly #batchBytes = new ReusedEncodeBuffer(BATCH_BUFFER_CHARS);
  #queue: Promise<void> = Promise.resolve();
  #openBatch: AppendBatch | null = null;
  #failure: Error | null = null;
  #lock: { path: string; lock: Promise<StorageLock> } | null = null;
  /** Files written since the last sync. */
  readonly #unsynced = new Set<string>();

  constructor(settings: JournalSettings, session: SessionTree) {
    this.#settings = settings;
    this.#storage = settings.storage;
    this.#session = session;
  }

  /** The latched error: the first write that failed; every later write throws it. */
  get failure(): Error | null {
    return this.#failure;
  }

  /** Queues `op` after every write queued so far; its failure is latched. */
  enqueue(op: Op): void {
    this.#openBatch = null; // later appends must land after this op
    this.#queue = this.#queue.then(async () => {
      if (this.#failure) return;
      try {
        await op();
      } catch (error) {
        this.#latch(error);
      }
    });
  }

  #latch(error: unknown): void {
    if (this.#failure) return;
    const cause = error as Error;
    const path = this.#session.file.path;
    const latched = new SessionError("persist-failed", `failed to persist session ${path ?? this.#session.header.id}: ${cause?.message ?? String(error)}`, { path, cause });
    this.#failure = latched;
    this.#settings.onWarning(latched.message);
  }

  /** Writes an entry just added to the session: appended to an open file, else as {@link startIfDue} decides. */
  record(entry: SessionEntry): void {
    const file = this.#session.file;
    if (file.kind === "open") this.#append(file.path, entry);
    else this.startIfDue();
  }

  /** Starts an unstarted file once pi's rule allows: the session has an assistant message, or deferUntilAssistant is off. */
  startIfDue(): void {
    const file = this.#session.file;
    if (file.kind === "unstarted" && (this.#session.hasAssistant || !this.#settings.deferUntilAssistant)) this.start(file.path);
  }

  /** The file at `path` is open from now on: the header and every entry are written, replacing whatever is there. */
  start(path: string): void {
    this.#session.file = { kind: "open", path };
    const records: unknown[] = [this.#session.header, ...this.#session.entries.all()];
    const dialect = this.#session.dialect;
    this.enqueue(async () => {
      await this.takeLock(path);
      await this.#storage.write(path, await this.encode(records, dialect));
      this.#unsynced.add(path);
    });
  }

  /** Appends made before their batch's queued write starts share one storage append. */
  #append(path: string, entry: SessionEntry): void {
    const open = this.#openBatch;
    if (open && open.path === path) {
      open.entries.push(entry);
      return;
    }
    const batch: AppendBatch = { path, dialect: this.#session.dialect, entries: [entry], syncAfter: false };
    this.enqueue(async () => {
      if (this.#openBatch === batch) this.#openBatch = null;
      await this.#writeBatch(batch);
    });
    this.#openBatch = batch;
  }

  async #writeBatch(batch: AppendBatch): Promise<void> {
    await this.takeLock(batch.path);
    let prefix = "";
    const session = this.#session;
    if (session.tailToRepair?.path === batch.path) {
      prefix = await this.#repairTail(batch.path, session.tailToRepair.tail);
      session.tailToRepair = null;
    }
    const bytes = await this.encode(batch.entries, batch.dialect, prefix, { truncate: this.#truncates(), into: this.#batchBytes });
    const appended = this.#storage.append(batch.path, bytes);
    if (batch.syncAfter && this.#storage.sync) {
      // Issued together (ports order operations on one path as called): a port can commit both
      // in one transaction or one round trip instead of two.
      await Promise.all([appended, this.#storage.sync(batch.path)]);
      this.#unsynced.delete(batch.path);
    } else {
      await appended;
      this.#unsynced.add(batch.path);
    }
  }

  /**
   * A torn last line (a crash mid-append) is cut off and kept in a side file; a complete last
   * line without "\n" gets one. Returns what must precede the next line.
   */
  async #repairTail(path: string, tail: JsonlTail): Promise<string> {
    if (tail.kind === "missing-newline") return "\n";
    if (tail.kind !== "torn") return "";
    const size = (await this.#storage.stat(path))?.size;
    if (size !== tail.offset + tail.length) {
      // Someone wrote since we read (a writer that ignores our lock, such as pi): cut nothing we
      // have not seen; start our lines on a line of their own.
      this.#settings.onWarning(`${path}: changed since it was read; its torn last line was left in place`);
      return "\n";
    }
    const torn = await this.#storage.read(path, { offset: tail.offset, length: tail.length });
    const side = `${path}.torn-${Date.now()}`;
    await this.#storage.write(side, torn ?? new Uint8Array());
    await this.#storage.truncate(path, tail.offset);
    this.#settings.onWarning(`${path}: removed a torn last line (${tail.length} bytes, kept in ${side})`);
    return "";
  }

  /** Whose store the session is written in: what decides the form of its images (it follows the layout unless given). */
  owner(): StoreOwner {
    return this.#settings.owner ?? defaultStoreOwner(this.#storage, this.#session.layout);
  }

  /** Whether what is written is cut to oh-my-pi's persistence limits: as asked, else as the owner does. */
  #truncates(): boolean {
    return this.#settings.truncateLargeContent ?? storeLimitsContent(this.owner());
  }

  /** JSONL of canonical records in `dialect`, prepared for disk (truncation, images in the owner's form); in `options.into` where given. */
  async encode(
    records: readonly unknown[],
    dialect: SessionDialect,
    prefix = "",
    options: { truncate: boolean; into?: ReusedEncodeBuffer } = { truncate: this.#truncates() },
  ): Promise<Uint8Array> {
    const prepared: unknown[] = [];
    const owner = this.owner();
    const form = storeImageForm(owner);
    const missing = (ref: string) => this.#settings.onWarning(`${this.#session.file.path ?? "session"}: missing blob ${ref}: written as the ref, which ${owner} does not resolve`);
    for (const record of records) {
      let persisted = options.truncate ? prepareValueForPersistence(record) : record;
      // Checked first: nearly no record has an image to convert, and then the batch waits on nothing.
      if (hasImagesToConvert(persisted, form)) persisted = await imagesInForm(persisted, form, this.#settings.blobs, missing);
      prepared.push(encodeRecord(dialect, persisted as Record<string, unknown>));
    }
    const bytes = encodeJsonl(prepared, prefix ? undefined : options.into);
    if (!prefix) return bytes;
    const head = new TextEncoder().encode(prefix);
    const out = new Uint8Array(head.length + bytes.length);
    out.set(head);
    out.set(bytes, head.length);
    return out;
  }

  /**
   * Runs `op` on the write queue (after every write queued before it, before any queued after it)
   * and returns its result. Unlike appends, its failure is the caller's, not latched: the rewrites
   * that use it leave the file as it was when they fail.
   */
  exclusive<T>(op: () => Promise<T>): Promise<T> {
    this.#openBatch = null;
    const run = this.#queue.then(() => {
      if (this.#failure) throw this.#failure;
      return op();
    });
    this.#queue = run.then(
      () => {},
      () => {},
    );
    return run;
  }

  /** Waits for queued writes; throws the latched error. */
  async settle(): Promise<void> {
    await this.#queue;
    if (this.#failure) throw this.#failure;
  }

  /** Resolves when every write so far is synced; rejects with the latched error. */
  async flush(): Promise<void> {
    if (this.#openBatch) this.#openBatch.syncAfter = true;
    this.#openBatch = null;
    await this.settle();
    if (this.#unsynced.size === 0 || !this.#storage.sync) return;
    const paths = [...this.#unsynced];
    this.#unsynced.clear();
    this.enqueue(async () => {
      for (const path of paths) await this.#storage.sync!(path);
    });
    await this.settle();
  }

  /** `path` was synced (or left behind): flush need not sync it. */
  synced(path: string): void {
    this.#unsynced.delete(path);
  }

  /** The file at `from` moved to `to`: a pending sync follows it. */
  moved(from: string, to: string): void {
    if (this.#unsynced.delete(from)) this.#unsynced.add(to);
  }

  /**
   * One writer per file: the lock follows the file this session writes. Concurrent callers share
   * one acquisition (open() and a queued write may both ask for it).
   */
  async takeLock(path: string): Promise<void> {
    if (!this.#settings.lock || !this.#storage.acquireLock) return;
    if (this.#lock?.path !== path) {
      const previous = this.#lock;
      const acquiring = (async () => {
        await (await previous?.lock.catch(() => null))?.release();
        return this.#storage.acquireLock!(path);
      })();
      this.#lock = { path, lock: acquiring };
      acquiring.catch(() => {
        if (this.#lock?.lock === acquiring) this.#lock = null; // a later call may try again
      });
    }
    await this.#lock!.lock;
  }

  async releaseLock(): Promise<void> {
    const held = this.#lock;
    this.#lock = null;
    await (await held?.lock.catch(() => null))?.release();
  }

  /** A lock for a path this session is about to take over (held with the current one). */
  async lockForNewPath(path: string): Promise<StorageLock | null> {
    if (!this.#settings.lock || !this.#storage.acquireLock) return null;
    return this.#storage.acquireLock(path);
  }

  /** Makes `lock` (on `path`) this session's writer lock, releasing the one it held. */
  async adoptLock(path: string, lock: StorageLock | null): Promise<void> {
    const previous = this.#lock;
    this.#lock = lock ? { path, lock: Promise.resolve(lock) } : null;
    await (await previous?.lock.catch(() => null))?.release().catch(() => {});
  }
}
