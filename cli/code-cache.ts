/**
 * A script compiled with a V8 code cache kept in a file, for the CLI's one-query processes: V8
 * otherwise parses a script and compiles each of its functions afresh in every process; with the
 * cache it deserializes the functions compiled by the last process that wrote it (written as that
 * process exits, so they include the ones its run called). Node 20 has no
 * module.enableCompileCache, and vm's code cache is for scripts, not ES modules. A cache that is
 * missing, damaged, made by another Node or for another script, or a directory not writable,
 * costs the cache, never the run.
 *
 * V8 checks a code cache against the flags it was made under: a process must set the flags it
 * changes (`--liftoff-only`) before it compiles a cached script, so that the cache it writes at
 * exit and the one it read were made under the same flags.
 */
import { createHash } from "node:crypto";
import { mkdirSync, readFileSync, renameSync, rmSync, writeFileSync } from "node:fs";
import nodePath from "node:path";
import vm from "node:vm";

/** What a cache must have been made by: `what` compiled by this Node and V8, from this source. */
function cacheKey(what: string, source: string): string {
  return `${what} ${process.version} v8 ${process.versions.v8} ${sha256(source)}`;
}

function sha256(data: string | Buffer): string {
  return createHash("sha256").update(data).digest("hex");
}

/**
 * The cached data if the file holds `key`'s, whole; undefined for anything else (absent, another
 * key, unreadable, damaged). The file's first line is the key and the data's SHA-256: V8 checks a
 * code cache's version, flags and source length but not its bytes (in a release build a damaged
 * one aborts the process, seen in sqlite-code-cache's test), so the digest is checked here.
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

export interface CodeCachedScript {
  /** The script's source. */
  source: string;
  /** Its file, for stack traces. */
  filename: string;
  /** The cache's file. */
  cacheFile: string;
  /** What the script is, the start of the cache's key line. */
  what: string;
}

/**
 * `source` compiled with the code cache in `cacheFile`. When the cache was missing or V8 rejected
 * it, the process writes a new one as it exits. Throws what compiling throws (a syntax error).
 */
export function compileWithCodeCache({ source, filename, cacheFile, what }: CodeCachedScript): vm.Script {
  const key = cacheKey(what, source);
  const cachedData = readCache(cacheFile, key);
  const script = new vm.Script(source, { filename, ...(cachedData ? { cachedData } : {}) });
  if (cachedData === undefined || script.cachedDataRejected === true) process.once("exit", () => writeCache(cacheFile, key, script.createCachedData()));
  return script;
}
