/**
 * The commands: each one's module (its flags, arguments and parsed type: commands/, small, loaded
 * with this table); the command line parsed with the module's flags (node:util parseArgs, strict)
 * and the code that runs it loaded from a table of the caller's (command-code.ts: every command's,
 * each loaded when it runs; search-script-entry.ts: search and history's); and the run of a
 * command with what every command is given (Run), the stores it reads found.
 */
import os from "node:os";
import { parseArgs } from "node:util";
import { agentHomes, discoverAgentStores, storeAt, type AgentStore } from "./agent-stores.js";
import { AGENTS, COMMAND_NAMES, GLOBAL_OPTIONS, isCommandName, parseArgsMessage, type AgentName, type CommandName, type CommandSpec, type FlagValues, type GlobalArgs } from "./command.js";
import { exportSpec, importSpec } from "./commands/archive.js";
import { ls } from "./commands/ls.js";
import { history, search } from "./commands/search.js";
import { scan } from "./commands/scan.js";
import { serve } from "./commands/serve.js";
import { context, migrate, show, tree, verify } from "./commands/session.js";
import { stats } from "./commands/stats.js";
import { sync } from "./commands/sync.js";
import { CliError, UsageError } from "./errors.js";
import { writeJson } from "./json.js";
import type { CommandRun, Io, Run } from "./run.js";
import { databaseStore, requireDirectory, resolveRoot } from "./store.js";
import { neutralizeControls, neutralizeJsonControls } from "./terminal-text.js";
import { loadTextWidth } from "./text-width.js";

// The spec's options are typed per command; here any command's will do.
type AnySpec = CommandSpec<Record<string, { type: "string" | "boolean"; multiple?: boolean; short?: string }>, object>;

/** Each command's module's spec (its code: command-code.ts). */
const EVERY_SPEC: Record<CommandName, unknown> = { ls, show, context, tree, verify, migrate, export: exportSpec, import: importSpec, serve, search, history, scan, sync, stats };
const SPECS = EVERY_SPEC as Record<CommandName, AnySpec>;

/** The code that runs a command, loaded when asked for; undefined where the table has none for these arguments. */
export type CommandCode = (args: GlobalArgs) => Promise<CommandRun<object>> | undefined;

/** A command's code, paired with its module's spec: the types say the code takes what the spec parses. */
export function commandCode<O extends AnySpec["options"], A extends object>(_spec: CommandSpec<O, A>, run: (args: GlobalArgs) => Promise<CommandRun<A>> | undefined): CommandCode {
  return run as CommandCode;
}

/** A command, its flags and arguments parsed (strict), and the code that runs it. */
export interface ParsedCommand {
  args: GlobalArgs & object;
  run: CommandRun<object>;
}

/**
 * Parses the command line of `name` (as scanCommandLine found it) with its module's flags; loads
 * the code that runs it from `code`. Undefined when the command line's command has none there.
 */
export async function parseCommand(argv: readonly string[], name: CommandName, code: Partial<Record<CommandName, CommandCode>>): Promise<ParsedCommand | undefined> {
  const args = parseCommandLine(argv, name);
  const loading = code[args.command]?.(args);
  return loading && { args, run: await loading };
}

/** The global flags and the command's own arguments (its module's `A`); throws UsageError. */
function parseCommandLine(argv: readonly string[], command: CommandName, reparsed = false): GlobalArgs & object {
  const spec = SPECS[command];
  refuseOthersFlags(argv, command, spec);
  const options = { ...GLOBAL_OPTIONS, ...spec.options };
  let parsed;
  try {
    parsed = parseArgs({ args: [...argv], options, strict: true, allowPositionals: true });
  } catch (error) {
    throw new UsageError(parseArgsMessage(error));
  }
  const values = parsed.values as FlagValues<AnySpec["options"]>;
  const [word, ...rest] = parsed.positionals;
  // scanCommandLine took a word for the command that is this command's flag's value (or the
  // other way round): the command is the first word left.
  if (word === undefined) throw new UsageError("missing command");
  if (word !== command) {
    if (!isCommandName(word)) throw new UsageError(`unknown command "${word}"`);
    if (reparsed) throw new UsageError(`cannot tell whether the command is ${command} or ${word}`);
    return parseCommandLine(argv, word, true);
  }
  for (const [flag, value] of Object.entries(values)) {
    // An empty value would name the current directory, or no session: never what was meant.
    if ([value].flat().some((item) => typeof item === "string" && item.trim() === "")) throw new UsageError(`--${flag} needs a value, not an empty string`);
  }
  const { max, what, optional = false, query = false, emptyMessage = `needs ${what}` } = spec.operands;
  if (max === 0 && rest.length > 0) throw new UsageError(`${command} takes no argument (got "${rest[0]}")`);
  if (max > 0 && rest.length === 0 && !optional) throw new UsageError(`${command} needs ${what}`);
  // The words of a query may be several arguments: the query is empty when all of them are.
  const empty = query ? rest.length > 0 && rest.join("").trim() === "" : rest.some((arg) => arg.trim() === "");
  if (empty) throw new UsageError(`${command} ${emptyMessage}, not an empty argument`);
  if (rest.length > max) throw new UsageError(`${command} takes one argument, got ${rest.length}`);
  const global = globalArgs(command, values, spec.manyRoots ?? false);
  const own = spec.parse(values, { target: query ? rest.join(" ") : (rest[0] ?? ""), targets: rest });
  return { ...global, ...own };
}

/** A flag of another command given to this one: said so (its own parse would call it unknown). */
function refuseOthersFlags(argv: readonly string[], command: CommandName, spec: AnySpec): void {
  const options = { ...GLOBAL_OPTIONS, ...spec.options };
  const { tokens } = parseArgs({ args: [...argv], options, strict: false, allowPositionals: true, tokens: true });
  const unknown = tokens.filter((token) => token.kind === "option" && !(token.name in options)).map((token) => (token.kind === "option" ? token.name : ""));
  if (unknown.length === 0) return;
  const others = COMMAND_NAMES.filter((name) => name !== command).map((name) => SPECS[name]);
  for (const name of unknown) {
    for (const other of others) {
      const long = Object.entries(other.options).find(([flag, config]) => flag === name || config.short === name)?.[0];
      if (long !== undefined) throw new UsageError(`${command} does not take --${long}`);
    }
  }
}

function globalArgs(command: CommandName, values: FlagValues<AnySpec["options"]>, manyRoots: boolean): GlobalArgs {
  const roots = values.root ?? [];
  if (!manyRoots && roots.length > 1) throw new UsageError(`--root given ${roots.length} times (only serve takes several)`);
  if (values.store !== undefined && (values.root !== undefined || values.agent !== undefined)) {
    throw new UsageError(`--store names a database store: it takes no --${values.root !== undefined ? "root" : "agent"}`);
  }
  if (values.store !== undefined && !/^postgres(ql)?:\/\//.test(values.store)) throw new UsageError(`--store takes a postgres:// URL (got "${values.store}")`);
  if (values.agent !== undefined && !(AGENTS as readonly string[]).includes(values.agent)) {
    throw new UsageError(`--agent must be ${AGENTS.slice(0, -1).join(", ")} or ${AGENTS.at(-1)} (got "${values.agent}")`);
  }
  return { command, root: roots[0], roots, store: values.store, agent: values.agent as AgentName | undefined, json: values.json ?? false };
}

/** Runs a parsed command with what every command is given (Run). */
export async function runCommand({ args, run: code }: ParsedCommand, io: Io): Promise<number> {
  const home = os.homedir();
  let stores: Promise<AgentStore[]> | undefined;
  const run: Run = {
    args,
    io,
    root: resolveRoot(args.root, io.cwd, io.env),
    home,
    stores: () => (stores ??= storesToRead(args, io, home)),
    warn: (message) => io.stderr.write(`sessionkit: ${args.command}: ${neutralizeControls(message)}\n`),
    print(json, lines) {
      if (args.json) {
        if (writeJson(json, (chunk) => io.stdout(neutralizeJsonControls(chunk)))) io.stdout("\n");
        return;
      }
      // In batches: the text of a large session is too long for one string.
      let batch = "";
      for (const line of lines()) {
        batch += `${neutralizeControls(line)}\n`;
        if (batch.length >= 1 << 20) {
          io.stdout(batch);
          batch = "";
        }
      }
      io.stdout(batch);
    },
  };
  // Text output measures what it prints (tables, lines cut to a width); --json needs none of that.
  if (!args.json) await loadTextWidth();
  try {
    return await code(run);
  } finally {
    // A database store's pools would keep the process alive.
    if (stores) for (const store of await stores.catch(() => [])) await store.database?.closeAll();
  }
}

/** The stores a command reads (see Run.stores). */
async function storesToRead(args: GlobalArgs, io: Io, home: string): Promise<AgentStore[]> {
  if (args.store !== undefined) return [databaseStore(args.store)];
  const discovered = await discoverAgentStores({ home, env: io.env });
  if (args.root !== undefined) {
    const root = resolveRoot(args.root, io.cwd, io.env);
    await requireDirectory(root);
    return [await storeAt(root, discovered, home, args.agent)];
  }
  if (args.agent === undefined) return discovered;
  const chosen = discovered.filter((store) => store.agent === args.agent);
  if (chosen.length === 0) throw new CliError("not-found", `no store of ${args.agent} found (looked in ${agentHomes(args.agent, io.env, home)})`);
  return chosen;
}
