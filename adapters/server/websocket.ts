/**
 * The storage rpc over WebSockets at /api/stores/<id>/rpc: each socket is one rpc client, whose
 * locks and transfers live as long as it answers pings (the lease).
 */
import type { IncomingMessage } from "node:http";
import type { Duplex } from "node:stream";
import { WebSocketServer, type WebSocket } from "ws";
import { StorageError } from "../../src/port.js";
import { decodeFrame, encodeFrame } from "../rpc/frame.js";
import { errorResponse } from "../rpc/protocol.js";
import type { ClientConnection } from "../rpc/server.js";
import { HttpError, decodeSegment } from "./http.js";
import type { ServedStore } from "./routes.js";

export interface RpcSockets {
  /** Takes an upgrade request that `admit` let through, or answers it with its error status. */
  upgrade(request: IncomingMessage, socket: Duplex, head: Buffer, url: URL, admit: () => void): void;
  /** Open sockets. */
  readonly clientCount: number;
  /** Drops every socket (their connections end, their locks are released). */
  close(): void;
}

export function rpcSockets(options: { stores: ReadonlyMap<string, ServedStore>; leaseMs: number; maxMessageBytes: number }): RpcSockets {
  const { stores, leaseMs } = options;
  const sockets = new WebSocketServer({ noServer: true, maxPayload: options.maxMessageBytes });
  const clients = new Set<WebSocket>();

  const serveSocket = (ws: WebSocket, store: ServedStore): void => {
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

  return {
    upgrade(request, socket, head, url, admit) {
      try {
        admit();
        const match = /^\/api\/stores\/([^/]+)\/rpc$/.exec(url.pathname);
        const store = match ? stores.get(decodeSegment(match[1]!)) : undefined;
        if (!store) throw new HttpError(404, `no WebSocket at ${url.pathname}`);
        sockets.handleUpgrade(request, socket, head, (ws) => serveSocket(ws, store));
      } catch (error) {
        const status = error instanceof HttpError ? error.status : 500;
        socket.end(`HTTP/1.1 ${status} ${status === 401 ? "Unauthorized" : status === 403 ? "Forbidden" : status === 404 ? "Not Found" : "Error"}\r\nConnection: close\r\nContent-Length: 0\r\n\r\n`);
      }
    },
    get clientCount() {
      return clients.size;
    },
    close() {
      for (const ws of clients) ws.terminate();
      sockets.close();
    },
  };
}

function toBytes(data: Buffer | ArrayBuffer | Buffer[]): Uint8Array {
  if (Array.isArray(data)) return Buffer.concat(data);
  return data instanceof ArrayBuffer ? new Uint8Array(data) : data;
}
