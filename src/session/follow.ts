/**
 * Following a session file while another process writes it: on each change only the bytes after
 * the last complete line are read and parsed, as long as the header line and the bytes just
 * before the resume offset are unchanged (the file grew, as the listing catalog resumes); a
 * rewrite or a truncation means a reload. This module reads; `SessionManager.follow` applies
 * what it reads to its index and tree (docs/DESIGN.md §6, "Following a session").
 */
import { BLOB_REF_PREFIX } from "../blobs/blob-store.js";
import { scanJsonl, type LineProblem } from "../format/jsonl-reader.js";
import type { SessionDialect } from "../format/dialect.js";
import { entryReader, type EntryReader } from "../format/session-file.js";
import type { SessionEntry } from "../format/types.js";
import { parentDir, type StoragePort, type StorageWatch } from "../port.js";

/**
 * How far a session file has been read: complete lines only (an unterminated last line is read again).
 * @category Following a session
 */
export interface FileExtent {
  /** Bytes up to the end of the last complete ("\n"-terminated) line. */
  completeBytes: number;
  /** Lines within `completeBytes`, the header included. */
  completeLines: number;
}

/** Bytes before the resume offset compared on every look, to tell an append from a rewrite. */
const FINGERPRINT_BYTES = 64;
/** A header line longer than this is compared by its first bytes only. */
const HEADER_COMPARE_BYTES = 4096;
/** How often a port without `watch` is looked at. */
const DEFAULT_POLL_MS = 1000;

/**
 * What {@link SessionTail.next} found since the last look.
 * @category Following a session
 */
export type TailRead =
  | {
      /** The file has not changed. */
      kind: "unchanged";
    }
  | {
      /** The file is gone. */
      kind: "missing";
    }
  | {
      /** The file was rewritten or truncated: the tail cannot go on; load the file again. */
      kind: "rewritten";
    }
  | {
      /** Lines were appended: the entries they hold. */
      kind: "appended";
      /** The new entries, in file order (blob refs not resolved). */
      entries: SessionEntry[];
      /** Those of `entries` whose line holds a blob ref ("blob:sha256:..."). */
      withBlobRefs: Set<SessionEntry>;
      /** Damaged new lines, which were skipped. */
      problems: LineProblem[];
    };

/**
 * Reads what was appended to a session file since the last look: only the bytes after the last
 * complete line are read. `SessionManager.follow()` is built on it; use this class directly to
 * tail a file without keeping a session in memory.
 * @category Following a session
 */
export class SessionTail {
  #extent: FileExtent;
  #header: Uint8Array;
  #fingerprint: Uint8Array;
  /** size and mtime at the last look: an unchanged stat costs no read. */
  #seen = "";
  /** Reads records as readSessionFile reads those after the header; it keeps the previous timestamp (seed 003). */
  readonly #reader: EntryReader;

  private constructor(
    private readonly storage: StoragePort,
    private readonly path: string,
    extent: FileExtent,
    header: Uint8Array,
    fingerprint: Uint8Array,
    reader: EntryReader,
  ) {
    this.#extent = extent;
    this.#header = header;
    this.#fingerprint = fingerprint;
    this.#reader = reader;
  }

  /**
   * Starts after `extent`, the part of the file a load has read; records are decoded from
   * `dialect`, and `previousTimestamp` is the last entry's timestamp (seed 003 fills missing ones).
   */
  static async start(storage: StoragePort, path: string, extent: FileExtent, dialect: SessionDialect = "pi", previousTimestamp?: unknown): Promise<SessionTail> {
    const [header, fingerprint] = await Promise.all([readHeaderLine(storage, path), readFingerprint(storage, path, extent.completeBytes)]);
    return new SessionTail(storage, path, extent, header, fingerprint, entryReader(dialect, previousTimestamp));
  }

  /** How far the file has been read. */
  get extent(): FileExtent {
    return this.#extent;
  }

  /** Looks at the file once: unchanged, missing, rewritten, or the entries appended since the last look. */
  async next(): Promise<TailRead> {
    const { storage, path } = this;
    const stat = await storage.stat(path);
    if (stat === null) return { kind: "missing" };
    const seen = `${stat.size}:${stat.mtimeMs}`;
    if (seen === this.#seen) return { kind: "unchanged" };
    const { completeBytes, completeLines } = this.#extent;
    if (stat.size < completeBytes) return { kind: "rewritten" };
    const [header, fingerprint] = await Promise.all([
      storage.read(path, { offset: 0, length: this.#header.length }),
      storage.read(path, { offset: completeBytes - this.#fingerprint.length, length: this.#fingerprint.length }),
    ]);
    if (!header || !fingerprint || !sameBytes(header, this.#header) || !sameBytes(fingerprint, this.#fingerprint)) return { kind: "rewritten" };

    const entries: SessionEntry[] = [];
    const withBlobRefs = new Set<SessionEntry>();
    const reader = this.#reader;
    // This look's problems only: a look that failed part-way left some, and its lines are read again.
    reader.problems.length = 0;
    const scan = await scanJsonl(
      storage,
      path,
      (record, line, text) => {
        const entry = reader.read(record, line);
        if (!entry) return;
        entries.push(entry);
        if (text.includes(BLOB_REF_PREFIX)) withBlobRefs.add(entry);
      },
      { offset: completeBytes, firstLine: completeLines },
    );
    if (scan === null) return { kind: "missing" };
    // A torn or unterminated last line is not ours yet: it is read again once its newline lands.
    const problems = [...reader.problems, ...scan.problems.filter((problem) => problem.kind !== "torn")];
    this.#seen = scan.tail.kind === "clean" ? seen : "";
    if (scan.completeBytes !== completeBytes) {
      this.#extent = { completeBytes: scan.completeBytes, completeLines: scan.completeLines };
      this.#fingerprint = (await readFingerprint(storage, path, scan.completeBytes)) ?? new Uint8Array();
    }
    return { kind: "appended", entries, withBlobRefs, problems };
  }
}

async function readHeaderLine(storage: StoragePort, path: string): Promise<Uint8Array> {
  const head = (await storage.read(path, { offset: 0, length: HEADER_COMPARE_BYTES })) ?? new Uint8Array();
  const newline = head.indexOf(0x0a);
  return newline < 0 ? head : head.slice(0, newline + 1);
}

async function readFingerprint(storage: StoragePort, path: string, offset: number): Promise<Uint8Array> {
  const start = Math.max(0, offset - FINGERPRINT_BYTES);
  return (await storage.read(path, { offset: start, length: offset - start })) ?? new Uint8Array();
}

function sameBytes(a: Uint8Array, b: Uint8Array): boolean {
  if (a.length !== b.length) return false;
  for (let i = 0; i < a.length; i++) if (a[i] !== b[i]) return false;
  return true;
}

/**
 * What a follower hears after the session changed; the manager's state already shows it.
 * @category Following a session
 */
export type FollowUpdate =
  | {
      /** Entries were appended to the file (and are in the session now). */
      kind: "appended";
      /** The new entries, in file order. */
      entries: SessionEntry[];
    }
  | {
      /** The file was rewritten (or truncated, or came back after removal): the session was loaded again. */
      kind: "reloaded";
    }
  | {
      /** The file was removed. */
      kind: "removed";
    };

/**
 * Options of `SessionManager.follow()`.
 * @category Following a session
 */
export interface FollowOptions {
  /** A look at the file failed (the storage is gone, a read failed); following goes on. */
  onError?: (error: unknown) => void;
  /** How often to look when the storage has no `watch`; default 1000 ms. */
  pollMs?: number;
}

/**
 * A running `SessionManager.follow()`: look now, or stop.
 * @category Following a session
 */
export interface SessionFollow {
  /** Looks at the file now (as a change notification would make it) and resolves once applied. */
  check(): Promise<void>;
  /** Stops following; idempotent. */
  close(): Promise<void>;
}

/** What `followSession` needs from the SessionManager it follows for. */
export interface FollowTarget {
  storage: StoragePort;
  path: string;
  /** How far the load read; null when the file cannot be read on from there (missing, or migrated in memory): each change reloads. */
  extent: FileExtent | null;
  /** The file's dialect, and the timestamp of its last entry (seed 003 fills missing ones from it). */
  dialect(): SessionDialect;
  lastTimestamp(): unknown;
  /** True for an entry id already in the session (seen before its line got its newline). */
  knows(id: string): boolean;
  /** Adds entries to the session's index and tree. */
  add(entries: SessionEntry[], withBlobRefs: Set<SessionEntry>, problems: LineProblem[]): Promise<void>;
  /** Loads the whole file again. */
  reload(): Promise<{ exists: boolean; extent: FileExtent | null }>;
}

/**
 * Follows the target's file: looks at it on every change notification of its directory (or every
 * `pollMs` without `watch`), one look at a time, and tells `listener` what changed.
 */
export async function followSession(target: FollowTarget, listener: (update: FollowUpdate) => void, options: FollowOptions = {}): Promise<SessionFollow> {
  const { storage, path } = target;
  const startTail = (extent: FileExtent) => SessionTail.start(storage, path, extent, target.dialect(), target.lastTimestamp());
  let tail: SessionTail | null = target.extent && (await startTail(target.extent));
  /** Without a tail, a change of size or mtime means a reload. */
  const statKey = async () => {
    const stat = await storage.stat(path);
    return stat && `${stat.size}:${stat.mtimeMs}`;
  };
  let seenWithoutTail = tail ? null : await statKey();
  let present = tail !== null || seenWithoutTail !== null;
  let closed = false;
  let running: Promise<void> | undefined;
  let again = false;

  const read = async (): Promise<TailRead> => {
    if (tail) return tail.next();
    const seen = await statKey();
    if (seen === null) return { kind: "missing" };
    if (seen === seenWithoutTail) return { kind: "unchanged" };
    seenWithoutTail = seen;
    return { kind: "rewritten" };
  };

  const look = async (): Promise<void> => {
    const change = await read();
    if (closed) return;
    switch (change.kind) {
      case "unchanged":
        return;
      case "missing":
        tail = null;
        seenWithoutTail = null;
        if (present) listener({ kind: "removed" });
        present = false;
        return;
      case "rewritten": {
        const loaded = await target.reload();
        tail = loaded.extent && (await startTail(loaded.extent));
        present = loaded.exists;
        if (!closed) listener(loaded.exists ? { kind: "reloaded" } : { kind: "removed" });
        return;
      }
      case "appended": {
        const fresh = change.entries.filter((entry) => !target.knows(entry.id));
        await target.add(fresh, change.withBlobRefs, change.problems);
        if (fresh.length > 0 && !closed) listener({ kind: "appended", entries: fresh });
        return;
      }
    }
  };

  /** One look at a time; notifications during a look make one more look after it. */
  const check = (): Promise<void> => {
    if (closed) return Promise.resolve();
    if (running) {
      again = true;
      return running;
    }
    running = (async () => {
      do {
        again = false;
        try {
          await look();
        } catch (error) {
          options.onError?.(error);
        }
      } while (again && !closed);
      // In the same turn as the last test of `again`: a notification from now on starts a new look.
      running = undefined;
    })();
    return running;
  };

  let watch: StorageWatch | undefined;
  let timer: ReturnType<typeof setInterval> | undefined;
  if (storage.watch) {
    watch = await storage.watch(parentDir(path), (changed) => {
      if (changed === path || changed === parentDir(path)) void check();
    });
  } else {
    timer = setInterval(() => void check(), options.pollMs ?? DEFAULT_POLL_MS);
  }
  // Whatever changed between the load and the watch going live.
  void check();

  let closing: Promise<void> | undefined;
  return {
    check,
    close: () =>
      (closing ??= (async () => {
        closed = true;
        clearInterval(timer);
        await watch?.close();
        await running;
      })()),
  };
}
