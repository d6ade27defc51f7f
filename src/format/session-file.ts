/**
 * Reading a session file: the header checked with zod, the rest streamed, migrated in memory.
 */
import type { StoragePort } from "../port.js";
import { SessionError } from "../errors.js";
import { BLOB_REF_PREFIX } from "../blobs/blob-store.js";
import { concatAll } from "./bytes.js";
import { scanJsonl, type JsonlTail, type LineProblem } from "./jsonl-reader.js";
import { migrateRecords } from "./migrate.js";
import { checkEntry, sessionHeaderSchema } from "./schema.js";
import type { SessionEntry, SessionHeader } from "./types.js";

export type SessionFileRead =
  | { kind: "missing" }
  | { kind: "empty" } // zero bytes or whitespace only: nothing to lose
  | LoadedSessionFile;

export interface LoadedSessionFile {
  kind: "session";
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
    if (text.includes(BLOB_REF_PREFIX)) withRefs.add(record);
  });
  if (!scan) return { kind: "missing" };
  const first = records[0];
  if (!first) {
    if (scan.problems.length === 0 && scan.tail.kind !== "torn") return { kind: "empty" };
    const problem = scan.problems[0]?.message ?? "no JSON record";
    throw new SessionError("not-a-session", `${path} is not a session file: ${problem}`, { path });
  }
  const header = sessionHeaderSchema.safeParse(first);
  if (!header.success) {
    const what = typeof first.type === "string" ? `first record has type ${JSON.stringify(first.type)}` : "first record is not a session header";
    throw new SessionError("not-a-session", `${path} is not a session file: ${what} (expected {"type":"session","id":…})`, { path });
  }
  const migratedFrom = migrateRecords(records);
  const problems = scan.problems.slice();
  const entries: SessionEntry[] = [];
  const entryLines: number[] = [];
  for (const record of records.slice(1)) {
    const line = lineOf.get(record)!;
    if (record.type === "session") {
      // Not an entry; pi skips it the same way.
      problems.push({ line, kind: "extra-header", message: `line ${line}: a second session header (left by an old fork bug)` });
      continue;
    }
    // An entry its type's schema rejects would break the tree or the context: skipped, reported.
    const check = checkEntry(record);
    if (check.ok) {
      entries.push(record as unknown as SessionEntry);
      entryLines.push(line);
    } else {
      const entryId = typeof record.id === "string" ? { entryId: record.id } : {};
      problems.push({ line, kind: "invalid-entry", message: `line ${line}: invalid entry: ${check.problem}`, ...entryId });
    }
  }
  problems.sort((a, b) => a.line - b.line);
  return {
    kind: "session",
    header: records[0] as SessionHeader,
    entries,
    entryLines,
    migratedFrom,
    problems,
    tail: scan.tail,
    extent: { completeBytes: scan.completeBytes, completeLines: scan.completeLines },
    entriesWithBlobRefs: withRefs as ReadonlySet<SessionEntry>,
  };
}

const ENCODE_BATCH_CHARS = 1 << 20;

/**
 * The JSONL bytes of records: one `JSON.stringify` line each. Encoded in batches, so no single
 * string holds a whole large session.
 */
export function encodeJsonl(records: Iterable<unknown>): Uint8Array {
  const encoder = new TextEncoder();
  const parts: Uint8Array[] = [];
  let text = "";
  for (const record of records) {
    text += JSON.stringify(record) + "\n";
    if (text.length >= ENCODE_BATCH_CHARS) {
      parts.push(encoder.encode(text));
      text = "";
    }
  }
  if (text) parts.push(encoder.encode(text));
  return concatAll(parts);
}
