/** The command line: one command, its arguments and flags (node:util parseArgs, strict). */
import { parseArgs } from "node:util";
import { SEARCH_SOURCES, type SearchSource } from "../src/search/text.js";
import type { ConflictPolicy } from "../src/archive/import.js";
import { AGENTS, type AgentName } from "./agent-stores.js";
import { EXIT_CODES, UsageError } from "./errors.js";
import { isMachineName } from "./machine-stores.js";

const COMMANDS = ["ls", "show", "context", "tree", "verify", "migrate", "export", "import", "serve", "search", "history", "scan", "sync", "stats"] as const;
export type CommandName = (typeof COMMANDS)[number];

const CONFLICT_POLICIES: readonly ConflictPolicy[] = ["auto", "skip", "replace", "fork"];

const HELP_WIDTH = 100;

/** The tables `stats --by` chooses from. */
const STATS_TABLES = ["day", "model", "project", "agent", "session"] as const;
export type StatsTable = (typeof STATS_TABLES)[number];

/** `text` after `prefix`, wrapped at HELP_WIDTH columns, its further lines indented as far as `prefix`. */
function wrap(prefix: string, text: string): string {
  const lines: string[] = [];
  let line = prefix;
  for (const word of text.split(" ")) {
    if (line.length > prefix.length && line.length + 1 + word.length > HELP_WIDTH) {
      lines.push(line);
      line = " ".repeat(prefix.length);
    }
    line += line.length > prefix.length ? ` ${word}` : word;
  }
  return [...lines, line].join("\n");
}

/** Each command: its synopsis and its lines of the help text. */
const COMMAND_HELP: Record<CommandName, { synopsis: string; text: string }> = {
  ls: {
    synopsis: "ls [--all | --cwd DIR] [--with-text]",
    text: `  ls [--all] [--cwd DIR]         sessions of a project dir (the current one by default), or of all
      --with-text                also read each file in full for pi's allMessagesText (and the
                                 whole first message; without it, its first 4,096 characters)`,
  },
  show: {
    synopsis: "show <session>",
    text: `  show <session>                 a session: header, name, leaf and its context as readable text`,
  },
  context: {
    synopsis: "context <session> [--leaf ID]",
    text: `  context <session> [--leaf ID]  the context the model would get (at the leaf, or at entry ID)`,
  },
  tree: {
    synopsis: "tree <session>",
    text: `  tree <session>                 the entry tree, with labels and the leaf marked`,
  },
  verify: {
    synopsis: "verify <session | archive.zip>",
    text: `  verify <session|archive.zip>   a session file: bad lines, invalid entries, dangling parents,
                                 duplicate ids, missing blobs, torn tail; exit 3 when there are
                                 problems. An archive: every check an import makes (names, sizes,
                                 ratios, crc, hashes, manifest, sessions); exit 3 when invalid`,
  },
  migrate: {
    synopsis: "migrate <session>",
    text: `  migrate <session>              rewrites an old-format (v1, v2) file as v3 (the only write)`,
  },
  export: {
    synopsis: "export <session>... -o FILE [--leaf ID] [--no-blobs] [--force] [--html | --jsonl] [--redact | --no-redact]",
    text: `  export <session>... -o FILE    a zip archive of sessions and the blobs they reference; FILE
                                 appears only when complete
      --leaf ID                  only the branch root → entry ID (one session argument)
      --no-blobs                 leave the blobs out (the sessions keep their blob refs)
      --force                    replace FILE when it exists (without it, export refuses)
      --html                     one HTML file instead: the viewer and the session (its images
                                 inline), readable offline from file:// (one session argument)
      --jsonl                    one session file instead (its images inline; one session argument)
      --redact, --no-redact      replace each secret found (as scan finds them) by
                                 [REDACTED:<kind>] in what is written, never in the store; prints
                                 the counts per kind. Default: on for --html, off for zip, --jsonl`,
  },
  import: {
    synopsis: "import <archive.zip | file.jsonl | dir> [--on-conflict POLICY] [--dry-run]",
    text: `  import <archive.zip|file.jsonl|dir>
                                 into the root: an archive, a pi session file (any version), or
                                 every .jsonl below a dir as one batch. All or nothing: anything
                                 invalid writes nothing and exits 3, naming the file or member
      --on-conflict POLICY       a session id already stored: auto (default: skip identical,
                                 extend a prefix, fork a diverged one), skip, replace or fork
      --dry-run                  check and plan everything, write nothing; the summary is the same`,
  },
  serve: {
    synopsis: "serve [--root DIR]... [--agent-stores] [--write] [--port N] [--host ADDR] [--allow-origin URL]...",
    text: `  serve                          the session viewer and the storage over HTTP on 127.0.0.1, until
                                 Ctrl+C; prints the URL to open (it holds a random access token).
                                 Serves sessions/ and blobs/ of each --root (repeatable), read-only;
                                 without --root, every agent's store found (or --agent's), or --store
      --agent-stores             with --root: also every agent's store found (or --agent's)
      --write                    allow changes (appends, writes, writer locks)
      --port N                   default 4174 (0: any free port)
      --host ADDR                listen on another interface (warns unless it is a loopback one)
      --allow-origin URL         also accept requests from pages of URL's origin (a dev server)`,
  },
  search: {
    synopsis: "search <query> [--cwd DIR | --all] [--source LIST] [--limit N]",
    text: `  search <query> [--cwd DIR | --all]
                                 messages holding every word of the query, best first: session,
                                 entry, role and the text around the match. "a phrase" matches
                                 words in a row, word* a prefix. The index lives in the root's
                                 .sessionkit/search and reads only what changed since last time
      --source LIST              texts to search, comma-separated: user,assistant (default),
                                 thinking, tool, or all
      --limit N                  hits to print (default 50)`,
  },
  scan: {
    synopsis: "scan [<session>...] [--cwd DIR | --all]",
    text: `  scan [<session>...] [--all]    secrets in sessions (API keys and tokens of 200+ services, private
                                 keys, KEY=value assignments, Authorization headers, passwords in
                                 URLs), in every text of every entry: session, entry, field, kind
                                 and a masked preview. The sessions given, else those of a project
                                 dir (the current one, --cwd DIR) or of all (--all). Findings are
                                 kept in the root's .sessionkit/secrets: a second scan reads only
                                 what changed. Exit 1 when something was found, 0 when clean`,
  },
  history: {
    synopsis: "history [QUERY] [--limit N]",
    text: `  history [QUERY]                prompts typed before, newest first (prompt-history.jsonl and
                                 oh-my-pi's history.db in the root, which is only read); with
                                 QUERY those holding every word as a prefix
      --limit N                  prompts to print (default 50; at most 1000)`,
  },
  sync: {
    synopsis: "sync --to URL|DIR [--as NAME] [--watch]",
    text: `  sync --to URL|DIR              copies this machine's agent stores (every one found, or --agent's)
                                 into a shared store, a postgres:// URL or a directory (or give
                                 it as --store URL or --root DIR): each store's sessions/ and the
                                 blobs they reference, to machines/<NAME>/<store>/ there. Only
                                 what was appended since the last sync travels; a rewritten file
                                 travels whole. Only reads the agents' folders; the sync's own
                                 state lives in $XDG_CACHE_HOME/sessionkit/sync
      --as NAME                  the machine's name in the shared store (default: the host name)
      --watch                    keep syncing as the agents write, until Ctrl+C`,
  },
  stats: {
    synopsis: "stats [QUERY | <session>] [--all | --cwd DIR] [--by TABLE]",
    text: `  stats [QUERY|<session>] [--all | --cwd DIR]
                                 where tokens and money went. A session (a file, or an id or id
                                 prefix of 8 characters or more): its turns on the path to its
                                 leaf (tokens, cost, context size, compactions) and its tools
                                 (calls, errors, time, output). Otherwise the sessions of a project
                                 dir (the current one by default), or of all, holding every word of
                                 QUERY in their name, first message, dir or id: cost and tokens by
                                 day, model, project, agent and session. Each file is read once;
                                 what it used is kept in the cache and only what grew is read again
      --by TABLE                 only that table: ${STATS_TABLES.join(", ")}`,
  },
};

const SESSION_ARGUMENT = `A <session> is a session file, or a session id or id prefix of the stores' sessions (as ls
prints them).`;

const GLOBAL_OPTIONS = `Options:
  --root DIR     one storage root instead of every store (holds sessions/ and blobs/; import
                 writes into it, creating it when missing; without it import writes into pi's)
  --store URL    a PostgreSQL store instead: postgres://user[:password]@host[:port]/db, with
                 ?schema=NAME for a schema other than "sessionkit" (created on first use); a
                 <session> may also be a session's path in it
  --agent NAME   only that agent's stores: ${AGENTS.join(", ")} (with --root: the
                 root is laid out as that agent's)
  --json         print what the library's API returns, as JSON (paths are absolute)
  -h, --help     this text (after a command: that command's)
  -v, --version  the version`;

const EXIT_CODE_TABLE = `Exit codes:
${EXIT_CODES.map(({ code, meaning }) => wrap(`  ${code}  `, meaning)).join("\n")}`;

/** `sessionkit --help`. */
export const USAGE = `Usage: sessionkit [--root DIR | --agent NAME | --store URL] <command> [options]

Reads coding-agent sessions (JSONL trees) in every agent's store on this machine: pi
($PI_CODING_AGENT_DIR or ~/.pi/agent), oh-my-pi (~/.omp/agent), xcsh (~/.xcsh/agent), indusagi
(~/.indusagi/agent) and each profile of the snake_case Python agent
(~/.operator/profiles/<name>), or only the one under --root. Reading writes nothing into them:
the listing's cache lives in $XDG_CACHE_HOME/sessionkit (~/.cache/sessionkit). File arguments
are read in place and never modified, except by migrate.

Commands:
${COMMANDS.map((command) => COMMAND_HELP[command].text).join("\n")}

${SESSION_ARGUMENT}

${GLOBAL_OPTIONS}

${EXIT_CODE_TABLE}
`;

/** `sessionkit <command> --help`: its synopsis, its lines, and what every command shares. */
export function commandUsage(command: CommandName): string {
  const { synopsis, text } = COMMAND_HELP[command];
  const session = synopsis.includes("<session>") ? `\n${SESSION_ARGUMENT}\n` : "";
  return `Usage: sessionkit [--root DIR | --agent NAME | --store URL] ${synopsis}

${text}
${session}
${GLOBAL_OPTIONS}

${EXIT_CODE_TABLE}
`;
}

export interface ParsedCommand {
  command: CommandName;
  /** The first file or id argument ("" for ls). */
  target: string;
  /** Every file or id argument (export takes several). */
  targets: string[];
  root: string | undefined;
  /** --store: a postgres:// URL, in place of the agents' stores and --root. */
  store: string | undefined;
  /** --agent: only this agent's stores. */
  agent: AgentName | undefined;
  all: boolean;
  cwd: string | undefined;
  json: boolean;
  leaf: string | undefined;
  /** export -o. */
  output: string | undefined;
  /** export: false with --no-blobs. */
  blobs: boolean;
  onConflict: ConflictPolicy;
  dryRun: boolean;
  /** export --force: replace an existing output file. */
  force: boolean;
  /** serve: every --root (the others take one). */
  roots: string[];
  port: number | undefined;
  host: string | undefined;
  write: boolean;
  allowOrigins: string[];
  /** serve --agent-stores: every agent's store found besides each --root. */
  agentStores: boolean;
  /** export --html: a self-contained HTML file instead of an archive. */
  html: boolean;
  /** export --jsonl: one session file instead of an archive. */
  jsonl: boolean;
  /** export --redact (true) or --no-redact (false); undefined: the format's default. */
  redact: boolean | undefined;
  /** ls --with-text. */
  withText: boolean;
  /** search --source. */
  sources: SearchSource[] | undefined;
  /** search, history --limit. */
  limit: number | undefined;
  /** sync --to: the shared store (a postgres:// URL or a directory). */
  to: string | undefined;
  /** sync --as: the machine's name there. */
  machine: string | undefined;
  /** sync --watch. */
  watch: boolean;
  /** stats --by: one table instead of all. */
  by: StatsTable | undefined;
}

/** What to do: print the help (the whole text, or a command's), print the version, or run a command. */
export type ParsedArgs = { kind: "help"; command: CommandName | undefined } | { kind: "version" } | ({ kind: "run" } & ParsedCommand);

/** Flags each command accepts besides --root, --json and --help. */
const COMMAND_FLAGS: Record<CommandName, readonly string[]> = {
  ls: ["all", "cwd", "with-text"],
  show: [],
  context: ["leaf"],
  tree: [],
  verify: [],
  migrate: [],
  export: ["output", "leaf", "no-blobs", "force", "html", "jsonl", "redact", "no-redact"],
  import: ["on-conflict", "dry-run"],
  serve: ["port", "host", "write", "allow-origin", "agent-stores"],
  search: ["all", "cwd", "source", "limit"],
  history: ["limit"],
  scan: ["all", "cwd"],
  sync: ["to", "as", "watch"],
  stats: ["all", "cwd", "by"],
};
const GLOBAL_FLAGS = ["root", "agent", "store", "json", "help"];

/** How many arguments each command takes, and what they are (for messages). */
const ARGUMENTS: Record<CommandName, { max: number; what: string }> = {
  ls: { max: 0, what: "" },
  show: { max: 1, what: "a session file or id prefix" },
  context: { max: 1, what: "a session file or id prefix" },
  tree: { max: 1, what: "a session file or id prefix" },
  verify: { max: 1, what: "a session file, id prefix or archive" },
  migrate: { max: 1, what: "a session file or id prefix" },
  export: { max: Infinity, what: "a session file or id prefix" },
  import: { max: 1, what: "an archive, a session file or a directory" },
  serve: { max: 0, what: "" },
  // The words of a query may come as one argument or several.
  search: { max: Infinity, what: "a query" },
  history: { max: Infinity, what: "a query" },
  scan: { max: Infinity, what: "a session file or id prefix" },
  sync: { max: 0, what: "" },
  stats: { max: Infinity, what: "a query or a session" },
};

/** Commands whose arguments are the words of one query. */
const QUERY_COMMANDS: readonly CommandName[] = ["search", "history", "stats"];

function commandName(word: string): CommandName {
  if (!(COMMANDS as readonly string[]).includes(word)) throw new UsageError(`unknown command "${word}"`);
  return word as CommandName;
}

export function parseCommandLine(argv: readonly string[]): ParsedArgs {
  let parsed;
  try {
    parsed = parseArgs({
      args: [...argv],
      allowPositionals: true,
      strict: true,
      options: {
        root: { type: "string", multiple: true },
        agent: { type: "string" },
        store: { type: "string" },
        all: { type: "boolean" },
        cwd: { type: "string" },
        json: { type: "boolean" },
        leaf: { type: "string" },
        output: { type: "string", short: "o" },
        "no-blobs": { type: "boolean" },
        "on-conflict": { type: "string" },
        "dry-run": { type: "boolean" },
        force: { type: "boolean" },
        port: { type: "string" },
        host: { type: "string" },
        write: { type: "boolean" },
        "allow-origin": { type: "string", multiple: true },
        "agent-stores": { type: "boolean" },
        html: { type: "boolean" },
        jsonl: { type: "boolean" },
        redact: { type: "boolean" },
        "no-redact": { type: "boolean" },
        "with-text": { type: "boolean" },
        source: { type: "string" },
        limit: { type: "string" },
        to: { type: "string" },
        as: { type: "string" },
        watch: { type: "boolean" },
        by: { type: "string" },
        help: { type: "boolean", short: "h" },
        version: { type: "boolean", short: "v" },
      },
    });
  } catch (error) {
    // parseArgs appends advice about "--" that does not apply here: keep its first sentence, in
    // lower case as every other message.
    const sentence = (error as Error).message.split(". ")[0]!;
    throw new UsageError(sentence.charAt(0).toLowerCase() + sentence.slice(1));
  }
  const { values, positionals } = parsed;
  if (values.version) return { kind: "version" };
  // `sessionkit <command> --help`, or git's `sessionkit help <command>`.
  if (values.help || positionals[0] === "help") {
    const command = positionals[0] === "help" ? positionals[1] : positionals[0];
    return { kind: "help", command: command === undefined ? undefined : commandName(command) };
  }
  for (const [flag, value] of Object.entries(values)) {
    // An empty value would name the current directory, or no session: never what was meant.
    if ([value].flat().some((item) => typeof item === "string" && item.trim() === "")) throw new UsageError(`--${flag} needs a value, not an empty string`);
  }
  const [command, ...rest] = positionals;
  if (command === undefined) throw new UsageError("missing command");
  const name = commandName(command);
  for (const flag of Object.keys(values)) {
    if (!GLOBAL_FLAGS.includes(flag) && !COMMAND_FLAGS[name].includes(flag)) throw new UsageError(`${name} does not take --${flag}`);
  }
  const { max, what } = ARGUMENTS[name];
  if (max === 0 && rest.length > 0) throw new UsageError(`${name} takes no argument (got "${rest[0]}")`);
  if (max > 0 && rest.length === 0 && name !== "history" && name !== "scan" && name !== "stats") throw new UsageError(`${name} needs ${what}`);
  // The words of a query may be several arguments: the query is empty when all of them are.
  const empty = QUERY_COMMANDS.includes(name) ? rest.length > 0 && rest.join("").trim() === "" : rest.some((arg) => arg.trim() === "");
  if (empty) throw new UsageError(`${name} ${name === "history" ? "takes a query or none" : `needs ${what}`}, not an empty argument`);
  if (rest.length > max) throw new UsageError(`${name} takes one argument, got ${rest.length}`);
  if ((name === "search" || name === "scan" || name === "stats") && values.all && values.cwd !== undefined) throw new UsageError(`${name} takes --cwd DIR or --all, not both`);
  if (name === "scan" && rest.length > 0 && (values.all || values.cwd !== undefined)) throw new UsageError(`scan takes sessions or --${values.all ? "all" : "cwd"}, not both`);
  if (values.by !== undefined && !(STATS_TABLES as readonly string[]).includes(values.by)) throw new UsageError(`--by must be ${STATS_TABLES.slice(0, -1).join(", ")} or ${STATS_TABLES.at(-1)} (got "${values.by}")`);
  if (name === "export") {
    if (values.output === undefined) throw new UsageError("export needs -o FILE (the archive to write)");
    if (values.leaf !== undefined && rest.length > 1) throw new UsageError(`--leaf applies to a single session, got ${rest.length}`);
    if (values.html && rest.length > 1) throw new UsageError(`--html exports a single session, got ${rest.length}`);
    if (values.html && values["no-blobs"]) throw new UsageError("--html always includes the images (--no-blobs is for archives)");
    if (values.html && values.jsonl) throw new UsageError("export takes --html or --jsonl, not both");
    if (values.jsonl && rest.length > 1) throw new UsageError(`--jsonl exports a single session, got ${rest.length}`);
    if (values.jsonl && values["no-blobs"]) throw new UsageError("--jsonl always includes the images (--no-blobs is for archives)");
    if (values.redact && values["no-redact"]) throw new UsageError("export takes --redact or --no-redact, not both");
  }
  const roots = values.root ?? [];
  if (name !== "serve" && roots.length > 1) throw new UsageError(`--root given ${roots.length} times (only serve takes several)`);
  const port = values.port === undefined ? undefined : Number(values.port);
  if (port !== undefined && (!/^\d+$/.test(values.port!) || port > 65535)) throw new UsageError(`--port must be a number from 0 to 65535 (got "${values.port}")`);
  for (const origin of values["allow-origin"] ?? []) {
    if (!URL.canParse(origin)) throw new UsageError(`--allow-origin must be a URL such as http://localhost:5173 (got "${origin}")`);
    // file:, data: and the like serialize as "null", the Origin of every sandboxed frame and data: page too.
    if (new URL(origin).origin === "null") throw new UsageError(`--allow-origin must be an http: or https: URL such as http://localhost:5173: "${origin}" has no origin of its own`);
  }
  if (values.store !== undefined && (values.root !== undefined || values.agent !== undefined)) {
    throw new UsageError(`--store names a database store: it takes no --${values.root !== undefined ? "root" : "agent"}`);
  }
  if (values.store !== undefined && values["agent-stores"]) throw new UsageError("--store names a database store: it takes no --agent-stores");
  if (values.store !== undefined && !/^postgres(ql)?:\/\//.test(values.store)) throw new UsageError(`--store takes a postgres:// URL (got "${values.store}")`);
  if (values.agent !== undefined && !(AGENTS as readonly string[]).includes(values.agent)) {
    throw new UsageError(`--agent must be ${AGENTS.slice(0, -1).join(", ")} or ${AGENTS.at(-1)} (got "${values.agent}")`);
  }
  const onConflict = values["on-conflict"] ?? "auto";
  if (!(CONFLICT_POLICIES as readonly string[]).includes(onConflict)) {
    throw new UsageError(`--on-conflict must be ${CONFLICT_POLICIES.slice(0, -1).join(", ")} or ${CONFLICT_POLICIES.at(-1)} (got "${onConflict}")`);
  }
  let limit: number | undefined;
  if (values.limit !== undefined) {
    limit = Number(values.limit);
    if (!/^\d+$/.test(values.limit) || limit < 1) throw new UsageError(`--limit must be a whole number ≥ 1 (got "${values.limit}")`);
  }
  let sources: SearchSource[] | undefined;
  if (values.source !== undefined) {
    const names = values.source.split(",").map((part) => part.trim());
    sources = names.includes("all") ? [...SEARCH_SOURCES] : (names as SearchSource[]);
    const unknown = sources.find((source) => !SEARCH_SOURCES.includes(source));
    if (unknown !== undefined) throw new UsageError(`--source: unknown source "${unknown}" (known: ${SEARCH_SOURCES.join(", ")}, all)`);
  }
  if (name === "sync") {
    const targets = [values.to, values.store, values.root].filter((target) => target !== undefined);
    if (targets.length !== 1) throw new UsageError(`sync needs one shared store to copy into: --to URL|DIR (or --store URL, or --root DIR)${targets.length > 1 ? `, got ${targets.length}` : ""}`);
    if (values.to !== undefined && /^[a-z][a-z0-9+.-]*:\/\//i.test(values.to) && !/^postgres(ql)?:\/\//.test(values.to)) throw new UsageError(`--to takes a postgres:// URL or a directory (got "${values.to}")`);
    if (values.as !== undefined && !isMachineName(values.as)) throw new UsageError(`--as must be a name of 1-64 letters, digits, ".", "_" or "-", not starting with "." or "-" (got "${values.as}")`);
  }
  const joined = QUERY_COMMANDS.includes(name);
  return {
    kind: "run",
    command: name,
    target: joined ? rest.join(" ") : (rest[0] ?? ""),
    targets: rest,
    root: roots[0],
    store: values.store,
    agent: values.agent as AgentName | undefined,
    all: values.all ?? false,
    cwd: values.cwd,
    json: values.json ?? false,
    leaf: values.leaf,
    output: values.output,
    blobs: !(values["no-blobs"] ?? false),
    onConflict: onConflict as ConflictPolicy,
    dryRun: values["dry-run"] ?? false,
    force: values.force ?? false,
    roots,
    port,
    host: values.host,
    write: values.write ?? false,
    allowOrigins: values["allow-origin"] ?? [],
    agentStores: values["agent-stores"] ?? false,
    html: values.html ?? false,
    jsonl: values.jsonl ?? false,
    redact: values.redact ? true : values["no-redact"] ? false : undefined,
    withText: values["with-text"] ?? false,
    sources,
    limit,
    to: values.to,
    machine: values.as,
    watch: values.watch ?? false,
    by: values.by as StatsTable | undefined,
  };
}
