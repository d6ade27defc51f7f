/**
 * Reading a session file from where the last pass stopped: unchanged (size and mtime) needs
 * nothing, grown is read from the last offset, a changed header or changed bytes before that
 * offset (a rewrite) mean a read from the start. The catalog and the search index keep one
 * `ReadPoint` per file and both go through here; records come out canonical (another dialect's
 * file, told by its header, is decoded here).
 */
import { bytesToBase64 } from "../blobs/base64.js";
import { decodeRecord, DialectError, detectDialect, type SessionDialect } from "../format/dialect.js";
import { scanJsonl, type LineSpan } from "../format/jsonl-reader.js";
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
  const scan = await scanJsonl(storage, path, (record, _line, _text, at) => onRecord(decode(dialect, record), at), { offset: start });
  if (scan === null) return null;
  // A complete last line without "\n" is already read: resume after it (whoever appends next
  // starts with a newline or glues a line, and both read right from there).
  const offset = scan.tail.kind === "missing-newline" ? scan.bytes : scan.completeBytes;
  const point = { size: file.size, mtimeMs: file.mtimeMs, offset, header, fingerprint: await fingerprintAt(storage, path, offset) };
  return { point, fromStart: !resume, bytesRead: scan.bytes - start };
}
