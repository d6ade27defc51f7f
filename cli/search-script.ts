/**
 * The search and history commands run from one script beside the CLI's modules
 * (search-script-entry.ts bundled by scripts/cli-bundle.ts) compiled through a V8 code cache in
 * the user's cache directory (code-cache.ts). A warm search is a short process, and compiling the
 * CLI's own code was ~24 ms of its CPU: from the cache, a warm search costs ~10 ms less (paired
 * runs, docs/benchmarks.md); without it (the run that writes it) the one script costs more than
 * the modules. Where there is no script (the CLI run from its sources) or anything else goes wrong
 * before the command runs, the caller runs the command from the CLI's modules as any other. A
 * command line the script hands back (another command after all, or a database store) keeps the
 * `--liftoff-only` set here: only WebAssembly's code is slower for it.
 */
import { readFileSync } from "node:fs";
import { createRequire } from "node:module";
import os from "node:os";
import nodePath from "node:path";
import { fileURLToPath, pathToFileURL } from "node:url";
import v8 from "node:v8";
import { cacheRoot } from "./cache-root.js";
import { compileWithCodeCache } from "./code-cache.js";
import type { CommandName } from "./command.js";
import type { Io } from "./run.js";
import type { runSearchCommandLine } from "./search-script-entry.js";

/** The script's file, beside the CLI's entry and chunks. */
export const SEARCH_SCRIPT_FILE = "sessionkit-search.script.js";

/**
 * The script is CommonJS (esbuild's) in a function of these (bundle options in
 * scripts/cli-bundle.ts): `module`, `require`, what the modules' `import.meta` became, and what
 * imports SQLite's package for it (sqlite-in-search-script.ts).
 */
export const SEARCH_SCRIPT_PARAMETERS = ["module", "require", "__sessionkitImportMeta", "__sessionkitImportSqlite"] as const;

/** The cache's file: one, rewritten when Node, V8 or the script changes. */
export function searchScriptCachePath(cacheDir: string): string {
  return nodePath.join(cacheDir, "code-cache", "search.v8");
}

type ScriptFunction = (
  module: { exports: { runSearchCommandLine?: typeof runSearchCommandLine } },
  require: NodeJS.Require,
  importMeta: { url: string; resolve(specifier: string): string },
  importSqlite: () => Promise<typeof import("@sqlite.org/sqlite-wasm")>,
) => void;

/** The script's entry, or undefined where there is none or it would not compile or run. */
function loadSearchScript(io: Io): typeof runSearchCommandLine | undefined {
  try {
    const filename = fileURLToPath(new URL(SEARCH_SCRIPT_FILE, import.meta.url));
    const source = readFileSync(filename, "utf8");
    // The flag search.ts sets for SQLite, set before compiling: V8 checks a cache against the flags it was made under, and the cache is made at exit.
    v8.setFlagsFromString("--liftoff-only");
    const script = compileWithCodeCache({ source, filename, cacheFile: searchScriptCachePath(cacheRoot(io.env, os.homedir())), what: "sessionkit search script" });
    const module: Parameters<ScriptFunction>[0] = { exports: {} };
    // `import.meta.resolve` from this module, and its import(): its chunk lies beside the script.
    const importMeta = { url: pathToFileURL(filename).href, resolve: (specifier: string) => import.meta.resolve(specifier) };
    (script.runInThisContext() as ScriptFunction)(module, createRequire(filename), importMeta, () => import("@sqlite.org/sqlite-wasm"));
    return module.exports.runSearchCommandLine;
  } catch {
    return undefined;
  }
}

/**
 * Runs a search or history command line from the script; undefined when there is no script or
 * the command line's command turned out to be another one (nothing has run then).
 */
export async function runFromSearchScript(argv: readonly string[], name: CommandName, io: Io): Promise<number | undefined> {
  return loadSearchScript(io)?.(argv, name, io);
}
