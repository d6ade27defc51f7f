/**
 * Where the viewer's long tasks come from: `tsx bench/browser/viewer-profile.ts [1000,10000,100000] [--throttle N]`.
 * Builds the export template unminified (function names survive), fills it with the viewer
 * bench's sessions (test/shared/viewer-session.ts), opens each from file:// as the viewer bench does, loads
 * and scrolls both lists end to end (the same steps), with a Chromium trace (devtools.timeline)
 * and the V8 sampling profiler on. Prints, per main-thread task over THRESHOLD_MS: its length,
 * what started it, its time by trace event (self time: script, layout, style, GC…) and the
 * functions with the most self time inside it. `--throttle N` slows the page's CPU N times (CDP
 * Emulation.setCPUThrottlingRate): on a quiet machine the tasks a loaded one stretches past 200 ms
 * show their shape. Diagnostics only: the figures to compare are the
 * viewer bench's (./viewer.ts).
 */
import { link, mkdir, readFile, rm } from "node:fs/promises";
import { join } from "node:path";
import { pathToFileURL } from "node:url";
import { parseArgs } from "node:util";
import { chromium, type Browser, type Page } from "playwright";
import { build } from "vite";
import { chromiumArgs, chromiumExecutable } from "../../chromium.config.js";
import { EXPORT_TEMPLATE_FILE } from "../../web-demo/src/export/embed.js";
import { functionSelfTimesIn, type CpuProfile } from "./cpu-profile.js";
import { cpuByKind, processCpuSnapshot } from "./process-cpu.js";
import { eventSelfTimes, type TraceEvent } from "./trace-events.js";
import { ensureViewerSession, VIEWER_DATA_DIR } from "../../test/shared/viewer-session.js";
import { firstEntryShown, ourExport, piExport, scrollEndToEnd, startServeProcess, VIEWER_PROJECT, watchFirstEntry, type Kind } from "./viewer.js";

const THRESHOLD_MS = 50;
const TRACE_CATEGORIES = ["devtools.timeline", "disabled-by-default-devtools.timeline", "v8", "v8.execute", "blink.user_timing"];

const log = (message: string) => process.stderr.write(`[viewer-profile] ${message}\n`);

/** The renderer main thread with the most timeline events (the page's). */
function mainThread(events: TraceEvent[]): { pid: number; tid: number } {
  const names = new Map<string, string>();
  for (const e of events) if (e.ph === "M" && e.name === "thread_name") names.set(`${e.pid}:${e.tid}`, e.args?.name ?? "");
  const counts = new Map<string, number>();
  for (const e of events) {
    const key = `${e.pid}:${e.tid}`;
    if (e.ph === "X" && names.get(key) === "CrRendererMain") counts.set(key, (counts.get(key) ?? 0) + 1);
  }
  const best = [...counts.entries()].sort((a, b) => b[1] - a[1])[0];
  if (!best) throw new Error("no renderer main thread in the trace");
  const [pid, tid] = best[0].split(":").map(Number) as [number, number];
  return { pid, tid };
}

const top = (map: Map<string, number>, n: number, total: number) =>
  [...map.entries()]
    .sort((a, b) => b[1] - a[1])
    .slice(0, n)
    .filter(([, us]) => us / total > 0.02)
    .map(([name, us]) => `${name} ${(us / 1000).toFixed(0)} ms`)
    .join(", ");

/** The mean CPU ms of each kind of process over the pages, the total first, kinds under 1 ms left out. */
function processShares(pages: Map<string, number>[]): string {
  const mean = new Map<string, number>();
  for (const page of pages) for (const [kind, ms] of page) mean.set(kind, (mean.get(kind) ?? 0) + ms / pages.length);
  const kinds = [...mean.entries()].filter(([, ms]) => ms >= 1).sort((a, b) => b[1] - a[1]);
  const total = kinds.reduce((sum, [, ms]) => sum + ms, 0);
  return `${total.toFixed(0)} ms: ${kinds.map(([kind, ms]) => `${kind} ${ms.toFixed(0)}`).join(", ")}`;
}

/** What started a task: its first timeline child with a name that says so. */
function trigger(children: TraceEvent[]): string {
  const first = children.find((e) => ["FunctionCall", "TimerFire", "FireAnimationFrame", "EventDispatch", "EvaluateScript", "v8.run", "ParseHTML", "v8.compileModule", "RunMicrotasks", "ResourceReceivedData"].includes(e.name));
  if (!first) return children[0]?.name ?? "?";
  const data = first.args?.data ?? {};
  const what = (data.functionName as string) || (data.type as string) || "";
  return `${first.name}${what ? ` ${what}` : ""}`;
}

/** Loads the page, then scrolls both lists after a user-timing mark (the trace's clock) that splits the two. */
async function profilePage(page: Page, file: string): Promise<void> {
  await page.goto(pathToFileURL(file).href, { waitUntil: "load", timeout: 120_000 });
  await page.waitForFunction(() => document.body.dataset.status === "ready", null, { timeout: 120_000 });
  await page.waitForTimeout(500);
  await page.evaluate(() => performance.mark("phase:scroll"));
  await scrollEndToEnd(page, ["#messages", "#tree"]);
}

/** One page's main thread from navigation start to its first visible entry: wall time, busy time, busy by trace event and by function. */
interface FirstEntryCpu {
  visibleMs: number;
  busyMs: number;
  /** The main thread's CPU time in those tasks (their thread durations): what a loaded machine's waits leave out. */
  cpuMs: number;
  byEvent: Map<string, number>;
  byFunction: Map<string, number>;
  /** CPU ms of every process on the machine from the navigation to the first entry shown, by kind (./process-cpu.ts). */
  byProcess: Map<string, number>;
}

/** Loads `url` in a fresh context with a trace and the sampling profiler on, up to its first visible entry (viewer.ts's watch). */
async function firstEntryCpu(browser: Browser, url: string, kind: Kind): Promise<FirstEntryCpu> {
  const context = await browser.newContext({ viewport: { width: 1400, height: 900 } });
  try {
    await watchFirstEntry(context, kind);
    const page = await context.newPage();
    const cdp = await context.newCDPSession(page);
    await cdp.send("Profiler.enable");
    await cdp.send("Profiler.setSamplingInterval", { interval: 100 });
    await browser.startTracing(page, { categories: TRACE_CATEGORIES });
    await cdp.send("Profiler.start");
    const shown = firstEntryShown(page, 120_000);
    const processesBefore = processCpuSnapshot();
    await page.goto(url, { waitUntil: "load", timeout: 120_000 });
    if (!(await shown)) throw new Error(`${url}: no entry shown in 120 s`);
    const byProcess = cpuByKind(processesBefore, processCpuSnapshot());
    // The trace's clock against the page's: a mark's trace time less its performance.now().
    const { visibleMs, syncMs } = await page.evaluate(() => ({
      visibleMs: (window as unknown as { __bench: { visible: number } }).__bench.visible,
      syncMs: performance.mark("bench:sync").startTime,
    }));
    const { profile } = (await cdp.send("Profiler.stop")) as { profile: CpuProfile & { startTime: number } };
    const events = (JSON.parse((await browser.stopTracing()).toString("utf8")) as { traceEvents: TraceEvent[] }).traceEvents;
    // The page's main thread: the one that made the mark.
    const sync = events.find((e) => e.name === "bench:sync");
    if (!sync) throw new Error("no bench:sync mark in the trace");
    const { pid, tid } = sync;
    const start = sync.ts - syncMs * 1000;
    const end = start + visibleMs * 1000;
    const onMain = events
      .filter((e) => e.pid === pid && e.tid === tid && e.ph === "X" && typeof e.dur === "number" && e.ts >= start && e.ts < end)
      .sort((a, b) => a.ts - b.ts || b.dur! - a.dur!);
    const tasks = onMain.filter((e) => e.name === "RunTask" || e.name === "ThreadControllerImpl::RunTask");
    let busy = 0;
    let cpu = 0;
    let lastEnd = -Infinity;
    for (const task of tasks) {
      if (task.ts < lastEnd) continue;
      busy += Math.min(task.ts + task.dur!, end) - task.ts;
      cpu += task.tdur ?? 0;
      lastEnd = task.ts + task.dur!;
    }
    return { visibleMs, busyMs: busy / 1000, cpuMs: cpu / 1000, byEvent: eventSelfTimes(onMain.filter((e) => !tasks.includes(e))), byFunction: functionSelfTimesIn(profile, start, end), byProcess };
  } finally {
    await context.close();
  }
}

/**
 * `--first N`: the small session's first visible entry, pi's export against ours (file://) and
 * serve's, N pages each, taking turns: per page the wall time, the main thread's busy time (its
 * tasks' wall time) and CPU time (their thread time) up to it; then per kind the medians and,
 * summed over the pages and divided by N, the busy time by trace event and by function, and the
 * whole machine's CPU from the navigation to the entry shown by kind of process (./process-cpu.ts:
 * on 2 cores a served page's wall time follows the browser process, the network service and the
 * server too; the trace and the profiler add to the browser's and the renderer's).
 * `--dist A,B`: viewer builds to compare in the same run (default: this tree's, built unminified).
 */
async function firstEntryBreakdown(dists: string[], work: string, size: number, rounds: number): Promise<void> {
  const session = ensureViewerSession(size);
  const storagePath = `sessions/--bench-viewer--/${size}.jsonl`;
  await mkdir(join(work, "store", "sessions", "--bench-viewer--"), { recursive: true });
  await link(session.path, join(work, "store", storagePath));
  await piExport(session.path, join(work, "pi.html"));
  const pages: { label: string; kind: Kind; url: string }[] = [{ label: "pi", kind: "pi", url: pathToFileURL(join(work, "pi.html")).href }];
  const servers: { stop(): Promise<void> }[] = [];
  try {
    for (const [n, dist] of dists.entries()) {
      const tag = dists.length > 1 ? ` ${n + 1} (${dist})` : "";
      const file = join(work, `ours-${n}.html`);
      await ourExport(await readFile(join(dist, EXPORT_TEMPLATE_FILE), "utf8"), session.path, file);
      const serve = await startServeProcess(dist, join(work, "store"), join(work, `serve-cache-${n}`));
      servers.push(serve);
      pages.push({ label: `export${tag}`, kind: "export", url: pathToFileURL(file).href });
      pages.push({ label: `serve${tag}`, kind: "serve", url: `${serve.url}#${new URLSearchParams({ store: serve.store, session: storagePath }).toString()}` });
    }
    const browser = await chromium.launch({ executablePath: chromiumExecutable, args: chromiumArgs, headless: true });
    const results = new Map<string, FirstEntryCpu[]>(pages.map((page) => [page.label, []]));
    try {
      for (let round = 0; round < rounds; round++) {
        for (const page of pages) {
          const result = await firstEntryCpu(browser, page.url, page.kind);
          results.get(page.label)!.push(result);
          log(`${page.label} round ${round + 1}: visible ${result.visibleMs.toFixed(0)} ms, main thread busy ${result.busyMs.toFixed(0)} ms, CPU ${result.cpuMs.toFixed(0)} ms`);
        }
      }
    } finally {
      await browser.close();
    }
    const median = (values: number[]) => [...values].sort((a, b) => a - b)[values.length >> 1]!;
    process.stdout.write(`\n## first visible entry, ${session.entries} entries, ${rounds} pages each (medians; busy and CPU: the main thread's tasks before it)\n`);
    for (const [label, list] of results) {
      const sum = (pick: (r: FirstEntryCpu) => Map<string, number>) => {
        const total = new Map<string, number>();
        for (const r of list) for (const [name, us] of pick(r)) total.set(name, (total.get(name) ?? 0) + us / rounds);
        return total;
      };
      const busy = median(list.map((r) => r.busyMs)) * 1000;
      process.stdout.write(
        `- ${label}: visible ${median(list.map((r) => r.visibleMs)).toFixed(0)} ms, busy ${(busy / 1000).toFixed(0)} ms, CPU ${median(list.map((r) => r.cpuMs)).toFixed(0)} ms\n    events: ${top(sum((r) => r.byEvent), 10, busy)}\n    js: ${top(sum((r) => r.byFunction), 14, busy)}\n    the machine's CPU by process (mean): ${processShares(list.map((r) => r.byProcess))}\n`,
      );
    }
  } finally {
    for (const server of servers) await server.stop();
  }
}

async function main(): Promise<void> {
  const { values, positionals } = parseArgs({ allowPositionals: true, options: { throttle: { type: "string", default: "1" }, first: { type: "string" }, dist: { type: "string" }, minify: { type: "boolean", default: false } } });
  const sizes = (positionals[0] ?? "1000,10000,100000").split(",").map(Number);
  const throttle = Number(values.throttle);
  const work = join(VIEWER_DATA_DIR, "profile");
  await rm(work, { recursive: true, force: true });
  await mkdir(work, { recursive: true });
  if (values.first !== undefined && values.dist !== undefined) return firstEntryBreakdown(values.dist.split(","), work, sizes[0]!, Number(values.first));
  log(`building the viewer${values.minify ? "" : ", unminified"}`);
  await build({ configFile: join(VIEWER_PROJECT, "web-demo", "vite.config.ts"), logLevel: "silent", build: { outDir: join(work, "dist"), emptyOutDir: true, minify: values.minify } });
  if (values.first !== undefined) return firstEntryBreakdown([join(work, "dist")], work, sizes[0]!, Number(values.first));
  const template = await readFile(join(work, "dist", EXPORT_TEMPLATE_FILE), "utf8");
  const browser = await chromium.launch({ executablePath: chromiumExecutable, args: [...chromiumArgs, "--js-flags=--max-old-space-size=4096"], headless: true });
  try {
    for (const size of sizes) {
      const session = ensureViewerSession(size);
      const file = join(work, `ours-${size}.html`);
      await ourExport(template, session.path, file);
      const context = await browser.newContext({ viewport: { width: 1400, height: 900 } });
      const page = await context.newPage();
      const cdp = await context.newCDPSession(page);
      if (throttle > 1) await cdp.send("Emulation.setCPUThrottlingRate", { rate: throttle });
      await cdp.send("Profiler.enable");
      await cdp.send("Profiler.setSamplingInterval", { interval: 200 });
      await browser.startTracing(page, { categories: TRACE_CATEGORIES });
      await cdp.send("Profiler.start");
      await profilePage(page, file);
      const { profile } = (await cdp.send("Profiler.stop")) as { profile: CpuProfile & { startTime: number } };
      const trace = JSON.parse((await browser.stopTracing()).toString("utf8")) as { traceEvents: TraceEvent[] };
      await context.close();
      const events = trace.traceEvents;
      const { pid, tid } = mainThread(events);
      const scrollMark = events.find((e) => e.pid === pid && e.name === "phase:scroll")?.ts ?? Infinity;
      const onMain = events.filter((e) => e.pid === pid && e.tid === tid && e.ph === "X" && typeof e.dur === "number").sort((a, b) => a.ts - b.ts || b.dur! - a.dur!);
      const tasks = onMain.filter((e) => e.name === "RunTask" || e.name === "ThreadControllerImpl::RunTask");
      // Top-level tasks only (a RunTask can nest in another).
      const topLevel: TraceEvent[] = [];
      for (const task of tasks) if (!topLevel.length || task.ts >= topLevel[topLevel.length - 1]!.ts + topLevel[topLevel.length - 1]!.dur!) topLevel.push(task);
      const long = topLevel.filter((t) => t.dur! / 1000 > THRESHOLD_MS);
      process.stdout.write(`\n## ${size.toLocaleString("en")} entries (${session.entries} in the file), CPU ×${throttle}: ${long.length} tasks over ${THRESHOLD_MS} ms\n`);
      for (const task of long) {
        const end = task.ts + task.dur!;
        const inside = onMain.filter((e) => e !== task && e.ts >= task.ts && e.ts + e.dur! <= end);
        const byEvent = eventSelfTimes(inside);
        const js = functionSelfTimesIn(profile, task.ts, end);
        const when = task.ts < scrollMark ? "load" : "scroll";
        process.stdout.write(
          `- ${when} ${(task.dur! / 1000).toFixed(0)} ms (${trigger(inside)}): ${top(byEvent, 6, task.dur!)}\n    js: ${top(js, 10, task.dur!)}\n`,
        );
      }
    }
  } finally {
    await browser.close();
  }
}

await main();
