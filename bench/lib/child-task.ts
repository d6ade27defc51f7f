/**
 * The tasks bench/child.ts runs and what it sends back, apart from it so that lib/measure.ts
 * (which starts it) and the sections name them without importing the child.
 */

/** With `profileTo`, the measured part (only) is CPU-profiled into that .cpuprofile file. */
export type ChildTask = { profileTo?: string } & (
  /** Ours: open a storage path below `root` and build the context, `repeat` times (SessionManager's `parse`: lazy by default). */
  | { kind: "open-ours"; root: string; path: string; readOnly: boolean; parse?: "lazy" | "full"; repeat?: number }
  /** pi: open an absolute path and build the context. */
  | { kind: "open-pi"; file: string }
  /** Ours: list one session dir with no catalog (deleted first). */
  | { kind: "list-cold-ours"; root: string; cwd: string; sessionDir: string }
  /** Ours: `count` appends with a flush every `flushEvery` (0: only at the end). */
  | { kind: "appends-ours"; root: string; count: number; flushEvery: number }
);

export interface OpenResult {
  ms: number;
  /** heapUsed after a full GC, before opening. */
  heapBefore: number;
  /** Largest heapUsed seen at any storage read and after open and context (before GC). */
  heapSampledPeak: number;
  /** heapUsed after a full GC with the session and its context still referenced. */
  heapRetained: number;
  /** Peak resident set size of the whole process (bytes). */
  maxRss: number;
  rssBefore: number;
  messages: number;
  /** Entries of the opened session (counted after the timed part). */
  entries: number;
  error?: string;
}
