/**
 * `npm run bench [-- flags]`: sessionkit against pi and bare baselines, every number measured in
 * this run. Prints a markdown table and writes it to bench/results.md.
 *
 *   --runs N      rounds per measurement (default 3; medians are reported)
 *   --open-runs N rounds of the (cheap) open measurement (default 5)
 *   --only LIST   comma-separated sections: open,heap,appends,list,list-readonly,archive,postgres,huge,profile
 *                 (default: open,heap,appends,list,list-readonly,archive,postgres, plus huge/profile when flagged)
 *   --appends N   appends per run (default 20000)
 *   --huge        also open a ~1 GiB session (ours vs pi); needs ~1 GiB more disk, deleted after
 *   --keep-huge   keep the ~1 GiB file for the next --huge run
 *   --profile     also CPU-profile our open, cold listing and appends (top self-time functions)
 *   --no-write    print only; leave bench/results.md alone
 */
import { spawnSync } from "node:child_process";
import { mkdirSync, writeFileSync } from "node:fs";
import os from "node:os";
import { join } from "node:path";
import { fileURLToPath } from "node:url";
import { parseArgs } from "node:util";
import { BENCH_DIR, SCRATCH_DIR, removeHugeSession } from "./lib/data.js";
import { machineInfo, markdownTable, type Row } from "./lib/report.js";
import { profileArchive, runArchiveBench } from "./archive.js";
import { benchAppends } from "./sections/appends.js";
import { benchHeap } from "./sections/heap.js";
import { benchHuge } from "./sections/huge.js";
import { benchListing } from "./sections/listing.js";
import { benchOpen } from "./sections/open.js";
import { benchPostgres } from "./sections/postgres.js";
import { benchStoreListing } from "./sections/store-listing.js";
import { profileOurs } from "./sections/profile.js";

const SECTIONS = ["open", "heap", "appends", "list", "list-readonly", "archive", "postgres", "huge", "profile"] as const;
const DEFAULT_SECTIONS = ["open", "heap", "appends", "list", "list-readonly", "archive", "postgres"];

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
    },
  });
  const runs = Number(values.runs);
  const openRuns = Number(values["open-runs"]);
  const appendCount = Number(values.appends);
  for (const [flag, value] of [["--runs", runs], ["--open-runs", openRuns]] as const) {
    if (!Number.isInteger(value) || value < 1) throw new Error(`${flag} must be a positive integer`);
  }
  if (!Number.isInteger(appendCount) || appendCount < 8) throw new Error(`--appends must be an integer ≥ 8, got ${values.appends}`);
  const only = values.only ? values.only.split(",") : [...DEFAULT_SECTIONS];
  if (values.huge) only.push("huge");
  if (values.profile) only.push("profile");
  for (const name of only) if (!(SECTIONS as readonly string[]).includes(name)) throw new Error(`unknown section ${name}; known: ${SECTIONS.join(", ")}`);

  const started = new Date();
  const startMs = Date.now();
  const machine = machineInfo();
  mkdirSync(SCRATCH_DIR, { recursive: true });
  const rows: Row[] = [];
  const notes: string[] = [];
  const progress = (message: string) => process.stderr.write(`[bench ${((Date.now() - startMs) / 1000).toFixed(0)}s] ${message}\n`);
  const section = async (name: string, run: () => Promise<{ rows: Row[]; notes: string[] }>) => {
    progress(`${name} …`);
    const result = await run();
    rows.push(...result.rows);
    notes.push(...result.notes);
  };

  if (only.includes("open")) await section("open + buildSessionContext", () => benchOpen(openRuns));
  if (only.includes("heap")) await section("memory of one open (child processes)", () => benchHeap(runs));
  if (only.includes("appends")) await section(`${appendCount} appends`, () => benchAppends(runs, appendCount));
  if (only.includes("list")) await section("listing 300 sessions", () => benchListing(runs));
  if (only.includes("list-readonly")) await section("listing a read-only store", () => benchStoreListing(runs));
  if (only.includes("archive")) {
    await section("archive export/import vs zip/unzip", async () => {
      const archiveRows = await runArchiveBench({ runs });
      return { rows: archiveRows, notes: archiveRows.flatMap((row) => (row.note ? [`${row.name}: ${row.note}`] : [])) };
    });
  }
  if (only.includes("postgres")) await section("postgres vs node-fs (a private cluster)", () => benchPostgres(runs));
  if (only.includes("huge")) {
    try {
      await section("1 GiB session (child processes)", () => benchHuge());
    } finally {
      if (!values["keep-huge"]) removeHugeSession();
    }
  }
  const profile = only.includes("profile") ? (progress("CPU profiles …"), [...(await profileOurs(appendCount)), ...(only.includes("archive") ? await profileArchive() : [])]) : [];

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
