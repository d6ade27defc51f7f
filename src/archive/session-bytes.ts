/**
 * Session files as bytes: parsed through the core reader, v1 ids made deterministic, branches cut,
 * and the v3 bytes that go into an archive or a store.
 */
import { parseBlobRef, sha256Hex } from "../blobs/blob-store.js";
import { collectBlobRefs, hasImagesToExternalize } from "../blobs/images.js";
import { isSessionError } from "../errors.js";
import { decodeLines, lineDecoder, parseLine, parseTail, type JsonlTail, type LineProblem } from "../format/jsonl-reader.js";
import { completeSeed003Entry, EXPECTED_HEADERS, decodeRecord, DialectError, detectDialect, type SessionDialect } from "../format/dialect.js";
import { headerVersion } from "../format/migrate.js";
import { checkEntry } from "../format/schema.js";
import { decodeHeader, encodeSessionFile, readSessionFile } from "../format/session-file.js";
import { CURRENT_SESSION_VERSION, type LabelEntry, type SessionEntry, type SessionHeader } from "../format/types.js";
import { indexById, pathToRoot } from "../session/context.js";
import { bytesPort } from "./bytes-port.js";
import { ArchiveError } from "./errors.js";

export interface ParsedSession {
  /** The file's dialect: what its bytes are written in, and what a rewrite of it writes. */
  dialect: SessionDialect;
  header: SessionHeader;
  entries: SessionEntry[];
  migratedFrom: number | null;
  problems: LineProblem[];
  tail: JsonlTail;
}

const MEMBER_PATH = "member";

/**
 * Parses session bytes with the core reader (migrating in memory). `source` names the member or
 * file in errors. Entries of a v1 file get deterministic ids (see `assignStableIds`).
 */
export async function parseSessionBytes(bytes: Uint8Array, source: string): Promise<ParsedSession> {
  let read;
  try {
    read = await readSessionFile(bytesPort([[MEMBER_PATH, bytes]]), MEMBER_PATH);
  } catch (error) {
    if (!isSessionError(error, "not-a-session")) throw error;
    throw new ArchiveError("bad-session", error.message.replace(`${MEMBER_PATH} is `, ""), { member: source });
  }
  if (read.kind !== "session") throw new ArchiveError("bad-session", "empty file, not a session", { member: source });
  const parsed: ParsedSession = { dialect: read.dialect, header: read.header, entries: read.entries, migratedFrom: read.migratedFrom, problems: read.problems, tail: read.tail };
  if (read.migratedFrom === 1) assignStableIds(parsed);
  return parsed;
}

/** True when the bytes are already what `encodeSession` would make of them: current, whole, clean. */
export function isCanonical(parsed: ParsedSession): boolean {
  return parsed.migratedFrom === null && parsed.problems.length === 0 && parsed.tail.kind === "clean";
}

/** What the archive code needs of a session without its entries: ids, blob refs, health. */
export interface SessionScan {
  dialect: SessionDialect;
  /** The canonical (decoded) header. */
  header: SessionHeader;
  /** The version the header declares (1 when it declares none); a seed-003 file has no versions and counts as current. */
  version: number;
  /**
   * Entry ids as written, in file order (a second header line is not an entry, as the core reader
   * has it). Those of an older version are not the ids its migration gives.
   */
  entryIds: string[];
  /** Hashes of the blobs the entries reference (found as the core reader finds them). */
  blobHashes: string[];
  /** An entry holds an inline image a blob store would move out (`hasImagesToExternalize`). */
  inlineImages: boolean;
  problems: LineProblem[];
  tail: JsonlTail;
  /** Lines of the bytes, as `countLines` counts them. */
  lines: number;
}

/**
 * Bytes awaited at a time while a member inflates. Lines are decoded and parsed one at a time:
 * one decode per 64 KiB, as the core reader (scanJsonl) does, cost 186 ms for the 50.7 MB bench
 * session against 130 ms a line at a time (decode, split and JSON.parse; medians of 5), and a
 * line's text is all that lives while it is parsed.
 */
const SCAN_CHUNK_BYTES = 64 * 1024;

/**
 * Reads session bytes line by line like `parseSessionBytes`, with the same errors (the core
 * reader's `parseLine` and `parseTail` on the same lines), but keeps no entry: memory is the bytes
 * given plus one line, whatever the number of entries. With `available`, the bytes are still being
 * filled: a line is read once `available` has resolved for its end, so a member is checked while
 * it inflates. Past `maxLines` lines it stops with "too-many-lines".
 */
export async function scanSessionBytes(
  bytes: Uint8Array,
  source: string,
  available: (end: number) => Promise<void> = async () => {},
  maxLines = Number.POSITIVE_INFINITY,
): Promise<SessionScan> {
  let header: SessionHeader | null = null;
  let dialect: SessionDialect = "pi";
  let previousTimestamp: unknown;
  const entryIds: string[] = [];
  const refs = new Set<string>();
  let inlineImages = false;
  const invalid: LineProblem[] = [];
  const onRecord = (record: Record<string, unknown>, line: number) => {
    if (header === null) {
      ({ header, dialect } = checkedHeader(record, source));
      previousTimestamp = header.timestamp;
      return;
    }
    if (detectDialect(record) !== null) return;
    const check = checkScannedEntry(dialect, header, record, previousTimestamp);
    previousTimestamp = check.timestamp;
    if (!check.ok) invalid.push({ line, kind: "invalid-entry", message: `line ${line}: invalid entry: ${check.problem}` });
    entryIds.push(record.id as string);
    // The parsed record is walked, not its text searched: a substring search of a 50 MB
    // session's lines (two-byte strings once any character is not Latin-1) cost 46 ms, the
    // walk 10 ms, and it cannot be misled by escapes ("imag\u0065").
    collectBlobRefs(record, refs);
    if (!inlineImages) inlineImages = hasImagesToExternalize(record);
  };

  const decoder = lineDecoder();
  const lineProblems: LineProblem[] = [];
  let line = 0;
  let start = 0;
  let ready = 0;
  let searched = 0;
  for (;;) {
    const newline = searched < ready ? bytes.subarray(searched, ready).indexOf(0x0a) : -1;
    if (newline < 0) {
      if (ready === bytes.length) break;
      searched = ready;
      ready = Math.min(bytes.length, ready + SCAN_CHUNK_BYTES);
      await available(ready);
      continue;
    }
    const end = searched + newline;
    if (++line > maxLines) throw new ArchiveError("too-many-lines", "over limit maxSessionLines", { member: source });
    const text = decodeLines(decoder, bytes.subarray(start, end), start);
    if (text.trim() !== "") parseLine(text, line, { offset: start, length: end - start }, onRecord, lineProblems);
    start = searched = end + 1;
  }
  const lines = start < bytes.length ? line + 1 : line;
  if (lines > maxLines) throw new ArchiveError("too-many-lines", "over limit maxSessionLines", { member: source });
  const tail: JsonlTail = start < bytes.length ? parseTail(decoder, bytes.subarray(start), start, line + 1, onRecord, lineProblems) : { kind: "clean" };
  const problems = [...lineProblems, ...invalid].sort((a, b) => a.line - b.line);
  if (header === null) {
    if (problems.length === 0 && tail.kind !== "torn") throw new ArchiveError("bad-session", "empty file, not a session", { member: source });
    throw new ArchiveError("bad-session", `not a session file: ${problems[0]?.message ?? "no JSON record"}`, { member: source });
  }
  const blobHashes: string[] = [];
  for (const ref of refs) {
    const hash = parseBlobRef(ref);
    if (hash) blobHashes.push(hash);
  }
  const version = dialect === "pi" ? headerVersion(header) : CURRENT_SESSION_VERSION;
  return { dialect, header, version, entryIds, blobHashes, inlineImages, problems, tail, lines };
}

/**
 * An entry checked as the core reader checks it: decoded from its dialect, then (v1 entries have
 * no ids yet; from v2 on, and in seed 003) against its type's schema.
 */
function checkScannedEntry(
  dialect: SessionDialect,
  header: SessionHeader,
  record: Record<string, unknown>,
  previousTimestamp: unknown,
): { ok: true; timestamp: unknown } | { ok: false; problem: string; timestamp: unknown } {
  if (dialect === "pi") {
    const check = headerVersion(header) >= 2 ? checkEntry(record) : { ok: true as const };
    return { ...check, timestamp: record.timestamp };
  }
  let entry: Record<string, unknown>;
  try {
    entry = decodeRecord(dialect, record);
  } catch (error) {
    if (!(error instanceof DialectError)) throw error;
    return { ok: false, problem: error.message, timestamp: previousTimestamp };
  }
  const timestamp = completeSeed003Entry(entry, previousTimestamp);
  return { ...checkEntry(entry), timestamp };
}

/** The first record as a decoded header, with the message `readSessionFile` gives when it is not one. */
function checkedHeader(record: Record<string, unknown>, source: string): { header: SessionHeader; dialect: SessionDialect } {
  const dialect = detectDialect(record);
  const header = dialect === null ? null : decodeHeader(dialect, record);
  if (dialect !== null && header?.success) return { header: header.data, dialect };
  const what = typeof record.type === "string" ? `first record has type ${JSON.stringify(record.type)}` : "first record is not a session header";
  throw new ArchiveError("bad-session", `not a session file: ${what} (expected ${EXPECTED_HEADERS})`, { member: source });
}

/** A scanned session whose bytes are already canonical v3 (see `isCanonical`). */
export function isCanonicalScan(scan: SessionScan): boolean {
  return scan.version >= CURRENT_SESSION_VERSION && scan.problems.length === 0 && scan.tail.kind === "clean";
}

/** A session's bytes in its dialect. */
export function encodeSession(dialect: SessionDialect, header: SessionHeader, entries: readonly SessionEntry[]): Uint8Array {
  return encodeSessionFile(dialect, header, entries);
}

/** Lines of a JSONL file, counted from bytes (a last line without "\n" counts). */
export function countLines(bytes: Uint8Array): number {
  const lines = countNewlines(bytes, 0, bytes.length);
  return bytes.length > 0 && bytes[bytes.length - 1] !== 0x0a ? lines + 1 : lines;
}

/** "\n" bytes in `bytes[start, end)`. */
function countNewlines(bytes: Uint8Array, start: number, end: number): number {
  const range = bytes.subarray(start, end);
  let count = 0;
  for (let i = range.indexOf(0x0a); i >= 0; i = range.indexOf(0x0a, i + 1)) count++;
  return count;
}

/**
 * pi gives v1 entries random ids when it migrates, so the same v1 file would be a different
 * session on every import. Ids derived from the session id and the entry's position are the same
 * every time, and a v1 file that grew keeps the ids of its first entries, so re-imports skip or
 * extend instead of forking. The chain stays linear, as the migration made it.
 */
function assignStableIds(parsed: ParsedSession): void {
  const taken = new Set<string>();
  const renamed = new Map<string, string>();
  let previous: string | null = null;
  parsed.entries.forEach((entry, index) => {
    const id = stableEntryId(`${parsed.header.id}:${index}`, taken);
    taken.add(id);
    renamed.set(entry.id, id);
    entry.id = id;
    entry.parentId = previous;
    previous = id;
  });
  for (const entry of parsed.entries) {
    if (entry.type === "compaction") entry.firstKeptEntryId = renamed.get(entry.firstKeptEntryId) ?? entry.firstKeptEntryId;
  }
}

/** An 8-hex entry id derived from `seed` (FNV-1a), retried past ids in `taken`. */
function stableEntryId(seed: string, taken: { has(id: string): boolean }): string {
  for (let attempt = 0; ; attempt++) {
    const id = fnv1a32(attempt === 0 ? seed : `${seed}#${attempt}`).toString(16).padStart(8, "0");
    if (!taken.has(id)) return id;
  }
}

function fnv1a32(text: string): number {
  let hash = 0x811c9dc5;
  for (let i = 0; i < text.length; i++) {
    hash ^= text.charCodeAt(i);
    hash = Math.imul(hash, 0x01000193) >>> 0;
  }
  return hash;
}

/** A UUID (version 8, name-based) derived from `seed`: the same seed gives the same session id. */
export async function stableSessionId(seed: string): Promise<string> {
  const hex = await sha256Hex(new TextEncoder().encode(seed));
  const variant = ((parseInt(hex[16]!, 16) & 0x3) | 0x8).toString(16);
  return `${hex.slice(0, 8)}-${hex.slice(8, 12)}-8${hex.slice(13, 16)}-${variant}${hex.slice(17, 20)}-${hex.slice(20, 32)}`;
}

/**
 * The root → `leafId` branch of a session as its own session, as `createBranchedSession` makes it:
 * label entries dropped and re-emitted after the path for labels whose target is on it, header
 * `parentSession` = `sourcePath`. Ids are derived from the session and leaf ids, so exporting the
 * same branch twice gives the same session.
 */
export async function extractBranch(parsed: ParsedSession, leafId: string, sourcePath: string): Promise<{ header: SessionHeader; entries: SessionEntry[] }> {
  const byId = indexById(parsed.entries);
  const leaf = byId.get(leafId);
  if (!leaf) throw new ArchiveError("not-found", `entry ${leafId} is not in the session`, { member: sourcePath });
  const kept = pathToRoot(leaf, byId).filter((entry) => entry.type !== "label");
  const keptIds = new Set(kept.map((entry) => entry.id));
  // Latest label per target wins and an empty one clears it: the same Map discipline as SessionManager.
  const labels = new Map<string, { label: string; timestamp: string }>();
  for (const entry of parsed.entries) {
    if (entry.type !== "label") continue;
    if (entry.label) labels.set(entry.targetId, { label: entry.label, timestamp: entry.timestamp });
    else labels.delete(entry.targetId);
  }
  const id = await stableSessionId(`branch\n${parsed.header.id}\n${leafId}`);
  const emitted: LabelEntry[] = [];
  let parentId: string | null = kept[kept.length - 1]?.id ?? null;
  for (const [targetId, state] of labels) {
    if (!keptIds.has(targetId)) continue;
    const labelId = stableEntryId(`${id}:label:${targetId}`, keptIds);
    keptIds.add(labelId);
    emitted.push({ type: "label", id: labelId, parentId, timestamp: state.timestamp, targetId, label: state.label });
    parentId = labelId;
  }
  return { header: { ...parsed.header, id, parentSession: sourcePath }, entries: [...kept, ...emitted] };
}
