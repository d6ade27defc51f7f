/** Typed archive errors: every failure names the rule broken and, when there is one, the member. */
import { CodedError } from "../port.js";

/**
 * Which rule an archive (or an import or export) broke ({@link ArchiveError.code}).
 * @category Errors
 */
export type ArchiveErrorCode =
  /** The source is not a zip file. */
  | "not-a-zip"
  /** A zip whose end (central directory) is missing. */
  | "truncated"
  /** A name that could escape the store: "..", absolute, backslash, drive letter, NUL. */
  | "unsafe-name"
  /** A harmless name that is not on the whitelist. */
  | "unexpected-member"
  /** A symlink, a directory, an encrypted entry, data overlapping another entry. */
  | "unsafe-entry"
  /** Local headers disagree with the central directory: other tools would read other data. */
  | "ambiguous"
  /** A name (or a session id) twice. */
  | "duplicate"
  /** More zip entries (or plain files in one import) than the limit allows. */
  | "too-many-entries"
  /** An entry, a session or the whole archive over its size limit. */
  | "too-large"
  /** A session with more lines than the limit allows. */
  | "too-many-lines"
  /** Compression ratio over the limit: a zip bomb. */
  | "ratio"
  /** An entry compressed by another method than stored or deflate. */
  | "unsupported-compression"
  /** An entry inflates to another size than the one it declares. */
  | "size-mismatch"
  /** An entry whose bytes do not match its CRC-32. */
  | "crc"
  /** The compressed data does not inflate. */
  | "corrupt-data"
  /** A blob whose bytes do not hash to its name. */
  | "blob-hash"
  /** Missing, not JSON, or not the manifest schema. */
  | "bad-manifest"
  /** A manifest from a newer major version. */
  | "unsupported-version"
  /** The manifest disagrees with the members. */
  | "manifest-mismatch"
  /** A member or file that is not a valid session. */
  | "bad-session"
  /** An export source (session, entry) that does not exist. */
  | "not-found"
  /** A session rewritten (not appended to) while it was exported. */
  | "changed-during-export"
  /** The path an import would create is taken by something else. */
  | "conflict"
  /** Storage failed while committing; what was written is rolled back. */
  | "write-failed";

/**
 * Thrown by exportArchive, importArchive, importSessionFiles and verifyArchive: `code` names the
 * rule broken, `member` the archive member or file concerned, and the message says both.
 * Test for it with {@link isArchiveError}.
 * @category Errors
 */
export class ArchiveError extends CodedError<ArchiveErrorCode> {
  /** Always "ArchiveError". */
  override readonly name = "ArchiveError";
  /** The archive member, file name or storage path the error is about. */
  readonly member: string | undefined;

  constructor(code: ArchiveErrorCode, message: string, options?: { member?: string; cause?: unknown }) {
    super(code, options?.member === undefined ? message : `${options.member}: ${message}`, options?.cause);
    this.member = options?.member;
  }

  /** A JSON-serializable form, for `--json` output. */
  toJSON(): {
    /** Always "ArchiveError". */
    error: "ArchiveError";
    /** Which rule was broken. */
    code: ArchiveErrorCode;
    /** The archive member, file name or storage path concerned, when there is one. */
    member?: string;
    /** The error's message (it starts with the member). */
    message: string;
  } {
    return { error: "ArchiveError", code: this.code, ...(this.member === undefined ? {} : { member: this.member }), message: this.message };
  }
}

/**
 * True when `error` is an ArchiveError (with the given `code`, when one is given).
 * @category Errors
 */
export function isArchiveError(error: unknown, code?: ArchiveErrorCode): error is ArchiveError {
  return error instanceof ArchiveError && (code === undefined || error.code === code);
}
