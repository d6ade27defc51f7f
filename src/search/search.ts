/**
 * Search across sessions: `searchSessions(storage, query, options)`. The index (search-index.ts)
 * is brought up to date first, reading only what changed; FTS5 gives candidates (query.ts) ranked
 * by bm25, and each is checked against its entry's text, read back from the session file, where
 * the snippet is cut. On a store that cannot keep the index (read-only) the results are the same,
 * only the next search reads everything again. docs/DESIGN.md §8.
 */
import { splitGluedObjects } from "../format/jsonl-reader.js";
import type { StoragePort } from "../port.js";
import type { SessionDialect } from "../format/dialect.js";
import { decode } from "../session/file-resume.js";
import { sessionDirListings, type DirListing } from "../session/listing.js";
import { GROUP_SOURCES, SearchIndex, type CandidateRow, type RefreshCounter, type SourceGroup } from "./search-index.js";
import { matchExpression, parseQuery, snippetOf, unitPattern, type QueryUnit } from "./query.js";
import { DEFAULT_SOURCES, entryTexts, SEARCH_SOURCES, type SearchSource } from "./text.js";
import { isUnspacedRun } from "./words.js";

/**
 * Which sessions and texts {@link searchSessions} searches, and how many hits it returns.
 * @category Search
 */
export interface SearchOptions {
  /** Only the sessions of this directory (e.g. `sessionDirFor(cwd)`); default: every project's. */
  dir?: string;
  /** Only sessions whose header cwd is this one (a flat seed-003 store holds every project's). */
  cwd?: string;
  /** Which texts to search (default user and assistant text; add "thinking", "tool" for more). */
  sources?: readonly SearchSource[];
  /** Hits to return, best first (default 50). */
  limit?: number;
  /** Index progress: files and bytes read of those that changed since the last search. */
  onProgress?: (progress: RefreshCounter) => void;
}

/**
 * One entry whose text matches a search.
 * @category Search
 */
export interface SearchHit {
  /** Storage path of the session file. */
  path: string;
  /** The session's id. */
  sessionId: string;
  /** The entry's id; null in a v1 file, whose entries get ids only when it is migrated. */
  entryId: string | null;
  /** The message's role (user, assistant, toolResult, bashExecution). */
  role: string;
  /** Which of the entry's texts matched. */
  source: SearchSource;
  /** The text around the first match, on one line. */
  snippet: string;
  /** Where the query matches in `snippet`: `[start, end)` UTF-16 offsets, in order, none overlapping another. */
  matches: [start: number, end: number][];
  /** Higher is better (FTS5's bm25, negated). */
  score: number;
}

const DEFAULT_LIMIT = 50;
/** Candidates fetched per hit wanted: phrases and prefixes may fail the check against the text. */
const CANDIDATES_PER_HIT = 4;
/** Candidates' lines read at once (a limit of Infinity reads them this many at a time). */
const MAX_READS_AT_ONCE = 64;

/** Searches run one at a time: they share the index kept open (search-index.ts). */
let queue: Promise<unknown> = Promise.resolve();

/**
 * Sessions whose text matches `query`, one hit per matching entry text, best first.
 *
 * The query: words (all must match), "quoted phrases", and a trailing `*` for a prefix (`stor*`,
 * `"session stor"*`). The index lives in the store (`.sessionkit/`) and is brought up to date
 * first, reading only what changed since the last search.
 *
 * @throws TypeError for an unknown search source
 * @category Search
 */
export function searchSessions(storage: StoragePort, query: string, options: SearchOptions = {}): Promise<SearchHit[]> {
  const run = queue.then(() => search(storage, query, options));
  queue = run.catch(() => {});
  return run;
}

/**
 * Brings the index of `sources` up to date with every session of the store, and saves it, without
 * searching: for a process that keeps the index for others (`sessionkit serve`, whose clients may
 * not write it).
 */
export function updateSearchIndex(storage: StoragePort, sources: readonly SearchSource[]): Promise<void> {
  const run = queue.then(async () => {
    await openIndexes(storage, sessionDirListings(storage), true, groupsOf(sources));
  });
  queue = run.catch(() => {});
  return run;
}

/** The index databases that hold `sources`. */
function groupsOf(sources: readonly SearchSource[]): SourceGroup[] {
  for (const source of sources) if (!SEARCH_SOURCES.includes(source)) throw new TypeError(`unknown search source "${source}" (known: ${SEARCH_SOURCES.join(", ")})`);
  return (Object.keys(GROUP_SOURCES) as SourceGroup[]).filter((group) => GROUP_SOURCES[group].some((source) => sources.includes(source)));
}

async function search(storage: StoragePort, query: string, options: SearchOptions): Promise<SearchHit[]> {
  const sources = options.sources ?? DEFAULT_SOURCES;
  const groups = groupsOf(sources);
  const limit = options.limit ?? DEFAULT_LIMIT;
  const parsed = parseQuery(query);
  if (parsed.units.length === 0 || limit <= 0) return [];
  const { indexes, listings } = await openIndexes(storage, sessionDirListings(storage, options.dir), options.dir === undefined, groups, options.onProgress);
  const dirs = options.dir === undefined ? undefined : listings.map((listing) => listing.dir);
  // FTS5 finds each token (a phrase's tokens, a run's bigrams anywhere in the entry); the text
  // check narrows it. Only those are wider than the match: ask for more candidates.
  const matches = new Map(indexes.map((index) => [index, matchExpression(parsed.units, (term) => index.holds(term))]));
  const needsCheck = parsed.units.some((unit) => unit.tokens.length > 1 || (isUnspacedRun(unit.tokens[0]!) && Array.from(unit.tokens[0]!).length > 2));
  let want = Number.isFinite(limit) ? limit * (needsCheck ? CANDIDATES_PER_HIT : 1) : -1;
  for (;;) {
    const rows = indexes.flatMap((index) => index.candidates(matches.get(index)!, sources, dirs, options.cwd, want)).sort((a, b) => a.rank - b.rank);
    const exhausted = want < 0 || rows.length < want;
    const hits = await checkCandidates(storage, exhausted ? rows : rows.slice(0, want), parsed.units, limit);
    if (hits.length >= limit || exhausted) return hits.slice(0, limit);
    want *= 4;
  }
}

/**
 * The indexes of `groups`, brought up to date with the store's files. The index files are read
 * and loaded (SQLite too, the first time) while `listing` lists the store: neither waits for the
 * other's reads.
 */
async function openIndexes(
  storage: StoragePort,
  listing: Promise<DirListing[]>,
  complete: boolean,
  groups: readonly SourceGroup[],
  onProgress?: (progress: RefreshCounter) => void,
): Promise<{ indexes: SearchIndex[]; listings: DirListing[] }> {
  listing.catch(() => {}); // awaited below; an index that fails to open first must not leave it unhandled
  const indexes: SearchIndex[] = [];
  for (const group of groups) indexes.push(await SearchIndex.open(storage, group));
  const listings = await listing;
  const pending = indexes.map((index) => index.pending(listings, complete));
  const counter: RefreshCounter = {
    filesDone: 0,
    filesTotal: pending.reduce((n, p) => n + p.files, 0),
    bytesDone: 0,
    bytesTotal: pending.reduce((n, p) => n + p.bytes, 0),
  };
  const report = () => onProgress?.({ ...counter });
  // Said before the first file is read: one large file may take seconds.
  if (counter.filesTotal > 0) report();
  for (const index of indexes) {
    await index.refresh(storage, listings, complete, counter, report);
    await index.save(storage);
  }
  return { indexes, listings };
}

/**
 * Reads each candidate's line back from its session file (lines of one file in offset order) and
 * keeps those whose text holds every unit as written; stops at `limit` hits, in rank order.
 */
async function checkCandidates(storage: StoragePort, rows: CandidateRow[], units: readonly QueryUnit[], limit: number): Promise<SearchHit[]> {
  const patterns = units.map(unitPattern);
  const hits: SearchHit[] = [];
  const decoder = new TextDecoder();
  // The lines are read a batch at a time, as many as hits are still wanted, all at once: one
  // after the other, 50 reads of a search waited for each other (each an open, a read, a close).
  for (let next = 0; next < rows.length && hits.length < limit; ) {
    const batch = rows.slice(next, (next += Math.min(limit - hits.length, MAX_READS_AT_ONCE)));
    const lines = await Promise.all(batch.map((row) => storage.read(row.path, { offset: row.lineOffset, length: row.lineLength }).catch(() => null)));
    for (const [i, row] of batch.entries()) {
      const bytes = lines[i];
      if (!bytes || hits.length >= limit) continue;
      const raw = recordOfLine(decoder.decode(bytes), row.part);
      const record = raw && decode(row.dialect as SessionDialect, raw);
      const text = record && entryTexts(record).find((t) => t.source === row.source && t.role === row.role)?.text;
      if (text === undefined || !patterns.every((pattern) => pattern.test(text))) continue;
      const snippet = snippetOf(text, patterns);
      hits.push({ path: row.path, sessionId: row.sessionId, entryId: typeof record!.id === "string" ? record!.id : null, role: row.role, source: row.source, snippet: snippet.text, matches: snippet.matches, score: -row.rank });
    }
  }
  return hits;
}

/** The `part`-th object of a line (more than one when a torn append glued lines). */
function recordOfLine(line: string, part: number): Record<string, unknown> | undefined {
  try {
    const value = JSON.parse(line) as Record<string, unknown>;
    return part === 0 ? value : undefined;
  } catch {
    return splitGluedObjects(line)[part];
  }
}
