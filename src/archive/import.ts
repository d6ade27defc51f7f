/**
 * Importing archives and plain session files. All or nothing: everything is validated and every
 * decision planned before the first write; a storage failure while committing undoes what was
 * written. Sessions are written in the form of the store's owner (session/store-owner.ts): its
 * dialect and its images, inline or as blob refs, whatever form they came in.
 */
import { BlobStore, parseBlobRef, sha256Hex } from "../blobs/blob-store.js";
import { collectBlobRefs, hasImagesToConvert, hasImagesToExternalize, imagesInForm, type BlobReader, type BlobWriter, type ImageForm } from "../blobs/images.js";
import { encodeRecord, type SessionDialect } from "../format/dialect.js";
import { encodeJsonl } from "../format/session-file.js";
import type { SessionEntry, SessionHeader } from "../format/types.js";
import { checkStoragePath, isStorageError, joinPath, type StorageLock, type StoragePort } from "../port.js";
import { storeSessionDir, storeSessionFileName, type StoreLayout } from "../session/paths.js";
import { defaultStoreOwner, ownerLayout, storeDialect, storeImageForm, type StoreOwner } from "../session/store-owner.js";
import { bytesPort } from "./bytes-port.js";
import { forEachInOrder } from "./concurrency.js";
import { ArchiveError } from "./errors.js";
import { resolveLimits } from "./limits.js";
import { blobMemberName, SESSION_ID_PATTERN } from "./manifest.js";
import { countLines, encodeSession, isCanonical, parseSessionBytes, stableSessionId, type ParsedSession } from "./session-bytes.js";
import { indexStoredSessions, type StoredSessionIndex } from "./store-index.js";
import { openVerifiedArchive, type ArchiveProgress, type ReadArchiveOptions } from "./verify.js";
import type { ArchiveSource } from "./zip-read.js";

/**
 * What to do with a session whose id is already stored:
 * - "auto": identical → skip; the incoming one extends the stored one (the stored entries are a
 *   prefix of it, by id) → append the new entries; the stored one already holds all incoming
 *   entries → skip; diverged → import as a fork.
 * - "skip": keep the stored one.
 * - "replace": overwrite the stored file with the incoming one.
 * - "fork": import as a fork, whatever the relation.
 * A fork is a new session (new id, new file) whose header `parentSession` is the stored path. Its
 * id is derived from that path and the incoming bytes, so importing the same thing again finds
 * the fork and skips it.
 * @category Archives
 */
export type ConflictPolicy = "auto" | "skip" | "replace" | "fork";

/**
 * How {@link importArchive} and {@link importSessionFiles} import; every option has a default.
 * @category Archives
 */
export interface ImportOptions extends ReadArchiveOptions {
  /** What to do with a session whose id is already stored; default "auto" (see {@link ConflictPolicy}). */
  onConflict?: ConflictPolicy;
  /**
   * The layout of the store imported into: where a new session file goes and its name (see
   * StoreLayout). Default: the owner's, else "pi".
   */
  layout?: StoreLayout;
  /**
   * Whose store it is (see StoreOwner), so the form sessions are written in: an agent's store gets
   * the agent's dialect and images (inline for pi, indusagi, xcsh and the Python agent, blob refs
   * for oh-my-pi); sessionkit's own stores keep each session's dialect and move large images to
   * `blobs/`. Default as SessionManager's: "sessionkit" on ports no agent reads (IndexedDB, OPFS,
   * PostgreSQL, memory), else the layout's agent.
   */
  owner?: StoreOwner;
  /**
   * A store the imported sessions' blob refs also resolve in (its `blobs/`), after the archive's
   * blobs and before the target store's: the store plain files were copied out of.
   */
  sourceBlobs?: StoragePort;
  /** Validate and plan, write nothing: the summary says what would happen. */
  dryRun?: boolean;
}

/**
 * What an import did with one session: wrote a new file, skipped it (already stored), appended
 * its new entries to the stored one, overwrote the stored one, or stored it as a fork.
 * @category Archives
 */
export type ImportAction = "created" | "skipped" | "extended" | "replaced" | "forked";

/**
 * One session of an import, as {@link ImportSummary.sessions} lists it.
 * @category Archives
 */
export interface ImportedSession {
  /** The archive member or file name the session came from. */
  source: string;
  /** The id as stored (a fork's new id). */
  id: string;
  /** What the import did with it. */
  action: ImportAction;
  /** The storage path written, or the stored session matched when skipped. */
  path: string;
  /** Entries of the incoming session. */
  entries: number;
  /** Entries this import adds to storage. */
  newEntries: number;
  /** For forks: the stored session the incoming one diverged from. */
  parentSession?: string;
  /** Why it took that action, in a sentence (e.g. "diverged from the stored session: imported as a fork"). */
  reason: string;
}

/**
 * What an import did (or, with `dryRun`, would do).
 * @category Archives
 */
export interface ImportSummary {
  /** True when nothing was written (`dryRun`). */
  dryRun: boolean;
  /** Every incoming session and what became of it, in the input's order. */
  sessions: ImportedSession[];
  /** The blobs (images) the imported sessions bring. */
  blobs: {
    /** Blobs written to the store. */
    written: number;
    /** Blobs the store held already (not written again). */
    present: number;
    /** Bytes of the blobs written. */
    bytesWritten: number;
  };
  /** Blobs that imported sessions reference but neither the archive nor the store holds. */
  missingBlobs: string[];
  /** Repairs and migrations done on the way, and missing blobs, one line each. */
  warnings: string[];
  /** Set when the archive was exported redacted: the secrets replaced, per kind (its manifest's). */
  redacted?: Record<string, number>;
}

/** A session ready to be placed: validated, its entry ids known, its bytes available again. */
interface Candidate {
  source: string;
  dialect: SessionDialect;
  header: SessionHeader;
  entryIds: string[];
  sha256: string;
  blobRefs: string[];
  /** An entry holds an inline image a blob store would move out. */
  inlineImages: boolean;
  bytes(): Promise<Uint8Array>;
  entries(): Promise<SessionEntry[]>;
}

interface BlobSource {
  hash: string;
  size: number;
  /** Bytes that hash to `hash`: checked when verified, and again when read back from an archive. */
  read(): Promise<Uint8Array>;
}

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

function blobRefsOf(entries: readonly SessionEntry[]): string[] {
  const refs = new Set<string>();
  for (const entry of entries) collectBlobRefs(entry, refs);
  return hashesOf(refs);
}

function hashesOf(refs: Iterable<string>): string[] {
  const out: string[] = [];
  for (const ref of refs) {
    const hash = parseBlobRef(ref);
    if (hash) out.push(hash);
  }
  return out;
}

// =============================================================================
// The store's form
// =============================================================================

/**
 * The form the store imported into keeps (its owner's: session/store-owner.ts), and each incoming
 * session converted to it on the way in. Blob refs resolve from the import's blobs, then the
 * source store's (`sourceBlobs`), then the store's own; images moved out are staged here and
 * written to the store before the sessions.
 */
class StoreForm {
  readonly owner: StoreOwner;
  readonly layout: StoreLayout;
  readonly images: ImageForm;
  readonly #staged = bytesPort();
  readonly #blobs: BlobReader & BlobWriter;
  readonly #source: BlobStore | null;

  constructor(storage: StoragePort, imported: readonly BlobSource[], options: ImportOptions) {
    this.layout = options.layout ?? (options.owner && ownerLayout(options.owner)) ?? "pi";
    this.owner = options.owner ?? defaultStoreOwner(storage, this.layout);
    this.images = storeImageForm(this.owner);
    const byHash = new Map(imported.map((blob) => [blob.hash, blob]));
    const staged = new BlobStore(this.#staged);
    const source = (this.#source = options.sourceBlobs ? new BlobStore(options.sourceBlobs) : null);
    const stored = new BlobStore(storage);
    this.#blobs = {
      get: async (ref) => {
        const blob = byHash.get(parseBlobRef(ref) ?? "");
        if (blob) return blob.read();
        return (await staged.get(ref)) ?? (await source?.get(ref)) ?? (await stored.get(ref));
      },
      put: (bytes) => staged.put(bytes),
    };
  }

  /** `entries` with their images in the store's form (a ref that resolves nowhere stays: see placeSessions). */
  async entries(entries: readonly SessionEntry[]): Promise<SessionEntry[]> {
    const out: SessionEntry[] = [];
    for (const entry of entries) out.push(hasImagesToConvert(entry, this.images) ? await imagesInForm(entry, this.images, this.#blobs, () => {}) : entry);
    return out;
  }

  /**
   * The candidate as the store will hold it. A converted session is converted again when its bytes
   * are written (the same bytes: conversion is deterministic), so memory holds one at a time.
   */
  async candidate(candidate: Candidate): Promise<Candidate> {
    const dialect = storeDialect(this.owner, this.layout, candidate.dialect);
    const images = this.images === "inline" ? candidate.blobRefs.length > 0 : candidate.inlineImages;
    if (dialect === candidate.dialect && !images) return candidate;
    const convert = async () => {
      const entries = await this.entries(await candidate.entries());
      return { entries, bytes: encodeSession(dialect, candidate.header, entries) };
    };
    const { entries, bytes } = await convert();
    return {
      ...candidate,
      dialect,
      sha256: await sha256Hex(bytes),
      blobRefs: blobRefsOf(entries),
      inlineImages: entries.some(hasImagesToExternalize),
      bytes: async () => (await convert()).bytes,
      entries: async () => (await convert()).entries,
    };
  }

  /** The blobs images were moved into on the way in. */
  staged(): BlobSource[] {
    return [...this.#staged.files].map(([path, bytes]) => ({ hash: path.slice(path.lastIndexOf("/") + 1), size: bytes.length, read: async () => bytes }));
  }

  /** A blob of the source store (checked against its name when read), or null. */
  async sourceBlob(hash: string): Promise<BlobSource | null> {
    const source = this.#source;
    const stat = source && (await source.storage.stat(source.pathOf(hash)));
    if (!source || !stat) return null;
    const path = source.pathOf(hash);
    return {
      hash,
      size: stat.size,
      read: async () => {
        const bytes = await source.storage.read(path);
        const actual = bytes && (await sha256Hex(bytes));
        if (!bytes || actual !== hash) throw new ArchiveError("blob-hash", `the source store's blob ${bytes ? `hashes to ${actual}` : "vanished"}`, { member: path });
        return bytes;
      },
    };
  }
}

// =============================================================================
// Planning
// =============================================================================

/** A session as storage holds it, or will once the planned writes are made. */
interface KnownSession {
  path: string;
  /** The dialect of the stored file (appends to it are written in it). */
  dialect: SessionDialect;
  entryIds: string[];
  /** sha256 of its bytes, computed when a "replace" needs it. */
  sha256: () => Promise<string>;
  /** Set for a stored file that is not canonical v3 (older version, damaged lines or tail). */
  needsRewrite: { parsed: ParsedSession; original: Uint8Array } | null;
}

type WriteOp =
  | { kind: "write"; path: string; bytes: () => Promise<Uint8Array>; locks: boolean }
  | { kind: "append"; path: string; bytes: () => Promise<Uint8Array>; locks: boolean };

class Planner {
  readonly known = new Map<string, KnownSession | null>();
  readonly ops: WriteOp[] = [];
  readonly sessions: ImportedSession[] = [];
  /** Paths that new files will take (no two candidates may create the same one). */
  readonly creating = new Set<string>();

  constructor(
    readonly storage: StoragePort,
    readonly index: StoredSessionIndex,
    readonly policy: ConflictPolicy,
    readonly form: StoreForm,
  ) {}

  async lookup(id: string): Promise<KnownSession | null> {
    if (this.known.has(id)) return this.known.get(id)!;
    let found: KnownSession | null = null;
    for (const path of this.index.pathsFor(id)) {
      const bytes = await this.storage.read(path);
      if (!bytes) continue;
      let parsed: ParsedSession;
      try {
        parsed = await parseSessionBytes(bytes, path);
      } catch {
        continue; // not a session: it is not the one we look for
      }
      if (parsed.header.id !== id) continue;
      found = {
        path,
        dialect: parsed.dialect,
        entryIds: parsed.entries.map((e) => e.id),
        sha256: () => sha256Hex(bytes),
        needsRewrite: isCanonical(parsed) ? null : { parsed, original: bytes },
      };
      break;
    }
    this.known.set(id, found);
    return found;
  }

  async place(candidate: Candidate): Promise<void> {
    const id = candidate.header.id;
    const stored = await this.lookup(id);
    if (!stored) return this.create(candidate, candidate.header, "new session");
    const relation = relate(stored.entryIds, candidate.entryIds);
    switch (this.policy) {
      case "skip":
        return this.skip(candidate, stored, "a session with this id is stored (onConflict skip)");
      case "replace":
        if ((await stored.sha256()) === candidate.sha256) return this.skip(candidate, stored, "identical to the stored session");
        return this.replace(candidate, stored);
      case "fork":
        return this.fork(candidate, stored);
      case "auto":
        if (relation === "same") return this.skip(candidate, stored, "identical to the stored session");
        if (relation === "stored-has-more") return this.skip(candidate, stored, "the stored session already holds all its entries");
        if (relation === "extends") return this.extend(candidate, stored);
        return this.fork(candidate, stored);
    }
  }

  async targetPath(header: SessionHeader, id: string, source: string): Promise<string> {
    const { layout } = this.form;
    const fileName = storeSessionFileName(layout, header.timestamp, id);
    const path = joinPath(storeSessionDir(layout, header.cwd ?? ""), fileName);
    try {
      checkStoragePath(path);
    } catch {
      throw new ArchiveError("unsafe-name", `the session's cwd or timestamp makes an invalid storage path ${JSON.stringify(path)}`, { member: source });
    }
    if (!/^[A-Za-z0-9+_.-]+$/.test(fileName)) {
      throw new ArchiveError("unsafe-name", `the header timestamp makes an unsafe file name ${JSON.stringify(fileName)}`, { member: source });
    }
    if (this.creating.has(path) || (await this.storage.stat(path)) !== null) {
      throw new ArchiveError("conflict", `${path} is taken by a file that is not session ${id}`, { member: source });
    }
    return path;
  }

  async create(candidate: Candidate, header: SessionHeader, reason: string, parentSession?: string): Promise<void> {
    const id = header.id;
    const path = await this.targetPath(header, id, candidate.source);
    this.creating.add(path);
    const forked = parentSession !== undefined;
    this.ops.push({
      kind: "write",
      path,
      locks: false,
      bytes: forked ? async () => encodeSession(candidate.dialect, header, await candidate.entries()) : () => candidate.bytes(),
    });
    this.known.set(id, { path, dialect: candidate.dialect, entryIds: candidate.entryIds, sha256: async () => candidate.sha256, needsRewrite: null });
    this.record(candidate, { id, action: forked ? "forked" : "created", path, newEntries: candidate.entryIds.length, reason, parentSession });
  }

  skip(candidate: Candidate, stored: KnownSession, reason: string): void {
    this.record(candidate, { id: candidate.header.id, action: "skipped", path: stored.path, newEntries: 0, reason });
  }

  replace(candidate: Candidate, stored: KnownSession): void {
    this.ops.push({ kind: "write", path: stored.path, locks: true, bytes: () => candidate.bytes() });
    this.known.set(candidate.header.id, { path: stored.path, dialect: candidate.dialect, entryIds: candidate.entryIds, sha256: async () => candidate.sha256, needsRewrite: null });
    this.record(candidate, {
      id: candidate.header.id,
      action: "replaced",
      path: stored.path,
      newEntries: candidate.entryIds.length,
      reason: "replaced the stored session (onConflict replace)",
    });
  }

  extend(candidate: Candidate, stored: KnownSession): void {
    const from = stored.entryIds.length;
    const added = async () => (await candidate.entries()).slice(from);
    const rewrite = stored.needsRewrite;
    if (rewrite) {
      // An older or damaged file is rewritten whole (as v3, in the store's form); its original bytes are kept beside it.
      const entries = async () => [...(await this.form.entries(rewrite.parsed.entries)), ...(await added())];
      this.ops.push({ kind: "write", path: `${stored.path}.before-import-${Date.now()}`, locks: false, bytes: async () => rewrite.original });
      this.ops.push({ kind: "write", path: stored.path, locks: true, bytes: async () => encodeSession(rewrite.parsed.dialect, rewrite.parsed.header, await entries()) });
    } else {
      this.ops.push({ kind: "append", path: stored.path, locks: true, bytes: async () => encodeJsonl((await added()).map((entry) => encodeRecord(stored.dialect, entry))) });
    }
    this.known.set(candidate.header.id, { path: stored.path, dialect: stored.dialect, entryIds: candidate.entryIds, sha256: async () => candidate.sha256, needsRewrite: null });
    const count = candidate.entryIds.length - from;
    this.record(candidate, { id: candidate.header.id, action: "extended", path: stored.path, newEntries: count, reason: `appended ${count} entries the stored session did not have` });
  }

  async fork(candidate: Candidate, stored: KnownSession): Promise<void> {
    const forkId = await stableSessionId(`fork\n${stored.path}\n${candidate.sha256}`);
    const existing = await this.lookup(forkId);
    if (existing) return this.skip(candidate, existing, `already imported as a fork of ${stored.path}`);
    const header: SessionHeader = { ...candidate.header, id: forkId, parentSession: stored.path };
    const reason = this.policy === "fork" ? "imported as a fork (onConflict fork)" : "diverged from the stored session: imported as a fork";
    return this.create(candidate, header, reason, stored.path);
  }

  record(candidate: Candidate, fields: Omit<ImportedSession, "source" | "entries" | "parentSession"> & { parentSession?: string | undefined }): void {
    const { parentSession, ...rest } = fields;
    this.sessions.push({ source: candidate.source, entries: candidate.entryIds.length, ...rest, ...(parentSession === undefined ? {} : { parentSession }) });
  }
}

type Relation = "same" | "extends" | "stored-has-more" | "diverged";

/** How the incoming entry ids relate to the stored ones (entries are append-only). */
function relate(stored: readonly string[], incoming: readonly string[]): Relation {
  const common = Math.min(stored.length, incoming.length);
  for (let i = 0; i < common; i++) if (stored[i] !== incoming[i]) return "diverged";
  if (stored.length === incoming.length) return "same";
  return stored.length < incoming.length ? "extends" : "stored-has-more";
}

async function placeSessions(
  storage: StoragePort,
  candidates: readonly Candidate[],
  blobs: readonly BlobSource[],
  warnings: string[],
  options: ImportOptions,
): Promise<ImportSummary> {
  const form = new StoreForm(storage, blobs, options);
  const planner = new Planner(storage, await indexStoredSessions(storage), options.onConflict ?? "auto", form);
  const placed: Candidate[] = [];
  for (const candidate of candidates) placed.push(await form.candidate(candidate));
  for (const candidate of placed) await planner.place(candidate);

  // A store that keeps images inline gets no blobs: its sessions hold their images.
  const offered = form.images === "inline" ? [] : [...new Map([...blobs, ...form.staged()].map((blob) => [blob.hash, blob])).values()];
  const blobStore = new BlobStore(storage);
  const blobsToWrite: BlobSource[] = [];
  let present = 0;
  for (const blob of offered) {
    if ((await storage.stat(blobStore.pathOf(blob.hash)))?.size === blob.size) present++;
    else blobsToWrite.push(blob);
  }
  const available = new Set(offered.map((b) => b.hash));
  const missing = new Set<string>();
  const imported = new Set(planner.sessions.filter((s) => s.action !== "skipped").map((s) => s.source));
  for (const candidate of placed) {
    if (!imported.has(candidate.source)) continue;
    for (const hash of candidate.blobRefs) {
      if (available.has(hash) || missing.has(hash) || (await storage.stat(blobStore.pathOf(hash))) !== null) continue;
      // A ref left in a session for an inline store resolved nowhere; a blob store takes the source store's blob.
      const fromSource = form.images === "inline" ? null : await form.sourceBlob(hash);
      if (fromSource) {
        blobsToWrite.push(fromSource);
        available.add(hash);
      } else {
        missing.add(hash);
      }
    }
  }
  const kept = form.images === "inline" ? `: the session keeps the ref, which ${form.owner} does not resolve` : "";
  for (const hash of missing) warnings.push(`blob ${hash} is referenced but neither in the import nor in the store${kept}`);

  const summary: ImportSummary = {
    dryRun: options.dryRun ?? false,
    sessions: planner.sessions,
    blobs: { written: blobsToWrite.length, present, bytesWritten: blobsToWrite.reduce((n, b) => n + b.size, 0) },
    missingBlobs: [...missing].sort(),
    warnings,
  };
  if (!options.dryRun) await commit(storage, blobStore, blobsToWrite, planner.ops, options.onProgress);
  return summary;
}

// =============================================================================
// Commit
// =============================================================================

/**
 * Files written at once: their fsyncs and renames overlap (node-fs: 200 blobs take ~3× longer one
 * by one). Each records its undo before it starts; a failure waits for the others to settle.
 */
const WRITE_CONCURRENCY = 8;

/** Blobs first (a session never points at a blob that is not there yet), then sessions. */
async function commit(storage: StoragePort, blobStore: BlobStore, blobs: readonly BlobSource[], ops: readonly WriteOp[], onProgress?: (p: ArchiveProgress) => void): Promise<void> {
  const undo: { path: string; run: () => Promise<void> }[] = [];
  const locks: StorageLock[] = [];
  const total = blobs.length + ops.length;
  let done = 0;
  let current = "";
  try {
    for (const path of new Set(ops.filter((op) => op.locks).map((op) => op.path))) {
      current = path;
      if (storage.acquireLock) locks.push(await storage.acquireLock(path));
    }
    await forEachInOrder(
      blobs,
      WRITE_CONCURRENCY,
      async (blob) => {
        const path = blobStore.pathOf(blob.hash);
        await failingAt(path, async () => writeWithUndo(storage, path, await blob.read(), undo));
        return path;
      },
      (path) => onProgress?.({ phase: "write", member: path, done: ++done, total }),
    );
    for (const op of ops) {
      current = op.path;
      const bytes = await op.bytes();
      if (op.kind === "append") {
        const before = await storage.stat(op.path);
        undo.push({ path: op.path, run: () => (before ? storage.truncate(op.path, before.size) : storage.remove(op.path)) });
        await storage.append(op.path, bytes);
      } else {
        await writeWithUndo(storage, op.path, bytes, undo);
      }
      onProgress?.({ phase: "write", member: op.path, done: ++done, total });
    }
    const sync = storage.sync?.bind(storage);
    if (sync) {
      await forEachInOrder([...new Set(undo.map((u) => u.path))], WRITE_CONCURRENCY, (path) => failingAt(path, () => sync(path)));
    }
  } catch (thrown) {
    const { path: member, cause: error } = thrown instanceof FailedAt ? thrown : { path: current, cause: thrown };
    const failedUndo: string[] = [];
    for (const step of undo.reverse()) {
      try {
        await step.run();
      } catch {
        failedUndo.push(step.path);
      }
    }
    if (error instanceof ArchiveError) throw error;
    const cause = error as Error;
    if (isStorageError(error, "locked")) throw new ArchiveError("conflict", `the session is open for writing elsewhere (${cause.message})`, { member, cause });
    const outcome = failedUndo.length === 0 ? "every change of this import was undone" : `undoing failed for ${failedUndo.join(", ")}`;
    throw new ArchiveError("write-failed", `storage failed (${cause?.message ?? String(error)}); ${outcome}`, { member, cause });
  } finally {
    for (const lock of locks) await lock.release().catch(() => {});
  }
}

/** A failure and the path it happened at: writes run a few at a time, so the last path started is not it. */
class FailedAt {
  constructor(
    readonly path: string,
    readonly cause: unknown,
  ) {}
}

async function failingAt<T>(path: string, run: () => Promise<T>): Promise<T> {
  try {
    return await run();
  } catch (error) {
    throw new FailedAt(path, error);
  }
}

async function writeWithUndo(storage: StoragePort, path: string, bytes: Uint8Array, undo: { path: string; run: () => Promise<void> }[]): Promise<void> {
  const before = (await storage.stat(path)) === null ? null : await storage.read(path);
  undo.push({ path, run: () => (before ? storage.write(path, before) : storage.remove(path)) });
  await storage.write(path, bytes);
}
