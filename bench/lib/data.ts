/**
 * Benchmark data, written by pi itself (`@mariozechner/pi-coding-agent`'s SessionManager) into
 * bench/.data (git-ignored), generated once and reused while the manifest and file sizes agree.
 *
 *   open/  sessions/--bench-open-project--/<one ~50 MB session>
 *   list/  sessions/--bench-list-project--/<300 sessions, ~1 GB>   (copies of pi-written bases,
 *          each with a fresh header: id, timestamp, cwd)
 *   huge/  sessions/--bench-huge-project--/<one ~1 GiB session>    (--huge only; pi-written
 *          entries repeated with fresh ids, chained into one tree)
 *   search/ sessions/--bench-search-<k>--/<30 sessions each, 10 projects, ~436 MB>   (every
 *          session written by pi, text drawn from a 50,000-word Zipf vocabulary: no copies)
 *   tool-turns/  the shape of users' sessions (issue 26): many small tool turns and a compaction
 *          every 500 entries, every message a real one from test/fixtures/corpus, re-sequenced.
 *          open/: one ~51 MB session (~12k tool turns); store/sessions/--bench-tool-turns-<k>--/:
 *          300 sessions in 10 projects, ~244 MB (each written by pi with its own seed)
 */
import { randomUUID } from "node:crypto";
import { closeSync, existsSync, mkdirSync, openSync, readdirSync, readFileSync, rmSync, statSync, utimesSync, writeFileSync, writeSync } from "node:fs";
import { dirname, join } from "node:path";
import { fileURLToPath } from "node:url";
import { PiSessionManager } from "../../test/shared/pi-session-manager.js";
import { corpusTurns, type CorpusTurns } from "./corpus-turns.js";
import { MessageFactory, SESSION_SIZES, zipfWords, type WordSource } from "../../test/shared/message-factory.js";

export const BENCH_DIR = join(dirname(fileURLToPath(import.meta.url)), "..");
export const DATA_DIR = join(BENCH_DIR, ".data");
export const SCRATCH_DIR = join(DATA_DIR, "scratch");

/** Bump when the generated data changes shape, so stale data is regenerated. */
const GENERATOR_VERSION = 1;
const MANIFEST = join(DATA_DIR, "manifest.json");

export const OPEN_ROOT = join(DATA_DIR, "open");
const OPEN_CWD = "/bench/open-project";
const OPEN_TARGET_BYTES = 50_000_000;

export const LIST_ROOT = join(DATA_DIR, "list");
export const LIST_CWD = "/bench/list-project";
export const LIST_SESSION_DIR = "sessions/--bench-list-project--";
const LIST_SESSIONS = 300;
/** Base session sizes (bytes); copies cycle through them, averaging ~3.35 MB: 300 files ≈ 1 GB. */
const LIST_BASE_BYTES = [1.0e6, 1.5e6, 2.0e6, 2.5e6, 3.0e6, 3.5e6, 4.0e6, 4.5e6, 5.0e6, 6.5e6];

export const HUGE_ROOT = join(DATA_DIR, "huge");
const HUGE_CWD = "/bench/huge-project";
const HUGE_TARGET_BYTES = 2 ** 30;

type PiMessage = Parameters<PiSessionManager["appendMessage"]>[0];

interface Manifest {
  version: number;
  toolTurnsOpen?: { path: string; size: number };
  toolTurnsStore?: { files: number; bytes: number };
  search?: { files: number; bytes: number };
  open?: { path: string; size: number };
  list?: { files: number; bytes: number };
  huge?: { path: string; size: number };
}

function readManifest(): Manifest {
  try {
    const manifest = JSON.parse(readFileSync(MANIFEST, "utf8")) as Manifest;
    if (manifest.version === GENERATOR_VERSION) return manifest;
  } catch {
    // missing or damaged: regenerate
  }
  return { version: GENERATOR_VERSION };
}

function writeManifest(manifest: Manifest): void {
  mkdirSync(DATA_DIR, { recursive: true });
  writeFileSync(MANIFEST, JSON.stringify(manifest, null, 2));
}

function sizeOf(path: string): number {
  try {
    return statSync(path).size;
  } catch {
    return -1;
  }
}

function log(message: string): void {
  process.stderr.write(`[bench data] ${message}\n`);
}

/**
 * Writes one session with pi's SessionManager until the file reaches `targetBytes`: turns of
 * user → (assistant toolCall → toolResult)* → assistant, with model and thinking-level changes,
 * compactions, branches, a branch summary, labels, a session name and custom entries.
 */
function writePiSession(sessionDir: string, cwd: string, seed: number, targetBytes: number, word?: WordSource, startMs?: number): string {
  const pi = PiSessionManager.create(cwd, sessionDir);
  const factory = new MessageFactory(seed, SESSION_SIZES, startMs, word);
  const random = factory.random;
  pi.appendModelChange("anthropic", "claude-sonnet-4-5");
  pi.appendThinkingLevelChange("medium");
  // Turn starts (user messages) and ends (final answers) on the current branch.
  const turnStarts: string[] = [];
  const turnEnds: string[] = [];
  let path = "";
  for (let turn = 1; sizeOf(path) < targetBytes; turn++) {
    if (turn % 53 === 0 && turnEnds.length > 4) {
      // Abandon the last two turns and retry from the end of an earlier one.
      const keep = turnEnds.length - 2;
      pi.branch(turnEnds[keep - 1]!);
      turnStarts.length = keep;
      turnEnds.length = keep;
    }
    if (turn % 97 === 0 && turnEnds.length > 3) {
      const keep = turnEnds.length - 1;
      pi.branchWithSummary(turnEnds[keep - 1]!, factory.summary());
      turnStarts.length = keep;
      turnEnds.length = keep;
    }
    if (turn % 45 === 0) {
      const model = factory.switchModel();
      pi.appendModelChange(model.provider, model.model);
    }
    if (turn % 70 === 0) {
      pi.appendThinkingLevelChange(["low", "medium", "high"][turn % 3]!);
    }
    if (turn % 40 === 0 && turnStarts.length > 4) {
      pi.appendCompaction(factory.summary(), turnStarts[turnStarts.length - 4]!, 100_000 + Math.floor(random() * 80_000));
    }
    turnStarts.push(pi.appendMessage(factory.user() as unknown as PiMessage));
    const steps = 1 + Math.floor(random() * 6);
    for (let step = 0; step < steps; step++) {
      const { message, toolCall } = factory.assistant(false);
      pi.appendMessage(message as unknown as PiMessage);
      pi.appendMessage(factory.toolResult(toolCall!) as unknown as PiMessage);
    }
    turnEnds.push(pi.appendMessage(factory.assistant(true).message as unknown as PiMessage));
    if (turn === 3) {
      pi.appendSessionInfo("bench: refactor the session reader");
    }
    if (turn % 31 === 0) {
      pi.appendLabelChange(turnStarts[turnStarts.length - 1]!, `checkpoint-${turn}`);
    }
    if (turn % 20 === 0) {
      pi.appendCustomEntry("bench-extension", { turn, note: "state saved by an extension" });
    }
    path = pi.getSessionFile()!;
  }
  return path;
}

/** The ~50 MB session for the open benchmark. Returns its absolute path. */
export function ensureOpenSession(): { path: string; size: number } {
  const manifest = readManifest();
  if (manifest.open && sizeOf(manifest.open.path) === manifest.open.size) return manifest.open;
  rmSync(OPEN_ROOT, { recursive: true, force: true });
  log(`writing a ~${OPEN_TARGET_BYTES / 1e6} MB session with pi's SessionManager …`);
  const dir = join(OPEN_ROOT, "sessions", "--bench-open-project--");
  const path = writePiSession(dir, OPEN_CWD, 1, OPEN_TARGET_BYTES);
  const open = { path, size: sizeOf(path) };
  writeManifest({ ...readManifest(), open });
  return open;
}

function listFiles(): { files: number; bytes: number } {
  const dir = join(LIST_ROOT, LIST_SESSION_DIR);
  if (!existsSync(dir)) return { files: 0, bytes: 0 };
  const names = readdirSync(dir).filter((name) => name.endsWith(".jsonl"));
  return { files: names.length, bytes: names.reduce((sum, name) => sum + statSync(join(dir, name)).size, 0) };
}

/** 300 sessions (~1 GB) in one project dir: copies of 10 pi-written bases with fresh headers. */
export function ensureListSessions(): { files: number; bytes: number } {
  const manifest = readManifest();
  const present = listFiles();
  if (manifest.list && manifest.list.files === present.files && manifest.list.bytes === present.bytes) return present;
  rmSync(LIST_ROOT, { recursive: true, force: true });
  const basesDir = join(SCRATCH_DIR, "list-bases");
  rmSync(basesDir, { recursive: true, force: true });
  log(`writing ${LIST_BASE_BYTES.length} base sessions with pi, then ${LIST_SESSIONS} copies with fresh headers (~1 GB) …`);
  const bases = LIST_BASE_BYTES.map((bytes, i) => {
    const path = writePiSession(basesDir, LIST_CWD, 100 + i, bytes);
    const content = readFileSync(path);
    const firstNewline = content.indexOf(0x0a);
    return { header: JSON.parse(content.subarray(0, firstNewline).toString("utf8")) as Record<string, unknown>, body: content.subarray(firstNewline + 1) };
  });
  rmSync(basesDir, { recursive: true, force: true });
  const dir = join(LIST_ROOT, LIST_SESSION_DIR);
  mkdirSync(dir, { recursive: true });
  const start = Date.UTC(2026, 1, 1, 8, 0, 0);
  for (let i = 0; i < LIST_SESSIONS; i++) {
    const base = bases[i % bases.length]!;
    const created = new Date(start + i * 7 * 60_000);
    const timestamp = created.toISOString();
    const header = { ...base.header, id: uuidV7(created.getTime()), timestamp, cwd: LIST_CWD };
    const file = join(dir, `${timestamp.replace(/[:.]/g, "-")}_${header.id}.jsonl`);
    writeFileSync(file, Buffer.concat([Buffer.from(JSON.stringify(header) + "\n"), base.body]));
    utimesSync(file, created, created);
  }
  const list = listFiles();
  writeManifest({ ...readManifest(), list });
  return list;
}

export const SEARCH_ROOT = join(DATA_DIR, "search");
const SEARCH_PROJECTS = 10;
const SEARCH_SESSIONS_PER_PROJECT = 30;
/** Session sizes (bytes), cycled: ~1.45 MB on average, 300 sessions ≈ 436 MB (issue #9's store). */
const SEARCH_SESSION_BYTES = [0.4e6, 0.6e6, 0.8e6, 1.0e6, 1.2e6, 1.5e6, 1.8e6, 2.2e6, 2.6e6, 2.4e6];

function searchProjectCwd(project: number): string {
  return `/bench/search-${project}`;
}

/** Session files and their bytes in a store's `sessions/<project>/` dirs. */
function storeFiles(root: string): { files: number; bytes: number } {
  const sessions = join(root, "sessions");
  if (!existsSync(sessions)) return { files: 0, bytes: 0 };
  let files = 0;
  let bytes = 0;
  for (const dir of readdirSync(sessions)) {
    for (const name of readdirSync(join(sessions, dir))) {
      if (!name.endsWith(".jsonl")) continue;
      files++;
      bytes += statSync(join(sessions, dir, name)).size;
    }
  }
  return { files, bytes };
}

/**
 * The search store: 300 sessions in 10 projects (~436 MB), every one written by pi's
 * SessionManager with its own seed, so each has its own text (a search index over copies would
 * flatter every index).
 */
export function ensureSearchStore(): { files: number; bytes: number } {
  const manifest = readManifest();
  const present = storeFiles(SEARCH_ROOT);
  if (manifest.search && manifest.search.files === present.files && manifest.search.bytes === present.bytes) return present;
  rmSync(SEARCH_ROOT, { recursive: true, force: true });
  log(`writing ${SEARCH_PROJECTS * SEARCH_SESSIONS_PER_PROJECT} sessions in ${SEARCH_PROJECTS} projects with pi (~436 MB) …`);
  const word = zipfWords(50_000, 9);
  const start = Date.UTC(2026, 2, 1, 8, 0, 0);
  for (let project = 0; project < SEARCH_PROJECTS; project++) {
    const cwd = searchProjectCwd(project);
    const dir = join(SEARCH_ROOT, "sessions", `--${cwd.slice(1).replace(/\//g, "-")}--`);
    for (let i = 0; i < SEARCH_SESSIONS_PER_PROJECT; i++) {
      const n = project * SEARCH_SESSIONS_PER_PROJECT + i;
      writePiSession(dir, cwd, 1000 + n, SEARCH_SESSION_BYTES[n % SEARCH_SESSION_BYTES.length]!, word, start + n * 3_600_000);
    }
    log(`  project ${project + 1}/${SEARCH_PROJECTS} written`);
  }
  const search = storeFiles(SEARCH_ROOT);
  writeManifest({ ...readManifest(), search });
  return search;
}

/**
 * A ~1 GiB session: the entries of the pi-written open session repeated with fresh ids, each
 * copy's roots chained to the previous copy's last entry so the whole file is one tree.
 */
export function ensureHugeSession(): { path: string; size: number } {
  const manifest = readManifest();
  if (manifest.huge && sizeOf(manifest.huge.path) === manifest.huge.size) return manifest.huge;
  const source = ensureOpenSession();
  rmSync(HUGE_ROOT, { recursive: true, force: true });
  log(`writing a ~${(HUGE_TARGET_BYTES / 2 ** 30).toFixed(0)} GiB session from pi-written entries with fresh ids …`);
  const lines = readFileSync(source.path, "utf8").split("\n").filter((line) => line !== "");
  const records = lines.map((line) => JSON.parse(line) as Record<string, unknown>);
  const created = new Date();
  const timestamp = created.toISOString();
  const header = { ...records[0], id: uuidV7(created.getTime()), timestamp, cwd: HUGE_CWD };
  const dir = join(HUGE_ROOT, "sessions", "--bench-huge-project--");
  mkdirSync(dir, { recursive: true });
  const path = join(dir, `${timestamp.replace(/[:.]/g, "-")}_${header.id}.jsonl`);
  const fd = openSync(path, "w");
  let size = 0;
  let nextId = Math.floor(Math.random() * 2 ** 31);
  let previousLast: string | null = null;
  try {
    size += writeSync(fd, JSON.stringify(header) + "\n");
    while (size < HUGE_TARGET_BYTES) {
      const ids = new Map<string, string>();
      const fresh = (old: string) => {
        let id = ids.get(old);
        if (!id) {
          id = (nextId++ >>> 0).toString(16).padStart(8, "0");
          ids.set(old, id);
        }
        return id;
      };
      let chunk = "";
      for (const record of records.slice(1)) {
        const copy: Record<string, unknown> = { ...record, id: fresh(record.id as string) };
        copy.parentId = record.parentId === null ? previousLast : fresh(record.parentId as string);
        if (typeof record.firstKeptEntryId === "string") copy.firstKeptEntryId = fresh(record.firstKeptEntryId);
        if (typeof record.targetId === "string") copy.targetId = fresh(record.targetId);
        if (typeof record.fromId === "string" && record.fromId !== "root") copy.fromId = fresh(record.fromId);
        chunk += JSON.stringify(copy) + "\n";
        if (chunk.length > 8_000_000) {
          size += writeSync(fd, chunk);
          chunk = "";
        }
      }
      size += writeSync(fd, chunk);
      previousLast = ids.get(records[records.length - 1]!.id as string)!;
    }
  } finally {
    closeSync(fd);
  }
  const huge = { path, size: sizeOf(path) };
  writeManifest({ ...readManifest(), huge });
  return huge;
}

export function removeHugeSession(): void {
  rmSync(HUGE_ROOT, { recursive: true, force: true });
  const { huge: _removed, ...rest } = readManifest();
  writeManifest(rest);
}

const TOOL_TURNS_ROOT = join(DATA_DIR, "tool-turns");
const TOOL_TURNS_OPEN_ROOT = join(TOOL_TURNS_ROOT, "open");
export const TOOL_TURNS_STORE_ROOT = join(TOOL_TURNS_ROOT, "store");
const TOOL_TURNS_OPEN_BYTES = 51_000_000;
const TOOL_TURNS_PROJECTS = 10;
const TOOL_TURNS_SESSIONS_PER_PROJECT = 30;
/** Session sizes (bytes), cycled; each ends with its last turn past the size (~75 kB more): 300 sessions ≈ 244 MB (issue 26's store). */
const TOOL_TURNS_STORE_BYTES = [0.03e6, 0.13e6, 0.23e6, 0.43e6, 0.63e6, 0.83e6, 1.03e6, 1.23e6, 1.43e6, 1.48e6];
/** Entries between two compactions, as pi's auto-compaction cuts a long agent run. */
const COMPACTION_EVERY = 500;

/** Tool rounds (an assistant message with its tool results) up to this size: the corpus's median is 2 kB; its few subagent rounds of 100–640 kB are another shape. */
const MAX_ROUND_BYTES = 100_000;
let turnsPool: CorpusTurns | undefined;

function toolTurnsProjectCwd(project: number): string {
  return `/bench/tool-turns-${project}`;
}

/**
 * Writes one session in the shape of users' sessions with pi's SessionManager until the file
 * reaches `targetBytes`: user prompts each followed by 2–40 tool rounds and a final answer, on one
 * branch, with a compaction every 500 entries that keeps the last 20, and now and then a model
 * change. Every message is a real one from test/fixtures/corpus (bench/lib/corpus-turns.ts), drawn
 * with a seeded random.
 */
function writeToolTurnSession(sessionDir: string, cwd: string, seed: number, targetBytes: number): string {
  const pool = (turnsPool ??= corpusTurns(MAX_ROUND_BYTES));
  const pi = PiSessionManager.create(cwd, sessionDir);
  const factory = new MessageFactory(seed, SESSION_SIZES);
  const random = factory.random;
  const draw = <T>(items: readonly T[]): T => items[Math.floor(random() * items.length)]!;
  pi.appendModelChange("anthropic", "claude-sonnet-4-5");
  pi.appendThinkingLevelChange("medium");
  let sinceCompaction = 2;
  const recent: string[] = [];
  const appended = (id: string) => {
    sinceCompaction++;
    recent.push(id);
    if (recent.length > 20) recent.shift();
  };
  let path = "";
  for (let turn = 1; sizeOf(path) < targetBytes; turn++) {
    if (turn % 60 === 0) {
      const model = factory.switchModel();
      appended(pi.appendModelChange(model.provider, model.model));
    }
    appended(pi.appendMessage(draw(pool.users) as unknown as PiMessage));
    const rounds = 2 + Math.floor(random() * 39);
    for (let round = 0; round < rounds; round++) {
      for (const message of draw(pool.rounds)) appended(pi.appendMessage(message as unknown as PiMessage));
      if (sinceCompaction >= COMPACTION_EVERY) {
        appended(pi.appendCompaction(factory.summary(), recent[0]!, 100_000 + Math.floor(random() * 80_000)));
        sinceCompaction = 0;
      }
    }
    appended(pi.appendMessage(draw(pool.answers) as unknown as PiMessage));
    if (turn === 2) pi.appendSessionInfo(`tool turns ${seed}`);
    path = pi.getSessionFile()!;
  }
  return path;
}

/** The ~51 MB session of many small tool turns (issue 26). */
export function ensureToolTurnsSession(): { path: string; size: number } {
  const manifest = readManifest();
  if (manifest.toolTurnsOpen && sizeOf(manifest.toolTurnsOpen.path) === manifest.toolTurnsOpen.size) return manifest.toolTurnsOpen;
  rmSync(TOOL_TURNS_OPEN_ROOT, { recursive: true, force: true });
  log(`writing a ~${TOOL_TURNS_OPEN_BYTES / 1e6} MB session of small tool turns with pi's SessionManager …`);
  const path = writeToolTurnSession(join(TOOL_TURNS_OPEN_ROOT, "sessions", "--bench-tool-turns-open--"), "/bench/tool-turns-open", 7, TOOL_TURNS_OPEN_BYTES);
  const toolTurnsOpen = { path, size: sizeOf(path) };
  writeManifest({ ...readManifest(), toolTurnsOpen });
  return toolTurnsOpen;
}

/** The store of 300 such sessions in 10 projects (~244 MB), each written by pi with its own seed. */
export function ensureToolTurnsStore(): { files: number; bytes: number } {
  const manifest = readManifest();
  const present = storeFiles(TOOL_TURNS_STORE_ROOT);
  if (manifest.toolTurnsStore && manifest.toolTurnsStore.files === present.files && manifest.toolTurnsStore.bytes === present.bytes) return present;
  rmSync(TOOL_TURNS_STORE_ROOT, { recursive: true, force: true });
  log(`writing ${TOOL_TURNS_PROJECTS * TOOL_TURNS_SESSIONS_PER_PROJECT} sessions of small tool turns in ${TOOL_TURNS_PROJECTS} projects with pi (~244 MB) …`);
  for (let project = 0; project < TOOL_TURNS_PROJECTS; project++) {
    const cwd = toolTurnsProjectCwd(project);
    const dir = join(TOOL_TURNS_STORE_ROOT, "sessions", `--${cwd.slice(1).replace(/\//g, "-")}--`);
    for (let i = 0; i < TOOL_TURNS_SESSIONS_PER_PROJECT; i++) {
      const n = project * TOOL_TURNS_SESSIONS_PER_PROJECT + i;
      writeToolTurnSession(dir, cwd, 5000 + n, TOOL_TURNS_STORE_BYTES[n % TOOL_TURNS_STORE_BYTES.length]!);
    }
  }
  const toolTurnsStore = storeFiles(TOOL_TURNS_STORE_ROOT);
  writeManifest({ ...readManifest(), toolTurnsStore });
  return toolTurnsStore;
}

/** A UUIDv7 for a given time, as newer pi writes session ids. */
function uuidV7(ms: number): string {
  const hex = ms.toString(16).padStart(12, "0");
  const random = randomUUID().replace(/-/g, "");
  return `${hex.slice(0, 8)}-${hex.slice(8, 12)}-7${random.slice(13, 16)}-${((parseInt(random[16]!, 16) & 0x3) | 0x8).toString(16)}${random.slice(17, 20)}-${random.slice(20, 32)}`;
}
