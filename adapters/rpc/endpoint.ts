/**
 * One end of a message channel, as the rpc adapter uses it: a Worker, a browser MessagePort, a
 * node:worker_threads MessagePort, or `self` inside a dedicated worker. (Electron's
 * MessagePortMain speaks EventEmitter; use ipcRenderer.invoke / ipcMain.handle instead, or adapt it.)
 */
export interface MessageEndpoint {
  /** Sends a message to the other end (structured clone). */
  postMessage(message: unknown): void;
  /** The same, with the buffers in `transfer` moved, not copied (only where the client is told to: RpcClientOptions.transfer). */
  postMessage(message: unknown, transfer: ArrayBuffer[]): void;
  /** Listens for "message" events (and "error" and "close", where the endpoint has them). */
  addEventListener(type: string, listener: (event: Event) => void): void;
  /** Stops listening. */
  removeEventListener(type: string, listener: (event: Event) => void): void;
  /** MessagePorts queue messages until started. */
  start?(): void;
}

/** Adds a listener and returns the function that removes it. */
export function listen(endpoint: MessageEndpoint, type: string, listener: (event: Event) => void): () => void {
  endpoint.addEventListener(type, listener);
  return () => endpoint.removeEventListener(type, listener);
}

export function messageData(event: Event): unknown {
  return (event as MessageEvent).data;
}
