/**
 * What an entry looks like on disk (omp's persistence rules): strings over 500,000 UTF-16 units
 * truncated with a notice, transient streaming fields removed, `lineCount` recomputed where its
 * `content` was cut. Memory keeps the full entry; this returns a copy only where something changed.
 */

export const MAX_PERSIST_CHARS = 500_000;
export const TRUNCATION_NOTICE = "\n\n[Session persistence truncated large content]";
const TRANSIENT_KEYS = new Set(["partialJson", "jsonlEvents"]);

function truncateForPersistence(text: string): string {
  if (text.length <= MAX_PERSIST_CHARS) return text;
  let cut = MAX_PERSIST_CHARS - TRUNCATION_NOTICE.length;
  const last = text.charCodeAt(cut - 1);
  if (last >= 0xd800 && last <= 0xdbff) cut--; // never leave half a surrogate pair
  return text.slice(0, cut) + TRUNCATION_NOTICE;
}

/** Returns `value` itself when nothing needs to change, else a transformed copy. */
export function prepareValueForPersistence(value: unknown): unknown {
  if (typeof value === "string") return truncateForPersistence(value);
  if (Array.isArray(value)) {
    let copy: unknown[] | undefined;
    for (let i = 0; i < value.length; i++) {
      const next = prepareValueForPersistence(value[i]);
      if (next !== value[i]) (copy ??= value.slice())[i] = next;
    }
    return copy ?? value;
  }
  if (typeof value === "object" && value !== null) {
    const object = value as Record<string, unknown>;
    let copy: Record<string, unknown> | undefined;
    for (const key of Object.keys(object)) {
      if (TRANSIENT_KEYS.has(key)) {
        copy ??= { ...object };
        delete copy[key];
        continue;
      }
      const next = prepareValueForPersistence(object[key]);
      if (next !== object[key]) (copy ??= { ...object })[key] = next;
    }
    if (copy && typeof copy.content === "string" && copy.content !== object.content && "lineCount" in copy) {
      copy.lineCount = copy.content.split("\n").length;
    }
    return copy ?? value;
  }
  return value;
}
