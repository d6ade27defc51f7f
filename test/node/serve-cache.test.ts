/**
 * A store served read-only with its `.sessionkit/` mounted from a cache dir (what `sessionkit
 * serve` does for every store): a client's listing keeps its catalog in the cache, the agent's
 * folder is never written, and session files stay read-only.
 */
import { mkdtemp, readdir, readFile, rm } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { nodeFsStorage } from "../../adapters/node-fs/index.js";
import { isStorageError, listAllSessions, SessionManager } from "../../src/index.js";
import { assistantMsg, userMsg } from "../shared/messages.js";
import { WebSocket } from "ws";
import { httpStorage, type HttpStorage } from "../../adapters/rpc/http.js";
import type { WebSocketLike } from "../../adapters/rpc/websocket.js";
import { startServe, type RunningServer } from "../../cli/serve/server.js";

let cacheDir: string;
let root: string;
let server: RunningServer;
let client: HttpStorage;

async function snapshot(dir: string): Promise<Record<string, string>> {
  const out: Record<string, string> = {};
  for (const name of (await readdir(dir, { recursive: true })).sort()) out[name] = await readFile(join(dir, name), "base64").catch(() => "dir");
  return out;
}

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

describe("serve with a cache mount", () => {
  it("a client's listing writes its catalog into the cache dir; the store is unchanged; sessions stay read-only", async () => {
    const before = await snapshot(root);
    const infos = await listAllSessions(client);
    expect(infos.map((info) => info.firstMessage)).toEqual(["a question"]);
    expect(await snapshot(root)).toEqual(before);
    expect((await readdir(cacheDir, { recursive: true })).some((name) => name.startsWith("catalog"))).toBe(true);
    const refused = await client.append(infos[0]!.path, new TextEncoder().encode("{}\n")).catch((error: unknown) => error);
    expect(isStorageError(refused, "read-only")).toBe(true);
    expect(await snapshot(root)).toEqual(before);
  });
});
