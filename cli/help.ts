/**
 * The help texts: `sessionkit --help` and each command's (`sessionkit <command> --help`). Loaded
 * for them alone: it needs none of the commands' modules.
 */
import { AGENTS, COMMAND_NAMES, STATS_TABLES, type CommandName } from "./command.js";
import { EXIT_CODES } from "./exit-codes.js";

const HELP_WIDTH = 100;

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
${COMMAND_NAMES.map((command) => COMMAND_HELP[command].text).join("\n")}

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
