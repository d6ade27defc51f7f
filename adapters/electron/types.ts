/**
 * The parts of Electron's API the bridge uses, as structural types: sessionkit does not depend on
 * the `electron` package (Electron's own objects satisfy these).
 */

/** The channel names and the key under which the preload exposes the bridge. */
export const DEFAULT_CHANNEL = "sessionkit-storage";
export const DEFAULT_BRIDGE_KEY = "sessionkitStorage";

/** What the renderer sends through `invoke`: one rpc request (or batch), tagged with the port it comes from. */
export interface BridgeEnvelope {
  /** A random id per renderer port: each has its own state (locks, transfers, watches) in main. */
  client: string;
  message: unknown;
}

/** What main sends to the renderer unasked: a push for one of its ports. */
export interface BridgePush {
  client: string;
  push: unknown;
}

export interface WebContentsLike {
  readonly id: number;
  send(channel: string, ...args: unknown[]): void;
  isDestroyed(): boolean;
  once(event: "destroyed", listener: () => void): unknown;
  on(event: "did-navigate" | "render-process-gone" | "unresponsive" | "responsive", listener: (...args: unknown[]) => void): unknown;
  off?(event: string, listener: (...args: unknown[]) => void): unknown;
}

export interface IpcMainInvokeEventLike {
  readonly sender: WebContentsLike;
}

export interface IpcMainLike {
  handle(channel: string, listener: (event: IpcMainInvokeEventLike, ...args: unknown[]) => Promise<unknown>): void;
  removeHandler(channel: string): void;
}

export interface IpcRendererLike {
  invoke(channel: string, ...args: unknown[]): Promise<unknown>;
  on(channel: string, listener: (event: unknown, ...args: unknown[]) => void): unknown;
  removeListener(channel: string, listener: (event: unknown, ...args: unknown[]) => void): unknown;
}

export interface ContextBridgeLike {
  exposeInMainWorld(key: string, api: unknown): void;
}

/** What the preload exposes to the page: nothing but these two functions. */
export interface StorageBridge {
  invoke(envelope: BridgeEnvelope): Promise<unknown>;
  /** Subscribes to main's pushes; returns the function that unsubscribes. */
  onPush(listener: (push: BridgePush) => void): () => void;
}
