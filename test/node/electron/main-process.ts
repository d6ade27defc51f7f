/**
 * Electron's main process, played by a worker thread: a structural `ipcMain` and one fake
 * `webContents` per renderer, each renderer reached over a MessagePort, so every message crosses
 * a thread boundary by structured clone as Electron's ipc does. The real part is sessionkit's:
 * `serveStorageOverIpc` over node-fs files in `workerData.root`.
 *
 * A renderer whose port closes (its worker terminated: a crashed or closed renderer) gets what
 * Electron emits then: "render-process-gone", then "destroyed".
 */
import { EventEmitter } from "node:events";
import { parentPort, workerData, type MessagePort } from "node:worker_threads";
import { serveStorageOverIpc } from "../../../adapters/electron/main.js";
import type { IpcMainInvokeEventLike, IpcMainLike, WebContentsLike } from "../../../adapters/electron/types.js";
import { nodeFsStorage } from "../../../adapters/node-fs/index.js";

type Handler = (event: IpcMainInvokeEventLike, ...args: unknown[]) => Promise<unknown>;
const handlers = new Map<string, Handler>();
const ipcMain: IpcMainLike = {
  handle: (channel, listener) => void handlers.set(channel, listener),
  removeHandler: (channel) => void handlers.delete(channel),
};

const { root, readOnly } = workerData as { root: string; readOnly?: boolean };
const storage = nodeFsStorage({ root });
serveStorageOverIpc(ipcMain, storage, { readOnly: readOnly ?? false });

let nextId = 1;
class FakeWebContents extends EventEmitter implements WebContentsLike {
  readonly id = nextId++;
  destroyed = false;
  constructor(private readonly port: MessagePort) {
    super();
  }
  send(channel: string, ...args: unknown[]): void {
    this.port.postMessage({ type: "send", channel, args });
  }
  isDestroyed(): boolean {
    return this.destroyed;
  }
}

parentPort!.on("message", (message: { type: "renderer"; port: MessagePort } | { type: "emit"; webContents: number; event: string }) => {
  if (message.type === "emit") return void [...pages].find((page) => page.id === message.webContents)?.emit(message.event);
  const { port } = message;
  const webContents = new FakeWebContents(port);
  pages.add(webContents);
  const answer = async (request: { seq: number; channel: string; args: unknown[] }) => {
    const handler = handlers.get(request.channel);
    try {
      if (!handler) throw new Error(`No handler registered for '${request.channel}'`);
      port.postMessage({ type: "reply", seq: request.seq, result: await handler({ sender: webContents }, ...request.args) });
    } catch (error) {
      port.postMessage({ type: "reply", seq: request.seq, error: String(error) });
    }
  };
  // Like ipcMain.handle: each request is answered when its handler settles, its failure included.
  port.on("message", (request: { seq: number; channel: string; args: unknown[] }) => void answer(request));
  port.on("close", () => {
    webContents.emit("render-process-gone", {}, { reason: "killed" });
    webContents.destroyed = true;
    webContents.emit("destroyed");
    pages.delete(webContents);
  });
  port.postMessage({ type: "ready", webContents: webContents.id });
});
const pages = new Set<FakeWebContents>();
parentPort!.postMessage({ type: "started" });
