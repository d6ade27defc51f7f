/**
 * Validation of a whole archive before anything is written: the zip structure (zip-read.ts), the
 * manifest against the members, every blob re-hashed, every session parsed.
 */
import { parseBlobRef, sha256Hex } from "../blobs/blob-store.js";
import { collectBlobRefs } from "../blobs/images.js";
import { CURRENT_SESSION_VERSION, type SessionHeader } from "../format/types.js";
import { ArchiveError } from "./errors.js";
import { resolveLimits, type ArchiveLimits } from "./limits.js";
import { MANIFEST_NAME, parseManifest, sessionMemberName, blobMemberName, type ArchiveManifest, type ManifestSession } from "./manifest.js";
import { countLines, parseSessionBytes, type ParsedSession } from "./session-bytes.js";
import { openZip, type ArchiveSource, type OpenedZip } from "./zip-read.js";

export interface ArchiveProgress {
  /** Export: "prepare" (first read of each session), then "export"; import: "verify", then "write". */
  phase: "prepare" | "export" | "verify" | "write";
  /** The member (or storage path) being worked on. */
  member: string;
  /** Members done in this phase, and how many there are. */
  done: number;
  total: number;
}

export interface ReadArchiveOptions {
  limits?: Partial<ArchiveLimits>;
  onProgress?: (progress: ArchiveProgress) => void;
  /** Let zip.js inflate in web workers (browsers). Default false: inline, the same everywhere. */
  useWebWorkers?: boolean;
}

export interface VerifiedSession {
  member: string;
  manifest: ManifestSession;
  header: SessionHeader;
  entryIds: string[];
  /** Hashes of the blobs its entries reference. */
  blobRefs: string[];
}

export interface VerifiedArchive {
  manifest: ArchiveManifest;
  sessions: VerifiedSession[];
  zip: OpenedZip;
  /** A member's bytes, checked again against the hash verified (the source could change). */
  readVerified(member: string): Promise<Uint8Array>;
  close(): Promise<void>;
}

export interface VerifySummary {
  ok: true;
  format: string;
  version: string;
  generator: string;
  created: string;
  archiveBytes: number;
  sessions: { id: string; member: string; cwd: string; entries: number; bytes: number; leafId?: string }[];
  blobs: { count: number; bytes: number };
  /** Blob refs of the sessions whose blob is not in the archive (exported without blobs). */
  blobsNotInArchive: string[];
}

/** A manifest lists ~300 bytes per session: this is room for far more sessions than maxEntries. */
const MAX_MANIFEST_BYTES = 64 * 1024 * 1024;

/** Verified members are kept in memory up to this much, so a commit does not inflate them again. */
const CACHE_BUDGET_BYTES = 64 * 1024 * 1024;

/** Checks everything; throws the first ArchiveError. The caller closes the result. */
export async function openVerifiedArchive(source: ArchiveSource, options: ReadArchiveOptions = {}): Promise<VerifiedArchive> {
  const limits = resolveLimits(options.limits);
  const zip = await openZip(source, limits, { useWebWorkers: options.useWebWorkers });
  try {
    return await verify(zip, limits, options);
  } catch (error) {
    await zip.close().catch(() => {});
    throw error;
  }
}

async function verify(zip: OpenedZip, limits: ArchiveLimits, options: ReadArchiveOptions): Promise<VerifiedArchive> {
  const manifestMember = zip.byName.get(MANIFEST_NAME);
  if (!manifestMember) throw new ArchiveError("bad-manifest", "the archive has no manifest.json", { member: MANIFEST_NAME });
  if (manifestMember.entry.uncompressedSize > MAX_MANIFEST_BYTES) {
    throw new ArchiveError("too-large", `${manifestMember.entry.uncompressedSize} bytes, over the ${MAX_MANIFEST_BYTES} a manifest may have`, { member: MANIFEST_NAME });
  }
  const manifest = parseManifest(await zip.read(manifestMember));
  const expected = checkManifestAgainstMembers(manifest, zip);

  const cache = new Map<string, Uint8Array>();
  let cached = 0;
  const keep = (name: string, bytes: Uint8Array) => {
    if (cached + bytes.length > CACHE_BUDGET_BYTES) return;
    cache.set(name, bytes);
    cached += bytes.length;
  };
  const total = manifest.blobs.length + manifest.sessions.length;
  let done = 0;
  const progress = (member: string) => options.onProgress?.({ phase: "verify", member, done: ++done, total });

  for (const blob of manifest.blobs) {
    const name = blobMemberName(blob.hash);
    const bytes = await zip.read(zip.byName.get(name)!);
    const actual = await sha256Hex(bytes);
    if (actual !== blob.hash) throw new ArchiveError("blob-hash", `the bytes hash to ${actual}, not to the blob's name`, { member: name });
    keep(name, bytes);
    progress(name);
  }

  const sessions: VerifiedSession[] = [];
  for (const entry of manifest.sessions) {
    const bytes = await zip.read(zip.byName.get(entry.path)!);
    const actual = await sha256Hex(bytes);
    if (actual !== entry.sha256) throw new ArchiveError("manifest-mismatch", `sha256 is ${actual}, the manifest says ${entry.sha256}`, { member: entry.path });
    const parsed = await parseArchivedSession(bytes, entry, limits);
    const refs = new Set<string>();
    for (const e of parsed.entries) collectBlobRefs(e, refs);
    sessions.push({
      member: entry.path,
      manifest: entry,
      header: parsed.header,
      entryIds: parsed.entries.map((e) => e.id),
      blobRefs: [...refs].map((ref) => parseBlobRef(ref)).filter((hash): hash is string => hash !== null),
    });
    keep(entry.path, bytes);
    progress(entry.path);
  }

  return {
    manifest,
    sessions,
    zip,
    async readVerified(name) {
      const hit = cache.get(name);
      if (hit) return hit;
      const bytes = await zip.read(zip.byName.get(name)!);
      if ((await sha256Hex(bytes)) !== expected.get(name)) throw new ArchiveError("manifest-mismatch", "the member changed after it was verified", { member: name });
      return bytes;
    },
    close: () => zip.close(),
  };
}

/** Every member listed, every listing a member, sizes as the directory declares. Returns name → sha256. */
function checkManifestAgainstMembers(manifest: ArchiveManifest, zip: OpenedZip): Map<string, string> {
  const expected = new Map<string, string>();
  const listed = (name: string, sha256: string, bytes: number) => {
    if (expected.has(name)) throw new ArchiveError("manifest-mismatch", "listed twice in the manifest", { member: name });
    const member = zip.byName.get(name);
    if (!member) throw new ArchiveError("manifest-mismatch", "listed in the manifest but not in the archive", { member: name });
    if (member.entry.uncompressedSize !== bytes) {
      throw new ArchiveError("manifest-mismatch", `the manifest says ${bytes} bytes, the member has ${member.entry.uncompressedSize}`, { member: name });
    }
    expected.set(name, sha256);
  };
  for (const session of manifest.sessions) {
    if (session.path !== sessionMemberName(session.id)) {
      throw new ArchiveError("manifest-mismatch", `session ${session.id} must be the member ${sessionMemberName(session.id)}`, { member: session.path });
    }
    listed(session.path, session.sha256, session.bytes);
  }
  for (const blob of manifest.blobs) listed(blobMemberName(blob.hash), blob.hash, blob.bytes);
  for (const member of zip.members) {
    if (member.kind.kind !== "manifest" && !expected.has(member.name)) {
      throw new ArchiveError("manifest-mismatch", "in the archive but not listed in the manifest", { member: member.name });
    }
  }
  return expected;
}

async function parseArchivedSession(bytes: Uint8Array, entry: ManifestSession, limits: ArchiveLimits): Promise<ParsedSession> {
  const member = entry.path;
  const lines = countLines(bytes);
  if (lines > limits.maxSessionLines) throw new ArchiveError("too-many-lines", `${lines} lines, over limit maxSessionLines ${limits.maxSessionLines}`, { member });
  const parsed = await parseSessionBytes(bytes, member);
  const problem = parsed.problems[0];
  if (problem) throw new ArchiveError("bad-session", `${problem.message}`, { member });
  if (parsed.tail.kind !== "clean") throw new ArchiveError("bad-session", "the last line has no newline", { member });
  // The reader migrates older versions in memory: `migratedFrom` tells what the member holds.
  const version = parsed.migratedFrom ?? parsed.header.version;
  if (version !== CURRENT_SESSION_VERSION) {
    throw new ArchiveError("bad-session", `session format version ${String(version)}; archives hold version ${CURRENT_SESSION_VERSION}`, { member });
  }
  if (parsed.header.id !== entry.id) throw new ArchiveError("bad-session", `the header's session id is ${JSON.stringify(parsed.header.id)}, the member is named for ${entry.id}`, { member });
  if (typeof parsed.header.timestamp !== "string") throw new ArchiveError("bad-session", "the header has no timestamp", { member });
  if (parsed.entries.length !== entry.entries) {
    throw new ArchiveError("manifest-mismatch", `the manifest says ${entry.entries} entries, the session has ${parsed.entries.length}`, { member });
  }
  if ((parsed.header.cwd ?? "") !== entry.cwd) {
    throw new ArchiveError("manifest-mismatch", `the manifest says cwd ${JSON.stringify(entry.cwd)}, the header ${JSON.stringify(parsed.header.cwd ?? "")}`, { member });
  }
  return parsed;
}

/** Verifies an archive without a store: the checks of an import, nothing written. */
export async function verifyArchive(source: ArchiveSource, options: ReadArchiveOptions = {}): Promise<VerifySummary> {
  const archive = await openVerifiedArchive(source, options);
  try {
    const { manifest } = archive;
    const inArchive = new Set(manifest.blobs.map((b) => b.hash));
    const notInArchive = new Set<string>();
    for (const session of archive.sessions) for (const hash of session.blobRefs) if (!inArchive.has(hash)) notInArchive.add(hash);
    return {
      ok: true,
      format: manifest.format,
      version: manifest.version,
      generator: manifest.generator,
      created: manifest.created,
      archiveBytes: archive.zip.size,
      sessions: manifest.sessions.map((s) => ({ id: s.id, member: s.path, cwd: s.cwd, entries: s.entries, bytes: s.bytes, ...(s.leafId === undefined ? {} : { leafId: s.leafId }) })),
      blobs: { count: manifest.blobs.length, bytes: manifest.blobs.reduce((n, b) => n + b.bytes, 0) },
      blobsNotInArchive: [...notInArchive].sort(),
    };
  } finally {
    await archive.close();
  }
}
