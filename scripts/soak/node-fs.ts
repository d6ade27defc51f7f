/**
 * The node-fs crash soak: a child process appends to a session on real files (the crash-safety
 * test's writer, test/node/fixtures/crash-writer.ts, bundled once with esbuild so a child starts in
 * a fraction of a second) and is killed with SIGKILL at a random moment, `kills` times. After every
 * kill the session is reopened: every entry a `flush()` acknowledged must be there, the entries
 * seen before must still lead the file, every complete line must be one JSON object; every other
 * time the parent appends (taking over the dead child's lock, repairing a torn tail). Half the
 * kills land 20–150 ms after the child opened the session, the other half 0–5 ms after it
 * announces a multi-megabyte write (where a kill can tear the write).
 *
 * Sessions rotate: each takes KILLS_PER_SESSION kills, then is checked a last time and deleted,
 * so files stay small enough to reread after every kill.
 */
import { spawn } from "node:child_process";
import { mkdtemp, readFile, rm } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { fileURLToPath } from "node:url";
import { build } from "esbuild";
import { nodeFsStorage } from "../../adapters/node-fs/index.js";
import { SessionManager } from "../../src/index.js";
import { mulberry32 } from "../../test/shared/prng.js";
import type { SoakResult } from "./result.js";

const WRITER = fileURLToPath(new URL("../../test/node/fixtures/crash-writer.ts", import.meta.url));
const KILLS_PER_SESSION = 5;
/** Children started ahead of their turn, so the next one has loaded when the last kill is checked. */
const PRELOADED = 2;
const CWD = "/home/dev/soak";

interface ChildRun {
  acked: string[];
  signal: NodeJS.Signals | null;
  stderr: string;
}

interface Writer {
  go(plan: { after: "ready" | "big"; delayMs: number }): void;
  done: Promise<ChildRun>;
  discard(): void;
}

function startWriter(script: string, root: string, path: string, seed: number): Writer {
  const child = spawn(process.execPath, [script, root, path, String(seed)], { stdio: ["pipe", "pipe", "pipe"] });
  const run: ChildRun = { acked: [], signal: null, stderr: "" };
  let plan = { after: "ready", delayMs: 0 };
  let buffered = "";
  child.stdout.setEncoding("utf8");
  child.stderr.setEncoding("utf8");
  child.stderr.on("data", (chunk: string) => (run.stderr += chunk));
  child.stdout.on("data", (chunk: string) => {
    buffered += chunk;
    for (let nl = buffered.indexOf("\n"); nl >= 0; nl = buffered.indexOf("\n")) {
      const line = buffered.slice(0, nl);
      buffered = buffered.slice(nl + 1);
      if ((line.startsWith("ready ") && plan.after === "ready") || (line === "big" && plan.after === "big")) setTimeout(() => child.kill("SIGKILL"), plan.delayMs);
      else if (line.startsWith("ack ")) run.acked.push(...line.slice(4).split(","));
    }
  });
  const done = new Promise<ChildRun>((resolve, reject) => {
    child.on("error", reject);
    // "close" comes after stdout has ended: every line the child wrote has been seen.
    child.on("close", (_code, signal) => resolve({ ...run, signal }));
  });
  return {
    go(next) {
      plan = next;
      child.stdin.end(plan.after === "big" ? "go aimed\n" : "go\n");
    },
    done,
    discard() {
      if (child.exitCode === null && child.signalCode === null) child.kill("SIGKILL");
    },
  };
}

/** Every complete line is one JSON object; returns the bytes up to the last newline. */
function completeLines(bytes: Buffer, problems: string[], where: string): number {
  const end = bytes.lastIndexOf(0x0a) + 1;
  bytes
    .subarray(0, end)
    .toString("utf8")
    .split("\n")
    .slice(0, -1)
    .forEach((line, i) => {
      try {
        const value: unknown = JSON.parse(line);
        if (typeof value !== "object" || value === null || Array.isArray(value)) problems.push(`${where}: line ${i + 1} is not an object`);
      } catch {
        problems.push(`${where}: line ${i + 1} is not one JSON value: ${line.slice(0, 80)}`);
      }
    });
  return end;
}

export async function soakNodeFs(kills: number, seed: number, log: (line: string) => void): Promise<SoakResult> {
  const work = await mkdtemp(join(tmpdir(), "sessionkit-soak-"));
  const problems: string[] = [];
  let acknowledged = 0;
  let lost = 0;
  const loading: Writer[] = [];
  try {
    const script = join(work, "crash-writer.mjs");
    await build({ entryPoints: [WRITER], bundle: true, platform: "node", format: "esm", target: "node20", outfile: script, logLevel: "error" });
    const root = join(work, "store");
    const rng = mulberry32(seed);
    const started = Date.now();
    type Lane = { path: string; known: string[]; completeBytes: Buffer };
    let lane = null as Lane | null;
    const paths: string[] = [];
    const pathOf = async (kill: number): Promise<string> => {
      const index = Math.floor(kill / KILLS_PER_SESSION);
      if (paths[index] === undefined) {
        const setup = await SessionManager.create(nodeFsStorage({ root }), CWD, { deferUntilAssistant: false });
        setup.appendMessage({ role: "user", content: `session ${index}`, timestamp: Date.now() });
        paths[index] = setup.getSessionFile()!;
        await setup.close();
      }
      return paths[index]!;
    };
    const startUpTo = async (kill: number) => {
      for (let k = kill; k < Math.min(kill + PRELOADED, kills); k++) loading[k] ??= startWriter(script, root, await pathOf(k), seed + k);
    };
    for (let kill = 0; kill < kills; kill++) {
      const path = await pathOf(kill);
      const file = join(root, path);
      if (lane?.path !== path) {
        if (lane) await rm(join(root, lane.path), { force: true });
        const before = await SessionManager.open(nodeFsStorage({ root }), path, { readOnly: true });
        lane = { path, known: before.getEntries().map((entry) => entry.id), completeBytes: Buffer.alloc(0) };
        await before.close();
      }
      await startUpTo(kill);
      const writer = loading[kill]!;
      writer.go(rng.chance(0.5) ? { after: "ready", delayMs: rng.between(20, 150) } : { after: "big", delayMs: rng.between(0, 5) });
      const child = await writer.done;
      delete loading[kill];
      await startUpTo(kill + 1);
      const where = `kill ${kill + 1}`;
      if (child.signal !== "SIGKILL") problems.push(`${where}: the child was not killed but ended by itself (${child.stderr.trim().split("\n").pop() ?? ""})`);
      acknowledged += child.acked.length;

      const bytes = await readFile(file);
      if (!bytes.subarray(0, lane.completeBytes.length).equals(lane.completeBytes)) problems.push(`${where}: lines written before the kill changed`);
      completeLines(bytes.subarray(lane.completeBytes.length), problems, where);
      const parentAppends = kill % 2 === 1;
      const storage = nodeFsStorage({ root });
      const sm = await SessionManager.open(storage, path, { readOnly: !parentAppends, onWarning: () => {} });
      const ids = sm.getEntries().map((entry) => entry.id);
      if (ids.slice(0, lane.known.length).join() !== lane.known.join()) problems.push(`${where}: the entries before the kill are not a prefix of the session`);
      const present = new Set(ids);
      const missing = child.acked.filter((id) => !present.has(id));
      lost += missing.length;
      if (missing.length > 0) problems.push(`${where}: ${missing.length} acknowledged entries lost (${missing.slice(0, 3).join(", ")}…)`);
      lane.known = ids;
      if (parentAppends) {
        lane.known.push(sm.appendMessage({ role: "user", content: `parent after ${where}`, timestamp: Date.now() }));
        await sm.close();
        const repaired = await readFile(file);
        if (repaired[repaired.length - 1] !== 0x0a) problems.push(`${where}: the file does not end with a whole line after the parent's append`);
      } else {
        await sm.close();
      }
      await storage.close();
      const now = await readFile(file);
      lane.completeBytes = now.subarray(0, now.lastIndexOf(0x0a) + 1);
      if ((kill + 1) % 50 === 0 || kill + 1 === kills) {
        log(`node-fs: ${kill + 1}/${kills} kills, ${acknowledged} acknowledged, ${lost} lost, ${problems.length} problems, ${((Date.now() - started) / 1000).toFixed(0)} s`);
      }
    }
    return { kills, acknowledged, lost, problems, notes: [] };
  } finally {
    for (const writer of loading) writer?.discard();
    await rm(work, { recursive: true, force: true });
  }
}
