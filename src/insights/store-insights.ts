/**
 * Cost and tokens across sessions: by day, by model, by project (the header's cwd), by agent and
 * by session. The sessions are the listing's (listSessions, listAllSessions, SessionManager.list),
 * narrowed as the viewer's list narrows them (`matchesQuery`); each file's usage is read once and
 * kept in `.sessionkit/insights/` beside the listing's catalog, with the point it was read to
 * (file-resume.ts): an unchanged file costs nothing, one that grew is read from there, a rewritten
 * one again in full.
 *
 * A file's usage is kept by quarter hour (UTC) and model, so that days can be told in any time
 * zone when the figures are summed (every zone's offset is a whole number of quarter hours).
 * A message's time is its entry's timestamp (when the reply was written), else the message's own.
 * Every assistant message of every branch counts, as in the header's totals; an entry the viewer
 * would reject (it fails its schema) does not. Unlike the viewer, a line repeating an earlier
 * entry's id (a damaged file) counts again: the cache does not keep ids.
 */
import * as z from "zod/mini";
import type { SessionDialect } from "../format/dialect.js";
import { checkEntry } from "../format/schema.js";
import type { SessionInfo } from "../format/types.js";
import { baseName, joinPath, parentDir, type DirEntry, type StoragePort } from "../port.js";
import { dialectOfLine, isUnchanged, readFirstLine, readSince, type ReadPoint } from "../session/file-resume.js";
import { mapLimited } from "../session/listing.js";
import { addUsage, emptyUsage, messageUsage, modelOf, type Usage } from "./usage.js";

export const INSIGHTS_DIR = ".sessionkit/insights";
const CACHE_VERSION = 1;
const CONCURRENCY = 8;
const QUARTER_HOUR_MS = 15 * 60 * 1000;
/** The model of a message that names none, and the day of one whose time cannot be read. */
const UNKNOWN = "(unknown)";

/** One quarter hour's calls to one model. */
interface Bucket {
  /** Quarter hours since the epoch (UTC); null when the time cannot be read. */
  slot: number | null;
  model: string;
  messages: number;
  usage: Usage;
}

/**
 * How the viewer checks a file's entries: as they are (pi v2 and v3), after migration gave them
 * ids (pi v1), or after seed 003's missing timestamps were filled (completeSeed003Entry).
 */
type EntryForm = "current" | "legacy" | "seed003";

/** What a file's records add up to: kept in the cache, extended as the file grows. */
interface FileUsage {
  /** False when the first record is not a session header. */
  valid: boolean;
  form: EntryForm;
  records: number;
  assistantMessages: number;
  /** In file order, as the header adds it up. */
  usage: Usage;
  buckets: Record<string, Bucket>;
}

type CacheEntry = ReadPoint & { usage: FileUsage };
type Cache = { version: typeof CACHE_VERSION; files: Record<string, CacheEntry> };

const cacheEntrySchema = z.object({
  size: z.number(),
  mtimeMs: z.number(),
  offset: z.number(),
  header: z.string(),
  fingerprint: z.string(),
  // The rest is taken as written: the cache is this kit's own.
  usage: z.looseObject({ valid: z.boolean(), records: z.number(), assistantMessages: z.number() }),
});
const cacheSchema = z.object({ version: z.literal(CACHE_VERSION), files: z.record(z.string(), cacheEntrySchema) });

/** A listed session and what its assistant messages used. */
export interface SessionUsage {
  info: SessionInfo;
  assistantMessages: number;
  /** Every assistant message of the file, in file order: the viewer header's totals. */
  usage: Usage;
  buckets: Bucket[];
}

export interface ReadUsageOptions {
  /** Keep and use the cache in `.sessionkit/insights/` (default true). */
  cache?: boolean;
  /** `done` of `total` session files read. */
  onProgress?: (done: number, total: number) => void;
}

function emptyFileUsage(): FileUsage {
  return { valid: false, form: "current", records: 0, assistantMessages: 0, usage: emptyUsage(), buckets: {} };
}

/** Whether the viewer keeps the entry (load-session.ts: checked after migration, or after seed 003's timestamps were filled). */
function viewerKeeps(file: FileUsage, record: Record<string, unknown>): boolean {
  if (file.form === "legacy") return checkEntry({ ...record, id: "migrated", parentId: null }).ok;
  if (file.form === "seed003" && record.timestamp === undefined) return checkEntry({ ...record, timestamp: "filled" }).ok;
  return checkEntry(record).ok;
}

function addRecord(file: FileUsage, record: Record<string, unknown>, dialect: SessionDialect): void {
  file.records++;
  if (file.records === 1) {
    file.valid = record.type === "session" && typeof record.id === "string";
    file.form = dialect === "seed003" ? "seed003" : record.version === undefined || record.version === 1 ? "legacy" : "current";
    return;
  }
  if (!file.valid || record.type !== "message") return;
  const message = record.message as Record<string, unknown> | undefined;
  if (typeof message !== "object" || message === null || message.role !== "assistant") return;
  if (!viewerKeeps(file, record)) return;
  file.assistantMessages++;
  const usage = messageUsage(message);
  let time = typeof record.timestamp === "string" ? Date.parse(record.timestamp) : Number.NaN;
  if (Number.isNaN(time) && typeof message.timestamp === "number") time = message.timestamp;
  const slot = Number.isFinite(time) ? Math.floor(time / QUARTER_HOUR_MS) : null;
  const model = modelOf(message) ?? UNKNOWN;
  const key = `${slot ?? "?"} ${model}`;
  const bucket = (file.buckets[key] ??= { slot, model, messages: 0, usage: emptyUsage() });
  bucket.messages++;
  if (usage) {
    addUsage(file.usage, usage);
    addUsage(bucket.usage, usage);
  }
}

function cacheName(dir: string): string {
  return `${encodeURIComponent(dir)}.json`;
}

function cachePath(dir: string): string {
  return joinPath(INSIGHTS_DIR, cacheName(dir));
}

/** The cache files there are: one listing, instead of a read per folder that fails where none was written (a served store answers each with a 404, which a browser logs). */
async function cacheNames(storage: StoragePort): Promise<Set<string>> {
  const entries = await storage.list(INSIGHTS_DIR).catch((): DirEntry[] => []);
  return new Set(entries.filter((entry) => entry.kind === "file").map((entry) => entry.name));
}

async function readCache(storage: StoragePort, dir: string, cached: ReadonlySet<string>): Promise<Cache> {
  const bytes = cached.has(cacheName(dir)) ? await storage.read(cachePath(dir)).catch(() => null) : null;
  if (bytes) {
    try {
      const parsed = cacheSchema.safeParse(JSON.parse(new TextDecoder().decode(bytes)));
      if (parsed.success) return parsed.data as unknown as Cache;
    } catch {
      // a damaged cache is only a cache: read the files again
    }
  }
  return { version: CACHE_VERSION, files: {} };
}

async function refresh(storage: StoragePort, path: string, file: DirEntry, previous: CacheEntry | undefined): Promise<CacheEntry | null> {
  if (previous && isUnchanged(previous, file)) return previous;
  let usage = emptyFileUsage();
  const dialect = dialectOfLine(await readFirstLine(storage, path));
  const pass = await readSince(
    storage,
    path,
    file,
    previous,
    (fromStart) => void (usage = fromStart || !previous ? emptyFileUsage() : structuredClone(previous.usage)),
    (record) => addRecord(usage, record, dialect),
    // Only assistant messages carry usage: any other message line is counted from its bytes, not
    // parsed (counted, so a header after it is no first record: the file stays invalid, as parsed).
    (head) => {
      if (head.role === "assistant") return false;
      usage.records++;
      return true;
    },
  );
  return pass && { ...pass.point, usage };
}

/**
 * The usage of each listed session (in the order given; one that can no longer be read is left
 * out). Reads only what changed since the cache was written; the cache is best effort (a store
 * that refuses writes is read in full each time).
 */
export async function readSessionUsage(storage: StoragePort, sessions: readonly SessionInfo[], options: ReadUsageOptions = {}): Promise<SessionUsage[]> {
  const useCache = options.cache ?? true;
  const byDir = new Map<string, SessionInfo[]>();
  for (const info of sessions) {
    const dir = parentDir(info.path);
    const list = byDir.get(dir);
    if (list) list.push(info);
    else byDir.set(dir, [info]);
  }
  const found = new Map<string, FileUsage>();
  const cached = useCache ? await cacheNames(storage) : new Set<string>();
  let done = 0;
  for (const [dir, infos] of byDir) {
    // A folder gone since it was listed: its sessions are left out, as files gone are.
    const entries = await storage.list(dir).catch((): DirEntry[] => []);
    const listed = new Map(entries.filter((entry) => entry.kind === "file").map((entry) => [entry.name, entry]));
    const cache: Cache = useCache ? await readCache(storage, dir, cached) : { version: CACHE_VERSION, files: {} };
    // Files still there keep their entries; files gone lose them.
    const next: Record<string, CacheEntry> = {};
    let changed = false;
    for (const [name, entry] of Object.entries(cache.files)) {
      if (listed.has(name)) next[name] = entry;
      else changed = true;
    }
    await mapLimited(infos, CONCURRENCY, async (info) => {
      const name = baseName(info.path);
      const file = listed.get(name);
      let entry: CacheEntry | null = null;
      try {
        if (file) entry = await refresh(storage, info.path, file, cache.files[name]);
      } catch {
        entry = null; // unreadable now: left out, as the listing leaves it out
      }
      options.onProgress?.(++done, sessions.length);
      if (!entry) return;
      if (entry !== cache.files[name]) changed = true;
      next[name] = entry;
      if (entry.usage.valid) found.set(info.path, entry.usage);
    });
    if (useCache && changed) {
      await storage.write(cachePath(dir), new TextEncoder().encode(JSON.stringify({ version: CACHE_VERSION, files: next }))).catch(() => {});
    }
  }
  return sessions.flatMap((info) => {
    const usage = found.get(info.path);
    return usage ? [{ info, assistantMessages: usage.assistantMessages, usage: usage.usage, buckets: Object.values(usage.buckets) }] : [];
  });
}

/**
 * True when every word of `query` (case ignored) is in the session's name, first message, project
 * directory or id: the viewer's filter of its session list.
 */
export function matchesQuery(info: SessionInfo, query: string): boolean {
  const words = query.toLowerCase().split(/\s+/).filter(Boolean);
  if (words.length === 0) return true;
  const text = `${info.name ?? ""} ${info.firstMessage} ${info.cwd} ${info.id}`.toLowerCase();
  return words.every((word) => text.includes(word));
}

/** One row of a table: a day, a model, a project, an agent or a session. */
export interface UsageRow {
  key: string;
  /** Sessions with an assistant message in the row. */
  sessions: number;
  assistantMessages: number;
  usage: Usage;
}

/** A session's row: its id and what the list shows of it (name, else first message). */
export type SessionRow = UsageRow & { id: string; label: string };

export interface UsageSummary {
  /** Sessions summed (those without an assistant message are in no row). */
  sessions: number;
  assistantMessages: number;
  usage: Usage;
  /** Oldest first; `YYYY-MM-DD` in the zone asked for, or "(unknown)". */
  byDay: UsageRow[];
  /** Costliest first (then most tokens), as the other tables. */
  byModel: UsageRow[];
  byProject: UsageRow[];
  byAgent: UsageRow[];
  /** Keyed by the session's path (as listed; the CLI's are absolute). */
  bySession: SessionRow[];
}

export interface SummaryOptions {
  /** Days in this machine's zone (default) or in UTC. */
  timeZone?: "local" | "utc";
}

const pad = (n: number) => String(n).padStart(2, "0");

function dayOf(slot: number | null, timeZone: "local" | "utc"): string {
  if (slot === null) return UNKNOWN;
  const date = new Date(slot * QUARTER_HOUR_MS);
  return timeZone === "utc"
    ? `${date.getUTCFullYear()}-${pad(date.getUTCMonth() + 1)}-${pad(date.getUTCDate())}`
    : `${date.getFullYear()}-${pad(date.getMonth() + 1)}-${pad(date.getDate())}`;
}

class Table {
  readonly #rows = new Map<string, UsageRow & { seen: unknown }>();
  add(key: string, session: unknown, messages: number, usage: Usage): void {
    let row = this.#rows.get(key);
    if (!row) this.#rows.set(key, (row = { key, sessions: 0, assistantMessages: 0, usage: emptyUsage(), seen: undefined }));
    if (row.seen !== session) {
      row.seen = session;
      row.sessions++;
    }
    row.assistantMessages += messages;
    addUsage(row.usage, usage);
  }
  rows(order: "key" | "cost"): UsageRow[] {
    const rows = [...this.#rows.values()].map(({ seen: _seen, ...row }) => row);
    const byKey = (a: UsageRow, b: UsageRow) => (a.key < b.key ? -1 : a.key > b.key ? 1 : 0);
    const tokens = (row: UsageRow) => row.usage.tokens.input + row.usage.tokens.output + row.usage.tokens.cacheRead + row.usage.tokens.cacheWrite;
    return rows.sort(order === "key" ? byKey : (a, b) => b.usage.cost.total - a.usage.cost.total || tokens(b) - tokens(a) || byKey(a, b));
  }
}

/**
 * The tables over `sessions` (of one store or several: `agent` names each one's). A session's
 * rows are added bucket by bucket; its own row (bySession) and the totals are its file-order
 * figures.
 */
export function summarizeUsage(sessions: ReadonlyArray<SessionUsage & { agent?: string }>, options: SummaryOptions = {}): UsageSummary {
  const timeZone = options.timeZone ?? "local";
  const [byDay, byModel, byProject, byAgent, bySession] = [new Table(), new Table(), new Table(), new Table(), new Table()];
  const usage = emptyUsage();
  const infos = new Map(sessions.map((session) => [session.info.path, session.info]));
  let assistantMessages = 0;
  for (const session of sessions) {
    if (session.assistantMessages === 0) continue;
    assistantMessages += session.assistantMessages;
    addUsage(usage, session.usage);
    bySession.add(session.info.path, session, session.assistantMessages, session.usage);
    byProject.add(session.info.cwd || UNKNOWN, session, session.assistantMessages, session.usage);
    byAgent.add(session.agent ?? UNKNOWN, session, session.assistantMessages, session.usage);
    for (const bucket of session.buckets) {
      byDay.add(dayOf(bucket.slot, timeZone), session, bucket.messages, bucket.usage);
      byModel.add(bucket.model, session, bucket.messages, bucket.usage);
    }
  }
  return {
    sessions: sessions.length,
    assistantMessages,
    usage,
    byDay: byDay.rows("key"),
    byModel: byModel.rows("cost"),
    byProject: byProject.rows("cost"),
    byAgent: byAgent.rows("cost"),
    bySession: bySession.rows("cost").map((row) => {
      const info = infos.get(row.key)!;
      return { ...row, id: info.id, label: info.name ?? info.title ?? info.firstMessage };
    }),
  };
}
