/**
 * 5. (--huge) A ~1 GiB session, each open in a fresh process with the same Node flags: ours lazy
 * (the default: message lines proved from their bytes, parsed on demand) against ours parsing
 * every line at open (`parse: "full"`, how every open worked before) and pi's SessionManager.open
 * + buildSessionContext.
 */
import { closeSync, openSync, readSync } from "node:fs";
import { join, relative, sep } from "node:path";
import type { ChildTask, OpenResult } from "../lib/child-task.js";
import { bundleCliInto } from "../../scripts/cli-bundle.js";
import { HUGE_ROOT, SCRATCH_DIR, ensureHugeSession } from "../lib/data.js";
import { timeProcess } from "./open.js";
import { formatBytes, formatMs, runChild } from "../lib/measure.js";
import { ratio, verdict, type Row } from "../lib/report.js";
import { openMemory, type OpenMemory } from "./heap.js";

const HUGE_FLAGS = ["--expose-gc", "--trace-gc", "--max-old-space-size=12288"];
/** Lazy open + context of the 1 GiB session, at most (issue #12). */
const TARGET_MS = 3000;

async function attempt(task: ChildTask): Promise<OpenMemory> {
  try {
    return openMemory(await runChild<OpenResult>(task, HUGE_FLAGS));
  } catch (error) {
    // The process died (for instance out of memory): that is the result.
    return { peakHeap: 0, retainedHeap: 0, maxRss: 0, ms: 0, messages: 0, entries: 0, error: (error as Error).message.split("\n").slice(0, 3).join(" ") };
  }
}

const opened = (m: OpenMemory) =>
  m.error
    ? `failed: ${m.error}`
    : `${formatMs(m.ms)}, ${m.messages.toLocaleString("en-US")} context messages; peak RSS ${formatBytes(m.maxRss)}, peak heap ${formatBytes(m.peakHeap)}`;

/** Reads the file once, untimed: the opens measured after it all find it in the page cache. */
function warmPageCache(file: string): void {
  const fd = openSync(file, "r");
  const buffer = Buffer.allocUnsafe(16 * 2 ** 20);
  try {
    while (readSync(fd, buffer, 0, buffer.length, null) > 0);
  } finally {
    closeSync(fd);
  }
}

export async function benchHuge(): Promise<{ rows: Row[]; notes: string[] }> {
  const data = ensureHugeSession();
  const path = relative(HUGE_ROOT, data.path).split(sep).join("/");
  warmPageCache(data.path);
  const lazy = await attempt({ kind: "open-ours", root: HUGE_ROOT, path, readOnly: true, parse: "lazy" });
  const full = await attempt({ kind: "open-ours", root: HUGE_ROOT, path, readOnly: true, parse: "full" });
  const pi = await attempt({ kind: "open-pi", file: data.path });
  const cli = await timeProcess([await bundleCliInto(join(SCRATCH_DIR, "cli")), "context", data.path, "--json"]);
  const entries = Math.max(lazy.entries, full.entries);
  const size = `${formatBytes(data.size)}${entries ? `, ${entries.toLocaleString("en-US")} entries` : ""}`;
  const bothOpened = !lazy.error && !full.error;
  return {
    rows: [
      {
        name: `open + buildSessionContext of a ${size} session (read-only): ours lazy vs the ${formatMs(TARGET_MS)} target`,
        ours: opened(lazy),
        peer: `target ${formatMs(TARGET_MS)}`,
        ratio: lazy.error ? "" : ratio(lazy.ms / TARGET_MS),
        target: `≤ ${formatMs(TARGET_MS)}`,
        verdict: verdict(!lazy.error && lazy.messages > 0 && lazy.ms <= TARGET_MS),
        key: "huge",
        figures: { targetMs: TARGET_MS },
      },
      {
        name: "the same open: ours lazy vs ours parsing every line at open (parse: \"full\", the open before lazy entries)",
        ours: lazy.error ? "failed" : formatMs(lazy.ms),
        peer: `full ${opened(full)}`,
        ratio: bothOpened ? ratio(lazy.ms / full.ms) : "",
        target: "same context",
        verdict: verdict(bothOpened && lazy.messages === full.messages && lazy.entries === full.entries),
        key: "huge.full",
        figures: {
          opened: !full.error,
          ...(full.error ? {} : { ms: full.ms, contextMessages: full.messages, peakRssBytes: full.maxRss, peakHeapBytes: full.peakHeap }),
          ...(bothOpened ? { lazyRatioToFull: lazy.ms / full.ms } : {}),
        },
      },
      {
        name: "the same, as a whole process: `sessionkit context FILE --json` (bundled bin, start-up and output included)",
        ours: `${formatMs(cli.ms)}, ${(cli.stdout.length / 1e6).toFixed(2)} MB of JSON`,
        peer: "—",
        ratio: "",
        target: "—",
        verdict: "info",
        key: "huge.process",
        figures: { ms: cli.ms, outputBytes: cli.stdout.length },
      },
      {
        name: "the same open: ours lazy vs pi",
        ours: lazy.error ? "failed" : formatMs(lazy.ms),
        peer: pi.error ? `pi failed after ${formatMs(pi.ms)}: "${pi.error}"` : `pi ${opened(pi)}`,
        ratio: "",
        target: "ours opens, pi fails",
        verdict: verdict(!lazy.error && lazy.messages > 0 && pi.error !== undefined),
        key: "huge",
        figures: {
          fileBytes: data.size,
          oursOpened: !lazy.error,
          ...(lazy.error ? {} : { oursMs: lazy.ms, entries: lazy.entries, contextMessages: lazy.messages, oursPeakRssBytes: lazy.maxRss, oursPeakHeapBytes: lazy.peakHeap }),
          piOpened: pi.error === undefined,
          piMs: pi.ms,
          ...(pi.error === undefined ? { piPeakRssBytes: pi.maxRss } : {}),
        },
      },
    ],
    notes: [
      `huge: the file is read once untimed (so every open finds it in the page cache), then one run each, each in a fresh \`node ${HUGE_FLAGS.join(" ")} --import tsx\` process (same flags for all); the time is the open + buildSessionContext inside it, peak RSS the process's, peak heap the largest V8 heap before a collection during the open. The file repeats the entries of the pi-written 50 MB session with fresh ids, chained into one tree. Entries are counted after the figures (listing them parses every entry).`,
    ],
  };
}
