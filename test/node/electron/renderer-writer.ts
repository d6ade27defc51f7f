/**
 * A renderer (worker thread) that writes a session through the Electron bridge, reports the ids it
 * flushed, then idles holding the writer lock until it is terminated.
 */
import { parentPort, workerData, type MessagePort } from "node:worker_threads";
import { exposeStorageBridge } from "../../../adapters/electron/preload.js";
import { electronStorage } from "../../../adapters/electron/renderer.js";
import type { StorageBridge } from "../../../adapters/electron/types.js";
import { SessionManager } from "../../../src/index.js";
import { rendererIpc } from "./renderer-ipc.js";

const { port, entries } = workerData as { port: MessagePort; entries: number };
const { ipcRenderer, contextBridge, window } = rendererIpc(port);
exposeStorageBridge(contextBridge, ipcRenderer);
const storage = electronStorage({ bridge: window.sessionkitStorage as StorageBridge });
const sm = await SessionManager.create(storage, "/work/electron");
const ids: string[] = [];
for (let i = 0; i < entries; i++) {
  ids.push(sm.appendMessage(i % 2 === 0 ? { role: "user", content: `q ${i}`, timestamp: Date.now() } : ({ role: "assistant", content: [{ type: "text", text: `a ${i}` }], timestamp: Date.now() } as never)));
  if (i % 4 === 3) await sm.flush();
}
await sm.flush();
parentPort!.postMessage({ path: sm.getSessionFile(), ids });
setInterval(() => {}, 60_000);
