/**
 * `sessionkit sync` against a plain `sessionkit import` of the same files, whole processes (the
 * bundled CLI), node-fs into node-fs and into PostgreSQL (a private cluster this section starts
 * and deletes): the first copy of a pi store of 300 sessions; then rounds of steady appends (an
 * agent's entries added to some sessions, then one sync, or one import of the store's sessions
 * folder, which extends the sessions it holds); and a pass with nothing new.
 */
import { execFile } from "node:child_process";
import { randomUUID } from "node:crypto";
import { appendFileSync, mkdirSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { performance } from "node:perf_hooks";
import { promisify } from "node:util";
import pg from "pg";
import { nodeFsStorage } from "../../adapters/node-fs/index.js";
import { postgresStorage } from "../../adapters/postgres/index.js";
import type { StoragePort } from "../../src/port.js";
import { emptyMirrorState, mirrorSessions } from "../../src/sync/mirror.js";
import { startCluster } from "../../test/postgres/cluster.js";
import { bundleCli } from "../../test/shared/cli-runner.js";
import { MessageFactory, SESSION_SIZES } from "../../test/shared/message-factory.js";
import { SCRATCH_DIR } from "../lib/data.js";
import { formatMs, summarize, type Sample } from "../lib/measure.js";
import { ratio, type Row } from "../lib/report.js";

const SESSIONS = 300;
const PROJECTS = 10;
const MESSAGES_PER_SESSION = 24;
/** Each round of steady appends: this many entries, over this many sessions. */
const APPEND_ENTRIES = 600;
const APPEND_SESSIONS = 30;

const run = promisify(execFile);
const info = (row: Omit<Row, "target" | "verdict">): Row => ({ ...row, target: "—", verdict: "info" });

interface Store {
  home: string;
  sessionsDir: string;
  files: string[];
}

/** The store's bytes and lines (entries and headers) now. */
function sizeOf(store: Store): { bytes: number; entries: number } {
  let bytes = 0;
  let entries = 0;
  for (const file of store.files) {
    const data = readFileSync(file);
    bytes += data.length;
    for (let at = data.indexOf(10); at >= 0; at = data.indexOf(10, at + 1)) entries++;
  }
  return { bytes, entries };
}

/** A pi store of 300 sessions in 10 projects, written fresh (content from the bench's message factory). */
function makeStore(dir: string): Store {
  rmSync(dir, { recursive: true, force: true });
  const sessionsDir = join(dir, ".pi", "agent", "sessions");
  const files: string[] = [];
  for (let i = 0; i < SESSIONS; i++) {
    const project = join(sessionsDir, `--bench-sync-${i % PROJECTS}--`);
    mkdirSync(project, { recursive: true });
    const id = randomUUID();
    const file = join(project, `2026-01-05T09-00-00-${String(i).padStart(3, "0")}Z_${id}.jsonl`);
    const lines = [JSON.stringify({ type: "session", version: 3, id, timestamp: "2026-01-05T09:00:00.000Z", cwd: `/bench/sync-${i % PROJECTS}` })];
    let parent: string | null = null;
    for (const message of new MessageFactory(1000 + i, SESSION_SIZES).sequence(MESSAGES_PER_SESSION)) {
      const entryId = randomUUID().slice(0, 8);
      lines.push(JSON.stringify({ type: "message", id: entryId, parentId: parent, timestamp: new Date(Number(message.timestamp)).toISOString(), message }));
      parent = entryId;
    }
    const text = `${lines.join("\n")}\n`;
    writeFileSync(file, text);
    files.push(file);
  }
  return { home: dir, sessionsDir, files };
}

/** An agent's entries appended to some sessions; returns their bytes. */
function appendRound(store: Store, round: number): number {
  const factory = new MessageFactory(50_000 + round, SESSION_SIZES);
  const messages = factory.sequence(APPEND_ENTRIES);
  let bytes = 0;
  for (let s = 0; s < APPEND_SESSIONS; s++) {
    const file = store.files[(round * APPEND_SESSIONS + s * 7) % store.files.length]!;
    const share = messages.slice((s * APPEND_ENTRIES) / APPEND_SESSIONS, ((s + 1) * APPEND_ENTRIES) / APPEND_SESSIONS);
    const text = share.map((message) => `${JSON.stringify({ type: "message", id: randomUUID().slice(0, 8), parentId: null, timestamp: new Date(Number(message.timestamp)).toISOString(), message })}\n`).join("");
    appendFileSync(file, text);
    bytes += Buffer.byteLength(text);
  }
  return bytes;
}

/** Where the copies go: its `sync` and `import` arguments, how to empty them, and a port for the in-process passes. */
interface Target {
  name: string;
  syncArgs: string[];
  importArgs: string[];
  reset(): Promise<void>;
  /** An empty store of its kind, for the in-process passes. */
  inProcess: StoragePort & { close(): Promise<void> };
}

export async function benchSync(runs: number): Promise<{ rows: Row[]; notes: string[] }> {
  const dir = join(SCRATCH_DIR, "sync");
  rmSync(dir, { recursive: true, force: true });
  mkdirSync(dir, { recursive: true });
  const bundle = await bundleCli(dir);
  const store = makeStore(join(dir, "home"));
  const initial = sizeOf(store);
  const cache = join(dir, "cache");
  const cli = async (args: string[]): Promise<number> => {
    const start = performance.now();
    await run(process.execPath, [bundle, ...args], { env: { ...process.env, HOME: store.home, XDG_CACHE_HOME: cache, PI_CODING_AGENT_DIR: "" }, maxBuffer: 64 << 20 });
    return performance.now() - start;
  };
  const syncTarget = join(dir, "sync-target");
  const importTarget = join(dir, "import-target");
  const nodeFs: Target = {
    name: "node-fs → node-fs",
    syncArgs: ["sync", "--to", syncTarget, "--as", "bench"],
    importArgs: ["--root", importTarget, "import", store.sessionsDir],
    async reset() {
      for (const path of [syncTarget, importTarget, cache]) rmSync(path, { recursive: true, force: true });
    },
    inProcess: nodeFsStorage({ root: join(dir, "in-process-target") }),
  };
  const cluster = await startCluster();
  const admin = new pg.Client(cluster.url);
  await admin.connect();
  const postgres: Target = {
    name: "node-fs → postgres",
    syncArgs: ["sync", "--to", `${cluster.url}?schema=sync_copy`, "--as", "bench"],
    importArgs: ["--store", `${cluster.url}?schema=import_copy`, "import", store.sessionsDir],
    async reset() {
      await admin.query("DROP SCHEMA IF EXISTS sync_copy CASCADE; DROP SCHEMA IF EXISTS import_copy CASCADE");
      rmSync(cache, { recursive: true, force: true });
    },
    inProcess: postgresStorage({ connection: cluster.url, schema: "sync_in_process" }),
  };
  try {
    const rows: Row[] = [];
    for (const [target, key] of [[nodeFs, "nodeFs"], [postgres, "postgres"]] as const) {
      rows.push(...(await measure(target, key, runs, store, cli)));
      await target.inProcess.close();
    }
    return {
      rows,
      notes: [
        `sync: a pi store of ${SESSIONS} sessions in ${PROJECTS} projects, ${(initial.bytes / 1e6).toFixed(1)} MB, ${initial.entries.toLocaleString("en-US")} entries at first (the bench's message factory: tool output dominates), in a $HOME of its own; \`sessionkit sync --to …\` against \`sessionkit import <sessions dir>\` (all or nothing; on a second import, \`--on-conflict auto\` extends each session it holds), both whole processes of the bundled CLI, into an empty directory and into an empty schema of a private PostgreSQL cluster. First copy: ${runs} rounds, the targets emptied before each. Steady appends: ${runs} rounds of ${APPEND_ENTRIES} entries appended to ${APPEND_SESSIONS} sessions, then one sync and one import (alternating which goes first), and one pass of the mirror in process (\`mirrorSessions\`, what each pass of \`sync --watch\` runs, into a copy of its own made untimed before). Nothing new: one more of each with nothing appended.`,
      ],
    };
  } finally {
    await admin.end();
    await cluster.stop();
    rmSync(dir, { recursive: true, force: true });
  }
}

async function measure(target: Target, key: string, runs: number, store: Store, cli: (args: string[]) => Promise<number>): Promise<Row[]> {
  const { bytes: firstBytes, entries: firstEntries } = sizeOf(store);
  const first = { sync: [] as number[], import: [] as number[] };
  for (let round = 0; round < runs; round++) {
    await target.reset();
    const order = round % 2 === 0 ? (["sync", "import"] as const) : (["import", "sync"] as const);
    for (const what of order) first[what].push(await cli(what === "sync" ? target.syncArgs : target.importArgs));
  }
  // The in-process copy, made before the rounds of appends (untimed).
  const source = nodeFsStorage({ root: join(store.home, ".pi", "agent") });
  const state = emptyMirrorState();
  await mirrorSessions(source, target.inProcess, { state });
  const appended = { sync: [] as number[], import: [] as number[], inProcess: [] as number[], bytes: [] as number[] };
  for (let round = 0; round < runs; round++) {
    appended.bytes.push(appendRound(store, round));
    const order = round % 2 === 0 ? (["sync", "import"] as const) : (["import", "sync"] as const);
    for (const what of order) appended[what].push(await cli(what === "sync" ? target.syncArgs : target.importArgs));
    const start = performance.now();
    const counts = await mirrorSessions(source, target.inProcess, { state });
    appended.inProcess.push(performance.now() - start);
    if (counts.appended !== APPEND_SESSIONS || counts.rewritten + counts.created > 0) throw new Error(`sync bench: the in-process pass appended to ${counts.appended} sessions, ${APPEND_SESSIONS} expected`);
  }
  await source.close();
  const idleSync = await cli(target.syncArgs);
  const idleImport = await cli(target.importArgs);
  const now = sizeOf(store);

  const [firstSync, firstImport, appendSync, appendImport, appendInProcess] = [first.sync, first.import, appended.sync, appended.import, appended.inProcess].map(summarize) as [Sample, Sample, Sample, Sample, Sample];
  const appendBytes = summarize(appended.bytes).median;
  const timing = (s: Sample) => `${formatMs(s.median)} (min ${formatMs(s.min)})`;
  const rates = (bytes: number, entries: number, ms: number) => `${(bytes / 1e6 / (ms / 1000)).toFixed(1)} MB/s, ${Math.round(entries / (ms / 1000)).toLocaleString("en-US")} entries/s`;
  return [
    info({
      name: `sync, first copy of ${SESSIONS} sessions (${(firstBytes / 1e6).toFixed(1)} MB, ${firstEntries.toLocaleString("en-US")} entries), ${target.name}, whole process: sync vs import`,
      ours: `${timing(firstSync)}, ${rates(firstBytes, firstEntries, firstSync.median)}`,
      peer: `import ${timing(firstImport)}, ${rates(firstBytes, firstEntries, firstImport.median)}`,
      ratio: ratio(firstSync.median / firstImport.median),
      key: `sync.first.${key}`,
      figures: { ms: firstSync.median, importMs: firstImport.median, bytesPerSec: firstBytes / (firstSync.median / 1000), entriesPerSec: firstEntries / (firstSync.median / 1000), importBytesPerSec: firstBytes / (firstImport.median / 1000), ratioToImport: firstSync.median / firstImport.median },
    }),
    info({
      name: `sync, steady appends: ${APPEND_ENTRIES} entries (${(appendBytes / 1e6).toFixed(1)} MB) appended to ${APPEND_SESSIONS} of the ${SESSIONS} sessions, then one pass, ${target.name}: sync vs import`,
      ours: `${timing(appendSync)}, ${rates(appendBytes, APPEND_ENTRIES, appendSync.median)}`,
      peer: `import ${timing(appendImport)}, ${rates(appendBytes, APPEND_ENTRIES, appendImport.median)}`,
      ratio: ratio(appendSync.median / appendImport.median),
      key: `sync.appends.${key}`,
      figures: { ms: appendSync.median, importMs: appendImport.median, bytesPerSec: appendBytes / (appendSync.median / 1000), entriesPerSec: APPEND_ENTRIES / (appendSync.median / 1000), importBytesPerSec: appendBytes / (appendImport.median / 1000), ratioToImport: appendSync.median / appendImport.median },
    }),
    info({
      name: `sync, steady appends, the same ${APPEND_ENTRIES} entries: one pass of the mirror in process (what each \`sync --watch\` pass runs), ${target.name}, vs the whole sync process`,
      ours: `${timing(appendInProcess)}, ${rates(appendBytes, APPEND_ENTRIES, appendInProcess.median)}`,
      peer: `sync process ${timing(appendSync)}`,
      ratio: ratio(appendInProcess.median / appendSync.median),
      key: `sync.appends.${key}.inProcess`,
      figures: { ms: appendInProcess.median, bytesPerSec: appendBytes / (appendInProcess.median / 1000), entriesPerSec: APPEND_ENTRIES / (appendInProcess.median / 1000) },
    }),
    info({
      name: `sync, nothing new (${SESSIONS} sessions, ${(now.bytes / 1e6).toFixed(1)} MB), ${target.name}: sync vs import`,
      ours: formatMs(idleSync),
      peer: `import ${formatMs(idleImport)}`,
      ratio: ratio(idleSync / idleImport),
      key: `sync.idle.${key}`,
      figures: { ms: idleSync, importMs: idleImport, ratioToImport: idleSync / idleImport },
    }),
  ];
}
