/**
 * SQLite's JavaScript glue (the sqlite-wasm package's sqlite3-node.mjs, 400 KB) compiled with a
 * V8 code cache kept in the user's cache directory (code-cache.ts), for the CLI's one-query
 * processes (`search`, `history`). vm's code cache is for scripts: the glue, an ES module, is run
 * as a script that does what the module does (its one import and `import.meta.url` passed in, its
 * default export returned). Whatever goes wrong here (no glue where expected, a cache that is
 * missing, damaged, from another Node, or a directory not writable) costs the cache, never the
 * search: the loader falls back to compiling without it, or to the package's own import.
 */
import { readFileSync } from "node:fs";
import { createRequire } from "node:module";
import nodePath from "node:path";
import { fileURLToPath } from "node:url";
import type vm from "node:vm";
import { setSqliteModuleLoader, type SqliteModuleLoader } from "../src/search/sqlite.js";
import { compileWithCodeCache } from "./code-cache.js";

/** The glue's one import and its export, as the package writes them (3.50.4-build1). */
const GLUE_IMPORT = "import { createRequire } from 'module';";
const GLUE_EXPORT = "export default sqlite3InitModule;";
/** The names the script's wrapper passes the module's `import.meta.url` and `createRequire` in. */
const META_URL = "__sessionkitGlueUrl";
const CREATE_REQUIRE = "__sessionkitCreateRequire";

/**
 * The glue as a script whose value is a function of (import.meta.url, createRequire) returning
 * the module's default export; strict, as a module is; on the glue's own lines, so that stack
 * traces point into the file. Null where the glue is not written as expected.
 */
function glueAsScript(moduleSource: string): string | null {
  if (moduleSource.split(GLUE_IMPORT).length !== 2 || moduleSource.split(GLUE_EXPORT).length !== 2) return null;
  if (moduleSource.includes(META_URL) || moduleSource.includes(CREATE_REQUIRE)) return null;
  const body = moduleSource
    .replace(GLUE_IMPORT, `const createRequire = ${CREATE_REQUIRE};`)
    .replace(GLUE_EXPORT, "return sqlite3InitModule;")
    .replaceAll("import.meta.url", META_URL);
  // Any other `import.meta`, or an `import`/`export` statement, would be a syntax error in a script: caught by the caller.
  if (body.includes("import.meta")) return null;
  return `(function (${META_URL}, ${CREATE_REQUIRE}) { "use strict"; ${body}\n})`;
}

/** The cache's file: one, rewritten when Node, V8 or the glue changes. */
export function sqliteCodeCachePath(cacheRoot: string): string {
  return nodePath.join(cacheRoot, "code-cache", "sqlite3-node.v8");
}

/** A loader of SQLite's module through the code cache at `cacheFile`. */
function codeCachedSqliteLoader(cacheFile: string, glueUrl?: URL): SqliteModuleLoader {
  return async () => {
    let script: vm.Script;
    let moduleUrl: URL;
    try {
      // The glue lies beside sqlite3.wasm, which the package exports.
      moduleUrl = glueUrl ?? new URL("sqlite3-node.mjs", import.meta.resolve("@sqlite.org/sqlite-wasm/sqlite3.wasm"));
      const filename = fileURLToPath(moduleUrl);
      const source = glueAsScript(readFileSync(filename, "utf8"));
      if (source === null) return import("@sqlite.org/sqlite-wasm");
      script = compileWithCodeCache({ source, filename, cacheFile, what: "sessionkit sqlite glue" });
    } catch {
      return import("@sqlite.org/sqlite-wasm");
    }
    const moduleFunction = script.runInThisContext() as (url: string, create: typeof createRequire) => typeof import("@sqlite.org/sqlite-wasm").default;
    return { default: moduleFunction(moduleUrl.href, createRequire) };
  };
}

/**
 * Makes this process load SQLite through the code cache under `cacheRoot` (the CLI's cache
 * directory); `glueUrl` is where the package's glue is (found from the package when not given).
 */
export function useSqliteCodeCache(cacheRoot: string, glueUrl?: URL): void {
  setSqliteModuleLoader(codeCachedSqliteLoader(sqliteCodeCachePath(cacheRoot), glueUrl));
}
