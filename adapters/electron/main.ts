/**
 * Electron main process: serves a StoragePort to renderers over one `ipcMain.handle` channel.
 *
 * Each renderer port (`electronStorage()` in a page) is a client of its own, keyed by its
 * webContents and a random id it sends: its locks, transfers and watches are its own, no other
 * page or port can name them. They are released when the page navigates or reloads
 * (`did-navigate`), when its renderer crashes (`render-process-gone`) or its webContents is
 * destroyed, and when it stays unresponsive longer than `unresponsiveMs` (a hung page: Electron's
 * own hang detection, so no renderer timer has to keep a lease alive in a throttled background
 * window). After that its requests fail with "io" (the page reloads or makes a new port).
 *
 * @module sessionkit/adapters/electron/main
 */
import type { StoragePort } from "../../src/port.js";
import { errorResponse } from "../rpc/protocol.js";
import { createStorageServer, type ClientConnection, type StorageServerOptions } from "../rpc/server.js";
import { StorageError } from "../../src/port.js";
import { DEFAULT_CHANNEL, type BridgeEnvelope, type BridgePush, type IpcMainLike, type WebContentsLike } from "./types.js";

/** Options of {@link serveStorageOverIpc}: the channel, which pages may use it, and what a server allows. */
export interface ServeOverIpcOptions extends StorageServerOptions {
  /** The ipc channel; default "sessionkit-storage" (pushes go on `"<channel>:push"`). */
  channel?: string;
  /** Which webContents may use the storage (e.g. only your app's windows); default all. */
  allow?: (webContents: WebContentsLike) => boolean;
  /** A renderer unresponsive this long loses its clients' locks; default 30 s. */
  unresponsiveMs?: number;
}

/** The running ipc server {@link serveStorageOverIpc} returns. */
export interface IpcStorageServer {
  /** Clients connected now. */
  readonly clientCount: number;
  /** Removes the handler and ends every client (locks released). The port stays open. */
  close(): Promise<void>;
}

const DEFAULT_UNRESPONSIVE_MS = 30_000;

/**
 * Serves `storage` to renderer processes over one `ipcMain.handle` channel; pages reach it with
 * {@link sessionkit/adapters/electron/renderer!electronStorage | electronStorage()} through the bridge
 * the preload exposes. A page's locks are released when it navigates, reloads, crashes or hangs.
 *
 * @param ipcMain Electron's `ipcMain`
 * @param storage the port to serve, e.g. a `nodeFsStorage`
 */
export function serveStorageOverIpc(ipcMain: IpcMainLike, storage: StoragePort, options: ServeOverIpcOptions = {}): IpcStorageServer {
  const channel = options.channel ?? DEFAULT_CHANNEL;
  const server = createStorageServer(storage, options);
  /** webContents id -> its clients by id; ended client ids stay known so that they keep failing. */
  const pages = new Map<number, { clients: Map<string, ClientConnection>; ended: Set<string> }>();

  const endPage = (webContents: WebContentsLike, reason: string) => {
    const page = pages.get(webContents.id);
    if (!page) return;
    for (const [id, connection] of page.clients) {
      page.ended.add(id);
      void connection.close(reason);
    }
    page.clients.clear();
  };

  const pageOf = (webContents: WebContentsLike) => {
    let page = pages.get(webContents.id);
    if (page) return page;
    page = { clients: new Map(), ended: new Set() };
    pages.set(webContents.id, page);
    let hung: ReturnType<typeof setTimeout> | undefined;
    webContents.once("destroyed", () => {
      clearTimeout(hung);
      endPage(webContents, "the page's webContents was destroyed");
      pages.delete(webContents.id);
    });
    // A new document: its ports are new clients (new ids); the old ids keep failing.
    webContents.on("did-navigate", () => endPage(webContents, "the page navigated away"));
    webContents.on("render-process-gone", () => endPage(webContents, "the page's renderer process is gone"));
    webContents.on("unresponsive", () => {
      clearTimeout(hung);
      hung = setTimeout(() => endPage(webContents, `the page was unresponsive for ${options.unresponsiveMs ?? DEFAULT_UNRESPONSIVE_MS} ms`), options.unresponsiveMs ?? DEFAULT_UNRESPONSIVE_MS);
    });
    webContents.on("responsive", () => clearTimeout(hung));
    return page;
  };

  ipcMain.handle(channel, async (event, envelope) => {
    const { client, message } = (envelope ?? {}) as Partial<BridgeEnvelope>;
    const id = (message as { id?: unknown } | undefined)?.id;
    const requestId = typeof id === "number" && Number.isInteger(id) ? id : null;
    const webContents = event.sender;
    if (options.allow && !options.allow(webContents)) return errorResponse(requestId, new StorageError("forbidden", "this page may not use the storage"));
    if (typeof client !== "string" || client.length === 0 || client.length > 128) return errorResponse(requestId, new StorageError("invalid", "malformed storage envelope: no client id"));
    const page = pageOf(webContents);
    if (page.ended.has(client)) return errorResponse(requestId, new StorageError("io", "this storage client was ended (its page navigated, crashed or hung): make a new port"));
    let connection = page.clients.get(client);
    if (!connection) {
      connection = server.connect({
        push: (push) => {
          if (!webContents.isDestroyed()) webContents.send(`${channel}:push`, { client, push } satisfies BridgePush);
        },
      });
      page.clients.set(client, connection);
    }
    const answer = (message as { requests?: unknown } | null)?.requests !== undefined ? await connection.handleBatch(message) : await connection.handle(message);
    if ((message as { call?: { op?: unknown } } | null)?.call?.op === "close") {
      page.clients.delete(client);
      page.ended.add(client);
    }
    return answer;
  });

  return {
    get clientCount() {
      let count = 0;
      for (const page of pages.values()) count += page.clients.size;
      return count;
    },
    async close() {
      ipcMain.removeHandler(channel);
      await server.close();
      pages.clear();
    },
  };
}


