/**
 * The server half of ../rpc/HTTP-API.md (its client is ../rpc/http.ts): the viewer's built files
 * and, per store, the storage rpc over a WebSocket, raw file bytes, one-shot rpc calls and a
 * change stream, for the requests auth.ts admits. Stores are read-only unless asked, and expose
 * only `sessions/`, `blobs/` and `.sessionkit/` (pi's agent dir also holds credentials).
 *
 * Internal to the package (used by `sessionkit serve`, tests, the bench and e2e): it needs `ws`,
 * which the CLI bundles, so it is no public subpath.
 */
import { createHash, randomBytes } from "node:crypto";
import { createServer, type IncomingMessage, type ServerResponse } from "node:http";
import nodePath from "node:path";
import type { Duplex } from "node:stream";
import type { StoragePort } from "../../src/port.js";
import { MAX_BATCH_REQUESTS } from "../rpc/protocol.js";
import { createStorageServer, type StorageServerLimits } from "../rpc/server.js";
import { admission, checkedOrigin, preflight } from "./auth.js";
import { fail, HttpError } from "./http.js";
import { routes, type ServedStore } from "./routes.js";
import type { StoreSearch } from "./search-route.js";
import type { ViewerFiles } from "./static-files.js";
import { rpcSockets } from "./websocket.js";

/** A store to serve: a port, and what the store list says of it. */
export interface ServerStore {
  /** Where the store is (a directory, a URL without its password): its id derives from it. */
  root: string;
  /** The whole store; the server exposes only SERVED_PATHS of it, and closes it when it closes. */
  storage: StoragePort;
  /** What the page shows for it; default the root. */
  label?: string;
  /** The agent whose store it is ("pi", "omp", …), when known. */
  agent?: string;
  /** The store holds sample sessions, not the user's. */
  samples?: boolean;
  /**
   * Directories of this machine the store's files are in, each with the storage path it holds:
   * error messages name the storage paths instead. Default: `root` as "" when it is an absolute path.
   */
  hostPaths?: Readonly<Record<string, string>>;
  /**
   * The store's sessions as `GET /api/stores/<id>/sessions` answers them, JSON-serializable
   * (`sessionkit serve` gives the core's listing). Without it that route is a 404.
   */
  listSessions?: () => Promise<unknown>;
  /**
   * Search across the store's sessions as `GET /api/stores/<id>/search` answers it: hits,
   * JSON-serializable, and the progress of bringing an index up to date on the way
   * (`sessionkit serve` gives the core's searchSessions). Without it that route is a 404.
   */
  searchSessions?: StoreSearch;
}

export interface ServerOptions {
  stores: readonly ServerStore[];
  /** Interface to listen on; default 127.0.0.1. */
  host?: string;
  /** Port; 0 picks a free one. Default 4174. */
  port?: number;
  /** Allow changes (appends, writes, locks); default read-only. */
  write?: boolean;
  /** The access token; default 32 random bytes. */
  token?: string;
  /** The viewer's built files; null or absent serves none. */
  viewer?: ViewerFiles | null;
  /** Other origins whose pages may call the API (a dev server); default none. An opaque origin (a file: or data: URL's, serialized as "null") throws. */
  allowOrigins?: readonly string[];
  /** A WebSocket client that has not answered a ping for this long is dropped, its locks released. Default 10 s. */
  leaseMs?: number;
  /** The largest request body or WebSocket message; default 16 MiB. */
  maxMessageBytes?: number;
  /** Caps on each client's work (createStorageServer's `limits`); each one not given is DEFAULT_LIMITS's. */
  limits?: StorageServerLimits;
}

export interface RunningServer {
  /** The address to open, token included: http://127.0.0.1:<port>/?token=… */
  url: string;
  /** The address without the token. */
  origin: string;
  port: number;
  token: string;
  stores: { id: string; label: string; readOnly: boolean; root: string }[];
  /** Open WebSocket clients (for tests and the bench). */
  readonly clientCount: number;
  /** Drops every client (their locks are released), stops listening, closes the stores. */
  close(): Promise<void>;
}

/** The served part of a store (sessions, blobs, sessionkit's own caches): pi's agent dir also holds auth.json and settings. */
const SERVED_PATHS = ["sessions", "blobs", ".sessionkit"] as const;
const DEFAULT_PORT = 4174;
const DEFAULT_LEASE_MS = 10_000;
const DEFAULT_MAX_MESSAGE_BYTES = 16 << 20;

/**
 * Caps on each client (a WebSocket, one POST, one GET): what a client that asks for too much makes
 * the server hold. Measured under the attacks of test/node/serve-limits.test.ts (docs/serve.md).
 */
export const DEFAULT_LIMITS: Readonly<Required<StorageServerLimits>> = {
  /** What rpcClientStorage sends at most. */
  maxBatchRequests: MAX_BATCH_REQUESTS,
  maxCallsInFlight: 8,
  /** Room for the 16 MiB a GET of a file reads in one port call, and more. */
  maxHeldBytes: 32 << 20,
  /** The largest write a client can make (staged in pieces, then committed at once). */
  maxStagedBytes: 64 << 20,
};

export async function startServer(options: ServerOptions): Promise<RunningServer> {
  const host = options.host ?? "127.0.0.1";
  const token = options.token ?? randomBytes(32).toString("base64url");
  const readOnly = !(options.write ?? false);
  const allowOrigins = (options.allowOrigins ?? []).map(checkedOrigin);
  const maxMessageBytes = options.maxMessageBytes ?? DEFAULT_MAX_MESSAGE_BYTES;
  const stores = new Map<string, ServedStore & { storage: StoragePort }>();
  for (const store of options.stores) {
    const id = storeId(store.root, stores);
    const hostPaths = store.hostPaths ?? (nodePath.isAbsolute(store.root) ? { [store.root]: "" } : {});
    const server = createStorageServer(store.storage, { readOnly, paths: SERVED_PATHS, limits: { ...DEFAULT_LIMITS, ...options.limits }, hostPaths });
    const listSessions = store.listSessions ? oneAtATime(store.listSessions) : null;
    stores.set(id, { id, label: store.label ?? store.root, agent: store.agent, samples: store.samples ?? false, root: store.root, storage: store.storage, server, listSessions, searchSessions: store.searchSessions ?? null });
  }

  const http = createServer();
  await new Promise<void>((resolve, reject) => {
    http.once("error", reject);
    http.listen(options.port ?? DEFAULT_PORT, host, () => {
      http.off("error", reject);
      resolve();
    });
  });
  const port = (http.address() as { port: number }).port;
  // Listening on every interface: the URL to print is this machine's own.
  const shown = host === "0.0.0.0" || host === "::" ? "127.0.0.1" : host;
  const origin = `http://${shown.includes(":") ? `[${shown}]` : shown}:${port}`;
  const { admit, allowOrigin } = admission({ host, port, origin, token, allowOrigins });
  const route = routes({ stores, readOnly, viewer: options.viewer ?? null, maxMessageBytes });
  const sockets = rpcSockets({ stores, leaseMs: options.leaseMs ?? DEFAULT_LEASE_MS, maxMessageBytes });

  http.on("request", (request: IncomingMessage, response: ServerResponse) => {
    void (async () => {
      try {
        const url = requestUrl(request, origin);
        admit(request, url);
        allowOrigin(request, response);
        if (request.method === "OPTIONS") return preflight(response);
        await route(request, response, url);
      } catch (error) {
        fail(response, error);
      }
    })();
  });
  http.on("upgrade", (request: IncomingMessage, socket: Duplex, head: Buffer) => {
    sockets.upgrade(request, socket, head, () => {
      const url = requestUrl(request, origin);
      admit(request, url);
      return url;
    });
  });

  let closing: Promise<void> | undefined;
  return {
    url: `${origin}/?token=${token}`,
    origin,
    port,
    token,
    stores: [...stores.values()].map(({ id, label, root }) => ({ id, label, readOnly, root })),
    get clientCount() {
      return sockets.clientCount;
    },
    close: () =>
      (closing ??= (async () => {
        sockets.close();
        await Promise.all([...stores.values()].map((store) => store.server.close()));
        http.closeAllConnections();
        await new Promise<void>((resolve) => http.close(() => resolve()));
        await Promise.all([...stores.values()].map((store) => store.storage.close?.()));
      })()),
  };
}

/**
 * The request's target as a URL. Node's parser lets through targets no URL can be made of
 * (`GET http://[ HTTP/1.1`): a 400, not an exception (which, thrown in an event handler, ended the process).
 */
function requestUrl(request: IncomingMessage, origin: string): URL {
  try {
    return new URL(request.url ?? "/", origin);
  } catch {
    throw new HttpError(400, `the request target ${JSON.stringify(request.url)} is not a URL`);
  }
}

function storeId(root: string, taken: ReadonlyMap<string, unknown>): string {
  const base = nodePath.basename(root).replace(/[^A-Za-z0-9_-]+/g, "-").replace(/^-+|-+$/g, "") || "store";
  const id = `${base}-${createHash("sha256").update(root).digest("hex").slice(0, 6)}`;
  let unique = id;
  for (let n = 2; taken.has(unique); n++) unique = `${id}-${n}`;
  return unique;
}

/** `run`, with calls made while one is under way given that one's answer: pages opened together list a store once. */
function oneAtATime<T>(run: () => Promise<T>): () => Promise<T> {
  let running: Promise<T> | undefined;
  return () => (running ??= run().finally(() => (running = undefined)));
}
