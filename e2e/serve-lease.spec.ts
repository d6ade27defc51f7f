/**
 * A page holding a writer lock over `sessionkit serve` is closed: its WebSocket goes with it, the
 * server releases the lock, and another client opens the session for writing within the lease,
 * finding every entry the page had flushed.
 */
import { expect, test } from "@playwright/test";
import { WebSocket } from "ws";
import { mkdtemp, rm } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { httpStorage } from "../adapters/rpc/http.js";
import type { WebSocketLike } from "../adapters/rpc/websocket.js";
import { startServe } from "../cli/serve/server.js";
import { SessionManager } from "../src/index.js";
import { openApp } from "./helpers.js";

const LEASE_MS = 2000;

test("a page holding a writer lock over serve is closed: another client writes the session within the lease", async ({ page, baseURL }) => {
  const root = await mkdtemp(join(tmpdir(), "sessionkit-e2e-serve-"));
  const server = await startServe({ stores: [{ root }], port: 0, viewerDir: null, write: true, leaseMs: LEASE_MS, allowOrigins: [new URL(baseURL!).origin] });
  const remote = { url: server.origin, token: server.token, store: server.stores[0]!.id };
  const node = httpStorage({ ...remote, WebSocket: WebSocket as unknown as new (url: string) => WebSocketLike });
  try {
    await openApp(page);
    const { path, ids } = await page.evaluate(async (remote) => {
      const sk = window.sessionkit;
      const sm = await sk.SessionManager.create(sk.httpStorage(remote), "/work/e2e");
      sk.held.set("session", sm);
      const ids = [sm.appendMessage(sk.userMsg("from the page")), sm.appendMessage(sk.assistantMsg("flushed before the tab closes"))];
      await sm.flush();
      ids.push(sm.appendMessage(sk.userMsg("and one more")));
      await sm.flush();
      return { path: sm.getSessionFile()!, ids };
    }, remote);
    await expect(SessionManager.open(node, path)).rejects.toThrow(/locked/);

    const closedAt = performance.now();
    await page.close();
    let sm: SessionManager | undefined;
    while (!sm) {
      sm = await SessionManager.open(node, path).catch(() => undefined);
      if (!sm) await new Promise((resolve) => setTimeout(resolve, 20));
      expect(performance.now() - closedAt).toBeLessThan(LEASE_MS);
    }
    console.log(`serve: a closed page's lock taken over after ${(performance.now() - closedAt).toFixed(0)} ms (lease ${LEASE_MS} ms)`);
    expect(sm.getEntries().map((entry) => entry.id)).toEqual(ids);
    await sm.close();
  } finally {
    await node.close();
    await server.close();
    await rm(root, { recursive: true, force: true });
  }
});
