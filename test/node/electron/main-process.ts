/**
 * Electron's main process, played by a worker thread: a structural `ipcMain` and one fake
 * `webContents` per renderer, each renderer reached over a MessagePort, so every message crosses
 * a thread boundary by structured clone as Electron's ipc does. The real part is sessionkit's:
 * `serveStorageOverIpc` over node-fs files in `workerData.root`, allowing what examples/electron
 * allows: the app's own page, top-level frames only.
 *
 * A renderer whose port closes (its worker terminated: a crashed or closed renderer) gets what
 * Electron emits then: "render-process-gone", then "destroyed".
 */
import { EventEmitter } from "node:events";
import v8 from "node:v8";
import { runInNewContext } from "node:vm";
import { parentPort, workerData, type MessagePort } from "node:worker_threads";
import { serveStorageOverIpc, type IpcSender } from "../../../adapters/electron/main.js";
import type { IpcMainInvokeEventLike, IpcMainLike, WebContentsLike, WebFrameMainLike } from "../../../adapters/electron/types.js";
import { nodeFsStorage } from "../../../adapters/node-fs/index.js";
import type { MainOptions, RendererOptions } from "./harness.js";

type Handler = (event: IpcMainInvokeEventLike, ...args: unknown[]) => Promise<unknown>;
const handlers = new Map<string, Handler>();
const ipcMain: IpcMainLike = {
  handle: (channel, listener) => void handlers.set(channel, listener),
  removeHandler: (channel) => void handlers.delete(channel),
};

const { root, appUrl, ...serveOptions } = workerData as MainOptions & { root: string; appUrl: string };
/** What the last `allow` call was given, as the tests check it. */
let lastSender: { url: string; origin: string | undefined; topLevel: boolean; webContents: number } | undefined;
const server = serveStorageOverIpc(ipcMain, nodeFsStorage({ root }), {
  ...serveOptions,
  allow: (sender: IpcSender) => {
    lastSender = { url: sender.url, origin: sender.origin, topLevel: sender.frame.parent === null, webContents: sender.webContents.id };
    return sender.frame.parent === null && sender.url === appUrl;
  },
});

// Main's heap, measured after a full collection (the flag makes `gc` reachable in a new context).
v8.setFlagsFromString("--expose-gc");
const gc = runInNewContext("gc") as () => void;

function frameAt(url: string, parent: WebFrameMainLike | null): WebFrameMainLike {
  return { url, origin: new URL(url).origin, parent };
}

let nextId = 1;
class FakeWebContents extends EventEmitter implements WebContentsLike {
  readonly id = nextId++;
  destroyed = false;
  constructor(
    private readonly port: MessagePort,
    /** The frame the renderer's requests come from; null plays a frame already gone. */
    public senderFrame: WebFrameMainLike | null,
  ) {
    super();
  }
  send(channel: string, ...args: unknown[]): void {
    this.port.postMessage({ type: "send", channel, args });
  }
  isDestroyed(): boolean {
    return this.destroyed;
  }
}

type Command =
  | ({ type: "renderer"; port: MessagePort } & RendererOptions)
  | { type: "emit"; webContents: number; event: string; url?: string }
  | { type: "stats" };

parentPort!.on("message", (message: Command) => {
  if (message.type === "stats") {
    gc();
    return parentPort!.postMessage({ type: "stats", clientCount: server.clientCount, heapBytes: v8.getHeapStatistics().used_heap_size, lastSender });
  }
  if (message.type === "emit") {
    const page = [...pages].find((candidate) => candidate.id === message.webContents);
    // A navigation: the frame shows the new URL before Electron emits did-navigate.
    if (page && message.url !== undefined) page.senderFrame = frameAt(message.url, page.senderFrame?.parent ?? null);
    return void page?.emit(message.event);
  }
  const { port, url = appUrl, parentUrl } = message;
  const frame = url === null ? null : frameAt(url, parentUrl === undefined ? null : frameAt(parentUrl, null));
  const webContents = new FakeWebContents(port, frame);
  pages.add(webContents);
  const answer = async (request: { seq: number; channel: string; args: unknown[] }) => {
    const handler = handlers.get(request.channel);
    try {
      if (!handler) throw new Error(`No handler registered for '${request.channel}'`);
      port.postMessage({ type: "reply", seq: request.seq, result: await handler({ sender: webContents, senderFrame: webContents.senderFrame }, ...request.args) });
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
