/**
 * Archive benchmark (issue 4): export and import of a ~50 MB session with 200 images (~40 MB of
 * blobs), ours against Debian's `zip -q` / `unzip -q` on the same files in the same run, and the
 * peak RSS of our export and import, each in a fresh process, over a baseline process.
 *
 *   node --expose-gc --import tsx bench/archive.ts [--runs N] [--profile] [--no-write]
 *
 * prints a markdown table and writes bench/archive-results.md. `runArchiveBench` gives the rows
 * to another runner (their `note`s say how each was measured); `profileArchive` the CPU profiles.
 */
import { execFile, spawnSync } from "node:child_process";
import { randomBytes } from "node:crypto";
import { mkdirSync, openAsBlob, readdirSync, readFileSync, rmSync, statSync, writeFileSync } from "node:fs";
import { loadavg } from "node:os";
import { dirname, join, resolve } from "node:path";
import { fileURLToPath } from "node:url";
import { promisify, parseArgs } from "node:util";
import { crc32 } from "node:zlib";
import { nodeArchiveCodecs, nodeFsStorage } from "../adapters/node-fs/index.js";
import { BlobReader, ZipReader, type FileEntry } from "@zip.js/zip.js";
import { crc32 as archiveCrc32 } from "../src/archive/hashes.js";
import { scanSessionBytes } from "../src/archive/session-bytes.js";
import { SessionManager, type AgentMessage, type ImportSummary } from "../src/index.js";
import { exportToFile, importFromFile, type ArchiveChildResult, type ArchiveChildTask } from "./archive-child.js";
import { bundleCliInto } from "../scripts/cli-bundle.js";
import { topSelfTimes } from "./lib/cpuprofile.js";
import { collectGarbage, interleave, formatMs, summarize, type Case, type Sample } from "./lib/measure.js";
import { MessageFactory, SESSION_SIZES } from "../test/shared/message-factory.js";
import { machineInfo, markdownTable, ratio, verdict, type Row } from "./lib/report.js";

/** A row of bench/lib/report.ts's table, with how it was measured. */
export interface BenchRow extends Row {
  note?: string;
}

const execFileAsync = promisify(execFile);

const BENCH_DIR = dirname(fileURLToPath(import.meta.url));
const REPO_ROOT = join(BENCH_DIR, "..");
const CHILD_SCRIPT = join(BENCH_DIR, "archive-child.ts");
const RESULTS_FILE = join(BENCH_DIR, "archive-results.md");
const ARCHIVE_DATA = join(BENCH_DIR, ".data", "archive");
/** nodeFsStorage root of the generated session and its blobs. */
const STORE = join(ARCHIVE_DATA, "store");
const META_FILE = join(ARCHIVE_DATA, "meta.json");
const SCRATCH = join(ARCHIVE_DATA, "scratch");

/** Bump when the generated data changes shape, so stale data is regenerated. */
const GENERATOR_VERSION = 1;
const CWD = "/bench/archive-project";
const SESSION_TARGET_BYTES = 50_000_000;
const IMAGE_COUNT = 200;
/** Uniform, mean 200 KB: 200 images ≈ 40 MB. */
const IMAGE_BYTES: readonly [number, number] = [150_000, 250_000];
/** id, parentId, type and timestamp around each message line, for the running size estimate. */
const ENTRY_OVERHEAD_BYTES = 110;

/**
 * `zip -n`: store, don't deflate, names ending in these. Blob names are sha256 hex and so end in
 * one of them; the session ends in ".jsonl" and is deflated at zip's default level 6, as zip.js
 * does for ours. One invocation, so zip writes the archive once.
 */
const STORE_SUFFIXES = "0:1:2:3:4:5:6:7:8:9:a:b:c:d:e:f";

const RSS_TARGET_BYTES = 150e6;
/** Export: at most as long as `zip -q`. */
const EXPORT_TARGET_RATIO = 1;
/** Import: at most twice `unzip -q` followed by `sync` of what it wrote (both durable). */
const IMPORT_TARGET_RATIO = 2;

interface ArchiveData {
  version: number;
  /** Storage path of the session under STORE. */
  session: string;
  sessionBytes: number;
  entries: number;
  /** Storage paths of the blobs, sorted. */
  blobs: string[];
  blobBytes: number;
}

function log(message: string): void {
  process.stderr.write(`[bench archive] ${message}\n`);
}

function megabytes(bytes: number): string {
  return `${(bytes / 1e6).toFixed(1)} MB`;
}

/** The stored data as the meta file describes it, or null when anything differs on disk. */
function presentData(): ArchiveData | null {
  let data: ArchiveData;
  try {
    data = JSON.parse(readFileSync(META_FILE, "utf8")) as ArchiveData;
  } catch {
    return null;
  }
  if (data.version !== GENERATOR_VERSION) return null;
  try {
    if (statSync(join(STORE, data.session)).size !== data.sessionBytes) return null;
    const names = readdirSync(join(STORE, "blobs"));
    if (names.length !== data.blobs.length) return null;
    const blobBytes = names.reduce((sum, name) => sum + statSync(join(STORE, "blobs", name)).size, 0);
    return blobBytes === data.blobBytes ? data : null;
  } catch {
    return null;
  }
}

/** Random (incompressible) bytes framed as a PNG: signature, IHDR, one IDAT, IEND. */
function pngLike(size: number): Buffer {
  const chunk = (type: string, data: Buffer) => {
    const typeAndData = Buffer.concat([Buffer.from(type, "latin1"), data]);
    const length = Buffer.alloc(4);
    length.writeUInt32BE(data.length);
    const crc = Buffer.alloc(4);
    crc.writeUInt32BE(crc32(typeAndData));
    return Buffer.concat([length, typeAndData, crc]);
  };
  const header = Buffer.alloc(13);
  header.writeUInt32BE(1440, 0);
  header.writeUInt32BE(900, 4);
  header[8] = 8; // bit depth
  header[9] = 6; // RGBA
  const framing = 8 + 25 + 12 + 12;
  return Buffer.concat([
    Buffer.from([0x89, 0x50, 0x4e, 0x47, 0x0d, 0x0a, 0x1a, 0x0a]),
    chunk("IHDR", header),
    chunk("IDAT", randomBytes(size - framing)),
    chunk("IEND", Buffer.alloc(0)),
  ]);
}

/**
 * Writes the session with our SessionManager over nodeFsStorage: pi-shaped turns (user →
 * (assistant toolCall → toolResult)* → assistant) of realistic text, with an image block on
 * a user message or tool result every ~250 KB of text, so the images (externalized into
 * blobs/ by the SessionManager) spread over the whole file.
 */
async function generateData(): Promise<ArchiveData> {
  rmSync(ARCHIVE_DATA, { recursive: true, force: true });
  log(`writing a ~${SESSION_TARGET_BYTES / 1e6} MB session with ${IMAGE_COUNT} images with our SessionManager …`);
  const storage = nodeFsStorage({ root: STORE });
  const sm = await SessionManager.create(storage, CWD, { owner: "sessionkit" }); // a store of our own: images to blobs/
  const factory = new MessageFactory(4, { ...SESSION_SIZES, imageChance: 0 });
  const random = factory.random;
  const imageSpacing = SESSION_TARGET_BYTES / IMAGE_COUNT;
  let estimatedBytes = 0;
  let images = 0;
  let entries = 0;
  const append = (message: Record<string, unknown>) => {
    estimatedBytes += Buffer.byteLength(JSON.stringify(message)) + ENTRY_OVERHEAD_BYTES;
    if (message.role !== "assistant" && images < IMAGE_COUNT && estimatedBytes >= images * imageSpacing) {
      const size = IMAGE_BYTES[0] + Math.floor(random() * (IMAGE_BYTES[1] - IMAGE_BYTES[0] + 1));
      const image = { type: "image", data: pngLike(size).toString("base64"), mimeType: "image/png" };
      message = { ...message, content: [...(message.content as unknown[]), image] };
      images++;
    }
    sm.appendMessage(message as unknown as AgentMessage);
    entries++;
  };
  sm.appendModelChange("anthropic", "claude-sonnet-4-5");
  entries++;
  const path = sm.getSessionFile()!;
  for (let turn = 1; ; turn++) {
    append(factory.user());
    const steps = 1 + Math.floor(random() * 6);
    for (let step = 0; step < steps; step++) {
      const { message, toolCall } = factory.assistant(false);
      append(message);
      append(factory.toolResult(toolCall!));
    }
    append(factory.assistant(true).message);
    if (turn % 25 === 0) {
      await sm.flush();
      const stored = await storage.stat(path);
      if (stored!.size >= SESSION_TARGET_BYTES && images === IMAGE_COUNT) break;
    }
  }
  await sm.close();
  await storage.close();
  const blobs = readdirSync(join(STORE, "blobs"))
    .sort()
    .map((name) => `blobs/${name}`);
  if (blobs.length !== IMAGE_COUNT) throw new Error(`expected ${IMAGE_COUNT} blobs, the SessionManager wrote ${blobs.length}`);
  const data: ArchiveData = {
    version: GENERATOR_VERSION,
    session: path,
    sessionBytes: statSync(join(STORE, path)).size,
    entries,
    blobs,
    blobBytes: blobs.reduce((sum, blob) => sum + statSync(join(STORE, blob)).size, 0),
  };
  writeFileSync(META_FILE, JSON.stringify(data, null, 2));
  log(`wrote ${megabytes(data.sessionBytes)} of session (${entries} entries) and ${megabytes(data.blobBytes)} of blobs`);
  return data;
}

async function ensureData(): Promise<ArchiveData> {
  return presentData() ?? (await generateData());
}

function freshDir(dir: string): void {
  rmSync(dir, { recursive: true, force: true });
  mkdirSync(dir, { recursive: true });
}

/**
 * Writes back every dirty page before a timed run: with ext4's ordered mode an fsync also waits
 * for other files' unwritten data, so a run after a peer that leaves 90 MB unwritten (zip,
 * unzip) would pay for it.
 */
function flushDirtyPages(): void {
  spawnSync("sync");
}

function check(condition: boolean, message: string): void {
  if (!condition) throw new Error(`archive bench: ${message}`);
}

function timing(sample: Sample): string {
  return `${formatMs(sample.median)} (min ${formatMs(sample.min)})`;
}

async function runChild(task: ArchiveChildTask): Promise<ArchiveChildResult> {
  const { stdout } = await execFileAsync(process.execPath, ["--import", "tsx", CHILD_SCRIPT, JSON.stringify(task)], {
    cwd: REPO_ROOT,
    maxBuffer: 1 << 20,
  });
  const result = JSON.parse(stdout.trim().split("\n").findLast((line) => line.startsWith("{"))!) as ArchiveChildResult;
  if (task.kind !== "baseline") check(result.blobs === IMAGE_COUNT, `the ${task.kind} child handled ${result.blobs} blobs, not ${IMAGE_COUNT}`);
  return result;
}

function sameBytes(a: string, b: string): boolean {
  return readFileSync(a).equals(readFileSync(b));
}

async function benchExport(data: ArchiveData, runs: number, ours: string, peer: string): Promise<BenchRow[]> {
  const results = await interleave<unknown>(
    [
      {
        name: "ours",
        before: () => {
          rmSync(ours, { force: true });
          flushDirtyPages();
        },
        run: () => exportToFile(STORE, data.session, ours),
        after: (summary) => {
          const { blobs, archiveBytes } = summary as Awaited<ReturnType<typeof exportToFile>>;
          check(blobs.count === IMAGE_COUNT && archiveBytes === statSync(ours).size, `our export wrote ${blobs.count} blobs, ${archiveBytes} bytes`);
        },
      },
      {
        name: "zip",
        // zip adds to an existing archive: start from none.
        before: () => {
          rmSync(peer, { force: true });
          flushDirtyPages();
        },
        run: () => execFileAsync("zip", ["-q", "-D", "-n", STORE_SUFFIXES, peer, data.session, ...data.blobs], { cwd: STORE }),
      },
    ] satisfies Case<unknown>[],
    runs,
  );
  const listing = (await execFileAsync("zipinfo", [peer], { maxBuffer: 1 << 20 })).stdout;
  const methods = (method: string) => listing.split("\n").filter((line) => line.includes(` ${method} `)).length;
  check(methods("defN") === 1 && methods("stor") === IMAGE_COUNT, `zip did not deflate the session and store the blobs:\n${listing}`);

  const oursTime = results.get("ours")!.sample;
  const zipTime = results.get("zip")!.sample;
  const oursBytes = statSync(ours).size;
  const zipBytes = statSync(peer).size;
  return [
    {
      name: `archive export: ${megabytes(data.sessionBytes)} session + ${IMAGE_COUNT} blobs (${megabytes(data.blobBytes)}), ours vs \`zip -q\``,
      ours: timing(oursTime),
      peer: timing(zipTime),
      ratio: ratio(oursTime.median / zipTime.median),
      target: `≤ ${EXPORT_TARGET_RATIO}× zip`,
      verdict: verdict(oursTime.median <= EXPORT_TARGET_RATIO * zipTime.median),
      key: "archive.export",
      figures: {
        sessionBytes: data.sessionBytes,
        blobs: IMAGE_COUNT,
        blobBytes: data.blobBytes,
        oursMs: oursTime.median,
        oursMinMs: oursTime.min,
        zipMs: zipTime.median,
        zipMinMs: zipTime.min,
        ratioToZip: oursTime.median / zipTime.median,
        targetRatioToZip: EXPORT_TARGET_RATIO,
      },
      note:
        "ours: `exportArchive(nodeFsStorage, [session], Writable.toWeb(fs.createWriteStream(file)), nodeArchiveCodecs)` in this process, as the CLI exports " +
        "(a single session is read once: hashed with node:crypto while its lines are checked for the manifest, then deflated at zlib's default level 6 " +
        "in 4 MiB pieces at once on the thread pool (`nodeDeflateSession`); every blob re-hashed, 4 read ahead of the one written); " +
        `peer: \`zip -q -D -n ${STORE_SUFFIXES} out.zip <session.jsonl> blobs/…\` in the store dir, one invocation: ` +
        "the blobs (names end in a hex digit) stored, the .jsonl deflated at zip's default level 6, as ours; checked with zipinfo",
    },
    {
      name: "archive size, ours vs `zip -q`",
      ours: megabytes(oursBytes),
      peer: megabytes(zipBytes),
      ratio: ratio(oursBytes / zipBytes),
      target: "—",
      verdict: "info",
      key: "archive.size",
      figures: { oursBytes, zipBytes, ratioToZip: oursBytes / zipBytes },
      note: "ours also holds manifest.json",
    },
  ];
}

/**
 * CPU time (user + system, ms) of the child processes this process has waited for, from Linux's
 * /proc/self/stat (cutime + cstime, in clock ticks of 10 ms); a shell's children count in it.
 */
function childCpuMs(): number {
  const fields = readFileSync("/proc/self/stat", "utf8").split(") ")[1]!.split(" ");
  // After "pid (comm) ", cutime and cstime are the 14th and 15th fields (stat(5)'s 16 and 17).
  return (Number(fields[13]) + Number(fields[14])) * 10;
}

/** `run` (a child process), its children's CPU time recorded in `into`. */
async function countingChildCpu<T>(into: number[], run: () => Promise<T>): Promise<T> {
  const before = childCpuMs();
  const result = await run();
  into.push(childCpuMs() - before);
  return result;
}

async function benchImport(data: ArchiveData, runs: number, archive: string): Promise<{ rows: BenchRow[]; unzipSync: Sample }> {
  const oursDir = join(SCRATCH, "import-ours");
  const cliDir = join(SCRATCH, "import-cli");
  const unzipDir = join(SCRATCH, "import-unzip");
  const durableDir = join(SCRATCH, "import-unzip-sync");
  const bin = await bundleCliInto(join(SCRATCH, "cli"));
  const emptied = (dir: string) => () => {
    freshDir(dir);
    flushDirtyPages();
  };
  // CPU time of each whole-process run (the warm-up's first, dropped below).
  const cliCpu: number[] = [];
  const durableCpu: number[] = [];
  const results = await interleave<unknown>(
    [
      {
        name: "ours",
        before: emptied(oursDir),
        run: () => importFromFile(archive, oursDir),
        after: (summary) => {
          const { sessions, blobs } = summary as Awaited<ReturnType<typeof importFromFile>>;
          check(sessions.length === 1 && sessions[0]!.action === "created" && blobs.written === IMAGE_COUNT, `our import: ${JSON.stringify({ sessions, blobs })}`);
        },
      },
      {
        name: "cli",
        before: emptied(cliDir),
        // oh-my-pi's store keeps images as blob files, as this archive does (pi's own inlines them).
        run: () => countingChildCpu(cliCpu, () => execFileAsync(process.execPath, [bin, "--agent", "omp", "--root", cliDir, "--json", "import", archive], { maxBuffer: 1 << 20 })),
        after: (printed) => {
          const { sessions, blobs } = JSON.parse((printed as { stdout: string }).stdout) as ImportSummary;
          check(sessions.length === 1 && sessions[0]!.action === "created" && blobs.written === IMAGE_COUNT, `the CLI's import: ${JSON.stringify({ sessions, blobs })}`);
        },
      },
      { name: "unzip", before: emptied(unzipDir), run: () => execFileAsync("unzip", ["-q", archive, "-d", unzipDir]) },
      {
        name: "unzip+sync",
        before: emptied(durableDir),
        // coreutils sync with arguments fsyncs each one, as our storage does each file and its directory.
        run: () => countingChildCpu(durableCpu, () => execFileAsync("sh", ["-c", 'unzip -q "$0" -d "$1" && find "$1" -exec sync {} +', archive, durableDir])),
      },
    ] satisfies Case<unknown>[],
    runs,
  );
  const [loadAverage1m] = loadavg();
  const cliCpuTime = summarize(cliCpu.slice(-runs));
  const durableCpuTime = summarize(durableCpu.slice(-runs));
  // Each did the whole job: the session byte for byte and every blob.
  const id = data.session.slice(data.session.lastIndexOf("_") + 1, -".jsonl".length);
  const source = join(STORE, data.session);
  check(sameBytes(join(oursDir, data.session), source), "our import did not reproduce the session byte for byte");
  check(sameBytes(join(cliDir, data.session), source), "the CLI's import did not reproduce the session byte for byte");
  for (const dir of [unzipDir, durableDir]) check(sameBytes(join(dir, "sessions", `${id}.jsonl`), source), `unzip into ${dir} did not reproduce the session`);
  for (const dir of [oursDir, cliDir, unzipDir, durableDir]) check(readdirSync(join(dir, "blobs")).length === IMAGE_COUNT, `${dir} lacks blobs`);

  const oursTime = results.get("ours")!.sample;
  const cliTime = results.get("cli")!.sample;
  const unzipTime = results.get("unzip")!.sample;
  const durableTime = results.get("unzip+sync")!.sample;
  // The two rows against unzip + sync differ only in what "ours" ran.
  const importAgainstDurable = (name: string, key: string, ours: typeof durableTime) => ({
    name,
    ours: timing(ours),
    peer: timing(durableTime),
    ratio: ratio(ours.median / durableTime.median),
    target: `≤ ${IMPORT_TARGET_RATIO}× unzip + sync`,
    verdict: verdict(ours.median <= IMPORT_TARGET_RATIO * durableTime.median),
    key,
    figures: {
      oursMs: ours.median,
      oursMinMs: ours.min,
      unzipSyncMs: durableTime.median,
      unzipSyncMinMs: durableTime.min,
      ratioToUnzipSync: ours.median / durableTime.median,
      targetRatioToUnzipSync: IMPORT_TARGET_RATIO,
    },
  });
  const rows: BenchRow[] = [
    {
      ...importAgainstDurable("archive import of that archive into an empty store, ours vs `unzip -q` then `sync` of every file and directory (both durable)", "archive.import", oursTime),
      note:
        "ours: `importArchive(nodeFsStorage(empty dir), await fs.openAsBlob(archive), nodeArchiveCodecs)` in this process, as the CLI imports " +
        "(zlib inflating in 512 KiB pieces, node:crypto's SHA-256 for the session, zlib's CRC-32): every member inflated and checked " +
        "(CRC-32, sha256 of each blob and of the session, the session parsed) before anything is written — blobs read as ranges of the file 4 at a time " +
        "while the session is parsed line by line and hashed as it inflates — then each file written atomically, 8 at a time " +
        "(temp file, fsync, rename; the blobs through one `writeFiles`, which fsyncs their directory once after the last rename, then the session, " +
        "with its directory fsync and the parents of directories it made); peer: `unzip -q archive -d <empty dir>` then coreutils `sync <each extracted file and dir>` " +
        "(an fsync each), in the same rounds; `sync` (untimed) before every run of either, so no run waits on another's unwritten data; " +
        "every output checked: the session byte for byte, 200 blobs",
    },
    {
      ...(() => {
        const row = importAgainstDurable("archive import as a whole process: `sessionkit --agent omp --root <empty dir> import` (bundled bin) vs `unzip -q` then `sync` of every file and directory", "archive.importProcess", cliTime);
        return {
          ...row,
          ours: `${row.ours}, CPU ${formatMs(cliCpuTime.median)}`,
          peer: `${row.peer}, CPU ${formatMs(durableCpuTime.median)}`,
          figures: { ...row.figures, oursCpuMs: cliCpuTime.median, unzipSyncCpuMs: durableCpuTime.median, cpuRatioToUnzipSync: cliCpuTime.median / durableCpuTime.median, loadAverage1m },
        };
      })(),
      note:
        "ours: the CLI bundled as `npm run build` bundles it, a process per run, start-up and the JSON summary on stdout included, into an empty directory " +
        "laid out as oh-my-pi's store (whose images are blob files, as the archive's; pi's own store keeps them inline, so an import there writes one session of twice the size " +
        "and no blob files); in the same rounds as the row above, the same checks. CPU: user + system time of each process with its children, ours and the peer's " +
        "(Linux /proc/self/stat cutime + cstime, 10 ms ticks), medians; the machine may be shared, so CPU time is the steadier figure; " +
        "loadAverage1m: the 1-minute load average after the rounds",
    },
    {
      name: "archive import, ours vs `unzip -q` alone (not durable: no fsync)",
      ours: timing(oursTime),
      peer: timing(unzipTime),
      ratio: ratio(oursTime.median / unzipTime.median),
      target: "—",
      verdict: "info",
      key: "archive.import",
      figures: { unzipMs: unzipTime.median, unzipMinMs: unzipTime.min, ratioToUnzip: oursTime.median / unzipTime.median },
      note: "`unzip -q` checks the CRC-32 of each member and writes without fsync",
    },
  ];
  return { rows, unzipSync: durableTime };
}

/**
 * What an import of this archive cannot skip, each step timed alone (in this process, data in
 * memory, GC before each run): the sum is a floor for our import, to set against `unzip`.
 */
async function benchImportFloor(data: ArchiveData, runs: number, archive: string, unzipSync: Sample): Promise<BenchRow[]> {
  const session = new Uint8Array(readFileSync(join(STORE, data.session)));
  const blobs = data.blobs.map((blob) => new Uint8Array(readFileSync(join(STORE, blob))));
  const compressed = await compressedMember(archive, `sessions/${sessionIdOf(data)}.jsonl`);
  const writeDir = join(SCRATCH, "floor-writes");
  const steps: Array<{ key: string; name: string; note: string; before?: () => void; run: () => Promise<unknown> | unknown }> = [
    {
      key: "inflate",
      name: `inflate the session member (${megabytes(compressed.length)} → ${megabytes(session.length)})`,
      note: "node-fs's `nodeInflateRaw` (zlib, 512 KiB pieces), as the import is given it here and by the CLI, into one buffer",
      run: async () => {
        const out = new Uint8Array(session.length);
        let at = 0;
        const inflated = new Blob([compressed as Uint8Array<ArrayBuffer>]).stream().pipeThrough(nodeArchiveCodecs.inflateRaw()).getReader();
        for (let next = await inflated.read(); !next.done; next = await inflated.read()) {
          out.set(next.value, at);
          at += next.value.length;
        }
        check(at === session.length, `inflated ${at} bytes`);
      },
    },
    {
      key: "crc32",
      name: `CRC-32 of every member (${megabytes(session.length + data.blobBytes)})`,
      note: "src/archive/hashes.ts (hash-wasm's CRC-32, WebAssembly)",
      run: async () => {
        let x = 0;
        for (const bytes of [session, ...blobs]) x ^= await archiveCrc32(bytes);
        return x;
      },
    },
    {
      key: "sha256",
      name: "SHA-256 of every member",
      note: "as the import hashes them: `crypto.subtle` for each blob, node-fs's `nodeSha256` (node:crypto) for the session as it inflates (subtle would copy it: +50 MB)",
      run: async () => {
        await Promise.all(blobs.map((blob) => crypto.subtle.digest("SHA-256", blob)));
        const hash = nodeArchiveCodecs.sha256();
        hash.update(session);
        return hash.hex();
      },
    },
    {
      key: "parse",
      name: `decode and parse the session line by line (${data.entries} entries)`,
      note: "`scanSessionBytes`: TextDecoder and `JSON.parse` of each line, ids and blob refs kept",
      run: () => scanSessionBytes(session, data.session),
    },
    {
      key: "writes",
      name: `write ${data.blobs.length + 1} files atomically into an empty store`,
      note:
        "as the import writes them: nodeFsStorage `writeFiles` of the blobs (each a temp file, fsync, rename, 8 at a time; their directory fsynced once), " +
        "then `write` of the session (temp file, fsync, rename, directory fsync); `sync` (untimed) before",
      before: () => {
        freshDir(writeDir);
        flushDirtyPages();
      },
      run: async () => {
        const storage = nodeFsStorage({ root: writeDir });
        await storage.writeFiles(data.blobs.map((path, i) => ({ path, bytes: async () => blobs[i]! })));
        await storage.write(data.session, session);
        await storage.close();
      },
    },
  ];
  const medians: number[] = [];
  const rows: BenchRow[] = [];
  for (const step of steps) {
    const times: number[] = [];
    for (let run = 0; run <= runs; run++) {
      step.before?.();
      collectGarbage();
      const start = performance.now();
      await step.run();
      // The first run warms up.
      if (run > 0) times.push(performance.now() - start);
    }
    const sample = summarize(times);
    medians.push(sample.median);
    rows.push({
      name: `import floor: ${step.name}`,
      ours: timing(sample),
      peer: `unzip + sync ${timing(unzipSync)}`,
      ratio: ratio(sample.median / unzipSync.median),
      target: "—",
      verdict: "info",
      key: `archive.importFloor.${step.key}`,
      figures: { ms: sample.median, minMs: sample.min },
      note: step.note,
    });
  }
  rmSync(writeDir, { recursive: true, force: true });
  const sum = medians.reduce((a, b) => a + b, 0);
  rows.push({
    name: "import floor: the sum of those steps, vs `unzip -q` then `sync`",
    ours: formatMs(sum),
    peer: `unzip + sync ${timing(unzipSync)}`,
    ratio: ratio(sum / unzipSync.median),
    target: `≤ ${IMPORT_TARGET_RATIO}× unzip + sync`,
    verdict: "info",
    key: "archive.importFloor.sum",
    figures: { ms: sum, ratioToUnzipSync: sum / unzipSync.median },
    note:
      "medians of the steps above added up: the time of an import that did all of them one after the other and nothing else. The import overlaps " +
      "them (inflating runs on the thread pool while the session is hashed and parsed, blobs are checked meanwhile), so it can come in under this sum",
  });
  return rows;
}

/** The compressed bytes of an archive member, located through zip.js (its local header read). */
async function compressedMember(archive: string, name: string): Promise<Uint8Array> {
  const blob = await openAsBlob(archive);
  const reader = new ZipReader(new BlobReader(blob), { useWebWorkers: false });
  try {
    const entry = (await reader.getEntries()).find((e): e is FileEntry => e.filename === name && !e.directory);
    check(entry !== undefined, `${name} is not in ${archive}`);
    await entry!.getData(new WritableStream(), { checkOverlappingEntryOnly: true });
    const start = entry!.localDirectory!.dataOffset;
    return new Uint8Array(await blob.slice(start, start + entry!.compressedSize).arrayBuffer());
  } finally {
    await reader.close();
  }
}

function sessionIdOf(data: ArchiveData): string {
  return data.session.slice(data.session.lastIndexOf("_") + 1, -".jsonl".length);
}

/** Peak RSS of our export and import, each in a fresh process, over a process that only loads the modules. */
async function benchMemory(data: ArchiveData, runs: number, archive: string): Promise<BenchRow[]> {
  const out = join(SCRATCH, "child.zip");
  const importDir = join(SCRATCH, "import-child");
  const rss: Record<"baseline" | "export" | "import", number[]> = { baseline: [], export: [], import: [] };
  for (let round = 0; round < runs; round++) {
    rss.baseline.push((await runChild({ kind: "baseline" })).peakRss);
    rmSync(out, { force: true });
    rss.export.push((await runChild({ kind: "export", root: STORE, session: data.session, out })).peakRss);
    freshDir(importDir);
    rss.import.push((await runChild({ kind: "import", archive, root: importDir })).peakRss);
  }
  rmSync(out, { force: true });
  rmSync(importDir, { recursive: true, force: true });
  const baseline = summarize(rss.baseline).median;
  const row = (kind: "export" | "import"): BenchRow => {
    const over = summarize(rss[kind].map((bytes) => bytes - baseline));
    return {
      key: `archive.memory.${kind}`,
      figures: { overBaselineBytes: over.median, maxOverBaselineBytes: over.max, baselineBytes: baseline, targetOverBaselineBytes: RSS_TARGET_BYTES },
      name: `peak RSS of our ${kind} (fresh process) over the baseline process`,
      ours: `+${megabytes(over.median)} (max +${megabytes(over.max)})`,
      peer: `baseline ${megabytes(baseline)}`,
      ratio: "—",
      target: `< ${megabytes(RSS_TARGET_BYTES)} over baseline`,
      verdict: verdict(over.max < RSS_TARGET_BYTES),
      note:
        `a fresh \`node --import tsx bench/archive-child.ts\` per run; its peak RSS (Linux VmHWM, read at the end: \`resourceUsage().maxRSS\` ` +
        `would count the bench process's own RSS, which a forked child inherits) minus the median of the same child loading the same ` +
        `modules and reading nothing; median of ${runs} runs, judged on the largest`,
    };
  };
  return [row("export"), row("import")];
}

/**
 * Every row of the archive benchmark, measured now; `runs` rounds (at least 3, for medians).
 * Generates the data on first use (untimed).
 */
export async function runArchiveBench(options: { runs?: number } = {}): Promise<BenchRow[]> {
  const runs = Math.max(3, options.runs ?? 3);
  if (!Number.isInteger(runs)) throw new Error(`archive bench: runs must be an integer, got ${options.runs}`);
  const data = await ensureData();
  freshDir(SCRATCH);
  const ours = join(SCRATCH, "ours.zip");
  try {
    log(`export, ours vs zip, ${runs} runs …`);
    const rows = await benchExport(data, runs, ours, join(SCRATCH, "zip.zip"));
    log(`import, ours vs unzip, ${runs} runs …`);
    const imported = await benchImport(data, runs, ours);
    rows.push(...imported.rows);
    log(`import floor: the steps an import cannot skip, each alone, ${runs} runs …`);
    rows.push(...(await benchImportFloor(data, runs, ours, imported.unzipSync)));
    log(`peak RSS, ${runs} × 3 child processes …`);
    rows.push(...(await benchMemory(data, runs, ours)));
    return rows;
  } finally {
    rmSync(SCRATCH, { recursive: true, force: true });
  }
}

/** CPU profiles (100 µs sampling, the archive work only) of our export and import, as markdown. */
export async function profileArchive(): Promise<string[]> {
  const data = await ensureData();
  freshDir(SCRATCH);
  const archive = join(SCRATCH, "profile.zip");
  const tasks: Array<{ title: string; task: ArchiveChildTask }> = [
    { title: "export", task: { kind: "export", root: STORE, session: data.session, out: archive, profileTo: join(SCRATCH, "export.cpuprofile") } },
    { title: "import into an empty store", task: { kind: "import", archive, root: join(SCRATCH, "profile-import"), profileTo: join(SCRATCH, "import.cpuprofile") } },
  ];
  const lines: string[] = [];
  try {
    for (const { title, task } of tasks) {
      await runChild(task);
      const { busyMs, top } = topSelfTimes(task.profileTo!, REPO_ROOT, 15);
      const { startTime, endTime } = JSON.parse(readFileSync(task.profileTo!, "utf8")) as { startTime: number; endTime: number };
      lines.push(
        `### ${title}: ${formatMs(busyMs)} busy of ${formatMs((endTime - startTime) / 1000)} profiled (the rest is waiting: file system, thread pool)`,
        "",
        "| self time | share of busy | function |",
        "|--:|--:|---|",
      );
      for (const t of top) lines.push(`| ${t.ms.toFixed(0)} ms | ${(t.share * 100).toFixed(1)}% | \`${t.where}\` |`);
      lines.push("");
    }
    return lines;
  } finally {
    rmSync(SCRATCH, { recursive: true, force: true });
  }
}

async function main(): Promise<void> {
  const { values } = parseArgs({
    options: {
      runs: { type: "string", default: "3" },
      profile: { type: "boolean", default: false },
      "no-write": { type: "boolean", default: false },
    },
  });
  const started = new Date();
  const machine = machineInfo();
  const rows = await runArchiveBench({ runs: Number(values.runs) });
  const profile = values.profile ? (log("CPU profiles …"), await profileArchive()) : [];
  const data = presentData()!;
  const failed = rows.filter((row) => row.verdict === "FAIL").length;
  const report = [
    "# sessionkit archive benchmark",
    "",
    `Measured ${started.toISOString()} by \`node ${process.execArgv.join(" ")} bench/archive.ts ${process.argv.slice(2).join(" ")}\` ` +
      `(${((Date.now() - started.getTime()) / 1000).toFixed(0)} s); every number below comes from that run.`,
    "",
    ...machine.map((line) => `- ${line}`),
    `- ${versionLine("zip", ["-v"], 1)}; ${versionLine("unzip", ["-v"], 0)}`,
    "",
    markdownTable(rows),
    "",
    `${rows.filter((row) => row.verdict === "PASS").length} passed, ${failed} failed, ${rows.filter((row) => row.verdict === "info").length} for information. ` +
      "Times: median of the runs (min in parentheses), each after a full GC, the order of ours and the peer rotated per round, after one warm-up run each.",
    "",
    "## How",
    "",
    `- data (generated once into bench/.data/archive, reused, not timed): one session of ${megabytes(data.sessionBytes)} (${data.entries} entries of ` +
      `user / assistant / toolResult messages from test/shared/message-factory.ts) written by our SessionManager over nodeFsStorage, with ${data.blobs.length} ` +
      `PNG-framed random (incompressible) images of 150–250 KB, ${megabytes(data.blobBytes)} in all, externalized by the SessionManager into blobs/.`,
    ...rows.filter((row) => row.note).map((row) => `- ${row.name}: ${row.note}`),
    ...(profile.length ? ["", "## CPU profiles (ours)", "", ...profile] : []),
    "",
  ].join("\n");
  process.stdout.write(report);
  if (!values["no-write"]) {
    writeFileSync(RESULTS_FILE, report);
    log("wrote bench/archive-results.md");
  }
}

function versionLine(command: string, args: string[], line: number): string {
  return spawnSync(command, args, { encoding: "utf8" }).stdout.split("\n")[line]!.trim();
}

if (process.argv[1] && resolve(process.argv[1]) === fileURLToPath(import.meta.url)) {
  // GC between runs needs --expose-gc: re-run this file with it.
  if (typeof (globalThis as { gc?: unknown }).gc !== "function") {
    const child = spawnSync(process.execPath, ["--expose-gc", "--import", "tsx", fileURLToPath(import.meta.url), ...process.argv.slice(2)], {
      stdio: "inherit",
      cwd: REPO_ROOT,
    });
    process.exit(child.status ?? 1);
  } else {
    await main();
  }
}
