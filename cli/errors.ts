/** Errors the CLI reports as one line on stderr (exit code 2). */

/** A failure the user can act on; the message already says what and where. */
export class CliError extends Error {
  override readonly name = "CliError";
  /** Lines printed after the message (e.g. the candidates of an ambiguous id prefix). */
  readonly details: readonly string[];

  constructor(message: string, details: readonly string[] = []) {
    super(message);
    this.details = details;
  }
}

/** A malformed command line: reported with the usage text. */
export class UsageError extends Error {
  override readonly name = "UsageError";
}
