/**
 * SQLite's JavaScript glue (the sqlite-wasm package's sqlite3-node.mjs, 400 KB) compiled with a
 * V8 code cache kept in the user's cache directory, for the CLI's one-query processes (`search`,
 * `history`). V8 otherwise parses the glue and compiles each of its functions afresh in every
 * process; with the cache it deserializes the functions compiled by the last process that wrote it
 * (written after its query, so they include the ones a query calls). Node 20 has no
 * module.enableCompileCache, and vm's code cache is for scripts: the glue, an ES module, is run as
 * a script that does what the module does (its one import and `import.meta.url` passed in, its
 * default export returned). Whatever goes wrong here (no glue where expected, a cache that is
 * missing, damaged, from another Node, or a directory not writable) costs the cache, never the
 * search: the loader falls back to compiling without it, or to the package's own import.
 */
import { createHash } from "node:crypto";
import { mkdirSync, readFileSync, renameSync, rmSync, writeFileSync } from "node:fs";
import { createRequire } from "node:module";
import nodePath from "node:path";
import { fileURLToPath } from "node:url";
import vm from "node:vm";
import { setSqliteModuleLoader, type SqliteModuleLoader } from "../src/search/sqlite.js";

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

/** What a cache must have been made by: this Node and V8, from this glue. */
function cacheKey(script: string): string {
  return `sessionkit sqlite glue ${process.version} v8 ${process.versions.v8} ${sha256(script)}`;
}

function sha256(data: string | Buffer): string {
  return createHash("sha256").update(data).digest("hex");
}

/**
 * The cached data if the file holds `key`'s, whole; undefined for anything else (absent, another
 * key, unreadable, damaged). The file's first line is the key and the data's SHA-256: V8 checks a
 * code cache's version, flags and source length but not its bytes (in a release build a damaged
 * one aborts the process, seen in this module's test), so the digest is checked here.
 */
function readCache(file: string, key: string): Buffer | undefined {
  try {
    const bytes = readFileSync(file);
    const lineEnd = bytes.indexOf(10);
    if (lineEnd < 0) return undefined;
    const [fileKey, digest] = splitLast(bytes.subarray(0, lineEnd).toString());
    const data = bytes.subarray(lineEnd + 1);
    return fileKey === key && digest === sha256(data) ? data : undefined;
  } catch {
    return undefined;
  }
}

/** `line` split at its last space. */
function splitLast(line: string): [string, string] {
  const at = line.lastIndexOf(" ");
  return [line.slice(0, at), line.slice(at + 1)];
}

/** Writes the cache through a temporary file renamed over it, so a reader sees a whole file or the old one; failures are ignored. */
function writeCache(file: string, key: string, data: Buffer): void {
  const temporary = `${file}.${process.pid}.tmp`;
  try {
    mkdirSync(nodePath.dirname(file), { recursive: true });
    writeFileSync(temporary, Buffer.concat([Buffer.from(`${key} ${sha256(data)}\n`), data]));
    renameSync(temporary, file);
  } catch {
    // Nothing to clean up where the directory could not be made (rmSync would throw ENOTDIR then).
    try {
      rmSync(temporary, { force: true });
    } catch {
      // the cache is only an optimisation
    }
  }
}

/**
 * A loader of SQLite's module through the code cache at `cacheFile`. When the cache was missing or
 * V8 rejected it, the process writes a new one as it exits (by then the query's functions are
 * compiled too).
 */
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
      const key = cacheKey(source);
      const cachedData = readCache(cacheFile, key);
      script = new vm.Script(source, { filename, ...(cachedData ? { cachedData } : {}) });
      if (cachedData === undefined || script.cachedDataRejected === true) process.once("exit", () => writeCache(cacheFile, key, script.createCachedData()));
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
