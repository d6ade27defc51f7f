/**
 * `serveStorage(port, endpoint)`: a storage server (server.ts) for the one client at the other end
 * of a message endpoint (a worker's `self`, a MessagePort); the connection ends when the endpoint
 * closes.
 */
import { StorageError, type StoragePort } from "../../src/port.js";
import { listen, messageData, type MessageEndpoint } from "./endpoint.js";
import { errorResponse, isRpcMessage, type RpcResponse, type RpcResponseBatch } from "./protocol.js";
import { createStorageServer, type StorageServerOptions } from "./server.js";

/** Options of {@link serveStorage}. */
export interface ServeStorageOptions extends StorageServerOptions {
  /** The client's `close` closes the served port too (it is this endpoint's alone, as in the OPFS worker). Default true. */
  closePortOnClose?: boolean;
}

/**
 * Serves `port` on a message endpoint (e.g. `serveStorage(port, self)` in a worker) to the one
 * client at its other end. Messages that are not rpc requests are ignored. Requests are handed to
 * the port in the order they arrive (each port call starts before the next message is looked at);
 * a batch of requests is answered with one message once all are done. The connection ends (locks
 * released) when the endpoint closes or serving stops. Returns a function that stops serving.
 */
export function serveStorage(port: StoragePort, endpoint: MessageEndpoint, options: ServeStorageOptions = {}): () => void {
  const connection = createStorageServer(port, options).connect({ push: (message) => post(endpoint, message) });
  const closePort = options.closePortOnClose ?? true;
  const stops = [
    listen(endpoint, "message", (event) => {
      const message = messageData(event);
      if (!isRpcMessage(message) || "ok" in message || "responses" in message || "push" in message) return; // other traffic
      const answering = "requests" in message ? connection.handleBatch(message) : connection.handle(message);
      void answering.then(async (answer) => {
        // The port is closed before the reply: the client may end the worker as soon as it has it.
        if (closePort && asksToClose(message)) await port.close?.().catch(() => {});
        replyAll(endpoint, answer);
      });
    }),
    listen(endpoint, "close", () => void connection.close("the client closed the channel")),
  ];
  endpoint.start?.();
  return () => {
    for (const stop of stops) stop();
    void connection.close("serving stopped");
  };
}

function asksToClose(message: unknown): boolean {
  const requests = (message as { requests?: unknown }).requests;
  const singles = Array.isArray(requests) ? requests : [message];
  return singles.some((single) => (single as { call?: { op?: unknown } } | null)?.call?.op === "close");
}

function post(endpoint: MessageEndpoint, message: unknown): void {
  endpoint.postMessage(message);
}

function replyAll(endpoint: MessageEndpoint, batch: RpcResponseBatch | RpcResponse): void {
  if (!("responses" in batch)) return reply(endpoint, batch);
  try {
    endpoint.postMessage(batch);
  } catch {
    // A result could not be cloned: send them one by one, so only that call fails.
    for (const response of batch.responses) reply(endpoint, response);
  }
}

function reply(endpoint: MessageEndpoint, response: RpcResponse): void {
  try {
    endpoint.postMessage(response);
  } catch (error) {
    // The result could not be cloned: tell the client rather than let it time out.
    const failure = new StorageError("io", `the storage reply could not be sent: ${String(error)}`);
    endpoint.postMessage(errorResponse(response.id, failure));
  }
}
