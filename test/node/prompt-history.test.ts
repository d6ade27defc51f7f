/**
 * PromptHistory: the seed's HistoryStorage rules, one test each; search matched against SQLite's
 * own FTS5 on the same prompts; an oh-my-pi history.db built by the sqlite3 command-line tool with
 * the seed's table and trigger read back in order (also with rows still in its WAL); a damaged
 * history.db is a typed error and nothing else breaks.
 */
import { execFileSync } from "node:child_process";
import { mkdir, mkdtemp, readFile, rm, writeFile } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { memoryStorage } from "../../adapters/memory/index.js";
import { nodeFsStorage } from "../../adapters/node-fs/index.js";
import { HistoryError, PromptHistory, readHistoryDb, SessionManager, StorageError, type StoragePort } from "../../src/index.js";
import { PROMPT_HISTORY_FILE } from "../../src/history/prompt-history.js";
import { loadSqlite } from "../../src/search/sqlite.js";
import { mulberry32 } from "../shared/prng.js";

/** The seed's schema: table, index, external-content FTS5 table and its insert trigger. */
const SEED_SCHEMA = `
CREATE TABLE IF NOT EXISTS history (
	id INTEGER PRIMARY KEY AUTOINCREMENT,
	prompt TEXT NOT NULL,
	created_at INTEGER NOT NULL DEFAULT (CAST(strftime('%s','now') AS INTEGER)),
	cwd TEXT
);
CREATE INDEX IF NOT EXISTS idx_history_created_at ON history(created_at DESC);
CREATE VIRTUAL TABLE IF NOT EXISTS history_fts USING fts5(prompt, content='history', content_rowid='id');
CREATE TRIGGER IF NOT EXISTS history_ai AFTER INSERT ON history BEGIN
	INSERT INTO history_fts(rowid, prompt) VALUES (new.id, new.prompt);
END;
`;

const sql = (text: string) => `'${text.replace(/'/g, "''")}'`;

/** Runs the sqlite3 command-line tool (SQLite's own build) on `db` with `script` on stdin. */
function sqlite3Cli(db: string, script: string): string {
  try {
    return execFileSync("sqlite3", [db], { input: script, encoding: "utf8" });
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code === "ENOENT") throw new Error("these tests need the sqlite3 command-line tool (Debian: apt-get install sqlite3)");
    throw error;
  }
}

async function history(storage: StoragePort = memoryStorage()): Promise<PromptHistory> {
  return PromptHistory.open(storage);
}

describe("PromptHistory: the seed's rules", () => {
  it("add trims the prompt", async () => {
    const h = await history();
    h.add("  fix the tests \n");
    expect(h.recent(10).map((e) => e.prompt)).toEqual(["fix the tests"]);
  });

  it("add skips an empty or blank prompt", async () => {
    const h = await history();
    h.add("");
    h.add("   \n\t ");
    expect(h.recent(10)).toEqual([]);
  });

  it("add skips a prompt equal to the last one added, and only the last", async () => {
    const h = await history();
    for (const prompt of ["a", "a", " a ", "b", "a"]) h.add(prompt);
    expect(h.recent(10).map((e) => e.prompt)).toEqual(["a", "b", "a"]);
  });

  it("the last prompt survives a reopen: the same prompt again is skipped", async () => {
    const storage = memoryStorage();
    const h = await history(storage);
    h.add("deploy");
    await h.flush();
    const again = await history(storage);
    again.add("deploy");
    again.add("deploy now");
    await again.flush();
    expect((await history(storage)).recent(10).map((e) => e.prompt)).toEqual(["deploy now", "deploy"]);
  });

  it("add never blocks: it returns before the write, which may never finish or may fail", async () => {
    const base = memoryStorage();
    const stuck = Object.create(base) as StoragePort;
    stuck.append = () => new Promise<void>(() => {});
    const h = await history(stuck);
    expect(h.add("first")).toBeUndefined();
    expect(h.recent(1).map((e) => e.prompt)).toEqual(["first"]);

    const errors: unknown[] = [];
    const failing = Object.create(base) as StoragePort;
    failing.append = async () => {
      throw new StorageError("quota", "full");
    };
    const f = await PromptHistory.open(failing, { onError: (error) => errors.push(error) });
    f.add("second");
    expect(f.recent(1).map((e) => e.prompt)).toEqual(["second"]);
    await f.flush();
    expect(errors).toHaveLength(1);
    expect((errors[0] as StorageError).code).toBe("quota");
  });

  it("recent: newest first, limits floored and clamped to 0–1000, not finite: none", async () => {
    const h = await history();
    for (let i = 0; i < 1005; i++) h.add(`prompt ${i}`);
    expect(h.recent(3).map((e) => e.prompt)).toEqual(["prompt 1004", "prompt 1003", "prompt 1002"]);
    expect(h.recent(2.9)).toHaveLength(2);
    expect(h.recent(5000)).toHaveLength(1000);
    for (const limit of [0, -4, 0.5, Number.NaN, Number.POSITIVE_INFINITY, Number.NEGATIVE_INFINITY]) expect(h.recent(limit), String(limit)).toEqual([]);
    expect(h.search("prompt", 5000)).toHaveLength(1000);
    expect(h.search("prompt", Number.NaN)).toEqual([]);
  });

  it("search: every word must match as a prefix; newest first; a query without words finds nothing", async () => {
    const h = await history();
    for (const prompt of ["fix the git-commit hook", "commit everything", "run the tests", "Café au lait", "git status"]) h.add(prompt);
    expect(h.search("com", 10).map((e) => e.prompt)).toEqual(["commit everything", "fix the git-commit hook"]);
    expect(h.search("git com", 10).map((e) => e.prompt)).toEqual(["fix the git-commit hook"]);
    expect(h.search("git-com", 10).map((e) => e.prompt)).toEqual(["fix the git-commit hook"]);
    expect(h.search("cafe", 10).map((e) => e.prompt)).toEqual(["Café au lait"]);
    expect(h.search("mit", 10)).toEqual([]);
    expect(h.search("  ", 10)).toEqual([]);
    expect(h.search("--", 10)).toEqual([]);
  });

  it("search finds what SQLite's FTS5 finds for the seed's query on the same prompts", async () => {
    const rng = mulberry32(99);
    const words = ["git", "commit", "commits", "test", "tests", "run", "Run", "café", "cafe", "naïve", "snake_case", "x-ray", "42", "v2.1", "deploy", "déployer", "src/app.ts"];
    const prompts = Array.from({ length: 300 }, () => Array.from({ length: 1 + rng.int(6) }, () => rng.pick(words)).join(rng.pick([" ", " ", "-", ", ", "/"])));
    const sqlite3 = await loadSqlite();
    const db = new sqlite3.oo1.DB(":memory:");
    db.exec(SEED_SCHEMA);
    const h = await history();
    for (const prompt of prompts) {
      const before = h.recent(1)[0]?.prompt;
      h.add(prompt);
      if (h.recent(1)[0]?.prompt !== before || before === undefined) db.exec({ sql: "INSERT INTO history(prompt, created_at) VALUES (?, 0)", bind: [prompt.trim()] });
    }
    const queries = [...words, "com", "te", "caf", "na", "snake", "case", "x", "ray", "v2", "1", "src app", "git com", "run te", "dep", "dé", "DEPLOY", "commit-t"];
    for (const query of queries) {
      // The seed: each whitespace-separated word becomes "word"* (quotes doubled), all must match.
      const fts = query.trim().split(/\s+/).map((token) => `"${token.replace(/"/g, '""')}"*`).join(" ");
      const expected = db.selectValues("SELECT h.id FROM history_fts f JOIN history h ON h.id = f.rowid WHERE history_fts MATCH ? ORDER BY h.id DESC", [fts]);
      expect(h.search(query, 1000).map((e) => e.id), query).toEqual(expected);
    }
    db.close();
  });
});

describe("PromptHistory: an oh-my-pi history.db", () => {
  let dir: string;
  beforeAll(async () => {
    dir = await mkdtemp(join(tmpdir(), "sk-history-"));
  });
  afterAll(async () => {
    await rm(dir, { recursive: true, force: true });
  });

  const rows = [
    { prompt: "first prompt", created_at: 1_700_000_000, cwd: "/work/a" },
    { prompt: "second prompt", created_at: 1_700_000_100, cwd: "/work/b" },
    { prompt: "same second", created_at: 1_700_000_100, cwd: null },
    { prompt: "third, with 'quotes' and ünïcode", created_at: 1_700_000_200, cwd: "/work/a" },
  ];
  const inserts = (list: typeof rows) =>
    list.map((row) => `INSERT INTO history(prompt, created_at, cwd) VALUES (${sql(row.prompt)}, ${row.created_at}, ${row.cwd === null ? "NULL" : sql(row.cwd)});`).join("\n");

  it("reads back in order, newest first, and our prompts join them; the file is never written", async () => {
    const root = join(dir, "plain");
    await mkdir(root, { recursive: true });
    sqlite3Cli(join(root, "history.db"), `PRAGMA journal_mode=WAL;\n${SEED_SCHEMA}\n${inserts(rows)}\nINSERT INTO history_fts(history_fts) VALUES('rebuild');`);
    const before = await readFile(join(root, "history.db"));
    const storage = nodeFsStorage({ root });
    expect(await readHistoryDb(storage)).toEqual(rows.map((row, i) => ({ id: i + 1, prompt: row.prompt, created_at: row.created_at, ...(row.cwd ? { cwd: row.cwd } : {}) })));
    const h = await PromptHistory.open(storage);
    expect(h.importError).toBeUndefined();
    expect(h.recent(10).map((e) => e.prompt)).toEqual(["third, with 'quotes' and ünïcode", "same second", "second prompt", "first prompt"]);
    expect(h.search("sec", 10).map((e) => e.prompt)).toEqual(["same second", "second prompt"]);
    h.add("third, with 'quotes' and ünïcode"); // the newest stored prompt: skipped
    h.add("a new one", "/work/c");
    await h.flush();
    const reopened = await PromptHistory.open(storage);
    expect(reopened.recent(2).map((e) => [e.id, e.prompt, e.cwd])).toEqual([[5, "a new one", "/work/c"], [4, "third, with 'quotes' and ünïcode", "/work/a"]]);
    expect(await readFile(join(root, "history.db"))).toEqual(before);
    expect(await readFile(join(root, PROMPT_HISTORY_FILE), "utf8")).toContain('"prompt":"a new one"');
    await storage.close?.();
  });

  it("rows still in the write-ahead log (oh-my-pi running) are read; a torn log frame is not", async () => {
    const live = join(dir, "live");
    const snapshot = join(dir, "snapshot");
    await mkdir(live, { recursive: true });
    await mkdir(snapshot, { recursive: true });
    const db = join(live, "history.db");
    // While the tool still has the database open, its last rows are only in history.db-wal.
    sqlite3Cli(
      db,
      [
        "PRAGMA journal_mode=WAL;",
        SEED_SCHEMA,
        inserts(rows.slice(0, 2)),
        "PRAGMA wal_checkpoint(TRUNCATE);",
        inserts(rows.slice(2)),
        `.shell cp ${db} ${db}-wal ${snapshot}/`,
      ].join("\n"),
    );
    const wal = await readFile(join(snapshot, "history.db-wal"));
    expect(wal.length).toBeGreaterThan(32);
    const storage = nodeFsStorage({ root: snapshot });
    expect((await readHistoryDb(storage)).map((e) => e.prompt)).toEqual(rows.map((row) => row.prompt));
    // The last frame cut short (a crash mid-write): only what was committed before it counts.
    await writeFile(join(snapshot, "history.db-wal"), wal.subarray(0, wal.length - 100));
    const read = (await readHistoryDb(storage)).map((e) => e.prompt);
    expect(read.length).toBeLessThan(rows.length);
    expect(read).toEqual(rows.slice(0, read.length).map((row) => row.prompt));
    await storage.close?.();
  });

  it("a damaged history.db is a HistoryError; the history and the sessions still work", async () => {
    const root = join(dir, "damaged");
    await mkdir(root, { recursive: true });
    const good = join(dir, "good.db");
    sqlite3Cli(good, `${SEED_SCHEMA}\n${inserts(rows)}`);
    const bytes = await readFile(good);
    const storage = nodeFsStorage({ root });
    const sm = await SessionManager.create(storage, "/work/a");
    sm.appendMessage({ role: "user", content: "hello", timestamp: Date.now() });
    sm.appendMessage({ role: "assistant", content: [{ type: "text", text: "hi" }], api: "x", provider: "x", model: "x", usage: { input: 0, output: 0, cacheRead: 0, cacheWrite: 0, totalTokens: 0, cost: { input: 0, output: 0, cacheRead: 0, cacheWrite: 0, total: 0 } }, stopReason: "stop", timestamp: Date.now() });
    await sm.close();
    const damaged: [string, Uint8Array, string][] = [
      ["random bytes", new Uint8Array(4096).map((_, i) => (i * 7919) % 251), "damaged"],
      ["cut in half", bytes.subarray(0, bytes.length >> 1), "damaged"],
      ["pages overwritten", Uint8Array.from(bytes, (b, i) => (i >= 4096 ? 0xa5 : b)), "damaged"],
      ["another SQLite database", bytes, "not-history"],
    ];
    for (const [what, content, code] of damaged) {
      let file = content;
      if (code === "not-history") {
        const other = join(dir, "other.db");
        sqlite3Cli(other, "CREATE TABLE notes(x TEXT); INSERT INTO notes VALUES ('n');");
        file = await readFile(other);
      }
      await writeFile(join(root, "history.db"), file);
      const error = await readHistoryDb(storage).catch((e: unknown) => e);
      expect(error, what).toBeInstanceOf(HistoryError);
      expect((error as HistoryError).code, what).toBe(code);
      expect((error as HistoryError).message, what).toContain("history.db");
      const h = await PromptHistory.open(storage);
      expect(h.importError?.code, what).toBe(code);
      h.add(`after ${what}`);
      await h.flush();
      expect(h.recent(1)[0]?.prompt).toBe(`after ${what}`);
      expect((await SessionManager.listAll(storage)).map((info) => info.firstMessage)).toEqual(["hello"]);
    }
    await storage.close?.();
  });
});
