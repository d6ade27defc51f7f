/**
 * 1. open + buildSessionContext of the ~50 MB pi-written session.
 *
 * Whole processes: `sessionkit context --json FILE` (the bundled bin, built here as `npm run
 * build` builds it) against pi doing the same in a process of its own (bench/lib/pi-context.mjs)
 * and a process that only reads and parses every line (bench/lib/bare-parse.mjs).
 * In process: ours (lazy, the default, read-only and writable; and parsing every line at open)
 * against pi's SessionManager.open + buildSessionContext and a bare readFile + split + JSON.parse
 * of every line.
 */
import { spawn } from "node:child_process";
import { readFile } from "node:fs/promises";
import { join, relative, sep } from "node:path";
import { performance } from "node:perf_hooks";
import { isDeepStrictEqual } from "node:util";
import { PiSessionManager } from "../../test/shared/pi-session-manager.js";
import { nodeFsStorage } from "../../adapters/node-fs/index.js";
import { bundleCliInto } from "../../scripts/cli-bundle.js";
import { SessionManager, type SessionContext } from "../../src/index.js";
import { BENCH_DIR, OPEN_ROOT, SCRATCH_DIR, ensureOpenSession } from "../lib/data.js";
import { formatMs, interleave, summarize, type Case, type Sample } from "../lib/measure.js";
import { ratio, verdict, type Row } from "../lib/report.js";

export interface OpenSection {
  rows: Row[];
  notes: string[];
}

const timing = (s: Sample) => `${formatMs(s.median)} (min ${formatMs(s.min)})`;

/** Runs `node args…` to its end; returns its wall time (spawn to exit) and what it printed. */
export function timeProcess(args: readonly string[], env: NodeJS.ProcessEnv = process.env): Promise<{ ms: number; stdout: string }> {
  return new Promise((resolve, reject) => {
    const start = performance.now();
    const child = spawn(process.execPath, args, { stdio: ["ignore", "pipe", "pipe"], env });
    const out: Buffer[] = [];
    let stderr = "";
    child.stdout.on("data", (chunk: Buffer) => out.push(chunk));
    child.stderr.on("data", (chunk: Buffer) => (stderr += chunk));
    child.on("error", reject);
    child.on("close", (code) => {
      const ms = performance.now() - start;
      if (code === 0) resolve({ ms, stdout: Buffer.concat(out).toString("utf8") });
      else reject(new Error(`node ${args.join(" ")} exited with ${code}: ${stderr.slice(-1000)}`));
    });
  });
}

/** Whole processes, `runs` interleaved rounds after one warm-up round (which fills the page cache). */
async function benchProcesses(file: string, runs: number): Promise<Row[]> {
  const bin = await bundleCliInto(join(SCRATCH_DIR, "cli"));
  const commands = {
    ours: [bin, "context", file, "--json"],
    pi: [join(BENCH_DIR, "lib/pi-context.mjs"), file],
    bare: [join(BENCH_DIR, "lib/bare-parse.mjs"), file],
  };
  const times = { ours: [] as number[], pi: [] as number[], bare: [] as number[] };
  const printed = { ours: "", pi: "", bare: "" };
  const names = ["ours", "pi", "bare"] as const;
  for (let round = 0; round <= runs; round++) {
    // Each round in another order: none always runs first or last on a busy machine.
    const order = names.map((_, i) => names[(i + round) % names.length]!);
    for (const who of order) {
      const { ms, stdout } = await timeProcess(commands[who]);
      if (round > 0) times[who].push(ms);
      printed[who] = stdout;
    }
  }
  const ours = summarize(times.ours);
  const pi = summarize(times.pi);
  const bare = summarize(times.bare);
  return [
    {
      name: "whole process: `sessionkit context FILE --json` (bundled bin) vs pi's SessionManager.open + buildSessionContext + JSON.stringify in a process",
      ours: timing(ours),
      peer: `pi ${timing(pi)}`,
      ratio: ratio(ours.median / pi.median),
      target: "≤ 0.5×",
      verdict: verdict(ours.median / pi.median <= 0.5),
      key: "open.process",
      figures: { oursMs: ours.median, oursMinMs: ours.min, piMs: pi.median, piMinMs: pi.min, ratioToPi: ours.median / pi.median, targetRatioToPi: 0.5 },
    },
    {
      name: "whole process: `sessionkit context FILE --json` vs a process that only reads the file and JSON.parses every line (bench/lib/bare-parse.mjs)",
      ours: timing(ours),
      peer: `bare ${timing(bare)}`,
      ratio: ratio(ours.median / bare.median),
      target: "—",
      verdict: "info",
      key: "open.process",
      figures: { bareMs: bare.median, bareMinMs: bare.min, ratioToBare: ours.median / bare.median },
    },
    {
      name: "whole process: the same JSON on stdout as pi's",
      ours: `${(printed.ours.length / 1e6).toFixed(2)} MB`,
      peer: `pi ${(printed.pi.length / 1e6).toFixed(2)} MB`,
      ratio: "",
      target: "equal",
      verdict: verdict(printed.ours === printed.pi),
      key: "open.process.output",
      figures: { oursBytes: printed.ours.length, piBytes: printed.pi.length, equal: printed.ours === printed.pi },
    },
  ];
}

export async function benchOpen(runs: number): Promise<OpenSection> {
  const data = ensureOpenSession();
  const processRows = await benchProcesses(data.path, runs);
  const storage = nodeFsStorage({ root: OPEN_ROOT });
  const path = relative(OPEN_ROOT, data.path).split(sep).join("/");
  type Opened = { context: unknown; session?: SessionManager };
  let entries = 0;
  const ours = (name: string, options: { readOnly: boolean; parse: "lazy" | "full" }): Case<Opened> => ({
    name,
    async run() {
      const session = await SessionManager.open(storage, path, options);
      return { context: session.buildSessionContext(), session };
    },
    async after({ session }) {
      entries = session!.getEntries().length;
      await session!.close();
    },
  });
  const cases: Case<Opened>[] = [
    ours("ours read-only", { readOnly: true, parse: "lazy" }),
    ours("ours writable", { readOnly: false, parse: "lazy" }),
    ours("ours full parse", { readOnly: true, parse: "full" }),
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
  const rows: Row[] = [...processRows];
  const size = `${(data.size / 1e6).toFixed(1)} MB, ${entries.toLocaleString("en-US")} entries`;
  for (const mode of ["read-only", "writable"] as const) {
    const sample = get(`ours ${mode}`).sample;
    // The read-only open is the headline (`open.*`); the writable one is `open.writable.*`.
    const key = mode === "read-only" ? "open" : "open.writable";
    rows.push({
      name: `in process: open + buildSessionContext, ${size}: ours (${mode}) vs pi`,
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
  }
  // The target is the default open's; parsing every line is shown beside it.
  for (const [name, label, target, key] of [
    ["ours read-only", "ours (lazy, the default: message lines proved, parsed on demand)", true, "open"],
    ["ours full parse", "ours (parse: \"full\", every line parsed at open)", false, "open.full"],
  ] as const) {
    const sample = get(name).sample;
    rows.push({
      name: `in process: open + buildSessionContext: ${label} vs bare readFile + split + JSON.parse (entries kept)`,
      ours: timing(sample),
      peer: `bare ${timing(bare)}`,
      ratio: ratio(sample.median / bare.median),
      target: target ? "≤ 1.2×" : "—",
      verdict: target ? verdict(sample.median / bare.median <= 1.2) : "info",
      key,
      figures: target
        ? { bareMs: bare.median, bareMinMs: bare.min, ratioToBare: sample.median / bare.median, targetRatioToBare: 1.2 }
        : { oursMs: sample.median, oursMinMs: sample.min, ratioToBare: sample.median / bare.median },
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
      `open, whole process: ${runs} rounds of \`node <bundle> context FILE --json\`, \`node bench/lib/pi-context.mjs FILE\` and \`node bench/lib/bare-parse.mjs FILE\` (the order rotated each round) after one warm-up round, wall time from spawn to exit, stdout read in full; times are median (min).`,
      `open, in process: ${runs} interleaved rounds after one warm-up round, full GC before each run; times are median (min). pi's open reads and parses the file twice (once in open() for the cwd, once in setSessionFile()). Lazy: each message line in pi's field order is checked byte by byte (JSON syntax, the entry's schema) and only the entries the context returns are parsed; "full" parses every line.`,
    ],
  };
}
