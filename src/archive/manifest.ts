/**
 * The archive layout and its manifest:
 *
 *   manifest.json               {format, version, generator, created, sessions[], blobs[], redacted?}
 *   sessions/<sessionId>.jsonl  the session file (v3), images as blob refs
 *   blobs/<sha256>              referenced blobs, stored (level 0)
 */
import * as z from "zod/mini";
import en from "zod/v4/locales/en.js";
import { ArchiveError } from "./errors.js";

// zod/mini has no messages of its own ("Invalid input" for every issue); our problems and errors
// quote them, so English is the default here as classic zod makes it (an app's locale still wins).
if (!z.config().localeError) z.config(en());

export const ARCHIVE_FORMAT = "sessionkit-archive";
/**
 * major.minor: a reader accepts every minor of its major and refuses newer majors. An archive is
 * written as the lowest version that describes it: 1.1 adds the optional `redacted`, written only
 * in a redacted archive (a 1.0 reader, whose schema drops keys it does not know, imports it).
 */
export const ARCHIVE_VERSION = "1.0";
export const REDACTED_ARCHIVE_VERSION = "1.1";
const SUPPORTED_MAJOR = 1;

export const MANIFEST_NAME = "manifest.json";
/** Session ids that may name a member (and a file): UUIDs and other plain ids, no dots or slashes. */
export const SESSION_ID_PATTERN = /^[A-Za-z0-9][A-Za-z0-9_-]{0,127}$/;
const SESSION_MEMBER = /^sessions\/([A-Za-z0-9][A-Za-z0-9_-]{0,127})\.jsonl$/;
const BLOB_MEMBER = /^blobs\/([0-9a-f]{64})$/;
const HEX64 = /^[0-9a-f]{64}$/;

export function sessionMemberName(sessionId: string): string {
  return `sessions/${sessionId}.jsonl`;
}

export function blobMemberName(hash: string): string {
  return `blobs/${hash}`;
}

export type MemberKind = { kind: "manifest" } | { kind: "session"; id: string } | { kind: "blob"; hash: string };

/** What a whitelisted name holds, or null for a name that is not on the whitelist. */
export function classifyMember(name: string): MemberKind | null {
  if (name === MANIFEST_NAME) return { kind: "manifest" };
  const session = SESSION_MEMBER.exec(name);
  if (session) return { kind: "session", id: session[1]! };
  const blob = BLOB_MEMBER.exec(name);
  if (blob) return { kind: "blob", hash: blob[1]! };
  return null;
}

/**
 * Why a name could reach outside the directory it is extracted into, or null. Checked before the
 * whitelist so that a hostile name is reported as what it is.
 */
export function unsafeNameRule(name: string): string | null {
  if (name === "") return "empty name";
  if (name.includes("\0")) return "NUL in name";
  if (name.includes("\\")) return "backslash in name";
  if (name.startsWith("/")) return "absolute name";
  if (/^[A-Za-z]:/.test(name)) return "drive-letter name";
  if (name.split("/").some((segment) => segment === ".." || segment === ".")) return "'..' or '.' path segment";
  return null;
}

const hex64 = z.string().check(z.regex(HEX64, "a lowercase sha256 hex digest"));
const size = z.number().check(z.int(), z.nonnegative());

const manifestSessionSchema = z.object({
  id: z.string().check(z.regex(SESSION_ID_PATTERN, "a session id usable as a file name")),
  /** The member holding the session. */
  path: z.string(),
  /** Where the session was stored on the exporting side (informational: imports never write there). */
  originalPath: z.string(),
  cwd: z.string(),
  entries: size,
  bytes: size,
  sha256: hex64,
  /** Set when the member holds one branch (root → this entry) of the original session. */
  leafId: z.optional(z.string()),
});

const manifestSchema = z.object({
  format: z.literal(ARCHIVE_FORMAT),
  version: z.string().check(z.regex(/^\d+\.\d+$/, "major.minor")),
  generator: z.string(),
  created: z.string(),
  sessions: z.array(manifestSessionSchema),
  blobs: z.array(z.object({ hash: hex64, bytes: size })),
  /** Set when the sessions were redacted on export: secrets replaced, per kind (1.1). */
  redacted: z.optional(z.record(z.string(), size)),
});

export type ArchiveManifest = z.infer<typeof manifestSchema>;
export type ManifestSession = z.infer<typeof manifestSessionSchema>;

/** Parses manifest bytes: format and version first (so a newer major is named as such), then the schema. */
export function parseManifest(bytes: Uint8Array): ArchiveManifest {
  let value: unknown;
  try {
    value = JSON.parse(new TextDecoder("utf-8", { fatal: true }).decode(bytes));
  } catch (error) {
    throw new ArchiveError("bad-manifest", `not UTF-8 JSON (${(error as Error).message})`, { member: MANIFEST_NAME });
  }
  const head = (typeof value === "object" && value !== null ? value : {}) as { format?: unknown; version?: unknown };
  if (head.format !== ARCHIVE_FORMAT) {
    throw new ArchiveError("bad-manifest", `format is ${JSON.stringify(head.format)}, expected ${JSON.stringify(ARCHIVE_FORMAT)}`, { member: MANIFEST_NAME });
  }
  const major = typeof head.version === "string" ? /^(\d+)\.\d+$/.exec(head.version)?.[1] : undefined;
  if (major !== undefined && Number(major) > SUPPORTED_MAJOR) {
    throw new ArchiveError(
      "unsupported-version",
      `archive format version ${head.version} is newer than this sessionkit reads (${SUPPORTED_MAJOR}.x): upgrade sessionkit to import it`,
      { member: MANIFEST_NAME },
    );
  }
  const parsed = manifestSchema.safeParse(value);
  if (!parsed.success) throw new ArchiveError("bad-manifest", `not a valid manifest: ${z.prettifyError(parsed.error)}`, { member: MANIFEST_NAME });
  if (Number(major) < SUPPORTED_MAJOR) throw new ArchiveError("unsupported-version", `archive format version ${parsed.data.version} is not supported`, { member: MANIFEST_NAME });
  return parsed.data;
}
