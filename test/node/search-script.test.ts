/**
 * The search and history commands run from their script through a V8 code cache
 * (cli/search-script.ts), as real CLI processes of a bundle with the script and of a copy of it
 * without the script (the commands then run from the CLI's modules): the first run writes the
 * cache and the next uses it as it is (a cache V8 rejected would be written again); a damaged or
 * truncated cache, or a script that does not compile, costs the cache, never the command; and
 * what the commands print, failures and exit codes included, is the same byte for byte either way.
 */
import { cp, mkdtemp, readFile, rm, stat, truncate, writeFile } from "node:fs/promises";
import { tmpdir } from "node:os";
import { dirname, join } from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { nodeFsStorage } from "../../adapters/node-fs/index.js";
import { EXIT } from "../../cli/errors.js";
import { SEARCH_SCRIPT_FILE, searchScriptCachePath } from "../../cli/search-script.js";
import { PromptHistory, SessionManager } from "../../src/index.js";
import { bundleCli, runCli, type CliResult } from "../shared/cli-runner.js";

const usage = { input: 0, output: 0, cacheRead: 0, cacheWrite: 0, totalTokens: 0, cost: { input: 0, output: 0, cacheRead: 0, cacheWrite: 0, total: 0 } };

let dir: string;
let root: string;
let withScript: string;
let withoutScript: string;

beforeAll(async () => {
  dir = await mkdtemp(join(tmpdir(), "sk-search-script-"));
  root = join(dir, "agent");
  withScript = await bundleCli(join(dir, "with"));
  await cp(join(dir, "with"), join(dir, "without"), { recursive: true });
  withoutScript = join(dir, "without", "sessionkit.mjs");
  await rm(join(dir, "without", SEARCH_SCRIPT_FILE));
  const storage = nodeFsStorage({ root });
  for (let i = 0; i < 6; i++) {
    const sm = await SessionManager.create(storage, i % 2 ? "/work/odd" : "/work/even");
    sm.appendMessage({ role: "user", content: `question ${i} about the zqkettle ${"é".repeat(i)}`, timestamp: 1_700_000_000_000 + i });
    // pi writes a session's file at its first assistant message.
    sm.appendMessage({ role: "assistant", content: [{ type: "text", text: `answer ${i}` }], api: "x", provider: "x", model: "x", usage, stopReason: "stop", timestamp: 1_700_000_000_000 + i });
    await sm.close();
  }
  const history = await PromptHistory.open(storage);
  history.add("fix the failing zqkettle build", "/work/odd");
  await history.flush();
  await storage.close();
}, 60_000);

afterAll(() => rm(dir, { recursive: true, force: true }));

const run = (bundle: string, args: readonly string[]): Promise<CliResult> => runCli(bundle, args, { cwd: join(root, "..") });
/** The cache directory of a bundle's runs (runCli's XDG_CACHE_HOME beside it). */
const cacheFileOf = (bundle: string) => searchScriptCachePath(join(dirname(bundle), "cache", "sessionkit"));

/** The file's identity: a rename over it gives a new inode. */
const identity = async (file: string) => {
  const { ino, mtimeMs, size } = await stat(file);
  return { ino, mtimeMs, size };
};

/** Command lines of search and history: text and --json, failures of parsing and of running, one that turns out to be `ls`, one of a database store. */
const COMMAND_LINES = (): string[][] => [
  ["--root", root, "search", "zqkettle", "--all"],
  ["--root", root, "search", "zqkettle", "--all", "--json"],
  ["--root", root, "history", "zqkettle"],
  ["--root", root, "history", "--json"],
  ["--root", root, "search", "zqkettle", "--limit", "none"],
  ["--root", join(dir, "no such store"), "search", "zqkettle", "--all"],
  // Parsed as search first, `search` is --cwd's value and the command is ls: the script hands it back.
  ["--root", root, "--cwd", "search", "ls", "--all", "--json"],
  // A database store: the script has no database client and hands it back (nothing listens on port 1).
  ["--store", "postgres://127.0.0.1:1/none", "search", "zqkettle", "--all"],
];

/** Runs `bundle` on `args`, and the bundle without the script: the same exit code, stdout and stderr. */
async function expectSameAsWithoutScript(bundle: string, args: readonly string[]): Promise<CliResult> {
  const ran = await run(bundle, args);
  expect(ran).toEqual(await run(withoutScript, args));
  return ran;
}

describe("search and history from their script", () => {
  it("writes the cache at the first run, then uses it as it is; without the script none is written", async () => {
    const cacheFile = cacheFileOf(withScript);
    const first = await run(withScript, ["--root", root, "search", "zqkettle", "--all", "--json"]);
    expect(first.code).toBe(0);
    expect(JSON.parse(first.stdout)).toHaveLength(6);
    const bytes = await readFile(cacheFile);
    const keyLine = bytes.subarray(0, bytes.indexOf(10)).toString();
    expect(keyLine).toMatch(new RegExp(`^sessionkit search script ${process.version} v8 ${process.versions.v8.replace(/\./g, "\\.")} [0-9a-f]{64} [0-9a-f]{64}$`));
    expect(bytes.length - keyLine.length).toBeGreaterThan(10_000);
    const written = await identity(cacheFile);
    expect(await run(withScript, ["--root", root, "search", "zqkettle", "--all", "--json"])).toEqual(first);
    expect(await identity(cacheFile)).toEqual(written);
    expect(await run(withScript, ["--root", root, "history", "--json"])).toMatchObject({ code: 0, stderr: "" });
    expect(await identity(cacheFile)).toEqual(written);
    await run(withoutScript, ["--root", root, "search", "zqkettle", "--all", "--json"]);
    await expect(stat(cacheFileOf(withoutScript))).rejects.toThrow();
  });

  it("prints the same, byte for byte, failures and exit codes included, as the commands run from the CLI's modules", async () => {
    const codes = [];
    for (const args of COMMAND_LINES()) codes.push((await expectSameAsWithoutScript(withScript, args)).code);
    // A failure's code comes from its error's class: the script's own classes are the ones its report.ts knows.
    expect(codes).toEqual([EXIT.ok, EXIT.ok, EXIT.ok, EXIT.ok, EXIT.usage, EXIT["not-found"], EXIT.ok, EXIT.failed]);
  });

  it("replaces a damaged cache and a truncated one, printing the same", async () => {
    const cacheFile = cacheFileOf(withScript);
    const args = ["--root", root, "search", "zqkettle", "--all"];
    await run(withScript, args);
    const bytes = await readFile(cacheFile);
    // Bytes flipped through the cached code, after the key line.
    for (let at = bytes.indexOf(10) + 1 + 64; at < bytes.length; at += 997) bytes[at] = bytes[at]! ^ 0xa5;
    for (const damage of [() => writeFile(cacheFile, bytes), async () => truncate(cacheFile, Math.floor((await stat(cacheFile)).size / 2))]) {
      await damage();
      const damaged = await identity(cacheFile);
      await expectSameAsWithoutScript(withScript, args);
      const replaced = await identity(cacheFile);
      expect(replaced.ino).not.toBe(damaged.ino);
      await expectSameAsWithoutScript(withScript, args);
      expect(await identity(cacheFile)).toEqual(replaced);
    }
  });

  it("runs the commands from the CLI's modules when the script does not compile", async () => {
    await cp(join(dir, "with"), join(dir, "broken"), { recursive: true });
    await rm(join(dir, "broken", "cache"), { recursive: true, force: true });
    const script = join(dir, "broken", SEARCH_SCRIPT_FILE);
    await writeFile(script, (await readFile(script, "utf8")).slice(0, 5000));
    const broken = join(dir, "broken", "sessionkit.mjs");
    for (const args of COMMAND_LINES().slice(0, 3)) await expectSameAsWithoutScript(broken, args);
    await expect(stat(cacheFileOf(broken))).rejects.toThrow();
  });
});
