/**
 * `npm run bench [-- flags]`: sessionkit against pi and bare baselines, every number measured in
 * this run. Prints a markdown table and writes it to bench/results.md.
 *
 *   --runs N      rounds per measurement (default 3; medians are reported)
 *   --open-runs N rounds of the (cheap) open measurement (default 5)
 *   --only LIST   comma-separated sections: open,tool-turns,heap,appends,list,list-readonly,archive,remote,search,startup,postgres,secrets,sync,huge,profile
 *                 (default: open,tool-turns,heap,appends,list,list-readonly,archive,remote,search,startup,postgres,secrets,sync, plus huge/profile when flagged;
 *                 `--only startup` alone: the CLI's whole-process start-up rows, a minute or so)
 *   --appends N   appends per run (default 20000)
 *   --huge        also open a ~1 GiB session (ours vs pi); needs ~1 GiB more disk, deleted after
 *   --keep-huge   keep the ~1 GiB file for the next --huge run
 *   --profile     also CPU-profile our open, cold listing and appends (top self-time functions)
 *   --no-write    print only; leave bench/results.md alone
 *   --json FILE   also write every figure of the run to FILE (keys: bench/README.md)
 *
 * A section is one entry of SECTIONS: its rows carry the keys their figures take in the JSON.
 */
import { spawnSync } from "node:child_process";
import { mkdirSync, writeFileSync } from "node:fs";
import os from "node:os";
import { join, resolve } from "node:path";
import { fileURLToPath } from "node:url";
import { parseArgs } from "node:util";
import { BENCH_DIR, SCRATCH_DIR, removeHugeSession } from "./lib/data.js";
import { machineInfo, markdownTable, resultsJson, type Row } from "./lib/report.js";
import { profileArchive, runArchiveBench } from "./archive.js";
import { benchAppends } from "./sections/appends.js";
import { benchHeap } from "./sections/heap.js";
import { benchHuge } from "./sections/huge.js";
import { benchListing } from "./sections/listing.js";
import { benchOpen } from "./sections/open.js";
import { benchRemote } from "./sections/remote.js";
import { benchPostgres } from "./sections/postgres.js";
import { benchSearch } from "./sections/search.js";
import { benchSecrets } from "./sections/secrets.js";
import { benchStartup } from "./sections/startup.js";
import { benchStoreListing } from "./sections/store-listing.js";
import { benchSync } from "./sections/sync.js";
import { benchToolTurns } from "./sections/tool-turns.js";
import { profileOurs } from "./sections/profile.js";

interface BenchOptions {
  runs: number;
  openRuns: number;
  appendCount: number;
}

interface Section {
  /** The name `--only` takes. */
  name: string;
  /** What the progress line says. */
  title: (options: BenchOptions) => string;
  /** Run without being named in `--only` (the others need a flag). */
  byDefault: boolean;
  run: (options: BenchOptions) => Promise<{ rows: Row[]; notes: string[] }>;
  /** Runs after the section, whether it succeeded or not. */
  cleanup?: () => void;
}

/** --keep-huge: leave the ~1 GiB file for the next --huge run. */
let keepHuge = false;

const SECTIONS: Section[] = [
  { name: "open", title: () => "open + buildSessionContext", byDefault: true, run: (o) => benchOpen(o.openRuns) },
  {
    name: "tool-turns",
    title: () => "users' shape: context of a 51 MB session of small tool turns, ls of 300 such sessions (whole processes)",
    byDefault: true,
    run: (o) => benchToolTurns(o.runs),
  },
  { name: "heap", title: () => "memory of one open (child processes)", byDefault: true, run: (o) => benchHeap(o.runs) },
  { name: "appends", title: (o) => `${o.appendCount} appends`, byDefault: true, run: (o) => benchAppends(o.runs, o.appendCount) },
  { name: "list", title: () => "listing 300 sessions", byDefault: true, run: (o) => benchListing(o.runs) },
  { name: "list-readonly", title: () => "listing a read-only store", byDefault: true, run: (o) => benchStoreListing(o.runs) },
  {
    name: "archive",
    title: () => "archive export/import vs zip/unzip",
    byDefault: true,
    run: async (o) => {
      const rows = await runArchiveBench({ runs: o.runs });
      return { rows, notes: rows.flatMap((row) => (row.note ? [`${row.name}: ${row.note}`] : [])) };
    },
  },
  { name: "huge", title: () => "1 GiB session (child processes)", byDefault: false, run: () => benchHuge(), cleanup: () => keepHuge || removeHugeSession() },
  { name: "remote", title: () => "remote stores: appends over the Electron bridge", byDefault: true, run: (o) => benchRemote(o.runs) },
  { name: "search", title: () => "finding sessions: listing, search index, search (300 sessions, 10 projects)", byDefault: true, run: (o) => benchSearch(o.runs) },
  { name: "startup", title: () => "CLI start-up: --help, ls, search as whole processes vs node -e 0", byDefault: true, run: (o) => benchStartup(o.runs) },
  { name: "postgres", title: () => "postgres vs node-fs (a private cluster)", byDefault: true, run: (o) => benchPostgres(o.runs) },
  { name: "secrets", title: () => "secrets: recall, redacted exports, corpus findings, scan throughput", byDefault: true, run: (o) => benchSecrets(o.runs) },
  { name: "sync", title: () => "sync vs import: 300 sessions, then steady appends, into node-fs and postgres", byDefault: true, run: (o) => benchSync(o.runs) },
];


async function main(): Promise<void> {
  const { values } = parseArgs({
    options: {
      runs: { type: "string", default: "3" },
      "open-runs": { type: "string", default: "5" },
      only: { type: "string" },
      appends: { type: "string", default: "20000" },
      huge: { type: "boolean", default: false },
      "keep-huge": { type: "boolean", default: false },
      profile: { type: "boolean", default: false },
      "no-write": { type: "boolean", default: false },
      json: { type: "string" },
    },
  });
  keepHuge = values["keep-huge"];
  const options: BenchOptions = { runs: Number(values.runs), openRuns: Number(values["open-runs"]), appendCount: Number(values.appends) };
  for (const [flag, value] of [["--runs", options.runs], ["--open-runs", options.openRuns]] as const) {
    if (!Number.isInteger(value) || value < 1) throw new Error(`${flag} must be a positive integer`);
  }
  if (!Number.isInteger(options.appendCount) || options.appendCount < 8) throw new Error(`--appends must be an integer ≥ 8, got ${values.appends}`);
  const known = [...SECTIONS.map((section) => section.name), "profile"];
  const only = values.only ? values.only.split(",") : SECTIONS.filter((section) => section.byDefault).map((section) => section.name);
  if (values.huge) only.push("huge");
  if (values.profile) only.push("profile");
  for (const name of only) if (!known.includes(name)) throw new Error(`unknown section ${name}; known: ${known.join(", ")}`);

  const started = new Date();
  const startMs = Date.now();
  const machine = machineInfo();
  mkdirSync(SCRATCH_DIR, { recursive: true });
  const rows: Row[] = [];
  const notes: string[] = [];
  const progress = (message: string) => process.stderr.write(`[bench ${((Date.now() - startMs) / 1000).toFixed(0)}s] ${message}\n`);
  for (const section of SECTIONS.filter((s) => only.includes(s.name))) {
    progress(`${section.title(options)} …`);
    try {
      const result = await section.run(options);
      rows.push(...result.rows);
      notes.push(...result.notes);
    } finally {
      section.cleanup?.();
    }
  }
  const profile = only.includes("profile") ? (progress("CPU profiles …"), [...(await profileOurs(options.appendCount)), ...(only.includes("archive") ? await profileArchive() : [])]) : [];

  const elapsed = (Date.now() - startMs) / 1000;
  const failed = rows.filter((row) => row.verdict === "FAIL").length;
  const flags = process.argv.slice(2).join(" ") || "(none)";
  const report = [
    "# sessionkit benchmark",
    "",
    `Measured ${started.toISOString()} by \`npm run bench\` (flags: ${flags}; ${elapsed.toFixed(0)} s); every number below comes from that run.`,
    "",
    ...machine.map((line) => `- ${line}`),
    `- load average at the end: ${os.loadavg().map((l) => l.toFixed(2)).join(" / ")} (other work shares this machine: read ratios with that in mind)`,
    `- runner: \`node ${process.execArgv.join(" ")}\``,
    "",
    markdownTable(rows),
    "",
    `${rows.filter((row) => row.verdict === "PASS").length} passed, ${failed} failed, ${rows.filter((row) => row.verdict === "info").length} for information.`,
    "",
    "## How",
    "",
    ...notes.map((note) => `- ${note}`),
    "- data: written by pi's own SessionManager (`@mariozechner/pi-coding-agent` 0.73.1) into bench/.data, generated once and reused (generation is not timed).",
    ...(profile.length ? ["", "## CPU profiles (ours)", "", ...profile] : []),
    "",
  ].join("\n");
  process.stdout.write(report);
  if (!values["no-write"]) {
    writeFileSync(join(BENCH_DIR, "results.md"), report);
    progress("wrote bench/results.md");
  }
  if (values.json) {
    const meta = { measuredAt: started.toISOString(), seconds: elapsed, flags, machine, loadAverageAtEnd: os.loadavg(), node: process.version };
    // npm runs scripts in the package root: a relative FILE is the caller's.
    const file = resolve(process.env.INIT_CWD ?? process.cwd(), values.json);
    writeFileSync(file, `${JSON.stringify(resultsJson(rows, meta), null, 2)}\n`);
    progress(`wrote ${file}`);
  }
}

// GC between runs needs --expose-gc: re-run this file under `node --expose-gc --import tsx`.
if (typeof (globalThis as { gc?: unknown }).gc !== "function") {
  const child = spawnSync(process.execPath, ["--expose-gc", "--import", "tsx", fileURLToPath(import.meta.url), ...process.argv.slice(2)], {
    stdio: "inherit",
    cwd: join(BENCH_DIR, ".."),
  });
  process.exit(child.status ?? 1);
} else {
  await main();
}
