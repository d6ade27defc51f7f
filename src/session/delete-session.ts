/**
 * Deleting a session together with the blobs (images) that nothing else references any more,
 * under the session's writer lock. "Nothing else" is deliberately wide: a blob kept by mistake
 * costs space, one removed by mistake loses an image. What is removed, and the one known race:
 * docs/DESIGN.md §3 ("Deleting a session").
 */
import { BLOB_REF_PREFIX, parseBlobRef } from "../blobs/blob-store.js";
import { collectBlobRefs } from "../blobs/images.js";
import { scanJsonl } from "../format/jsonl-reader.js";
import { StorageError, baseName, joinPath, parentDir, type StoragePort } from "../port.js";
import { CATALOG_DIR } from "./listing.js";

/**
 * Options of {@link deleteSessionWithBlobs}.
 * @category Sessions
 */
export interface DeleteSessionOptions {
  /** Storage directory of blobs. Default "blobs". */
  blobDir?: string;
}

/**
 * What {@link deleteSessionWithBlobs} removed, and the blobs it kept because other files use them.
 * @category Sessions
 */
export interface DeleteSessionResult {
  /** The session file and its side files, as removed. */
  removedFiles: string[];
  /** Blob paths removed: referenced by the deleted files only. */
  removedBlobs: string[];
  /** Refs of the deleted files that other files still reference. */
  keptBlobRefs: string[];
}

/**
 * Deletes a session file, its side files (`.bak`, `.torn-…`, ...) and the blobs (images) that no
 * other file in the store references. The session's writer lock is held throughout.
 *
 * @throws StorageError "not-found" when there is no file at `path`, "locked" when a writer has the session open
 * @category Sessions
 */
export async function deleteSessionWithBlobs(storage: StoragePort, path: string, options: DeleteSessionOptions = {}): Promise<DeleteSessionResult> {
  const blobDir = options.blobDir ?? "blobs";
  if (!(await storage.stat(path))) throw new StorageError("not-found", `no session at ${path}`, { path });
  const lock = await storage.acquireLock?.(path);
  try {
    const sideFiles = (await storage.list(parentDir(path)))
      .filter((e) => e.kind === "file" && isSideFileOf(baseName(path), e.name))
      .map((e) => joinPath(parentDir(path), e.name));
    const doomed = [path, ...sideFiles];

    const candidates = new Set<string>();
    for (const file of doomed) await collectFileRefs(storage, file, candidates);
    const stillReferenced = new Set<string>();
    if (candidates.size > 0) {
      const skip = new Set([...doomed, blobDir, CATALOG_DIR]);
      for await (const file of storeFiles(storage, "", skip)) {
        await collectFileRefs(storage, file, stillReferenced);
        if ([...candidates].every((ref) => stillReferenced.has(ref))) break;
      }
    }

    for (const file of doomed) await storage.remove(file);
    const removedBlobs: string[] = [];
    const keptBlobRefs: string[] = [];
    for (const ref of candidates) {
      const hash = parseBlobRef(ref);
      if (hash === null) continue; // a malformed ref names no blob
      if (stillReferenced.has(ref)) {
        keptBlobRefs.push(ref);
      } else {
        const blobPath = joinPath(blobDir, hash);
        await storage.remove(blobPath);
        removedBlobs.push(blobPath);
      }
    }
    return { removedFiles: doomed, removedBlobs, keptBlobRefs };
  } finally {
    await lock?.release();
  }
}

/** Adds the blob refs in `path`'s content arrays to `into`; lines without a ref are not parsed twice. */
async function collectFileRefs(storage: StoragePort, path: string, into: Set<string>): Promise<void> {
  await scanJsonl(storage, path, (record, _line, text) => {
    if (text.includes(BLOB_REF_PREFIX)) collectBlobRefs(record, into);
  });
}

/** Every file below `dir`, depth first, leaving out the paths (files or directories) in `skip`. */
async function* storeFiles(storage: StoragePort, dir: string, skip: ReadonlySet<string>): AsyncGenerator<string> {
  for (const entry of await storage.list(dir)) {
    const path = joinPath(dir, entry.name);
    if (skip.has(path)) continue;
    if (entry.kind === "dir") yield* storeFiles(storage, path, skip);
    else yield path;
  }
}

/**
 * The files sessionkit keeps beside a session: a torn tail it cut (`.torn-<ms>`), the original of a
 * migration (`.v<N>.bak`), the bytes an import replaced (`.before-import-<ms>`). Named exactly, so
 * nothing else beside the session (a backend's lock file, a user's file) is taken with it.
 */
function isSideFileOf(session: string, name: string): boolean {
  if (!name.startsWith(`${session}.`)) return false;
  return /^(torn-\d+|v\d+\.bak|before-import-\d+)$/.test(name.slice(session.length + 1));
}
