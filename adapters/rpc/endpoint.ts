/**
 * One end of a message channel, as the rpc adapter uses it: a Worker, a browser MessagePort, a
 * node:worker_threads MessagePort, or `self` inside a dedicated worker. (Electron's
 * MessagePortMain speaks EventEmitter; use ipcRenderer.invoke / ipcMain.handle instead, or adapt it.)
 */
export interface MessageEndpoint {
  postMessage(message: unknown): void;
  addEventListener(type: string, listener: (event: Event) => void): void;
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
