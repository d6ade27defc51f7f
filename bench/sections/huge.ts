/**
 * 5. (--huge) A ~1 GiB session: ours opens it (read-only) and builds the context; pi's
 * SessionManager.open + buildSessionContext is tried with the same Node flags.
 */
import { relative, sep } from "node:path";
import type { ChildTask, OpenResult } from "../child.js";
import { HUGE_ROOT, ensureHugeSession } from "../lib/data.js";
import { formatBytes, formatMs, runChild } from "../lib/measure.js";
import { verdict, type Row } from "../lib/report.js";
import { openMemory, type OpenMemory } from "./heap.js";

export const HUGE_FLAGS = ["--expose-gc", "--trace-gc", "--max-old-space-size=12288"];

async function attempt(task: ChildTask): Promise<OpenMemory> {
  try {
    return openMemory(await runChild<OpenResult>(task, HUGE_FLAGS));
  } catch (error) {
    // The process died (for instance out of memory): that is the result.
    return { peakHeap: 0, retainedHeap: 0, maxRss: 0, ms: 0, messages: 0, entries: 0, error: (error as Error).message.split("\n").slice(0, 3).join(" ") };
  }
}

export async function benchHuge(): Promise<{ rows: Row[]; notes: string[] }> {
  const data = ensureHugeSession();
  const path = relative(HUGE_ROOT, data.path).split(sep).join("/");
  const ours = await attempt({ kind: "open-ours", root: HUGE_ROOT, path, readOnly: true });
  const pi = await attempt({ kind: "open-pi", file: data.path });
  const size = `${formatBytes(data.size)}${ours.error ? "" : `, ${ours.entries.toLocaleString("en-US")} entries`}`;
  const oursCell = ours.error
    ? `failed: ${ours.error}`
    : `opened in ${formatMs(ours.ms)}, ${ours.messages.toLocaleString("en-US")} context messages; peak RSS ${formatBytes(ours.maxRss)}, peak heap ${formatBytes(ours.peakHeap)}`;
  const piCell = pi.error ? `pi failed after ${formatMs(pi.ms)}: "${pi.error}"` : `pi opened in ${formatMs(pi.ms)}, peak RSS ${formatBytes(pi.maxRss)}`;
  return {
    rows: [
      {
        name: `open + buildSessionContext of a ${size} session (read-only)`,
        ours: oursCell,
        peer: piCell,
        ratio: "",
        target: "ours opens, pi fails",
        verdict: verdict(!ours.error && ours.messages > 0 && pi.error !== undefined),
        key: "huge",
        figures: {
          fileBytes: data.size,
          oursOpened: !ours.error,
          ...(ours.error ? {} : { oursMs: ours.ms, entries: ours.entries, contextMessages: ours.messages, oursPeakRssBytes: ours.maxRss, oursPeakHeapBytes: ours.peakHeap }),
          piOpened: pi.error === undefined,
          piMs: pi.ms,
          ...(pi.error === undefined ? { piPeakRssBytes: pi.maxRss } : {}),
        },
      },
    ],
    notes: [
      `huge: one run each, each in a fresh \`node ${HUGE_FLAGS.join(" ")} --import tsx\` process (same flags for both). The file repeats the entries of the pi-written 50 MB session with fresh ids, chained into one tree.`,
    ],
  };
}
