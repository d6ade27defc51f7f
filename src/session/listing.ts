/**
 * Listing sessions without parsing every file on every call: a per-directory catalog keeps each
 * file's summary and the byte offset it was read to. A file whose size and mtime are unchanged
 * costs nothing; one that grew is read from that offset (session files are append-only); one whose
 * header changed (a rewrite) is read again in full.
 */
import { z } from "zod";
import { bytesToBase64 } from "../blobs/base64.js";
import { decodeRecord, DialectError, detectDialect, type SessionDialect } from "../format/dialect.js";
import { scanJsonl } from "../format/jsonl-reader.js";
import { decodeHeader } from "../format/session-file.js";
import type { SessionInfo } from "../format/types.js";
import { joinPath, type DirEntry, type StoragePort } from "../port.js";
import { sameCwd, SESSIONS_DIR } from "./paths.js";
import { addRecord, emptySummary, toSessionInfo, type SessionSummary } from "./session-info.js";

export interface ListOptions {
  onProgress?: (loaded: number, total: number) => void;
  /** Keep and use the catalog (default true); false reads every file in full. */
  catalog?: boolean;
  /** Only sessions whose header cwd is this one (a flat store holds every project's sessions). */
  cwd?: string;
}

export const CATALOG_DIR = ".sessionkit/catalog";
const CATALOG_VERSION = 3;
/** Bytes just before the resume offset kept in the catalog, to tell an append from a rewrite. */
const FINGERPRINT_BYTES = 64;
const HEADER_PROBE_BYTES = 64 * 1024;
const CONCURRENCY = 8;

const catalogEntrySchema = z.object({
  size: z.number(),
  mtimeMs: z.number(),
  offset: z.number(),
  header: z.string(),
  fingerprint: z.string(),
  summary: z.looseObject({ valid: z.boolean(), records: z.number(), messageCount: z.number() }).transform((s) => s as unknown as SessionSummary),
});
const catalogSchema = z.object({ version: z.literal(CATALOG_VERSION), files: z.record(z.string(), catalogEntrySchema) });
type CatalogEntry = z.infer<typeof catalogEntrySchema>;
type Catalog = { version: typeof CATALOG_VERSION; files: Record<string, CatalogEntry> };

function catalogPath(dir: string): string {
  return joinPath(CATALOG_DIR, `${encodeURIComponent(dir)}.json`);
}

async function readCatalog(storage: StoragePort, dir: string): Promise<Catalog> {
  const bytes = await storage.read(catalogPath(dir)).catch(() => null);
  if (bytes) {
    try {
      const parsed = catalogSchema.safeParse(JSON.parse(new TextDecoder().decode(bytes)));
      if (parsed.success) return parsed.data as Catalog;
    } catch {
      // a damaged catalog is only a cache: rebuild it
    }
  }
  return { version: CATALOG_VERSION, files: {} };
}

/** The first line of a file, read with a bounded range; "" when there is none within the bound. */
async function readFirstLine(storage: StoragePort, path: string): Promise<string> {
  const head = await storage.read(path, { offset: 0, length: HEADER_PROBE_BYTES });
  if (!head) return "";
  const newline = head.indexOf(0x0a);
  return new TextDecoder().decode(newline < 0 ? head : head.subarray(0, newline));
}

/** The bytes before `offset` (up to FINGERPRINT_BYTES), as base64. */
async function fingerprintAt(storage: StoragePort, path: string, offset: number): Promise<string> {
  const start = Math.max(0, offset - FINGERPRINT_BYTES);
  return bytesToBase64((await storage.read(path, { offset: start, length: offset - start })) ?? new Uint8Array());
}

/**
 * Brings one file's catalog entry up to date; reads only what it has not seen. It resumes only
 * when the file still starts with the same header and still holds the same bytes before the
 * resume offset: an append. Anything else (a rewrite) is read again in full.
 */
async function refreshEntry(storage: StoragePort, path: string, file: DirEntry, previous: CatalogEntry | undefined): Promise<CatalogEntry> {
  if (previous && previous.size === file.size && previous.mtimeMs === file.mtimeMs) return previous;
  const header = await readFirstLine(storage, path);
  const resume =
    previous !== undefined &&
    previous.header === header &&
    file.size >= previous.offset &&
    (await fingerprintAt(storage, path, previous.offset)) === previous.fingerprint;
  const summary: SessionSummary = resume ? structuredClone(previous.summary) : emptySummary();
  const dialect = dialectOfLine(header);
  const scan = await scanJsonl(storage, path, (record) => addRecord(summary, decodeForSummary(dialect, record)), { offset: resume ? previous.offset : 0 });
  // A complete last line without "\n" is already in the summary: resume after it (whoever
  // appends next starts with a newline or glues a line, and both read right from there).
  const offset = scan === null ? 0 : scan.tail.kind === "missing-newline" ? scan.bytes : scan.completeBytes;
  return { size: file.size, mtimeMs: file.mtimeMs, offset, header, fingerprint: await fingerprintAt(storage, path, offset), summary };
}

/** The dialect a header line declares; pi's when it declares none (the summary then marks it invalid). */
function dialectOfLine(line: string): SessionDialect {
  try {
    return detectDialect(JSON.parse(line)) ?? "pi";
  } catch {
    return "pi";
  }
}

/** A record of a file in `dialect`, canonical; one that cannot be decoded counts as nothing. */
function decodeForSummary(dialect: SessionDialect, record: Record<string, unknown>): Record<string, unknown> {
  try {
    return decodeRecord(dialect, record);
  } catch (error) {
    if (error instanceof DialectError) return {};
    throw error;
  }
}

async function mapLimited<T, R>(items: readonly T[], limit: number, fn: (item: T) => Promise<R>): Promise<R[]> {
  const out = new Array<R>(items.length);
  let next = 0;
  const worker = async () => {
    while (next < items.length) {
      const i = next++;
      out[i] = await fn(items[i]!);
    }
  };
  await Promise.all(Array.from({ length: Math.min(limit, items.length) }, worker));
  return out;
}

interface DirListing {
  dir: string;
  files: DirEntry[];
}

async function sessionFilesOf(storage: StoragePort, dir: string): Promise<DirListing> {
  const entries = await storage.list(dir);
  return { dir, files: entries.filter((e) => e.kind === "file" && e.name.endsWith(".jsonl")) };
}

async function listDirs(storage: StoragePort, dirs: DirListing[], options: ListOptions): Promise<SessionInfo[]> {
  const useCatalog = options.catalog ?? true;
  const total = dirs.reduce((n, d) => n + d.files.length, 0);
  let loaded = 0;
  const infos: SessionInfo[] = [];
  for (const { dir, files } of dirs) {
    const catalog = useCatalog ? await readCatalog(storage, dir) : { version: CATALOG_VERSION, files: {} } as Catalog;
    const next: Record<string, CatalogEntry> = {};
    let changed = Object.keys(catalog.files).length !== files.length;
    await mapLimited(files, CONCURRENCY, async (file) => {
      const path = joinPath(dir, file.name);
      const previous = catalog.files[file.name];
      let entry: CatalogEntry | undefined;
      try {
        entry = await refreshEntry(storage, path, file, previous);
      } catch {
        entry = undefined; // unreadable now: left out, as pi leaves it out
      }
      loaded++;
      options.onProgress?.(loaded, total);
      if (!entry) return;
      if (entry !== previous) changed = true;
      next[file.name] = entry;
      if (entry.summary.valid && (options.cwd === undefined || sameCwd(entry.summary.cwd, options.cwd))) infos.push(toSessionInfo(path, entry.summary, file.mtimeMs));
    });
    if (useCatalog && changed) {
      // Best effort: the catalog is a cache, a failure to save it must not fail the listing.
      await storage.write(catalogPath(dir), new TextEncoder().encode(JSON.stringify({ version: CATALOG_VERSION, files: next }))).catch(() => {});
    }
  }
  // Files are read concurrently: the path breaks ties so equal times list the same way each call.
  return infos.sort((a, b) => b.modified.getTime() - a.modified.getTime() || (a.path < b.path ? -1 : a.path > b.path ? 1 : 0));
}

/** Sessions in one directory, most recently modified first. */
export async function listSessions(storage: StoragePort, dir: string, options: ListOptions = {}): Promise<SessionInfo[]> {
  return listDirs(storage, [await sessionFilesOf(storage, dir)], options);
}

/**
 * Sessions of every project, most recently modified first: those in each directory under
 * `sessions/` (pi's layout) and those directly in it (a flat seed-003 store).
 */
export async function listAllSessions(storage: StoragePort, options: ListOptions = {}): Promise<SessionInfo[]> {
  const children = await storage.list(SESSIONS_DIR);
  const dirs = children.filter((e) => e.kind === "dir");
  const listings = await Promise.all(dirs.map((d) => sessionFilesOf(storage, joinPath(SESSIONS_DIR, d.name))));
  const flat = children.filter((e) => e.kind === "file" && e.name.endsWith(".jsonl"));
  if (flat.length > 0) listings.unshift({ dir: SESSIONS_DIR, files: flat });
  return listDirs(storage, listings, options);
}

/**
 * The most recently modified file of `dir` (by mtime) whose first line is a session header (of
 * `cwd`, when given: a flat store holds every project's sessions).
 */
export async function findMostRecentSession(storage: StoragePort, dir: string, options: { cwd?: string } = {}): Promise<string | null> {
  const { files } = await sessionFilesOf(storage, dir);
  const sorted = files.slice().sort((a, b) => b.mtimeMs - a.mtimeMs);
  for (const file of sorted) {
    const path = joinPath(dir, file.name);
    const firstLine = await readFirstLine(storage, path); // a storage failure is not "no session"
    let header;
    try {
      const record = JSON.parse(firstLine) as Record<string, unknown>;
      const dialect = detectDialect(record);
      header = dialect === null ? null : decodeHeader(dialect, record);
    } catch {
      continue; // not JSON: not a session
    }
    if (!header?.success) continue;
    if (options.cwd === undefined || sameCwd(typeof header.data.cwd === "string" ? header.data.cwd : "", options.cwd)) return path;
  }
  return null;
}
