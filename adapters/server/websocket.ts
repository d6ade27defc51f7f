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
  /** Takes an upgrade request that `admit` lets through (returning its URL), or answers it with its error status. */
  upgrade(request: IncomingMessage, socket: Duplex, head: Buffer, admit: () => URL): void;
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
    const { maxHeldBytes, maxBatchRequests } = store.server.limits;
    /** Messages received but not handed to the connection yet (the socket is paused meanwhile). */
    const waiting: Uint8Array[] = [];
    /** Requests handed to the connection and not answered yet, and the bytes of their messages. */
    let requestsUnderWay = 0;
    let bytesUnderWay = 0;
    // Backpressure: while the client leaves its replies unread, or has this much under way, the
    // server takes no more of its messages (and stops reading its socket).
    const congested = () => ws.bufferedAmount > maxHeldBytes || bytesUnderWay > maxHeldBytes || requestsUnderWay >= maxBatchRequests;
    const pump = () => {
      while (waiting.length > 0 && !congested()) dispatch(waiting.shift()!);
      if (waiting.length > 0 || congested()) ws.pause();
      else ws.resume();
    };
    const send = (message: unknown) => {
      if (ws.readyState === ws.OPEN) ws.send(encodeFrame(message), pump);
    };
    const connection: ClientConnection = store.server.connect({ push: send });
    const dispatch = (frame: Uint8Array) => {
      let message: object;
      try {
        message = decodeFrame(frame);
      } catch (error) {
        return send(errorResponse(null, error as StorageError));
      }
      const requests = (message as { requests?: unknown }).requests;
      const count = Array.isArray(requests) ? requests.length : 1;
      requestsUnderWay += count;
      bytesUnderWay += frame.length;
      const answering = requests !== undefined ? connection.handleBatch(message) : connection.handle(message);
      void answering.then((answer) => {
        requestsUnderWay -= count;
        bytesUnderWay -= frame.length;
        send(answer);
        pump();
      });
    };
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
      waiting.push(toBytes(data));
      pump();
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
    upgrade(request, socket, head, admit) {
      try {
        const url = admit();
        const match = /^\/api\/stores\/([^/]+)\/rpc$/.exec(url.pathname);
        const store = match ? stores.get(decodeSegment(match[1]!)) : undefined;
        if (!store) throw new HttpError(404, `no WebSocket at ${url.pathname}`);
        sockets.handleUpgrade(request, socket, head, (ws) => serveSocket(ws, store));
      } catch (error) {
        const status = error instanceof HttpError ? error.status : 500;
        // Closed once the answer is out, as ws does: a socket only ended stays open while its client
        // sends on (nobody reads it), for ever, and the server could not stop.
        socket.once("finish", () => socket.destroy());
        socket.end(`HTTP/1.1 ${status} ${status === 400 ? "Bad Request" : status === 401 ? "Unauthorized" : status === 403 ? "Forbidden" : status === 404 ? "Not Found" : "Error"}\r\nConnection: close\r\nContent-Length: 0\r\n\r\n`);
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
