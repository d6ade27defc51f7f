/**
 * A store served read-only with its `.sessionkit/` mounted from a cache dir (what `sessionkit
 * serve` does for every store): clients write nothing, the cache included; the server itself
 * brings the catalog and search index there up to date after a client reads them, within the
 * cache's size cap. The agent's folder is never written.
 */
import { mkdtemp, readdir, readFile, rm, stat } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { nodeFsStorage } from "../../adapters/node-fs/index.js";
import { isStorageError, listAllSessions, SessionManager } from "../../src/index.js";
import { searchSessions } from "../../src/search/search.js";
import { readSessionUsage } from "../../src/insights/store-insights.js";
import { countingPort } from "../shared/counting-port.js";
import { assistantMsg, userMsg } from "../shared/messages.js";
import { WebSocket } from "ws";
import { httpStorage, type HttpStorage } from "../../adapters/rpc/http.js";
import type { WebSocketLike } from "../../adapters/rpc/websocket.js";
import { startServe, type RunningServer } from "../../cli/serve/server.js";
import { dirSnapshot } from "../shared/dir-snapshot.js";

let cacheDir: string;
let root: string;
let server: RunningServer;
let client: HttpStorage;

beforeAll(async () => {
  cacheDir = await mkdtemp(join(tmpdir(), "sessionkit-serve-cache-"));
  root = await mkdtemp(join(tmpdir(), "sessionkit-serve-store-"));
  const writer = nodeFsStorage({ root });
  const session = await SessionManager.create(writer, "/work/app");
  session.appendMessage(userMsg("a question"));
  session.appendMessage(assistantMsg("an answer"));
  await session.close();
  await writer.close();
  server = await startServe({ stores: [{ root, cacheDir }], port: 0, viewerDir: null });
  client = httpStorage({ url: server.origin, token: server.token, store: server.stores[0]!.id, WebSocket: WebSocket as unknown as new (url: string) => WebSocketLike });
});

afterAll(async () => {
  await client?.close();
  await server?.close();
  await rm(cacheDir, { recursive: true, force: true });
  await rm(root, { recursive: true, force: true });
});

/** Waits until `path` exists (the server writes its caches in the background). */
async function written(path: string): Promise<void> {
  const deadline = performance.now() + 20_000;
  while (!(await stat(path).catch(() => null))) {
    if (performance.now() > deadline) throw new Error(`${path} was not written within 20 s`);
    await new Promise((resolve) => setTimeout(resolve, 50));
  }
}

/** Waits until `dir` holds a file that is not a temp file (".name.hex.tmp") and returns its name. */
async function cacheFileIn(dir: string): Promise<string> {
  const deadline = performance.now() + 20_000;
  for (;;) {
    const names = await readdir(dir).catch(() => [] as string[]);
    const done = names.find((name) => !name.startsWith("."));
    if (done !== undefined) return done;
    if (performance.now() > deadline) throw new Error(`${dir} held no cache file within 20 s`);
    await new Promise((resolve) => setTimeout(resolve, 50));
  }
}

describe("serve with a cache mount", () => {
  it("a client may write nothing, not even in .sessionkit/: every change, lock and stage is 'read-only'", async () => {
    const data = new TextEncoder().encode("{}");
    const refusals = [
      client.write(".sessionkit/catalog/poisoned.json", data),
      client.append(".sessionkit/catalog/poisoned.json", data),
      client.write(".sessionkit/search/text.sqlite", new Uint8Array(5 << 20)), // staged: over one message
      client.remove(".sessionkit/catalog/x.json"),
      client.truncate(".sessionkit/catalog/x.json", 0),
      client.acquireLock(".sessionkit/catalog/x.json"),
    ];
    for (const refusal of refusals) expect(await refusal.then(() => "done", (error: unknown) => isStorageError(error, "read-only"))).toBe(true);
    expect(await readdir(cacheDir)).toEqual([]);
  });

  it("a client's listing and search make the server write the catalog and the index into the cache dir; the store is unchanged; sessions stay read-only", async () => {
    const before = await dirSnapshot(root);
    const infos = await listAllSessions(client);
    expect(infos.map((info) => info.firstMessage)).toEqual(["a question"]);
    const catalog = await cacheFileIn(join(cacheDir, "catalog"));
    expect(JSON.parse(await readFile(join(cacheDir, "catalog", catalog), "utf8"))).toMatchObject({ files: { [infos[0]!.path.split("/").pop()!]: {} } });
    expect((await searchSessions(client, "answer")).map((hit) => hit.path)).toEqual([infos[0]!.path]);
    await written(join(cacheDir, "search", "text.sqlite"));
    expect(await dirSnapshot(root)).toEqual(before);
    const refused = await client.append(infos[0]!.path, new TextEncoder().encode("{}\n")).catch((error: unknown) => error);
    expect(isStorageError(refused, "read-only")).toBe(true);
    expect(await dirSnapshot(root)).toEqual(before);
  });

  it("a client's insights make the server write each session's usage into the cache dir; the client's next read reads no session file", async () => {
    const infos = await listAllSessions(client);
    const first = await readSessionUsage(client, infos);
    expect(first.map((session) => session.assistantMessages)).toEqual([1]);
    // The directory appears with the temp file in it; the cache is there once it is renamed.
    const cacheFile = await cacheFileIn(join(cacheDir, "insights"));
    const { port, counter } = countingPort(client);
    expect(await readSessionUsage(port, infos)).toEqual(first);
    expect(counter.bytesRead).toBe((await stat(join(cacheDir, "insights", cacheFile))).size);
  });

  it("the server keeps the cache within its size cap: an index over it is not written, a catalog under it is", async () => {
    const smallCache = await mkdtemp(join(tmpdir(), "sessionkit-serve-cache-small-"));
    const capped = await startServe({ stores: [{ root, cacheDir: smallCache }], port: 0, viewerDir: null, maxCacheBytes: 8 << 10 });
    const cappedClient = httpStorage({ url: capped.origin, token: capped.token, store: capped.stores[0]!.id, WebSocket: WebSocket as unknown as new (url: string) => WebSocketLike });
    try {
      // The index is asked for first: once the catalog is there, the index's refresh is over.
      expect(await searchSessions(cappedClient, "answer")).toHaveLength(1);
      await listAllSessions(cappedClient);
      await written(join(smallCache, "catalog"));
      expect(await readdir(smallCache)).toEqual(["catalog"]);
    } finally {
      await cappedClient.close();
      await capped.close();
      await rm(smallCache, { recursive: true, force: true });
    }
  });
});
