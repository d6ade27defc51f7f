/**
 * Electron preload: exposes the storage bridge to the page under one key, as two functions:
 * `invoke` (one rpc message to main) and `onPush` (main's change notifications). `ipcRenderer`
 * itself, and the ipc events (which carry it), never reach the page.
 *
 * @module sessionkit/adapters/electron/preload
 */
import { DEFAULT_BRIDGE_KEY, DEFAULT_CHANNEL, type BridgeEnvelope, type BridgePush, type ContextBridgeLike, type IpcRendererLike, type StorageBridge } from "./types.js";

/** Options of {@link exposeStorageBridge}; both must match main's and the renderer's. */
export interface ExposeOptions {
  /** The key on `window`; default "sessionkitStorage". */
  key?: string;
  /** The ipc channel; default "sessionkit-storage" (as serveStorageOverIpc's). */
  channel?: string;
}

/**
 * Call in the preload script: exposes to the page, on `window[key]`, the two functions
 * `electronStorage()` needs to reach main (`ipcRenderer` itself stays in the preload).
 *
 * @param contextBridge Electron's `contextBridge`
 * @param ipcRenderer Electron's `ipcRenderer`
 */
export function exposeStorageBridge(contextBridge: ContextBridgeLike, ipcRenderer: IpcRendererLike, options: ExposeOptions = {}): void {
  const channel = options.channel ?? DEFAULT_CHANNEL;
  const bridge: StorageBridge = {
    invoke: (envelope: BridgeEnvelope) => ipcRenderer.invoke(channel, envelope),
    onPush(listener: (push: BridgePush) => void) {
      const forward = (_event: unknown, push: unknown) => listener(push as BridgePush);
      ipcRenderer.on(`${channel}:push`, forward);
      return () => void ipcRenderer.removeListener(`${channel}:push`, forward);
    },
  };
  contextBridge.exposeInMainWorld(options.key ?? DEFAULT_BRIDGE_KEY, bridge);
}
