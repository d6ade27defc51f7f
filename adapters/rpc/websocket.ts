/**
 * A WebSocket as a MessageEndpoint for the storage rpc: each message is one binary frame
 * (./frame.ts). Messages posted while the socket connects are sent once it is open; when it closes
 * or fails, the endpoint reports "close" (the rpc client then fails its calls with "io").
 */
import type { MessageEndpoint } from "./endpoint.js";
import { decodeFrame, encodeFrame } from "./frame.js";

/** What the endpoint uses of a WebSocket: the browser's, Node 22's, or the `ws` package's. */
export interface WebSocketLike {
  /** Set to "arraybuffer" by the endpoint: frames arrive as ArrayBuffers. */
  binaryType: string;
  /** 0 connecting, 1 open, 2 closing, 3 closed (the WebSocket constants). */
  readonly readyState: number;
  /** Sends one binary message. */
  send(data: Uint8Array): void;
  /** Closes the socket. */
  close(code?: number, reason?: string): void;
  /** Listens for the socket's events. */
  addEventListener(type: "open" | "message" | "close" | "error", listener: (event: { data?: unknown }) => void): void;
}

const CONNECTING = 0;
const OPEN = 1;

/** The subprotocol a server of the storage rpc answers a token-carrying WebSocket with. */
const RPC_SUBPROTOCOL = "sessionkit-rpc";
/** Starts the subprotocol that carries the access token, in hex: browsers set no headers on a WebSocket, and hex fits any token into a subprotocol name. */
export const TOKEN_SUBPROTOCOL_PREFIX = "sessionkit-token.";

/**
 * The subprotocols a client offers to pass `token`: the rpc's own first, which the server picks,
 * so the token is not echoed back in the handshake's answer.
 */
export function tokenSubprotocols(token: string): string[] {
  const hex = Array.from(new TextEncoder().encode(token), (byte) => byte.toString(16).padStart(2, "0")).join("");
  return [RPC_SUBPROTOCOL, TOKEN_SUBPROTOCOL_PREFIX + hex];
}

/**
 * A WebSocket as a message endpoint for {@link rpcClientStorage} (or {@link serveStorage}): each
 * message travels as one binary frame. Messages posted while the socket connects are sent once it
 * is open; when it closes or fails, the endpoint reports "close" and the client's calls fail with "io".
 * `socket` may be a function that opens it: it is called when the first message is posted, so an
 * endpoint nobody calls opens no socket (a page's first screen pays for no handshake it does not use).
 *
 * @throws Error from `postMessage` once the socket is closed
 */
export function webSocketEndpoint(socket: WebSocketLike | (() => WebSocketLike)): MessageEndpoint & {
  /** Closes the socket (code 1000) and reports "close". */
  close(): void;
  /** Whether the socket was opened (one opened by a function is, once a message was posted). */
  readonly opened: boolean;
} {
  let opened: WebSocketLike | null = null;
  const open = (): WebSocketLike => {
    if (opened) return opened;
    opened = typeof socket === "function" ? socket() : socket;
    listen(opened);
    return opened;
  };
  const listeners = new Map<string, Set<(event: Event) => void>>();
  const dispatch = (type: string, data?: unknown) => {
    for (const listener of listeners.get(type) ?? []) listener({ data } as MessageEvent);
  };
  let waiting: Uint8Array[] = [];
  let closed = false;
  const end = () => {
    if (closed) return;
    closed = true;
    waiting = [];
    dispatch("close");
  };
  const listen = (socket: WebSocketLike) => {
    socket.binaryType = "arraybuffer";
    socket.addEventListener("open", () => {
      for (const frame of waiting) socket.send(frame);
      waiting = [];
    });
    socket.addEventListener("message", (event) => {
      const data = event.data;
      if (!(data instanceof ArrayBuffer)) return; // not ours: the rpc speaks binary frames only
      let message: unknown;
      try {
        message = decodeFrame(new Uint8Array(data));
      } catch {
        return; // a malformed frame answers no call: the call times out or the socket closes
      }
      dispatch("message", message);
    });
    socket.addEventListener("close", end);
    socket.addEventListener("error", end);
  };
  if (typeof socket !== "function") open();
  return {
    postMessage(message: unknown) {
      if (closed) throw new Error("the WebSocket is closed");
      const socket = open();
      if (socket.readyState > OPEN) throw new Error("the WebSocket is closed");
      const frame = encodeFrame(message);
      if (socket.readyState === CONNECTING) waiting.push(frame);
      else socket.send(frame);
    },
    addEventListener(type, listener) {
      const set = listeners.get(type) ?? new Set();
      set.add(listener);
      listeners.set(type, set);
    },
    removeEventListener(type, listener) {
      listeners.get(type)?.delete(listener);
    },
    close() {
      opened?.close(1000, "closed by the client");
      end();
    },
    get opened() {
      return opened !== null;
    },
  };
}
