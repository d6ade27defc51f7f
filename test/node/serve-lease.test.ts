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
import { afterAll, afterEach, beforeAll, beforeEach, describe, expect, it, vi } from "vitest";
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
beforeEach(() => {
  // The server pings each client every LEASE_MS / 2 and drops one that has not answered since the
  // last ping: its pinger runs on a clock the test moves (sockets and the clients stay real).
  vi.useFakeTimers({ toFake: ["setInterval", "clearInterval"] });
});
afterEach(async () => {
  vi.useRealTimers();
  await served?.cleanup();
  served = undefined;
});

/** Opens `path` for writing as soon as its lock is free (its holder's socket closing frees it a moment later). */
async function openForWriting(storage: StoragePort, path: string): Promise<SessionManager> {
  const deadline = performance.now() + 10_000;
  for (;;) {
    try {
      return await SessionManager.open(storage, path);
    } catch (error) {
      if (!isStorageError(error, "locked") && !(error as { cause?: unknown }).cause) throw error;
      if (performance.now() > deadline) throw new Error(`still locked after 10 s: ${String(error)}`);
      await new Promise((resolve) => setTimeout(resolve, 20));
    }
  }
}

const isLocked = (error: unknown) => isStorageError(error, "locked") || isStorageError((error as Error).cause, "locked");

describe("lock leases over sessionkit serve", () => {
  it("a client process holding a writer lock is killed: another client opens the session for writing without waiting for the lease, every flushed entry there", async () => {
    served = await serveTempStore({ write: true, leaseMs: LEASE_MS });
    const child = spawn(process.execPath, [writerBundle, served.server.origin, served.server.token, served.store, "41", "idle"], { stdio: ["ignore", "pipe", "inherit"] });
    const [line] = (await once(child.stdout!, "data")) as [Buffer];
    const { path, ids } = JSON.parse(line.toString()) as { path: string; ids: string[] };
    const other = served.client();
    await expect(SessionManager.open(other, path)).rejects.toSatisfy(isLocked);

    child.kill("SIGKILL");
    // No lease time passes: the closed socket alone releases the lock.
    const sm = await openForWriting(other, path);
    expect(sm.getEntries().map((entry) => entry.id)).toEqual(ids);
    sm.appendMessage(userMsg("the new writer goes on"));
    await sm.close();
  });

  it("a client whose thread freezes (answers no ping) keeps its lock through the first ping and loses it at the next, once the lease has run out", async () => {
    served = await serveTempStore({ write: true, leaseMs: LEASE_MS });
    const worker = new Worker(writerBundle, { workerData: [served.server.origin, served.server.token, served.store, "22", "freeze"] });
    try {
      const [report] = (await once(worker, "message")) as [string]; // the worker blocks right after posting
      const { path, ids } = JSON.parse(report) as { path: string; ids: string[] };
      const other = served.client();

      await vi.advanceTimersByTimeAsync(LEASE_MS / 2); // a ping the frozen thread cannot answer
      await expect(SessionManager.open(other, path)).rejects.toSatisfy(isLocked);
      await vi.advanceTimersByTimeAsync(LEASE_MS / 2); // no answer since: the client is dropped
      const sm = await openForWriting(other, path);
      expect(sm.getEntries().map((entry) => entry.id)).toEqual(ids);
      await sm.close();
    } finally {
      await worker.terminate();
    }
  });
});
