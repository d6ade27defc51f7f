/** Timing, repetition and child-process helpers shared by the benchmark sections. */
import { fork } from "node:child_process";
import { join } from "node:path";
import { performance } from "node:perf_hooks";
import type { ChildTask } from "./child-task.js";
import { BENCH_DIR } from "./data.js";

export interface Sample {
  median: number;
  min: number;
  max: number;
  values: number[];
}

export function summarize(values: readonly number[]): Sample {
  if (values.length === 0) throw new Error("no samples");
  const sorted = [...values].sort((a, b) => a - b);
  const mid = sorted.length >> 1;
  const median = sorted.length % 2 ? sorted[mid]! : (sorted[mid - 1]! + sorted[mid]!) / 2;
  return { median, min: sorted[0]!, max: sorted[sorted.length - 1]!, values: [...values] };
}

/** Full collection, so one case's garbage is not billed to the next. Needs --expose-gc. */
export function collectGarbage(): void {
  const gc = (globalThis as { gc?: () => void }).gc;
  if (!gc) throw new Error("run with --expose-gc (bench/run.ts re-executes itself with it)");
  gc();
  gc();
}

export interface Case<T> {
  name: string;
  /** Untimed preparation before each run (deleting a cache, making sure one exists). */
  before?: () => Promise<void> | void;
  /** Runs once; its wall time is measured. */
  run: () => Promise<T> | T;
  /** Untimed cleanup after each run (closing, deleting scratch files). */
  after?: (result: T) => Promise<void> | void;
  /** Replaces before/run/after in the warm-up round: the same code paths on less data. */
  warmup?: () => Promise<unknown> | unknown;
}

/**
 * Runs every case once to warm up (or its `warmup`), then `runs` rounds. Each round runs every case once, in an
 * order rotated per round so no case always runs first or last on a noisy machine; GC runs
 * before each timed run. Returns per-case samples (ms) and each case's last result.
 */
export async function interleave<T>(cases: readonly Case<T>[], runs: number): Promise<Map<string, { sample: Sample; last: T }>> {
  const times = new Map<string, number[]>(cases.map((c) => [c.name, []]));
  const last = new Map<string, T>();
  const once = async (c: Case<T>, record: boolean) => {
    await c.before?.();
    collectGarbage();
    const start = performance.now();
    const result = await c.run();
    const elapsed = performance.now() - start;
    await c.after?.(result);
    if (record) times.get(c.name)!.push(elapsed);
    last.set(c.name, result);
  };
  for (const c of cases) {
    if (c.warmup) await c.warmup();
    else await once(c, false);
  }
  for (let round = 0; round < runs; round++) {
    for (let i = 0; i < cases.length; i++) await once(cases[(i + round) % cases.length]!, true);
  }
  return new Map(cases.map((c) => [c.name, { sample: summarize(times.get(c.name)!), last: last.get(c.name)! }]));
}

const CHILD_SCRIPT = join(BENCH_DIR, "child.ts");

/** A child prints this line when its measured part is over: later collections are not its peak. */
export const MEASURED_LINE = "bench child: measured";

export interface ChildRun<R> {
  result: R;
  /** Largest V8 heap size seen before any GC, from --trace-gc (bytes); 0 without trace. */
  peakHeapBeforeGc: number;
  stderr: string;
}

/**
 * Runs one task of bench/child.ts in a fresh Node process with the given flags. With --trace-gc
 * among the flags, the heap size V8 reports before each collection is parsed from stdout: the
 * heap peaks just before a collection, so their maximum is the peak heap of the process.
 */
export function runChild<R>(task: ChildTask, nodeFlags: readonly string[]): Promise<ChildRun<R>> {
  return new Promise((resolve, reject) => {
    const child = fork(CHILD_SCRIPT, [JSON.stringify(task)], {
      execArgv: [...nodeFlags, "--import", "tsx"],
      stdio: ["ignore", "pipe", "pipe", "ipc"],
      cwd: join(BENCH_DIR, ".."),
    });
    let peak = 0;
    let measured = false;
    let pending = "";
    let stderr = "";
    let result: R | undefined;
    child.stdout!.setEncoding("utf8");
    child.stdout!.on("data", (text: string) => {
      pending += text;
      const lines = pending.split("\n");
      pending = lines.pop()!;
      for (const line of lines) {
        if (line === MEASURED_LINE) measured = true;
        if (!measured) peak = Math.max(peak, heapBeforeGc(line));
      }
    });
    child.stderr!.setEncoding("utf8");
    child.stderr!.on("data", (text: string) => (stderr += text));
    child.on("message", (message) => (result = message as R));
    child.on("error", reject);
    child.on("exit", (code, signal) => {
      if (!measured) peak = Math.max(peak, heapBeforeGc(pending));
      if (result !== undefined) resolve({ result, peakHeapBeforeGc: peak, stderr });
      else reject(new Error(`bench child ${JSON.stringify(task)} exited with ${signal ?? code} and no result:\n${stderr.slice(-2000)}`));
    });
  });
}

/** "…: Mark-Compact 812.3 (840.1) -> 402.0 (450.2) MB, …" → 812.3 MiB in bytes; 0 if no match. */
function heapBeforeGc(line: string): number {
  const match = /: (?:Scavenge|Mark-Compact|Mark-sweep|Minor Mark-Compact|MinorMS)[^\d]*?(\d+(?:\.\d+)?) \(\d+(?:\.\d+)?\) -> /.exec(line);
  return match ? Number(match[1]) * 2 ** 20 : 0;
}

export function formatMs(ms: number): string {
  if (ms >= 10_000) return `${(ms / 1000).toFixed(1)} s`;
  if (ms >= 100) return `${ms.toFixed(0)} ms`;
  return `${ms.toFixed(1)} ms`;
}

export function formatBytes(bytes: number): string {
  if (bytes >= 2 ** 30) return `${(bytes / 2 ** 30).toFixed(2)} GiB`;
  return `${(bytes / 2 ** 20).toFixed(1)} MiB`;
}

export function formatRate(perSecond: number): string {
  return `${Math.round(perSecond).toLocaleString("en-US")}/s`;
}
