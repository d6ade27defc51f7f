/**
 * A StoragePort for a store served by `sessionkit serve` (see ./HTTP-API.md): the storage rpc over
 * one WebSocket per port, binary frames, the server's changes pushed on the same socket. Reads of
 * 256 KiB or more (and whole-file reads) are plain `GET …/files/<path>` requests with a Range
 * instead: Chromium moves large WebSocket messages at a fraction of fetch's speed (measured: 50 MB
 * in 4 MiB messages 4.0–4.4 s, by fetch 0.5 s); ranges read one after another come from one GET
 * of a 16 MiB block (fetch-blocks.ts). Such a read waits for this port's changes still under way,
 * so it sees them, as an rpc read would. Runs in browsers and in Node (pass the `ws`
 * package's WebSocket where there is no global one: Node 20).
 *
 * The token goes as `Authorization: Bearer` on fetches and as a WebSocket subprotocol (browsers
 * set no headers on a WebSocket), never in a URL or a cookie.
 *
 * The server keeps this port's locks and transfers for as long as the socket lives; when the
 * socket closes (the page goes away, the network drops, the server stops) they are released and
 * every later call fails with StorageError "io": make a new port to go on.
 *
 * @module sessionkit/adapters/http
 */
import { StorageError, checkByteRange, checkStoragePath, type ByteRange, type FileStat, type StorageErrorCode } from "../../src/port.js";
import { rpcClientStorage, type RpcStorage } from "./client.js";
import { BLOCK_BYTES, FetchBlocks } from "./fetch-blocks.js";
import { tokenSubprotocols, webSocketEndpoint, type WebSocketLike } from "./websocket.js";

/** Options of {@link httpStorage}: which server and store, and how to reach it. */
export interface HttpStorageOptions {
  /** The server's address, e.g. "http://127.0.0.1:4174" (a path after it is ignored). */
  url: string;
  /** The access token `sessionkit serve` printed (the `token` of its URL). */
  token?: string;
  /** The store's id, as `GET /api/stores` lists it. */
  store: string;
  /** A WebSocket constructor where there is no global one (Node 20: `import { WebSocket } from "ws"`). */
  WebSocket?: {
    /** Opens a WebSocket to `url` (a ws: or wss: URL), offering `protocols` (they carry the token). */
    new (url: string, protocols?: string[]): WebSocketLike;
  };
  /** How long a call waits for its reply; default 30 s. */
  timeoutMs?: number;
  /** Most payload bytes per message; default 4 MiB (the session reader's range). */
  chunkBytes?: number;
}

/** One store a `sessionkit serve` server exposes, as {@link listServedStores} returns it. */
export interface ServedStore {
  /** The id to pass as `store` to {@link httpStorage}. */
  id: string;
  /** A name for people (by default the store's directory). */
  label: string;
  /** True when the server refuses changes (StorageError "read-only"). */
  readOnly: boolean;
  /** The agent whose store it is ("pi", "omp", …), for stores found on the machine. */
  agent?: string;
  /** Set for a store of sample sessions (a `sessionkit-samples.json` at its root), not the user's own. */
  samples?: boolean;
}

/** The port to a served store: every StoragePort method, with changes pushed by the server (`watch`). */
export type HttpStorage = RpcStorage;

const DEFAULT_CHUNK_BYTES = 4 << 20;
/** Reads asking for this much or more (or for the whole file) go by fetch. */
const FETCH_READ_BYTES = 256 << 10;

const CODE_OF_STATUS: Record<number, StorageErrorCode> = { 400: "invalid", 403: "forbidden", 404: "not-found", 429: "limit", 501: "unsupported", 507: "quota" };

/**
 * A StoragePort for a store that `sessionkit serve` serves, in browsers and in Node: calls go over
 * one WebSocket, large reads by HTTP range requests. When the socket closes, every later call fails
 * with StorageError "io": make a new port to go on.
 *
 * @throws StorageError "unsupported" when there is no WebSocket (pass `options.WebSocket` in Node 20)
 */
export function httpStorage(options: HttpStorageOptions): HttpStorage {
  const Socket = options.WebSocket ?? (globalThis as { WebSocket?: new (url: string, protocols?: string[]) => WebSocketLike }).WebSocket;
  if (!Socket) throw new StorageError("unsupported", "httpStorage needs a WebSocket: pass options.WebSocket (e.g. the ws package's) where there is no global one");
  const url = new URL(`/api/stores/${encodeURIComponent(options.store)}/rpc`, options.url);
  url.protocol = url.protocol === "https:" ? "wss:" : "ws:";
  // Opened by the first call over it: a viewer's first screen reads through fetches and pays for no handshake.
  const endpoint = webSocketEndpoint(() => (options.token === undefined ? new Socket(url.href) : new Socket(url.href, tokenSubprotocols(options.token))));
  const client = rpcClientStorage(endpoint, {
    kind: "http",
    chunkBytes: options.chunkBytes ?? DEFAULT_CHUNK_BYTES,
    ...(options.timeoutMs === undefined ? {} : { timeoutMs: options.timeoutMs }),
  });
  const close = client.close.bind(client);
  const rpcRead = client.read.bind(client);
  const rpcStat = client.stat.bind(client);
  /** The size the last stat saw (a session is stat'ed, then read): lets a first block's successor be asked for with it. */
  let lastStat: { path: string; size: number } | undefined;
  /** This port's changes under way: a fetched read waits for them. */
  const changing = new Set<Promise<unknown>>();
  const track = <T>(operation: Promise<T>): Promise<T> => {
    changes++;
    blocks.retireAll();
    changing.add(operation);
    const done = () => changing.delete(operation);
    operation.then(done, done);
    return operation;
  };
  for (const op of ["append", "write", "truncate", "remove", "sync"] as const) {
    const original = (client[op] as (...args: unknown[]) => Promise<void>).bind(client);
    (client as unknown as Record<string, unknown>)[op] = (...args: unknown[]) => track(original(...args));
  }
  /** Bumped by every change this port makes: a block asked for before it is not read from after it. */
  let changes = 0;
  const blocks = new FetchBlocks((path, range) => fetchResponse(path, range));
  const fileUrl = (path: string) => new URL(`/api/stores/${encodeURIComponent(options.store)}/files/${path.split("/").map(encodeURIComponent).join("/")}`, options.url);
  return Object.assign(client, {
    async read(path: string, range?: ByteRange): Promise<Uint8Array | null> {
      checkStoragePath(path);
      checkByteRange(path, range);
      if (range?.length !== undefined && range.length < FETCH_READ_BYTES) return rpcRead(path, range);
      await Promise.allSettled([...changing]);
      if (range?.length === undefined || range.length > BLOCK_BYTES) return fetchRange(path, range);
      return blocks.read(path, range.offset, range.length, changes, fetchRange, lastStat?.path === path ? lastStat.size : undefined);
    },
    async stat(path: string): Promise<FileStat | null> {
      const info = await rpcStat(path);
      lastStat = info ? { path, size: info.size } : undefined;
      return info;
    },
    close: () => {
      blocks.retireAll();
      // A port never called has no socket: ending the endpoint ends the client without opening one to say goodbye.
      if (!endpoint.opened) endpoint.close();
      return close().finally(() => endpoint.close());
    },
  });

  /** A GET of the file, or of a range of it: the response; "missing" when there is no such file, "empty" for a range past its end. */
  async function fetchResponse(path: string, range?: ByteRange): Promise<Response | "missing" | "empty"> {
    const headers = authorization(options.token);
    if (range) headers.Range = `bytes=${range.offset}-${range.length === undefined ? "" : range.offset + range.length - 1}`;
    let response: Response;
    try {
      response = await fetch(fileUrl(path), { headers, credentials: "same-origin", cache: "no-store" });
    } catch (error) {
      throw new StorageError("io", `GET ${path}: ${String(error)}`, { path, cause: error });
    }
    if (response.status === 404) return "missing";
    if (response.status === 416) return "empty"; // a range past the end: clamped to nothing
    if (!response.ok) {
      const detail = await response.json().then((body: { error?: string }) => body.error, () => response.statusText);
      throw new StorageError(CODE_OF_STATUS[response.status] ?? "io", `GET ${path}: ${response.status} ${detail}`, { path });
    }
    return response;
  }

  async function fetchRange(path: string, range?: ByteRange): Promise<Uint8Array | null> {
    const response = await fetchResponse(path, range);
    if (response === "missing") return null;
    if (response === "empty") return new Uint8Array(0);
    return new Uint8Array(await response.arrayBuffer());
  }
}

/**
 * The stores a server exposes (`GET /api/stores`).
 *
 * @throws StorageError "io" when the server answers with an error status
 */
export async function listServedStores(options: { url: string; token?: string }): Promise<ServedStore[]> {
  const response = await fetch(new URL("/api/stores", options.url), { headers: authorization(options.token), credentials: "same-origin" });
  if (!response.ok) throw new StorageError("io", `GET /api/stores: ${response.status} ${await response.text()}`);
  return (await response.json()) as ServedStore[];
}

function authorization(token: string | undefined): Record<string, string> {
  return token === undefined ? {} : { Authorization: `Bearer ${token}` };
}
