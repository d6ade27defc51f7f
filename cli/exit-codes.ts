/** The exit codes, one table for every command (printed by --help, in docs/cli.md; errors.ts maps failures to them). */
export type FailureKind = "not-found" | "usage" | "invalid" | "failed";

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
