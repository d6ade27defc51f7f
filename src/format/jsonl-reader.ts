/**
 * Streaming JSONL reader over a StoragePort: reads the file in ranges and splits lines from bytes,
 * so no string ever holds the whole file (V8 strings stop near 512 MiB; sessions reach gigabytes).
 */
import type { StoragePort } from "../port.js";
import { concatAll } from "./bytes.js";

/**
 * What was wrong with a line of a session file ({@link LineProblem.kind}).
 * @category Sessions
 */
export type LineProblemKind =
  /** Not JSON, skipped. */
  | "unparseable"
  /** JSON, but not an object, skipped. */
  | "not-object"
  /** Several objects on one line, all recovered. */
  | "glued"
  /** The last line has no newline and is not complete JSON: a crash mid-append. */
  | "torn"
  /** JSON, but not a valid entry of its type (see format/schema.ts), skipped. */
  | "invalid-entry"
  /** A second session header (left by an old fork bug), skipped. */
  | "extra-header";

/**
 * A damaged line met while reading a session file: which line, what was wrong, what was done
 * about it. Loading goes on past it (`getLoadProblems()`, `onWarning`).
 * @category Sessions
 */
export interface LineProblem {
  /** 1-based line number (the header is line 1). */
  line: number;
  /** What was wrong with the line. */
  kind: LineProblemKind;
  /** A sentence for people, saying what was wrong. */
  message: string;
  /** The id of an invalid entry, when it has one. */
  entryId?: string;
}

/** How the file ends: cleanly, with a complete last line lacking "\n", or with a torn line. */
export type JsonlTail =
  | { kind: "clean" }
  | { kind: "missing-newline" }
  | { kind: "torn"; offset: number; length: number };

export interface JsonlScan {
  /** Bytes consumed: the file size when read to the end. */
  bytes: number;
  /** Byte offset just past the last complete ("\n"-terminated) line. */
  completeBytes: number;
  /** Lines before `completeBytes`, from the scan's start. */
  completeLines: number;
  problems: LineProblem[];
  tail: JsonlTail;
}

export interface JsonlScanOptions {
  /** Byte offset to start at (must be a line start). */
  offset?: number;
  /** Lines before `offset`: line numbers continue from there. Default 0. */
  firstLine?: number;
  /** Range size per read. */
  chunkSize?: number;
}

/** Where a line sits in the file: its first byte and its length in bytes (without "\n"). */
export interface LineSpan {
  offset: number;
  length: number;
}

const NEWLINE = 0x0a;
const DEFAULT_CHUNK = 4 * 1024 * 1024;

/**
 * Calls `onRecord` for every JSON object in the file, in order. Returns null when the file does
 * not exist. Unparseable lines are skipped and reported; glued objects are all recovered.
 */
export async function scanJsonl(
  port: StoragePort,
  path: string,
  onRecord: (value: Record<string, unknown>, line: number, text: string, at: LineSpan) => void,
  options: JsonlScanOptions = {},
): Promise<JsonlScan | null> {
  const chunkSize = options.chunkSize ?? DEFAULT_CHUNK;
  const start = options.offset ?? 0;
  const decoder = lineDecoder();
  const problems: LineProblem[] = [];
  let line = options.firstLine ?? 0;
  let readPos = start;
  let bufStart = start; // file offset of the first carried byte
  // The unfinished last line, in pieces: joined once its newline arrives, so a line spanning many
  // chunks is copied once, not once per chunk.
  let carry: Uint8Array[] = [];
  let eof = false;

  const handle = (text: string, at: LineSpan) => {
    line++;
    if (text.trim() === "") return;
    parseLine(text, line, at, onRecord, problems);
  };

  while (!eof) {
    const chunk = await port.read(path, { offset: readPos, length: chunkSize });
    if (chunk === null) {
      if (readPos === start) return null;
      break;
    }
    if (chunk.length < chunkSize) eof = true;
    if (chunk.length === 0) break;
    readPos += chunk.length;
    if (chunk.lastIndexOf(NEWLINE) < 0) {
      carry.push(chunk);
      continue;
    }
    const buf = carry.length > 0 ? concatAll([...carry, chunk]) : chunk;
    const lastNewline = buf.lastIndexOf(NEWLINE);
    // One decode per chunk: a range that ends at "\n" always ends on a character boundary.
    const text = decodeLines(decoder, buf.subarray(0, lastNewline), bufStart);
    // Byte offsets follow the string's lines newline for newline ("\n" is one byte in UTF-8).
    let from = 0;
    let byteFrom = 0;
    for (let nl = text.indexOf("\n"); nl >= 0; nl = text.indexOf("\n", from)) {
      const byteNl = buf.indexOf(NEWLINE, byteFrom);
      handle(text.slice(from, nl), { offset: bufStart + byteFrom, length: byteNl - byteFrom });
      from = nl + 1;
      byteFrom = byteNl + 1;
    }
    handle(from === 0 ? text : text.slice(from), { offset: bufStart + byteFrom, length: lastNewline - byteFrom });
    bufStart += lastNewline + 1;
    carry = lastNewline + 1 < buf.length ? [buf.slice(lastNewline + 1)] : [];
  }

  const tailBytes = carry.length > 0 ? concatAll(carry) : null;
  const tail: JsonlTail = tailBytes && tailBytes.length > 0 ? parseTail(decoder, tailBytes, bufStart, line + 1, onRecord, problems) : { kind: "clean" };
  return { bytes: bufStart + (tailBytes?.length ?? 0), completeBytes: bufStart, completeLines: line, problems, tail };
}

/**
 * Reads the bytes after a file's last "\n" (`bytes`, at file offset `offset`) as line `line`:
 * blank, a complete record without its newline, or a torn line, reported as `torn` in place of
 * what its parse reported. Returns how the file ends.
 */
export function parseTail(
  decoder: TextDecoder,
  bytes: Uint8Array,
  offset: number,
  line: number,
  onRecord: (value: Record<string, unknown>, line: number, text: string, at: LineSpan) => void,
  problems: LineProblem[],
): JsonlTail {
  const text = decodeLines(decoder, bytes, offset);
  if (text.trim() === "") return { kind: "missing-newline" };
  const before = problems.length;
  if (parseLine(text, line, { offset, length: bytes.length }, onRecord, problems, true)) return { kind: "missing-newline" };
  problems.length = before;
  problems.push({ line, kind: "torn", message: `line ${line}: incomplete last line (${bytes.length} bytes), likely a crash mid-append` });
  return { kind: "torn", offset, length: bytes.length };
}

/** The decoder of a file's lines: a byte order mark is dropped only at the file's start (see decodeLines). */
export function lineDecoder(): TextDecoder {
  return new TextDecoder("utf-8", { ignoreBOM: true });
}

/**
 * Lines of UTF-8 starting at file offset `offset`. A byte order mark counts only as the file's first
 * bytes; elsewhere U+FEFF is part of its line, wherever the reads happen to start.
 */
export function decodeLines(decoder: TextDecoder, bytes: Uint8Array, offset: number): string {
  const text = decoder.decode(bytes);
  return offset === 0 && text.charCodeAt(0) === 0xfeff ? text.slice(1) : text;
}

/**
 * Parses the line of `bytes` that starts at `from` (file offset `offset`), line number `line`, as
 * scanJsonl does: the readers that prove some lines from their bytes hand it the others. Returns
 * the index after its "\n", or -1 when no "\n" follows (not a line yet).
 */
export function parseLineAt(
  decoder: TextDecoder,
  bytes: Uint8Array,
  from: number,
  offset: number,
  line: number,
  onRecord: (value: Record<string, unknown>, line: number, text: string, at: LineSpan) => void,
  problems: LineProblem[],
): number {
  const newline = bytes.indexOf(NEWLINE, from);
  if (newline < 0) return -1;
  const text = decodeLines(decoder, bytes.subarray(from, newline), offset);
  if (text.trim() !== "") parseLine(text, line, { offset, length: newline - from }, onRecord, problems);
  return newline + 1;
}

/** Parses one line; returns false when nothing could be recovered from it. */
export function parseLine(
  text: string,
  line: number,
  at: LineSpan,
  onRecord: (value: Record<string, unknown>, line: number, text: string, at: LineSpan) => void,
  problems: LineProblem[],
  isTail = false,
): boolean {
  let value: unknown;
  try {
    value = JSON.parse(text);
  } catch (error) {
    const objects = splitGluedObjects(text);
    if (objects.length > 0) {
      for (const object of objects) onRecord(object, line, text, at);
      problems.push({ line, kind: "glued", message: `line ${line}: ${objects.length} JSON objects glued on one line (recovered ${objects.length})` });
      return true;
    }
    if (!isTail) problems.push({ line, kind: "unparseable", message: `line ${line}: not JSON (${(error as Error).message})` });
    return false;
  }
  if (typeof value !== "object" || value === null || Array.isArray(value)) {
    problems.push({ line, kind: "not-object", message: `line ${line}: JSON ${Array.isArray(value) ? "array" : typeof value}, not an object` });
    return false;
  }
  onRecord(value as Record<string, unknown>, line, text, at);
  return true;
}

/**
 * Recovers objects written back to back on one line, as a torn append leaves them
 * ("…}}{"type":…}"). First tries to split at top-level object boundaries; when the first object
 * is itself truncated, keeps the last parseable `{"type":` object. Returns [] when neither works.
 */
export function splitGluedObjects(text: string): Record<string, unknown>[] {
  const pieces: string[] = [];
  let depth = 0;
  let inString = false;
  let escaped = false;
  let start = -1;
  for (let i = 0; i < text.length; i++) {
    const c = text.charCodeAt(i);
    if (inString) {
      if (escaped) escaped = false;
      else if (c === 0x5c) escaped = true;
      else if (c === 0x22) inString = false;
      continue;
    }
    if (c === 0x22) inString = true;
    else if (c === 0x7b || c === 0x5b) {
      if (depth === 0) start = i;
      depth++;
    } else if (c === 0x7d || c === 0x5d) {
      depth--;
      if (depth === 0 && start >= 0) {
        pieces.push(text.slice(start, i + 1));
        start = -1;
      }
      if (depth < 0) break;
    }
  }
  const whole = pieces.length > 1 ? tryParseObjects(pieces) : null;
  if (whole) return whole;
  const lastStart = text.lastIndexOf('{"type":');
  if (lastStart > 0) {
    const tailObject = tryParseObjects([text.slice(lastStart)]);
    // Content blocks also start with {"type":…}; only an entry carries a string timestamp.
    if (tailObject && typeof tailObject[0]?.timestamp === "string") return tailObject;
  }
  return [];
}

function tryParseObjects(pieces: string[]): Record<string, unknown>[] | null {
  const out: Record<string, unknown>[] = [];
  for (const piece of pieces) {
    try {
      const value: unknown = JSON.parse(piece);
      if (typeof value !== "object" || value === null || Array.isArray(value)) return null;
      out.push(value as Record<string, unknown>);
    } catch {
      return null;
    }
  }
  return out;
}
