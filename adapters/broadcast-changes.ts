/**
 * Change notifications between the tabs and workers of one origin: a port that changes a file
 * tells its own subscribers at once and the other contexts over a BroadcastChannel named for the
 * store (a database, an OPFS directory). Used by the indexeddb and opfs adapters.
 */
import type { StorageWatch } from "../src/port.js";
import { WatcherSet } from "./watchers.js";

const MESSAGE_TYPE = "sessionkit-storage-changes/1";

interface ChangesMessage {
  type: typeof MESSAGE_TYPE;
  paths: string[];
}

function isChangesMessage(data: unknown): data is ChangesMessage {
  const message = data as Partial<ChangesMessage> | null;
  return typeof message === "object" && message !== null && message.type === MESSAGE_TYPE && Array.isArray(message.paths) && message.paths.every((p) => typeof p === "string");
}

export class BroadcastChanges {
  private readonly watchers = new WatcherSet();
  /** One channel both ways: a BroadcastChannel never hears its own posts, so nothing arrives twice. */
  private channel: BroadcastChannel | undefined;

  constructor(private readonly channelName: string) {}

  /** Reports changes this context made: to its own subscribers, and to every other context. */
  notify(paths: readonly string[]): void {
    if (paths.length === 0) return;
    for (const path of paths) this.watchers.notify(path);
    this.open()?.postMessage({ type: MESSAGE_TYPE, paths: [...new Set(paths)] } satisfies ChangesMessage);
  }

  /** Live at once: the channel exists before this resolves, so a change posted after it arrives. */
  async watch(dir: string, onChange: (path: string) => void): Promise<StorageWatch> {
    const watch = this.watchers.add(dir, onChange);
    this.open();
    return watch;
  }

  close(): void {
    this.watchers.clear();
    this.channel?.close();
    this.channel = undefined;
  }

  private open(): BroadcastChannel | undefined {
    if (this.channel || typeof BroadcastChannel === "undefined") return this.channel;
    const channel = new BroadcastChannel(this.channelName);
    channel.onmessage = (event: MessageEvent) => {
      if (isChangesMessage(event.data)) for (const path of event.data.paths) this.watchers.notify(path);
    };
    // Node: a channel must not keep the process alive on its own (browsers have no unref).
    (channel as BroadcastChannel & { unref?(): void }).unref?.();
    this.channel = channel;
    return channel;
  }
}
