/** The subscribers of a port's `watch`, and which of them a changed path concerns. */
import { checkStoragePath, type StorageWatch } from "../../src/port.js";

/** True when `path` is `dir` or below it ("" is the root, above everything). */
export function isAtOrBelow(path: string, dir: string): boolean {
  return dir === "" || path === dir || (path.startsWith(dir) && path.charCodeAt(dir.length) === 0x2f);
}

interface Watcher {
  dir: string;
  onChange: (path: string) => void;
}

export class WatcherSet {
  private readonly watchers = new Set<Watcher>();

  /** Adds a subscriber of the changes at or below `dir` (checked as a storage path; "" is the root). */
  add(dir: string, onChange: (path: string) => void, onClose?: () => Promise<void> | void): StorageWatch {
    checkStoragePath(dir, { allowRoot: true });
    const watcher = { dir, onChange };
    this.watchers.add(watcher);
    let closed: Promise<void> | undefined;
    return {
      close: () =>
        (closed ??= (async () => {
          this.watchers.delete(watcher);
          await onClose?.();
        })()),
    };
  }

  /**
   * Tells every subscriber whose directory holds `path`. Delivered in a microtask, never inside the
   * operation that made the change; a subscriber that throws fails like an event listener would.
   */
  notify(path: string): void {
    for (const watcher of this.watchers) {
      if (isAtOrBelow(path, watcher.dir)) queueMicrotask(() => this.watchers.has(watcher) && watcher.onChange(path));
    }
  }

  clear(): void {
    this.watchers.clear();
  }
}
