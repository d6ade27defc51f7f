/**
 * Opening a session for viewing, built so that a 1 GiB file neither blocks the page nor fills it
 * with objects: the file is read in ranges (src/format/line-ranges.ts: 16 MiB, three asked for
 * ahead; over `sessionkit serve` each is a request, and the transfer is most of the time), and its
 * lines are indexed a slice of at most `sliceMs` at a time with a yield between slices. As the
 * core's lazy reader does (format/lazy-session-file.ts, docs/DESIGN.md §3), a message line in pi's
 * field order is proved valid from its bytes (format/message-line.ts) and is not parsed: the model
 * keeps where it is and what line-skim.ts reads of it (an assistant's usage, model, tool calls and
 * whether it has text; a tool result's call), and parses it when it is shown. Every other line is
 * parsed and checked as readSessionFile checks it (entryReader: dialects, second headers, invalid
 * entries), with the same line numbers and problems. pi files older than version 3 are read by
 * readSessionFile, which migrates them.
 *
 * `readSessionTail` reads only the end of a file: what the app shows of a large session while the
 * rest is indexed (its leaf and the entries before it in that range).
 *
 * Following: `followSession` reads what was appended since (from the last complete line), on each
 * `watch` notification when the port has `watch`, else by polling its size.
 */
import { CURRENT_SESSION_VERSION, type SessionEntry, type SessionHeader } from "../../../src/format/types.js";
import { EXPECTED_HEADERS, completeSeed003Entry, decodeRecord, detectDialect, keyInDialect, rejectedKeys, type SessionDialect } from "../../../src/format/dialect.js";
import { SessionError } from "../../../src/errors.js";
import { checkEntry } from "../../../src/format/schema.js";
import { decodeHeader, entryReader, readSessionFile, sortByLine, type EntryReader } from "../../../src/format/session-file.js";
import { headerVersion } from "../../../src/format/migrate.js";
import { messageLineShape, readMessageLine, type MessageLineHead, type MessageLineShape } from "../../../src/format/message-line.js";
import { readLineRanges } from "../../../src/format/line-ranges.js";
import { parentDir, type StoragePort } from "../../../src/port.js";
import { decodeLines, lineDecoder, parseLine, parseLineAt, scanJsonl, type LineProblem } from "../../../src/format/jsonl-reader.js";
import { yieldToEventLoop } from "../model/filters.js";
import { LineEntry, SessionModel } from "../model/session-model.js";
import { afterRole, skimAssistant, toolCallIdAt } from "./line-skim.js";

export interface LoadedSession {
  storage: StoragePort;
  path: string;
  model: SessionModel;
  /** Lines not read as written (skipped or recovered), by line. */
  problems: LineProblem[];
  migratedFrom: number | null;
  /** The file's dialect: appended records are decoded from it. */
  dialect: SessionDialect;
  /** Bytes up to the end of the last complete line read: where following continues. */
  completeBytes: number;
}

export interface LoadOptions {
  /** Bytes indexed so far of the file's size at the start. */
  onProgress?: (bytesRead: number, totalBytes: number) => void;
  /** Range size per read. */
  rangeBytes?: number;
  /** The longest stretch of indexing between two yields to the event loop, in ms. */
  sliceMs?: number;
  /** False once the session is no longer wanted (another was opened): loading stops with LoadCancelled. */
  isCurrent?: () => boolean;
}

/** A load stopped because its session was no longer wanted (LoadOptions.isCurrent). */
export class LoadCancelled extends Error {
  constructor(path: string) {
    super(`${path}: loading stopped, another session was opened`);
    this.name = "LoadCancelled";
  }
}

const RANGE_BYTES = 16 << 20;
/** Ranges asked for before the one being indexed is done. */
const READ_AHEAD = 3;
const SLICE_MS = 8;
/**
 * A file no larger than this is indexed in one go, without looking at the clock: its first lines
 * run cold code that can outlast a slice on a busy machine, and a yield there let the browser
 * paint a frame without the session (one frame and more before a small session's first entry).
 * Indexing this much takes a few ms.
 */
export const ONE_TASK_BYTES = 256 << 10;
/** Lines indexed between two looks at the clock. */
const LINES_PER_CLOCK = 32;
const NEWLINE = 0x0a;
const LBRACE = 0x7b;

const shapes = new Map<SessionDialect, MessageLineShape>();
function shapeOf(dialect: SessionDialect): MessageLineShape {
  let shape = shapes.get(dialect);
  if (!shape) shapes.set(dialect, (shape = messageLineShape(keyInDialect(dialect, "parentId"), rejectedKeys(dialect))));
  return shape;
}

const textDecoder = new TextDecoder();

export async function loadSession(storage: StoragePort, path: string, options: LoadOptions = {}): Promise<LoadedSession> {
  const rangeBytes = options.rangeBytes ?? RANGE_BYTES;
  const sliceMs = options.sliceMs ?? SLICE_MS;
  const size = (await storage.stat(path))?.size ?? 0;
  const decoder = lineDecoder();
  const scanProblems: LineProblem[] = [];
  let session: { dialect: SessionDialect; model: SessionModel; reader: EntryReader; shape: MessageLineShape } | null = null;
  /** The file needs a migration: readSessionFile reads it. */
  let handOver = false;
  let line = 0;
  /** Entries read since they last joined the model. */
  let batch: (SessionEntry | LineEntry)[] = [];
  let previousId: string | null = null;

  const onRecord = (record: Record<string, unknown>, recordLine: number) => {
    if (handOver) return;
    if (session) {
      const entry = session.reader.read(record, recordLine);
      if (entry) {
        batch.push(entry);
        previousId = entry.id;
      }
      return;
    }
    const dialect = detectDialect(record);
    const decoded = dialect === null ? null : decodeHeader(dialect, record);
    if (dialect === null || !decoded?.success) {
      const what = typeof record.type === "string" ? `first record has type ${JSON.stringify(record.type)}` : "first record is not a session header";
      throw new SessionError("not-a-session", `${path} is not a session file: ${what} (expected ${EXPECTED_HEADERS})`, { path });
    }
    if (dialect === "pi" && headerVersion(record) < CURRENT_SESSION_VERSION) {
      handOver = true;
      return;
    }
    session = { dialect, model: new SessionModel(decoded.data, [], dialect), reader: entryReader(dialect, decoded.data), shape: shapeOf(dialect) };
  };

  const flush = () => {
    if (session && batch.length > 0) session.model.append(batch);
    batch = [];
  };

  /** A proved line as the model keeps it, or null when it is to be parsed (what line-skim.ts cannot read). */
  const lineEntry = (head: MessageLineHead, bytes: Uint8Array, from: number, range: () => number): LineEntry | null => {
    const facts = head.role === "assistant" ? skimAssistant(bytes, afterRole(head.timestampEnd, head.role)) : undefined;
    if (facts === null) return null;
    const entry = new LineEntry(head.id, head.parentId, head.role, range(), from, head.end, head.timestampStart, head.timestampEnd);
    entry.assistant = facts;
    if (head.role === "toolResult") entry.toolCallId = toolCallIdAt(bytes, head.toolCallIdStart, head.toolCallIdEnd);
    return entry;
  };

  /**
   * Indexes the lines of `bytes` from `from` (file offset `offset`) up to the last "\n", yielding
   * every `sliceMs`; returns where the unfinished last line starts.
   */
  const onLines = async (bytes: Uint8Array, from: number, offset: number): Promise<number> => {
    const view = new DataView(bytes.buffer, bytes.byteOffset, bytes.length);
    let rangeNumber = -1;
    // The range is kept by the model only once it holds an unparsed line.
    const range = () => (rangeNumber >= 0 ? rangeNumber : (rangeNumber = session!.model.addBytes(bytes)));
    let deadline = performance.now() + sliceMs;
    let lines = 0;
    // The size the file had, or where this range ends in it when it grew since.
    const sliced = size > ONE_TASK_BYTES || offset + bytes.length - from > ONE_TASK_BYTES;
    while (from < bytes.length && !handOver) {
      if (sliced && ++lines % LINES_PER_CLOCK === 0 && performance.now() > deadline) {
        flush();
        options.onProgress?.(Math.min(offset, size), size);
        await yieldToEventLoop();
        if (options.isCurrent?.() === false) throw new LoadCancelled(path);
        deadline = performance.now() + sliceMs;
      }
      line++;
      if (session && bytes[from] === LBRACE) {
        const head = readMessageLine(bytes, view, from, bytes.length, session.shape, previousId);
        const entry = head && lineEntry(head, bytes, from, range);
        if (head && entry) {
          // Only seed 003 needs it: a later entry without a timestamp takes this one's.
          if (session.dialect !== "pi") session.reader.skip(textDecoder.decode(bytes.subarray(head.timestampStart, head.timestampEnd)));
          batch.push(entry);
          previousId = head.id;
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

  const { missing, completeBytes, tail: tailBytes } = await readLineRanges(storage, path, {
    size,
    rangeBytes,
    readAhead: READ_AHEAD,
    onLines,
    onRead: () => {
      if (options.isCurrent?.() === false) throw new LoadCancelled(path);
    },
    onRange: (handled) => {
      flush();
      options.onProgress?.(Math.min(handled, size), size);
    },
    stopped: () => handOver,
  });
  if (missing) throw new SessionError("entry-not-found", `${path}: no such session file`, { path });

  if (tailBytes && !handOver) {
    const text = decodeLines(decoder, tailBytes, completeBytes);
    if (text.trim() !== "") {
      line++;
      const before = scanProblems.length;
      if (!parseLine(text, line, { offset: completeBytes, length: tailBytes.length }, onRecord, scanProblems, true)) {
        scanProblems.length = before;
        scanProblems.push({ line, kind: "torn", message: `line ${line}: incomplete last line (${tailBytes.length} bytes), likely a crash mid-append` });
      }
    }
  }
  flush();
  options.onProgress?.(Math.min(completeBytes + (tailBytes?.length ?? 0), size), size);

  const opened = session as { dialect: SessionDialect; model: SessionModel; reader: EntryReader } | null; // assigned in onRecord, out of the compiler's sight
  if (handOver) {
    const migrated = await readMigrated(storage, path);
    options.onProgress?.(size, size);
    return migrated;
  }
  if (!opened) throw new SessionError("not-a-session", `${path} is not a session file: ${scanProblems[0]?.message ?? "the file is empty"}`, { path });
  return { storage, path, model: opened.model, problems: sortByLine([...scanProblems, ...opened.reader.problems]), migratedFrom: null, dialect: opened.dialect, completeBytes };
}

/** A file older than version 3, read by readSessionFile, which migrates it. */
async function readMigrated(storage: StoragePort, path: string): Promise<LoadedSession> {
  const read = await readSessionFile(storage, path);
  if (read.kind !== "session") throw new SessionError("entry-not-found", `${path}: the session file went away while it was read`, { path });
  const model = new SessionModel(read.header, read.entries, read.dialect);
  return { storage, path, model, problems: read.problems, migratedFrom: read.migratedFrom, dialect: read.dialect, completeBytes: read.extent.completeBytes };
}

/** What `readSessionTail` found at the end of a file. */
export interface SessionTail {
  /** The header and the entries of the range read (parents before it are missing: those entries are roots). */
  model: SessionModel;
  /** The file's size when read. */
  size: number;
}

/**
 * The header and the last `tailBytes` of a session file (from its first complete line), as a
 * model of their own: the file's leaf and the entries before it that the range holds. Null when
 * the file is no longer than that (read it whole), needs a migration, or is not a session: the
 * whole read says what it is.
 */
export async function readSessionTail(storage: StoragePort, path: string, tailBytes: number): Promise<SessionTail | null> {
  const size = (await storage.stat(path))?.size ?? 0;
  if (size <= tailBytes) return null;
  const [start, end] = await Promise.all([storage.read(path, { offset: 0, length: Math.min(64 << 10, size) }), storage.read(path, { offset: size - tailBytes, length: tailBytes })]);
  const firstNewline = start?.indexOf(NEWLINE) ?? -1;
  if (!start || !end || firstNewline < 0) return null;
  let record: unknown;
  try {
    record = JSON.parse(textDecoder.decode(start.subarray(0, firstNewline)));
  } catch {
    return null;
  }
  if (typeof record !== "object" || record === null) return null;
  const dialect = detectDialect(record);
  const decoded = dialect === null ? null : decodeHeader(dialect, record as Record<string, unknown>);
  if (dialect === null || !decoded?.success || (dialect === "pi" && headerVersion(record as Record<string, unknown>) < CURRENT_SESSION_VERSION)) return null;
  const reader = entryReader(dialect, decoded.data as SessionHeader);
  const entries: SessionEntry[] = [];
  // The range starts inside a line: the lines after its first "\n" are whole (line numbers do not matter here).
  const text = textDecoder.decode(end.subarray(end.indexOf(NEWLINE) + 1));
  for (const lineText of text.split("\n")) {
    if (lineText.trim() === "") continue;
    parseLine(lineText, 0, { offset: 0, length: 0 }, (value) => {
      const entry = reader.read(value, 0);
      if (entry) entries.push(entry);
    }, []);
  }
  const last = entries.at(-1);
  // seed 003's leaf entry naming an entry before the range: the file's leaf is not in it.
  if (last?.type === "leaf" && typeof last.targetId === "string" && !entries.some((e) => e.id === last.targetId)) return null;
  return { model: new SessionModel(decoded.data as SessionHeader, entries, dialect), size };
}

export interface SessionFollower {
  stop(): Promise<void>;
}

export interface FollowOptions {
  /** New entries, in file order. */
  onAppend: (entries: SessionEntry[]) => void;
  /** The file shrank or was replaced: what is shown is no longer a prefix of it. */
  onReplaced?: () => void;
  onError?: (error: unknown) => void;
  /** Polling period when the port has no `watch`. */
  pollMs?: number;
}

/** Reads entries appended to a loaded session from now on. */
export async function followSession(session: LoadedSession, options: FollowOptions): Promise<SessionFollower> {
  const { storage, path, model } = session;
  let stopped = false;
  let running: Promise<void> | null = null;
  let again = false;

  const readNew = async () => {
    const stat = await storage.stat(path);
    if (stopped) return;
    if (!stat || stat.size < session.completeBytes) {
      options.onReplaced?.();
      return;
    }
    if (stat.size === session.completeBytes) return;
    const entries: SessionEntry[] = [];
    let previousTimestamp: unknown = model.stats.lastTimestamp;
    const scan = await scanJsonl(
      storage,
      path,
      (record) => {
        if (detectDialect(record) !== null) return;
        let entry = record;
        if (session.dialect !== "pi") {
          try {
            entry = decodeRecord(session.dialect, record);
          } catch {
            return; // not an entry of this dialect: skipped, as loading skips it
          }
          previousTimestamp = completeSeed003Entry(entry, previousTimestamp);
        }
        if (checkEntry(entry).ok) entries.push(entry as unknown as SessionEntry);
      },
      { offset: session.completeBytes },
    );
    if (stopped || !scan) return;
    session.completeBytes = scan.completeBytes;
    const added = model.append(entries);
    if (added.length > 0) options.onAppend(added.map((i) => model.entry(i)));
  };

  // One read at a time; a notification during a read schedules one more.
  const check = () => {
    if (stopped) return;
    if (running) {
      again = true;
      return;
    }
    running = readNew()
      .catch((error: unknown) => options.onError?.(error))
      .finally(() => {
        running = null;
        if (again) {
          again = false;
          check();
        }
      });
  };

  let unwatch: () => Promise<void>;
  if (storage.watch) {
    // Watched at its folder (the contract watches directories); the folder itself means "something below changed".
    const dir = parentDir(path);
    const watch = await storage.watch(dir, (changed) => {
      if (changed === path || changed === dir) check();
    });
    unwatch = () => watch.close();
  } else {
    const timer = setInterval(check, options.pollMs ?? 1000);
    unwatch = async () => clearInterval(timer);
  }
  check(); // whatever arrived between loading and watching
  return {
    async stop() {
      stopped = true;
      await unwatch();
      await running;
    },
  };
}
