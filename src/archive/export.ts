/**
 * Exporting sessions and their blobs as a zip, streamed into a WritableStream. Memory holds one
 * member at a time: a first pass reads each session to fill in the manifest (which comes first in
 * the zip), a second pass reads it again and writes it. Sessions are append-only, so the second
 * pass reads only the bytes the first one saw; a session rewritten in between fails the export.
 */
import { Uint8ArrayReader, ZipWriter } from "@zip.js/zip.js";
import { BlobStore, parseBlobRef } from "../blobs/blob-store.js";
import { collectBlobRefs } from "../blobs/images.js";
import type { SessionEntry, SessionHeader } from "../format/types.js";
import type { StoragePort } from "../port.js";
import type { RedactionCounts } from "../secrets/redact.js";
import { ArchiveError } from "./errors.js";
import { inOrderAhead } from "./concurrency.js";
import { crc32, sha256Of, type NewCrc32, type NewSha256 } from "./hashes.js";
import {
  ARCHIVE_FORMAT,
  ARCHIVE_VERSION,
  MANIFEST_NAME,
  REDACTED_ARCHIVE_VERSION,
  SESSION_ID_PATTERN,
  blobMemberName,
  sessionMemberName,
  type ArchiveManifest,
  type ManifestSession,
} from "./manifest.js";
import { encodeSession, extractBranch, isCanonicalScan, parseSessionBytes, scanSessionBytes } from "./session-bytes.js";
import type { ArchiveProgress } from "./verify.js";

/** Blobs read and hashed ahead of the one being written. */
const BLOBS_AHEAD = 4;

/**
 * A session to export: its storage path, and optionally one branch of it (root → `leafId`).
 * @category Archives
 */
export type ExportSessionSpec =
  | string
  | {
      /** The session file's storage path. */
      path: string;
      /** Export only the branch from the root to this entry (the archive's session ends there). */
      leafId?: string;
    };

/**
 * How {@link exportArchive} writes an archive; every option has a default.
 * @category Archives
 */
export interface ExportOptions {
  /** Put the blobs the sessions reference into the archive. Default true. */
  includeBlobs?: boolean;
  /** Called after each session is read ("prepare") and after each member is written ("export"). */
  onProgress?: (progress: ArchiveProgress) => void;
  /** The manifest's `generator`. */
  generator?: string;
  /** Let zip.js deflate in web workers (browsers). Default false. */
  useWebWorkers?: boolean;
  /**
   * Compresses a whole session member to raw deflate (the zip's method 8), in place of zip.js's
   * one deflate stream: the stream's bytes, in order, in as many pieces as it likes. node-fs's
   * `nodeDeflateSession` deflates pieces of the session on the thread pool at once. Blobs are
   * stored, never deflated.
   */
  deflateSession?: (bytes: Uint8Array) => Promise<readonly Uint8Array[]>;
  /**
   * Makes the incremental SHA-256 sessions and blobs are hashed with; default `crypto.subtle`,
   * which copies the whole session first (+50 MB of peak memory for a 50 MB one). node-fs's
   * `nodeSha256` hashes in place.
   */
  sha256?: NewSha256;
  /** Makes the incremental CRC-32 the members' headers get; default hash-wasm's. node-fs's `nodeCrc32` is ~2.5× faster. */
  crc32?: NewCrc32;
  /**
   * Replace each secret the sessions hold (see `findSecrets`) by `[REDACTED:<kind>]` in the
   * archive; the store is only read. Entry ids, the tree and images stay as they are; the manifest
   * records the counts per kind (`redacted`). Default false: an archive is a backup.
   */
  redact?: boolean;
}

/**
 * What {@link exportArchive} wrote.
 * @category Archives
 */
export interface ExportSummary {
  /** One record per exported session, in the order given. */
  sessions: {
    /** The session's id (its header's). */
    id: string;
    /** Its member name in the zip. */
    member: string;
    /** The storage path it was read from. */
    originalPath: string;
    /** Entries in the exported session (the header not counted). */
    entries: number;
    /** Size of the member in bytes, uncompressed. */
    bytes: number;
    /** The branch's last entry, when only a branch was exported. */
    leafId?: string;
  }[];
  /** The blobs (images) written into the archive. */
  blobs: {
    /** How many. */
    count: number;
    /** Their bytes together. */
    bytes: number;
  };
  /** Referenced blobs the store does not have (the sessions keep their refs). */
  missingBlobs: string[];
  /** Sessions normalized on the way (migrated, damaged lines dropped). */
  warnings: string[];
  /** Bytes written to the sink. */
  archiveBytes: number;
  /** With `redact`: the secrets replaced, per kind (empty when there were none). */
  redacted?: Record<string, number>;
}

interface Member {
  bytes: Uint8Array;
  /** Bytes of the stored file that were read. */
  sourceSize: number;
  /** The member is the stored bytes as they are. */
  verbatim: boolean;
  manifest: ManifestSession;
  blobHashes: string[];
  warnings: string[];
  /** Secrets replaced, per kind (with `redact`). */
  redacted: RedactionCounts;
}

/**
 * Writes an archive of `sessions` (storage paths) to `sink`. The sink is closed when the archive
 * is complete and aborted when the export fails.
 * @category Archives
 */
export async function exportArchive(
  storage: StoragePort,
  sessions: readonly ExportSessionSpec[],
  sink: WritableStream<Uint8Array>,
  options: ExportOptions = {},
): Promise<ExportSummary> {
  const specs = sessions.map((spec) => (typeof spec === "string" ? { path: spec } : spec));
  const blobs = new BlobStore(storage);
  let manifest: ArchiveManifest;
  let missingBlobs: string[];
  const warnings: string[] = [];
  const firstReads: { sourceSize: number; verbatim: boolean }[] = [];
  // A single session is read once: its bytes stay from the first pass to the second. (With more,
  // memory holds one session at a time, and each is read again.)
  let onlyMember: Uint8Array | null = null;
  const redacted: RedactionCounts = {};
  try {
    const ids = new Set<string>();
    const manifestSessions: ManifestSession[] = [];
    const hashes = new Set<string>();
    for (const spec of specs) {
      const member = await readMember(storage, spec.path, spec.leafId, options);
      for (const [kind, count] of Object.entries(member.redacted)) redacted[kind] = (redacted[kind] ?? 0) + count;
      if (ids.has(member.manifest.id)) throw new ArchiveError("duplicate", `session ${member.manifest.id} is exported twice`, { member: spec.path });
      ids.add(member.manifest.id);
      manifestSessions.push(member.manifest);
      firstReads.push({ sourceSize: member.sourceSize, verbatim: member.verbatim });
      if (specs.length === 1) onlyMember = member.bytes;
      warnings.push(...member.warnings);
      for (const hash of member.blobHashes) hashes.add(hash);
      options.onProgress?.({ phase: "prepare", member: spec.path, done: ids.size, total: specs.length });
    }
    const manifestBlobs: ArchiveManifest["blobs"] = [];
    const missing: string[] = [];
    if (options.includeBlobs ?? true) {
      for (const hash of [...hashes].sort()) {
        const stat = await storage.stat(blobs.pathOf(hash));
        if (stat) manifestBlobs.push({ hash, bytes: stat.size });
        else missing.push(hash);
      }
    }
    missingBlobs = missing;
    manifest = {
      format: ARCHIVE_FORMAT,
      version: options.redact ? REDACTED_ARCHIVE_VERSION : ARCHIVE_VERSION,
      generator: options.generator ?? "sessionkit",
      created: new Date().toISOString(),
      sessions: manifestSessions,
      blobs: manifestBlobs,
      ...(options.redact ? { redacted } : {}),
    };
  } catch (error) {
    await sink.abort(error).catch(() => {});
    throw error;
  }

  let archiveBytes = 0;
  let failPipe!: (error: unknown) => void;
  const counter = new TransformStream<Uint8Array, Uint8Array>({
    start(controller) {
      failPipe = (error) => controller.error(error);
    },
    transform(chunk, controller) {
      archiveBytes += chunk.length;
      controller.enqueue(chunk);
    },
  });
  const piped = counter.readable.pipeTo(sink);
  const lastModDate = new Date(manifest.created);
  const writer = new ZipWriter(counter.writable, { useWebWorkers: options.useWebWorkers ?? false, lastModDate });
  const total = manifest.sessions.length + manifest.blobs.length;
  let done = 0;
  try {
    await writer.add(MANIFEST_NAME, new Uint8ArrayReader(new TextEncoder().encode(JSON.stringify(manifest, null, 2) + "\n")));
    for (const [i, entry] of manifest.sessions.entries()) {
      const spec = specs[i]!;
      let bytes = onlyMember;
      onlyMember = null;
      if (!bytes) {
        const { sourceSize, verbatim } = firstReads[i]!;
        bytes = verbatim ? await storage.read(spec.path, { offset: 0, length: sourceSize }) : (await readMember(storage, spec.path, spec.leafId, options, sourceSize)).bytes;
        if (!bytes || (await sha256Of(bytes, options.sha256)) !== entry.sha256) {
          throw new ArchiveError("changed-during-export", "the session was rewritten while it was exported", { member: spec.path });
        }
      }
      await addSession(writer, entry.path, bytes, options);
      options.onProgress?.({ phase: "export", member: entry.path, done: ++done, total });
    }
    const readBlob = async (blob: ArchiveManifest["blobs"][number]) => {
      const path = blobs.pathOf(blob.hash);
      const bytes = await storage.read(path);
      if (!bytes || bytes.length !== blob.bytes) throw new ArchiveError("changed-during-export", "the blob changed while it was exported", { member: path });
      const actual = await sha256Of(bytes, options.sha256);
      if (actual !== blob.hash) throw new ArchiveError("blob-hash", `the stored blob hashes to ${actual}: the store is corrupt`, { member: path });
      return { path, hash: blob.hash, bytes, checksum: await crc32(bytes, options.crc32) };
    };
    for await (const { path, hash, bytes, checksum } of inOrderAhead(manifest.blobs, BLOBS_AHEAD, readBlob)) {
      // Images are compressed already: stored, not deflated, with the CRC-32 taken above.
      await writer.add(blobMemberName(hash), streamOf([bytes]), { passThrough: true, compressionMethod: 0, uncompressedSize: bytes.length, crc32: checksum });
      options.onProgress?.({ phase: "export", member: path, done: ++done, total });
    }
    await writer.close();
    await piped;
  } catch (error) {
    failPipe(error);
    await piped.catch(() => {});
    throw error;
  }

  return {
    sessions: manifest.sessions.map((s) => ({
      id: s.id,
      member: s.path,
      originalPath: s.originalPath,
      entries: s.entries,
      bytes: s.bytes,
      ...(s.leafId === undefined ? {} : { leafId: s.leafId }),
    })),
    blobs: { count: manifest.blobs.length, bytes: manifest.blobs.reduce((n, b) => n + b.bytes, 0) },
    missingBlobs,
    warnings,
    archiveBytes,
    ...(options.redact ? { redacted } : {}),
  };
}

/** Adds a session member, deflated by zip.js or by `deflateSession`, its CRC-32 by `crc32` (ExportOptions). */
async function addSession(writer: ZipWriter<unknown>, name: string, bytes: Uint8Array, { deflateSession: deflate, crc32: newCrc32 }: ExportOptions): Promise<void> {
  if (!deflate) {
    await writer.add(name, new Uint8ArrayReader(bytes));
    return;
  }
  // The CRC-32 is taken here while the deflate runs elsewhere.
  const [compressed, checksum] = await Promise.all([deflate(bytes), crc32(bytes, newCrc32)]);
  await writer.add(name, streamOf(compressed), {
    passThrough: true,
    compressionMethod: 8,
    uncompressedSize: bytes.length,
    crc32: checksum,
  });
}

/**
 * `pieces` one after the other, as they are: zip.js's Uint8ArrayReader would copy them in slices,
 * and the pieces of a deflated session are not joined first.
 */
function streamOf(pieces: readonly Uint8Array[]): ReadableStream<Uint8Array> {
  let next = 0;
  return new ReadableStream<Uint8Array>({
    pull(controller) {
      if (next < pieces.length) controller.enqueue(pieces[next++]!);
      else controller.close();
    },
  });
}

/**
 * The member for a stored session: its bytes as stored when they are canonical v3, else the
 * session normalized to v3; one branch of it when `leafId` is given; redacted with `redact`. A
 * canonical file is scanned line by line, keeping only ids and blob refs; only a file that must be
 * rewritten (or redacted) is parsed whole.
 */
async function readMember(storage: StoragePort, path: string, leafId: string | undefined, options: ExportOptions, sourceSize?: number): Promise<Member> {
  const newSha256 = options.sha256;
  const raw = await storage.read(path, sourceSize === undefined ? undefined : { offset: 0, length: sourceSize });
  if (!raw) throw new ArchiveError("not-found", "no such session file", { member: path });
  const common = { path, sourceSize: raw.length, redacted: {} };
  if (leafId === undefined && !options.redact) {
    // Hashed while the lines are checked here: by crypto.subtle on the thread pool, or in place
    // by the `sha256` option's hash.
    const sha256 = sha256Of(raw, newSha256);
    sha256.catch(() => {});
    const scan = await scanSessionBytes(raw, path);
    if (isCanonicalScan(scan)) {
      const { header, entryIds, blobHashes } = scan;
      return member({ ...common, bytes: raw, sha256, verbatim: true, header, entries: entryIds.length, blobHashes, warnings: [] });
    }
  }
  const parsed = await parseSessionBytes(raw, path);
  const chosen = leafId === undefined ? parsed : await extractBranch(parsed, leafId, path);
  const redacted: RedactionCounts = {};
  let { header, entries } = chosen;
  if (options.redact) {
    // Loaded when asked: the rules (~80 KB) stay out of an app's bundle that never redacts.
    const { redactRecord } = await import("../secrets/redact.js");
    // On the parsed records, so what is written is valid JSON whatever a secret held.
    header = redactRecord(header, redacted);
    entries = entries.map((entry) => redactRecord(entry, redacted));
  }
  const bytes = encodeSession(parsed.dialect, header, entries);
  const warnings: string[] = [];
  if (leafId === undefined) {
    if (parsed.migratedFrom !== null) warnings.push(`${path}: migrated from v${parsed.migratedFrom} for the archive`);
    for (const problem of parsed.problems) warnings.push(`${path}: ${problem.message}`);
  }
  return member({ ...common, redacted, bytes, sha256: sha256Of(bytes, newSha256), verbatim: false, header, entries: entries.length, blobHashes: blobHashesOf(entries), warnings, leafId });
}

async function member(fields: {
  path: string;
  bytes: Uint8Array;
  sha256: Promise<string>;
  sourceSize: number;
  verbatim: boolean;
  header: SessionHeader;
  entries: number;
  blobHashes: string[];
  warnings: string[];
  redacted: RedactionCounts;
  leafId?: string;
}): Promise<Member> {
  const { path, header, leafId } = fields;
  if (!SESSION_ID_PATTERN.test(header.id)) throw new ArchiveError("unsafe-name", `session id ${JSON.stringify(header.id)} cannot name an archive member`, { member: path });
  if (typeof header.timestamp !== "string") throw new ArchiveError("bad-session", "the header has no timestamp", { member: path });
  return {
    bytes: fields.bytes,
    sourceSize: fields.sourceSize,
    verbatim: fields.verbatim,
    manifest: {
      id: header.id,
      path: sessionMemberName(header.id),
      originalPath: path,
      cwd: header.cwd ?? "",
      entries: fields.entries,
      bytes: fields.bytes.length,
      sha256: await fields.sha256,
      ...(leafId === undefined ? {} : { leafId }),
    },
    blobHashes: fields.blobHashes,
    warnings: fields.warnings,
    redacted: fields.redacted,
  };
}

function blobHashesOf(entries: readonly SessionEntry[]): string[] {
  const refs = new Set<string>();
  for (const entry of entries) collectBlobRefs(entry, refs);
  return [...refs].map((ref) => parseBlobRef(ref)).filter((hash): hash is string => hash !== null);
}
