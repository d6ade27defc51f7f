/**
 * Electron's renderer side, played by any thread: a structural `ipcRenderer` over a MessagePort
 * to the main-process worker, and a `contextBridge` that exposes into a window object of its own.
 */
import type { MessagePort } from "node:worker_threads";
import type { ContextBridgeLike, IpcRendererLike } from "../../../adapters/electron/types.js";

export function rendererIpc(port: MessagePort): { ipcRenderer: IpcRendererLike; contextBridge: ContextBridgeLike; window: Record<string, unknown> } {
  let seq = 0;
  const pending = new Map<number, { resolve: (value: unknown) => void; reject: (error: Error) => void }>();
  const listeners = new Map<string, Set<(event: unknown, ...args: unknown[]) => void>>();
  port.on("message", (message: { type: string; seq?: number; result?: unknown; error?: string; channel?: string; args?: unknown[] }) => {
    if (message.type === "reply") {
      const call = pending.get(message.seq!);
      pending.delete(message.seq!);
      if (message.error !== undefined) call?.reject(new Error(message.error));
      else call?.resolve(message.result);
    } else if (message.type === "send") {
      for (const listener of listeners.get(message.channel!) ?? []) listener({ sender: "ipcRenderer (never for the page)" }, ...(message.args ?? []));
    }
  });
  const window: Record<string, unknown> = {};
  return {
    window,
    ipcRenderer: {
      invoke: (channel, ...args) =>
        new Promise((resolve, reject) => {
          pending.set(++seq, { resolve, reject });
          port.postMessage({ seq, channel, args });
        }),
      on: (channel, listener) => listeners.set(channel, (listeners.get(channel) ?? new Set()).add(listener)),
      removeListener: (channel, listener) => listeners.get(channel)?.delete(listener),
    },
    // Electron copies what crosses the bridge; so does this.
    contextBridge: { exposeInMainWorld: (key, api) => void (window[key] = api) },
  };
}
