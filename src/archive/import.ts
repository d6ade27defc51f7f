/**
 * Importing archives and plain session files. All or nothing: everything is validated and every
 * decision planned before the first write; a storage failure while committing undoes what was
 * written. Sessions are written in the form of the store's owner (session/store-owner.ts): its
 * dialect and its images, inline or as blob refs, whatever form they came in.
 */
import { sha256Hex } from "../blobs/blob-store.js";
import { hasImagesToExternalize } from "../blobs/images.js";
import type { StoragePort } from "../port.js";
import { ArchiveError } from "./errors.js";
import { blobRefsOf, type BlobSource, type Candidate } from "./import-form.js";
import type { ImportOptions, ImportSummary } from "./import-options.js";
import { placeSessions } from "./import-plan.js";
import { resolveLimits } from "./limits.js";
import { blobMemberName, SESSION_ID_PATTERN } from "./manifest.js";
import { countLines, encodeSession, isCanonical, parseSessionBytes } from "./session-bytes.js";
import { openVerifiedArchive } from "./verify.js";
import type { ArchiveSource } from "./zip-read.js";


/**
 * Imports a sessionkit archive (see verifyArchive for the checks). The source is read with random
 * access: pass a Blob or a Uint8Array; a ReadableStream is buffered in memory first.
 *
 * @throws ArchiveError when the archive breaks a rule (nothing is written then), or "write-failed"
 *   when storage fails while committing (what was written is rolled back)
 * @category Archives
 */
export async function importArchive(storage: StoragePort, source: ArchiveSource, options: ImportOptions = {}): Promise<ImportSummary> {
  const archive = await openVerifiedArchive(source, options);
  try {
    const candidates: Candidate[] = archive.sessions.map((session) => ({
      source: session.member,
      dialect: session.dialect,
      header: session.header,
      entryIds: session.entryIds,
      sha256: session.manifest.sha256,
      blobRefs: session.blobRefs,
      inlineImages: session.inlineImages,
      bytes: () => archive.readVerified(session.member),
      entries: async () => (await parseSessionBytes(await archive.readVerified(session.member), session.member)).entries,
    }));
    const blobs: BlobSource[] = archive.manifest.blobs.map((blob) => ({
      hash: blob.hash,
      size: blob.bytes,
      read: () => archive.readVerified(blobMemberName(blob.hash)),
    }));
    const summary = await placeSessions(storage, candidates, blobs, [], options);
    return archive.manifest.redacted ? { ...summary, redacted: archive.manifest.redacted } : summary;
  } finally {
    await archive.close();
  }
}

/**
 * One plain session file for {@link importSessionFiles}.
 * @category Archives
 */
export interface SessionFileInput {
  /** A name for messages (a file name or path). */
  name: string;
  /** The file's contents (JSONL). */
  bytes: Uint8Array;
}

/**
 * Imports plain session files (pi's own `.jsonl`, any version): migrated (v1 entries get
 * deterministic ids), written in the store's form (see ImportOptions.owner) where the layout puts
 * them. The batch is all or nothing, with the same conflict rules as archives.
 * Recoverable damage (glued objects, a torn last line) is repaired and reported in `warnings`; a
 * line that is not JSON fails the batch.
 * @category Archives
 */
export async function importSessionFiles(storage: StoragePort, files: readonly SessionFileInput[], options: ImportOptions = {}): Promise<ImportSummary> {
  const limits = resolveLimits(options.limits);
  if (files.length > limits.maxEntries) throw new ArchiveError("too-many-entries", `${files.length} files, over limit maxEntries ${limits.maxEntries}`);
  const candidates: Candidate[] = [];
  const warnings: string[] = [];
  let total = 0;
  let done = 0;
  for (const file of files) {
    const { name, bytes } = file;
    total += bytes.length;
    if (bytes.length > limits.maxEntryBytes) throw new ArchiveError("too-large", `${bytes.length} bytes, over limit maxEntryBytes ${limits.maxEntryBytes}`, { member: name });
    if (total > limits.maxTotalBytes) throw new ArchiveError("too-large", `the files add up to more than limit maxTotalBytes ${limits.maxTotalBytes}`, { member: name });
    const lines = countLines(bytes);
    if (lines > limits.maxSessionLines) throw new ArchiveError("too-many-lines", `${lines} lines, over limit maxSessionLines ${limits.maxSessionLines}`, { member: name });
    const parsed = await parseSessionBytes(bytes, name);
    for (const problem of parsed.problems) {
      if (problem.kind === "unparseable" || problem.kind === "not-object") throw new ArchiveError("bad-session", problem.message, { member: name });
      warnings.push(`${name}: ${problem.message}`);
    }
    if (!SESSION_ID_PATTERN.test(parsed.header.id)) {
      throw new ArchiveError("unsafe-name", `session id ${JSON.stringify(parsed.header.id)} cannot name a file`, { member: name });
    }
    if (typeof parsed.header.timestamp !== "string") throw new ArchiveError("bad-session", "the header has no timestamp", { member: name });
    const { entries } = parsed;
    const v3 = isCanonical(parsed) ? bytes : encodeSession(parsed.dialect, parsed.header, entries);
    if (parsed.migratedFrom !== null) warnings.push(`${name}: migrated from v${parsed.migratedFrom}`);
    candidates.push({
      source: name,
      dialect: parsed.dialect,
      header: parsed.header,
      entryIds: entries.map((e) => e.id),
      sha256: await sha256Hex(v3),
      blobRefs: blobRefsOf(entries),
      inlineImages: entries.some(hasImagesToExternalize),
      bytes: async () => v3,
      entries: async () => entries,
    });
    options.onProgress?.({ phase: "verify", member: name, done: ++done, total: files.length });
  }
  return placeSessions(storage, candidates, [], warnings, options);
}

export type { ConflictPolicy, ImportAction, ImportedSession, ImportOptions, ImportSummary } from "./import-options.js";
