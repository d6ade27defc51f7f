/**
 * Session file dialects: how a file's records map onto the kit's canonical records (pi's shapes,
 * types.ts) and back, in the dialect its header declares. "pi" is canonical as it is; "seed003"
 * (the Python agent's snake_case) renames a fixed set of keys and entry types, keeping key order,
 * so an unchanged record encodes to the same bytes. docs/DESIGN.md §5; every interpretation of
 * seed 003: DIALECTS.md.
 */

/**
 * The spelling a session file is written in: "pi" (pi, oh-my-pi and the other agents of its
 * family; camelCase) or "seed003" (the snake_case Python agent's). A file keeps its dialect.
 * @category Sessions
 */
export type SessionDialect = "pi" | "seed003";

const SEED003_HEADER_TYPE = "session_header";

type RawRecord = Record<string, unknown>;

/** seed 003 type → canonical type (types not named here are the same in both). */
const SEED003_TYPES: Readonly<Record<string, string>> = {
  session_header: "session",
  branch: "branch_summary",
  custom_info: "custom",
};

/** seed 003 top-level key → canonical key, for every record type. */
const SEED003_KEYS: Readonly<Record<string, string>> = {
  parent_id: "parentId",
  parent_session: "parentSession",
  first_kept_entry_id: "firstKeptEntryId",
  tokens_before: "tokensBefore",
  from_hook: "fromHook",
  from_id: "fromId",
  target_id: "targetId",
  thinking_level: "thinkingLevel",
  model_id: "modelId",
  custom_type: "customType",
};

const invert = (map: Readonly<Record<string, string>>): Readonly<Record<string, string>> =>
  Object.fromEntries(Object.entries(map).map(([from, to]) => [to, from]));

const CANONICAL_TYPES_TO_SEED003 = invert(SEED003_TYPES);
const CANONICAL_KEYS_TO_SEED003 = invert(SEED003_KEYS);

/** A record that cannot be read in its file's dialect (the reader reports and skips it). */
export class DialectError extends Error {
  override readonly name = "DialectError";
}

/** The dialect a file's first record declares, or null when it is not a session header. */
export function detectDialect(first: unknown): SessionDialect | null {
  const type = typeof first === "object" && first !== null ? (first as RawRecord).type : undefined;
  if (type === "session") return "pi";
  if (type === SEED003_HEADER_TYPE) return "seed003";
  return null;
}

/**
 * One raw record of a file in `dialect` (its header or an entry) as the canonical record. For an
 * incremental reader: decode each record as it is parsed. Throws DialectError for a seed-003
 * record that also carries a canonical key the decoding would produce (it could not be written
 * back as it was).
 */
export function decodeRecord(dialect: SessionDialect, raw: RawRecord): RawRecord {
  if (dialect === "pi") return raw;
  return renameRecord(raw, SEED003_TYPES, SEED003_KEYS, "seed-003");
}

/** A canonical record (header or entry) as a record of `dialect`: the inverse of `decodeRecord`. */
export function encodeRecord(dialect: SessionDialect, record: RawRecord): RawRecord {
  if (dialect === "pi") return record;
  return renameRecord(record, CANONICAL_TYPES_TO_SEED003, CANONICAL_KEYS_TO_SEED003, "canonical");
}

function renameRecord(record: RawRecord, types: Readonly<Record<string, string>>, keys: Readonly<Record<string, string>>, what: string): RawRecord {
  const out: RawRecord = {};
  for (const key of Object.keys(record)) {
    const renamed = Object.hasOwn(keys, key) ? keys[key]! : key;
    // A key spelled the other dialect's way would come back renamed: not the record it was.
    if (renamed === key && targetsOf(keys).has(key)) throw new DialectError(`${what} record has the key "${key}" of the other spelling`);
    let value = record[key];
    if (key === "type" && typeof value === "string") {
      if (Object.hasOwn(types, value)) value = types[value];
      else if (targetsOf(types).has(value)) throw new DialectError(`${what} record has the type "${value}" of the other spelling`);
    }
    out[renamed] = value;
  }
  return out;
}

const targets = new Map<object, ReadonlySet<string>>();

function targetsOf(keys: Readonly<Record<string, string>>): ReadonlySet<string> {
  let set = targets.get(keys);
  if (!set) targets.set(keys, (set = new Set(Object.values(keys))));
  return set;
}

/** How `dialect` spells the canonical top-level key `key`. */
export function keyInDialect(dialect: SessionDialect, key: string): string {
  return dialect === "seed003" && Object.hasOwn(CANONICAL_KEYS_TO_SEED003, key) ? CANONICAL_KEYS_TO_SEED003[key]! : key;
}

const NO_KEYS: ReadonlySet<string> = new Set();

/** Top-level keys with which `decodeRecord` rejects a record of `dialect`: the other spelling of a key it renames. */
export function rejectedKeys(dialect: SessionDialect): ReadonlySet<string> {
  return dialect === "pi" ? NO_KEYS : targetsOf(SEED003_KEYS);
}

/** The dialect's name in messages. */
/** What a session file's first record must be, in either dialect; error messages name it. */
export const EXPECTED_HEADERS = `{"type":"session","id":…} or the Python agent's {"type":"session_header","id":…}`;

export function dialectName(dialect: SessionDialect): string {
  return dialect === "pi" ? "pi" : "snake_case Python agent";
}

/**
 * Fills, in a decoded seed-003 entry, the fields its seed's own example leaves out (see
 * DIALECTS.md): a missing `timestamp` is the previous record's, a compaction's missing
 * `tokensBefore` is 0. Returns the timestamp for the next entry. A full rewrite writes the filled
 * values; appends never touch earlier lines.
 */
export function completeSeed003Entry(entry: RawRecord, previousTimestamp: unknown): unknown {
  if (!Object.hasOwn(entry, "timestamp") && previousTimestamp !== undefined) entry.timestamp = previousTimestamp;
  if (entry.type === "compaction" && !Object.hasOwn(entry, "tokensBefore")) entry.tokensBefore = 0;
  return entry.timestamp;
}
