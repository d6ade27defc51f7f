/**
 * One measurement in a fresh Node process (started by bench/lib/measure.ts `runChild`), so
 * peak RSS and heap belong to that measurement alone. The task comes as JSON in argv[2]; the
 * result goes back over IPC.
 */
import { rmSync, writeFileSync } from "node:fs";
import { Session } from "node:inspector/promises";
import { join } from "node:path";
import { performance } from "node:perf_hooks";
import { nodeFsStorage } from "../adapters/node-fs/index.js";
import { SessionManager, type StoragePort } from "../src/index.js";
import { CATALOG_DIR } from "../src/session/listing.js";
import type { ChildTask, OpenResult } from "./lib/child-task.js";
import { collectGarbage, MEASURED_LINE } from "./lib/measure.js";
import { peakRss } from "./lib/peak-rss.js";

const task = JSON.parse(process.argv[2]!) as ChildTask;
/** What was opened stays referenced here while the retained heap is measured. */
let keepAlive: unknown = null;
const send = (result: unknown) => new Promise<void>((resolve) => process.send!(result, () => resolve()));

/** Runs `fn`, CPU-profiled at 100 µs intervals when the task asks for a profile. */
async function measured<T>(fn: () => Promise<T> | T): Promise<T> {
  if (!task.profileTo) return fn();
  const session = new Session();
  session.connect();
  await session.post("Profiler.enable");
  await session.post("Profiler.setSamplingInterval", { interval: 100 });
  await session.post("Profiler.start");
  const result = await fn();
  const { profile } = await session.post("Profiler.stop");
  writeFileSync(task.profileTo, JSON.stringify(profile));
  session.disconnect();
  return result;
}

function memoryBaseline(): { heap: number; rss: number } {
  collectGarbage();
  const memory = process.memoryUsage();
  return { heap: memory.heapUsed, rss: memory.rss };
}

/** The port as is, with the heap sampled after every read: ours yields to the event loop there. */
function sampling(storage: StoragePort, onSample: () => void): StoragePort {
  return {
    ...storage,
    async read(path, range) {
      const bytes = await storage.read(path, range);
      onSample();
      return bytes;
    },
  };
}

async function openOurs(t: Extract<ChildTask, { kind: "open-ours" }>): Promise<OpenResult> {
  const storage = nodeFsStorage({ root: t.root });
  const before = memoryBaseline();
  let peak = before.heap;
  const sample = () => (peak = Math.max(peak, process.memoryUsage().heapUsed));
  const port = sampling(storage, sample);
  let ms = 0;
  let messages = 0;
  let sm: SessionManager | null = null;
  await measured(async () => {
    for (let i = 0; i < (t.repeat ?? 1); i++) {
      keepAlive = null;
      await sm?.close();
      const start = performance.now();
      sm = await SessionManager.open(port, t.path, { readOnly: t.readOnly, parse: t.parse });
      sample();
      const context = sm.buildSessionContext();
      sample();
      ms = performance.now() - start;
      keepAlive = [sm, context];
      messages = context.messages.length;
    }
  });
  collectGarbage();
  const retained = process.memoryUsage().heapUsed;
  const maxRss = peakRss();
  // Counted after the memory figures (and the heap peaks the parent reads from --trace-gc): a
  // lazily opened session parses every entry to list them.
  process.stdout.write(`${MEASURED_LINE}\n`);
  const entries = sm!.getEntries().length;
  keepAlive = null;
  await sm!.close();
  await storage.close();
  return { ms, heapBefore: before.heap, heapSampledPeak: peak, heapRetained: retained, maxRss, rssBefore: before.rss, messages, entries };
}

async function openPi(t: Extract<ChildTask, { kind: "open-pi" }>): Promise<OpenResult> {
  // Loaded only in pi's children: its module graph would weigh on our opens' heap and collections.
  const { PiSessionManager } = await import("../test/shared/pi-session-manager.js");
  const before = memoryBaseline();
  const start = performance.now();
  try {
    const pi = PiSessionManager.open(t.file);
    const context = pi.buildSessionContext();
    const ms = performance.now() - start;
    const peak = process.memoryUsage().heapUsed;
    const entries = pi.getEntries().length;
    keepAlive = [pi, context];
    collectGarbage();
    const retained = process.memoryUsage().heapUsed;
    keepAlive = null;
    return { ms, heapBefore: before.heap, heapSampledPeak: peak, heapRetained: retained, maxRss: peakRss(), rssBefore: before.rss, messages: context.messages.length, entries };
  } catch (error) {
    const ms = performance.now() - start;
    return { ms, heapBefore: before.heap, heapSampledPeak: 0, heapRetained: 0, maxRss: peakRss(), rssBefore: before.rss, messages: 0, entries: 0, error: (error as Error).message };
  }
}

async function listColdOurs(t: Extract<ChildTask, { kind: "list-cold-ours" }>): Promise<{ ms: number; sessions: number }> {
  rmSync(join(t.root, CATALOG_DIR), { recursive: true, force: true });
  const storage = nodeFsStorage({ root: t.root });
  const start = performance.now();
  const infos = await measured(() => SessionManager.list(storage, t.cwd, { sessionDir: t.sessionDir }));
  const ms = performance.now() - start;
  await storage.close();
  return { ms, sessions: infos.length };
}

async function appendsOurs(t: Extract<ChildTask, { kind: "appends-ours" }>): Promise<{ ms: number }> {
  // Loaded only in these children: it brings pi's SessionManager along (see openPi).
  const { appendMessages, appendWorkload } = await import("./lib/appends.js");
  const storage = nodeFsStorage({ root: t.root });
  appendWorkload(t.count);
  const { ms } = await measured(() => appendMessages(storage, t.count, t.flushEvery));
  await storage.close();
  rmSync(t.root, { recursive: true, force: true });
  return { ms };
}

switch (task.kind) {
  case "open-ours":
    await send(await openOurs(task));
    break;
  case "open-pi":
    await send(await openPi(task));
    break;
  case "list-cold-ours":
    await send(await listColdOurs(task));
    break;
  case "appends-ours":
    await send(await appendsOurs(task));
    break;
}
