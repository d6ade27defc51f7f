/**
 * 2. Memory of one open + buildSessionContext of the ~50 MB session, each in a fresh process:
 * peak heap (the larger of V8's pre-collection heap sizes from --trace-gc and heapUsed sampled at
 * every storage read), heap retained after a full GC, and peak RSS; ours vs the file size and
 * vs pi.
 */
import { relative, sep } from "node:path";
import type { OpenResult } from "../lib/child-task.js";
import { OPEN_ROOT, ensureOpenSession } from "../lib/data.js";
import { formatBytes, runChild, summarize } from "../lib/measure.js";
import { ratio, verdict, type Row } from "../lib/report.js";

const HEAP_FLAGS = ["--expose-gc", "--trace-gc"];

export interface OpenMemory {
  /** Peak heap above the heap before opening. */
  peakHeap: number;
  retainedHeap: number;
  maxRss: number;
  ms: number;
  messages: number;
  entries: number;
  error?: string;
}

export function openMemory(run: { result: OpenResult; peakHeapBeforeGc: number }): OpenMemory {
  const r = run.result;
  return {
    peakHeap: Math.max(run.peakHeapBeforeGc, r.heapSampledPeak) - r.heapBefore,
    retainedHeap: r.heapRetained - r.heapBefore,
    maxRss: r.maxRss,
    ms: r.ms,
    messages: r.messages,
    entries: r.entries,
    ...(r.error === undefined ? {} : { error: r.error }),
  };
}

export async function benchHeap(runs: number): Promise<{ rows: Row[]; notes: string[] }> {
  const data = ensureOpenSession();
  const path = relative(OPEN_ROOT, data.path).split(sep).join("/");
  const measured: Record<"read-only" | "writable" | "pi", OpenMemory[]> = { "read-only": [], writable: [], pi: [] };
  for (let round = 0; round < runs; round++) {
    measured["read-only"].push(openMemory(await runChild<OpenResult>({ kind: "open-ours", root: OPEN_ROOT, path, readOnly: true }, HEAP_FLAGS)));
    measured.writable.push(openMemory(await runChild<OpenResult>({ kind: "open-ours", root: OPEN_ROOT, path, readOnly: false }, HEAP_FLAGS)));
    measured.pi.push(openMemory(await runChild<OpenResult>({ kind: "open-pi", file: data.path }, HEAP_FLAGS)));
  }
  const median = (runsOf: OpenMemory[], key: "peakHeap" | "retainedHeap" | "maxRss") => summarize(runsOf.map((m) => m[key])).median;
  const pi = {
    peak: median(measured.pi, "peakHeap"),
    retained: median(measured.pi, "retainedHeap"),
    rss: median(measured.pi, "maxRss"),
  };
  const fileSize = formatBytes(data.size);
  const rows: Row[] = [];
  for (const mode of ["read-only", "writable"] as const) {
    const peak = median(measured[mode], "peakHeap");
    rows.push({
      name: `peak heap during open + context (ours, ${mode}) vs file size`,
      ours: formatBytes(peak),
      peer: `file ${fileSize} (pi's peak ${formatBytes(pi.peak)})`,
      ratio: ratio(peak / data.size),
      target: "≤ 3× file",
      verdict: verdict(peak / data.size <= 3),
      key: `memory.open.${mode === "read-only" ? "readOnly" : "writable"}`,
      figures: { peakHeapBytes: peak, fileBytes: data.size, piPeakHeapBytes: pi.peak, ratioToFile: peak / data.size, targetRatioToFile: 3 },
    });
  }
  const retained = median(measured["read-only"], "retainedHeap");
  rows.push({
    name: "heap retained after open + context and a full GC (ours, read-only) vs pi",
    ours: formatBytes(retained),
    peer: `pi ${formatBytes(pi.retained)}`,
    ratio: ratio(retained / pi.retained),
    target: "—",
    verdict: "info",
    key: "memory.open.retained",
    figures: { oursBytes: retained, piBytes: pi.retained, ratioToPi: retained / pi.retained },
  });
  const rss = median(measured["read-only"], "maxRss");
  rows.push({
    name: "peak RSS of the whole process (ours, read-only) vs pi",
    ours: formatBytes(rss),
    peer: `pi ${formatBytes(pi.rss)}`,
    ratio: ratio(rss / pi.rss),
    target: "—",
    verdict: "info",
    key: "memory.open.peakRss",
    figures: { oursBytes: rss, piBytes: pi.rss, ratioToPi: rss / pi.rss },
  });
  return {
    rows,
    notes: [
      `memory: each open in a fresh \`node ${HEAP_FLAGS.join(" ")} --import tsx\` process, ${runs} runs per variant, medians; heap figures are above the heap measured after a full GC just before the open. Peak heap = max(V8 heap size before each GC from --trace-gc, heapUsed sampled at every storage read and after open/context).`,
    ],
  };
}
