/**
 * The /api routes of adapters/rpc/HTTP-API.md: the store list and, per store, one-shot rpc calls
 * (POST …/rpc), raw file bytes (GET …/files/<path>, ranges too), a change stream (GET
 * …/changes, Server-Sent Events), its sessions listed (GET …/sessions) and searched (GET
 * …/search, search-route.ts). Every other path is the viewer's files.
 */
import type { IncomingMessage, ServerResponse } from "node:http";
import { checkStoragePath } from "../../src/port.js";
import { decodeFrame, encodeFrame, FRAME_CONTENT_TYPE } from "../rpc/frame.js";
import { RPC_PROTOCOL, type RpcResponse, type RpcResponseBatch } from "../rpc/protocol.js";
import type { StorageServer } from "../rpc/server.js";
import { HttpError, STATUS_OF, allowMethods, boundedRange, decodeSegment, parseRange, readBody, securityHeaders, sendJson, unsatisfiableRange } from "./http.js";
import { answerSearch, type StoreSearch } from "./search-route.js";
import { viewerFileSender, type ViewerFiles } from "./static-files.js";

/** A store as the routes serve it: its rpc server, and what the store list says of it. */
export interface ServedStore {
  id: string;
  label: string;
  agent: string | undefined;
  /** The store holds sample sessions, not the user's. */
  samples: boolean;
  root: string;
  server: StorageServer;
  /** The store's sessions (`GET …/sessions`), JSON-serializable; null when the server lists none. */
  listSessions: (() => Promise<unknown>) | null;
  /** Search across its sessions (`GET …/search`); null when the server searches none. */
  searchSessions: StoreSearch | null;
}

/** Ranges up to this size are read in one port call (atomic); larger ones stream in pieces. */
const ATOMIC_READ_BYTES = 16 << 20;
/** Bytes per piece when a larger range streams out. */
const STREAM_PIECE_BYTES = 1 << 20;
/** Ops that only make sense on a connection that lives on (a WebSocket): refused by one-shot POSTs. */
const CONNECTION_OPS = new Set(["acquireLock", "releaseLock", "stage", "readMore", "watch", "unwatch", "renew", "close"]);

/** Answers an admitted request (throws HttpError or StorageError for the caller to send). */
export type Routes = (request: IncomingMessage, response: ServerResponse, url: URL) => Promise<void>;

export function routes(options: { stores: ReadonlyMap<string, ServedStore>; readOnly: boolean; viewer: ViewerFiles | null; maxMessageBytes: number }): Routes {
  const { stores, readOnly, viewer, maxMessageBytes } = options;
  const sendViewerFile = viewerFileSender(viewer);
  return async (request, response, url) => {
    const path = url.pathname;
    if (path === "/api/stores") {
      allowMethods(request, ["GET"]);
      return sendJson(response, 200, [...stores.values()].map(({ id, label, agent, samples }) => ({ id, label, readOnly, ...(agent === undefined ? {} : { agent }), ...(samples ? { samples } : {}) })));
    }
    const match = /^\/api\/stores\/([^/]+)\/(rpc|files|changes|sessions|search)(\/.*)?$/.exec(path);
    if (match) {
      const store = stores.get(decodeSegment(match[1]!));
      if (!store) throw new HttpError(404, `no store ${JSON.stringify(match[1])}`);
      if (match[2] === "rpc" && match[3] === undefined) return oneShotRpc(request, response, store, maxMessageBytes);
      if (match[2] === "files" && match[3] !== undefined) return sendFile(request, response, store, storagePathOf(match[3]));
      if (match[2] === "changes" && match[3] === undefined) return changeStream(request, response, store, url.searchParams.get("dir") ?? "");
      if (match[2] === "sessions" && match[3] === undefined) {
        allowMethods(request, ["GET"]);
        if (!store.listSessions) throw new HttpError(404, "this server lists no sessions: list them through the rpc");
        return sendJson(response, 200, await store.listSessions());
      }
      if (match[2] === "search" && match[3] === undefined) return answerSearch(request, response, url, store.searchSessions);
    }
    if (path.startsWith("/api/")) throw new HttpError(404, `no API ${path}`);
    allowMethods(request, ["GET", "HEAD"]);
    return sendViewerFile(response, path);
  };
}

/** POST …/rpc: one request or a batch in a frame, answered in a frame; nothing that needs a connection. */
async function oneShotRpc(request: IncomingMessage, response: ServerResponse, store: ServedStore, maxMessageBytes: number): Promise<void> {
  allowMethods(request, ["POST"]);
  const body = await readBody(request, maxMessageBytes);
  let message: object;
  try {
    message = decodeFrame(body);
  } catch (error) {
    throw new HttpError(400, (error as Error).message);
  }
  const singles = Array.isArray((message as { requests?: unknown }).requests) ? ((message as { requests: unknown[] }).requests) : [message];
  const needsConnection = singles.find((single) => CONNECTION_OPS.has(String((single as { call?: { op?: unknown } } | null)?.call?.op)));
  if (needsConnection) throw new HttpError(400, `${String((needsConnection as { call: { op: unknown } }).call.op)} needs a connection: use the WebSocket at the same path`);
  const connection = store.server.connect();
  try {
    const answer: RpcResponse | RpcResponseBatch = "requests" in message ? await connection.handleBatch(message) : await connection.handle(message);
    const status = "ok" in answer ? (answer.ok ? 200 : STATUS_OF[answer.error.code]) : refusedAsWhole(answer) ? STATUS_OF.limit : 200;
    response.writeHead(status, { "Content-Type": FRAME_CONTENT_TYPE, ...securityHeaders });
    response.end(encodeFrame(answer));
  } finally {
    await connection.close();
  }
}

/** A batch the server refused for its size: every request in it failed with "limit". */
function refusedAsWhole(batch: RpcResponseBatch): boolean {
  return batch.responses.length > 0 && batch.responses.every((response) => !response.ok && response.error.code === "limit");
}

/** GET …/files/<path>: the bytes, streamed in pieces; `Range: bytes=a-b` gives part of them. */
async function sendFile(request: IncomingMessage, response: ServerResponse, store: ServedStore, path: string): Promise<void> {
  allowMethods(request, ["GET", "HEAD"]);
  const connection = store.server.connect();
  try {
    const call = async <T>(op: Record<string, unknown>): Promise<T> => {
      const answer = await connection.handle({ protocol: RPC_PROTOCOL, id: 1, call: op });
      if (!answer.ok) throw new HttpError(STATUS_OF[answer.error.code], answer.error.message);
      return answer.result as T;
    };
    const stat = () => call<{ size: number; mtimeMs: number } | null>({ op: "stat", path });
    const bounded = request.method === "GET" ? boundedRange(request.headers.range, ATOMIC_READ_BYTES) : null;
    if (bounded) {
      // A range named by both ends, small enough for one port call (httpStorage asks only these):
      // read at once, with the stat beside it (for Last-Modified and a 416's size), not after it.
      const [info, part] = await Promise.all([stat(), call<{ data: Uint8Array } | null>({ op: "read", path, range: { offset: bounded[0], length: bounded[1] - bounded[0] }, maxBytes: Number.MAX_SAFE_INTEGER })]);
      if (!info || !part) throw new HttpError(404, `no file ${path}`);
      // Empty: the file ended at or before the range's start when it was read.
      if (part.data.length === 0) throw unsatisfiableRange(request.headers.range!, info.size, "starts at or past the end");
      response.writeHead(206, fileHeaders(info.mtimeMs, part.data.length, `bytes ${bounded[0]}-${bounded[0] + part.data.length - 1}/*`));
      return void response.end(part.data);
    }
    const info = await stat();
    if (!info) throw new HttpError(404, `no file ${path}`);
    const range = parseRange(request.headers.range, info.size);
    const [start, end] = range ?? [0, info.size];
    const headers = (length: number, total: number | "*") =>
      fileHeaders(info.mtimeMs, length, range && length > 0 ? `bytes ${start}-${start + length - 1}/${total}` : undefined);
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
}

/** The headers of a file's bytes (or of part of them, with its Content-Range). */
function fileHeaders(mtimeMs: number, length: number, contentRange: string | undefined): Record<string, string> {
  return {
    "Content-Type": "application/octet-stream",
    "Content-Length": String(length),
    "Accept-Ranges": "bytes",
    "Last-Modified": new Date(mtimeMs).toUTCString(),
    ...(contentRange === undefined ? {} : { "Content-Range": contentRange }),
    ...securityHeaders,
    // Session text is untrusted: never rendered or run as a document of this origin.
    "Content-Security-Policy": "sandbox; default-src 'none'",
  };
}

/** GET …/changes?dir=D: Server-Sent Events, one `{"paths":[…]}` per batch of changes. */
async function changeStream(request: IncomingMessage, response: ServerResponse, store: ServedStore, dir: string): Promise<void> {
  allowMethods(request, ["GET"]);
  const connection = store.server.connect({
    push: (push) => {
      // A client that does not take its events is dropped once they would pile up past its cap.
      if (response.writableLength > store.server.limits.maxHeldBytes) return void response.destroy();
      response.write(`data: ${JSON.stringify({ paths: push.paths })}\n\n`);
    },
  });
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
