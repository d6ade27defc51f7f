/**
 * The CLI's V8 code cache of SQLite's glue (cli/sqlite-code-cache.ts), each case a real Node
 * process loading SQLite through it and running an FTS5 query: the first writes the cache, the
 * next uses it as it is; a damaged, truncated or foreign cache is replaced; an unwritable cache
 * directory or a glue not written as expected costs the cache, never the query.
 */
import { execFile } from "node:child_process";
import { existsSync } from "node:fs";
import { mkdir, mkdtemp, readdir, readFile, rm, stat, truncate, writeFile } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { fileURLToPath, pathToFileURL } from "node:url";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { sqliteCodeCachePath } from "../../cli/sqlite-code-cache.js";
import { REPO } from "../shared/cli-runner.js";

const GLUE_URL = new URL("sqlite3-node.mjs", import.meta.resolve("@sqlite.org/sqlite-wasm/sqlite3.wasm"));

let dir: string;
beforeAll(async () => {
  dir = await mkdtemp(join(tmpdir(), "sk-sqlite-code-cache-"));
});
afterAll(() => rm(dir, { recursive: true, force: true }));

/**
 * Runs a process that loads SQLite through the code cache of the cache directory `cacheRoot`
 * (from the glue at `glueUrl`, the package's by default) and prints what an FTS5 query finds;
 * fails on a failure.
 */
function queryThroughCache(cacheRoot: string, glueUrl?: URL): Promise<{ stdout: string; stderr: string }> {
  const script = `
    import { useSqliteCodeCache } from ${JSON.stringify(pathToFileURL(join(REPO, "cli/sqlite-code-cache.ts")).href)};
    import { emptyDatabase } from ${JSON.stringify(pathToFileURL(join(REPO, "src/search/sqlite.ts")).href)};
    const [cacheRoot, glueUrl] = process.argv.slice(1);
    useSqliteCodeCache(cacheRoot, glueUrl ? new URL(glueUrl) : undefined);
    const db = await emptyDatabase();
    db.exec("CREATE VIRTUAL TABLE t USING fts5(body); INSERT INTO t VALUES ('the kettle boils'), ('a lantern'), ('kettles')");
    console.log(JSON.stringify(db.selectValues("SELECT body FROM t WHERE t MATCH 'kettle*' ORDER BY body")));
  `;
  return new Promise((resolve, reject) => {
    execFile(process.execPath, ["--import", "tsx", "--input-type=module", "-e", script, cacheRoot, ...(glueUrl ? [glueUrl.href] : [])], { cwd: REPO }, (error, stdout, stderr) => {
      if (error) reject(new Error(`${error.message}\n${stderr}`));
      else resolve({ stdout, stderr });
    });
  });
}

const FOUND = `${JSON.stringify(["kettles", "the kettle boils"])}\n`;

/** The file's identity: a rename over it gives a new inode. */
const identity = async (file: string) => {
  const { ino, mtimeMs, size } = await stat(file);
  return { ino, mtimeMs, size };
};

/** Runs twice after `damage`: the first replaces the cache with a whole one, the second uses it as it is. */
async function expectReplacedThenKept(cacheRoot: string): Promise<void> {
  const cacheFile = sqliteCodeCachePath(cacheRoot);
  const damaged = await identity(cacheFile);
  expect((await queryThroughCache(cacheRoot)).stdout).toBe(FOUND);
  const replaced = await identity(cacheFile);
  expect(replaced.ino).not.toBe(damaged.ino);
  expect((await queryThroughCache(cacheRoot)).stdout).toBe(FOUND);
  expect(await identity(cacheFile)).toEqual(replaced);
}

describe("SQLite's glue through a V8 code cache", () => {
  it("writes the cache where there is none (making its directory), then uses it as it is", async () => {
    const cacheRoot = join(dir, "fresh");
    const cacheFile = sqliteCodeCachePath(cacheRoot);
    const run = await queryThroughCache(cacheRoot);
    expect(run).toEqual({ stdout: FOUND, stderr: "" });
    const bytes = await readFile(cacheFile);
    const keyLine = bytes.subarray(0, bytes.indexOf(10)).toString();
    expect(keyLine).toMatch(new RegExp(`^sessionkit sqlite glue ${process.version} v8 ${process.versions.v8.replace(/\./g, "\\.")} [0-9a-f]{64} [0-9a-f]{64}$`));
    expect(bytes.length - keyLine.length).toBeGreaterThan(10_000);
    const written = await identity(cacheFile);
    // V8 took it (a rejected cache would be written again).
    expect((await queryThroughCache(cacheRoot)).stdout).toBe(FOUND);
    expect(await identity(cacheFile)).toEqual(written);
    // No temporary file is left beside it.
    expect(await readdir(join(cacheFile, ".."))).toEqual(["sqlite3-node.v8"]);
  });

  it("replaces a cache whose bytes are damaged", async () => {
    const cacheRoot = join(dir, "damaged");
    const cacheFile = sqliteCodeCachePath(cacheRoot);
    await queryThroughCache(cacheRoot);
    const bytes = await readFile(cacheFile);
    // Flip bytes through the cached code (after the key line; without the module's own digest, V8 aborted the process on these).
    for (let at = bytes.indexOf(10) + 1 + 64; at < bytes.length; at += 997) bytes[at] = bytes[at]! ^ 0xa5;
    await writeFile(cacheFile, bytes);
    await expectReplacedThenKept(cacheRoot);
  });

  it("replaces a truncated cache, and one cut inside its key line", async () => {
    const cacheRoot = join(dir, "truncated");
    const cacheFile = sqliteCodeCachePath(cacheRoot);
    await queryThroughCache(cacheRoot);
    await truncate(cacheFile, Math.floor((await stat(cacheFile)).size / 2));
    await expectReplacedThenKept(cacheRoot);
    await truncate(cacheFile, 30);
    await expectReplacedThenKept(cacheRoot);
  });

  it("replaces a cache made for another Node or another glue", async () => {
    const cacheRoot = join(dir, "foreign");
    const cacheFile = sqliteCodeCachePath(cacheRoot);
    await queryThroughCache(cacheRoot);
    const bytes = await readFile(cacheFile);
    await writeFile(cacheFile, Buffer.concat([Buffer.from(bytes.subarray(0, bytes.indexOf(10)).toString().replace(process.version, "v20.0.0")), bytes.subarray(bytes.indexOf(10))]));
    await expectReplacedThenKept(cacheRoot);
  });

  it("runs the query when the cache directory cannot be made or written (a file in its place, which stops root too)", async () => {
    const cacheRoot = join(dir, "unwritable");
    const cacheFile = sqliteCodeCachePath(cacheRoot);
    await mkdir(cacheRoot, { recursive: true });
    await writeFile(join(cacheFile, ".."), "not a directory");
    expect(await queryThroughCache(cacheRoot)).toEqual({ stdout: FOUND, stderr: "" });
    expect(await readFile(join(cacheFile, ".."), "utf8")).toBe("not a directory");
  });

  it("runs the query when the cache file cannot be read or replaced (a directory in its place)", async () => {
    const cacheRoot = join(dir, "directory");
    const cacheFile = sqliteCodeCachePath(cacheRoot);
    await mkdir(join(cacheFile, "inside"), { recursive: true });
    expect(await queryThroughCache(cacheRoot)).toEqual({ stdout: FOUND, stderr: "" });
  });

  it("loads the package's module as it is, and writes no cache, when the glue is not written as expected", async () => {
    const glue = join(dir, "changed-glue", "sqlite3-node.mjs");
    await mkdir(join(glue, ".."), { recursive: true });
    await writeFile(glue, `${await readFile(fileURLToPath(GLUE_URL), "utf8")}\nconsole.log(import.meta.dirname);\n`);
    const cacheRoot = join(dir, "changed");
    const cacheFile = sqliteCodeCachePath(cacheRoot);
    expect(await queryThroughCache(cacheRoot, pathToFileURL(glue))).toEqual({ stdout: FOUND, stderr: "" });
    expect(existsSync(cacheFile)).toBe(false);
  });
});
