/**
 * One batch's readwrite transaction and the chunk layout it writes: a small append adds a record
 * of its own, a write or a large append records of at most CHUNK_BYTES, and the trailing small
 * records are merged when due; each file's metadata is built on what the port remembers and
 * checked against the stored record (docs/DESIGN.md §2, "IndexedDB").
 */
import { StorageError } from "../../src/port.js";
import { concat } from "../kit/bytes.js";
import { REMEMBERED_TAIL_BYTES, StaleMeta, sameMeta, type RememberedFiles } from "./metadata-cache.js";
import type { BatchOperation, BatchStep, QueuedOperation } from "./operations.js";
import { CHUNK_BYTES, TAIL_LIMIT_BYTES, TAIL_MERGE_BYTES, checkNewFile, chunkKeys, corrupt, noFile, withPromises, type FileMeta, type Transaction } from "./schema.js";

type WriteTransaction = Transaction<"readwrite">;

/**
 * One attempt at a batch in its readwrite transaction. Tracks each file's metadata as of this
 * point of the transaction; a file the port remembers is taken as remembered (no waiting for a
 * read), with the stored record fetched in the same transaction and checked before the attempt
 * may commit or let the next transaction start (unless the port holds the file's lock).
 */
export class BatchTransaction {
  /** Each touched file's metadata after the steps issued so far; null: no such file. */
  private readonly current = new Map<string, FileMeta | null>();
  /** Each touched file's trailing small records after the steps issued so far, when known. */
  private readonly currentTail = new Map<string, Uint8Array[] | undefined>();
  /** Checks of remembered metadata against the stored records; they reject with StaleMeta. */
  private readonly checks: Promise<void>[] = [];
  /**
   * The stores without idb's wrapper, for writes: their outcome is the transaction's (a failed
   * request aborts it, which `done` reports), so they need no promise or listeners of their own
   * (idb's per-request wrapping costs page CPU: bench:browser profile.appends.indexeddb, see
   * bench/README.md; the figure is in docs/DESIGN.md §2).
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
        if (!meta) await checkNewFile(this.promised(), path);
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
        if (!meta) throw await noFile(this.promised(), "truncate", path);
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
        if (!meta) return checkNewFile(this.promised(), path, "remove");
        this.issue(this.rawChunks.delete(chunkKeys(path, 0)), this.rawFiles.delete(path));
        this.current.set(path, null);
        this.currentTail.set(path, undefined);
        this.remembered.delete(path);
        return;
      }
      case "sync": {
        if (!(await this.meta(path))) throw await noFile(this.promised(), "sync", path);
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
    await checkNewFile(this.promised(), path);
    this.currentTail.set(path, []);
    return { path, size: 0, chunkCount: 0, lastChunkOffset: 0, tailOffset: 0, mtimeMs: Date.now() };
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
