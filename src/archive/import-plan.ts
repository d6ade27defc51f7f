/**
 * Planning an import: each candidate placed against what the store holds (created, skipped,
 * extended, replaced or forked, by the conflict policy) before anything is written; then the
 * writes are committed (import-commit.ts), unless it is a dry run.
 */
import { BlobStore, sha256Hex } from "../blobs/blob-store.js";
import { encodeRecord, type SessionDialect } from "../format/dialect.js";
import { encodeJsonl } from "../format/session-file.js";
import type { SessionHeader } from "../format/types.js";
import { checkStoragePath, joinPath, type StoragePort } from "../port.js";
import { storeSessionDir, storeSessionFileName } from "../session/paths.js";
import { ArchiveError } from "./errors.js";
import { commit, type WriteOp } from "./import-commit.js";
import { StoreForm, type BlobSource, type Candidate } from "./import-form.js";
import type { ConflictPolicy, ImportedSession, ImportOptions, ImportSummary } from "./import-options.js";
import { encodeSession, isCanonical, parseSessionBytes, stableSessionId, type ParsedSession } from "./session-bytes.js";
import { indexStoredSessions, type StoredSessionIndex } from "./store-index.js";

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

export async function placeSessions(
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
