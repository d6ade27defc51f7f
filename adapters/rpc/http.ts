/**
 * A StoragePort for a store served by `sessionkit serve` (see ./HTTP-API.md): the storage rpc over
 * one WebSocket per port, binary frames, the server's changes pushed on the same socket. Runs in
 * browsers and in Node (pass the `ws` package's WebSocket where there is no global one: Node 20).
 *
 * The server keeps this port's locks and transfers for as long as the socket lives; when the
 * socket closes (the page goes away, the network drops, the server stops) they are released and
 * every later call fails with StorageError "io": make a new port to go on.
 */
import { StorageError } from "../../src/port.js";
import { rpcClientStorage, type RpcStorage } from "./client.js";
import { webSocketEndpoint, type WebSocketLike } from "./websocket.js";

export interface HttpStorageOptions {
  /** The server's address, e.g. "http://127.0.0.1:4174" (a path after it is ignored). */
  url: string;
  /** The access token `sessionkit serve` printed; not needed on a page the server itself served (its cookie). */
  token?: string;
  /** The store's id, as `GET /api/stores` lists it. */
  store: string;
  /** A WebSocket constructor where there is no global one (Node 20: `import { WebSocket } from "ws"`). */
  WebSocket?: new (url: string) => WebSocketLike;
  /** How long a call waits for its reply; default 30 s. */
  timeoutMs?: number;
  /** Most payload bytes per message; default 4 MiB (the session reader's range). */
  chunkBytes?: number;
}

export interface ServedStore {
  id: string;
  label: string;
  readOnly: boolean;
}

export type HttpStorage = RpcStorage;

const DEFAULT_CHUNK_BYTES = 4 << 20;

export function httpStorage(options: HttpStorageOptions): HttpStorage {
  const Socket = options.WebSocket ?? (globalThis as { WebSocket?: new (url: string) => WebSocketLike }).WebSocket;
  if (!Socket) throw new StorageError("unsupported", "httpStorage needs a WebSocket: pass options.WebSocket (e.g. the ws package's) where there is no global one");
  const url = apiUrl(options.url, `/api/stores/${encodeURIComponent(options.store)}/rpc`, options.token);
  url.protocol = url.protocol === "https:" ? "wss:" : "ws:";
  const endpoint = webSocketEndpoint(new Socket(url.href));
  const client = rpcClientStorage(endpoint, {
    kind: "http",
    chunkBytes: options.chunkBytes ?? DEFAULT_CHUNK_BYTES,
    ...(options.timeoutMs === undefined ? {} : { timeoutMs: options.timeoutMs }),
  });
  const close = client.close.bind(client);
  return Object.assign(client, {
    close: () => close().finally(() => endpoint.close()),
  });
}

/** The stores a server exposes (`GET /api/stores`). */
export async function listServedStores(options: { url: string; token?: string }): Promise<ServedStore[]> {
  const response = await fetch(apiUrl(options.url, "/api/stores", options.token), { credentials: "same-origin" });
  if (!response.ok) throw new StorageError("io", `GET /api/stores: ${response.status} ${await response.text()}`);
  return (await response.json()) as ServedStore[];
}

function apiUrl(base: string, path: string, token: string | undefined): URL {
  const url = new URL(path, base);
  if (token !== undefined) url.searchParams.set("token", token);
  return url;
}
