/** The command line: one command, its argument and flags (node:util parseArgs, strict). */
import { parseArgs } from "node:util";
import { UsageError } from "./errors.js";

export const COMMANDS = ["ls", "show", "context", "tree", "verify", "migrate"] as const;
export type CommandName = (typeof COMMANDS)[number];

export const USAGE = `Usage: sessionkit [--root DIR] <command> [options]

Reads pi coding-agent sessions (JSONL trees) under a storage root: ~/.pi/agent by default
(or $PI_CODING_AGENT_DIR). File arguments are read in place and never modified, except by migrate.

Commands:
  ls [--all] [--cwd DIR]         sessions of a project dir (the current one by default), or of all
  show <file|id-prefix>          a session: header, name, leaf and its context as readable text
  context <file> [--leaf ID]     the context the model would get (at the leaf, or at entry ID)
  tree <file>                    the entry tree, with labels and the leaf marked
  verify <file>                  bad lines, invalid entries, dangling parents, duplicate ids,
                                 missing blobs, torn tail; exit 1 when there are problems
  migrate <file>                 rewrites an old-format (v1, v2) file as v3 (the only write)

Options:
  --root DIR   the storage root (holds sessions/ and blobs/)
  --json       print what the library's API returns, as JSON
  -h, --help   this text

Exit codes: 0 ok, 1 verify found problems, 2 error.
`;

export interface ParsedCommand {
  command: CommandName;
  /** The file or id-prefix argument ("" for ls). */
  target: string;
  root: string | undefined;
  all: boolean;
  cwd: string | undefined;
  json: boolean;
  leaf: string | undefined;
}

export type ParsedArgs = { help: true } | ({ help: false } & ParsedCommand);

/** Flags each command accepts besides --root, --json and --help. */
const COMMAND_FLAGS: Record<CommandName, readonly string[]> = {
  ls: ["all", "cwd"],
  show: [],
  context: ["leaf"],
  tree: [],
  verify: [],
  migrate: [],
};
const GLOBAL_FLAGS = ["root", "json", "help"];

export function parseCommandLine(argv: readonly string[]): ParsedArgs {
  let parsed;
  try {
    parsed = parseArgs({
      args: [...argv],
      allowPositionals: true,
      strict: true,
      options: {
        root: { type: "string" },
        all: { type: "boolean" },
        cwd: { type: "string" },
        json: { type: "boolean" },
        leaf: { type: "string" },
        help: { type: "boolean", short: "h" },
      },
    });
  } catch (error) {
    // parseArgs appends advice about "--" that does not apply here: keep its first sentence.
    throw new UsageError((error as Error).message.split(". ")[0]!);
  }
  const { values, positionals } = parsed;
  if (values.help || positionals[0] === "help") return { help: true };
  const [command, ...rest] = positionals;
  if (command === undefined) throw new UsageError("missing command");
  if (!(COMMANDS as readonly string[]).includes(command)) throw new UsageError(`unknown command "${command}"`);
  const name = command as CommandName;
  for (const flag of Object.keys(values)) {
    if (!GLOBAL_FLAGS.includes(flag) && !COMMAND_FLAGS[name].includes(flag)) throw new UsageError(`${name} does not take --${flag}`);
  }
  const wanted = name === "ls" ? 0 : 1;
  if (rest.length !== wanted) {
    const what = name === "show" ? "a file or session id prefix" : "a file";
    throw new UsageError(wanted === 0 ? `ls takes no argument (got "${rest[0]}")` : rest.length === 0 ? `${name} needs ${what}` : `${name} takes one ${name === "show" ? "argument" : "file"}, got ${rest.length}`);
  }
  return {
    help: false,
    command: name,
    target: rest[0] ?? "",
    root: values.root,
    all: values.all ?? false,
    cwd: values.cwd,
    json: values.json ?? false,
    leaf: values.leaf,
  };
}
