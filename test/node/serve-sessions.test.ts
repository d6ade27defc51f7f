/**
 * `GET /api/stores/<id>/sessions`: the server lists a store's sessions where its files are (the
 * viewer of `sessionkit serve` asks it instead of reading every file over HTTP). The listing is
 * the core's, its catalog kept where the server keeps caches, never in the agent's folder; pages
 * asking at once share one pass over the files.
 */
import { mkdtemp, readdir, readFile, rm } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { nodeFsStorage } from "../../adapters/node-fs/index.js";
import { listServedSessions as listServed } from "../../web-demo/src/data/serve-source.js";
import { startServer } from "../../adapters/server/server.js";
import { startServe } from "../../cli/serve/server.js";
import { listAllSessions, SessionManager } from "../../src/index.js";
import { countingPort } from "../shared/counting-port.js";
import { assistantMsg, userMsg } from "../shared/messages.js";
import { dirSnapshot } from "../shared/dir-snapshot.js";

const listServedSessions = (options: { url: string; store: string; token: string }) => listServed(options.url, options.store, options.token);

let root: string;
let cacheDir: string;

beforeAll(async () => {
  root = await mkdtemp(join(tmpdir(), "sessionkit-serve-sessions-"));
  cacheDir = await mkdtemp(join(tmpdir(), "sessionkit-serve-sessions-cache-"));
  const writer = nodeFsStorage({ root });
  for (const [cwd, question, name] of [["/work/app", "first question", "named"], ["/work/other", "another question", undefined]] as const) {
    const session = await SessionManager.create(writer, cwd);
    session.appendMessage(userMsg(question));
    session.appendMessage(assistantMsg("an answer"));
    if (name) session.appendSessionInfo(name);
    await session.close();
  }
  await writer.close();
});

afterAll(async () => {
  await rm(root, { recursive: true, force: true });
  await rm(cacheDir, { recursive: true, force: true });
});

describe("GET /api/stores/<id>/sessions", () => {
  it("answers what the core's listing gives over the store, dates included; the catalog goes to the cache dir, the store is unchanged", async () => {
    const before = await dirSnapshot(root);
    const server = await startServe({ stores: [{ root, cacheDir }], port: 0, viewerDir: null });
    try {
      const listed = await listServedSessions({ url: server.origin, store: server.stores[0]!.id, token: server.token });
      const expected = await listAllSessions(nodeFsStorage({ root }), { catalog: false });
      expect(listed).toEqual(expected);
      expect(listed.map((info) => [info.name, info.firstMessage])).toEqual(expect.arrayContaining([["named", "first question"], [undefined, "another question"]]));
      expect(listed[0]!.modified).toBeInstanceOf(Date);
      expect(await readdir(join(cacheDir, "catalog"))).toHaveLength(2);
      expect(await dirSnapshot(root)).toEqual(before);
      // Unchanged files are answered from the catalog.
      expect(await listServedSessions({ url: server.origin, store: server.stores[0]!.id, token: server.token })).toEqual(expected);
    } finally {
      await server.close();
    }
  });

  it("on a read-only server with no cache dir it lists all the same and writes nothing", async () => {
    const before = await dirSnapshot(root);
    const server = await startServe({ stores: [{ root }], port: 0, viewerDir: null });
    try {
      const listed = await listServedSessions({ url: server.origin, store: server.stores[0]!.id, token: server.token });
      expect(listed).toEqual(await listAllSessions(nodeFsStorage({ root }), { catalog: false }));
      expect(await dirSnapshot(root)).toEqual(before);
    } finally {
      await server.close();
    }
  });

  it("needs the token, takes only GET, and names a store the server has", async () => {
    const server = await startServe({ stores: [{ root }], port: 0, viewerDir: null });
    try {
      const at = `${server.origin}/api/stores/${server.stores[0]!.id}/sessions`;
      expect((await fetch(at)).status).toBe(401);
      expect((await fetch(at, { method: "POST", headers: { Authorization: `Bearer ${server.token}` } })).status).toBe(405);
      expect((await fetch(`${server.origin}/api/stores/nope/sessions`, { headers: { Authorization: `Bearer ${server.token}` } })).status).toBe(404);
      await expect(listServedSessions({ url: server.origin, store: "nope", token: server.token })).rejects.toThrow(/404/);
    } finally {
      await server.close();
    }
    // A server given no listing (adapters/server without the CLI's) says so.
    const bare = await startServer({ stores: [{ root, storage: nodeFsStorage({ root }) }], port: 0 });
    try {
      expect((await fetch(`${bare.origin}/api/stores/${bare.stores[0]!.id}/sessions`, { headers: { Authorization: `Bearer ${bare.token}` } })).status).toBe(404);
    } finally {
      await bare.close();
    }
  });

  it("pages asking at once share one pass over the files", async () => {
    const bytesReadBy = async (requests: number) => {
      await rm(join(root, ".sessionkit"), { recursive: true, force: true });
      const { port, counter } = countingPort(nodeFsStorage({ root }));
      const server = await startServe({ stores: [{ storage: { ...port, close: async () => port.close?.() }, root }], port: 0, viewerDir: null });
      try {
        const lists = await Promise.all(Array.from({ length: requests }, () => listServedSessions({ url: server.origin, store: server.stores[0]!.id, token: server.token })));
        for (const list of lists) expect(list.map((info) => info.firstMessage).sort()).toEqual(["another question", "first question"]);
        return counter.bytesRead;
      } finally {
        await server.close();
      }
    };
    const once = await bytesReadBy(1);
    expect(once).toBeGreaterThan(0);
    expect(await bytesReadBy(3)).toBe(once);
    await rm(join(root, ".sessionkit"), { recursive: true, force: true });
  });
});
