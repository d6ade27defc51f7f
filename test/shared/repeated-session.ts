/**
 * A very large session made of a smaller pi-written one: its entries written again and again with
 * fresh ids, each copy's roots under the previous copy's last entry, so the file is one tree (as
 * bench/lib/data.ts writes the bench's 1 GiB session). For the viewer's bench of very large
 * sessions and its e2e test of one.
 */
import { closeSync, openSync, readFileSync, writeSync } from "node:fs";

export interface RepeatedSession {
  path: string;
  bytes: number;
  entries: number;
  /** The file's leaf (its last entry): the tree always lists it. */
  leafId: string;
  /** The entry the messages show for the file's leaf: the leaf, or its nearest ancestor the list shows. */
  shownLeafId: string;
}

/** Whether the viewer's message list shows a record (SessionModel.listed; every tool result of these sessions has its call). */
function listed(record: Record<string, unknown>): boolean {
  if (record.type === "message") return (record.message as { role?: unknown }).role !== "toolResult";
  if (record.type === "custom_message") return record.display !== false;
  return !["label", "custom", "session_info", "leaf"].includes(record.type as string);
}

/**
 * Writes the entries of the session `base` again and again with fresh ids into `path`, each
 * copy's roots under the previous copy's last entry, until the file holds `limit.bytes` or
 * `limit.entries` (mid-copy).
 */
export function writeRepeatedSession(base: string, path: string, limit: { bytes?: number; entries?: number }, cwd = "/bench/viewer-huge"): RepeatedSession {
  const records = readFileSync(base, "utf8")
    .split("\n")
    .filter((line) => line !== "")
    .map((line) => JSON.parse(line) as Record<string, unknown>);
  const header = { ...records[0], id: `repeated-${Date.now().toString(36)}`, timestamp: new Date().toISOString(), cwd };
  const fd = openSync(path, "w");
  let bytes = 0;
  let entries = 0;
  let nextId = 0x10000000;
  let previousLast: string | null = null;
  let copy = new Map<string, Record<string, unknown>>();
  let last: Record<string, unknown> | undefined;
  const full = () => (limit.bytes !== undefined && bytes >= limit.bytes) || (limit.entries !== undefined && entries >= limit.entries);
  try {
    bytes += writeSync(fd, `${JSON.stringify(header)}\n`);
    while (!full()) {
      const ids = new Map<string, string>();
      const fresh = (old: string) => ids.get(old) ?? ids.set(old, (nextId++).toString(16)).get(old)!;
      copy = new Map();
      let chunk = "";
      for (const record of records.slice(1)) {
        const next: Record<string, unknown> = { ...record, id: fresh(record.id as string) };
        next.parentId = record.parentId === null ? previousLast : fresh(record.parentId as string);
        for (const key of ["firstKeptEntryId", "targetId", "fromId"]) if (typeof record[key] === "string" && record[key] !== "root") next[key] = fresh(record[key]);
        chunk += `${JSON.stringify(next)}\n`;
        copy.set(next.id as string, next);
        last = next;
        entries++;
        if (chunk.length > 8_000_000) {
          bytes += writeSync(fd, chunk);
          chunk = "";
        }
        if (limit.entries !== undefined && entries >= limit.entries) break;
      }
      bytes += writeSync(fd, chunk);
      previousLast = last!.id as string;
    }
  } finally {
    closeSync(fd);
  }
  // The leaf is the last entry (these sessions have no seed-003 leaf entries); up from it to one the list shows.
  let shown = last!;
  while (!listed(shown)) shown = copy.get(shown.parentId as string)!;
  return { path, bytes, entries, leafId: last!.id as string, shownLeafId: shown.id as string };
}
