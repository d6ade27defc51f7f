/**
 * A session file's header, decoded from its dialect and checked by hand: listing and finding a
 * session read headers only, and checking them this way keeps zod (the entry schemas of
 * schema.ts) out of the code those load (a warm `sessionkit ls` spent ~15 ms of CPU loading it).
 */
import { decodeRecord, DialectError, type SessionDialect } from "./dialect.js";
import type { SessionHeader } from "./types.js";

const optionalString = (value: unknown) => value === undefined || typeof value === "string";

/**
 * What a header must be; fields this kit does not name are kept. A version is a positive safe
 * integer.
 */
function isSessionHeader(record: Record<string, unknown>): boolean {
  const { type, id, version, timestamp, cwd, parentSession, title } = record;
  return (
    type === "session" &&
    typeof id === "string" &&
    (version === undefined || (typeof version === "number" && Number.isSafeInteger(version) && version > 0)) &&
    optionalString(timestamp) &&
    optionalString(cwd) &&
    optionalString(parentSession) &&
    optionalString(title)
  );
}

/** The header record decoded and checked; the parsed (canonical) header keeps every field. */
export function decodeHeader(dialect: SessionDialect, record: Record<string, unknown>): { success: true; data: SessionHeader } | { success: false } {
  let decoded: Record<string, unknown>;
  try {
    decoded = decodeRecord(dialect, record);
  } catch (error) {
    if (error instanceof DialectError) return { success: false };
    throw error;
  }
  return isSessionHeader(decoded) ? { success: true, data: decoded as unknown as SessionHeader } : { success: false };
}
