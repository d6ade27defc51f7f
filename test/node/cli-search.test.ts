/**
 * `sessionkit search`, `history` and `ls --with-text` as a real child process: --json prints what
 * the API returns; progress for a cold index on stderr, none under --json on a pipe.
 */
import { execFileSync } from "node:child_process";
import { mkdtemp, rm, stat, writeFile } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { nodeFsStorage } from "../../adapters/node-fs/index.js";
import { PromptHistory, SessionManager, searchSessions } from "../../src/index.js";
import { SEARCH_DIR } from "../../src/search/search-index.js";
import { bundleCli, runCli, type CliResult } from "../shared/cli-runner.js";

let dir: string;
let root: string;
let cliBundle: string;
const sk = (...args: string[]): Promise<CliResult> => runCli(cliBundle, ["--root", root, ...args]);
const json = (value: unknown) => JSON.parse(JSON.stringify(value));
/** What the CLI prints for a hit, a session or a prompt of the store at `root`: an absolute path, the agent and the store. */
const inStore = <T extends object>(items: T[]) =>
  json(items.map((item) => ({ ...item, ...("path" in item ? { path: join(root, ...(item.path as string).split("/")) } : {}), agent: "pi", store: root })));
/** The CLI's cache (XDG_CACHE_HOME of the runner): where the index of the store is kept. */
const dropCache = () => rm(join(dir, "cache"), { recursive: true, force: true });

const usage = { input: 0, output: 0, cacheRead: 0, cacheWrite: 0, totalTokens: 0, cost: { input: 0, output: 0, cacheRead: 0, cacheWrite: 0, total: 0 } };

beforeAll(async () => {
  dir = await mkdtemp(join(tmpdir(), "sk-cli-search-"));
  root = join(dir, "agent");
  cliBundle = await bundleCli(dir);
  const storage = nodeFsStorage({ root });
  // 60 sessions in two projects: enough for progress lines when stderr is not a terminal.
  for (let i = 0; i < 60; i++) {
    const sm = await SessionManager.create(storage, i % 2 ? "/work/odd" : "/work/even");
    sm.appendMessage({ role: "user", content: `question ${i} about zqkettle${i % 7 === 0 ? " and the zqlantern room" : ""}`, timestamp: Date.now() });
    sm.appendMessage({ role: "assistant", content: [{ type: "thinking", thinking: "zqhidden reasoning" }, { type: "text", text: `answer ${i}: zqkettle boils` }], api: "x", provider: "x", model: "x", usage, stopReason: "stop", timestamp: Date.now() });
    sm.appendMessage({ role: "toolResult", toolCallId: "c", toolName: "bash", content: [{ type: "text", text: "zqoutput line" }], isError: false, timestamp: Date.now() });
    await sm.close();
  }
  await storage.close();
});

afterAll(async () => {
  await rm(dir, { recursive: true, force: true });
});

describe("sessionkit search", () => {
  it("--json prints the API's hits; a cold index under --json on a pipe prints no progress", async () => {
    await dropCache();
    const printed = await sk("search", "zqlantern", "--all", "--json");
    expect(printed.code).toBe(0);
    expect(printed.stderr).toBe("");
    await expect(stat(join(root, SEARCH_DIR))).rejects.toThrow(); // the agent's folder is only read
    const storage = nodeFsStorage({ root });
    expect(JSON.parse(printed.stdout)).toEqual(inStore(await searchSessions(storage, "zqlantern")));
    expect(JSON.parse(printed.stdout)).toHaveLength(9);
    await storage.close();
    // "More match" only when more do: 9 hits under --limit 9 are all of them.
    expect((await sk("search", "zqlantern", "--all", "--limit", "9")).stdout).toMatch(/9 hits in \d+ sessions?, best first\n/);
    expect((await sk("search", "zqlantern", "--all", "--limit", "8")).stdout).toMatch(/8 hits in \d+ sessions?, best first \(more match: --limit to see more\)/);
    expect(JSON.parse((await sk("search", "zqlantern", "--all", "--limit", "8", "--json")).stdout)).toHaveLength(8);
  });

  it("without --json, a cold index of many files reports files and bytes on stderr; a warm one is silent", async () => {
    await dropCache();
    const cold = await sk("search", "zqkettle", "--all", "--limit", "5");
    expect(cold.code).toBe(0);
    expect(cold.stderr).toMatch(/sessionkit: search: 60\/60 session files indexed \(\d+(\.\d)? of \d+(\.\d)? MB\)/);
    expect(cold.stdout).toMatch(/5 hits in \d+ sessions?, best first \(more match: --limit to see more\)/);
    const warm = await sk("search", "zqkettle", "--all");
    expect(warm.stderr).toBe("");
    expect(warm.stdout).toContain("zqkettle");
  });

  it("--cwd limits to one project, --source searches thinking and tool output, phrases and prefixes", async () => {
    const even = JSON.parse((await sk("search", "zqlantern", "--cwd", "/work/even", "--json")).stdout) as { path: string }[];
    expect(even.length).toBeGreaterThan(0);
    expect(even.every((hit) => hit.path.startsWith(join(root, "sessions/--work-even--/")))).toBe(true);
    expect(JSON.parse((await sk("search", "zqhidden", "--all", "--json")).stdout)).toEqual([]);
    expect(JSON.parse((await sk("search", "zqhidden", "--all", "--source", "thinking", "--limit", "100", "--json")).stdout)).toHaveLength(60);
    expect(JSON.parse((await sk("search", "zqoutput", "--all", "--source", "all", "--limit", "100", "--json")).stdout)).toHaveLength(60);
    expect(JSON.parse((await sk("search", '"zqlantern room"', "--all", "--json")).stdout)).toHaveLength(9);
    expect(JSON.parse((await sk("search", '"room zqlantern"', "--all", "--json")).stdout)).toHaveLength(0);
    expect(JSON.parse((await sk("search", "zqlan*", "--all", "--json")).stdout)).toHaveLength(9);
    expect(JSON.parse((await sk("search", "zqlantern", "room", "--all", "--json")).stdout)).toHaveLength(9);
  });

  it("usage errors are one line", async () => {
    for (const args of [["search"], ["search", "x", "--all", "--cwd", "/a"], ["search", "x", "--source", "nope"], ["search", "x", "--limit", "0"], ["history", "--source", "user"]]) {
      const result = await sk(...args);
      expect(result.code, args.join(" ")).toBe(2);
      expect(result.stderr.trim().split("\n"), args.join(" ")).toHaveLength(1);
      expect(result.stderr).toContain("(see sessionkit --help)");
    }
  });
});

describe("sessionkit ls --with-text", () => {
  it("leaves allMessagesText out unless asked", async () => {
    const plain = JSON.parse((await sk("ls", "--all", "--json")).stdout) as Record<string, unknown>[];
    expect(plain).toHaveLength(60);
    expect(plain.every((info) => !("allMessagesText" in info))).toBe(true);
    const withText = JSON.parse((await sk("ls", "--all", "--with-text", "--json")).stdout) as Record<string, unknown>[];
    expect(withText.every((info) => typeof info.allMessagesText === "string" && (info.allMessagesText as string).includes("zqkettle boils"))).toBe(true);
    const storage = nodeFsStorage({ root });
    expect(withText).toEqual(inStore(await SessionManager.listAll(storage, { withText: true })));
    await storage.close();
  });
});

describe("sessionkit history", () => {
  it("prints our prompts and an oh-my-pi history.db's, newest first; QUERY searches; --json is the API's", async () => {
    execFileSync("sqlite3", [join(root, "history.db")], {
      input: [
        "CREATE TABLE history (id INTEGER PRIMARY KEY AUTOINCREMENT, prompt TEXT NOT NULL, created_at INTEGER NOT NULL DEFAULT (CAST(strftime('%s','now') AS INTEGER)), cwd TEXT);",
        "CREATE VIRTUAL TABLE history_fts USING fts5(prompt, content='history', content_rowid='id');",
        "CREATE TRIGGER history_ai AFTER INSERT ON history BEGIN INSERT INTO history_fts(rowid, prompt) VALUES (new.id, new.prompt); END;",
        "INSERT INTO history(prompt, created_at, cwd) VALUES ('refactor the parser', 1700000000, '/work/even'), ('write the release notes', 1700000500, NULL);",
      ].join("\n"),
    });
    const storage = nodeFsStorage({ root });
    const history = await PromptHistory.open(storage);
    history.add("fix the failing release build", "/work/odd");
    await history.flush();
    const all = await sk("history", "--json");
    expect(JSON.parse(all.stdout)).toEqual(inStore((await PromptHistory.open(storage)).recent(50)));
    expect((JSON.parse(all.stdout) as { prompt: string }[]).map((e) => e.prompt)).toEqual(["fix the failing release build", "write the release notes", "refactor the parser"]);
    const found = await sk("history", "rel", "--json");
    expect((JSON.parse(found.stdout) as { prompt: string }[]).map((e) => e.prompt)).toEqual(["fix the failing release build", "write the release notes"]);
    const text = await sk("history", "the", "parser");
    expect(text.stdout).toMatch(/^2023-11-14 22:13 {2}refactor the parser {2}\(\/work\/even\)\n$/);
    await storage.close();
  });

  it("a damaged history.db: a warning naming it, and the rest of the history", async () => {
    await writeFile(join(root, "history.db"), "not a database at all".repeat(100));
    const result = await sk("history", "--json");
    expect(result.code).toBe(0);
    expect(result.stderr).toBe(`sessionkit: history: ${join(root, "history.db")}: not a SQLite database (bad header) (its prompts are left out)\n`);
    expect((JSON.parse(result.stdout) as { prompt: string }[]).map((e) => e.prompt)).toEqual(["fix the failing release build"]);
  });
});
