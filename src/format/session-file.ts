/**
 * Reading a session file: the header checked (header.ts), the entries with zod (schema.ts), the
 * rest streamed, decoded from its dialect (format/dialect.ts), migrated in memory (pi's dialect has
 * versions; seed 003's has none).
 */
import type { StoragePort } from "../port.js";
import { SessionError } from "../errors.js";
import { recordHoldsBlobRef } from "../blobs/blob-store.js";
import { concatAll, type ReusedEncodeBuffer } from "./bytes.js";
import { scanJsonl, type JsonlTail, type LineProblem } from "./jsonl-reader.js";
import { migrateRecords } from "./migrate.js";
import { checkEntry } from "./schema.js";
import { decodeHeader } from "./header.js";
import { completeSeed003Entry, EXPECTED_HEADERS, decodeRecord, DialectError, detectDialect, encodeRecord, type SessionDialect } from "./dialect.js";
import type { SessionEntry, SessionHeader } from "./types.js";

// Where readers of session files have always found it.
export { decodeHeader };

export type SessionFileRead =
  | { kind: "missing" }
  | { kind: "empty" } // zero bytes or whitespace only: nothing to lose
  | LoadedSessionFile;

export interface LoadedSessionFile {
  kind: "session";
  /** The dialect the file is written in (and is written back in). */
  dialect: SessionDialect;
  /** Canonical (decoded) header and entries. */
  header: SessionHeader;
  entries: SessionEntry[];
  /** The 1-based line of each entry (parallel to `entries`). */
  entryLines: number[];
  /** The version migrated from, or null when the file was current. */
  migratedFrom: number | null;
  problems: LineProblem[];
  tail: JsonlTail;
  /** Where the complete lines end (an unterminated last line starts here), and how many lines that is: where following resumes. */
  extent: { completeBytes: number; completeLines: number };
  /** Entries whose line holds a blob ref (the only ones that need resolving). */
  entriesWithBlobRefs: ReadonlySet<SessionEntry>;
}

/**
 * Reads and migrates a session file. Throws SessionError "not-a-session" when the file has
 * content but its first record is not a session header; the file is never touched.
 */
export async function readSessionFile(storage: StoragePort, path: string): Promise<SessionFileRead> {
  const records: Record<string, unknown>[] = [];
  const lineOf = new Map<object, number>();
  const withRefs = new Set<object>();
  const scan = await scanJsonl(storage, path, (record, line, text) => {
    records.push(record);
    lineOf.set(record, line);
    if (recordHoldsBlobRef(text, record)) withRefs.add(record);
  });
  if (!scan) return { kind: "missing" };
  const first = records[0];
  if (!first) {
    if (scan.problems.length === 0 && scan.tail.kind !== "torn") return { kind: "empty" };
    const problem = scan.problems[0]?.message ?? "no JSON record";
    throw new SessionError("not-a-session", `${path} is not a session file: ${problem}`, { path });
  }
  const dialect = detectDialect(first);
  const header = dialect === null ? null : decodeHeader(dialect, first);
  if (dialect === null || !header?.success) {
    const what = typeof first.type === "string" ? `first record has type ${JSON.stringify(first.type)}` : "first record is not a session header";
    throw new SessionError("not-a-session", `${path} is not a session file: ${what} (expected ${EXPECTED_HEADERS})`, { path });
  }
  const migratedFrom = dialect === "pi" ? migrateRecords(records) : null;
  const reader = entryReader(dialect, header.data.timestamp);
  const entries: SessionEntry[] = [];
  const entryLines: number[] = [];
  const entriesWithBlobRefs = new Set<SessionEntry>();
  for (const record of records.slice(1)) {
    const line = lineOf.get(record)!;
    const entry = reader.read(record, line);
    if (!entry) continue;
    entries.push(entry);
    entryLines.push(line);
    if (withRefs.has(record)) entriesWithBlobRefs.add(entry);
  }
  const problems = sortByLine([...scan.problems, ...reader.problems]);
  return {
    kind: "session",
    dialect,
    header: header.data as SessionHeader,
    entries,
    entryLines,
    migratedFrom,
    problems,
    tail: scan.tail,
    extent: { completeBytes: scan.completeBytes, completeLines: scan.completeLines },
    entriesWithBlobRefs,
  };
}

/** Turns the records after a file's header into canonical entries, one at a time, in file order. */
export interface EntryReader {
  /** The canonical entry of `record`, or null when it is skipped (its problem is in `problems`). */
  read(record: Record<string, unknown>, line: number): SessionEntry | null;
  /** An entry kept without being read (proved valid from its bytes) whose timestamp is `timestamp`. */
  skip(timestamp: string): void;
  /** Records skipped: a second header, a record its dialect cannot decode, an invalid entry. */
  readonly problems: LineProblem[];
}

/**
 * The reader of the entries of a file in `dialect`, from the record after `previousTimestamp`'s
 * (the header's, at the start of a file): a second header is skipped as pi skips it, a record is
 * decoded from its dialect (seed 003's missing fields filled in from the record before it), and an
 * entry its type's schema rejects would break the tree or the context, so it is skipped and
 * reported.
 */
export function entryReader(dialect: SessionDialect, previousTimestamp: unknown): EntryReader {
  const problems: LineProblem[] = [];
  return {
    problems,
    read(record, line) {
      if (detectDialect(record) !== null) {
        problems.push({ line, kind: "extra-header", message: `line ${line}: a second session header (left by an old fork bug)` });
        return null;
      }
      let entry: Record<string, unknown> = record;
      if (dialect !== "pi") {
        try {
          entry = decodeRecord(dialect, record);
        } catch (error) {
          if (!(error instanceof DialectError)) throw error;
          problems.push({ line, kind: "invalid-entry", message: `line ${line}: invalid entry: ${error.message}`, ...entryIdOf(record) });
          return null;
        }
        previousTimestamp = completeSeed003Entry(entry, previousTimestamp);
      }
      const check = checkEntry(entry);
      if (check.ok) return entry as unknown as SessionEntry;
      problems.push({ line, kind: "invalid-entry", message: `line ${line}: invalid entry: ${check.problem}`, ...entryIdOf(record) });
      return null;
    },
    skip(timestamp) {
      previousTimestamp = timestamp;
    },
  };
}

/** Problems in line order; problems of one line keep their order (the scan's before the entry's). */
export function sortByLine(problems: LineProblem[]): LineProblem[] {
  return problems.sort((a, b) => a.line - b.line);
}

function entryIdOf(record: Record<string, unknown>): { entryId?: string } {
  return typeof record.id === "string" ? { entryId: record.id } : {};
}

/** The bytes of a session in `dialect`: its canonical header and entries encoded, one line each. */
export function encodeSessionFile(dialect: SessionDialect, header: SessionHeader, entries: Iterable<SessionEntry>): Uint8Array {
  function* records(): Generator<unknown> {
    yield encodeRecord(dialect, header);
    for (const entry of entries) yield encodeRecord(dialect, entry);
  }
  return encodeJsonl(records());
}

const ENCODE_BATCH_CHARS = 1 << 20;
/** One for every call: a TextEncoder made per call showed in the page's profile of 10k appends (16 ms). */
const encoder = new TextEncoder();

/**
 * The JSONL bytes of records: one `JSON.stringify` line each. Encoded in batches, so no single
 * string holds a whole large session; `into` takes the bytes of a few records (see ReusedEncodeBuffer).
 */
export function encodeJsonl(records: Iterable<unknown>, into?: ReusedEncodeBuffer): Uint8Array {
  const parts: Uint8Array[] = [];
  let text = "";
  for (const record of records) {
    text += JSON.stringify(record) + "\n";
    if (text.length >= ENCODE_BATCH_CHARS) {
      parts.push(encoder.encode(text));
      text = "";
    }
  }
  if (parts.length === 0 && into) return into.encode(text);
  if (text) parts.push(encoder.encode(text));
  return concatAll(parts);
}
