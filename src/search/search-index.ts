/**
 * The search index: for one group of sources, one SQLite database kept at
 * `.sessionkit/search/<group>.sqlite` of the same port. Its `fts` table is contentless FTS5 with
 * detail=none (which entries hold which words: no text, no positions), so phrases and snippets
 * come from the entry's line, read back from the session file. The tables, and why detail=none:
 * docs/DESIGN.md §8.
 */
import type { DirListing } from "../session/listing.js";
import { dialectOfLine, isUnchanged, readSince, type ReadPoint } from "../session/file-resume.js";
import { cwdKey } from "../session/paths.js";
import { joinPath, type StoragePort } from "../port.js";
import { databaseBytes, databaseFromBytes, emptyDatabase, type Database } from "./sqlite.js";
import { entryTexts, type SearchSource } from "./text.js";
import { indexedText } from "./words.js";

export const SEARCH_DIR = ".sessionkit/search";

/** Sources kept together in one database: the default ones apart from the large ones. */
export type SourceGroup = "text" | "more";
export const GROUP_SOURCES: Record<SourceGroup, readonly SearchSource[]> = { text: ["user", "assistant"], more: ["thinking", "tool"] };

/** docs.kind: the source and the message role in one small integer. */
const KINDS: readonly { source: SearchSource; role: string }[] = [
  { source: "user", role: "user" },
  { source: "assistant", role: "assistant" },
  { source: "thinking", role: "assistant" },
  { source: "tool", role: "toolResult" },
  { source: "tool", role: "bashExecution" },
];
const kindOf = (source: SearchSource, role: string) => KINDS.findIndex((k) => k.source === source && k.role === role);

/** PRAGMA user_version of the current layout; any other is rebuilt. */
const SCHEMA_VERSION = 3;
const SCHEMA = `
PRAGMA page_size = 4096;
PRAGMA user_version = ${SCHEMA_VERSION};
CREATE TABLE files(id INTEGER PRIMARY KEY, dir TEXT NOT NULL, name TEXT NOT NULL, session_id TEXT NOT NULL, cwd TEXT NOT NULL, dialect TEXT NOT NULL, point TEXT NOT NULL, UNIQUE(dir, name));
CREATE TABLE docs(id INTEGER PRIMARY KEY, file INTEGER NOT NULL, kind INTEGER NOT NULL, part INTEGER NOT NULL, line_offset INTEGER NOT NULL, line_length INTEGER NOT NULL);
CREATE VIRTUAL TABLE fts USING fts5(text, content='', contentless_delete=1, detail=none, tokenize='unicode61 remove_diacritics 0 tokenchars ''_''');
`;

function indexPath(group: SourceGroup): string {
  return joinPath(SEARCH_DIR, `${group}.sqlite`);
}

/**
 * Work a refresh does, for progress: files and bytes to read (what changed), and read so far.
 * @category Search
 */
export interface RefreshCounter {
  /** Session files read so far. */
  filesDone: number;
  /** Session files to read (those that changed since the last search). */
  filesTotal: number;
  /** Bytes read so far. */
  bytesDone: number;
  /** Bytes to read. */
  bytesTotal: number;
}

export interface CandidateRow {
  /** Storage path of the session file. */
  path: string;
  sessionId: string;
  /** The file's dialect: its lines are decoded with it. */
  dialect: string;
  role: string;
  source: SearchSource;
  /** Which object of the line (more than one when a torn append glued lines). */
  part: number;
  lineOffset: number;
  lineLength: number;
  rank: number;
}

interface FileRow {
  id: number;
  sessionId: string;
  cwd: string;
  point: ReadPoint;
}

const fileKey = (dir: string, name: string) => `${dir}\n${name}`;

/**
 * The index last used per group, kept open with the stat of the file it matches: a later search in
 * the same process on the same port skips reading and loading it while the file is unchanged. One
 * per group, so at most two databases stay in WASM memory. On a store that refuses writes it is
 * what keeps later searches fast. Results never depend on it: every search checks each session
 * file against the index's read points.
 */
const kept = new Map<SourceGroup, { storage: StoragePort; index: SearchIndex; stamp: string }>();

async function stampOf(storage: StoragePort, group: SourceGroup): Promise<string> {
  const stat = await storage.stat(indexPath(group)).catch(() => null);
  return stat ? `${stat.size}:${stat.mtimeMs}` : "";
}

export class SearchIndex {
  readonly group: SourceGroup;
  readonly #db: Database;
  #changed: boolean;

  private constructor(group: SourceGroup, db: Database, created: boolean) {
    this.group = group;
    this.#db = db;
    this.#changed = created;
  }

  /**
   * The index as stored (or as kept open from the last search, see `kept`), or a new empty one when
   * there is none or it cannot be read. Use one at a time (search.ts runs searches one by one).
   */
  static async open(storage: StoragePort, group: SourceGroup): Promise<SearchIndex> {
    const stamp = await stampOf(storage, group);
    const previous = kept.get(group);
    if (previous && previous.storage === storage && previous.stamp === stamp) return previous.index;
    if (previous) previous.index.#db.close();
    kept.delete(group);
    const index = await SearchIndex.#load(storage, group);
    kept.set(group, { storage, index, stamp });
    return index;
  }

  static async #load(storage: StoragePort, group: SourceGroup): Promise<SearchIndex> {
    const bytes = await storage.read(indexPath(group)).catch(() => null);
    if (bytes && bytes.length > 0) {
      let db: Database | undefined;
      try {
        db = await databaseFromBytes(bytes, false);
        if (db.selectValue("PRAGMA user_version") === SCHEMA_VERSION && db.selectValue("SELECT count(*) FROM files") !== undefined) {
          return new SearchIndex(group, db, false);
        }
      } catch {
        // damaged or foreign bytes: the index is a cache, build it again
      }
      db?.close();
    }
    const db = await emptyDatabase();
    db.exec(SCHEMA);
    return new SearchIndex(group, db, true);
  }

  /** The files table, read once per refresh. */
  #known: Map<string, FileRow> | undefined;

  #files(): Map<string, FileRow> {
    if (this.#known) return this.#known;
    // One JSON text for the whole table: a value read across the WebAssembly boundary costs far
    // more than JSON.parse does (300 files: ~20 ms read value by value, ~3 ms as one text).
    const table = this.#db.selectValue("SELECT json_group_array(json_array(id, dir, name, session_id, cwd, point)) FROM files") as string;
    const rows = JSON.parse(table) as [number, string, string, string, string, string][];
    this.#known = new Map(rows.map(([id, dir, name, sessionId, cwd, point]) => [fileKey(dir, name), { id, sessionId, cwd, point: JSON.parse(point) as ReadPoint }]));
    return this.#known;
  }

  #drop(fileId: number, alsoFile: boolean): void {
    this.#db.exec({ sql: "DELETE FROM fts WHERE rowid IN (SELECT id FROM docs WHERE file = ?)", bind: [fileId] });
    this.#db.exec({ sql: "DELETE FROM docs WHERE file = ?", bind: [fileId] });
    if (alsoFile) this.#db.exec({ sql: "DELETE FROM files WHERE id = ?", bind: [fileId] });
  }

  /**
   * Files of `listings` that changed since the last refresh, with the bytes left to read, and
   * whether any indexed file is gone (see `refresh` for `complete`).
   */
  pending(listings: readonly DirListing[], complete: boolean): { files: number; bytes: number; gone: boolean } {
    const known = this.#files();
    let files = 0;
    let bytes = 0;
    const listed = new Set(listings.map((listing) => listing.dir));
    const present = new Set(listings.flatMap(({ dir, files: entries }) => entries.map((file) => fileKey(dir, file.name))));
    const gone = [...known.keys()].some((key) => !present.has(key) && (complete || listed.has(key.slice(0, key.indexOf("\n")))));
    for (const { dir, files: entries } of listings) {
      for (const file of entries) {
        const row = known.get(fileKey(dir, file.name));
        if (row && isUnchanged(row.point, file)) continue;
        files++;
        bytes += row && file.size >= row.point.offset ? file.size - row.point.offset : file.size;
      }
    }
    return { files, bytes, gone };
  }

  /**
   * Brings the index up to date with `listings`: reads each changed file from its last indexed
   * offset (from the start after a rewrite) and drops files gone from those directories (from
   * every other directory too when `complete`: the listings are the whole store). A file that
   * cannot be read is dropped, so the next refresh reads it from the start.
   */
  async refresh(storage: StoragePort, listings: readonly DirListing[], complete: boolean, counter: RefreshCounter, onProgress?: () => void): Promise<void> {
    const pending = this.pending(listings, complete);
    if (pending.files === 0 && !pending.gone) return;
    const db = this.#db;
    const known = this.#files();
    this.#known = undefined;
    const listed = new Set(listings.map((listing) => listing.dir));
    const present = new Set(listings.flatMap(({ dir, files }) => files.map((file) => fileKey(dir, file.name))));
    db.exec("BEGIN");
    try {
      for (const [key, row] of known) {
        const dir = key.slice(0, key.indexOf("\n"));
        if (present.has(key) || (!complete && !listed.has(dir))) continue;
        this.#drop(row.id, true);
        this.#changed = true;
      }
      const insertDoc = db.prepare("INSERT INTO docs(file, kind, part, line_offset, line_length) VALUES (?, ?, ?, ?, ?)");
      const insertText = db.prepare("INSERT INTO fts(rowid, text) VALUES (last_insert_rowid(), ?)");
      const sources = GROUP_SOURCES[this.group];
      // The roles whose messages give texts of this group's sources (text.ts's entryTexts).
      const indexedRoles = new Set(KINDS.filter((kind) => sources.includes(kind.source)).map((kind) => kind.role));
      try {
        for (const { dir, files } of listings) {
          for (const file of files) {
            const previous = known.get(fileKey(dir, file.name));
            if (previous && isUnchanged(previous.point, file)) continue;
            this.#changed = true;
            const fileId = previous?.id ?? this.#addFile(dir, file.name);
            // Only session files are indexed: the first record must be a session header.
            let sessionId = previous?.sessionId ?? "";
            let cwd = previous?.cwd ?? "";
            let atStart = false;
            let lastLine = -1;
            let part = 0;
            try {
              const pass = await readSince(
                storage,
                joinPath(dir, file.name),
                file,
                previous?.point,
                (fromStart) => {
                  atStart = fromStart;
                  if (fromStart && previous) this.#drop(fileId, false);
                },
                (record, at) => {
                  if (atStart) {
                    atStart = false;
                    sessionId = record.type === "session" && typeof record.id === "string" ? record.id : "";
                    cwd = typeof record.cwd === "string" ? cwdKey(record.cwd) : "";
                    return;
                  }
                  part = at.offset === lastLine ? part + 1 : 0;
                  lastLine = at.offset;
                  if (sessionId === "") return;
                  for (const text of entryTexts(record)) {
                    if (!sources.includes(text.source)) continue;
                    insertDoc.bind([fileId, kindOf(text.source, text.role), part, at.offset, at.length]).stepReset();
                    insertText.bind([indexedText(text.text)]).stepReset();
                  }
                },
                // A message line whose role has no text of this group's is skipped from its bytes, not parsed.
                (head) => !atStart && !indexedRoles.has(head.role),
              );
              if (!pass) throw new Error("gone");
              db.exec({
                sql: "UPDATE files SET session_id = ?, cwd = ?, dialect = ?, point = ? WHERE id = ?",
                bind: [sessionId, cwd, dialectOfLine(pass.point.header), JSON.stringify(pass.point), fileId],
              });
              counter.bytesDone += pass.bytesRead;
            } catch {
              this.#drop(fileId, true);
            }
            counter.filesDone++;
            onProgress?.();
          }
        }
      } finally {
        insertDoc.finalize();
        insertText.finalize();
      }
      db.exec("COMMIT");
    } catch (error) {
      db.exec("ROLLBACK");
      throw error;
    }
  }

  #addFile(dir: string, name: string): number {
    this.#db.exec({ sql: "INSERT INTO files(dir, name, session_id, cwd, dialect, point) VALUES (?, ?, '', '', 'pi', '{}')", bind: [dir, name] });
    return this.#db.selectValue("SELECT last_insert_rowid()") as number;
  }

  /** Whether some entry holds `term` (a token as the index has it). */
  holds(term: string): boolean {
    return this.#db.selectValue("SELECT rowid FROM fts WHERE fts MATCH ? LIMIT 1", [`"${term}"`]) !== undefined;
  }

  /**
   * Entries matching the FTS5 expression in `dirs` (all when undefined) of sessions of `cwd` (any
   * when undefined), best first (bm25).
   */
  candidates(match: string, sources: readonly SearchSource[], dirs: readonly string[] | undefined, cwd: string | undefined, limit: number): CandidateRow[] {
    const kinds = KINDS.flatMap((kind, i) => (sources.includes(kind.source) && GROUP_SOURCES[this.group].includes(kind.source) ? [i] : []));
    if (kinds.length === 0) return [];
    const inDirs = dirs ? `AND f.dir IN (${dirs.map(() => "?").join(", ")})` : "";
    const ofCwd = cwd === undefined ? "" : "AND f.cwd = ?";
    const rows = this.#db.selectArrays(
      `SELECT f.dir, f.name, f.session_id, f.dialect, d.kind, d.part, d.line_offset, d.line_length, fts.rank
         FROM fts JOIN docs d ON d.id = fts.rowid JOIN files f ON f.id = d.file
        WHERE fts MATCH ? AND d.kind IN (${kinds.join(", ")}) ${inDirs} ${ofCwd}
        ORDER BY fts.rank LIMIT ?`,
      [match, ...(dirs ?? []), ...(cwd === undefined ? [] : [cwdKey(cwd)]), limit],
    ) as [string, string, string, string, number, number, number, number, number][];
    return rows.map(([dir, name, sessionId, dialect, kind, part, lineOffset, lineLength, rank]) => ({
      path: joinPath(dir, name),
      sessionId,
      dialect,
      role: KINDS[kind]!.role,
      source: KINDS[kind]!.source,
      part,
      lineOffset,
      lineLength,
      rank,
    }));
  }

  /**
   * Writes the index back when it changed, compacted (FTS5 segments merged, free pages dropped).
   * Best effort: a store that refuses (read-only) keeps what it had, and results stand without it.
   */
  async save(storage: StoragePort): Promise<void> {
    if (!this.#changed) return;
    try {
      this.#db.exec("INSERT INTO fts(fts) VALUES('optimize'); VACUUM;");
      await storage.write(indexPath(this.group), await databaseBytes(this.#db));
      this.#changed = false;
      const entry = kept.get(this.group);
      if (entry?.index === this) entry.stamp = await stampOf(storage, this.group);
    } catch {
      // the index is a cache (kept open, it still serves this process)
    }
  }
}
