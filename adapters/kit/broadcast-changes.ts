/**
 * Change notifications between the tabs and workers of one origin, for the indexeddb and opfs
 * adapters: a port that changes a file tells its own subscribers at once and the other contexts
 * over a BroadcastChannel named for the store. Posts are coalesced (the first at once, later ones
 * together at the end of POST_INTERVAL_MS): a post is an IPC hop, and one per commit cost a writer
 * flushing in a loop about as much as its flush (bench:browser rows `appends10k.indexeddb`, `.opfs`).
 */
import type { StorageWatch } from "../../src/port.js";
import { WatcherSet } from "./watchers.js";

const MESSAGE_TYPE = "sessionkit-storage-changes/1";

/** Other contexts hear of a change at most this long after it (local subscribers at once). */
const POST_INTERVAL_MS = 40;

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
  /** Paths changed since the last post, waiting for the interval to end. */
  private readonly pending = new Set<string>();
  /** Set while an interval after a post runs. */
  private timer: ReturnType<typeof setTimeout> | undefined;

  constructor(private readonly channelName: string) {}

  /** Reports changes this context made: to its own subscribers, and to every other context. */
  notify(paths: readonly string[]): void {
    if (paths.length === 0) return;
    for (const path of paths) this.watchers.notify(path);
    for (const path of paths) this.pending.add(path);
    if (this.timer === undefined) this.post();
  }

  /** Live at once: the channel exists before this resolves, so a change posted after it arrives. */
  async watch(dir: string, onChange: (path: string) => void): Promise<StorageWatch> {
    const watch = this.watchers.add(dir, onChange);
    this.open();
    return watch;
  }

  close(): void {
    clearTimeout(this.timer);
    this.timer = undefined;
    if (this.pending.size > 0) this.post(); // nothing changed goes unreported
    clearTimeout(this.timer);
    this.timer = undefined;
    this.watchers.clear();
    this.channel?.close();
    this.channel = undefined;
  }

  /** Posts the pending paths and opens an interval whose changes wait for its end. */
  private post(): void {
    const paths = [...this.pending];
    this.pending.clear();
    this.open()?.postMessage({ type: MESSAGE_TYPE, paths } satisfies ChangesMessage);
    const timer = setTimeout(() => {
      this.timer = undefined;
      if (this.pending.size > 0) this.post();
    }, POST_INTERVAL_MS);
    // Node: a pending post must not keep the process alive (close() posts it).
    (timer as { unref?(): void }).unref?.();
    this.timer = timer;
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
