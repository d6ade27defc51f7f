/**
 * `sessionkit sync`: copies this machine's agent stores into a shared store (a PostgreSQL
 * database or a directory), each to `machines/<machine>/<store>/` there (machine-stores.ts), and
 * with --watch keeps doing so as the agents write. The copying is src/sync/mirror.ts; here are
 * the stores, the state kept between runs (in the user's cache directory), the lock that keeps
 * two syncs of one machine apart, the watch and what is printed.
 */
import { createHash } from "node:crypto";
import { mkdir, readFile, realpath, rename, writeFile } from "node:fs/promises";
import os from "node:os";
import nodePath from "node:path";
import { nodeFsStorage } from "../adapters/node-fs/index.js";
import { readOnlyStorage } from "../adapters/read-only.js";
import { subtreeStorage } from "../adapters/subtree.js";
import { isStorageError, type StorageLock, type StoragePort, type StorageWatch } from "../src/port.js";
import { SESSIONS_DIR } from "../src/session/paths.js";
import { emptyMirrorState, isSessionFilePath, mirrorSessions, type MirrorCounts, type MirrorState } from "../src/sync/mirror.js";
import { discoverAgentStores, type AgentStore } from "./agent-stores.js";
import type { ClosableStorage } from "./database-store.js";
import { CliError } from "./errors.js";
import { isMachineName, machineDir, machineStoreDir, sharedStoreName } from "./machine-stores.js";
import { syncProgress } from "./progress.js";
import type { SyncArgs } from "./commands/sync.js";
import type { Run } from "./run.js";
import { databaseStore, resolveRoot } from "./store.js";
import { cacheRoot } from "./cache-root.js";
import { openStorePort } from "./store-port.js";
import { untilInterrupted } from "./interrupt.js";

/** A watch's changes are gathered this long before a pass copies them. */
const DEBOUNCE_MS = 100;
/** With --watch, a full pass this often besides (a change a watch missed is copied then). */
const FULL_PASS_MS = 60_000;
/** With --watch, after a failed pass (the shared store unreachable): the first wait, doubled up to the last. */
const RETRY_MS = [1_000, 30_000] as const;
/** The state is saved at most this often during a pass (and always at its end). */
const SAVE_EVERY_MS = 1_000;

export async function syncCommand(run: Run<SyncArgs>): Promise<number> {
  const started = performance.now();
  const machine = run.args.machine ?? hostMachineName();
  const target = sharedStore(run);
  const stores = await storesToSync(run, target, machine);
  const totals = zeroCounts();
  const add = (counts: MirrorCounts) => {
    for (const key of Object.keys(totals) as (keyof MirrorCounts)[]) if (key !== "sessions") totals[key] += counts[key];
  };
  let connection = await connect(target, machine);
  try {
    // Each pass's `sessions` is what it looked at; the summary's, every session of the stores.
    const first = await passOver(run, stores, connection);
    add(first);
    totals.sessions = first.sessions;
    if (run.args.watch) {
      await watchAndSync(run, stores, {
        connection: () => connection,
        reconnect: async () => {
          await connection.close().catch(() => {});
          connection = await connect(target, machine);
        },
        counted: (counts, full) => {
          add(counts);
          if (full) totals.sessions = counts.sessions;
        },
      });
    }
  } finally {
    await connection.close().catch(() => {});
    for (const store of stores) await store.source.close?.();
  }
  const seconds = (performance.now() - started) / 1000;
  run.print({ machine, target: target.name, stores: stores.map((store) => ({ agent: store.agent.agent, source: store.agent.root, dir: store.dir })), ...totals, seconds }, () => [summaryLine(totals, seconds)]);
  return 0;
}

/** "synced 300 sessions (300 new, 0 appended, 0 rewritten), 52.3 MB in 4.1 s" (and what was removed, and blobs, when any). */
function summaryLine(counts: MirrorCounts, seconds: number): string {
  const more = [counts.removed > 0 ? `${counts.removed} removed` : "", counts.blobs > 0 ? `${counts.blobs} blob${counts.blobs === 1 ? "" : "s"}` : ""].filter(Boolean);
  const sessions = `${counts.sessions} session${counts.sessions === 1 ? "" : "s"}`;
  return `synced ${sessions} (${counts.created} new, ${counts.appended} appended, ${counts.rewritten} rewritten${more.length ? `; ${more.join(", ")}` : ""}), ${mb(counts.bytes + counts.blobBytes)} MB in ${seconds.toFixed(1)} s`;
}

const mb = (bytes: number) => (bytes / 1e6).toFixed(1);

function zeroCounts(): MirrorCounts {
  return { sessions: 0, created: 0, appended: 0, rewritten: 0, removed: 0, bytes: 0, entries: 0, blobs: 0, blobBytes: 0 };
}

/** The host name as a machine's name: whole, else its first label; refused when neither is a safe path segment. */
function hostMachineName(): string {
  const host = os.hostname();
  for (const name of [host, host.split(".")[0]!]) if (isMachineName(name)) return name;
  throw new CliError("usage", `the host name ${JSON.stringify(host)} cannot name this machine in the shared store: give a name with --as NAME`);
}

/** The shared store: a database (--to URL, --store URL) or a directory (--to DIR, --root DIR). */
interface SharedStore {
  /** For messages and the state's key: the URL without its password, or the directory. */
  name: string;
  /** The directory, for a directory store. */
  dir: string | undefined;
  open(): Promise<ClosableStorage>;
}

function sharedStore(run: Run<SyncArgs>): SharedStore {
  const given = run.args.to ?? run.args.store ?? run.args.root!;
  if (/^postgres(ql)?:\/\//.test(given)) {
    const database = databaseStore(given);
    return { name: database.root, dir: undefined, open: () => database.database.open() };
  }
  const dir = resolveRoot(given, run.io.cwd, run.io.env);
  return {
    name: dir,
    dir,
    async open() {
      await mkdir(dir, { recursive: true });
      return nodeFsStorage({ root: dir });
    },
  };
}

/** An agent store to copy: where it is read, where it goes, and where its state is kept. */
interface SyncedStore {
  agent: AgentStore;
  /** Its directory in the shared store. */
  dir: string;
  /** "<machine>/<store>", for messages. */
  label: string;
  source: StoragePort;
  /** What the passes so far left (this process alone changes it: it holds the machine's lock). */
  state: MirrorState;
  stateFile: StateFile;
}

async function storesToSync(run: Run<SyncArgs>, target: SharedStore, machine: string): Promise<SyncedStore[]> {
  const found = await discoverAgentStores({ home: run.home, env: run.io.env });
  const chosen = run.args.agent === undefined ? found : found.filter((store) => store.agent === run.args.agent);
  if (chosen.length === 0) throw new CliError("not-found", run.args.agent === undefined ? "no agent store found on this machine (looked for pi, omp, xcsh, indusagi, operator)" : `no store of ${run.args.agent} found on this machine`);
  const targetDir = target.dir === undefined ? undefined : await realpath(target.dir).catch(() => target.dir!);
  const stores: SyncedStore[] = [];
  for (const agent of chosen) {
    const real = await realpath(agent.root);
    // The copies must never land in an agent's folder.
    if (targetDir !== undefined && isAtOrBelow(targetDir, real)) throw new CliError("usage", `${target.name} is inside ${agent.label}: sync never writes into an agent's folder, give another --to`);
    const name = sharedStoreName(agent);
    if (name === null) {
      run.warn(`${agent.label}: left out, its profile's name cannot name a folder in the shared store`);
      continue;
    }
    const key = createHash("sha256").update(`${target.name}\0${machine}\0${real}`).digest("hex").slice(0, 12);
    const stateFile = new StateFile(nodePath.join(cacheRoot(run.io.env, run.home), "sync", `${machine}-${name}-${key}.json`));
    stores.push({
      agent,
      dir: machineStoreDir(machine, name),
      label: `${machine}/${name}`,
      // Only read: no lock, no file of ours, nothing written in the agent's folder.
      source: readOnlyStorage(await openStorePort(agent.root)),
      state: await stateFile.load(),
      stateFile,
    });
  }
  return stores;
}

function isAtOrBelow(path: string, dir: string): boolean {
  const relative = nodePath.relative(dir, path);
  return relative === "" || (!relative.startsWith("..") && !nodePath.isAbsolute(relative));
}

/** The shared store opened, with this machine's sync lock held. */
interface Connection {
  port: StoragePort;
  close(): Promise<void>;
}

/** Opens the shared store and takes the machine's sync lock (two syncs of one machine would append the same bytes twice). */
async function connect(target: SharedStore, machine: string): Promise<Connection> {
  const port = await target.open();
  let lock: StorageLock | undefined;
  try {
    lock = await port.acquireLock?.(`${machineDir(machine)}/sync`);
  } catch (error) {
    await port.close().catch(() => {});
    if (isStorageError(error, "locked")) throw new CliError("failed", `another sessionkit sync of ${machine} into ${target.name} is running (${error.message}); or give this machine another name with --as`);
    throw error;
  }
  return {
    port,
    async close() {
      await lock?.release().catch(() => {});
      await port.close();
    },
  };
}

/** One pass over every store (or, with `paths`, over those files of each store); the counts summed. */
async function passOver(run: Run<SyncArgs>, stores: readonly SyncedStore[], connection: Connection, paths?: ReadonlyMap<SyncedStore, readonly string[]>): Promise<MirrorCounts> {
  const sum = zeroCounts();
  for (const store of stores) {
    const only = paths?.get(store);
    if (paths && !only) continue;
    const { state, stateFile } = store;
    const progress = syncProgress(run.io.stderr, `sessionkit: sync: ${store.label}`);
    let counts: MirrorCounts;
    try {
      counts = await mirrorSessions(store.source, subtreeStorage(connection.port, store.dir), {
        state,
        ...(only ? { paths: only } : {}),
        onProgress: progress.onProgress,
        onStateChange: () => stateFile.saveSoon(state),
        onWarning: (message) => run.warn(`${store.label}: ${message}`),
      });
    } finally {
      progress.done();
      await stateFile.save(state);
    }
    for (const key of Object.keys(sum) as (keyof MirrorCounts)[]) sum[key] += counts[key];
  }
  return sum;
}

interface WatchHooks {
  connection(): Connection;
  /** Opens the shared store again (after a failed pass). */
  reconnect(): Promise<void>;
  /** A pass's counts (`full`: a pass over every file). */
  counted(counts: MirrorCounts, full: boolean): void;
}

/**
 * Watches every store's `sessions/` and copies what changed, a short while after it changed,
 * until SIGINT or SIGTERM, then makes a last pass over every file. A pass that fails (the shared
 * store unreachable) is said on stderr and tried again, as a full pass over a new connection,
 * after a wait that doubles up to 30 s.
 */
async function watchAndSync(run: Run<SyncArgs>, stores: readonly SyncedStore[], hooks: WatchHooks): Promise<void> {
  /** Per store, the session files that changed; a store in `full` gets a pass over every file. */
  const changed = new Map<SyncedStore, Set<string>>();
  const full = new Set<SyncedStore>();
  let timer: ReturnType<typeof setTimeout> | undefined;
  let running: Promise<void> = Promise.resolve();
  let failures = 0;
  let stopping = false;
  let broken = false;

  const schedule = (delay: number) => {
    if (timer !== undefined || stopping) return;
    timer = setTimeout(() => {
      timer = undefined;
      running = running.then(() => pass());
    }, delay);
  };
  /** Copies what changed; `last`: the pass after Ctrl+C, over every file, not tried again. */
  const pass = async (last = false) => {
    if (stopping && !last) return;
    const paths = new Map([...changed].filter(([store]) => !full.has(store)).map(([store, set]) => [store, [...set]] as const));
    const fullStores = [...full];
    changed.clear();
    full.clear();
    try {
      if (broken) {
        await hooks.reconnect();
        broken = false;
      }
      if (fullStores.length > 0) reportPass(run, await passOver(run, fullStores, hooks.connection()), fullStores.length === stores.length, hooks);
      if (paths.size > 0) reportPass(run, await passOver(run, stores, hooks.connection(), paths), false, hooks);
      failures = 0;
    } catch (error) {
      if (last) return run.warn(`the last pass failed: ${error instanceof Error ? error.message : String(error)}`);
      // Copied again in full once the shared store answers: nothing that changed is lost.
      for (const store of [...fullStores, ...paths.keys()]) full.add(store);
      broken = true;
      const wait = Math.min(RETRY_MS[0] * 2 ** failures++, RETRY_MS[1]);
      run.warn(`${error instanceof Error ? error.message : String(error)}; trying again in ${wait / 1000} s`);
      schedule(wait);
    }
  };
  const onChange = (store: SyncedStore) => (path: string) => {
    if (isSessionFilePath(path)) {
      const set = changed.get(store) ?? new Set<string>();
      set.add(path);
      changed.set(store, set);
    } else if (path === "" || path === SESSIONS_DIR || path.startsWith(`${SESSIONS_DIR}/`)) {
      // A directory (a new project's, or an overflow): its files are found by listing.
      full.add(store);
    } else {
      return; // the agent's other files
    }
    schedule(DEBOUNCE_MS);
  };

  const watches: StorageWatch[] = [];
  const stopped = untilInterrupted();
  try {
    for (const store of stores) {
      // sessions/ when it is there; else the store's folder, where sessions/ will appear.
      const hasSessions = (await store.source.list("")).some((entry) => entry.kind === "dir" && entry.name === SESSIONS_DIR);
      watches.push(await store.source.watch!(hasSessions ? SESSIONS_DIR : "", onChange(store)));
    }
    const everyStore = setInterval(() => {
      for (const store of stores) full.add(store);
      schedule(0);
    }, FULL_PASS_MS);
    run.io.stderr.write(`sessionkit: sync: watching ${stores.map((store) => store.agent.label).join(", ")} (Ctrl+C stops)\n`);
    await stopped;
    clearInterval(everyStore);
  } finally {
    stopping = true;
    clearTimeout(timer);
    await Promise.all(watches.map((watch) => watch.close()));
    await running;
  }
  // What changed since the last pass, and the count of sessions for the summary.
  for (const store of stores) full.add(store);
  await pass(true);
}

/** A watch pass's line on stderr, when it copied anything. */
function reportPass(run: Run<SyncArgs>, counts: MirrorCounts, full: boolean, hooks: WatchHooks): void {
  hooks.counted(counts, full);
  const parts = [
    counts.created > 0 ? `${counts.created} new` : "",
    counts.appended > 0 ? `${counts.appended} appended` : "",
    counts.rewritten > 0 ? `${counts.rewritten} rewritten` : "",
    counts.removed > 0 ? `${counts.removed} removed` : "",
  ].filter(Boolean);
  if (parts.length > 0) run.io.stderr.write(`sessionkit: sync: ${parts.join(", ")} (${counts.entries} entries, ${mb(counts.bytes + counts.blobBytes)} MB)\n`);
}

/**
 * The state of one agent store's copy (src/sync/mirror.ts MirrorState), as JSON in the user's
 * cache directory. Written whole to a temp file and renamed over the last one, so a kill leaves
 * the old state or the new; either is safe, as a pass checks the target's bytes itself.
 */
class StateFile {
  private lastSave = 0;

  constructor(private readonly path: string) {}

  async load(): Promise<MirrorState> {
    try {
      const parsed = JSON.parse(await readFile(this.path, "utf8")) as Partial<MirrorState>;
      if (typeof parsed.files === "object" && parsed.files !== null && Array.isArray(parsed.missingBlobs)) return parsed as MirrorState;
    } catch {
      // missing or damaged: the next pass compares every file with the target
    }
    return emptyMirrorState();
  }

  /** Saves when the last save is a while ago. */
  saveSoon(state: MirrorState): void {
    if (performance.now() - this.lastSave < SAVE_EVERY_MS) return;
    this.lastSave = performance.now();
    void this.save(state).catch(() => {});
  }

  private saving: Promise<void> = Promise.resolve();

  /** Saves now (after any save under way). */
  save(state: MirrorState): Promise<void> {
    const text = JSON.stringify(state);
    this.saving = this.saving.catch(() => {}).then(async () => {
      await mkdir(nodePath.dirname(this.path), { recursive: true });
      const temp = `${this.path}.${process.pid}.tmp`;
      await writeFile(temp, text);
      await rename(temp, this.path);
    });
    return this.saving;
  }
}
