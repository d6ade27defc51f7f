/**
 * What a command takes: its flags and arguments. A command module (commands/) owns them and the
 * type it parses them into; args.ts finds the command in the command line, commands.ts parses it
 * with that module and loads only the code the command runs (run.ts: what it is given).
 */
import type { parseArgs } from "node:util";

/** The agents whose stores the CLI reads (--agent's values; agent-stores.ts finds them). */
export const AGENTS = ["pi", "omp", "xcsh", "indusagi", "operator"] as const;
export type AgentName = (typeof AGENTS)[number];

export const COMMAND_NAMES = ["ls", "show", "context", "tree", "verify", "migrate", "export", "import", "serve", "search", "history", "scan", "sync", "stats"] as const;
export type CommandName = (typeof COMMAND_NAMES)[number];

/** The tables `stats --by` chooses from (listed by the help, checked by commands/stats.ts). */
export const STATS_TABLES = ["day", "model", "project", "agent", "session"] as const;
export type StatsTable = (typeof STATS_TABLES)[number];

export function isCommandName(word: string): word is CommandName {
  return (COMMAND_NAMES as readonly string[]).includes(word);
}

/** The flags every command takes (node:util parseArgs options). */
export const GLOBAL_OPTIONS = {
  root: { type: "string", multiple: true },
  agent: { type: "string" },
  store: { type: "string" },
  json: { type: "boolean" },
  help: { type: "boolean", short: "h" },
  version: { type: "boolean", short: "v" },
} as const;

/** parseArgs's message as a usage message: its first sentence (its advice about "--" does not apply), in lower case as every other. */
export function parseArgsMessage(error: unknown): string {
  const sentence = (error as Error).message.split(". ")[0]!;
  return sentence.charAt(0).toLowerCase() + sentence.slice(1);
}

type OptionsConfig = NonNullable<NonNullable<Parameters<typeof parseArgs>[0]>["options"]>;

/** The values parseArgs gives for the global flags and a command's `options`. */
export type FlagValues<O extends OptionsConfig> = ReturnType<typeof parseArgs<{ options: typeof GLOBAL_OPTIONS & O; strict: true; allowPositionals: true }>>["values"];

/** What the global flags say, for every command. */
export interface GlobalArgs {
  command: CommandName;
  /** --root (serve takes several: `roots`). */
  root: string | undefined;
  roots: string[];
  /** --store: a postgres:// URL, in place of the agents' stores and --root. */
  store: string | undefined;
  /** --agent: only this agent's stores. */
  agent: AgentName | undefined;
  json: boolean;
}

/** A command's arguments besides its flags (the files, ids or words after its name). */
interface Operands {
  /** At most this many (Infinity: any number). */
  max: number;
  /** What they are, for messages ("a session file or id prefix"). */
  what: string;
  /** May be left out. */
  optional?: boolean;
  /** They are the words of one query: several arguments are joined with spaces. */
  query?: boolean;
  /** The message for an empty one, after the command's name (default "needs <what>"). */
  emptyMessage?: string;
}

/** A command's flags and arguments, and how they become its `A`. */
export interface CommandSpec<O extends OptionsConfig, A> {
  /** The command's own flags (besides GLOBAL_OPTIONS). */
  options: O;
  operands: Operands;
  /** Takes --root more than once (serve). */
  manyRoots?: boolean;
  /**
   * The command's arguments from the flags' values and its operands (`target`: the first, or a
   * query's words joined); throws UsageError.
   */
  parse(values: FlagValues<O>, operands: { target: string; targets: string[] }): A;
}

/** A command module's spec, its types inferred. */
export function defineCommand<const O extends OptionsConfig, A>(spec: CommandSpec<O, A>): CommandSpec<O, A> {
  return spec;
}
