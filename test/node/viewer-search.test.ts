/**
 * The viewer's search across stores (web-demo/src/data/index-search.ts): a store's own search when
 * it has one (a server's), else the core's index over its port; the index's progress reaches the
 * page; hits of all stores merged best first.
 */
import { describe, expect, it } from "vitest";
import { memoryStorage } from "../../adapters/memory/index.js";
import { SessionManager, type StoragePort } from "../../src/index.js";
import type { RefreshCounter as SearchIndexProgress } from "../../src/search/search-index.js";
import { searchWithIndex } from "../../web-demo/src/data/index-search.js";
import { PortStoreSource, type StoreSearchOptions } from "../../web-demo/src/data/source.js";
import { assistantMsg, userMsg } from "../shared/messages.js";

/** A port that must not be touched: its store searches elsewhere. */
const untouchable = new Proxy({} as StoragePort, {
  get: (_, name) => (name === "kind" ? "memory" : () => Promise.reject(new Error(`${String(name)} called on a store that searches on its own`))),
});

describe("searchWithIndex", () => {
  it("asks a store with its own search, builds the index over the others' ports with progress, and merges the hits best first", async () => {
    const local = memoryStorage();
    for (const question of ["zebras in the wild", "zebras at the zoo"]) {
      const session = await SessionManager.create(local, "/work/app");
      session.appendMessage(userMsg(question));
      session.appendMessage(assistantMsg("an answer"));
      await session.close();
    }
    const asked: [string, StoreSearchOptions][] = [];
    const source = new PortStoreSource(
      "serve",
      [
        { id: "local", label: "local", storage: local, writable: true },
        {
          id: "served",
          label: "served",
          storage: untouchable,
          writable: false,
          searchSessions: async (query, options) => {
            asked.push([query, options]);
            options.onProgress?.({ filesDone: 1, filesTotal: 1, bytesDone: 10, bytesTotal: 10 });
            return [{ path: "sessions/x/best.jsonl", entryId: "e1", role: "user", snippet: "zebras, best", matches: [[0, 6]], score: 1e9 }];
          },
        },
      ],
      false,
      searchWithIndex,
    );
    const progress: SearchIndexProgress[] = [];
    const hits = await source.searchSessions!("zebras", { includeToolOutput: true, limit: 10, onProgress: (p) => progress.push(p) });
    expect(asked.map(([query, { sources, limit }]) => [query, sources, limit])).toEqual([["zebras", ["user", "assistant", "tool"], 10]]);
    expect(hits[0]).toEqual({ storeId: "served", path: "sessions/x/best.jsonl", entryId: "e1", role: "user", snippet: "zebras, best", matches: [[0, 6]] });
    expect(hits.slice(1).map((hit) => [hit.storeId, hit.role])).toEqual([
      ["local", "user"],
      ["local", "user"],
    ]);
    // The local indexes were built (two files, each in both groups' indexes), and the served store reported its own.
    expect(progress.filter((p) => p.filesTotal === 4).at(-1)).toMatchObject({ filesDone: 4, filesTotal: 4 });
    expect(progress.at(-1)).toEqual({ filesDone: 1, filesTotal: 1, bytesDone: 10, bytesTotal: 10 });
  });
});
