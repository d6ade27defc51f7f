/**
 * The parts of Electron's API the bridge uses, as structural types: sessionkit does not depend on
 * the `electron` package (Electron's own objects satisfy these).
 */

/** The channel names and the key under which the preload exposes the bridge. */
export const DEFAULT_CHANNEL = "sessionkit-storage";
export const DEFAULT_BRIDGE_KEY = "sessionkitStorage";

/**
 * What the renderer sends through `invoke`: `{ open: true }` asks main for a new client (one per
 * renderer port, with its own locks, transfers and watches), answered with {@link BridgeOpened};
 * then each rpc request (or batch) of that client, tagged with the id main gave it.
 */
export type BridgeEnvelope = { open: true } | { client: string; message: unknown };

/** Main's answer to `{ open: true }` when it accepts: the new client's id, made by main. */
export interface BridgeOpened {
  client: string;
}

/** What main sends to the renderer unasked: a push for one of its ports. */
export interface BridgePush {
  client: string;
  push: unknown;
}

/** The webContents events the bridge follows to end a page's clients. */
export type WebContentsEvent = "destroyed" | "did-navigate" | "render-process-gone" | "unresponsive" | "responsive";

export interface WebContentsLike {
  readonly id: number;
  send(channel: string, ...args: unknown[]): void;
  isDestroyed(): boolean;
  on(event: WebContentsEvent, listener: (...args: unknown[]) => void): unknown;
  off(event: WebContentsEvent, listener: (...args: unknown[]) => void): unknown;
}

/** A frame in main (Electron's `WebFrameMain`): the page or iframe a message came from. */
export interface WebFrameMainLike {
  readonly url: string;
  /** The frame's origin, as Electron reports it (absent in Electron versions without it). */
  readonly origin?: string;
  /** The frame that embeds this one; null for a top-level frame. */
  readonly parent: WebFrameMainLike | null;
}

export interface IpcMainInvokeEventLike {
  readonly sender: WebContentsLike;
  /** The frame that sent the message; null once it has navigated away or been destroyed. */
  readonly senderFrame: WebFrameMainLike | null;
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
