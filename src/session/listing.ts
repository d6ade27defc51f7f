/**
 * Listing sessions without parsing every file on every call: a per-directory catalog keeps each
 * file's bounded summary and the point it was read to (see file-resume.ts). A file whose size and
 * mtime are unchanged costs nothing; one that grew is read from that point; a rewrite is read
 * again in full. A warm listing reads one catalog file per directory: O(sessions), not O(text).
 */
import { detectDialect } from "../format/dialect.js";
import { decodeHeader } from "../format/header.js";
import type { SessionInfo } from "../format/types.js";
import { joinPath, type DirEntry, type StoragePort } from "../port.js";
import { isUnchanged, readFirstLine, readSince, type ReadPoint } from "./file-resume.js";
import { sameCwd, SESSIONS_DIR, storeSessionDir, type StoreLayout } from "./paths.js";
import { addMessageLine, addRecord, emptySummary, toSessionInfo, type FullText, type SessionSummary } from "./session-info.js";

/**
 * How {@link listSessions} and {@link listAllSessions} (and `SessionManager.list`) read a store.
 * @category Listing
 */
export interface ListOptions {
  /** Called as session files are summarized: `loaded` of `total` files. */
  onProgress?: (loaded: number, total: number) => void;
  /** Keep and use the catalog (default true); false reads every file in full. */
  catalog?: boolean;
  /**
   * Also read every listed file in full for pi's `allMessagesText` and the whole first message
   * (default false: the catalog's summary, first message capped at 4,096 characters).
   */
  withText?: boolean;
  /** Only sessions whose header cwd is this one (a flat store holds every project's sessions). */
  cwd?: string;
}

export const CATALOG_DIR = ".sessionkit/catalog";
const CATALOG_VERSION = 4;
const CONCURRENCY = 8;

type CatalogEntry = ReadPoint & { summary: SessionSummary };
type Catalog = { version: typeof CATALOG_VERSION; files: Record<string, CatalogEntry> };

const isPlainObject = (value: unknown): value is Record<string, unknown> => typeof value === "object" && value !== null && !Array.isArray(value);

/**
 * An entry a listing may trust: its read point, and a summary whose counts and validity are of
 * their types (its other fields are taken as written: the catalog is this kit's own cache).
 * Checked by hand, not by a zod schema: loading zod and building the schema cost a warm
 * `sessionkit ls` ~15 ms of CPU, for a few `typeof` tests.
 */
function isCatalogEntry(value: unknown): value is CatalogEntry {
  if (!isPlainObject(value) || !isPlainObject(value.summary)) return false;
  const { size, mtimeMs, offset, header, fingerprint, summary } = value;
  return (
    typeof size === "number" &&
    typeof mtimeMs === "number" &&
    typeof offset === "number" &&
    typeof header === "string" &&
    typeof fingerprint === "string" &&
    typeof summary.valid === "boolean" &&
    typeof summary.records === "number" &&
    typeof summary.messageCount === "number"
  );
}

/** A catalog of this version whose `files` maps every name to an entry. */
function isCatalog(value: unknown): value is Catalog {
  return isPlainObject(value) && value.version === CATALOG_VERSION && isPlainObject(value.files) && Object.values(value.files).every(isCatalogEntry);
}

function catalogPath(dir: string): string {
  return joinPath(CATALOG_DIR, `${encodeURIComponent(dir)}.json`);
}

async function readCatalog(storage: StoragePort, dir: string): Promise<Catalog> {
  const bytes = await storage.read(catalogPath(dir)).catch(() => null);
  if (bytes) {
    try {
      const catalog: unknown = JSON.parse(new TextDecoder().decode(bytes));
      if (isCatalog(catalog)) return catalog;
    } catch {
      // a damaged catalog is only a cache: rebuild it
    }
  }
  return { version: CATALOG_VERSION, files: {} };
}

/** Brings one file's catalog entry up to date; reads only what it has not seen. */
async function refreshEntry(storage: StoragePort, path: string, file: DirEntry, previous: CatalogEntry | undefined): Promise<CatalogEntry | null> {
  if (previous && isUnchanged(previous, file)) return previous;
  let summary = emptySummary();
  const pass = await readSince(
    storage,
    path,
    file,
    previous,
    (fromStart) => void (summary = fromStart || !previous ? emptySummary() : structuredClone(previous.summary)),
    (record) => addRecord(summary, record),
    // Most lines are messages: taken from their bytes, a file is listed without decoding and parsing them.
    (head, bytes) => addMessageLine(summary, head, bytes),
  );
  return pass && { ...pass.point, summary };
}

/** Reads a whole file for the texts pi keeps unbounded (allMessagesText, the whole first message). */
async function readFullText(storage: StoragePort, path: string): Promise<FullText> {
  const summary = emptySummary();
  const full: FullText = { allMessagesText: "", firstMessage: "" };
  await readSince(storage, path, { size: 0, mtimeMs: 0 }, undefined, () => {}, (record) => addRecord(summary, record, full));
  return full;
}

export async function mapLimited<T, R>(items: readonly T[], limit: number, fn: (item: T) => Promise<R>): Promise<R[]> {
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

/** One directory of session files, as listed. */
export interface DirListing {
  dir: string;
  files: DirEntry[];
}

async function sessionFilesOf(storage: StoragePort, dir: string): Promise<DirListing> {
  const entries = await storage.list(dir);
  return { dir, files: entries.filter((e) => e.kind === "file" && e.name.endsWith(".jsonl")) };
}

/**
 * The session files of one directory, or (`dir` undefined) of every project: each directory under
 * `sessions/` (pi's layout) and the files directly in it (a flat seed-003 store).
 */
export async function sessionDirListings(storage: StoragePort, dir?: string): Promise<DirListing[]> {
  if (dir !== undefined) return [await sessionFilesOf(storage, dir)];
  const children = await storage.list(SESSIONS_DIR);
  const dirs = children.filter((e) => e.kind === "dir");
  const listings = await Promise.all(dirs.map((d) => sessionFilesOf(storage, joinPath(SESSIONS_DIR, d.name))));
  const flat = children.filter((e) => e.kind === "file" && e.name.endsWith(".jsonl"));
  if (flat.length > 0) listings.unshift({ dir: SESSIONS_DIR, files: flat });
  return listings;
}

async function listDirs(storage: StoragePort, dirs: DirListing[], options: ListOptions): Promise<SessionInfo[]> {
  const useCatalog = options.catalog ?? true;
  const total = dirs.reduce((n, d) => n + d.files.length, 0);
  let loaded = 0;
  const infos: SessionInfo[] = [];
  for (const { dir, files } of dirs) {
    const catalog = useCatalog ? await readCatalog(storage, dir) : ({ version: CATALOG_VERSION, files: {} } as Catalog);
    const next: Record<string, CatalogEntry> = {};
    let changed = Object.keys(catalog.files).length !== files.length;
    await mapLimited(files, CONCURRENCY, async (file) => {
      const path = joinPath(dir, file.name);
      const previous = catalog.files[file.name];
      let entry: CatalogEntry | null;
      let full: FullText | undefined;
      try {
        entry = await refreshEntry(storage, path, file, previous);
        if (entry?.summary.valid && options.withText) full = await readFullText(storage, path);
      } catch {
        entry = null; // unreadable now: left out, as pi leaves it out
      }
      loaded++;
      options.onProgress?.(loaded, total);
      if (!entry) return;
      if (entry !== previous) changed = true;
      next[file.name] = entry;
      if (entry.summary.valid && (options.cwd === undefined || sameCwd(entry.summary.cwd, options.cwd))) infos.push(toSessionInfo(path, entry.summary, file.mtimeMs, full));
    });
    if (useCatalog && changed) {
      // Best effort: the catalog is a cache (its store may be read-only); results stand without it.
      await storage.write(catalogPath(dir), new TextEncoder().encode(JSON.stringify({ version: CATALOG_VERSION, files: next }))).catch(() => {});
    }
  }
  // Files are read concurrently: the path breaks ties so equal times list the same way each call.
  return infos.sort((a, b) => b.modified.getTime() - a.modified.getTime() || (a.path < b.path ? -1 : a.path > b.path ? 1 : 0));
}

/**
 * Sessions in one directory, most recently modified first.
 * @category Listing
 */
export async function listSessions(storage: StoragePort, dir: string, options: ListOptions = {}): Promise<SessionInfo[]> {
  return listDirs(storage, await sessionDirListings(storage, dir), options);
}

/**
 * Sessions of one cwd in a store laid out as `layout` (default pi's), most recently modified first:
 * those of its directory (`sessionDir`, else the layout's for `cwd`); in a flat seed-003 store,
 * those whose header cwd is `cwd`. What `SessionManager.list` returns.
 */
export function listCwdSessions(storage: StoragePort, cwd: string, options: ListOptions & { sessionDir?: string; layout?: StoreLayout } = {}): Promise<SessionInfo[]> {
  const layout = options.layout ?? "pi";
  const dir = options.sessionDir ?? storeSessionDir(layout, cwd);
  return listSessions(storage, dir, layout === "seed003" && dir === SESSIONS_DIR ? { ...options, cwd } : options);
}

/**
 * Sessions of every project, most recently modified first: those in each directory under
 * `sessions/` (pi's layout) and those directly in it (a flat seed-003 store).
 * @category Listing
 */
export async function listAllSessions(storage: StoragePort, options: ListOptions = {}): Promise<SessionInfo[]> {
  return listDirs(storage, await sessionDirListings(storage), options);
}

/**
 * The most recently modified file of `dir` (by mtime) whose first line is a session header (of
 * `cwd`, when given: a flat store holds every project's sessions).
 * @category Listing
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
