/**
 * The storage port, the only thing the core knows about where bytes live: every backend is a tiny
 * file system of relative, "/"-separated paths such as "sessions/--work-app--/2026-…_id.jsonl" or
 * "blobs/<sha256>", and the core owns all format logic (docs/DESIGN.md §2).
 */

/**
 * What went wrong in a storage call ({@link StorageError.code}); the core acts on these.
 * @category Errors
 */
export type StorageErrorCode =
  /** The path does not exist where it must. */
  | "not-found"
  /** The backend is out of space; nothing was changed. */
  | "quota"
  /** Another writer holds the lock. */
  | "locked"
  /**
   * The path collides with what is stored: a directory is where the file must be, or a file where
   * one of its directories must be (a write of "a/b" when "a" is a file); nothing was changed.
   */
  | "collision"
  /** Stored bytes are not what they must be (bad session file, bad record). */
  | "corrupt"
  /** Any other backend failure. */
  | "io"
  /** The backend cannot do this here. */
  | "unsupported"
  /** The caller passed something malformed (a path with "..", a bad message). */
  | "invalid"
  /** A change refused because the storage is served read-only. */
  | "read-only"
  /** A path the storage's path policy does not expose. */
  | "forbidden"
  /** A server's cap on one client's work (batch size, bytes held for it, staged bytes) was reached; nothing was done. */
  | "limit";

/**
 * An error whose `code`, one of a closed set, says what kind of failure it is: the base of
 * sessionkit's error families (StorageError here, SessionError, ArchiveError and HistoryError),
 * here because adapters may import nothing of the core but this file.
 */
export abstract class CodedError<Code extends string> extends Error {
  /** What kind of failure this is. */
  readonly code: Code;

  /**
   * @param code what kind of failure this is
   * @param message a sentence for people, naming what failed
   * @param cause the error this one reports, when there is one
   */
  constructor(code: Code, message: string, cause: unknown) {
    super(message, cause === undefined ? undefined : { cause });
    this.code = code;
  }
}

/**
 * The one error type every StoragePort throws (or rejects with): `code` says what kind of failure
 * it is, `path` which storage path it concerns. Test for it with {@link isStorageError}.
 * @category Errors
 */
export class StorageError extends CodedError<StorageErrorCode> {
  /** Always "StorageError". */
  override readonly name = "StorageError";
  /** The storage path the error is about, when there is one. */
  readonly path: string | undefined;

  /**
   * @param code what kind of failure this is
   * @param message a sentence for people, naming what failed
   * @param options `path`: the storage path concerned; `cause`: the backend's own error
   */
  constructor(code: StorageErrorCode, message: string, options?: { path?: string; cause?: unknown }) {
    super(code, message, options?.cause);
    this.path = options?.path;
  }
}

/**
 * True when `error` is a StorageError (with the given `code`, when one is given).
 * @category Errors
 */
export function isStorageError(error: unknown, code?: StorageErrorCode): error is StorageError {
  return error instanceof StorageError && (code === undefined || error.code === code);
}

/**
 * A file's size and modification time, as {@link StoragePort.stat} returns them.
 * @category Storage
 */
export interface FileStat {
  /** Length of the file in bytes. */
  size: number;
  /** Last modification, in milliseconds since the Unix epoch. */
  mtimeMs: number;
}

/**
 * One child of a directory, as {@link StoragePort.list} returns it.
 * @category Storage
 */
export interface DirEntry {
  /** The child's own name (the last path segment), not its full path. */
  name: string;
  /** Whether the child is a file or a directory. */
  kind: "file" | "dir";
  /** Bytes for a file, 0 for a directory. */
  size: number;
  /** Last modification in milliseconds since the epoch; for a directory, its newest file's. */
  mtimeMs: number;
}

/**
 * Part of a file to read: `length` bytes from `offset`.
 * @category Storage
 */
export interface ByteRange {
  /** First byte to read (0-based); past the end of the file, the read returns no bytes. */
  offset: number;
  /** Bytes to read; to the end of the file when absent. */
  length?: number;
}

/**
 * An exclusive lock held until released.
 * @category Storage
 */
export interface StorageLock {
  /** Gives the lock up, so another writer may take it. */
  release(): Promise<void>;
}

/**
 * Where sessionkit keeps its bytes: a small file system of relative "/"-separated paths, which
 * every adapter (`sessionkit/adapters/*`) implements over its backend. Every method reports
 * failures as {@link StorageError}; the optional ones are there only where the backend can do them.
 * @category Storage
 */
export interface StoragePort {
  /** The adapter's name ("node-fs", "memory", "indexeddb", ...), for messages and diagnostics. */
  readonly kind: string;
  /**
   * A port over a directory of the host's file system (node-fs): that directory, absolute. Storage
   * paths are relative to it; SessionManager also takes an absolute file path inside it, as pi's
   * API does. Ports of other backends have none.
   */
  readonly root?: string;
  /** Whole file, or a range of it (clamped to the file's end); null when the file does not exist. */
  read(path: string, range?: ByteRange): Promise<Uint8Array | null>;
  /** null when no file exists at the path. */
  stat(path: string): Promise<FileStat | null>;
  /** The direct children of a directory ("" is the root); [] when it does not exist. */
  list(dir: string): Promise<DirEntry[]>;
  /**
   * Appends bytes, creating the file and its parents. The port is done with `data` once the
   * returned promise settles (a port that keeps the bytes longer copies them): the caller may
   * reuse the buffer then.
   */
  append(path: string, data: Uint8Array): Promise<void>;
  /** Atomic replace: a reader sees the old bytes or the new ones, never a mix. */
  write(path: string, data: Uint8Array): Promise<void>;
  /** Cuts a file to `size` bytes (size ≤ current size). */
  truncate(path: string, size: number): Promise<void>;
  /** Removes a file; succeeds when it is already gone. */
  remove(path: string): Promise<void>;
  /** Durability barrier for one file: resolves when its bytes survive a crash. */
  sync?(path: string): Promise<void>;
  /**
   * Writes many files, each as `write` does (atomically), and resolves once every one of them
   * survives a crash, as a `sync` of each would make them: one durability barrier for the lot,
   * which a backend may share among them (node-fs fsyncs each directory once, not once per file).
   * Every path is checked before anything is written (a bad one fails the call, writing nothing).
   * Not a transaction: after a failure some of the files may be written. Each file's `bytes()` is
   * called once, when the port is ready to write it (a few at a time, so the caller need not hold
   * them all); its failure fails the call as it is. A port without a cheaper way uses
   * {@link writeFilesThenSync}.
   */
  writeFiles?(files: readonly FileToWrite[]): Promise<void>;
  /**
   * Takes an exclusive lock named `key` across processes or tabs. Fails at once with a
   * StorageError "locked" when a live owner holds it; it never waits.
   */
  acquireLock?(key: string): Promise<StorageLock>;
  /**
   * Change notifications: `onChange(path)` for each file at or below `dir` ("" is the root) that
   * was created, appended to, written, truncated or removed, through this port or (where the
   * backend can see it) by another process, tab or machine. Resolves once the subscription is
   * live: a change made after that is reported. Notifications may be coalesced, delayed or
   * spurious, so a subscriber stats or reads to learn what changed; when a backend knows only that
   * something below `dir` changed (an overflow), it reports `dir` itself.
   */
  watch?(dir: string, onChange: (path: string) => void): Promise<StorageWatch>;
  /** Releases handles and connections. */
  close?(): Promise<void>;
}

/**
 * A StoragePort on which the named optional methods are always there: `StoragePortWith<"close">`
 * is a port its owner must close.
 * @category Storage
 */
export type StoragePortWith<Method extends "sync" | "writeFiles" | "acquireLock" | "watch" | "close"> = StoragePort & Required<Pick<StoragePort, Method>>;

/**
 * A StoragePort with every optional method: `sync`, `writeFiles`, `acquireLock`, `watch` and `close`.
 * @category Storage
 */
export type FullStoragePort = StoragePortWith<"sync" | "writeFiles" | "acquireLock" | "watch" | "close">;

/**
 * One file for {@link StoragePort.writeFiles}: where it goes, and its bytes, asked for once, when
 * the port is ready to write them.
 * @category Storage
 */
export interface FileToWrite {
  /** The storage path to write. */
  path: string;
  /** The file's bytes; the port is done with them once `writeFiles` settles. */
  bytes(): Promise<Uint8Array>;
}

/** Files a port without a cheaper way writes (and then syncs) at once in {@link writeFilesThenSync}. */
const FILES_AT_ONCE = 8;

/**
 * `writeFiles` for a port whose durability costs nothing to share: every path checked first, each
 * file written with `port.write`, then each synced with `port.sync` (when the port has one), a few
 * at a time. After a failure, the calls under way finish before it is thrown.
 * @category Adapter helpers
 */
export async function writeFilesThenSync(port: StoragePort, files: readonly FileToWrite[]): Promise<void> {
  for (const file of files) checkStoragePath(file.path);
  await fewAtOnce(files, async (file) => port.write(file.path, await file.bytes()));
  const sync = port.sync?.bind(port);
  if (sync) await fewAtOnce(files, (file) => sync(file.path));
}

/** `work` on each item, FILES_AT_ONCE at a time; none starts after a failure, which is thrown once the others settle. */
async function fewAtOnce<T>(items: readonly T[], work: (item: T) => Promise<void>): Promise<void> {
  let next = 0;
  let failure: { error: unknown } | undefined;
  const worker = async (): Promise<void> => {
    while (failure === undefined && next < items.length) {
      try {
        await work(items[next++]!);
      } catch (error) {
        failure ??= { error };
      }
    }
  };
  await Promise.all(Array.from({ length: Math.min(FILES_AT_ONCE, items.length) }, worker));
  if (failure) throw failure.error;
}

/**
 * A live `watch` subscription.
 * @category Storage
 */
export interface StorageWatch {
  /** Stops notifications; idempotent. */
  close(): Promise<void>;
}

const SEGMENT_FORBIDDEN = /[\\\0]/;

/**
 * Validates a storage path and returns it unchanged. Paths are relative, "/"-separated, with no
 * empty, "." or ".." segments and no backslashes: every adapter maps them below its own root.
 * "" names the root directory (valid for `list` only).
 *
 * @throws StorageError "invalid" when the path breaks these rules
 * @category Adapter helpers
 */
export function checkStoragePath(path: string, options?: { allowRoot?: boolean }): string {
  if (path === "" && options?.allowRoot) return path;
  if (path === lastValidPath) return path; // a writer names the same file call after call
  const segments = path.split("/");
  const bad =
    path === "" ||
    path.startsWith("/") ||
    /^[A-Za-z]:/.test(path) ||
    segments.some((s) => s === "" || s === "." || s === ".." || SEGMENT_FORBIDDEN.test(s));
  if (bad) throw new StorageError("invalid", `invalid storage path ${JSON.stringify(path)}`, { path });
  lastValidPath = path;
  return path;
}

let lastValidPath: string | undefined;

/**
 * The directory part of a storage path ("a/b/c.jsonl" → "a/b"); "" for a path at the root.
 * @category Adapter helpers
 */
export function parentDir(path: string): string {
  const i = path.lastIndexOf("/");
  return i < 0 ? "" : path.slice(0, i);
}

/**
 * The last segment of a storage path ("a/b/c.jsonl" → "c.jsonl").
 * @category Adapter helpers
 */
export function baseName(path: string): string {
  return path.slice(path.lastIndexOf("/") + 1);
}

/**
 * Joins path parts with "/", skipping empty ones (`joinPath("", "a", "b")` → "a/b"); it does not validate.
 * @category Adapter helpers
 */
export function joinPath(...parts: string[]): string {
  return parts.filter((p) => p !== "").join("/");
}

/**
 * Throws StorageError "invalid" unless the range has a non-negative integer offset and length.
 * @category Adapter helpers
 */
export function checkByteRange(path: string, range: ByteRange | undefined): void {
  if (range === undefined) return;
  const { offset, length } = range;
  const validOffset = Number.isSafeInteger(offset) && offset >= 0;
  const validLength = length === undefined || (Number.isSafeInteger(length) && length >= 0);
  if (!validOffset || !validLength) {
    throw new StorageError("invalid", `invalid byte range ${JSON.stringify(range)} for ${JSON.stringify(path)}`, { path });
  }
}

/**
 * The [start, end) byte positions a range covers in a file of `size` bytes.
 * @category Adapter helpers
 */
export function clampByteRange(range: ByteRange | undefined, size: number): [number, number] {
  if (range === undefined) return [0, size];
  const start = Math.min(range.offset, size);
  return [start, range.length === undefined ? size : Math.min(size, start + range.length)];
}

/**
 * The direct children of `dir` ("" is the root) among `files`; a directory's mtime is the newest
 * mtime of the files below it. Sorted by name.
 * @category Adapter helpers
 */
export function listChildren(dir: string, files: Iterable<{ path: string; size: number; mtimeMs: number }>): DirEntry[] {
  const prefix = dir === "" ? "" : `${dir}/`;
  const children = new Map<string, DirEntry>();
  for (const file of files) {
    if (!file.path.startsWith(prefix)) continue;
    const rest = file.path.slice(prefix.length);
    const slash = rest.indexOf("/");
    if (slash < 0) {
      children.set(rest, { name: rest, kind: "file", size: file.size, mtimeMs: file.mtimeMs });
      continue;
    }
    const name = rest.slice(0, slash);
    const seen = children.get(name);
    if (!seen || seen.mtimeMs < file.mtimeMs) children.set(name, { name, kind: "dir", size: 0, mtimeMs: file.mtimeMs });
  }
  return [...children.values()].sort((a, b) => (a.name < b.name ? -1 : a.name > b.name ? 1 : 0));
}
