/**
 * Writer locks held over `sessionkit serve` live as long as their client: a client that is killed
 * loses them when its socket closes; one that stops answering (a frozen thread) loses them when its
 * lease runs out. Then another client opens the session for writing and finds every flushed entry.
 */
import { spawn } from "node:child_process";
import { once } from "node:events";
import { mkdtemp, rm } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { Worker } from "node:worker_threads";
import { build } from "esbuild";
import { afterAll, afterEach, beforeAll, describe, expect, it } from "vitest";
import { SessionManager, isStorageError, type StoragePort } from "../../src/index.js";
import { ESM_BUNDLE_OF_CJS, REPO } from "../shared/cli-runner.js";
import { userMsg } from "../shared/messages.js";
import { serveTempStore, type ServedStore } from "./serve-helpers.js";

const LEASE_MS = 1000;
let bundleDir: string;
let writerBundle: string;

beforeAll(async () => {
  bundleDir = await mkdtemp(join(tmpdir(), "sessionkit-lease-"));
  writerBundle = join(bundleDir, "served-writer.mjs");
  await build({ entryPoints: [join(REPO, "test/node/fixtures/served-writer.ts")], outfile: writerBundle, bundle: true, platform: "node", format: "esm", target: "node20", external: ["bufferutil", "utf-8-validate"], logLevel: "silent", ...ESM_BUNDLE_OF_CJS });
});
afterAll(() => rm(bundleDir, { recursive: true, force: true }));

let served: ServedStore | undefined;
afterEach(async () => {
  await served?.cleanup();
  served = undefined;
});

/** Opens `path` for writing as soon as its lock is free; returns the manager and how long it waited. */
async function openForWriting(storage: StoragePort, path: string, since: number, timeoutMs: number): Promise<{ sm: SessionManager; waitedMs: number }> {
  for (;;) {
    try {
      const sm = await SessionManager.open(storage, path);
      return { sm, waitedMs: performance.now() - since };
    } catch (error) {
      if (!isStorageError(error, "locked") && !(error as { cause?: unknown }).cause) throw error;
      if (performance.now() - since > timeoutMs) throw new Error(`still locked after ${timeoutMs} ms: ${String(error)}`);
      await new Promise((resolve) => setTimeout(resolve, 20));
    }
  }
}

describe("lock leases over sessionkit serve", () => {
  it("a client process holding a writer lock is killed: another client opens the session for writing at once, every flushed entry there", async () => {
    served = await serveTempStore({ write: true, leaseMs: LEASE_MS });
    const child = spawn(process.execPath, [writerBundle, served.server.origin, served.server.token, served.store, "41", "idle"], { stdio: ["ignore", "pipe", "inherit"] });
    const [line] = (await once(child.stdout!, "data")) as [Buffer];
    const { path, ids } = JSON.parse(line.toString()) as { path: string; ids: string[] };
    const other = served.client();
    await expect(SessionManager.open(other, path)).rejects.toSatisfy((error) => isStorageError(error, "locked") || isStorageError((error as Error).cause, "locked"));

    const killedAt = performance.now();
    child.kill("SIGKILL");
    const { sm, waitedMs } = await openForWriting(other, path, killedAt, LEASE_MS);
    console.log(`lease: a killed client's lock taken over after ${waitedMs.toFixed(0)} ms (lease ${LEASE_MS} ms)`);
    expect(waitedMs).toBeLessThan(LEASE_MS);
    expect(sm.getEntries().map((entry) => entry.id)).toEqual(ids);
    sm.appendMessage(userMsg("the new writer goes on"));
    await sm.close();
  });

  it("a client whose thread freezes (answers no ping) loses its lock once the lease runs out", async () => {
    served = await serveTempStore({ write: true, leaseMs: LEASE_MS });
    const worker = new Worker(writerBundle, { workerData: [served.server.origin, served.server.token, served.store, "22", "freeze"] });
    try {
      const [report] = (await once(worker, "message")) as [string];
      const frozenAt = performance.now(); // the worker blocks right after posting
      const { path, ids } = JSON.parse(report) as { path: string; ids: string[] };
      const other = served.client();
      const { sm, waitedMs } = await openForWriting(other, path, frozenAt, 3 * LEASE_MS);
      console.log(`lease: a frozen client's lock taken over after ${waitedMs.toFixed(0)} ms (lease ${LEASE_MS} ms)`);
      expect(waitedMs).toBeGreaterThanOrEqual(LEASE_MS / 2);
      expect(waitedMs).toBeLessThan(LEASE_MS + 1000); // the lease, and the ping it takes to notice
      expect(sm.getEntries().map((entry) => entry.id)).toEqual(ids);
      await sm.close();
    } finally {
      await worker.terminate();
    }
  });
});
