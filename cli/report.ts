/** How a failure reaches the user: one line on stderr, and the exit code of its kind (EXIT_CODES). */
import { CliError, EXIT, failureKind, UsageError } from "./errors.js";
import type { Io } from "./run.js";
import { neutralizeControls } from "./terminal-text.js";

/** The first line of an error's message: a stack trace or a multi-line cause is not for users. */
function describe(error: unknown): string {
  const message = error instanceof Error ? error.message : String(error);
  const first = message.split("\n")[0]!.trim();
  return error instanceof Error && !(error instanceof CliError) && error.name !== "SessionError" && error.name !== "StorageError"
    ? `unexpected ${error.name}: ${first}`
    : first;
}

/** A malformed command line, with a pointer to the help. */
export function reportUsage(io: Io, message: string): number {
  io.stderr.write(`sessionkit: ${neutralizeControls(message)} (see sessionkit --help)\n`);
  return EXIT.usage;
}

/** One line on stderr (and the CliError's details); returns the exit code of its kind. */
export function reportFailure(io: Io, error: unknown, command?: string): number {
  if (error instanceof UsageError) return reportUsage(io, error.message);
  // Messages quote paths and file contents: anyone's bytes.
  io.stderr.write(`sessionkit: ${command === undefined ? "" : `${command}: `}${neutralizeControls(describe(error))}\n`);
  if (error instanceof CliError) for (const line of error.details) io.stderr.write(`${neutralizeControls(line)}\n`);
  return EXIT[failureKind(error)];
}
