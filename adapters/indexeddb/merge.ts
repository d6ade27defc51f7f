/**
 * When a file's trailing small records are merged: once they hold TAIL_MERGE_BYTES or more and
 * the file has had no write from this port for MERGE_IDLE_MS, in a transaction of its own (or all
 * at once when the port closes), never on a flush's way (docs/DESIGN.md §2, "IndexedDB"). The
 * merge itself is a batch step (batch.ts).
 */
import type { RememberedFiles } from "./metadata-cache.js";
import { TAIL_MERGE_BYTES } from "./schema.js";

/** A file is idle, and its due merge runs, after this long without a write from this port. */
export const MERGE_IDLE_MS = 200;

export class IdleMerges {
  /** Per file with a merge due: when this port last wrote it, and the timer that checks for idleness. */
  private readonly due = new Map<string, { lastWrite: number; timer: ReturnType<typeof setTimeout> }>();

  constructor(
    private readonly remembered: RememberedFiles,
    /** Whether a write batch is open (a writer resuming): the merge waits for it. */
    private readonly batchOpen: () => boolean,
    /** Queues the merge of a file's trailing small records as a batch of its own. */
    private readonly merge: (path: string) => Promise<void>,
  ) {}

  /**
   * Notes a committed append to a file. Once its trailing small records are due for merging, a
   * timer checks for idleness: the merge runs once the file has had no write for MERGE_IDLE_MS
   * and no batch is open, so it never lands in a flush's transaction. A write only updates the
   * time: re-arming a timer per flush showed in bench:browser profile.appends.indexeddb (see
   * bench/README.md; the figure is in docs/DESIGN.md §2).
   */
  appended(path: string): void {
    const due = this.due.get(path);
    if (due) {
      due.lastWrite = Date.now();
      return;
    }
    const meta = this.remembered.get(path)?.meta;
    if (!meta || meta.size - (meta.tailOffset ?? meta.size) < TAIL_MERGE_BYTES) return;
    const check = (): void => {
      const idleFor = Date.now() - entry.lastWrite;
      if (idleFor < MERGE_IDLE_MS || this.batchOpen()) {
        entry.timer = setTimeout(check, Math.max(1, MERGE_IDLE_MS - idleFor));
        return;
      }
      this.due.delete(path);
      this.merge(path).catch(() => {}); // the records stay as they are
    };
    const entry = { lastWrite: Date.now(), timer: setTimeout(check, MERGE_IDLE_MS) };
    this.due.set(path, entry);
  }

  /** Queues every due merge now (the port is closing); returns their promises. */
  runAll(): Promise<void>[] {
    const merges = [...this.due].map(([path, { timer }]) => {
      clearTimeout(timer);
      return this.merge(path);
    });
    this.due.clear();
    return merges;
  }
}
