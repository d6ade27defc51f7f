/** Errors the CLI reports as one line on stderr, and the exit code each kind of failure gets. */
import { ArchiveError } from "../src/archive/errors.js";
import { SessionError } from "../src/errors.js";
import { StorageError } from "../src/port.js";
import { EXIT_CODES, type FailureKind } from "./exit-codes.js";

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
