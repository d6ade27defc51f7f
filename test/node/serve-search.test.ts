/**
 * `GET /api/stores/<id>/search`: the server searches a store's sessions where its files are (the
 * viewer of `sessionkit serve` asks it instead of reading every changed file over HTTP into an
 * index of its own). The search is the core's, its index kept where the server keeps caches,
 * never in the agent's folder; the answer streams the index's progress, then the hits.
 */
import { cp, mkdtemp, readdir, readFile, rm } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { nodeFsStorage } from "../../adapters/node-fs/index.js";
import { startServer } from "../../adapters/server/server.js";
import { startServe } from "../../cli/serve/server.js";
import { SessionManager } from "../../src/index.js";
import { searchSessions } from "../../src/search/search.js";
import type { StoreSearchOptions } from "../../web-demo/src/data/source.js";
import { searchServedSessions } from "../../web-demo/src/data/serve-source.js";
import { assistantMsg, userMsg } from "../shared/messages.js";
import { dirSnapshot } from "../shared/dir-snapshot.js";

const SESSIONS = 6;
let root: string;
let work: string;

/** The core's search over a copy of the store (so that its index lands in neither the store nor a cache of the server's). */
async function expectedHits(query: string, options: StoreSearchOptions) {
  const copy = await mkdtemp(join(work, "copy-"));
  await cp(root, copy, { recursive: true });
  return searchSessions(nodeFsStorage({ root: copy }), query, options);
}

beforeAll(async () => {
  work = await mkdtemp(join(tmpdir(), "sessionkit-serve-search-"));
  root = join(work, "store");
  const writer = nodeFsStorage({ root });
  for (let i = 0; i < SESSIONS; i++) {
    const session = await SessionManager.create(writer, `/work/project-${i % 2}`);
    session.appendMessage(userMsg(`question ${i}: why do zebras have stripes?`));
    session.appendMessage({ role: "toolResult", toolCallId: `call-${i}`, toolName: "bash", content: [{ type: "text", text: `grep found zebras in ${i} files` }], isError: false, timestamp: Date.now() });
    session.appendMessage(assistantMsg(i % 2 === 0 ? "Zebras' stripes may keep flies away." : "Nobody knows for sure."));
    await session.close();
  }
  await writer.close();
});

afterAll(async () => {
  await rm(work, { recursive: true, force: true });
});

const textOnly: StoreSearchOptions = { sources: ["user", "assistant"], limit: 200 };
const withTools: StoreSearchOptions = { sources: ["user", "assistant", "tool"], limit: 200 };

describe("GET /api/stores/<id>/search", () => {
  it("answers the core's hits over the store, with the index's progress first; the index goes to the cache dir, the store is unchanged", async () => {
    const cacheDir = await mkdtemp(join(work, "cache-"));
    const before = await dirSnapshot(root);
    const server = await startServe({ stores: [{ root, cacheDir }], port: 0, viewerDir: null });
    try {
      const store = server.stores[0]!.id;
      const progress: number[] = [];
      const hits = await searchServedSessions(server.origin, store, server.token, "zebras", { ...textOnly, onProgress: (p) => progress.push(p.filesTotal) });
      expect(hits).toEqual(await expectedHits("zebras", textOnly));
      expect(hits.filter((hit) => hit.role === "user")).toHaveLength(SESSIONS);
      expect(hits.filter((hit) => hit.role === "assistant")).toHaveLength(SESSIONS / 2);
      // Building the index reported its files (a line at most every 100 ms).
      expect(progress.length).toBeGreaterThan(0);
      expect(new Set(progress)).toEqual(new Set([SESSIONS]));
      expect(await readdir(join(cacheDir, "search"))).toEqual(["text.sqlite"]);

      const tools = await searchServedSessions(server.origin, store, server.token, '"grep found"', withTools);
      expect(tools).toEqual(await expectedHits('"grep found"', withTools));
      expect(tools.map((hit) => hit.role)).toEqual(Array(SESSIONS).fill("toolResult"));
      expect((await readdir(join(cacheDir, "search"))).sort()).toEqual(["more.sqlite", "text.sqlite"]);

      // The index is up to date now: no progress, the same hits.
      const again: number[] = [];
      expect(await searchServedSessions(server.origin, store, server.token, "zebras", { ...textOnly, onProgress: (p) => again.push(p.filesTotal) })).toEqual(hits);
      expect(again).toEqual([]);
      expect(await dirSnapshot(root)).toEqual(before);
    } finally {
      await server.close();
    }
  });

  it("on a read-only server with no cache dir it searches all the same and writes nothing", async () => {
    const before = await dirSnapshot(root);
    const server = await startServe({ stores: [{ root }], port: 0, viewerDir: null });
    try {
      const hits = await searchServedSessions(server.origin, server.stores[0]!.id, server.token, "stripes", textOnly);
      expect(hits).toEqual(await expectedHits("stripes", textOnly));
      expect(hits).toHaveLength(SESSIONS + SESSIONS / 2);
      expect(await dirSnapshot(root)).toEqual(before);
    } finally {
      await server.close();
    }
  });

  it("refuses what it cannot search with a 4xx that names the parameter, and query syntax is never a server fault", async () => {
    const server = await startServe({ stores: [{ root }], port: 0, viewerDir: null });
    try {
      const at = `${server.origin}/api/stores/${server.stores[0]!.id}/search`;
      const auth = { headers: { Authorization: `Bearer ${server.token}` } };
      expect((await fetch(`${at}?q=zebras`)).status).toBe(401);
      expect((await fetch(`${at}?q=zebras`, { ...auth, method: "POST" })).status).toBe(405);
      expect((await fetch(`${server.origin}/api/stores/nope/search?q=zebras`, auth)).status).toBe(404);
      for (const [query, named] of [
        ["", /q: a query is needed/],
        ["q=%20", /q: a query is needed/],
        [`q=${"z".repeat(1001)}`, /q: 1001 characters/],
        ["q=zebras&limit=0", /limit: "0"/],
        ["q=zebras&limit=1001", /limit: "1001"/],
        ["q=zebras&limit=2.5", /limit: "2.5"/],
        ["q=zebras&limit=", /limit: ""/],
        ["q=zebras&sources=user,secrets", /sources: unknown source "secrets"/],
      ] as const) {
        const answer = await fetch(`${at}?${query}`, auth);
        expect(answer.status, query).toBe(400);
        expect(((await answer.json()) as { error: string }).error).toMatch(named);
      }
      for (const query of ['"', "zebras*", "NEAR(zebras stripes)", "-zebras", "zebras OR", "^*:()", "\u0000", "\ud800"]) {
        const answer = await fetch(`${at}?${new URLSearchParams({ q: query }).toString()}`, auth);
        expect(answer.status, query).toBe(200);
        expect((await answer.text()).trimEnd().split("\n").at(-1)).toMatch(/^\{"hits":\[/);
      }
    } finally {
      await server.close();
    }
  });

  it("a server given no search answers 404; one that fails after its progress ends the answer with the error, which the page's client throws", async () => {
    const bare = await startServer({ stores: [{ root, storage: nodeFsStorage({ root }) }], port: 0 });
    try {
      expect((await fetch(`${bare.origin}/api/stores/${bare.stores[0]!.id}/search?q=zebras`, { headers: { Authorization: `Bearer ${bare.token}` } })).status).toBe(404);
    } finally {
      await bare.close();
    }
    const failing = await startServer({
      stores: [
        {
          root,
          storage: nodeFsStorage({ root }),
          searchSessions: async (_request, onProgress) => {
            // Ten thousand reports within one turn: one progress line goes out.
            for (let n = 1; n <= 10_000; n++) onProgress({ filesDone: n, filesTotal: 10_000, bytesDone: 0, bytesTotal: 0 });
            await new Promise((resolve) => setTimeout(resolve, 10));
            throw new Error("the index could not be read");
          },
        },
      ],
      port: 0,
    });
    try {
      const at = `${failing.origin}/api/stores/${failing.stores[0]!.id}/search?q=zebras`;
      const lines = (await (await fetch(at, { headers: { Authorization: `Bearer ${failing.token}` } })).text()).trimEnd().split("\n");
      expect(lines).toEqual([JSON.stringify({ progress: { filesDone: 1, filesTotal: 10_000, bytesDone: 0, bytesTotal: 0 } }), JSON.stringify({ error: "the index could not be read" })]);
      const seen: number[] = [];
      await expect(searchServedSessions(failing.origin, failing.stores[0]!.id, failing.token, "zebras", { ...textOnly, onProgress: (p) => seen.push(p.filesDone) })).rejects.toThrow(/the index could not be read/);
      expect(seen).toEqual([1]);
    } finally {
      await failing.close();
    }
  });

  it("the page's client reads hits split across many chunks", async () => {
    const many = Array.from({ length: 1000 }, (_, i) => ({ path: `sessions/p/${i}.jsonl`, sessionId: `s${i}`, entryId: `e${i}`, role: "user", source: "user", snippet: `${"ü".repeat(200)} ${i}`, matches: [[0, 3]], score: 1000 - i }));
    const server = await startServer({ stores: [{ root, storage: nodeFsStorage({ root }), searchSessions: async () => many }], port: 0 });
    try {
      expect(await searchServedSessions(server.origin, server.stores[0]!.id, server.token, "zebras", { sources: ["user"], limit: 1000 })).toEqual(many);
    } finally {
      await server.close();
    }
  });
});
