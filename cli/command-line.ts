/** A command line parsed and run, a failure reported (report.ts) as its exit code. */
import type { CommandName } from "./command.js";
import { parseCommand, runCommand, type CommandCode } from "./commands.js";
import { reportFailure } from "./report.js";
import type { Io } from "./run.js";

/**
 * Runs the command line `argv` whose command scanCommandLine found to be `name`, with the code of
 * `code`; returns its exit code, or undefined (before running anything) when `code` has none for
 * the command line's command and arguments.
 */
export async function runCommandLine(argv: readonly string[], name: CommandName, io: Io, code: Partial<Record<CommandName, CommandCode>>): Promise<number | undefined> {
  let parsed;
  try {
    parsed = await parseCommand(argv, name, code);
  } catch (error) {
    return reportFailure(io, error);
  }
  if (parsed === undefined) return undefined;
  try {
    return await runCommand(parsed, io);
  } catch (error) {
    return reportFailure(io, error, parsed.args.command);
  }
}
