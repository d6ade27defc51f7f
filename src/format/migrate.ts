/**
 * Migrations v1 → v2 → v3, exactly as pi runs them on load. They mutate the records in place.
 */
import { CURRENT_SESSION_VERSION } from "./types.js";
import { createEntryId } from "./ids.js";

type RawRecord = Record<string, unknown>;

/** The version a header declares (absent means v1). */
export function headerVersion(header: RawRecord): number {
  return typeof header.version === "number" ? header.version : 1;
}

/**
 * Brings `records` (header first, as in the file) to the current version.
 * Returns the version it started from, or null when nothing had to change.
 */
export function migrateRecords(records: RawRecord[]): number | null {
  const header = records.find((r) => r.type === "session");
  const version = header ? headerVersion(header) : 1;
  if (version >= CURRENT_SESSION_VERSION) return null;
  if (version < 2) migrateV1ToV2(records);
  if (version < 3) migrateV2ToV3(records);
  return version;
}

/**
 * v1 → v2: a linear parent chain in file order. A compaction's `firstKeptEntryIndex` indexes the
 * records including the header (index 0) and becomes `firstKeptEntryId`.
 */
function migrateV1ToV2(records: RawRecord[]): void {
  const ids = new Set<string>();
  let previous: string | null = null;
  for (const record of records) {
    if (record.type === "session") {
      record.version = 2;
      continue;
    }
    const id = createEntryId(ids);
    ids.add(id);
    record.id = id;
    record.parentId = previous;
    previous = id;
    if (record.type === "compaction" && typeof record.firstKeptEntryIndex === "number") {
      const target = records[record.firstKeptEntryIndex];
      if (target && target.type !== "session") record.firstKeptEntryId = target.id;
      delete record.firstKeptEntryIndex;
    }
  }
}

/** v2 → v3: message role "hookMessage" became "custom". */
function migrateV2ToV3(records: RawRecord[]): void {
  for (const record of records) {
    if (record.type === "session") {
      record.version = 3;
      continue;
    }
    const message = record.type === "message" ? (record.message as RawRecord | undefined) : undefined;
    if (message && message.role === "hookMessage") message.role = "custom";
  }
}
