#!/usr/bin/env node
/**
 * sessionkit: reads pi coding-agent sessions under a storage root (~/.pi/agent by default),
 * exports them as archives and imports archives and session files into it.
 * Exit codes: 0 ok, 1 `verify` found problems (or an invalid archive), 2 error (one line on
 * stderr) or bad usage.
 */
import { parseCommandLine, USAGE } from "./args.js";
import { runCommand, type Io } from "./commands.js";
import { CliError, UsageError } from "./errors.js";
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

async function main(argv: readonly string[]): Promise<number> {
  let parsed;
  try {
    parsed = parseCommandLine(argv);
  } catch (error) {
    if (!(error instanceof UsageError)) throw error;
    io.stderr.write(`sessionkit: ${error.message} (see sessionkit --help)\n`);
    return 2;
  }
  if (parsed.help) {
    io.stdout(USAGE);
    return 0;
  }
  try {
    return await runCommand(parsed, io);
  } catch (error) {
    // Messages quote paths and file contents: anyone's bytes.
    io.stderr.write(`sessionkit: ${parsed.command}: ${neutralizeControls(describe(error))}\n`);
    if (error instanceof CliError) for (const line of error.details) io.stderr.write(`${neutralizeControls(line)}\n`);
    return 2;
  }
}

// `sessionkit ls | head`: a closed pipe ends the output, it is not an error.
process.stdout.on("error", (error: NodeJS.ErrnoException) => {
  if (error.code !== "EPIPE") throw error;
  process.exit(process.exitCode ?? 0);
});

process.exitCode = await main(process.argv.slice(2));
