/**
 * The browser crash soak: Debian's Chromium runs headless on a persistent profile (a temp dir),
 * started by us so that its whole process group (browser, renderer, storage and GPU processes) can
 * be killed with SIGKILL. The page (./page, served by Vite) appends to a session on IndexedDB and
 * one on OPFS (through its worker), logging the ids each `flush()` acknowledged; after a random
 * 50–1500 ms the browser is killed, relaunched on the same profile and origin, and the page reads
 * both sessions back: every acknowledged entry must be there, the entries seen before must lead
 * each session, and nothing but a torn last line may be reported. Then the page appends again to
 * the same sessions (repairing a torn tail), until the next kill. Sessions rotate every
 * KILLS_PER_SESSION kills (the old ones are removed), so each stays small.
 *
 * Between a kill and the relaunch, a torn record at the end of a LevelDB log of IndexedDB's (or of
 * OPFS's directory) is cut back (./leveldb-log.ts): Chromium would append after it and, at the
 * following launch, delete the origin's whole database as corrupt, with every entry in it.
 * `trimTornLogs: false` leaves them, to see that happen; Chromium's report of it (`dataLoss`) is a
 * problem either way.
 */
import { spawn, type ChildProcess } from "node:child_process";
import { mkdtemp, rm } from "node:fs/promises";
import { tmpdir } from "node:os";
import { dirname, join } from "node:path";
import { fileURLToPath } from "node:url";
import { chromium, type Browser, type Page } from "playwright";
import { createServer } from "vite";
import { chromiumArgs, chromiumExecutable } from "../../chromium.config.js";
import { mulberry32 } from "../../test/shared/prng.js";
import { trimTornLogTails } from "./leveldb-log.js";
import type { Backend, Paths, ReadBack } from "./page/main.js";
import type { SoakResult } from "./result.js";

const HERE = dirname(fileURLToPath(import.meta.url));
const PROJECT = join(HERE, "..", "..");
const BACKENDS: readonly Backend[] = ["indexeddb", "opfs"];
const KILLS_PER_SESSION = 10;
/** Where the profile keeps the LevelDBs of the storage under test: IndexedDB's, and OPFS's directory. */
const STORAGE_LEVELDBS = ["IndexedDB", "File System"];
const LAUNCH_TIMEOUT_MS = 60_000;
/** A page call that takes longer than this is stuck: the soak reports it and stops. */
const CALL_TIMEOUT_MS = 120_000;

/** A page call, failing with `step` named after CALL_TIMEOUT_MS. */
async function call<T>(step: string, work: Promise<T>): Promise<T> {
  let timer: NodeJS.Timeout | undefined;
  const stuck = new Promise<never>((_, reject) => {
    timer = setTimeout(() => reject(new Error(`${step}: no answer from the page within ${CALL_TIMEOUT_MS} ms`)), CALL_TIMEOUT_MS);
  });
  try {
    return await Promise.race([work, stuck]);
  } finally {
    clearTimeout(timer);
  }
}

interface Running {
  process: ChildProcess;
  browser: Browser;
  page: Page;
  /** Ids acknowledged by flushes since the page started appending, per backend. */
  acked: Record<Backend, string[]>;
  errors: string[];
  /** What Chromium reported lost when the page opened its IndexedDB (it deletes a database it finds corrupt). */
  dataLoss: string[];
}

/** Starts Chromium on `profile` in a process group of its own, connects over CDP and opens `url`. */
async function launch(profile: string, url: string): Promise<Running> {
  const child = spawn(chromiumExecutable, [...chromiumArgs, "--headless", `--user-data-dir=${profile}`, "--remote-debugging-port=0", "about:blank"], {
    detached: true,
    stdio: ["ignore", "ignore", "pipe"],
  });
  const endpoint = await new Promise<string>((resolve, reject) => {
    let output = "";
    const timer = setTimeout(() => reject(new Error(`Chromium did not start within ${LAUNCH_TIMEOUT_MS} ms: ${output.slice(-500)}`)), LAUNCH_TIMEOUT_MS);
    child.stderr!.setEncoding("utf8");
    child.stderr!.on("data", (chunk: string) => {
      output += chunk;
      const match = /DevTools listening on (ws:\/\/\S+)/.exec(output);
      if (match) {
        clearTimeout(timer);
        resolve(match[1]!);
      }
    });
    child.on("exit", (code, signal) => reject(new Error(`Chromium exited at start (${code ?? signal}): ${output.slice(-500)}`)));
  });
  child.stderr!.resume(); // keep draining: a full pipe would block Chromium
  const browser = await chromium.connectOverCDP(endpoint);
  const context = browser.contexts()[0]!;
  const page = context.pages()[0] ?? (await context.newPage());
  const running: Running = { process: child, browser, page, acked: { indexeddb: [], opfs: [] }, errors: [], dataLoss: [] };
  page.on("console", (message) => {
    const text = message.text();
    const ack = /^ack (indexeddb|opfs) (.+)$/.exec(text);
    if (ack) running.acked[ack[1] as Backend].push(...ack[2]!.split(","));
    else if (text.startsWith("error ")) running.errors.push(text);
    else if (text.startsWith("dataloss ")) running.dataLoss.push(text.slice("dataloss ".length));
  });
  await page.goto(url);
  await page.locator("#status", { hasText: "ready" }).waitFor({ timeout: LAUNCH_TIMEOUT_MS });
  return running;
}

/** SIGKILL to Chromium's whole process group; resolves once the browser process is gone. */
async function killBrowser(running: Running): Promise<void> {
  const exited = new Promise<void>((resolve) => {
    if (running.process.exitCode !== null || running.process.signalCode !== null) resolve();
    else running.process.once("exit", () => resolve());
  });
  try {
    process.kill(-running.process.pid!, "SIGKILL");
  } catch {
    // Already gone.
  }
  await exited;
  await running.browser.close().catch(() => {});
}

export async function soakBrowser(kills: number, seed: number, log: (line: string) => void, trimTornLogs = true): Promise<SoakResult> {
  const profile = await mkdtemp(join(tmpdir(), "sessionkit-soak-chromium-"));
  const server = await createServer({
    configFile: false,
    root: join(HERE, "page"),
    cacheDir: join(PROJECT, "node_modules", ".vite-soak"),
    optimizeDeps: { include: ["idb", "zod/mini", "zod/v4/locales/en.js"], entries: ["index.html"] },
    server: { host: "127.0.0.1", port: 0, hmr: false, ws: false, watch: null },
    logLevel: "error",
  });
  await server.listen();
  const url = server.resolvedUrls?.local[0];
  if (!url) throw new Error("the Vite server has no local URL");
  const rng = mulberry32(seed);
  const problems: string[] = [];
  let acknowledged = 0;
  let lost = 0;
  let tornTails = 0;
  let running: Running | null = null;
  const started = Date.now();
  try {
    let paths: Paths = { indexeddb: null, opfs: null };
    let known: Record<Backend, string[]> = { indexeddb: [], opfs: [] };
    /** What the flushes acknowledged before the last kill, checked after the relaunch. */
    let unchecked: { where: string; acked: Record<Backend, string[]> } | null = null;
    const check = async (relaunched: Running) => {
      const { where, acked } = unchecked!;
      const read = await call(`${where}: reading back`, relaunched.page.evaluate((p) => window.soak.read(p), paths as Record<Backend, string>));
      unchecked = null;
      for (const loss of relaunched.dataLoss) problems.push(`${where}: Chromium deleted the origin's IndexedDB on opening it (dataLoss ${loss})`);
      for (const backend of BACKENDS) {
        const back: ReadBack = read[backend];
        const present = new Set(back.ids);
        const missing = acked[backend].filter((id) => !present.has(id));
        acknowledged += acked[backend].length;
        lost += missing.length;
        if (missing.length > 0) problems.push(`${where}, ${backend}: ${missing.length} acknowledged entries lost (${missing.slice(0, 3).join(", ")}…)`);
        const others = back.problems.filter((problem) => !problem.startsWith("torn:"));
        if (others.length > 0) problems.push(`${where}, ${backend}: the session loads with ${others.join("; ")}`);
        if (back.size === null) {
          // Counted above; a new session takes its place, so the soak goes on and counts what follows.
          problems.push(`${where}, ${backend}: the session file ${paths[backend]} is gone`);
          paths[backend] = null;
          known[backend] = [];
          continue;
        }
        const before = known[backend];
        const differ = before.findIndex((id, i) => back.ids[i] !== id);
        if (differ >= 0) problems.push(`${where}, ${backend}: the ${before.length} entries seen before are not a prefix of the ${back.ids.length} now (first difference at entry ${differ})`);
        known[backend] = back.ids;
      }
    };
    for (let kill = 0; kill < kills; kill++) {
      running = await launch(profile, url);
      if (unchecked) await check(running);
      if (kill > 0 && kill % KILLS_PER_SESSION === 0) {
        await call(`kill ${kill + 1}: removing the sessions`, running.page.evaluate((p) => window.soak.remove(p), paths));
        paths = { indexeddb: null, opfs: null };
        known = { indexeddb: [], opfs: [] };
      }
      paths = await call(`kill ${kill + 1}: opening the sessions`, running.page.evaluate(([p, s]) => window.soak.start(p, s), [paths, seed + kill * 2] as const));
      await new Promise((resolve) => setTimeout(resolve, rng.between(50, 1500)));
      const { acked, errors } = running;
      await killBrowser(running);
      running = null;
      for (const tail of await trimTornLogTails(STORAGE_LEVELDBS.map((dir) => join(profile, "Default", dir)), trimTornLogs)) {
        const file = tail.file.slice(profile.length + 1);
        if (tail.corruptAt !== null) problems.push(`kill ${kill + 1}: ${file} is corrupt at byte ${tail.corruptAt} of ${tail.size} before the relaunch`);
        else {
          tornTails++;
          log(`kill ${kill + 1}: ${file} ends in a torn record (bytes ${tail.completeEnd}–${tail.size})${tail.trimmed ? ", cut back" : ", left as it is"}`);
        }
      }
      unchecked = { where: `kill ${kill + 1}`, acked: { indexeddb: [...acked.indexeddb], opfs: [...acked.opfs] } };
      if (errors.length > 0) problems.push(`kill ${kill + 1}: the page failed before the kill: ${errors.join("; ")}`);
      if ((kill + 1) % 10 === 0 || kill + 1 === kills) {
        log(`browser: ${kill + 1}/${kills} kills, ${acknowledged} acknowledged (checked so far), ${lost} lost, ${problems.length} problems, ${tornTails} torn log tails, ${((Date.now() - started) / 1000).toFixed(0)} s`);
      }
    }
    // The last kill is checked after one more launch (nothing is written then).
    running = await launch(profile, url);
    await check(running);
    await call("removing the sessions", running.page.evaluate((p) => window.soak.remove(p), paths));
    const notes = [`torn LevelDB log tails (IndexedDB's, OPFS's directory) after a kill: ${tornTails}, ${trimTornLogs ? "cut back before the relaunch" : "left as they were"}`];
    return { kills, acknowledged, lost, problems, notes };
  } finally {
    if (running) await killBrowser(running);
    await server.close();
    await rm(profile, { recursive: true, force: true });
  }
}
