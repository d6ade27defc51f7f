/**
 * The Electron bridge with Electron's two ends in different threads: main (serveStorageOverIpc over
 * node-fs) in a worker thread, each renderer (exposeStorageBridge + electronStorage) in this thread
 * or another worker; every message crosses by structured clone. The `electron` package itself
 * cannot be installed here (it downloads its binary from outside the registry): see README.
 */
import { once } from "node:events";
import { Worker } from "node:worker_threads";
import { afterAll, describe, expect, it } from "vitest";
import { exposeStorageBridge } from "../../adapters/electron/preload.js";
import { electronStorage } from "../../adapters/electron/renderer.js";
import type { StorageBridge } from "../../adapters/electron/types.js";
import { SessionManager, isStorageError } from "../../src/index.js";
import { describeFollowSuite } from "../shared/follow-suite.js";
import { describePortConformance, expectStorageError } from "../../src/testing/index.js";
import { describeSessionManagerSuite } from "../shared/session-suite.js";
import { userMsg } from "../shared/messages.js";
import { bundle, removeBundles, startElectronMain, type ElectronMain } from "./electron/harness.js";
import { rendererIpc } from "./electron/renderer-ipc.js";

const mains: ElectronMain[] = [];
afterAll(async () => {
  await Promise.all(mains.map((main) => main.stop()));
  await removeBundles();
});

async function main(options: { readOnly?: boolean } = {}): Promise<ElectronMain> {
  const started = await startElectronMain(options);
  mains.push(started);
  return started;
}

/** A renderer in this thread: the preload's bridge and a port on it. */
async function renderer(electronMain: ElectronMain) {
  const { port, webContents } = await electronMain.newRenderer();
  const { ipcRenderer, contextBridge, window } = rendererIpc(port);
  exposeStorageBridge(contextBridge, ipcRenderer);
  const bridge = window.sessionkitStorage as StorageBridge;
  return { port, webContents, bridge, window, storage: electronStorage({ bridge }) };
}

let shared: Promise<ElectronMain> | undefined;

describePortConformance(
  "electron bridge (main in a worker thread, structured clone both ways)",
  async () => {
    const electronMain = await (shared ??= main());
    const { storage } = await renderer(electronMain);
    return { port: storage, openSecond: async () => (await renderer(electronMain)).storage, cleanup: () => storage.close() };
  },
  { sync: true, locks: true, watch: true, secondPort: true },
);

describeSessionManagerSuite(
  "electron bridge",
  async () => {
    const electronMain = await main();
    const first = await renderer(electronMain);
    return {
      storage: first.storage,
      reopen: async () => {
        await first.storage.close();
        return (await renderer(electronMain)).storage;
      },
      openSecond: async () => (await renderer(electronMain)).storage,
    };
  },
  { persistent: true },
);

describeFollowSuite("electron bridge (two renderers)", async () => {
  const electronMain = await (shared ??= main());
  return { writer: (await renderer(electronMain)).storage, reader: (await renderer(electronMain)).storage };
});

describe("electron bridge", () => {
  it("a renderer holding a writer lock is killed (its worker terminated): another opens the session for writing, every flushed entry there", async () => {
    const electronMain = await main();
    const { port } = await electronMain.newRenderer();
    const worker = new Worker(await bundle("test/node/electron/renderer-writer.ts"), { workerData: { port, entries: 33 }, transferList: [port] });
    const [{ path, ids }] = (await once(worker, "message")) as [{ path: string; ids: string[] }];
    const other = await renderer(electronMain);
    await expect(SessionManager.open(other.storage, path)).rejects.toSatisfy((error) => isStorageError(error, "locked") || isStorageError((error as Error).cause, "locked"));

    const killedAt = performance.now();
    await worker.terminate();
    let sm: SessionManager | undefined;
    while (!sm) {
      sm = await SessionManager.open(other.storage, path).catch(() => undefined);
      if (!sm && performance.now() - killedAt > 5000) throw new Error("the dead renderer's lock was never released");
    }
    console.log(`electron: a killed renderer's lock taken over after ${(performance.now() - killedAt).toFixed(0)} ms`);
    expect(sm.getEntries().map((entry) => entry.id)).toEqual(ids);
    sm.appendMessage(userMsg("the second window goes on"));
    await sm.close();
  });

  it("a page that navigates loses its locks; its old port then fails with 'io'; a new port works", async () => {
    const electronMain = await main();
    const page = await renderer(electronMain);
    await page.storage.acquireLock("sessions/a.jsonl");
    const other = await renderer(electronMain);
    await expectStorageError(other.storage.acquireLock("sessions/a.jsonl"), "locked");
    electronMain.worker.postMessage({ type: "emit", webContents: page.webContents, event: "did-navigate" });
    let lock = await other.storage.acquireLock("sessions/a.jsonl").catch(() => null);
    for (let tries = 0; !lock && tries < 100; tries++) lock = await other.storage.acquireLock("sessions/a.jsonl").catch(() => null);
    expect(lock).not.toBeNull();
    await expectStorageError(page.storage.stat("x"), "io");
    const reloaded = electronStorage({ bridge: page.bridge });
    expect(await reloaded.stat("x")).toBeNull();
  });

  it("the preload exposes only invoke and a push subscription; pushes reach the page without ipc events", async () => {
    const electronMain = await main();
    const { window, storage, bridge } = await renderer(electronMain);
    expect(Object.keys(window)).toEqual(["sessionkitStorage"]);
    expect(Object.keys(bridge).sort()).toEqual(["invoke", "onPush"]);
    const raw: unknown[] = [];
    bridge.onPush((push) => raw.push(push));
    const seen: string[] = [];
    await storage.watch("sessions", (path) => seen.push(path));
    await storage.append("sessions/s.jsonl", new TextEncoder().encode("x\n"));
    while (!seen.includes("sessions/s.jsonl")) await new Promise((resolve) => setTimeout(resolve, 10));
    // Watches may also report spurious changes (the watched dir appearing): find the file's push.
    expect(raw, JSON.stringify(raw)).toContainEqual({ client: expect.any(String), push: expect.objectContaining({ push: "changes", paths: expect.arrayContaining(["sessions/s.jsonl"]) }) });
    expect(JSON.stringify(raw)).not.toContain("ipcRenderer");
  });

  it("read-only main refuses changes with 'read-only'; electronStorage without a bridge says how to expose one", async () => {
    const { storage } = await renderer(await main({ readOnly: true }));
    await expectStorageError(storage.append("sessions/a", new Uint8Array(1)), "read-only");
    expect(() => electronStorage()).toThrow(/exposeStorageBridge/);
  });
});

