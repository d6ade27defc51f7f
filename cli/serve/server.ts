/**
 * The HTTP server behind `sessionkit serve`: the viewer's built files and, per store, the storage
 * rpc over a WebSocket, raw file bytes, one-shot rpc calls and a change stream (./HTTP-API.md).
 *
 * Every request must carry the access token (query `token`, `Authorization: Bearer`, or the
 * cookie a page load with the token sets) and a `Host` (and `Origin`, when sent) naming this
 * server: a page of another site, or a DNS name rebound to 127.0.0.1, gets nothing. Stores expose
 * only `sessions/` and `blobs/` (pi's agent dir also holds credentials) and are read-only unless
 * asked. Each WebSocket is one rpc client: its locks and transfers live as long as it answers pings.
 */
import { randomBytes, timingSafeEqual } from "node:crypto";
import { createHash } from "node:crypto";
import { readFile, stat } from "node:fs/promises";
import { createServer, type IncomingMessage, type ServerResponse } from "node:http";
import { networkInterfaces } from "node:os";
import nodePath from "node:path";
import type { Duplex } from "node:stream";
import { WebSocketServer, type WebSocket } from "ws";
import { mountedStorage } from "../../adapters/mounted.js";
import { nodeFsStorage } from "../../adapters/node-fs/index.js";
import { createStorageServer, type ClientConnection, type StorageServer } from "../../adapters/rpc/server.js";
import { decodeFrame, encodeFrame, FRAME_CONTENT_TYPE } from "../../adapters/rpc/frame.js";
import { RPC_PROTOCOL, errorResponse, type RpcResponse, type RpcResponseBatch } from "../../adapters/rpc/protocol.js";
import { StorageError, checkStoragePath, type StorageErrorCode, type StoragePort } from "../../src/port.js";
import { APP_CSP_HEADER } from "../../web-demo/app-csp.js";
import { KIT_DIR } from "../store-cache.js";
import { isSampleStore } from "./sample-store.js";

export type StoreConfig = (
  | {
      /** The directory holding sessions/ and blobs/. */
      root: string;
    }
  | {
      /** A store opened by the caller (a database); the server closes it when it closes. */
      storage: StoragePort & { close(): Promise<void> };
      /** How the store is named (a URL without its password): its id derives from it. */
      root: string;
    }
) & {
  /** What the page shows for it; default the root. */
  label?: string;
  /** The agent whose store it is ("pi", "omp", …), when known. */
  agent?: string;
  /**
   * Where the store's `.sessionkit/` (listing catalog, search index) lives: a cache directory of
   * the user's, mounted over the store, so clients keep their caches without writing into the
   * agent's folder, even when the store is served read-only. Default: inside the store.
   */
  cacheDir?: string;
};

export interface ServeOptions {
  stores: StoreConfig[];
  /** Interface to listen on; default 127.0.0.1. */
  host?: string;
  /** Port; 0 picks a free one. Default 4174. */
  port?: number;
  /** Allow changes (appends, writes, locks); default read-only. */
  write?: boolean;
  /** The access token; default 32 random bytes. */
  token?: string;
  /** The viewer's built files; null serves none. */
  viewerDir?: string | null;
  /** Other origins whose pages may call the API (a dev server); default none. */
  allowOrigins?: readonly string[];
  /** A WebSocket client that has not answered a ping for this long is dropped, its locks released. Default 10 s. */
  leaseMs?: number;
  /** The largest request body or WebSocket message; default 16 MiB. */
  maxMessageBytes?: number;
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
export const SERVED_PATHS = ["sessions", "blobs", ".sessionkit"] as const;
const DEFAULT_PORT = 4174;
const DEFAULT_LEASE_MS = 10_000;
const DEFAULT_MAX_MESSAGE_BYTES = 16 << 20;
/** Ranges up to this size are read in one port call (atomic); larger ones stream in pieces. */
const ATOMIC_READ_BYTES = 16 << 20;
/** Bytes per piece when a larger range streams out. */
const STREAM_PIECE_BYTES = 1 << 20;
/** Ops that only make sense on a connection that lives on (a WebSocket): refused by one-shot POSTs. */
const CONNECTION_OPS = new Set(["acquireLock", "releaseLock", "stage", "readMore", "watch", "unwatch", "renew", "close"]);

interface Store {
  id: string;
  label: string;
  agent: string | undefined;
  /** The store holds sample sessions (sample-store.ts), not the user's. */
  samples: boolean;
  root: string;
  storage: StoragePort;
  server: StorageServer;
}

const STATUS_OF: Record<StorageErrorCode, number> = {
  "not-found": 404,
  quota: 507,
  locked: 409,
  corrupt: 500,
  io: 500,
  unsupported: 501,
  invalid: 400,
  "read-only": 403,
  forbidden: 403,
};

class HttpError extends Error {
  constructor(
    readonly status: number,
    message: string,
  ) {
    super(message);
  }
}

export async function startServe(options: ServeOptions): Promise<RunningServer> {
  const host = options.host ?? "127.0.0.1";
  const token = options.token ?? randomBytes(32).toString("base64url");
  const readOnly = !(options.write ?? false);
  const leaseMs = options.leaseMs ?? DEFAULT_LEASE_MS;
  const maxMessageBytes = options.maxMessageBytes ?? DEFAULT_MAX_MESSAGE_BYTES;
  const viewerDir = options.viewerDir ? nodePath.resolve(options.viewerDir) : null;
  const stores = new Map<string, Store>();
  for (const config of options.stores) {
    const root = "storage" in config ? config.root : nodePath.resolve(config.root);
    const base = "storage" in config ? config.storage : nodeFsStorage({ root });
    const storage = config.cacheDir === undefined ? base : mountedStorage(base, { [KIT_DIR]: nodeFsStorage({ root: config.cacheDir }) });
    const id = storeId(root, stores);
    // The kit's caches stay writable on a read-only store when they are not in an agent's folder:
    // mounted from the user's cache dir, or a database's own (it has no agent writing beside them).
    const writablePaths = config.cacheDir !== undefined || "storage" in config ? [KIT_DIR] : [];
    const samples = !("storage" in config) && (await isSampleStore(root));
    stores.set(id, { id, label: config.label ?? root, agent: config.agent, samples, root, storage, server: createStorageServer(storage, { readOnly, paths: SERVED_PATHS, writablePaths }) });
  }

  const http = createServer();
  const sockets = new WebSocketServer({ noServer: true, maxPayload: maxMessageBytes });
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
  const hostPart = shown.includes(":") ? `[${shown}]` : shown;
  const origin = `http://${hostPart}:${port}`;
  const cookieName = `sessionkit-${port}`;
  const allowedHosts = hostNames(host, port);
  const allowedOrigins = new Set([...[...allowedHosts].map((name) => `http://${name}`), ...(options.allowOrigins ?? []).map((o) => new URL(o).origin)]);

  /** Host, Origin, token: throws HttpError unless the request may go on. */
  const admit = (request: IncomingMessage, url: URL): void => {
    if (!allowedHosts.has((request.headers.host ?? "").toLowerCase())) throw new HttpError(403, `the Host header ${JSON.stringify(request.headers.host ?? "")} does not name this server`);
    const from = request.headers.origin;
    if (from !== undefined && !allowedOrigins.has(from)) throw new HttpError(403, `pages of origin ${JSON.stringify(from)} may not use this server (sessionkit serve --allow-origin allows them)`);
    const given = url.searchParams.get("token") ?? bearer(request) ?? cookie(request, cookieName);
    if (given === undefined || given === null) throw new HttpError(401, "no access token (open the URL sessionkit serve printed)");
    if (!sameSecret(given, token)) throw new HttpError(401, "wrong access token");
  };

  const clients = new Set<WebSocket>();

  http.on("request", (request: IncomingMessage, response: ServerResponse) => {
    void (async () => {
      const url = new URL(request.url ?? "/", origin);
      try {
        admit(request, url);
        const from = request.headers.origin;
        if (from !== undefined && from !== origin) response.setHeader("Access-Control-Allow-Origin", from);
        if (request.method === "OPTIONS") return preflight(response);
        if (url.searchParams.has("token")) response.setHeader("Set-Cookie", `${cookieName}=${token}; HttpOnly; SameSite=Strict; Path=/`);
        await route(request, response, url);
      } catch (error) {
        fail(response, error);
      }
    })();
  });

  const route = async (request: IncomingMessage, response: ServerResponse, url: URL): Promise<void> => {
    const path = url.pathname;
    if (path === "/api/stores") {
      allowMethods(request, ["GET"]);
      return sendJson(response, 200, [...stores.values()].map(({ id, label, agent, samples }) => ({ id, label, readOnly, ...(agent === undefined ? {} : { agent }), ...(samples ? { samples } : {}) })));
    }
    const match = /^\/api\/stores\/([^/]+)\/(rpc|files|changes)(\/.*)?$/.exec(path);
    if (match) {
      const store = stores.get(decodeSegment(match[1]!));
      if (!store) throw new HttpError(404, `no store ${JSON.stringify(match[1])}`);
      if (match[2] === "rpc" && match[3] === undefined) return oneShotRpc(request, response, store);
      if (match[2] === "files" && match[3] !== undefined) return sendFile(request, response, store, storagePathOf(match[3]));
      if (match[2] === "changes" && match[3] === undefined) return changeStream(request, response, store, url.searchParams.get("dir") ?? "");
    }
    if (path.startsWith("/api/")) throw new HttpError(404, `no API ${path}`);
    allowMethods(request, ["GET", "HEAD"]);
    return sendViewerFile(response, viewerDir, path);
  };

  /** POST …/rpc: one request or a batch in a frame, answered in a frame; nothing that needs a connection. */
  const oneShotRpc = async (request: IncomingMessage, response: ServerResponse, store: Store): Promise<void> => {
    allowMethods(request, ["POST"]);
    const body = await readBody(request, maxMessageBytes);
    let message: unknown;
    try {
      message = decodeFrame(body);
    } catch (error) {
      throw new HttpError(400, (error as Error).message);
    }
    const singles = Array.isArray((message as { requests?: unknown })?.requests) ? ((message as { requests: unknown[] }).requests) : [message];
    const needsConnection = singles.find((single) => CONNECTION_OPS.has(String((single as { call?: { op?: unknown } } | null)?.call?.op)));
    if (needsConnection) throw new HttpError(400, `${String((needsConnection as { call: { op: unknown } }).call.op)} needs a connection: use the WebSocket at the same path`);
    const connection = store.server.connect();
    try {
      const answer: RpcResponse | RpcResponseBatch = "requests" in (message as object) ? await connection.handleBatch(message) : await connection.handle(message);
      const status = "ok" in answer && !answer.ok ? STATUS_OF[answer.error.code] : 200;
      response.writeHead(status, { "Content-Type": FRAME_CONTENT_TYPE, ...securityHeaders });
      response.end(encodeFrame(answer));
    } finally {
      await connection.close();
    }
  };

  /** GET …/files/<path>: the bytes, streamed in pieces; `Range: bytes=a-b` gives part of them. */
  const sendFile = async (request: IncomingMessage, response: ServerResponse, store: Store, path: string): Promise<void> => {
    allowMethods(request, ["GET", "HEAD"]);
    const connection = store.server.connect();
    try {
      const call = async <T>(op: Record<string, unknown>): Promise<T> => {
        const answer = await connection.handle({ protocol: RPC_PROTOCOL, id: 1, call: op });
        if (!answer.ok) throw new HttpError(STATUS_OF[answer.error.code], answer.error.message);
        return answer.result as T;
      };
      const info = await call<{ size: number; mtimeMs: number } | null>({ op: "stat", path });
      if (!info) throw new HttpError(404, `no file ${path}`);
      const range = parseRange(request.headers.range, info.size);
      const [start, end] = range ?? [0, info.size];
      const headers = (length: number, total: number | "*") => ({
        "Content-Type": "application/octet-stream",
        "Content-Length": String(length),
        "Accept-Ranges": "bytes",
        "Last-Modified": new Date(info.mtimeMs).toUTCString(),
        ...(range && length > 0 ? { "Content-Range": `bytes ${start}-${start + length - 1}/${total}` } : {}),
        ...securityHeaders,
        // Session text is untrusted: never rendered or run as a document of this origin.
        "Content-Security-Policy": "sandbox; default-src 'none'",
      });
      if (request.method === "HEAD") {
        response.writeHead(range ? 206 : 200, headers(end - start, info.size));
        return void response.end();
      }
      if (end - start <= ATOMIC_READ_BYTES) {
        // One port read, sized by the file as it is then: the bytes of one moment (a concurrent
        // atomic write shows old or new, never a mix).
        const whole = await call<{ data: Uint8Array } | null>({ op: "read", path, ...(range ? { range: { offset: start, length: end - start } } : {}), maxBytes: Number.MAX_SAFE_INTEGER });
        if (!whole) throw new HttpError(404, `no file ${path}`);
        response.writeHead(range ? 206 : 200, headers(whole.data.length, "*"));
        return void response.end(whole.data);
      }
      response.writeHead(range ? 206 : 200, headers(end - start, info.size));
      for (let offset = start; offset < end; offset += STREAM_PIECE_BYTES) {
        const piece = await call<{ data: Uint8Array } | null>({ op: "read", path, range: { offset, length: Math.min(STREAM_PIECE_BYTES, end - offset) }, maxBytes: STREAM_PIECE_BYTES });
        const now = await call<{ size: number; mtimeMs: number } | null>({ op: "stat", path });
        // Files only grow by appends; a shorter or replaced file mid-stream cannot be sent as one.
        if (!piece || !now || now.size < end || (now.mtimeMs !== info.mtimeMs && now.size < info.size)) return void response.destroy(new Error(`${path} changed while it was sent`));
        if (piece.data.length === 0) return void response.destroy(new Error(`${path} ended early`));
        if (!response.write(piece.data)) await new Promise((resolve) => response.once("drain", resolve));
        if (response.destroyed) return;
      }
      response.end();
    } finally {
      await connection.close();
    }
  };

  /** GET …/changes?dir=D: Server-Sent Events, one `{"paths":[…]}` per batch of changes. */
  const changeStream = async (request: IncomingMessage, response: ServerResponse, store: Store, dir: string): Promise<void> => {
    allowMethods(request, ["GET"]);
    const connection = store.server.connect({ push: (push) => response.write(`data: ${JSON.stringify({ paths: push.paths })}\n\n`) });
    const answer = await connection.handle({ protocol: RPC_PROTOCOL, id: 1, call: { op: "watch", watchId: "changes", dir } });
    if (!answer.ok) {
      await connection.close();
      throw new HttpError(STATUS_OF[answer.error.code], answer.error.message);
    }
    response.writeHead(200, { "Content-Type": "text/event-stream", ...securityHeaders });
    response.write(": watching\n\n");
    const keepAlive = setInterval(() => response.write(": keep-alive\n\n"), 15_000);
    request.socket.once("close", () => {
      clearInterval(keepAlive);
      void connection.close("the change stream closed");
    });
  };

  http.on("upgrade", (request: IncomingMessage, socket: Duplex, head: Buffer) => {
    const url = new URL(request.url ?? "/", origin);
    try {
      admit(request, url);
      const match = /^\/api\/stores\/([^/]+)\/rpc$/.exec(url.pathname);
      const store = match ? stores.get(decodeSegment(match[1]!)) : undefined;
      if (!store) throw new HttpError(404, `no WebSocket at ${url.pathname}`);
      sockets.handleUpgrade(request, socket, head, (ws) => serveSocket(ws, store));
    } catch (error) {
      const status = error instanceof HttpError ? error.status : 500;
      socket.end(`HTTP/1.1 ${status} ${status === 401 ? "Unauthorized" : status === 403 ? "Forbidden" : status === 404 ? "Not Found" : "Error"}\r\nConnection: close\r\nContent-Length: 0\r\n\r\n`);
    }
  });

  const serveSocket = (ws: WebSocket, store: Store): void => {
    clients.add(ws);
    const send = (message: unknown) => {
      if (ws.readyState === ws.OPEN) ws.send(encodeFrame(message));
    };
    const connection: ClientConnection = store.server.connect({ push: send });
    // The lease: a client that answers no ping for `leaseMs` is gone (crashed, frozen, cut off).
    let answered = true;
    ws.on("pong", () => (answered = true));
    const pinger = setInterval(() => {
      if (!answered) return ws.terminate();
      answered = false;
      ws.ping();
    }, leaseMs / 2);
    ws.on("message", (data, isBinary) => {
      if (!isBinary) return ws.close(1003, "the storage rpc speaks binary frames");
      let message: unknown;
      try {
        message = decodeFrame(toBytes(data));
      } catch (error) {
        return send(errorResponse(null, error as StorageError));
      }
      const answering = (message as { requests?: unknown } | null)?.requests !== undefined ? connection.handleBatch(message) : connection.handle(message);
      void answering.then(send);
    });
    // A message over maxPayload, a bad frame: ws reports it here and closes the socket (1009, 1002).
    ws.on("error", () => {});
    ws.on("close", () => {
      clients.delete(ws);
      clearInterval(pinger);
      void connection.close("the client's WebSocket closed");
    });
  };

  let closing: Promise<void> | undefined;
  return {
    url: `${origin}/?token=${token}`,
    origin,
    port,
    token,
    stores: [...stores.values()].map(({ id, label, root }) => ({ id, label, readOnly, root })),
    get clientCount() {
      return clients.size;
    },
    close: () =>
      (closing ??= (async () => {
        for (const ws of clients) ws.terminate();
        await Promise.all([...stores.values()].map((store) => store.server.close()));
        sockets.close();
        http.closeAllConnections();
        await new Promise<void>((resolve) => http.close(() => resolve()));
        await Promise.all([...stores.values()].map((store) => store.storage.close?.()));
      })()),
  };
}

const securityHeaders = {
  "X-Content-Type-Options": "nosniff",
  "Referrer-Policy": "no-referrer",
  "Cache-Control": "no-store",
  "X-Frame-Options": "DENY",
};

/** The Host values that name this server: the address it listens on (every local one for 0.0.0.0 / ::), and localhost on loopback. */
function hostNames(host: string, port: number): Set<string> {
  const names = new Set<string>();
  const add = (address: string) => names.add(`${address.includes(":") ? `[${address}]` : address}:${port}`.toLowerCase());
  add(host);
  const all = host === "0.0.0.0" || host === "::";
  if (all) for (const list of Object.values(networkInterfaces())) for (const info of list ?? []) add(info.address);
  if (all || isLoopback(host)) {
    add("localhost");
    add("127.0.0.1");
  }
  return names;
}

export function isLoopback(host: string): boolean {
  return host === "localhost" || host === "::1" || /^127\.\d+\.\d+\.\d+$/.test(host);
}

function storeId(root: string, taken: Map<string, Store>): string {
  const base = nodePath.basename(root).replace(/[^A-Za-z0-9_-]+/g, "-").replace(/^-+|-+$/g, "") || "store";
  const id = `${base}-${createHash("sha256").update(root).digest("hex").slice(0, 6)}`;
  let unique = id;
  for (let n = 2; taken.has(unique); n++) unique = `${id}-${n}`;
  return unique;
}

function bearer(request: IncomingMessage): string | undefined {
  const header = request.headers.authorization;
  return header?.startsWith("Bearer ") ? header.slice("Bearer ".length) : undefined;
}

function cookie(request: IncomingMessage, name: string): string | undefined {
  for (const part of (request.headers.cookie ?? "").split(";")) {
    const [key, ...value] = part.trim().split("=");
    if (key === name) return value.join("=");
  }
  return undefined;
}

function sameSecret(given: string, token: string): boolean {
  const a = Buffer.from(given);
  const b = Buffer.from(token);
  return a.length === b.length && timingSafeEqual(a, b);
}

function allowMethods(request: IncomingMessage, methods: string[]): void {
  if (!methods.includes(request.method ?? "")) throw new HttpError(405, `${request.method} is not allowed here (${methods.join(", ")})`);
}

function preflight(response: ServerResponse): void {
  response.writeHead(204, {
    "Access-Control-Allow-Methods": "GET, POST",
    "Access-Control-Allow-Headers": "Authorization, Content-Type, Range",
    "Access-Control-Max-Age": "600",
  });
  response.end();
}

function decodeSegment(segment: string): string {
  try {
    return decodeURIComponent(segment);
  } catch {
    throw new HttpError(400, `malformed percent-encoding in ${JSON.stringify(segment)}`);
  }
}

/** "/sessions/a%20b/x.jsonl" → "sessions/a b/x.jsonl"; a decoded "/" or "\" inside a segment, "..", "." are refused. */
function storagePathOf(urlPath: string): string {
  const segments = urlPath.slice(1).split("/").map(decodeSegment);
  if (segments.some((segment) => segment.includes("/") || segment.includes("\\"))) throw new HttpError(400, `a path segment may not hold "/" or "\\" (${JSON.stringify(urlPath)})`);
  try {
    return checkStoragePath(segments.join("/"));
  } catch (error) {
    throw new HttpError(400, (error as Error).message);
  }
}

function parseRange(header: string | undefined, size: number): [number, number] | null {
  if (header === undefined) return null;
  const match = /^bytes=(\d*)-(\d*)$/.exec(header.trim());
  if (!match || (match[1] === "" && match[2] === "")) throw new HttpError(416, `unsupported Range ${JSON.stringify(header)} (one range: bytes=a-b)`);
  const [start, end] =
    match[1] === "" ? [Math.max(0, size - Number(match[2])), size] : [Number(match[1]), match[2] === "" ? size : Math.min(size, Number(match[2]) + 1)];
  if (start >= size && size > 0) throw new HttpError(416, `the range ${header} starts past the end (${size} bytes)`);
  return [start, Math.max(start, end)];
}

async function readBody(request: IncomingMessage, limit: number): Promise<Uint8Array> {
  const declared = Number(request.headers["content-length"] ?? NaN);
  if (declared > limit) throw new HttpError(413, `the body (${declared} bytes) is over the limit of ${limit} bytes`);
  const parts: Buffer[] = [];
  let size = 0;
  for await (const part of request as AsyncIterable<Buffer>) {
    size += part.length;
    if (size > limit) throw new HttpError(413, `the body is over the limit of ${limit} bytes`);
    parts.push(part);
  }
  return Buffer.concat(parts);
}

function toBytes(data: Buffer | ArrayBuffer | Buffer[]): Uint8Array {
  if (Array.isArray(data)) return Buffer.concat(data);
  return data instanceof ArrayBuffer ? new Uint8Array(data) : data;
}

function sendJson(response: ServerResponse, status: number, value: unknown): void {
  response.writeHead(status, { "Content-Type": "application/json; charset=utf-8", ...securityHeaders });
  response.end(JSON.stringify(value));
}

function fail(response: ServerResponse, error: unknown): void {
  const status = error instanceof HttpError ? error.status : error instanceof StorageError ? STATUS_OF[error.code] : 500;
  const message = error instanceof Error ? error.message : String(error);
  if (response.headersSent) return void response.destroy();
  response.setHeader("Connection", "close");
  sendJson(response, status, { error: message });
}

const CONTENT_TYPES: Record<string, string> = {
  ".html": "text/html; charset=utf-8",
  ".js": "text/javascript; charset=utf-8",
  ".mjs": "text/javascript; charset=utf-8",
  ".css": "text/css; charset=utf-8",
  ".json": "application/json; charset=utf-8",
  ".svg": "image/svg+xml",
  ".png": "image/png",
  ".ico": "image/x-icon",
  ".woff2": "font/woff2",
  ".wasm": "application/wasm",
  ".map": "application/json; charset=utf-8",
  ".txt": "text/plain; charset=utf-8",
};

async function sendViewerFile(response: ServerResponse, viewerDir: string | null, urlPath: string): Promise<void> {
  if (viewerDir === null) throw new HttpError(404, "this server serves no viewer");
  const relative = urlPath === "/" ? "index.html" : decodeSegment(urlPath.slice(1));
  const file = nodePath.resolve(viewerDir, relative);
  if (!file.startsWith(viewerDir + nodePath.sep)) throw new HttpError(400, `${JSON.stringify(urlPath)} is outside the viewer`);
  const info = await stat(file).catch(() => null);
  if (!info?.isFile()) {
    if (urlPath === "/") throw new HttpError(404, `the viewer is not built (no ${file}): run npx vite build web-demo`);
    throw new HttpError(404, `no file ${urlPath}`);
  }
  const extension = nodePath.extname(file);
  // The page's policy as a header too: it adds frame-ancestors, which a meta tag cannot set.
  const policy = extension === ".html" ? { "Content-Security-Policy": APP_CSP_HEADER } : {};
  response.writeHead(200, { "Content-Type": CONTENT_TYPES[extension] ?? "application/octet-stream", ...securityHeaders, ...policy });
  response.end(await readFile(file));
}
