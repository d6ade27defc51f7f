/**
 * What the port remembers of the files it wrote (their FileMeta, and the bytes of their trailing
 * small records), so that an append builds on it instead of waiting for a read; a batch
 * transaction checks it against the stored record unless the port holds the file's writer lock
 * (docs/DESIGN.md §2, "IndexedDB").
 */
import type { FileMeta } from "./schema.js";

/** The trailing records' bytes are remembered (so a merge needs no read) up to this much. */
export const REMEMBERED_TAIL_BYTES = 1 << 20;

/** Files whose metadata the port remembers (the most recently written). */
const REMEMBERED_FILES = 64;

/** What the port remembers of a file it wrote. */
export interface RememberedFile {
  meta: FileMeta;
  /** The file's trailing small records (from `tailOffset` to `size`), one array item each, when known. */
  tail: Uint8Array[] | undefined;
}

/**
 * Per file, what it will be once every transaction this port created has committed, least
 * recently written first: a guess to build on, checked in each transaction against the stored
 * record unless this port holds the file's writer lock.
 */
export class RememberedFiles {
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

/**
 * The stored metadata differed from the remembered metadata a transaction built on: another tab
 * or port wrote the file. The attempt is aborted and redone from reads.
 */
export class StaleMeta extends Error {}

export function sameMeta(a: FileMeta, b: FileMeta): boolean {
  return (
    a.path === b.path &&
    a.size === b.size &&
    a.chunkCount === b.chunkCount &&
    a.lastChunkOffset === b.lastChunkOffset &&
    a.tailOffset === b.tailOffset &&
    a.mtimeMs === b.mtimeMs
  );
}
