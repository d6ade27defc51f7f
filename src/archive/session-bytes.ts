/**
 * Session files as bytes: parsed through the core reader, v1 ids made deterministic, branches cut,
 * and the v3 bytes that go into an archive or a store.
 */
import { sha256Hex } from "../blobs/blob-store.js";
import { isSessionError } from "../errors.js";
import type { JsonlTail, LineProblem } from "../format/jsonl-reader.js";
import { encodeJsonl, readSessionFile } from "../format/session-file.js";
import type { LabelEntry, SessionEntry, SessionHeader } from "../format/types.js";
import { indexById, pathToRoot } from "../session/context.js";
import { bytesPort } from "./bytes-port.js";
import { ArchiveError } from "./errors.js";

export interface ParsedSession {
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
  const parsed: ParsedSession = { header: read.header, entries: read.entries, migratedFrom: read.migratedFrom, problems: read.problems, tail: read.tail };
  if (read.migratedFrom === 1) assignStableIds(parsed);
  return parsed;
}

/** True when the bytes are already what `encodeSession` would make of them: current, whole, clean. */
export function isCanonical(parsed: ParsedSession): boolean {
  return parsed.migratedFrom === null && parsed.problems.length === 0 && parsed.tail.kind === "clean";
}

export function encodeSession(header: SessionHeader, entries: readonly SessionEntry[]): Uint8Array {
  return encodeJsonl([header, ...entries]);
}

/** Lines of a JSONL file, counted from bytes (a last line without "\n" counts). */
export function countLines(bytes: Uint8Array): number {
  let lines = 0;
  for (let i = bytes.indexOf(0x0a); i >= 0; i = bytes.indexOf(0x0a, i + 1)) lines++;
  return bytes.length > 0 && bytes[bytes.length - 1] !== 0x0a ? lines + 1 : lines;
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
export function stableEntryId(seed: string, taken: { has(id: string): boolean }): string {
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
