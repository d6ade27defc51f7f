/**
 * Electron main process: serves a StoragePort to renderers over one `ipcMain.handle` channel.
 *
 * Safe by default: every request is checked with the app's `allow` (given the sending frame and
 * its URL); pages see only `sessions/` and `blobs/`, read-only, until directories are made
 * `readable` or `writable`, so the store's `auth.json` and settings stay in main.
 *
 * Each renderer port (`electronStorage()` in a page) is a client of its own, with an id main makes
 * when the port first calls: its locks, transfers and watches are its own, no other page or port
 * can name them. A page holds at most `maxClientsPerPage` clients. They end, and their ids are
 * forgotten, when the port closes, when the page navigates or reloads (`did-navigate`), when its
 * renderer crashes (`render-process-gone`) or its webContents is destroyed, and when it stays
 * unresponsive longer than `unresponsiveMs` (a hung page: Electron's own hang detection, so no
 * renderer timer has to keep a lease alive in a throttled background window). After that its
 * requests fail with "io" (the page reloads or makes a new port).
 *
 * @module sessionkit/adapters/electron/main
 */
import { StorageError, checkStoragePath, type StoragePort } from "../../src/port.js";
import { errorResponse } from "../rpc/protocol.js";
import { createStorageServer, type ClientConnection } from "../rpc/server.js";
import { DEFAULT_CHANNEL, type BridgeOpened, type BridgePush, type IpcMainLike, type WebContentsEvent, type WebContentsLike, type WebFrameMainLike } from "./types.js";

/** Who sent a request, as {@link ServeOverIpcOptions.allow} sees it. */
export interface IpcSender {
  /** The frame that sent it (`event.senderFrame`): the page, or an iframe in it (`frame.parent` set). */
  frame: WebFrameMainLike;
  /** The frame's URL now (`frame.url`): parse it and compare it with your app's own. */
  url: string;
  /** The frame's origin (`frame.origin`), where Electron reports one. */
  origin: string | undefined;
  /** The webContents the frame belongs to (`event.sender`). */
  webContents: WebContentsLike;
}

/** Options of {@link serveStorageOverIpc}: who may use the storage, and what of it they see. */
export interface ServeOverIpcOptions {
  /**
   * Called for every request: true lets the sending frame use the storage, false refuses it with
   * StorageError "forbidden". Required: only the app knows its own URLs (`file://`, a custom
   * protocol, a dev server). A request whose frame is already gone is refused without asking.
   */
  allow: (sender: IpcSender) => boolean;
  /** Directories pages may read (storage paths; `[""]` for the whole store). Default `["sessions", "blobs"]`. */
  readable?: readonly string[];
  /** Directories pages may also change (and lock), e.g. `["sessions"]`. Default none: read-only. */
  writable?: readonly string[];
  /** Clients (renderer ports) one webContents may hold open; past it a port's calls fail with "limit". Default 64. */
  maxClientsPerPage?: number;
  /** The ipc channel; default "sessionkit-storage" (pushes go on `"<channel>:push"`). */
  channel?: string;
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

const DEFAULT_READABLE = ["sessions", "blobs"];
const DEFAULT_MAX_CLIENTS_PER_PAGE = 64;
const DEFAULT_UNRESPONSIVE_MS = 30_000;

interface Page {
  clients: Map<string, ClientConnection>;
  stopListening(): void;
}

/**
 * Serves `storage` to renderer processes over one `ipcMain.handle` channel; pages reach it with
 * {@link sessionkit/adapters/electron/renderer!electronStorage | electronStorage()} through the bridge
 * the preload exposes. A page's locks are released when it navigates, reloads, crashes or hangs.
 *
 * @param ipcMain Electron's `ipcMain`
 * @param storage the port to serve, e.g. a `nodeFsStorage`
 * @throws StorageError "invalid" without an `allow` function, or for a directory that is not a storage path
 */
export function serveStorageOverIpc(ipcMain: IpcMainLike, storage: StoragePort, options: ServeOverIpcOptions): IpcStorageServer {
  const { allow } = options;
  if (typeof allow !== "function") {
    throw new StorageError("invalid", "serveStorageOverIpc needs options.allow: a check of the sending frame's URL against the app's own (see docs/api.md#electron)");
  }
  const readable = storageDirs(options.readable ?? DEFAULT_READABLE);
  const writable = storageDirs(options.writable ?? []);
  const maxClients = options.maxClientsPerPage ?? DEFAULT_MAX_CLIENTS_PER_PAGE;
  const unresponsiveMs = options.unresponsiveMs ?? DEFAULT_UNRESPONSIVE_MS;
  const channel = options.channel ?? DEFAULT_CHANNEL;
  // A writable directory is readable too.
  const server = createStorageServer(storage, { paths: [...readable, ...writable], readOnly: true, writablePaths: writable });
  const pages = new Map<number, Page>();

  const endClients = (page: Page, reason: string) => {
    // Each connection leaves `clients` once it has ended (its onEnd).
    for (const connection of page.clients.values()) void connection.close(reason);
  };

  const pageOf = (webContents: WebContentsLike): Page => {
    const known = pages.get(webContents.id);
    if (known) return known;
    let hung: ReturnType<typeof setTimeout> | undefined;
    const listeners: Record<WebContentsEvent, () => void> = {
      destroyed: () => {
        page.stopListening();
        endClients(page, "the page's webContents was destroyed");
        pages.delete(webContents.id);
      },
      // A new document: its ports are new clients; the old ids fail from now on.
      "did-navigate": () => endClients(page, "the page navigated away"),
      "render-process-gone": () => endClients(page, "the page's renderer process is gone"),
      unresponsive: () => {
        clearTimeout(hung);
        hung = setTimeout(() => endClients(page, `the page was unresponsive for ${unresponsiveMs} ms`), unresponsiveMs);
      },
      responsive: () => clearTimeout(hung),
    };
    const events = Object.keys(listeners) as WebContentsEvent[];
    const page: Page = {
      clients: new Map(),
      stopListening() {
        clearTimeout(hung);
        for (const event of events) webContents.off(event, listeners[event]);
      },
    };
    for (const event of events) webContents.on(event, listeners[event]);
    pages.set(webContents.id, page);
    return page;
  };

  const open = (webContents: WebContentsLike): BridgeOpened | ReturnType<typeof errorResponse> => {
    const page = pageOf(webContents);
    if (page.clients.size >= maxClients) {
      return errorResponse(null, new StorageError("limit", `this page has ${maxClients} storage clients open, the most it may: close a port (storage.close()) before making another`));
    }
    const client = crypto.randomUUID();
    const connection = server.connect({
      push: (push) => {
        if (!webContents.isDestroyed()) webContents.send(`${channel}:push`, { client, push } satisfies BridgePush);
      },
      onEnd: () => page.clients.delete(client),
    });
    page.clients.set(client, connection);
    return { client };
  };

  ipcMain.handle(channel, async (event, envelope) => {
    const { open: opening, client, message } = (envelope ?? {}) as { open?: unknown; client?: unknown; message?: unknown };
    const id = (message as { id?: unknown } | undefined)?.id;
    const requestId = typeof id === "number" && Number.isInteger(id) ? id : null;
    const frame = event.senderFrame;
    if (!frame || !allow({ frame, url: frame.url, origin: frame.origin, webContents: event.sender })) {
      return errorResponse(requestId, new StorageError("forbidden", frame ? "this page may not use the storage" : "the sending frame is gone (it navigated or was destroyed)"));
    }
    if (opening === true) return open(event.sender);
    const connection = typeof client === "string" ? pages.get(event.sender.id)?.clients.get(client) : undefined;
    if (!connection) {
      const error = typeof client === "string" ? new StorageError("io", "this storage client has ended (closed, or its page navigated, crashed or hung): make a new port") : new StorageError("invalid", "malformed storage envelope: no client id");
      return errorResponse(requestId, error);
    }
    return (message as { requests?: unknown } | null)?.requests !== undefined ? connection.handleBatch(message) : connection.handle(message);
  });

  return {
    get clientCount() {
      let count = 0;
      for (const page of pages.values()) count += page.clients.size;
      return count;
    },
    async close() {
      ipcMain.removeHandler(channel);
      for (const page of pages.values()) page.stopListening();
      pages.clear();
      await server.close();
    },
  };
}

/** Storage directories as the options name them; "sessions/" is taken for "sessions". */
function storageDirs(dirs: readonly string[]): string[] {
  return dirs.map((dir) => checkStoragePath(dir.length > 1 && dir.endsWith("/") ? dir.slice(0, -1) : dir, { allowRoot: true }));
}
