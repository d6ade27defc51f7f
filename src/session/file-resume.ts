/**
 * Reading a session file from where the last pass stopped: unchanged (size and mtime) needs
 * nothing, grown is read from the last offset, a changed header or changed bytes before that
 * offset (a rewrite) mean a read from the start. The catalog and the search index keep one
 * `ReadPoint` per file and both go through here; records come out canonical (another dialect's
 * file, told by its header, is decoded here).
 */
import { bytesToBase64 } from "../blobs/base64.js";
import { decodeRecord, DialectError, detectDialect, type SessionDialect } from "../format/dialect.js";
import { lineDecoder, parseLineAt, parseTail, scanJsonl, type JsonlTail, type LineProblem, type LineSpan } from "../format/jsonl-reader.js";
import { readLineRanges } from "../format/line-ranges.js";
import { messageLineShape, readMessageLine, type MessageLineHead } from "../format/message-line.js";
import type { StoragePort } from "../port.js";

/** How far a file was read, and what it looked like then. JSON-serializable. */
export interface ReadPoint {
  size: number;
  mtimeMs: number;
  /** Byte offset the next pass resumes at (a line start). */
  offset: number;
  /** The first line as it was. */
  header: string;
  /** The bytes just before `offset` (up to FINGERPRINT_BYTES), base64. */
  fingerprint: string;
}

/** What a pass read: from the start (`fromStart`: the caller drops what it had) or from the last offset. */
export interface ReadPass {
  point: ReadPoint;
  fromStart: boolean;
  /** Bytes read (what changed). */
  bytesRead: number;
}

/** Bytes just before the resume offset kept, to tell an append from a rewrite. */
const FINGERPRINT_BYTES = 64;
const HEADER_PROBE_BYTES = 64 * 1024;

/** Bytes read first for a header: pi's are a few hundred bytes. */
const HEADER_FIRST_READ = 4096;
/** Bytes per read, and reads asked for ahead, when message lines are taken from their bytes (as the lazy open reads). */
const RANGE_BYTES = 4 * 1024 * 1024;
const READ_AHEAD = 3;
const LBRACE = 0x7b;

/**
 * Takes a message line of a pi-dialect file from its bytes, proved valid (format/message-line.ts),
 * instead of its record: true when it did, false to have the line parsed and given to `onRecord`.
 */
export type MessageLineTaker = (head: MessageLineHead, bytes: Uint8Array) => boolean;

const PI_MESSAGE_LINE = messageLineShape("parentId");

/** The first line of a file, read with a bounded range; "" when there is none within the bound. */
export async function readFirstLine(storage: StoragePort, path: string): Promise<string> {
  let head = await storage.read(path, { offset: 0, length: HEADER_FIRST_READ });
  if (!head) return "";
  let newline = head.indexOf(0x0a);
  if (newline < 0 && head.length === HEADER_FIRST_READ) {
    head = (await storage.read(path, { offset: 0, length: HEADER_PROBE_BYTES })) ?? head;
    newline = head.indexOf(0x0a);
  }
  return new TextDecoder().decode(newline < 0 ? head : head.subarray(0, newline));
}

async function fingerprintAt(storage: StoragePort, path: string, offset: number): Promise<string> {
  const start = Math.max(0, offset - FINGERPRINT_BYTES);
  return bytesToBase64((await storage.read(path, { offset: start, length: offset - start })) ?? new Uint8Array());
}

/** True when `previous` still describes the file exactly (nothing to read). */
export function isUnchanged(previous: ReadPoint | undefined, file: { size: number; mtimeMs: number }): boolean {
  return previous !== undefined && previous.size === file.size && previous.mtimeMs === file.mtimeMs;
}

/** The dialect a header line declares; pi's when it declares none (a reader then rejects the file). */
export function dialectOfLine(line: string): SessionDialect {
  try {
    return detectDialect(JSON.parse(line)) ?? "pi";
  } catch {
    return "pi";
  }
}

/** A record of a file in `dialect`, canonical; one that cannot be decoded counts as nothing. */
export function decode(dialect: SessionDialect, record: Record<string, unknown>): Record<string, unknown> {
  try {
    return decodeRecord(dialect, record);
  } catch (error) {
    if (error instanceof DialectError) return {};
    throw error;
  }
}

/**
 * Reads what `previous` has not seen and feeds its records (canonical), in order, to `onRecord`. Before the
 * first record it calls `onStart(fromStart)`: with true the caller must drop what it kept for the
 * file. Returns null when the file is gone. Call only when `isUnchanged` is false.
 */
export async function readSince(
  storage: StoragePort,
  path: string,
  file: { size: number; mtimeMs: number },
  previous: ReadPoint | undefined,
  onStart: (fromStart: boolean) => void,
  onRecord: (record: Record<string, unknown>, at: LineSpan) => void,
  takeMessageLine?: MessageLineTaker,
): Promise<ReadPass | null> {
  const header = await readFirstLine(storage, path);
  const resume =
    previous !== undefined &&
    previous.header === header &&
    file.size >= previous.offset &&
    (await fingerprintAt(storage, path, previous.offset)) === previous.fingerprint;
  const start = resume ? previous.offset : 0;
  onStart(!resume);
  const dialect = dialectOfLine(header);
  const decoded = (record: Record<string, unknown>, at: LineSpan) => onRecord(decode(dialect, record), at);
  const scan = takeMessageLine && dialect === "pi" ? await scanTakingMessageLines(storage, path, file.size, start, decoded, takeMessageLine) : await scanJsonl(storage, path, (record, _line, _text, at) => decoded(record, at), { offset: start });
  if (scan === null) return null;
  // A complete last line without "\n" is already read: resume after it (whoever appends next
  // starts with a newline or glues a line, and both read right from there).
  const offset = scan.tail.kind === "missing-newline" ? scan.bytes : scan.completeBytes;
  const point = { size: file.size, mtimeMs: file.mtimeMs, offset, header, fingerprint: await fingerprintAt(storage, path, offset) };
  return { point, fromStart: !resume, bytesRead: scan.bytes - start };
}

/**
 * scanJsonl's pass over a file from `start`, each provable message line offered to `take` from its
 * bytes first (neither decoded nor parsed when taken); every other line, and the tail, as scanJsonl
 * reads them.
 */
async function scanTakingMessageLines(
  storage: StoragePort,
  path: string,
  size: number,
  start: number,
  onRecord: (record: Record<string, unknown>, at: LineSpan) => void,
  take: MessageLineTaker,
): Promise<{ bytes: number; completeBytes: number; tail: JsonlTail } | null> {
  const decoder = lineDecoder();
  const problems: LineProblem[] = [];
  let line = 0;
  const parsed = (record: Record<string, unknown>, _line: number, _text: string, at: LineSpan) => onRecord(record, at);
  const onLines = (bytes: Uint8Array, from: number, offset: number): number => {
    const view = new DataView(bytes.buffer, bytes.byteOffset, bytes.length);
    while (from < bytes.length) {
      line++;
      if (bytes[from] === LBRACE) {
        const head = readMessageLine(bytes, view, from, bytes.length, PI_MESSAGE_LINE);
        if (head && take(head, bytes)) {
          offset += head.end + 1 - from;
          from = head.end + 1;
          continue;
        }
      }
      const next = parseLineAt(decoder, bytes, from, offset, line, parsed, problems);
      if (next < 0) {
        line--; // not a line yet
        break;
      }
      offset += next - from;
      from = next;
    }
    return from;
  };
  const ranges = await readLineRanges(storage, path, { size, start, rangeBytes: RANGE_BYTES, readAhead: READ_AHEAD, onLines, stopped: () => false });
  if (ranges.missing) return null;
  const tail: JsonlTail = ranges.tail ? parseTail(decoder, ranges.tail, ranges.completeBytes, line + 1, parsed, problems) : { kind: "clean" };
  return { bytes: ranges.completeBytes + (ranges.tail?.length ?? 0), completeBytes: ranges.completeBytes, tail };
}
