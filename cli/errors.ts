/** Errors the CLI reports as one line on stderr, and the exit code each kind of failure gets. */
import { ArchiveError } from "../src/archive/errors.js";
import { SessionError } from "../src/errors.js";
import { StorageError } from "../src/port.js";

export type FailureKind = "not-found" | "usage" | "invalid" | "failed";

/** The exit codes, one table for every command (printed by --help, in docs/cli.md). */
export const EXIT_CODES: ReadonlyArray<{ code: number; kind: FailureKind | "ok"; meaning: string }> = [
  { code: 0, kind: "ok", meaning: "ok (verify: the file is valid)" },
  { code: 1, kind: "not-found", meaning: "not found: a file, session id, entry or store that is not there (scan: secrets were found)" },
  { code: 2, kind: "usage", meaning: "usage: a malformed command line (an unknown command or option, a missing or empty argument), or an id prefix that names several sessions" },
  {
    code: 3,
    kind: "invalid",
    meaning: "invalid: a file that is not what the command reads (not a session file, not an archive) or that fails its checks (the problems verify finds, an archive or session files import refuses)",
  },
  { code: 4, kind: "failed", meaning: "failed: anything else (a file that cannot be read or written, an output that exists, a port in use, a database error)" },
];

export const EXIT = Object.fromEntries(EXIT_CODES.map(({ kind, code }) => [kind, code])) as Record<FailureKind | "ok", number>;

/** A failure the user can act on; the message already says what and where. */
export class CliError extends Error {
  override readonly name = "CliError";
  readonly kind: FailureKind;
  /** Lines printed after the message (e.g. the candidates of an ambiguous id prefix). */
  readonly details: readonly string[];

  constructor(kind: FailureKind, message: string, details: readonly string[] = []) {
    super(message);
    this.kind = kind;
    this.details = details;
  }
}

/** A malformed command line: reported with a pointer to the usage text. */
export class UsageError extends Error {
  override readonly name = "UsageError";
}

/** Archive errors that are not about the archive's or the files' contents. */
const ARCHIVE_FAILURES: ReadonlySet<string> = new Set(["conflict", "write-failed", "changed-during-export"]);

/** Which kind of failure an error is: the CLI's own say; the library's by their codes. */
export function failureKind(error: unknown): FailureKind {
  if (error instanceof CliError) return error.kind;
  if (error instanceof UsageError) return "usage";
  if (error instanceof SessionError) return error.code === "not-a-session" ? "invalid" : error.code === "entry-not-found" ? "not-found" : "failed";
  if (error instanceof StorageError) return error.code === "not-found" ? "not-found" : error.code === "corrupt" ? "invalid" : "failed";
  if (error instanceof ArchiveError) return error.code === "not-found" ? "not-found" : ARCHIVE_FAILURES.has(error.code) ? "failed" : "invalid";
  return "failed";
}
