#!/usr/bin/env node
/**
 * sessionkit: reads pi coding-agent sessions under a storage root (~/.pi/agent by default),
 * exports them as archives and imports archives and session files into it.
 * Exit codes: one table for every command, EXIT_CODES in errors.ts.
 */
import packageJson from "../package.json" with { type: "json" };
import { commandUsage, parseCommandLine, USAGE } from "./args.js";
import { runCommand } from "./commands.js";
import type { Io } from "./run.js";
import { CliError, EXIT, failureKind, UsageError } from "./errors.js";
import { neutralizeControls } from "./terminal-text.js";

const io: Io = {
  stdout: (text) => void process.stdout.write(text),
  stderr: { write: (text) => void process.stderr.write(text), isTTY: process.stderr.isTTY === true },
  cwd: process.cwd(),
  env: process.env,
};

/** The first line of an error's message: a stack trace or a multi-line cause is not for users. */
function describe(error: unknown): string {
  const message = error instanceof Error ? error.message : String(error);
  const first = message.split("\n")[0]!.trim();
  return error instanceof Error && !(error instanceof CliError) && error.name !== "SessionError" && error.name !== "StorageError"
    ? `unexpected ${error.name}: ${first}`
    : first;
}

/** One line on stderr (and the CliError's details); returns the exit code of its kind. */
function report(error: unknown, command?: string): number {
  // Messages quote paths and file contents: anyone's bytes.
  io.stderr.write(`sessionkit: ${command === undefined ? "" : `${command}: `}${neutralizeControls(describe(error))}\n`);
  if (error instanceof CliError) for (const line of error.details) io.stderr.write(`${neutralizeControls(line)}\n`);
  return EXIT[failureKind(error)];
}

async function main(argv: readonly string[]): Promise<number> {
  let parsed;
  try {
    parsed = parseCommandLine(argv);
  } catch (error) {
    if (!(error instanceof UsageError)) return report(error);
    io.stderr.write(`sessionkit: ${neutralizeControls(error.message)} (see sessionkit --help)\n`);
    return EXIT.usage;
  }
  if (parsed.kind === "help") {
    io.stdout(parsed.command === undefined ? USAGE : commandUsage(parsed.command));
    return EXIT.ok;
  }
  if (parsed.kind === "version") {
    io.stdout(`${packageJson.version}\n`);
    return EXIT.ok;
  }
  try {
    return await runCommand(parsed, io);
  } catch (error) {
    return report(error, parsed.command);
  }
}

// `sessionkit ls | head`: a closed pipe ends the output, it is not an error.
process.stdout.on("error", (error: NodeJS.ErrnoException) => {
  if (error.code !== "EPIPE") throw error;
  process.exit(process.exitCode ?? EXIT.ok);
});
// Anything thrown outside a command (a stream's error) exits with the table's code, not Node's 1.
process.on("uncaughtException", (error) => process.exit(report(error)));

process.exitCode = await main(process.argv.slice(2));
