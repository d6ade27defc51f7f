/**
 * Crash safety of an import on real files: a child process importing an archive (a session with
 * IMAGES images, each a blob file) into an empty node-fs store is killed with SIGKILL at random
 * moments, half of them aimed at its writes. After every kill the store holds what an import
 * promises: every blob file there has the bytes its name hashes (no torn blob under its name), the
 * session is there only with every one of its blobs, and then byte for byte as exported; and the
 * same import run again completes the store.
 *
 * A kill ends the process, not the machine: what it checks is the order of the writes and the
 * atomicity of each, not the fsyncs (which only a power cut would test).
 */
import { spawn } from "node:child_process";
import { mkdtemp, readdir, readFile, rm, writeFile } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { fileURLToPath } from "node:url";
import { afterAll, beforeAll, describe, expect, it, onTestFinished } from "vitest";
import { nodeArchiveCodecs, nodeFsStorage } from "../../adapters/node-fs/index.js";
import { importArchive } from "../../src/archive/index.js";
import { SessionManager } from "../../src/index.js";
import { mulberry32 } from "../shared/prng.js";
import { assistant, exportToBytes, noise, OWN_STORE, sha256, user } from "./archive/helpers.js";

const KILLS = 12;
const IMAGES = 40;
const SEED = 0x1ba5e;
const REPO = fileURLToPath(new URL("../..", import.meta.url));
const IMPORTER = fileURLToPath(new URL("./fixtures/crash-importer.ts", import.meta.url));

let dir: string;
let archive: string;
/** The exported session: its storage path and bytes, and the hashes of its blobs. */
let session: { path: string; bytes: Buffer; blobs: string[] };

beforeAll(async () => {
  dir = await mkdtemp(join(tmpdir(), "sessionkit-crash-import-"));
  const origin = nodeFsStorage({ root: join(dir, "origin") });
  const sm = await SessionManager.create(origin, "/work/crashy", { ...OWN_STORE, deferUntilAssistant: false });
  for (let i = 0; i < IMAGES; i++) {
    sm.appendMessage(user(`screenshot ${i}`, noise(100_000 + i * 1000, i + 1)));
    sm.appendMessage(assistant(`seen ${i}`));
  }
  const path = sm.getSessionFile()!;
  await sm.close();
  archive = join(dir, "session.zip");
  await writeFile(archive, (await exportToBytes(origin, [path])).bytes);
  const blobs = (await origin.list("blobs")).map((entry) => entry.name);
  session = { path, bytes: Buffer.from((await origin.read(path))!), blobs };
  await origin.close();
  expect(blobs).toHaveLength(IMAGES);
});

afterAll(async () => {
  await rm(dir, { recursive: true, force: true });
});

interface Importer {
  go(killAfterMs: number, aimed: boolean): void;
  /** The lines it printed, once it is gone. */
  done: Promise<{ said: string[]; signal: NodeJS.Signals | null; stderr: string }>;
  discard(): void;
}

/** Starts an importer child into `root`; it loads and waits for `go`. */
function startImporter(root: string): Importer {
  const child = spawn(process.execPath, ["--import", "tsx", IMPORTER, archive, root], { cwd: REPO, stdio: ["pipe", "pipe", "pipe"] });
  const said: string[] = [];
  let stderr = "";
  let plan = { killAfterMs: 0, aimed: false };
  let buffered = "";
  child.stdout.setEncoding("utf8");
  child.stderr.setEncoding("utf8");
  child.stderr.on("data", (chunk: string) => (stderr += chunk));
  child.stdout.on("data", (chunk: string) => {
    buffered += chunk;
    for (let nl = buffered.indexOf("\n"); nl >= 0; nl = buffered.indexOf("\n")) {
      const line = buffered.slice(0, nl);
      buffered = buffered.slice(nl + 1);
      said.push(line);
      if (line === (plan.aimed ? "writing" : "verifying")) setTimeout(() => child.kill("SIGKILL"), plan.killAfterMs);
    }
  });
  const done = new Promise<{ said: string[]; signal: NodeJS.Signals | null; stderr: string }>((resolve, reject) => {
    child.on("error", reject);
    child.on("close", (_code, signal) => resolve({ said, signal, stderr }));
  });
  return {
    go(killAfterMs, aimed) {
      plan = { killAfterMs, aimed };
      child.stdin.end("go\n");
    },
    done,
    discard() {
      if (child.exitCode === null && child.signalCode === null) child.kill("SIGKILL");
    },
  };
}

/** The blob files in the store (temp files left by the kill are not blobs: the port never lists them). */
async function blobFiles(root: string): Promise<Map<string, Buffer>> {
  const names = await readdir(join(root, "blobs")).catch(() => [] as string[]);
  const blobs = names.filter((name) => !name.endsWith(".tmp"));
  return new Map(await Promise.all(blobs.map(async (name) => [name, await readFile(join(root, "blobs", name))] as const)));
}

describe("crash safety: SIGKILL during an import", () => {
  it(`${KILLS} kills leave blobs whole and the session only after all of them (seed ${SEED})`, async () => {
    const rng = mulberry32(SEED);
    const counts = { kills: 0, finished: 0, nothing: 0, someBlobs: 0, allBlobsNoSession: 0, complete: 0 };
    const roots = Array.from({ length: KILLS }, (_, kill) => join(dir, `store-${kill}`));
    const importers: Importer[] = [];
    const startUpTo = (kill: number) => {
      for (let k = kill; k < Math.min(kill + 2, KILLS); k++) importers[k] ??= startImporter(roots[k]!);
    };
    onTestFinished(() => importers.forEach((importer) => importer.discard()));
    for (let kill = 0; kill < KILLS; kill++) {
      startUpTo(kill);
      const aimed = kill % 2 === 1;
      importers[kill]!.go(aimed ? rng.between(0, 40) : rng.between(0, 400), aimed);
      const child = await importers[kill]!.done;
      startUpTo(kill + 1);
      const root = roots[kill]!;
      if (child.said.includes("done")) counts.finished++;
      else expect(child.signal, `child ${kill} died of the kill: ${child.stderr}`).toBe("SIGKILL");
      counts.kills++;

      const blobs = await blobFiles(root);
      for (const [name, bytes] of blobs) expect(sha256(bytes), `kill ${kill}: blobs/${name} holds the bytes it is named for`).toBe(name);
      const stored = await readFile(join(root, session.path)).catch(() => null);
      if (stored !== null) {
        expect([...blobs.keys()].sort(), `kill ${kill}: the session is there only with every blob`).toEqual([...session.blobs].sort());
        expect(stored.equals(session.bytes), `kill ${kill}: the session is there byte for byte`).toBe(true);
        counts.complete++;
      } else if (blobs.size === 0) counts.nothing++;
      else if (blobs.size < IMAGES) counts.someBlobs++;
      else counts.allBlobsNoSession++;

      // Importing again completes whatever the kill left.
      const storage = nodeFsStorage({ root });
      const summary = await importArchive(storage, new Uint8Array(await readFile(archive)), { ...OWN_STORE, ...nodeArchiveCodecs });
      await storage.close();
      expect(summary.blobs.written + summary.blobs.present, `kill ${kill}: every blob accounted for`).toBe(IMAGES);
      expect((await readFile(join(root, session.path))).equals(session.bytes)).toBe(true);
      const after = await blobFiles(root);
      expect(after.size).toBe(IMAGES);
      for (const [name, bytes] of after) expect(sha256(bytes)).toBe(name);
      await rm(root, { recursive: true, force: true });
    }
    console.log(`crash safety of imports (seed ${SEED}): ${JSON.stringify(counts)}`);
    expect(counts.kills).toBe(KILLS);
    expect(counts.someBlobs, "some kills landed among the blob writes").toBeGreaterThan(0);
  }, 300_000);
});
