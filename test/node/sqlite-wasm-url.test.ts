/**
 * configureSqlite({ wasmUrl }): the WebAssembly comes from the given place (a missing file fails the
 * load, a copy elsewhere serves search), and it cannot change once SQLite is loaded. In Node the
 * default is the package's own file (test/node/search.test.ts).
 */
import { copyFile, mkdtemp, rm } from "node:fs/promises";
import { createRequire } from "node:module";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { pathToFileURL } from "node:url";
import { afterAll, expect, it, vi } from "vitest";
import { memoryStorage } from "../../adapters/memory/index.js";
import { SessionManager, configureSqlite, searchSessions } from "../../src/index.js";

const dir = await mkdtemp(join(tmpdir(), "sk-sqlite-wasm-"));
afterAll(() => rm(dir, { recursive: true, force: true }));

const usage = { input: 0, output: 0, cacheRead: 0, cacheWrite: 0, totalTokens: 0, cost: { input: 0, output: 0, cacheRead: 0, cacheWrite: 0, total: 0 } };

/** A stored session (a session file is written once it has an assistant message). */
async function sessionSaying(text: string) {
  const storage = memoryStorage();
  const sm = await SessionManager.create(storage, "/work/p");
  sm.appendMessage({ role: "user", content: text, timestamp: Date.now() });
  sm.appendMessage({ role: "assistant", content: [{ type: "text", text: "ok" }], api: "x", provider: "x", model: "x", usage, stopReason: "stop", timestamp: Date.now() });
  await sm.flush();
  return { storage, path: sm.getSessionFile()! };
}

it("loads sqlite3.wasm from the configured URL, fails where there is none, and keeps the first one it loaded", async () => {
  const { storage, path } = await sessionSaying("the zqcopied wasm answers");

  configureSqlite({ wasmUrl: pathToFileURL(join(dir, "absent.wasm")) });
  const quiet = vi.spyOn(console, "error").mockImplementation(() => {}); // Emscripten reports the failed load
  await expect(searchSessions(storage, "zqcopied")).rejects.toThrow();
  quiet.mockRestore();

  const copy = join(dir, "elsewhere.wasm");
  await copyFile(createRequire(import.meta.url).resolve("@sqlite.org/sqlite-wasm/sqlite3.wasm"), copy);
  configureSqlite({ wasmUrl: pathToFileURL(copy) });
  expect((await searchSessions(storage, "zqcopied")).map((hit) => hit.path)).toEqual([path]);

  expect(() => configureSqlite({ wasmUrl: pathToFileURL(copy) })).toThrow(/already loaded/);
});
