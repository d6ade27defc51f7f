/**
 * Scanning sessions for secrets. A store's scan keeps its findings per session file in
 * `.sessionkit/secrets/<dir>.json` with the point each file was read to (file-resume.ts, as the
 * catalog and the search index do): an unchanged file costs nothing, one that grew is read from
 * that point, a rewrite again from the start. The cache holds masked previews only, never a secret.
 */
import * as z from "zod/mini";
import { joinPath, type StoragePort } from "../port.js";
import { isUnchanged, readSince, type ReadPoint } from "../session/file-resume.js";
import { sessionDirListings } from "../session/listing.js";
import { sameCwd } from "../session/paths.js";
import { findSecrets } from "./detect.js";
import { forEachText } from "./fields.js";
import { ruleSet } from "./rules.js";

/**
 * A secret found in a session: where it is and what kind, with a masked preview (never the secret).
 * @category Secrets
 */
export interface SecretFinding {
  /** Storage path of the session file. */
  path: string;
  /** The session's id. */
  sessionId: string;
  /** The entry holding it; null for the header, and for an entry of a v1 file (its ids come with migration). */
  entryId: string | null;
  /** Where in the entry: a JSON pointer, e.g. `/message/content/0/text`. */
  field: string;
  /** The rule that found it: `[REDACTED:<kind>]` in a redacted copy. */
  kind: string;
  /** A known prefix and the last characters, e.g. `sk-ant-…Q2xA`. */
  preview: string;
}

/**
 * Work a scan does, for progress: the session files and bytes to read (what changed since the last
 * scan), and read so far.
 * @category Secrets
 */
export interface ScanProgress {
  /** Session files read so far. */
  filesDone: number;
  /** Session files to read (those that changed since the last scan). */
  filesTotal: number;
  /** Bytes read so far. */
  bytesDone: number;
  /** Bytes to read. */
  bytesTotal: number;
}

/**
 * Which sessions {@link scanSessions} scans.
 * @category Secrets
 */
export interface ScanOptions {
  /** Only the sessions of this directory (e.g. `sessionDirFor(cwd)`); default: every project's. */
  dir?: string;
  /** Only sessions whose header cwd is this one (a flat seed-003 store holds every project's). */
  cwd?: string;
  /** Keep and use the cache of findings in `.sessionkit/secrets/` (default true). */
  cache?: boolean;
  /** Called as files are read: those that changed since the last scan. */
  onProgress?: (progress: ScanProgress) => void;
}

/**
 * What {@link scanSessions} found.
 * @category Secrets
 */
export interface ScanResult {
  /** Every finding, by session file path, then in file order. */
  findings: SecretFinding[];
  /** Session files scanned (read now or answered by the cache). */
  sessions: number;
  /** Bytes read now (0 when every file was unchanged). */
  bytesRead: number;
}

export const SECRETS_DIR = ".sessionkit/secrets";
const CACHE_VERSION = 1;

type StoredFinding = Omit<SecretFinding, "path" | "sessionId">;
type CacheEntry = ReadPoint & { sessionId: string; cwd: string; findings: StoredFinding[] };
interface Cache {
  version: typeof CACHE_VERSION;
  rules: string;
  files: Record<string, CacheEntry>;
}

const cacheSchema = z.object({
  version: z.literal(CACHE_VERSION),
  rules: z.string(),
  files: z.record(
    z.string(),
    z.object({
      size: z.number(),
      mtimeMs: z.number(),
      offset: z.number(),
      header: z.string(),
      fingerprint: z.string(),
      sessionId: z.string(),
      cwd: z.string(),
      findings: z.array(z.object({ entryId: z.nullable(z.string()), field: z.string(), kind: z.string(), preview: z.string() })),
    }),
  ),
});

function cachePath(dir: string): string {
  return joinPath(SECRETS_DIR, `${encodeURIComponent(dir)}.json`);
}

async function readCache(storage: StoragePort, dir: string, rules: string): Promise<Cache> {
  const bytes = await storage.read(cachePath(dir)).catch(() => null);
  if (bytes) {
    try {
      const parsed = cacheSchema.safeParse(JSON.parse(new TextDecoder().decode(bytes)));
      // Findings of another rule set are stale: scan again.
      if (parsed.success && parsed.data.rules === rules) return parsed.data as Cache;
    } catch {
      // a damaged cache is only a cache: scan again
    }
  }
  return { version: CACHE_VERSION, rules, files: {} };
}

/**
 * The secrets in one record (a header or an entry) of a session, each with the JSON pointer of the
 * string it is in.
 * @category Secrets
 */
export function findSecretsInRecord(record: Record<string, unknown>): Pick<SecretFinding, "field" | "kind" | "preview">[] {
  const out: Pick<SecretFinding, "field" | "kind" | "preview">[] = [];
  forEachText(record, (text, path) => {
    for (const found of findSecrets(text)) out.push({ field: path(), kind: found.kind, preview: found.preview });
  });
  return out;
}

/** Reads a file from `previous` on (from the start when undefined or rewritten), adding its findings. */
async function scanFile(storage: StoragePort, path: string, file: { size: number; mtimeMs: number }, previous: CacheEntry | undefined): Promise<{ entry: CacheEntry; bytesRead: number } | null> {
  let sessionId = previous?.sessionId ?? "";
  let cwd = previous?.cwd ?? "";
  let findings: StoredFinding[] = previous ? [...previous.findings] : [];
  let atStart = false;
  const pass = await readSince(
    storage,
    path,
    file,
    previous,
    (fromStart) => {
      atStart = fromStart;
      if (fromStart) findings = [];
    },
    (record) => {
      if (atStart) {
        // Only session files count: the first record must be a session header.
        atStart = false;
        sessionId = record.type === "session" && typeof record.id === "string" ? record.id : "";
        cwd = typeof record.cwd === "string" ? record.cwd : "";
        if (sessionId !== "") for (const found of findSecretsInRecord(record)) findings.push({ entryId: null, ...found });
        return;
      }
      if (sessionId === "") return;
      const entryId = typeof record.id === "string" ? record.id : null;
      for (const found of findSecretsInRecord(record)) findings.push({ entryId, ...found });
    },
  );
  return pass && { entry: { ...pass.point, sessionId, cwd, findings }, bytesRead: pass.bytesRead };
}

/**
 * The secrets in a store's sessions (of one directory, or every project's), read through the
 * cache in `.sessionkit/secrets/`: a second scan of an unchanged store reads no session file. A
 * store that refuses the cache's writes (read-only) gets the same findings, read in full each time.
 * @category Secrets
 */
export async function scanSessions(storage: StoragePort, options: ScanOptions = {}): Promise<ScanResult> {
  const rules = ruleSet().fingerprint;
  const useCache = options.cache ?? true;
  const listings = await sessionDirListings(storage, options.dir);
  const caches = new Map<string, Cache>();
  for (const { dir } of listings) caches.set(dir, useCache ? await readCache(storage, dir, rules) : { version: CACHE_VERSION, rules, files: {} });
  const progress: ScanProgress = { filesDone: 0, filesTotal: 0, bytesDone: 0, bytesTotal: 0 };
  for (const { dir, files } of listings) {
    for (const file of files) {
      const previous = caches.get(dir)!.files[file.name];
      if (isUnchanged(previous, file)) continue;
      progress.filesTotal++;
      progress.bytesTotal += previous && file.size >= previous.offset ? file.size - previous.offset : file.size;
    }
  }
  const findings: SecretFinding[] = [];
  let sessions = 0;
  let bytesRead = 0;
  for (const { dir, files } of listings) {
    const cache = caches.get(dir)!;
    const next: Record<string, CacheEntry> = {};
    let changed = Object.keys(cache.files).length !== files.length;
    for (const file of [...files].sort((a, b) => (a.name < b.name ? -1 : a.name > b.name ? 1 : 0))) {
      const path = joinPath(dir, file.name);
      const previous = cache.files[file.name];
      let entry: CacheEntry | undefined = previous;
      if (!isUnchanged(previous, file)) {
        changed = true;
        const scanned = await scanFile(storage, path, file, previous).catch(() => null);
        entry = scanned?.entry;
        bytesRead += scanned?.bytesRead ?? 0;
        progress.filesDone++;
        progress.bytesDone += scanned?.bytesRead ?? 0;
        options.onProgress?.({ ...progress });
      }
      // Gone or unreadable now: left out, and read again next time.
      if (!entry) continue;
      next[file.name] = entry;
      if (entry.sessionId === "" || (options.cwd !== undefined && !sameCwd(entry.cwd, options.cwd))) continue;
      sessions++;
      for (const found of entry.findings) findings.push({ path, sessionId: entry.sessionId, ...found });
    }
    if (useCache && changed) {
      // Best effort: the cache's store may be read-only; the findings stand without it.
      await storage.write(cachePath(dir), new TextEncoder().encode(JSON.stringify({ version: CACHE_VERSION, rules, files: next }))).catch(() => {});
    }
  }
  return { findings, sessions, bytesRead };
}

/**
 * The secrets in one session file, read in full (no cache); null when there is no such file or it
 * does not start with a session header.
 * @category Secrets
 */
export async function scanSessionFile(storage: StoragePort, path: string): Promise<SecretFinding[] | null> {
  const stat = await storage.stat(path);
  if (!stat) return null;
  const scanned = await scanFile(storage, path, stat, undefined);
  if (!scanned || scanned.entry.sessionId === "") return null;
  const { sessionId, findings } = scanned.entry;
  return findings.map((found) => ({ path, sessionId, ...found }));
}
