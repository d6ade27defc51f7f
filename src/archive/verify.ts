/**
 * Validation of a whole archive before anything is written: the zip structure (zip-read.ts), the
 * manifest against the members, every blob re-hashed, every session parsed.
 */
import type { SessionDialect } from "../format/dialect.js";
import { sha256Hex } from "../blobs/blob-store.js";
import { CURRENT_SESSION_VERSION, type SessionHeader } from "../format/types.js";
import { forEachInOrder } from "./concurrency.js";
import { ArchiveError } from "./errors.js";
import { sha256Incremental, type NewCrc32, type NewSha256 } from "./hashes.js";
import { resolveLimits, type ArchiveLimits } from "./limits.js";
import { MANIFEST_NAME, parseManifest, sessionMemberName, blobMemberName, type ArchiveManifest, type ManifestSession } from "./manifest.js";
import { countLines, scanSessionBytes, type SessionScan } from "./session-bytes.js";
import { openZip, type ArchiveSource, type InflateRaw, type OpenedZip, type ZipMember } from "./zip-read.js";

/**
 * Progress of an export, import or verification, as the `onProgress` options receive it.
 * @category Archives
 */
export interface ArchiveProgress {
  /** Export: "prepare" (first read of each session), then "export"; import: "verify", then "write". */
  phase: "prepare" | "export" | "verify" | "write";
  /** The member (or storage path) being worked on. */
  member: string;
  /** Members done in this phase, and how many there are. */
  done: number;
  /** Members this phase works through. */
  total: number;
}

/**
 * How {@link verifyArchive} (and {@link sessionkit/archives!importArchive | importArchive}) read an archive; every option
 * has a default.
 * @category Archives
 */
export interface ReadArchiveOptions {
  /** Raises (or lowers) the safety limits against hostile archives; unnamed ones keep {@link DEFAULT_LIMITS}. */
  limits?: Partial<ArchiveLimits>;
  /** Called as members are verified (and, in an import, written). */
  onProgress?: (progress: ArchiveProgress) => void;
  /** Let zip.js inflate in web workers (browsers). Default false: inline, the same everywhere. */
  useWebWorkers?: boolean;
  /**
   * Makes the raw-deflate decompressor sessions are inflated with; default
   * `new DecompressionStream("deflate-raw")`. Node's inflates in 16 KiB pieces, each a round trip
   * to the thread pool: pass node-fs's `nodeInflateRaw` there (~3× faster).
   */
  inflateRaw?: InflateRaw;
  /**
   * Makes the incremental SHA-256 a session is hashed with as it inflates; default hash-wasm's
   * (hashes.ts). Node's node:crypto is ~5× faster: node-fs's `nodeSha256`. Blobs are hashed by
   * crypto.subtle, off the main thread, which the session's checks keep busy (an import with
   * node:crypto hashing the blobs there: +40 ms of 900).
   */
  sha256?: NewSha256;
  /**
   * Makes the incremental CRC-32 every member is checked with; default hash-wasm's (hashes.ts).
   * Node's zlib.crc32 is ~2.5× faster: node-fs's `nodeCrc32`.
   */
  crc32?: NewCrc32;
}

interface VerifiedSession {
  member: string;
  manifest: ManifestSession;
  /** The dialect the member is written in. */
  dialect: SessionDialect;
  header: SessionHeader;
  entryIds: string[];
  /** Hashes of the blobs its entries reference. */
  blobRefs: string[];
  /** An entry holds an inline image a blob store would move out. */
  inlineImages: boolean;
}

export interface VerifiedArchive {
  manifest: ArchiveManifest;
  sessions: VerifiedSession[];
  zip: OpenedZip;
  /** A member's bytes, checked again against the hash verified (the source could change). */
  readVerified(member: string): Promise<Uint8Array>;
  close(): Promise<void>;
}

/**
 * What {@link verifyArchive} found in a valid archive (an invalid one throws instead).
 * @category Archives
 */
export interface VerifySummary {
  /** Always true: a failed check throws an ArchiveError. */
  ok: true;
  /** The manifest's format name. */
  format: string;
  /** The manifest's "major.minor" format version. */
  version: string;
  /** What wrote the archive (the manifest's `generator`, e.g. "sessionkit"). */
  generator: string;
  /** When the archive was written (ISO 8601, from the manifest). */
  created: string;
  /** Size of the zip file. */
  archiveBytes: number;
  /** The archive's sessions, as its manifest lists them. */
  sessions: {
    /** The session's id. */
    id: string;
    /** The zip member holding it. */
    member: string;
    /** The working directory the session belongs to. */
    cwd: string;
    /** Entries in the session (the header not counted). */
    entries: number;
    /** The member's size, uncompressed. */
    bytes: number;
    /** Set when the member holds only the branch that ends at this entry. */
    leafId?: string;
  }[];
  /** The blobs (images) in the archive. */
  blobs: {
    /** How many. */
    count: number;
    /** Their bytes together. */
    bytes: number;
  };
  /** Blob refs of the sessions whose blob is not in the archive (exported without blobs). */
  blobsNotInArchive: string[];
  /** Set when the archive was exported redacted: the secrets replaced, per kind (the manifest's). */
  redacted?: Record<string, number>;
}

/** A manifest lists ~300 bytes per session: this is room for far more sessions than maxEntries. */
const MAX_MANIFEST_BYTES = 64 * 1024 * 1024;

/**
 * Deflated members (sessions) are kept in memory after their check up to this much, so a commit
 * does not inflate them again. Stored members (blobs) are not kept: reading one again is one
 * range of the source, cheaper than holding 40 MB of images through the import.
 */
const CACHE_BUDGET_BYTES = 64 * 1024 * 1024;

/**
 * Blobs checked at once: a few, so one's reads and hashing overlap another's; errors and progress
 * stay in manifest order.
 */
const VERIFY_CONCURRENCY = 4;

/** Checks everything; throws the first ArchiveError. The caller closes the result. */
export async function openVerifiedArchive(source: ArchiveSource, options: ReadArchiveOptions = {}): Promise<VerifiedArchive> {
  const limits = resolveLimits(options.limits);
  const zip = await openZip(source, limits, { useWebWorkers: options.useWebWorkers, inflateRaw: options.inflateRaw, crc32: options.crc32 });
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

  const newSha256 = options.sha256 ?? sha256Incremental;
  const cached = cachePlan(manifest, zip);
  const cache = new Map<string, Uint8Array>();
  const total = manifest.blobs.length + manifest.sessions.length;
  let done = 0;
  const progress = (member: string) => options.onProgress?.({ phase: "verify", member, done: ++done, total });

  // Blobs and sessions are checked at the same time (a session inflates on the thread pool in Node
  // and is hashed and parsed here while blobs are read and hashed); a blob's failure is reported
  // before a session's, as if they ran one after the other.
  const blobsChecked = forEachInOrder(
    manifest.blobs,
    VERIFY_CONCURRENCY,
    async (blob) => {
      const name = blobMemberName(blob.hash);
      const bytes = await zip.read(zip.byName.get(name)!);
      const actual = await sha256Hex(bytes);
      if (actual !== blob.hash) throw new ArchiveError("blob-hash", `the bytes hash to ${actual}, not to the blob's name`, { member: name });
      return name;
    },
    progress,
  );
  const sessions: VerifiedSession[] = [];
  const sessionsChecked = (async () => {
    for (const entry of manifest.sessions) {
      const scan = await verifySession(zip, entry, limits, newSha256);
      sessions.push({ member: entry.path, manifest: entry, dialect: scan.dialect, header: scan.header, entryIds: scan.entryIds, blobRefs: scan.blobHashes, inlineImages: scan.inlineImages });
      if (cached.has(entry.path)) cache.set(entry.path, scan.bytes);
      progress(entry.path);
    }
  })();
  const [blobsOutcome, sessionsOutcome] = await Promise.allSettled([blobsChecked, sessionsChecked]);
  if (blobsOutcome.status === "rejected") throw blobsOutcome.reason;
  if (sessionsOutcome.status === "rejected") throw sessionsOutcome.reason;

  return {
    manifest,
    sessions,
    zip,
    async readVerified(name) {
      const hit = cache.get(name);
      if (hit) return hit;
      const { bytes, sha256 } = await readHashed(zip, zip.byName.get(name)!, newSha256);
      if (sha256 !== expected.get(name)) throw new ArchiveError("manifest-mismatch", "the member changed after it was verified", { member: name });
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

/** The deflated members kept after their check, chosen from the manifest before anything is read. */
function cachePlan(manifest: ArchiveManifest, zip: OpenedZip): Set<string> {
  const plan = new Set<string>();
  let planned = 0;
  for (const session of manifest.sessions) {
    if (zip.byName.get(session.path)!.entry.compressionMethod === 0 || planned + session.bytes > CACHE_BUDGET_BYTES) continue;
    plan.add(session.path);
    planned += session.bytes;
  }
  return plan;
}

/**
 * A verified member's bytes read again, and their sha256. A deflated member is inflated (every
 * check again) and hashed as it inflates (hashes.ts: no second copy of it in memory); a stored
 * one is its range of the source again, hashed by crypto.subtle (off the main thread).
 */
async function readHashed(zip: OpenedZip, member: ZipMember, newSha256: NewSha256): Promise<{ bytes: Uint8Array; sha256: string }> {
  if (member.entry.compressionMethod === 0) {
    const bytes = await zip.readStoredAgain(member);
    return { bytes, sha256: await sha256Hex(bytes) };
  }
  const hash = await newSha256();
  const bytes = await zip.inflate(member, (chunk) => hash.update(chunk)).done;
  return { bytes, sha256: hash.hex() };
}

/**
 * A session member inflated, hashed and its lines checked one at a time while it inflates; only
 * ids, header and blob refs are kept. Failures are reported in the order of the rules: the zip
 * (size, CRC-32), the manifest's sha256, maxSessionLines, then the lines.
 */
async function verifySession(
  zip: OpenedZip,
  entry: ManifestSession,
  limits: ArchiveLimits,
  newSha256: NewSha256,
): Promise<SessionScan & { bytes: Uint8Array }> {
  const member = entry.path;
  // Hashed as it inflates: crypto.subtle would copy the whole member while the scan runs.
  const hash = await newSha256();
  const inflating = zip.inflate(zip.byName.get(member)!, (chunk) => hash.update(chunk));
  // The scan counts the lines and stops past the limit; that is reported below, in its turn.
  const scanned = scanSessionBytes(inflating.bytes, member, (end) => inflating.available(end), limits.maxSessionLines).then(
    (scan) => ({ scan }),
    (error: unknown) => ({ error }),
  );
  const bytes = await inflating.done;
  const actual = hash.hex();
  if (actual !== entry.sha256) throw new ArchiveError("manifest-mismatch", `sha256 is ${actual}, the manifest says ${entry.sha256}`, { member });
  const result = await scanned;
  // A scan that stopped (at the limit, or at a header that is not one) has not counted them all.
  const lines = "scan" in result ? result.scan.lines : countLines(bytes);
  if (lines > limits.maxSessionLines) throw new ArchiveError("too-many-lines", `${lines} lines, over limit maxSessionLines ${limits.maxSessionLines}`, { member });
  if ("error" in result) throw result.error;
  const { scan } = result;
  const problem = scan.problems[0];
  if (problem) throw new ArchiveError("bad-session", `${problem.message}`, { member });
  if (scan.tail.kind !== "clean") throw new ArchiveError("bad-session", "the last line has no newline", { member });
  if (scan.version !== CURRENT_SESSION_VERSION) {
    throw new ArchiveError("bad-session", `session format version ${String(scan.version)}; archives hold version ${CURRENT_SESSION_VERSION}`, { member });
  }
  const { header } = scan;
  if (header.id !== entry.id) throw new ArchiveError("bad-session", `the header's session id is ${JSON.stringify(header.id)}, the member is named for ${entry.id}`, { member });
  if (typeof header.timestamp !== "string") throw new ArchiveError("bad-session", "the header has no timestamp", { member });
  if (scan.entryIds.length !== entry.entries) {
    throw new ArchiveError("manifest-mismatch", `the manifest says ${entry.entries} entries, the session has ${scan.entryIds.length}`, { member });
  }
  if ((header.cwd ?? "") !== entry.cwd) {
    throw new ArchiveError("manifest-mismatch", `the manifest says cwd ${JSON.stringify(entry.cwd)}, the header ${JSON.stringify(header.cwd ?? "")}`, { member });
  }
  return { ...scan, bytes };
}

/**
 * Verifies an archive without a store: the checks of an import, nothing written.
 *
 * @throws ArchiveError naming the first rule the archive breaks
 * @category Archives
 */
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
      ...(manifest.redacted ? { redacted: manifest.redacted } : {}),
    };
  } finally {
    await archive.close();
  }
}
