/**
 * 1. open + buildSessionContext of the ~50 MB pi-written session: ours (read-only and writable,
 * on node-fs) vs pi's SessionManager.open + buildSessionContext vs a bare readFile + split +
 * JSON.parse of every line.
 */
import { readFile } from "node:fs/promises";
import { relative, sep } from "node:path";
import { isDeepStrictEqual } from "node:util";
import { PiSessionManager } from "../lib/pi.js";
import { nodeFsStorage } from "../../adapters/node-fs/index.js";
import { SessionManager, type SessionContext } from "../../src/index.js";
import { OPEN_ROOT, ensureOpenSession } from "../lib/data.js";
import { formatMs, interleave, type Case, type Sample } from "../lib/measure.js";
import { ratio, verdict, type Row } from "../lib/report.js";

export interface OpenSection {
  rows: Row[];
  notes: string[];
}

const timing = (s: Sample) => `${formatMs(s.median)} (min ${formatMs(s.min)})`;

export async function benchOpen(runs: number): Promise<OpenSection> {
  const data = ensureOpenSession();
  const storage = nodeFsStorage({ root: OPEN_ROOT });
  const path = relative(OPEN_ROOT, data.path).split(sep).join("/");
  type Opened = { context: unknown; session?: SessionManager };
  let entries = 0;
  const ours = (readOnly: boolean): Case<Opened> => ({
    name: readOnly ? "ours read-only" : "ours writable",
    async run() {
      const session = await SessionManager.open(storage, path, { readOnly });
      return { context: session.buildSessionContext(), session };
    },
    async after({ session }) {
      entries = session!.getEntries().length;
      await session!.close();
    },
  });
  const cases: Case<Opened>[] = [
    ours(true),
    ours(false),
    {
      name: "pi",
      run() {
        const pi = PiSessionManager.open(data.path);
        return { context: pi.buildSessionContext() };
      },
    },
    {
      name: "bare",
      async run() {
        const text = await readFile(data.path, "utf8");
        const entries: unknown[] = [];
        for (const line of text.split("\n")) if (line) entries.push(JSON.parse(line));
        return { context: entries };
      },
    },
  ];
  const results = await interleave(cases, runs);
  const get = (name: string) => results.get(name)!;
  const pi = get("pi").sample;
  const bare = get("bare").sample;
  const rows: Row[] = [];
  const size = `${(data.size / 1e6).toFixed(1)} MB, ${entries.toLocaleString("en-US")} entries`;
  for (const mode of ["read-only", "writable"] as const) {
    const sample = get(`ours ${mode}`).sample;
    // The read-only open is the headline (`open.*`); the writable one is `open.writable.*`.
    const key = mode === "read-only" ? "open" : "open.writable";
    rows.push({
      name: `open + buildSessionContext, ${size}: ours (${mode}) vs pi`,
      ours: timing(sample),
      peer: `pi ${timing(pi)}`,
      ratio: ratio(sample.median / pi.median),
      target: "≤ 0.5×",
      verdict: verdict(sample.median / pi.median <= 0.5),
      key,
      figures: {
        oursMs: sample.median,
        oursMinMs: sample.min,
        ...(mode === "read-only" ? { piMs: pi.median, piMinMs: pi.min, fileBytes: data.size, entries } : {}),
        ratioToPi: sample.median / pi.median,
        targetRatioToPi: 0.5,
      },
    });
    rows.push({
      name: `open + buildSessionContext: ours (${mode}) vs bare readFile + split + JSON.parse (entries kept)`,
      ours: timing(sample),
      peer: `bare ${timing(bare)}`,
      ratio: ratio(sample.median / bare.median),
      target: "≤ 2×",
      verdict: verdict(sample.median / bare.median <= 2),
      key,
      figures: { ...(mode === "read-only" ? { bareMs: bare.median, bareMinMs: bare.min } : {}), ratioToBare: sample.median / bare.median, targetRatioToBare: 2 },
    });
  }
  const oursContext = get("ours read-only").last.context as SessionContext;
  const piContext = get("pi").last.context as SessionContext;
  const same = isDeepStrictEqual(JSON.parse(JSON.stringify(oursContext)), JSON.parse(JSON.stringify(piContext)));
  rows.push({
    name: "same context as pi (deep equal: messages, thinking level, model)",
    ours: `${oursContext.messages.length} messages, ${oursContext.thinkingLevel}`,
    peer: `pi ${piContext.messages.length} messages, ${piContext.thinkingLevel}`,
    ratio: "",
    target: "equal",
    verdict: verdict(same),
    key: "open.context",
    figures: { oursMessages: oursContext.messages.length, piMessages: piContext.messages.length, equal: same },
  });
  await storage.close();
  return {
    rows,
    notes: [
      `open: ${runs} interleaved rounds after one warm-up round, full GC before each run; times are median (min). pi's open reads and parses the file twice (once in open() for the cwd, once in setSessionFile()).`,
    ],
  };
}
