/**
 * Our archive export and import of files on disk, shared by bench/archive.ts (timed in its own
 * process) and, when run as a script, one of them in a fresh process for its peak RSS:
 *
 *   node --import tsx bench/archive-child.ts '<task JSON>'   → one JSON line on stdout
 *
 * Every task loads the same modules, so the "baseline" task (which reads nothing) measures what
 * the process costs before any archive work. Peak RSS is read at the end (see peakRss).
 */
import { createWriteStream, openAsBlob, readFileSync, writeFileSync } from "node:fs";
import { Session } from "node:inspector/promises";
import { resolve } from "node:path";
import { performance } from "node:perf_hooks";
import { Writable } from "node:stream";
import { fileURLToPath } from "node:url";
import { nodeArchiveCodecs, nodeFsStorage } from "../adapters/node-fs/index.js";
import { exportArchive, importArchive } from "../src/archive/index.js";
import type { ExportSummary, ImportSummary } from "../src/index.js";

/** Exports one stored session (a storage path under `root`) with its blobs to the file `out`. */
export async function exportToFile(root: string, sessionPath: string, out: string): Promise<ExportSummary> {
  const storage = nodeFsStorage({ root });
  try {
    const sink = Writable.toWeb(createWriteStream(out)) as WritableStream<Uint8Array>;
    return await exportArchive(storage, [sessionPath], sink, nodeArchiveCodecs);
  } finally {
    await storage.close();
  }
}

/**
 * Imports the archive file `archive`, read in place as a Blob, into the store at `root`, with Node's
 * codecs as the CLI does; the store is sessionkit's own, so the blobs are written as files, as unzip does.
 */
export async function importFromFile(archive: string, root: string): Promise<ImportSummary> {
  const storage = nodeFsStorage({ root });
  try {
    return await importArchive(storage, await openAsBlob(archive), { owner: "sessionkit", ...nodeArchiveCodecs });
  } finally {
    await storage.close();
  }
}

/** With `profileTo`, the measured part (only) is CPU-profiled into that .cpuprofile file. */
export type ArchiveChildTask = { profileTo?: string } & (
  | { kind: "baseline" }
  | { kind: "export"; root: string; session: string; out: string }
  | { kind: "import"; archive: string; root: string }
);

export interface ArchiveChildResult {
  kind: ArchiveChildTask["kind"];
  ms: number;
  /** Peak resident set size of this process, bytes (see peakRss). */
  peakRss: number;
  /** Blobs exported or written, so the parent can tell the work was done. */
  blobs: number;
}

async function profiled<T>(profileTo: string | undefined, work: () => Promise<T>): Promise<T> {
  if (!profileTo) return work();
  const session = new Session();
  session.connect();
  await session.post("Profiler.enable");
  await session.post("Profiler.setSamplingInterval", { interval: 100 });
  await session.post("Profiler.start");
  const result = await work();
  const { profile } = await session.post("Profiler.stop");
  writeFileSync(profileTo, JSON.stringify(profile));
  session.disconnect();
  return result;
}

/**
 * The peak RSS of this process image: Linux's VmHWM. Not `resourceUsage().maxRSS`: on Linux that
 * also counts the parent's RSS when it forked this process (kept across exec), so a child of a
 * 200 MB parent reports at least 200 MB.
 */
function peakRss(): number {
  try {
    const match = /^VmHWM:\s+(\d+) kB$/m.exec(readFileSync("/proc/self/status", "utf8"));
    if (match) return Number(match[1]) * 1024;
  } catch {
    // not Linux
  }
  return process.resourceUsage().maxRSS * 1024;
}

async function runTask(task: ArchiveChildTask): Promise<ArchiveChildResult> {
  const start = performance.now();
  let blobs = 0;
  if (task.kind === "export") blobs = (await profiled(task.profileTo, () => exportToFile(task.root, task.session, task.out))).blobs.count;
  if (task.kind === "import") blobs = (await profiled(task.profileTo, () => importFromFile(task.archive, task.root))).blobs.written;
  const ms = performance.now() - start;
  return { kind: task.kind, ms, peakRss: peakRss(), blobs };
}

if (process.argv[1] && resolve(process.argv[1]) === fileURLToPath(import.meta.url)) {
  const result = await runTask(JSON.parse(process.argv[2]!) as ArchiveChildTask);
  process.stdout.write(JSON.stringify(result) + "\n");
}
