/** Typed archive errors: every failure names the rule broken and, when there is one, the member. */

export type ArchiveErrorCode =
  | "not-a-zip" // the source is not a zip file
  | "truncated" // a zip whose end (central directory) is missing
  | "unsafe-name" // a name that could escape the store: "..", absolute, backslash, drive letter, NUL
  | "unexpected-member" // a harmless name that is not on the whitelist
  | "unsafe-entry" // a symlink, a directory, an encrypted entry, data overlapping another entry
  | "ambiguous" // local headers disagree with the central directory: other tools would read other data
  | "duplicate" // a name (or a session id) twice
  | "too-many-entries"
  | "too-large" // an entry, a session or the whole archive over its size limit
  | "too-many-lines"
  | "ratio" // compression ratio over the limit: a zip bomb
  | "unsupported-compression"
  | "size-mismatch" // an entry inflates to another size than the one it declares
  | "crc"
  | "corrupt-data" // the compressed data does not inflate
  | "blob-hash" // a blob whose bytes do not hash to its name
  | "bad-manifest" // missing, not JSON, or not the manifest schema
  | "unsupported-version" // a manifest from a newer major version
  | "manifest-mismatch" // the manifest disagrees with the members
  | "bad-session" // a member or file that is not a valid session
  | "not-found" // an export source (session, entry) that does not exist
  | "changed-during-export" // a session rewritten (not appended to) while it was exported
  | "conflict" // the path an import would create is taken by something else
  | "write-failed"; // storage failed while committing; what was written is rolled back

export class ArchiveError extends Error {
  override readonly name = "ArchiveError";
  readonly code: ArchiveErrorCode;
  /** The archive member, file name or storage path the error is about. */
  readonly member: string | undefined;

  constructor(code: ArchiveErrorCode, message: string, options?: { member?: string; cause?: unknown }) {
    super(options?.member === undefined ? message : `${options.member}: ${message}`, options?.cause === undefined ? undefined : { cause: options.cause });
    this.code = code;
    this.member = options?.member;
  }

  /** A JSON-serializable form, for `--json` output. */
  toJSON(): { error: "ArchiveError"; code: ArchiveErrorCode; member?: string; message: string } {
    return { error: "ArchiveError", code: this.code, ...(this.member === undefined ? {} : { member: this.member }), message: this.message };
  }
}

export function isArchiveError(error: unknown, code?: ArchiveErrorCode): error is ArchiveError {
  return error instanceof ArchiveError && (code === undefined || error.code === code);
}
