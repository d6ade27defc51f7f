/**
 * Reading a session file without parsing most of it: a line whose bytes prove it a valid message
 * entry (message-line.ts) is kept as an UnparsedEntry; every other line is parsed as
 * readSessionFile does. The result equals readSessionFile's, only parsed later; files that need a
 * migration or lack a session header are read by readSessionFile (docs/DESIGN.md §3).
 */
import type { StoragePort } from "../port.js";
import { recordHoldsBlobRef } from "../blobs/blob-store.js";
import { decodeHeader, entryReader, readSessionFile, sortByLine, type EntryReader, type LoadedSessionFile } from "./session-file.js";
import { lineDecoder, parseLineAt, parseTail, type JsonlTail, type LineProblem } from "./jsonl-reader.js";
import { detectDialect, keyInDialect, rejectedKeys, type SessionDialect } from "./dialect.js";
import { headerVersion } from "./migrate.js";
import { readLineRanges } from "./line-ranges.js";
import { messageLineShape, readMessageLine, type MessageLineShape } from "./message-line.js";
import { CURRENT_SESSION_VERSION, type SessionEntry, type SessionHeader } from "./types.js";
import { UnparsedEntry } from "./unparsed-entry.js";

/** An entry of a lazily read file: parsed, or proved valid and parsed when asked for. */
export type LazyEntry = SessionEntry | UnparsedEntry;

/** The whole entry (parsed now if it was not). */
export function entryOf(entry: LazyEntry): SessionEntry {
  return entry instanceof UnparsedEntry ? entry.entry() : entry;
}

interface LazySessionFile extends Omit<LoadedSessionFile, "entries" | "entryLines" | "entriesWithBlobRefs"> {
  entries: LazyEntry[];
  /** Entries whose line holds a blob ref (parsed already: their images are resolved at open). */
  entriesWithBlobRefs: ReadonlySet<SessionEntry>;
}

export type LazySessionFileRead = { kind: "missing" } | { kind: "empty" } | LazySessionFile;

const LBRACE = 0x7b;
const CHUNK = 4 * 1024 * 1024;
/** Ranges asked for before the one being checked is done: a port's read is a round trip, and on a busy machine each one waits its turn. */
const READ_AHEAD = 3;

interface HeaderRead {
  dialect: SessionDialect;
  header: SessionHeader;
  reader: EntryReader;
  shape: MessageLineShape;
}

/** The shape of provable message lines, per dialect. */
const shapes = new Map<SessionDialect, MessageLineShape>();

function shapeOf(dialect: SessionDialect): MessageLineShape {
  let shape = shapes.get(dialect);
  if (!shape) shapes.set(dialect, (shape = messageLineShape(keyInDialect(dialect, "parentId"), rejectedKeys(dialect))));
  return shape;
}

/**
 * Reads a session file, leaving provable message lines unparsed (see the module comment). Throws
 * as readSessionFile does for a file that is not a session.
 */
export async function readSessionFileLazily(storage: StoragePort, path: string, options: { chunkSize?: number } = {}): Promise<LazySessionFileRead> {
  const chunkSize = options.chunkSize ?? CHUNK;
  const decoder = lineDecoder();
  const scanProblems: LineProblem[] = [];
  const entries: LazyEntry[] = [];
  const withRefs = new Set<SessionEntry>();
  /** What the header says, once its record is read. */
  let session: HeaderRead | null = null;
  /** The first record is no header, or a header this reader leaves to readSessionFile. */
  let handOver = false;
  let line = 0;

  const onRecord = (record: Record<string, unknown>, recordLine: number, text: string) => {
    if (handOver) return;
    if (session) {
      const entry = session.reader.read(record, recordLine);
      if (!entry) return;
      entries.push(entry);
      if (recordHoldsBlobRef(text, record)) withRefs.add(entry);
      return;
    }
    const dialect = detectDialect(record);
    const decoded = dialect === null ? null : decodeHeader(dialect, record);
    if (dialect === null || !decoded?.success || (dialect === "pi" && headerVersion(record) < CURRENT_SESSION_VERSION)) {
      handOver = true;
      return;
    }
    session = { dialect, header: decoded.data, reader: entryReader(dialect, decoded.data.timestamp), shape: shapeOf(dialect) };
  };

  /**
   * The lines of `bytes` from `from` (file offset `offset`), up to the last "\n": returns where the
   * unfinished last line starts. A provable message line is checked for where it ends on the way.
   */
  const onLines = (bytes: Uint8Array, from: number, offset: number): number => {
    const view = new DataView(bytes.buffer, bytes.byteOffset, bytes.length);
    while (from < bytes.length && !handOver) {
      line++;
      if (session && bytes[from] === LBRACE) {
        const head = readMessageLine(bytes, view, from, bytes.length, session.shape, entries.at(-1)?.id ?? null);
        // A line with a blob ref is parsed now: its images are resolved at open, as the full read does.
        if (head && !head.blobRef) {
          const entry = new UnparsedEntry(head, line, session.dialect, bytes, from, head.end);
          entries.push(entry);
          // Only seed 003 needs it: a later entry without a timestamp takes this one's.
          if (session.dialect !== "pi") session.reader.skip(entry.timestamp);
          offset += head.end + 1 - from;
          from = head.end + 1;
          continue;
        }
      }
      const next = parseLineAt(decoder, bytes, from, offset, line, onRecord, scanProblems);
      if (next < 0) {
        line--; // not a line yet
        break;
      }
      offset += next - from;
      from = next;
    }
    return from;
  };

  const size = (await storage.stat(path))?.size ?? 0;
  const { missing, completeBytes, tail: tailBytes } = await readLineRanges(storage, path, { size, rangeBytes: chunkSize, readAhead: READ_AHEAD, onLines, stopped: () => handOver });
  if (missing) return { kind: "missing" };
  const extent = { completeBytes, completeLines: line };
  const tail: JsonlTail = tailBytes && !handOver ? parseTail(decoder, tailBytes, completeBytes, line + 1, onRecord, scanProblems) : { kind: "clean" };

  const opened = session as HeaderRead | null; // assigned in onRecord, out of the compiler's sight
  if (handOver || !opened) {
    // A migration, not a session, or no record at all: the full read says which, as it always has.
    return readSessionFile(storage, path);
  }
  return {
    kind: "session",
    dialect: opened.dialect,
    header: opened.header,
    entries,
    migratedFrom: null,
    problems: sortByLine([...scanProblems, ...opened.reader.problems]),
    tail,
    extent,
    entriesWithBlobRefs: withRefs,
  };
}

