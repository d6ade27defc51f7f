/**
 * The port's `watch`: the port's own changes are reported as soon as they are made, other
 * processes' through {@link watchTree} (fs.watch, or polling where it fails or is asked for).
 */
import type { StorageWatch } from "../../src/port.js";
import { WatcherSet } from "../kit/watchers.js";
import { isTempFile } from "./durable-writes.js";
import { toStorageError } from "./errors.js";
import type { StorageRoot } from "./paths.js";
import { watchTree, type WatchMode } from "./watch-tree.js";

const DEFAULT_POLL_INTERVAL_MS = 500;

export class PortWatch {
  /** Subscribers of `watch`, told of this port's own changes at once. */
  private readonly ownChanges = new WatcherSet();

  constructor(
    private readonly paths: StorageRoot,
    private readonly options: { watchMode?: WatchMode; pollIntervalMs?: number },
  ) {}

  /** Tells the subscribers whose directory holds `path` that this port changed it. */
  changed(path: string): void {
    this.ownChanges.notify(path);
  }

  /** Reports changes at or below `dir` until the returned watch is closed; a `dir` that is or lies below a link is refused. */
  async watch(dir: string, onChange: (path: string) => void): Promise<StorageWatch> {
    try {
      await this.paths.existingDir(dir, "watch");
    } catch (error) {
      throw toStorageError(error, "watch", dir);
    }
    const tree = await watchTree(this.paths, dir, onChange, {
      mode: this.options.watchMode ?? "auto",
      pollIntervalMs: this.options.pollIntervalMs ?? DEFAULT_POLL_INTERVAL_MS,
      ignore: isTempFile,
    });
    return this.ownChanges.add(dir, onChange, () => tree.close());
  }
}
