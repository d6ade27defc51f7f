#!/usr/bin/env node
/**
 * sessionkit: reads pi coding-agent sessions under a storage root (~/.pi/agent by default),
 * exports them as archives and imports archives and session files into it.
 * Exit codes: one table for every command, EXIT_CODES in exit-codes.ts.
 *
 * This module loads only what finds the command (args.ts); the commands (commands.ts), the code
 * the command runs and the error reporting are imported when needed: `--help` loads the help text
 * alone, `ls` none of the archive, search or server code. `search` and `history` run from a
 * script of their own through a V8 code cache (search-script.ts) where there is one.
 */
import packageJson from "../package.json" with { type: "json" };
import { scanCommandLine } from "./args.js";
import type { Io } from "./run.js";

const io: Io = {
  stdout: (text) => void process.stdout.write(text),
  stderr: {
    write: (text) => void process.stderr.write(text),
    // Asked when progress is shown: making process.stderr costs a stream (a socket, for a pipe).
    get isTTY() {
      return process.stderr.isTTY === true;
    },
  },
  cwd: process.cwd(),
  env: process.env,
};

/** Reports a failure (report.ts); returns its exit code. */
async function fail(error: unknown, command?: string): Promise<number> {
  return (await import("./report.js")).reportFailure(io, error, command);
}

async function main(argv: readonly string[]): Promise<number> {
  const line = scanCommandLine(argv);
  if (line.kind === "version") {
    io.stdout(`${packageJson.version}\n`);
    return 0;
  }
  if (line.kind === "help") {
    const { commandUsage, USAGE } = await import("./help.js");
    io.stdout(line.command === undefined ? USAGE : commandUsage(line.command));
    return 0;
  }
  if (line.kind === "usage") return (await import("./report.js")).reportUsage(io, line.message);
  if (line.command === "search" || line.command === "history") {
    const code = await (await import("./search-script.js")).runFromSearchScript(argv, line.command, io);
    if (code !== undefined) return code;
  }
  try {
    const [{ runCommandLine }, { COMMAND_CODE }] = await Promise.all([import("./command-line.js"), import("./command-code.js")]);
    // Every command has its code in COMMAND_CODE.
    return (await runCommandLine(argv, line.command, io, COMMAND_CODE))!;
  } catch (error) {
    return fail(error);
  }
}

// `sessionkit ls | head`: a closed pipe ends the output, it is not an error.
process.stdout.on("error", (error: NodeJS.ErrnoException) => {
  if (error.code !== "EPIPE") throw error;
  process.exit(process.exitCode ?? 0);
});
// Anything thrown outside a command (a stream's error) exits with the table's code, not Node's 1.
process.on("uncaughtException", (error) => void fail(error).then((code) => process.exit(code)));

process.exitCode = await main(process.argv.slice(2));
