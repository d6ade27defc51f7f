/**
 * PostgreSQL store vs node-fs, on a private cluster this section starts (and deletes) itself:
 * appends with a flush every 4 and their cost in rows, bytes and WAL per entry; open + context
 * of the 50 MB pi-written session; listing the 300 sessions; four writer processes at once; how
 * soon a killed writer's lock is free; how much a 64 MiB write delays another session's flushes.
 */
import { readFileSync, readdirSync, rmSync } from "node:fs";
import { join, relative, sep } from "node:path";
import pg from "pg";
import { nodeFsStorage } from "../../adapters/node-fs/index.js";
import { postgresStorage, type PostgresStorage } from "../../adapters/postgres/index.js";
import { CATALOG_DIR } from "../../src/session/listing.js";
import { SessionManager, isStorageError } from "../../src/index.js";
import { pseudoRandomBytes } from "../../src/testing/index.js";
import { startCluster } from "../../test/postgres/cluster.js";
import { HEAD_OF_LINE_BOUND_MS, headOfLineRound, percentile, type HeadOfLineRound } from "../../test/postgres/head-of-line.js";
import { runManyWriters, startWriter } from "../../test/postgres/many-writers.js";
import { APPEND_CWD, appendMessages, meanEntryBytes } from "../lib/appends.js";
import { LIST_CWD, LIST_ROOT, LIST_SESSION_DIR, OPEN_ROOT, SCRATCH_DIR, ensureListSessions, ensureOpenSession } from "../lib/data.js";
import { formatMs, formatRate, interleave, summarize, type Case, type Sample } from "../lib/measure.js";
import { ratio, verdict, type Row } from "../lib/report.js";

const APPENDS = 10_000;
const FLUSH_EVERY = 4;
const WRITERS = { processes: 4, sessions: 25, entries: 100, flushEvery: 4 };
/** The large write of the head-of-line rounds, as test/postgres/head-of-line.test.ts writes it. */
const HEAD_OF_LINE_WRITE_BYTES = 64 << 20;
const timing = (s: Sample) => `${formatMs(s.median)} (min ${formatMs(s.min)})`;
const info = (row: Omit<Row, "target" | "verdict">): Row => ({ ...row, target: "—", verdict: "info" });

export async function benchPostgres(runs: number): Promise<{ rows: Row[]; notes: string[] }> {
  const cluster = await startCluster();
  const admin = new pg.Client(cluster.url);
  await admin.connect();
  const ports: PostgresStorage[] = [];
  const port = (schema: string) => {
    const storage = postgresStorage({ connection: cluster.url, schema });
    ports.push(storage);
    return storage;
  };
  try {
    const rows = [
      ...(await appendsVsNodeFs(runs, port("appends"))),
      ...(await costPerEntry(admin, port("cost"))),
      ...(await openVsNodeFs(runs, port("open"))),
      ...(await listingVsNodeFs(runs, port("list"))),
      ...(await manyWriters(cluster.url)),
      ...(await lockAfterKill(cluster.url, port("locks"))),
      ...(await headOfLine(runs, port("hol"))),
    ];
    const [{ setting }] = (await admin.query<{ setting: string }>("SELECT current_setting('synchronous_commit') AS setting")).rows as [{ setting: string }];
    return {
      rows,
      notes: [
        `postgres: a private PostgreSQL ${(await admin.query("SHOW server_version")).rows[0].server_version} cluster started by the bench on loopback (synchronous_commit ${setting}, fsync on), one schema per measurement; node-fs peers run in the same process on the same data. ${runs} interleaved rounds after a warm-up. Appends: ${APPENDS.toLocaleString("en-US")} of the append workload (mean entry ${Math.round(meanEntryBytes(APPENDS))} bytes), \`await flush()\` every ${FLUSH_EVERY}. Many writers: ${WRITERS.processes} processes × ${WRITERS.sessions} sessions at once, ${WRITERS.entries} entries each, flush every ${WRITERS.flushEvery}, timed from the go (all loaded) to the last process done. Head of line: test/postgres/head-of-line.ts's rounds, one session appending an entry of ~1 KB and flushing in a loop while a ${HEAD_OF_LINE_WRITE_BYTES >> 20} MiB \`write\` to another session runs (on a connection of its own, in 256 KiB statements), then as many flushes for as long with nothing else running (the control); a round's delay is its worst flush during the write minus the control's worst (the machine's own noise), one warm-up round then ${runs}, the median delay against the ${HEAD_OF_LINE_BOUND_MS} ms bound docs/postgres.md gives (one statement).`,
      ],
    };
  } finally {
    await Promise.all(ports.map((storage) => storage.close()));
    await admin.end();
    await cluster.stop();
  }
}

async function appendsVsNodeFs(runs: number, storage: PostgresStorage): Promise<Row[]> {
  const root = join(SCRATCH_DIR, "postgres-appends-node-fs");
  rmSync(root, { recursive: true, force: true });
  const nodeFs = nodeFsStorage({ root });
  type Appended = { ms: number; file: string };
  const appendCase = (name: string, target: typeof storage | typeof nodeFs): Case<Appended> => ({
    name,
    run: () => appendMessages(target, APPENDS, FLUSH_EVERY),
    after: (done) => target.remove(done.file),
  });
  const results = await interleave([appendCase("postgres", storage), appendCase("node-fs", nodeFs)], runs);
  await nodeFs.close();
  rmSync(root, { recursive: true, force: true });
  const ours = results.get("postgres")!.sample;
  const peer = results.get("node-fs")!.sample;
  const rate = (s: Sample) => formatRate(APPENDS / (s.median / 1000));
  return [
    info({
      name: `${APPENDS.toLocaleString("en-US")} appends, \`await flush()\` every ${FLUSH_EVERY}: postgres vs node-fs (write + fsync), in process`,
      ours: `${timing(ours)}, ${rate(ours)}`,
      peer: `node-fs ${timing(peer)}, ${rate(peer)}`,
      ratio: ratio(ours.median / peer.median),
      key: "postgres.appends10k",
      figures: { ms: ours.median, nodeFsMs: peer.median, ratioToNodeFs: ours.median / peer.median },
    }),
  ];
}

/** One session of APPENDS entries written as the appends bench writes it, then what it takes in the database. */
async function costPerEntry(admin: pg.Client, storage: PostgresStorage): Promise<Row[]> {
  await storage.stat("warm-up"); // the schema exists before the WAL is measured
  const walBefore = (await admin.query<{ lsn: string }>("SELECT pg_current_wal_insert_lsn()::text AS lsn")).rows[0]!.lsn;
  const { file } = await appendMessages(storage, APPENDS, FLUSH_EVERY);
  const [wal] = (await admin.query<{ bytes: string }>("SELECT pg_wal_lsn_diff(pg_current_wal_insert_lsn(), $1)::bigint AS bytes", [walBefore])).rows;
  const jsonl = (await storage.stat(file))!.size;
  const size = async () =>
    Number((await admin.query<{ bytes: string }>("SELECT pg_total_relation_size('cost.files') + pg_total_relation_size('cost.chunks') AS bytes")).rows[0]!.bytes);
  const rowCount = Number((await admin.query<{ n: string }>("SELECT count(*) AS n FROM cost.chunks")).rows[0]!.n);
  const asWritten = await size();
  await admin.query("VACUUM FULL cost.files, cost.chunks");
  const compacted = await size();
  const perEntry = (bytes: number) => `${(bytes / APPENDS).toFixed(0)} B`;
  const entryBytes = `JSONL ${perEntry(jsonl)} per entry`;
  return [
    info({ name: "postgres cost per entry: chunk rows (one file row per session besides)", ours: (rowCount / APPENDS).toFixed(3), peer: `${rowCount} rows for ${APPENDS} entries`, ratio: "", key: "postgres.cost", figures: { rowsPerEntry: rowCount / APPENDS } }),
    info({ name: "postgres cost per entry: table + index + TOAST bytes as the appends leave them (before any vacuum)", ours: perEntry(asWritten), peer: entryBytes, ratio: ratio(asWritten / jsonl), key: "postgres.cost", figures: { bytesPerEntry: asWritten / APPENDS, jsonlBytesPerEntry: jsonl / APPENDS } }),
    info({ name: "postgres cost per entry: table + index + TOAST bytes after VACUUM FULL", ours: perEntry(compacted), peer: entryBytes, ratio: ratio(compacted / jsonl), key: "postgres.cost", figures: { vacuumedBytesPerEntry: compacted / APPENDS } }),
    info({ name: "postgres cost per entry: WAL written by the appends", ours: perEntry(Number(wal!.bytes)), peer: entryBytes, ratio: ratio(Number(wal!.bytes) / jsonl), key: "postgres.cost", figures: { walBytesPerEntry: Number(wal!.bytes) / APPENDS } }),
  ];
}

async function openVsNodeFs(runs: number, storage: PostgresStorage): Promise<Row[]> {
  const data = ensureOpenSession();
  const path = relative(OPEN_ROOT, data.path).split(sep).join("/");
  await storage.write(path, readFileSync(data.path));
  const nodeFs = nodeFsStorage({ root: OPEN_ROOT });
  const openCase = (name: string, target: typeof storage | typeof nodeFs): Case<number> => ({
    name,
    async run() {
      const session = await SessionManager.open(target, path, { readOnly: true });
      const messages = session.buildSessionContext().messages.length;
      await session.close();
      return messages;
    },
  });
  const results = await interleave([openCase("postgres", storage), openCase("node-fs", nodeFs)], runs);
  await nodeFs.close();
  const ours = results.get("postgres")!;
  const peer = results.get("node-fs")!;
  return [
    info({
      name: `open + buildSessionContext (read-only), ${(data.size / 1e6).toFixed(1)} MB: postgres vs node-fs`,
      ours: `${timing(ours.sample)}, ${ours.last} messages`,
      peer: `node-fs ${timing(peer.sample)}, ${peer.last} messages`,
      ratio: ratio(ours.sample.median / peer.sample.median),
      key: "postgres.open",
      figures: { ms: ours.sample.median, nodeFsMs: peer.sample.median, ratioToNodeFs: ours.sample.median / peer.sample.median },
    }),
  ];
}

async function listingVsNodeFs(runs: number, storage: PostgresStorage): Promise<Row[]> {
  const data = ensureListSessions();
  const dir = join(LIST_ROOT, LIST_SESSION_DIR);
  for (const name of readdirSync(dir).filter((n) => n.endsWith(".jsonl"))) await storage.write(`${LIST_SESSION_DIR}/${name}`, readFileSync(join(dir, name)));
  const nodeFs = nodeFsStorage({ root: LIST_ROOT });
  const list = (target: typeof storage | typeof nodeFs) => SessionManager.list(target, LIST_CWD, { sessionDir: LIST_SESSION_DIR });
  const dropCatalog = async (target: typeof storage | typeof nodeFs) => {
    for (const entry of await target.list(CATALOG_DIR)) if (entry.kind === "file") await target.remove(`${CATALOG_DIR}/${entry.name}`);
    rmSync(join(LIST_ROOT, CATALOG_DIR), { recursive: true, force: true });
  };
  const cases = (name: string, target: typeof storage | typeof nodeFs): Case<number>[] => [
    { name: `${name} cold`, before: () => dropCatalog(target), run: async () => (await list(target)).length },
    { name: `${name} warm`, before: async () => void (await list(target)), run: async () => (await list(target)).length },
  ];
  const results = await interleave([...cases("postgres", storage), ...cases("node-fs", nodeFs)], runs);
  await nodeFs.close();
  const what = `${data.files} sessions, ${(data.bytes / 1e9).toFixed(2)} GB`;
  return ["warm", "cold"].map((mode) => {
    const ours = results.get(`postgres ${mode}`)!;
    const peer = results.get(`node-fs ${mode}`)!;
    return info({
      name: `list ${what}, ${mode === "warm" ? "catalog present" : "catalog deleted first"}: postgres vs node-fs`,
      ours: `${timing(ours.sample)}, ${ours.last} listed`,
      peer: `node-fs ${timing(peer.sample)}, ${peer.last} listed`,
      ratio: ratio(ours.sample.median / peer.sample.median),
      key: `postgres.list.${mode}`,
      figures: { ms: ours.sample.median, nodeFsMs: peer.sample.median, ratioToNodeFs: ours.sample.median / peer.sample.median },
    });
  });
}

async function manyWriters(url: string): Promise<Row[]> {
  const result = await runManyWriters(url, "writers", WRITERS);
  const { processes, sessions, flushEvery } = WRITERS;
  return [
    info({
      name: `many writers: ${processes} processes × ${sessions} sessions at once, flush every ${flushEvery}, own connections each`,
      ours: `${formatRate(result.entriesPerSecond)} entries`,
      peer: `${result.entries.toLocaleString("en-US")} entries in ${formatMs(result.ms)}`,
      ratio: "",
      key: "postgres.manyWriters",
      figures: { entriesPerSec: result.entriesPerSecond, entries: result.entries, ms: result.ms },
    }),
  ];
}

/** A child holds a session's lock; after SIGKILL, another port polls until it gets the lock. */
async function lockAfterKill(url: string, storage: PostgresStorage): Promise<Row[]> {
  const seed = await SessionManager.create(storage, APPEND_CWD, { deferUntilAssistant: false });
  seed.appendMessage({ role: "user", content: "hold me", timestamp: Date.now() });
  await seed.flush();
  await seed.close();
  const path = seed.getSessionFile()!;
  const holder = startWriter(url, "locks", ["hold", path]);
  try {
    await holder.line((line) => line === "holding");
    const killed = performance.now();
    holder.child.kill("SIGKILL");
    for (;;) {
      const lock = await storage.acquireLock(path).catch((error: unknown) => {
        if (isStorageError(error, "locked")) return undefined;
        throw error;
      });
      if (lock) {
        const ms = performance.now() - killed;
        await lock.release();
        return [info({ name: "a SIGKILLed writer's session lock is free for another process after", ours: formatMs(ms), peer: "the issue's bound: 1 s", ratio: ratio(ms / 1000), key: "postgres.lockAfterKill", figures: { ms } })];
      }
      if (performance.now() - killed > 10_000) throw new Error("the killed writer's lock was not free after 10 s");
    }
  } finally {
    holder.child.kill("SIGKILL");
  }
}

/** A session's flushes beside a 64 MiB write to another, against the same flushes with nothing else running. */
async function headOfLine(runs: number, storage: PostgresStorage): Promise<Row[]> {
  const sm = await SessionManager.create(storage, APPEND_CWD, { deferUntilAssistant: false });
  sm.appendMessage({ role: "user", content: "start", timestamp: Date.now() });
  await sm.flush();
  const big = pseudoRandomBytes(HEAD_OF_LINE_WRITE_BYTES, 7);
  const path = "sessions/--other--/big.jsonl";
  const rounds: HeadOfLineRound[] = [];
  for (let n = 0; n <= runs; n++) {
    const round = await headOfLineRound(storage, sm, big, path, n);
    if (round.storedBytes !== big.length) throw new Error(`postgres bench: the ${HEAD_OF_LINE_WRITE_BYTES >> 20} MiB write stored ${round.storedBytes} bytes`);
    await storage.remove(path);
    // The first round warms up (JIT, the large write's connection).
    if (n > 0) rounds.push(round);
  }
  await sm.close();
  const delay = summarize(rounds.map((round) => round.delay));
  const median = (pick: (round: HeadOfLineRound) => number) => summarize(rounds.map(pick)).median;
  const duringWorst = median((round) => Math.max(...round.during));
  const controlWorst = median((round) => Math.max(...round.control));
  const duringP50 = median((round) => percentile(round.during, 0.5));
  const controlP50 = median((round) => percentile(round.control, 0.5));
  const duringP99 = median((round) => percentile(round.during, 0.99));
  const controlP99 = median((round) => percentile(round.control, 0.99));
  const flushes = median((round) => round.during.length);
  const writeMs = median((round) => round.writeMs);
  const signed = (ms: number) => `${ms < 0 ? "−" : "+"}${formatMs(Math.abs(ms))}`;
  return [
    {
      name: `head of line: another session's worst flush during a ${HEAD_OF_LINE_WRITE_BYTES >> 20} MiB write, over its worst with nothing else running (as long)`,
      ours: `${signed(delay.median)} (rounds: ${rounds.map((round) => signed(round.delay)).join(", ")})`,
      peer: `worst ${formatMs(duringWorst)} during vs ${formatMs(controlWorst)} idle; p99 ${formatMs(duringP99)} vs ${formatMs(controlP99)}; p50 ${formatMs(duringP50)} vs ${formatMs(controlP50)}; ${flushes} flushes in ${formatMs(writeMs)}`,
      ratio: "",
      target: `≤ ${HEAD_OF_LINE_BOUND_MS} ms`,
      verdict: verdict(delay.median <= HEAD_OF_LINE_BOUND_MS),
      key: "postgres.headOfLine",
      figures: {
        delayMs: delay.median,
        maxDelayMs: delay.max,
        duringWorstMs: duringWorst,
        controlWorstMs: controlWorst,
        duringP50Ms: duringP50,
        controlP50Ms: controlP50,
        duringP99Ms: duringP99,
        controlP99Ms: controlP99,
        flushesDuring: flushes,
        writeMs,
        targetMs: HEAD_OF_LINE_BOUND_MS,
      },
    },
  ];
}
