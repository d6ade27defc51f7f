/**
 * The Electron renderer side in Chromium: the page's `invoke` reaches serveStorageOverIpc in the
 * Node test process through Playwright's exposeBinding (a browser command sets it up), as a
 * renderer's reaches ipcMain.handle. The shared SessionManager suite runs on that port.
 */
import { commands } from "vitest/browser";
import { electronStorage } from "../../adapters/electron/renderer.js";
import type { BridgeEnvelope, StorageBridge } from "../../adapters/electron/types.js";
import { describeSessionManagerSuite } from "../shared/session-suite.js";

declare global {
  interface Window {
    sessionkitInvoke?: (store: number, envelope: BridgeEnvelope) => Promise<unknown>;
  }
}

/** A bridge to a fresh store in Node, as a preload would expose it. */
function bridgeTo(store: number): StorageBridge {
  return {
    invoke: (envelope) => window.sessionkitInvoke!(store, envelope),
    // The session suite needs no pushes; the worker-thread tests (test/node/electron.test.ts) cover them.
    onPush: () => () => {},
  };
}

describeSessionManagerSuite("electron renderer in Chromium, main in Node (exposeBinding)", async () => {
  const storage = electronStorage({ bridge: bridgeTo(await commands.newBridgeStore()) });
  return { storage, cleanup: () => storage.close() };
});
