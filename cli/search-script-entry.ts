/**
 * The search and history commands' whole run, from the parsed command line to the exit code, as
 * one script of its own (scripts/cli-bundle.ts; search-script.ts runs it through a V8 code cache).
 * Everything they use is in it, the errors' classes too: a failure is reported by the script's
 * own report.ts, which knows them. Another command's code is not, nor the database client
 * (`--store`: 115 KB, pg's, ~8 ms more CPU for every search from the cache): a command line whose
 * command turns out to be another one, or that names a database store, is handed back
 * (undefined) before anything runs.
 */
import type { CommandName } from "./command.js";
import { runCommandLine } from "./command-line.js";
import { commandCode } from "./commands.js";
import { history, search } from "./commands/search.js";
import type { Io } from "./run.js";
import { historyCommand, searchCommand } from "./search.js";

const SEARCH_CODE = {
  search: commandCode(search, (args) => (args.store === undefined ? Promise.resolve(searchCommand) : undefined)),
  history: commandCode(history, (args) => (args.store === undefined ? Promise.resolve(historyCommand) : undefined)),
};

export function runSearchCommandLine(argv: readonly string[], name: CommandName, io: Io): Promise<number | undefined> {
  return runCommandLine(argv, name, io, SEARCH_CODE);
}
