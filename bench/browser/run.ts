/**
 * `npm run bench:browser [-- --json FILE]`: sessionkit's storage in real Chromium (a persistent
 * profile under bench/.data/chromium-profile, so IndexedDB and OPFS are on disk), with node-fs
 * measured in the same run for scale. Prints a markdown table and writes it, with the machine and
 * every run's numbers, to bench/browser/results.md; `--json FILE` also writes every figure under
 * the keys bench/README.md lists. Every figure in the table is the median of ROUNDS runs (3, or
 * `--rounds N`).
 *
 * Workloads (./workload.ts, the same code in the page, in a worker and in Node):
 * - appends: a new session, 10k messages of ~1–2 KB, `await flush()` after every 4: on IndexedDB
 *   (page), on OPFS with the SessionManager in a worker (where the sync handles are) and from the
 *   page through the rpc, each against its platform floor measured in the same round (the bare
 *   primitives a durable flush needs, no sessionkit), and on the memory port (SessionManager's own
 *   cost).
 * - the naive peer (./naive-port.ts: whole file rewritten per append) at doubling counts, with
 *   ours at the same counts: the ratio per doubling shows quadratic vs linear growth.
 * - open: SessionManager.open + buildSessionContext of one ~50 MB session, the same bytes on
 *   every backend (checked by sha-256).
 * Then, to explain the figures (not part of the medians): one instrumented run per backend
 * (storage calls timed, page CPU profiled over CDP) and floors, the bare primitives' cost.
 */
import { execFileSync } from "node:child_process";
import { mkdir, mkdtemp, open, rm, writeFile } from "node:fs/promises";
import { cpus, freemem, loadavg, tmpdir, totalmem } from "node:os";
import { dirname, join, resolve } from "node:path";
import { fileURLToPath } from "node:url";
import { parseArgs } from "node:util";
import { chromium, type CDPSession, type Page } from "playwright";
import { createServer } from "vite";
import { nodeFsStorage } from "../../adapters/node-fs/index.js";
import { startServe } from "../../cli/serve/server.js";
import { chromiumArgs, chromiumExecutable } from "../../chromium.config.js";
import type { Backend } from "./app/main.js";
import { markdownTable, resultsJson, verdict, type Figures, type Row } from "../lib/report.js";
import { selfTimes, type CpuProfile } from "./cpu-profile.js";
import type { Breakdown } from "./timed-port.js";
import { runViewerSection } from "./viewer.js";
import { runViewerHugeSection } from "./viewer-huge.js";
import { OPEN_SESSION_PATH, instrumented, largeSessionBytes, sha256, timeAppends, timeOpen, type AppendRun, type OpenRun, type PairedRun } from "./workload.js";

const HERE = dirname(fileURLToPath(import.meta.url));
const PROJECT = join(HERE, "..", "..");
const PROFILE_DIR = join(PROJECT, "bench", ".data", "chromium-profile");
const RESULTS = join(HERE, "results.md");

/** Rounds of each measurement (`--rounds N`); every figure in the table is their median. */
let ROUNDS = 3;
const APPENDS = 10_000;
const FLUSH_EVERY = 4;
const FLUSHES = APPENDS / FLUSH_EVERY;
const GROWTH_COUNTS = [1000, 2000, 4000];
const OPEN_BYTES = 50_000_000;
const FLOOR_ITERATIONS = 500;
/** The session reader's range size (src/format/jsonl-reader.ts DEFAULT_CHUNK). */
const READ_RANGE_BYTES = 4 << 20;
/** Every database and OPFS directory the bench makes starts with this (an aborted run's are removed). */
const PREFIX = "sessionkit-bench-";

/** IndexedDB appends: at most this many times their floor (one strict transaction per flush), measured in the same round. */
const TARGET_IDB_RATIO = 1.2;
/** OPFS appends with the session in the worker: at most this many times the floor plus serializing the entries. */
const TARGET_OPFS_RATIO = 1.2;
/** OPFS appends from the page through the rpc: at most this many times the floor plus serialization plus a round trip per flush. */
const TARGET_OPFS_RPC_RATIO = 1.3;
const TARGET_OPEN_RATIO = 2;
/** Open over `sessionkit serve` (the file in Node, the session in the page) against IndexedDB in the same page. */
const TARGET_OPEN_HTTP_RATIO = 1.5;
/**
 * "Quadratic" means the n² term of a least-squares fit t = a·n + b·n² makes up at least this share
 * of the fitted time at the largest count. (Ratios per doubling are printed too, but on a shared
 * machine the fixed cost per transaction blurs them: 2× is linear, 4× quadratic only as n grows.)
 */
const QUADRATIC_MIN_SHARE = 0.5;

const log = (message: string) => process.stderr.write(`[bench:browser] ${message}\n`);
const median = (values: number[]) => {
  const sorted = [...values].sort((a, b) => a - b);
  const mid = sorted.length >> 1;
  return sorted.length % 2 ? sorted[mid]! : (sorted[mid - 1]! + sorted[mid]!) / 2;
};
const ms = (value: number) => (value >= 100 ? `${Math.round(value)} ms` : value >= 1 ? `${value.toFixed(1)} ms` : `${value.toFixed(3)} ms`);
const times = (value: number) => `${value.toFixed(2)}×`;
const label = (backend: Backend | "node-fs") => (backend === "opfs" ? "opfs-rpc" : backend);
/** A figure name from a label: "open + buildSessionContext, indexeddb" → "openBuildSessionContextIndexeddb". */
const camel = (text: string) =>
  text
    .replace(/[^A-Za-z0-9]+(.)?/g, (_, next: string | undefined) => (next ? next.toUpperCase() : ""))
    .replace(/^./, (first) => first.toLowerCase());

let nameCounter = 0;
const freshName = (what: string) => `${PREFIX}${what}-${Date.now().toString(36)}-${nameCounter++}`;

/** Runs of each measurement, by name, in the order taken. */
const runs = new Map<string, number[]>();
function record(name: string, value: number): void {
  runs.set(name, [...(runs.get(name) ?? []), value]);
  log(`${name}: ${ms(value)}`);
}
const med = (name: string) => median(runs.get(name) ?? []);

function expectLines(run: AppendRun, count: number, what: string): void {
  if (run.lines !== count + 1) throw new Error(`${what}: the file has ${run.lines} lines, expected ${count + 1} (header + entries)`);
}

// ---------------------------------------------------------------------------------------------
// Node

async function withNodeStorage<R>(body: (port: ReturnType<typeof nodeFsStorage>) => Promise<R>): Promise<R> {
  const root = await mkdtemp(join(tmpdir(), PREFIX));
  const port = nodeFsStorage({ root });
  try {
    return await body(port);
  } finally {
    await port.close();
    await rm(root, { recursive: true, force: true });
  }
}

/** Per-iteration ms of `bytes` appended to an open file handle and fsynced: node-fs's floor. */
async function nodeFsyncFloor(iterations: number, bytes: number): Promise<number> {
  const dir = await mkdtemp(join(tmpdir(), PREFIX));
  const handle = await open(join(dir, "floor.bin"), "a");
  try {
    const data = new Uint8Array(bytes).fill(0x61);
    const start = performance.now();
    for (let i = 0; i < iterations; i++) {
      await handle.write(data);
      await handle.sync();
    }
    return (performance.now() - start) / iterations;
  } finally {
    await handle.close();
    await rm(dir, { recursive: true, force: true });
  }
}

// ---------------------------------------------------------------------------------------------
// The page

interface BenchPage {
  page: Page;
  cdp: CDPSession;
  browser: string;
  quota: number;
  stop(): Promise<void>;
}

async function startPage(): Promise<BenchPage> {
  const server = await createServer({
    configFile: false,
    root: join(HERE, "app"),
    cacheDir: join(PROJECT, "node_modules", ".vite-bench-browser"),
    optimizeDeps: { include: ["idb", "zod/mini", "zod/v4/locales/en.js"], entries: ["index.html"] },
    // No watcher, no HMR socket: other engineers edit src/ during a run, and a reload would kill it.
    server: { host: "127.0.0.1", port: 4180, hmr: false, ws: false, watch: null },
    logLevel: "warn",
  });
  await server.listen();
  const url = server.resolvedUrls?.local[0];
  if (!url) throw new Error("the Vite server has no local URL");
  await mkdir(PROFILE_DIR, { recursive: true });
  const context = await chromium.launchPersistentContext(PROFILE_DIR, { executablePath: chromiumExecutable, args: chromiumArgs, headless: true });
  const page = context.pages()[0] ?? (await context.newPage());
  await page.goto(url);
  await page.locator("#status", { hasText: "ready" }).waitFor();
  const cdp = await context.newCDPSession(page);
  const { product } = (await cdp.send("Browser.getVersion")) as { product: string };
  const estimate = await page.evaluate(() => navigator.storage.estimate());
  return {
    page,
    cdp,
    browser: product,
    quota: estimate.quota ?? 0,
    stop: async () => {
      await context.close();
      await server.close();
    },
  };
}

const pageAppends = (page: Page, backend: Backend, count: number, breakdown = false) =>
  page.evaluate(([backend, name, count, flushEvery, breakdown]) => window.bench.appends(backend, name, count, flushEvery, breakdown), [
    backend,
    freshName(`appends-${backend}`),
    count,
    FLUSH_EVERY,
    breakdown,
  ] as const);

const pageOpen = (page: Page, backend: Backend, breakdown = false) =>
  page.evaluate(([backend, breakdown]) => window.bench.open(backend, breakdown), [backend, breakdown] as const);

/** Runs `body` with the page's V8 sampling profiler on; returns its result and the profile. */
async function profiled<R>(cdp: CDPSession, body: () => Promise<R>): Promise<{ result: R; profile: CpuProfile }> {
  await cdp.send("Profiler.enable");
  await cdp.send("Profiler.setSamplingInterval", { interval: 500 });
  await cdp.send("Profiler.start");
  try {
    const result = await body();
    const { profile } = (await cdp.send("Profiler.stop")) as { profile: CpuProfile };
    return { result, profile };
  } finally {
    await cdp.send("Profiler.disable");
  }
}

// ---------------------------------------------------------------------------------------------
// Measurements

/**
 * 10k appends, flush every 4, and their floors. The three rows with a target take ours and its
 * floor flush by flush in one run (workload.ts timePairedAppends), so both meet the same moments
 * of the machine: IndexedDB against one strict transaction per flush, OPFS with the session in a
 * worker against the floor plus serialization, OPFS through the rpc against that with the page
 * serializing and a round trip per flush. The rest interleaves per round: the OPFS split (the
 * floor, plus serialization, SessionManager on a bare port, ours, each a run of its own), a
 * message round trip per flush, SessionManager alone (memory port) in the page and in a worker,
 * node-fs.
 */
async function measureAppends(page: Page): Promise<number> {
  let bytes = 0;
  const checkBytes = (run: AppendRun, what: string) => {
    expectLines(run, APPENDS, what);
    if (bytes !== 0 && run.bytes !== bytes) throw new Error(`${what} wrote ${run.bytes} bytes, the others ${bytes}: not the same workload`);
    bytes = run.bytes;
  };
  const paired = async (what: string, run: Promise<PairedRun>, names: [ours: string, floor: string]) => {
    const result = await run;
    checkBytes(result, what);
    record(names[0], result.ms);
    record(names[1], result.floorMs);
  };
  for (let round = 1; round <= ROUNDS; round++) {
    log(`appends round ${round}/${ROUNDS}`);
    const args = (what: string) => [freshName(what), APPENDS, FLUSH_EVERY] as const;
    await paired("indexeddb", page.evaluate(([name, count, every]) => window.bench.idbPairedAppends(name, count, every), args("appends-idb")), ["appends indexeddb", "floor indexeddb"]);
    await paired("opfs (session in the worker)", page.evaluate(([name, count, every]) => window.bench.workerPairedAppends(name, count, every), args("appends-worker-paired")), [
      "appends opfs (paired)",
      "floor opfs serialized (paired)",
    ]);
    await paired("opfs (through the rpc)", page.evaluate(([name, count, every]) => window.bench.rpcPairedAppends(name, count, every), args("appends-rpc")), ["appends opfs-rpc", "floor opfs page to worker"]);
    // The floors below write the workload's bytes per flush (the header's share included).
    const flushBytes = Math.round(bytes / FLUSHES);
    const inWorker = await page.evaluate(([name, count, every]) => window.bench.appendsInWorker(name, count, every), [freshName("appends-worker"), APPENDS, FLUSH_EVERY] as const);
    checkBytes(inWorker, "opfs (session in the worker)");
    record("appends opfs", inWorker.ms);
    const bare = await page.evaluate(([name, count, every]) => window.bench.appendsOnBarePort(name, count, every), [freshName("appends-bare"), APPENDS, FLUSH_EVERY] as const);
    checkBytes(bare, "opfs (bare sync-handle port)");
    record("appends opfs bare port", bare.ms);
    record("floor opfs serialized", await page.evaluate(([name, count, every]) => window.bench.serializedFlushFloor(name, count, every), [freshName("floor-serialized"), APPENDS, FLUSH_EVERY] as const));
    record("floor opfs", await page.evaluate(([name, n, size]) => window.bench.syncHandleFlushFloor(name, n, size), [freshName("floor-opfs"), FLUSHES, flushBytes] as const));
    record("floor message", FLUSHES * (await page.evaluate(([n, size]) => window.bench.messageFloor(n, size), [FLUSHES, flushBytes] as const)));
    for (const where of ["page", "worker"] as const) {
      const memory = await page.evaluate(([count, every, at]) => window.bench.appendsInMemory(count, every, at), [APPENDS, FLUSH_EVERY, where] as const);
      checkBytes(memory, `memory (${where})`);
      record(`appends memory ${where}`, memory.ms);
    }
    const run = await withNodeStorage((port) => timeAppends(port, APPENDS, FLUSH_EVERY));
    checkBytes(run, "node-fs");
    record("appends node-fs", run.ms);
  }
  return bytes;
}

/** The naive peer against ours at doubling counts. */
async function measureGrowth(page: Page): Promise<void> {
  for (let round = 1; round <= ROUNDS; round++) {
    log(`growth round ${round}/${ROUNDS}`);
    for (const count of GROWTH_COUNTS) {
      for (const backend of ["naive", "indexeddb"] as const) {
        const run = await pageAppends(page, backend, count);
        expectLines(run, count, `${backend} ${count}`);
        record(`growth ${backend} ${count}`, run.ms);
      }
    }
  }
}

interface OpenSetup {
  bytes: number;
  digest: string;
  checks: Map<string, OpenRun>;
  nodePort: ReturnType<typeof nodeFsStorage>;
  release(): Promise<void>;
}

/** Writes the same ~50 MB session into IndexedDB, OPFS and node-fs; `release` removes them. */
async function prepareOpen(page: Page): Promise<OpenSetup> {
  log("writing the ~50 MB session");
  const bytes = largeSessionBytes(OPEN_BYTES);
  const digest = await sha256(bytes);
  const nodeRoot = await mkdtemp(join(tmpdir(), PREFIX));
  const nodePort = nodeFsStorage({ root: nodeRoot });
  const release = async () => {
    for (const backend of ["indexeddb", "opfs"] as const) await page.evaluate((backend) => window.bench.finishOpen(backend), backend).catch(() => {});
    await nodePort.close();
    await rm(nodeRoot, { recursive: true, force: true });
  };
  try {
    await nodePort.write(OPEN_SESSION_PATH, bytes);
    for (const backend of ["indexeddb", "opfs"] as const) {
      const prepared = await page.evaluate(([backend, name, target]) => window.bench.prepareOpen(backend, name, target), [
        backend,
        freshName(`open-${backend}`),
        OPEN_BYTES,
      ] as const);
      if (prepared.sha256 !== digest) throw new Error(`the page generated a different session for ${backend} (sha-256 ${prepared.sha256}, Node ${digest})`);
    }
  } catch (error) {
    await release();
    throw error;
  }
  return { bytes: bytes.length, digest, checks: new Map(), nodePort, release };
}

async function measureOpen(page: Page, setup: OpenSetup): Promise<void> {
  // The same file served by `sessionkit serve --write` to this page (the open is a writer's, as on
  // the other backends: it takes the lock): open over HTTP + WebSocket.
  const served = await startServe({ stores: [{ root: setup.nodePort.root }], port: 0, viewerDir: null, write: true, allowOrigins: [new URL(page.url()).origin] });
  const remote = [served.origin, served.token, served.stores[0]!.id] as const;
  try {
    for (let round = 1; round <= ROUNDS; round++) {
      log(`open round ${round}/${ROUNDS}`);
      const run = await page.evaluate(([origin, token, store]) => window.bench.openHttp(origin, token, store), remote);
      setup.checks.set("http", run);
      record("open http (serve)", run.ms);
      await measureOpenRound(page, setup);
    }
  } finally {
    await served.close();
  }
  const [first, ...others] = [...setup.checks.values()];
  if (others.some((run) => run.entries !== first!.entries || run.contextMessages !== first!.contextMessages)) {
    throw new Error(`the backends opened different sessions: ${JSON.stringify(Object.fromEntries(setup.checks))}`);
  }
}

async function measureOpenRound(page: Page, setup: OpenSetup): Promise<void> {
  {
    for (const backend of ["indexeddb", "opfs"] as const) {
      const run = await pageOpen(page, backend);
      setup.checks.set(backend, run);
      record(`open ${label(backend)}`, run.ms);
    }
    const run = await timeOpen(setup.nodePort, OPEN_SESSION_PATH);
    setup.checks.set("node-fs", run);
    record("open node-fs", run.ms);
  }
}

/** Figures of the tables outside the results table (breakdowns, profiles' totals, floors), for --json. */
const tableFigures: { key: string; figures: Figures }[] = [];

function breakdownTable(key: string, title: string, totalMs: number, breakdown: Breakdown): string {
  const lines = [`**${title}**: ${ms(totalMs)} in all`, "", "| storage op | calls | time | per call | bytes |", "|---|---:|---:|---:|---:|"];
  const figures: Figures = { totalMs, inStorageCallsMs: breakdown.busyMs, outsideStorageCallsMs: Math.max(0, totalMs - breakdown.busyMs) };
  for (const [op, { calls, ms: opMs, bytes }] of Object.entries(breakdown.ops)) {
    lines.push(`| ${op} | ${calls} | ${ms(opMs)} | ${ms(opMs / calls)} | ${bytes ? bytes.toLocaleString("en") : ""} |`);
    Object.assign(figures, { [`${op}Calls`]: calls, [`${op}Ms`]: opMs, [`${op}Bytes`]: bytes });
  }
  lines.push(`| *in storage calls (wall time: overlapping calls counted once)* | | ${ms(breakdown.busyMs)} | | |`);
  lines.push(`| *outside storage calls (SessionManager, scheduling)* | | ${ms(Math.max(0, totalMs - breakdown.busyMs))} | | |`);
  tableFigures.push({ key: `breakdown.${key}`, figures });
  return lines.join("\n");
}

function profileTable(key: string, title: string, profile: CpuProfile): string {
  const { totalMs, rows } = selfTimes(profile, 12);
  const lines = [`**${title}** (page main thread, ${ms(totalMs)} sampled): self time by function`, "", "| function | self time | share |", "|---|---:|---:|"];
  for (const row of rows) lines.push(`| ${row.name.replace(/\|/g, "\\|")} | ${ms(row.ms)} | ${(row.share * 100).toFixed(1)} % |`);
  const figures: Figures = { sampledMs: totalMs };
  for (const row of rows) figures[`${camel(row.name)}Ms`] = ((figures[`${camel(row.name)}Ms`] as number | undefined) ?? 0) + row.ms;
  tableFigures.push({ key: `profile.${key}`, figures });
  return lines.join("\n");
}

/** One instrumented run per backend: storage calls timed, the page's CPU profiled. */
async function explain(page: Page, cdp: CDPSession, setup: OpenSetup): Promise<string[]> {
  log("instrumented runs");
  const sections: string[] = [];
  for (const backend of ["indexeddb", "opfs"] as const) {
    const key = camel(label(backend));
    const { result: run, profile } = await profiled(cdp, () => pageAppends(page, backend, APPENDS, true));
    sections.push(breakdownTable(`appends.${key}`, `${APPENDS} appends, ${label(backend)} (page)`, run.ms, run.breakdown!));
    sections.push(profileTable(`appends.${key}`, `${APPENDS} appends, ${label(backend)}`, profile));
  }
  const inWorker = await page.evaluate(([name, count, every]) => window.bench.appendsInWorker(name, count, every, true), [
    freshName("appends-worker"),
    APPENDS,
    FLUSH_EVERY,
  ] as const);
  sections.push(breakdownTable("appends.opfs", `${APPENDS} appends, opfs: SessionManager inside the worker on the opfs port (no rpc)`, inWorker.ms, inWorker.breakdown!));
  const node = await withNodeStorage((port) => instrumented(port, (timed, hooks) => timeAppends(timed, APPENDS, FLUSH_EVERY, hooks)));
  sections.push(breakdownTable("appends.nodeFs", `${APPENDS} appends, node-fs`, node.ms, node.breakdown));
  for (const backend of ["indexeddb", "opfs"] as const) {
    const run = await pageOpen(page, backend, true);
    sections.push(breakdownTable(`open.${camel(label(backend))}`, `open + buildSessionContext, ${label(backend)}`, run.ms, run.breakdown!));
  }
  const nodeOpen = await instrumented(setup.nodePort, (timed, hooks) => timeOpen(timed, OPEN_SESSION_PATH, hooks));
  sections.push(breakdownTable("open.nodeFs", "open + buildSessionContext, node-fs", nodeOpen.ms, nodeOpen.breakdown));
  const read = await page.evaluate((range) => window.bench.opfsReadFloor(range), READ_RANGE_BYTES);
  tableFigures.push({ key: "floors.opfsRead", figures: { fileBytes: setup.bytes, rangeBytes: READ_RANGE_BYTES, inWorkerMs: read.inWorkerMs, toPageMs: read.toPageMs } });
  sections.push(
    [
      `**Floor: reading the ${(setup.bytes / 1e6).toFixed(1)} MB file from OPFS in ${READ_RANGE_BYTES >> 20} MiB ranges (the session reader's), without sessionkit**`,
      "",
      "| how | time |",
      "|---|---:|",
      `| File.slice().arrayBuffer() in a worker | ${ms(read.inWorkerMs)} |`,
      `| the same, each range sent to the page (structured clone) | ${ms(read.toPageMs)} |`,
    ].join("\n"),
  );
  return sections;
}

/** The bare primitives per flush of `bytes`, one by one: the shapes an adapter could take. */
async function floors(page: Page, bytes: number): Promise<string> {
  log("floors");
  const idb = await page.evaluate(([name, n, size]) => window.bench.idbFloor(name, n, size), [freshName("floor-idb"), FLOOR_ITERATIONS, bytes] as const);
  const handle = await page.evaluate(([name, n, size]) => window.bench.syncHandleFloor(name, n, size), [freshName("floor-opfs"), FLOOR_ITERATIONS, bytes] as const);
  const message = await page.evaluate(([n, size]) => window.bench.messageFloor(n, size), [FLOOR_ITERATIONS * 4, bytes] as const);
  const fsync = await nodeFsyncFloor(FLOOR_ITERATIONS, bytes);
  const rows: [string, string, number][] = [
    ["idbRelaxed", "IndexedDB: 1 relaxed transaction (chunk + metadata put)", idb.relaxedMs],
    ["idbRelaxedReadMeta", "IndexedDB: 1 relaxed transaction, get metadata first (one request round trip), then chunk + metadata put", idb.relaxedReadMetaMs],
    ["idbRelaxedThenStrict", "IndexedDB: 1 relaxed transaction, then 1 strict one (sessionkit's earliest append, then sync)", idb.relaxedThenStrictMs],
    ["idbStrict", "IndexedDB: 1 strict transaction (chunk + metadata put): the appends' floor (one durable transaction per flush)", idb.strictMs],
    ["idbRelaxedTopUp", "IndexedDB: 1 relaxed transaction shaped like sessionkit's earliest append (get metadata, get last chunk, put it grown to ≤ 64 KiB, put metadata)", idb.relaxedTopUpMs],
    ["syncHandleWrite", "OPFS sync access handle in a worker: write", handle.writeMs],
    ["syncHandleWriteFlush", "OPFS sync access handle in a worker: write + flush(): the appends' floor", handle.writeFlushMs],
    ["messageRoundTrip", "page → worker → page message round trip", message],
    ["nodeWriteFsync", "Node: FileHandle write + fsync", fsync],
  ];
  for (const [key, , value] of rows) tableFigures.push({ key: `floors.${key}`, figures: { perFlushMs: value, flushesMs: value * FLUSHES, iterations: key === "messageRoundTrip" ? FLOOR_ITERATIONS * 4 : FLOOR_ITERATIONS, bytes } });
  const lines = [
    `Raw platform calls (no sessionkit, no idb), ${bytes.toLocaleString("en")} bytes each (one flush of the append workload), ${FLOOR_ITERATIONS} iterations (message round trips: ${FLOOR_ITERATIONS * 4}); the last column is arithmetic, per-flush cost × ${FLUSHES} flushes. (The results table's floors are measured differently: ${FLUSHES} flushes in a row, in every round, next to the appends they bound.)`,
    "",
    "| primitive | per flush | × " + FLUSHES + " flushes |",
    "|---|---:|---:|",
    ...rows.map(([, name, value]) => `| ${name} | ${ms(value)} | ${ms(value * FLUSHES)} |`),
  ];
  return lines.join("\n");
}

// ---------------------------------------------------------------------------------------------
// Report

/**
 * The 10k-append rows: each backend against its bound (issue 26): IndexedDB against its floor;
 * OPFS in the worker against the floor plus serializing the entries; OPFS through the rpc against
 * that plus the page ↔ worker round trips. Then the split of the OPFS time, SessionManager alone,
 * node-fs.
 */
function appendRows(): Row[] {
  const rows: Row[] = [];
  const floorOpfs = med("floor opfs");
  const serialized = med("floor opfs serialized");
  const message = med("floor message");
  const bare = med("appends opfs bare port");
  const inPage = med("appends memory page");
  const inWorker = med("appends memory worker");
  /** A row of a paired measurement: medians of ours and of its floor, and the median of the rounds' ratios (each ours ÷ its floor of the same run). */
  const paired = (key: string, name: string, names: [ours: string, floor: string], target: number, what: string, figures: (ours: number, floor: number, ratio: number) => Figures): Row => {
    const [ours, floor, ratio] = [med(names[0]), med(names[1]), pairedRatio(names)];
    return {
      name,
      ours: ms(ours),
      peer: `${what} ${ms(floor)}`,
      ratio: times(ratio),
      target: `≤ ${target}×`,
      verdict: verdict(ratio <= target),
      key: `appends10k.${key}`,
      figures: { ms: ours, ...figures(ours, floor, ratio) },
    };
  };
  const opfs = med("appends opfs (paired)");
  const rpc = med("appends opfs-rpc");
  rows.push(
    paired("indexeddb", `${APPENDS / 1000}k appends, flush every ${FLUSH_EVERY} — indexeddb (page)`, ["appends indexeddb", "floor indexeddb"], TARGET_IDB_RATIO, `floor (${FLUSHES} strict transactions, flush by flush with ours)`, (ours, floor, ratio) => ({
      floorMs: floor,
      ratioToFloor: ratio,
      targetRatioToFloor: TARGET_IDB_RATIO,
      sessionAloneMs: inPage,
      floorPlusSessionAloneMs: floor + inPage,
      ratioToFloorPlusSessionAlone: ours / (floor + inPage),
    })),
    paired(
      "opfs",
      `${APPENDS / 1000}k appends, flush every ${FLUSH_EVERY} — opfs, SessionManager in the worker`,
      ["appends opfs (paired)", "floor opfs serialized (paired)"],
      TARGET_OPFS_RATIO,
      `floor (${FLUSHES} sync-handle writes + flush()) + serialization, flush by flush with ours:`,
      (_ours, floor, ratio) => ({
        floorPlusSerializationMs: floor,
        ratioToFloorPlusSerialization: ratio,
        targetRatioToFloorPlusSerialization: TARGET_OPFS_RATIO,
        floorMs: floorOpfs,
        separateMs: med("appends opfs"),
        sessionAloneMs: inWorker,
      }),
    ),
    paired(
      "opfsRpc",
      `${APPENDS / 1000}k appends, flush every ${FLUSH_EVERY} — opfs from the page, through the rpc`,
      ["appends opfs-rpc", "floor opfs page to worker"],
      TARGET_OPFS_RPC_RATIO,
      `floor + serialization + ${FLUSHES} round trips, flush by flush with ours (the page serializes each flush and sends it to a worker, which writes, flush()es and replies):`,
      (ours, floor, ratio) => ({
        floorPlusSerializationMs: floor,
        ratioToFloorPlusSerialization: ratio,
        targetRatioToFloorPlusSerialization: TARGET_OPFS_RPC_RATIO,
        sumOfPartsMs: serialized + message,
        ratioToSumOfParts: ours / (serialized + message),
        syncHandleFloorMs: floorOpfs,
        messageFloorMs: message,
        sessionAloneMs: inPage,
      }),
    ),
  );
  // Where the OPFS appends' time goes: the floor, plus serializing the entries, plus SessionManager
  // on the floor's own calls, plus sessionkit's OPFS adapter (the opfs row).
  rows.push(
    {
      name: `${APPENDS / 1000}k appends, flush every ${FLUSH_EVERY} — opfs floor + the entries serialized (made, JSON.stringify, encoded per flush; no SessionManager)`,
      ours: ms(serialized),
      peer: `floor ${ms(floorOpfs)}`,
      ratio: times(serialized / floorOpfs),
      target: "—",
      verdict: "info",
      key: "appends10k.opfsSerializedFloor",
      figures: { ms: serialized, floorMs: floorOpfs, ratioToFloor: serialized / floorOpfs },
    },
    {
      name: `${APPENDS / 1000}k appends, flush every ${FLUSH_EVERY} — SessionManager in the worker on the floor's own calls (a bare sync-handle port, no sessionkit adapter)`,
      ours: ms(bare),
      peer: `floor ${ms(floorOpfs)}; floor + serialization ${ms(serialized)}; ours (opfs port, a run of its own) ${ms(med("appends opfs"))}`,
      ratio: times(bare / floorOpfs),
      target: "—",
      verdict: "info",
      key: "appends10k.opfsBarePort",
      figures: { ms: bare, floorMs: floorOpfs, ratioToFloor: bare / floorOpfs, serializedFloorMs: serialized, opfsPortMs: med("appends opfs") },
    },
  );
  for (const where of ["page", "worker"] as const) {
    rows.push({
      name: `${APPENDS / 1000}k appends, flush every ${FLUSH_EVERY} — SessionManager alone: memory port in the ${where} (no platform storage)`,
      ours: ms(med(`appends memory ${where}`)),
      peer: "—",
      ratio: "—",
      target: "scale",
      verdict: "info",
      key: `appends10k.memory${where === "page" ? "Page" : "Worker"}`,
      figures: { ms: med(`appends memory ${where}`) },
    });
  }
  const nodeAppends = med("appends node-fs");
  rows.push({ name: `${APPENDS / 1000}k appends, flush every ${FLUSH_EVERY} — node-fs (Node)`, ours: ms(nodeAppends), peer: "—", ratio: "—", target: "scale", verdict: "info", key: "appends10k.nodeFs", figures: { ms: nodeAppends } });
  return rows;
}

/** The median over the rounds of ours ÷ its floor, each pair from the same paired run. */
function pairedRatio([ours, floor]: [string, string]): number {
  const floors = runs.get(floor) ?? [];
  return median((runs.get(ours) ?? []).map((value, i) => value / floors[i]!));
}

/** The spread of a measurement's rounds, "min–max ms". */
const spread = (name: string) => {
  const values = runs.get(name) ?? [];
  return `${ms(Math.min(...values))}–${ms(Math.max(...values))}`;
};

/** For each append row that misses its target: what the time above its bound is, from the same run's figures. */
function appendNotes(rows: readonly Row[]): string[] {
  const missed = (key: string) => rows.some((row) => row.key === `appends10k.${key}` && row.verdict === "FAIL");
  const inPage = med("appends memory page");
  const perFlush = (value: number) => `${((value / FLUSHES) * 1000).toFixed(0)} µs per flush`;
  /** Ours above its floor (medians), and each round's ratio. */
  const above = (names: [string, string]) => {
    const [ours, floor] = [med(names[0]), med(names[1])];
    const floors = runs.get(names[1]) ?? [];
    const ratios = (runs.get(names[0]) ?? []).map((value, i) => times(value / floors[i]!)).join(", ");
    return { excess: ours - floor, text: `ours is ${ms(ours - floor)} above its floor (${perFlush(ours - floor)}); the rounds' ratios: ${ratios}` };
  };
  const notes: string[] = [];
  if (missed("indexeddb")) {
    const { excess, text } = above(["appends indexeddb", "floor indexeddb"]);
    notes.push(`- IndexedDB misses: ${text}. SessionManager alone (memory port, page) takes ${ms(inPage)} of it; the other ${ms(excess - inPage)} is the adapter and the scheduling between flushes.`);
  }
  if (missed("opfs")) {
    const { text } = above(["appends opfs (paired)", "floor opfs serialized (paired)"]);
    const [serialized, bare, opfs] = [med("floor opfs serialized"), med("appends opfs bare port"), med("appends opfs")];
    notes.push(
      `- OPFS in the worker misses: ${text}. In runs of their own, SessionManager on the bare port took ${ms(bare - serialized)} more than the floor + serialization, sessionkit's OPFS adapter ${ms(opfs - bare)} more than the bare port.`,
    );
  }
  if (missed("opfsRpc")) {
    const { excess, text } = above(["appends opfs-rpc", "floor opfs page to worker"]);
    notes.push(`- OPFS through the rpc misses: ${text}. SessionManager alone in the page takes ${ms(inPage)} of it; the other ${ms(excess - inPage)} is the rpc (requests built, validated and answered in the page and the worker).`);
  }
  return notes;
}

function resultRows(openBytes: number): Row[] {
  const rows = appendRows();
  for (const [i, count] of GROWTH_COUNTS.entries()) {
    const naive = med(`growth naive ${count}`);
    const ours = med(`growth indexeddb ${count}`);
    const previous = GROWTH_COUNTS[i - 1];
    const key = `growth.n${count}`;
    if (previous === undefined) {
      rows.push({ name: `${count} appends — naive whole-file rewrite (IndexedDB)`, ours: ms(naive), peer: `ours (indexeddb) ${ms(ours)}`, ratio: times(naive / ours), target: "—", verdict: "info", key, figures: { naiveMs: naive, oursMs: ours, naiveToOurs: naive / ours } });
      continue;
    }
    const naiveBefore = med(`growth naive ${previous}`);
    const oursBefore = med(`growth indexeddb ${previous}`);
    rows.push({
      name: `${count} appends — naive whole-file rewrite (IndexedDB)`,
      ours: ms(naive),
      peer: `naive ${previous}: ${ms(naiveBefore)}`,
      ratio: times(naive / naiveBefore),
      target: "quadratic: 4× per doubling",
      verdict: "info",
      key,
      figures: { naiveMs: naive, naivePerDoubling: naive / naiveBefore, naiveToOurs: naive / ours },
    });
    rows.push({ name: `${count} appends — ours (indexeddb)`, ours: ms(ours), peer: `ours ${previous}: ${ms(oursBefore)}`, ratio: times(ours / oursBefore), target: "linear: 2× per doubling", verdict: "info", key, figures: { oursMs: ours, oursPerDoubling: ours / oursBefore } });
  }
  const last = GROWTH_COUNTS[GROWTH_COUNTS.length - 1]!;
  const share = (backend: "naive" | "indexeddb") => quadraticShare(GROWTH_COUNTS.map((count) => [count, med(`growth ${backend} ${count}`)]));
  rows.push({
    name: `growth fit t = a·n + b·n² over ${GROWTH_COUNTS.join("/")} — naive: n² share of the time at ${last}`,
    ours: `${(share("naive") * 100).toFixed(0)} %`,
    peer: `ours (indexeddb): ${(share("indexeddb") * 100).toFixed(0)} %`,
    ratio: "—",
    target: `≥ ${QUADRATIC_MIN_SHARE * 100} % (quadratic)`,
    verdict: verdict(share("naive") >= QUADRATIC_MIN_SHARE),
    key: "growth.fit",
    figures: { naiveQuadraticShare: share("naive"), oursQuadraticShare: share("indexeddb"), targetNaiveQuadraticShare: QUADRATIC_MIN_SHARE },
  });
  rows.push({
    name: `${last} appends — naive vs ours (indexeddb)`,
    ours: ms(med(`growth naive ${last}`)),
    peer: `ours ${ms(med(`growth indexeddb ${last}`))}`,
    ratio: times(med(`growth naive ${last}`) / med(`growth indexeddb ${last}`)),
    target: "—",
    verdict: "info",
    key: `growth.n${last}`,
    figures: {},
  });
  rows.push(...openRows(openBytes));
  return rows;
}

/** The open rows: each page backend and serve against node-fs and IndexedDB. */
function openRows(openBytes: number): Row[] {
  const rows: Row[] = [];
  const nodeOpen = med("open node-fs");
  const size = `${(openBytes / 1e6).toFixed(1)} MB`;
  for (const backend of ["indexeddb", "opfs"] as const) {
    const value = med(`open ${label(backend)}`);
    rows.push({
      name: `open + buildSessionContext, ${size} — ${label(backend)} (page)`,
      ours: ms(value),
      peer: `node-fs ${ms(nodeOpen)}`,
      ratio: times(value / nodeOpen),
      target: `≤ ${TARGET_OPEN_RATIO}× node-fs`,
      verdict: verdict(value / nodeOpen <= TARGET_OPEN_RATIO),
      key: `open.${camel(label(backend))}`,
      figures: { ms: value, nodeFsMs: nodeOpen, ratioToNodeFs: value / nodeOpen, targetRatioToNodeFs: TARGET_OPEN_RATIO, fileBytes: openBytes },
    });
  }
  rows.push({ name: `open + buildSessionContext, ${size} — node-fs (Node)`, ours: ms(nodeOpen), peer: "—", ratio: "—", target: "scale", verdict: "info", key: "open.nodeFs", figures: { ms: nodeOpen } });
  const overHttp = med("open http (serve)");
  const indexedDb = med(`open ${label("indexeddb")}`);
  rows.push({
    name: `open + buildSessionContext, ${size} — over sessionkit serve (file in Node; the page reads ranges by fetch, the rest over the WebSocket) vs IndexedDB in the same page`,
    ours: ms(overHttp),
    peer: `indexeddb ${ms(indexedDb)}`,
    ratio: times(overHttp / indexedDb),
    target: `≤ ${TARGET_OPEN_HTTP_RATIO}× indexeddb`,
    verdict: verdict(overHttp / indexedDb <= TARGET_OPEN_HTTP_RATIO),
    key: "open.http",
    figures: { ms: overHttp, indexeddbMs: indexedDb, ratioToIndexeddb: overHttp / indexedDb, targetRatioToIndexeddb: TARGET_OPEN_HTTP_RATIO },
  });
  return rows;
}

/**
 * Least-squares fit of t = a·n + b·n² (no constant: zero appends cost nothing) to (n, t) points;
 * returns b·n² / (a·n + b·n²) at the largest n, 0 when the fit has no positive n² term.
 */
function quadraticShare(points: [n: number, t: number][]): number {
  const sum = (f: (n: number, t: number) => number) => points.reduce((total, [n, t]) => total + f(n, t), 0);
  const [s2, s3, s4] = [sum((n) => n ** 2), sum((n) => n ** 3), sum((n) => n ** 4)];
  const [s1t, s2t] = [sum((n, t) => n * t), sum((n, t) => n ** 2 * t)];
  const det = s2 * s4 - s3 * s3;
  const a = (s4 * s1t - s3 * s2t) / det;
  const b = (s2 * s2t - s3 * s1t) / det;
  const n = Math.max(...points.map(([count]) => count));
  const linear = Math.max(0, a * n);
  const quadratic = Math.max(0, b * n * n);
  return quadratic / (linear + quadratic || 1);
}

function kernel(): string {
  try {
    return execFileSync("uname", ["-srm"], { encoding: "utf8" }).trim();
  } catch {
    return "kernel: unknown";
  }
}

// ---------------------------------------------------------------------------------------------

async function main(): Promise<void> {
  const { values: flags } = parseArgs({ options: { json: { type: "string" }, only: { type: "string" }, rounds: { type: "string" } } });
  if (flags.rounds !== undefined) {
    ROUNDS = Number(flags.rounds);
    if (!Number.isSafeInteger(ROUNDS) || ROUNDS < 1) throw new Error(`--rounds: a whole number of rounds, at least 1, not ${JSON.stringify(flags.rounds)}`);
  }
  const alone = ["appends", "open", "viewer", "viewer-huge"];
  if (flags.only !== undefined && !alone.includes(flags.only)) throw new Error(`--only: ${alone.map((s) => JSON.stringify(s)).join(", ")} are the sections that run alone, not ${JSON.stringify(flags.only)}`);
  if (flags.only === "viewer") {
    await runViewerSection();
    return;
  }
  if (flags.only === "viewer-huge") {
    // Its own pages and server (bench/browser/viewer-huge.ts); --json writes its figures alone.
    const rows = await runViewerHugeSection();
    if (flags.json) await writeFile(resolve(process.env.INIT_CWD ?? process.cwd(), flags.json), `${JSON.stringify(resultsJson(rows, { measuredAt: new Date().toISOString(), section: "viewer-huge", node: process.version }), null, 2)}\n`);
    return;
  }
  if (flags.only !== undefined && flags.json !== undefined) throw new Error("--json needs the whole run (without --only), or --only viewer-huge");
  const started = new Date();
  const bench = await startPage();
  const { page } = bench;
  const loadBefore = loadavg();
  try {
    const leftovers = await page.evaluate((prefix) => window.bench.removeAll(prefix), PREFIX);
    if (leftovers > 0) log(`removed ${leftovers} databases/directories left by an earlier run`);
    if (flags.only === "appends") {
      // The append rows alone, printed (results.md holds whole runs only).
      await measureAppends(page);
      const rows = appendRows();
      process.stdout.write(`${[markdownTable(rows), ...appendNotes(rows)].join("\n\n")}\n`);
      return;
    }
    if (flags.only === "open") {
      const setup = await prepareOpen(page);
      try {
        await measureOpen(page, setup);
      } finally {
        await setup.release();
      }
      process.stdout.write(`${markdownTable(openRows(setup.bytes))}\n`);
      return;
    }

    const appendBytes = await measureAppends(page);
    await measureGrowth(page);
    const setup = await prepareOpen(page);
    let explained: string[];
    try {
      await measureOpen(page, setup);
      explained = await explain(page, bench.cdp, setup);
    } finally {
      await setup.release();
    }
    const floorTable = await floors(page, Math.round(appendBytes / FLUSHES));

    const rows = resultRows(setup.bytes);
    const markdown = markdownTable(rows);
    process.stdout.write(`${markdown}\n`);

    const opened = setup.checks.get("node-fs")!;
    const machine = [
      `- when: ${started.toISOString()} (${((Date.now() - started.getTime()) / 1000).toFixed(0)} s run)`,
      `- CPU: ${cpus()[0]?.model ?? "?"} × ${cpus().length}; RAM ${(totalmem() / 2 ** 30).toFixed(1)} GiB (${(freemem() / 2 ** 30).toFixed(1)} GiB free at the end)`,
      `- load average (1/5/15 min) before: ${loadBefore.map((l) => l.toFixed(2)).join(" / ")}, after: ${loadavg().map((l) => l.toFixed(2)).join(" / ")} (a VM shared with other engineers)`,
      `- Node ${process.version}; ${bench.browser} (${chromiumExecutable}), headless, persistent profile bench/.data/chromium-profile; origin quota ${(bench.quota / 2 ** 30).toFixed(1)} GiB`,
      `- ${kernel()}`,
    ].join("\n");
    const rawRuns = [...runs.entries()].map(([name, values]) => `| ${name} | ${values.map(ms).join(", ")} | ${ms(median(values))} |`).join("\n");
    const report = `# Browser storage bench

Generated by \`npm run bench:browser\` (bench/browser/run.ts); every number below comes from the run described here.

## Machine

${machine}

## Results (median of ${ROUNDS} runs)

${markdown}

${appendNotes(rows).join("\n")}

- Appends: a new session, messages of ~1–2 KB serialized (user → assistant with thinking and a tool call → tool result → assistant), \`appendMessage\` each, \`await flush()\` after every ${FLUSH_EVERY} (${FLUSHES} flushes, ${appendBytes.toLocaleString("en")} bytes in all); timed from the first append until the last flush resolves. \`flush()\` is a durability barrier, issued as an append and a \`sync\` together: IndexedDB commits both in one strict transaction (the port holds the session's writer lock, so it builds on what it wrote last without reading it back; the trailing small records are merged by a transaction of their own once the file has had no write for 200 ms, or when the port closes: here after the timed window, and done before the next measurement starts, as each run closes its port); OPFS with the SessionManager in a worker (\`opfsWorkerStorage\`, README "OPFS: the session in the worker") writes through the sync access handle and calls its \`flush()\`; OPFS from the page sends both to the storage worker in one message; node-fs appends to an open handle, then fsyncs.
- Floors of the rows with a target (1–3), taken flush by flush with ours in the same run (after each of our flushes resolves, the floor does the same flush; each side's time is the sum of its own steps, so both meet the same moments of a machine whose other jobs come and go; the ratio is the median over the rounds of each run's ours ÷ floor): IndexedDB, one strict readwrite transaction per flush adding the flush's bytes (encoded beforehand) as a chunk record and putting one metadata record, to a database of its own (raw IndexedDB, explicit \`commit()\`); OPFS with the session in a worker, per flush the entries made (id, parent, time), \`JSON.stringify\`ed, encoded (\`encodeInto\` a kept buffer), written through a sync handle to a file of its own and \`flush()\`ed; through the rpc, the same with the page serializing each flush and moving its bytes to a worker of its own, which writes, \`flush()\`es and replies (no sessionkit in any of them). The split of the OPFS time, each a run of its own in every round, in a worker: the floor (${FLUSHES} sync-handle writes of a flush's size of session text, each followed by \`flush()\`), the floor plus serializing the entries, and SessionManager on a bare port making exactly the floor's calls (bench/browser/bare-sync-port.ts); and ${FLUSHES} page → worker → page message round trips in a row, each carrying a flush's bytes to the worker and a number back. "SessionManager alone" is the same workload on the memory port (no platform storage): building, serializing and queueing the entries, in the page or in a worker.
- Naive peer: the whole file is one IndexedDB record, read, extended and put back on every append (one transaction, browser-default durability, no separate sync barrier, so it does less work per flush than ours), as ZenFS's IndexedDB backend and pi's web UI store files. Same SessionManager and workload; ratios are against the previous (half) count. On this machine a transaction's fixed cost (about a millisecond) blurs those ratios at these sizes, so "quadratic" is judged by a least-squares fit t = a·n + b·n² of the medians: the share of the n² term in the fitted time at the largest count (pure rewrite cost would be 100 %, a linear store 0 %).
- Open: \`SessionManager.open\` + \`buildSessionContext\` of one ${setup.bytes.toLocaleString("en")}-byte session (${opened.entries.toLocaleString("en")} entries, ${opened.contextMessages.toLocaleString("en")} context messages, sha-256 ${setup.digest.slice(0, 16)}…), the same bytes on every backend (stored with one \`write\`); the port is created and warmed (database open, worker started) before the timer. node-fs runs in Node, the others in the page.

## Every run

| measurement | runs | median |
|---|---|---:|
${rawRuns}

## Where the time goes (one instrumented run each, not part of the medians)

Each storage call SessionManager made inside the timed window, timed through a wrapper (bench/browser/timed-port.ts). \`flush()\` issues its append and its sync together, so their times overlap: the wall time in storage calls counts that once. SessionManager awaits its write queue, so the time outside storage calls is its own work plus event-loop scheduling. The CPU profiles are of the page's main thread (CDP Profiler, 0.5 ms sampling) over the whole call, so they also hold the workload's generation and read-back; "(idle)" is the page waiting for IndexedDB or the worker.

${explained.join("\n\n")}

## Floors

${floorTable}
`;
    await writeFile(RESULTS, report);
    log(`wrote ${RESULTS}`);
    if (flags.json) {
      const meta = {
        measuredAt: started.toISOString(),
        seconds: (Date.now() - started.getTime()) / 1000,
        rounds: ROUNDS,
        browser: bench.browser,
        node: process.version,
        loadAverageBefore: loadBefore,
        loadAverageAfter: loadavg(),
        runs: Object.fromEntries(runs),
      };
      // npm runs scripts in the package root: a relative FILE is the caller's.
      const file = resolve(process.env.INIT_CWD ?? process.cwd(), flags.json);
      await writeFile(file, `${JSON.stringify(resultsJson(rows, meta, tableFigures), null, 2)}\n`);
      log(`wrote ${file}`);
    }
  } finally {
    await bench.stop();
  }
}

await main();
// The viewer sections run with the whole bench, or alone (--only viewer, --only viewer-huge).
if (!process.argv.includes("--only")) {
  await runViewerSection();
  await runViewerHugeSection();
}
