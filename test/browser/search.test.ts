/**
 * searchSessions and PromptHistory in Chromium, on IndexedDB, OPFS (through its worker) and
 * memory: the same code as in Node, SQLite's WASM build loaded by the browser; CJK text and word
 * forms as the page's own regular expressions read them.
 */
import { afterAll, describe, expect, it } from "vitest";
import { indexedDbStorage } from "../../adapters/indexeddb/index.js";
import { memoryStorage } from "../../adapters/memory/index.js";
import { opfsStorage } from "../../adapters/opfs/index.js";
import { PromptHistory, SessionManager, searchSessions, type StoragePort } from "../../src/index.js";
import { SEARCH_DIR } from "../../src/search/search-index.js";

const usage = { input: 0, output: 0, cacheRead: 0, cacheWrite: 0, totalTokens: 0, cost: { input: 0, output: 0, cacheRead: 0, cacheWrite: 0, total: 0 } };

async function writeSessions(storage: StoragePort): Promise<string[]> {
  const paths: string[] = [];
  for (let i = 0; i < 6; i++) {
    const sm = await SessionManager.create(storage, `/work/p${i % 2}`);
    sm.appendMessage({ role: "user", content: `how does the zqwidget ${i} work${i % 3 === 0 ? " with zqgears" : ""}`, timestamp: Date.now() });
    sm.appendMessage({ role: "assistant", content: [{ type: "text", text: "The zqwidget turns." }, { type: "thinking", thinking: "zqsecret" }], api: "x", provider: "x", model: "x", usage, stopReason: "stop", timestamp: Date.now() });
    await sm.flush();
    paths.push(sm.getSessionFile()!);
    await sm.close();
  }
  return paths;
}

const ports: [string, () => StoragePort][] = [
  ["indexeddb", () => indexedDbStorage({ dbName: `sk-search-${crypto.randomUUID()}` })],
  ["opfs", () => opfsStorage({ root: `sk-search-${crypto.randomUUID()}` })],
  ["memory", () => memoryStorage()],
];

const opened: StoragePort[] = [];
afterAll(async () => {
  for (const port of opened) await port.close?.();
});

for (const [name, make] of ports) {
  describe(`search and prompt history on ${name}`, () => {
    it("finds words, phrases and prefixes; the index is kept in the port and updated after an append", async () => {
      const storage = make();
      opened.push(storage);
      const paths = await writeSessions(storage);
      const hits = await searchSessions(storage, "zqgears", { limit: 100 });
      expect(new Set(hits.map((hit) => hit.path))).toEqual(new Set([paths[0], paths[3]]));
      expect(hits.every((hit) => hit.role === "user" && hit.snippet.includes("zqgears"))).toBe(true);
      expect(await searchSessions(storage, '"zqwidget 4 work"')).toHaveLength(1);
      expect(await searchSessions(storage, "zqwid*", { limit: 100 })).toHaveLength(12);
      expect(await searchSessions(storage, "zqsecret")).toEqual([]);
      expect(await searchSessions(storage, "zqsecret", { sources: ["thinking"], limit: 100 })).toHaveLength(6);
      expect(await storage.stat(`${SEARCH_DIR}/text.sqlite`)).not.toBeNull();

      const sm = await SessionManager.open(storage, paths[5]!);
      sm.appendMessage({ role: "user", content: "and zqgears too", timestamp: Date.now() });
      await sm.close();
      const bytes: number[] = [];
      const after = await searchSessions(storage, "zqgears", { limit: 100, onProgress: (p) => bytes.push(p.bytesDone) });
      expect(new Set(after.map((hit) => hit.path))).toEqual(new Set([paths[0], paths[3], paths[5]]));
      // Told once before the one changed file is read (0 bytes), then after it: its appended bytes alone.
      expect(bytes).toHaveLength(2);
      expect(bytes[0]).toBe(0);
      expect(bytes[1]).toBeGreaterThan(0);
      expect(bytes[1]).toBeLessThan(200);
    });

    it("finds words inside Japanese, Chinese and Korean text, and a word's plural finds the word", async () => {
      const storage = make();
      opened.push(storage);
      const texts = ["（ちなみに画像は認識できないので、テキストで話してもらえますか", "我无法知道你喜欢什么水果", "이미지를 인식할 수 없으므로", "the redirect loops", "two redirects", "a redirection"];
      const paths: string[] = [];
      for (const text of texts) {
        const sm = await SessionManager.create(storage, "/work/languages");
        sm.appendMessage({ role: "user", content: text, timestamp: Date.now() });
        sm.appendMessage({ role: "assistant", content: [{ type: "text", text: "ok" }], api: "x", provider: "x", model: "x", usage, stopReason: "stop", timestamp: Date.now() });
        await sm.flush();
        paths.push(sm.getSessionFile()!);
        await sm.close();
      }
      const found = async (query: string) => (await searchSessions(storage, query, { limit: 100 })).map((hit) => paths.indexOf(hit.path)).sort();
      expect(await found("画像")).toEqual([0]);
      expect(await found("認識でき")).toEqual([0]);
      expect(await found("水果")).toEqual([1]);
      expect(await found("이미지")).toEqual([2]);
      expect(await found("redirects")).toEqual([3, 4]);
      expect(await found('"redirects"')).toEqual([4]);
      expect(await found("redirect*")).toEqual([3, 4, 5]);
      const [hit] = await searchSessions(storage, "画像");
      expect(hit!.snippet).toContain("画像は認識");
    });

    it("keeps prompt history", async () => {
      const storage = make();
      opened.push(storage);
      const history = await PromptHistory.open(storage);
      history.add(" run the zq tests ");
      history.add("run the zq tests");
      history.add("deploy zq");
      await history.flush();
      const again = await PromptHistory.open(storage);
      expect(again.recent(10).map((e) => e.prompt)).toEqual(["deploy zq", "run the zq tests"]);
      expect(again.search("ru te", 10).map((e) => e.prompt)).toEqual(["run the zq tests"]);
    });
  });
}
