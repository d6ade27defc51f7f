import { afterAll, afterEach, describe, expect, it, vi } from "vitest";
import { opfsStorage, opfsWorkerStorage, type OpfsStorage } from "../../adapters/opfs/index.js";
import { encodeWorkerName } from "../../adapters/opfs/worker-config.js";
import { rpcClientStorage } from "../../adapters/rpc/index.js";
import { SessionManager } from "../../src/index.js";
import { isStorageError } from "../../src/port.js";
import { describePortConformance } from "../../src/testing/index.js";
import { deleteBucket, openSmallBucket } from "./storage-quota.js";

const text = (s: string) => new TextEncoder().encode(s);
const decode = (bytes: Uint8Array | null) => (bytes === null ? null : new TextDecoder().decode(bytes));
const MiB = 1 << 20;

/** This file's own directory below the OPFS root; every port here lives below it. */
const testRoot = `sessionkit-test-${crypto.randomUUID()}`;
const ports: OpfsStorage[] = [];

function track<T extends OpfsStorage>(port: T): T {
  ports.push(port);
  return port;
}

/** A page port (worker + rpc) on a directory of its own, or on `root` to share one. */
function pagePort(root = `${testRoot}/${crypto.randomUUID()}`): OpfsStorage {
  return track(opfsStorage({ root }));
}

afterEach(() => {
  vi.restoreAllMocks();
});

afterAll(async () => {
  await Promise.all(ports.map((port) => port.close().catch(() => {})));
  await (await navigator.storage.getDirectory()).removeEntry(testRoot, { recursive: true }).catch(() => {});
});

// One worker for the whole suite, as a page would use it (the suite gives each test its own directory).
let conformancePort: OpfsStorage | undefined;
describePortConformance(
  "opfs (worker with sync access handles, through rpc)",
  async () => {
    conformancePort ??= track(opfsStorage({ root: `${testRoot}/conformance-worker` }));
    // Another page's worker on the same directory: its changes reach ours only over the BroadcastChannel.
    return { port: conformancePort, openSecond: async () => opfsStorage({ root: `${testRoot}/conformance-worker` }) };
  },
  { sync: true, locks: true, watch: true, secondPort: true },
);

// On the page there are no sync access handles: this is the createWritable fallback.
describePortConformance("opfs (createWritable fallback on the main thread)", async () => {
  const port = opfsWorkerStorage({ root: `${testRoot}/conformance-writable` });
  return { port, cleanup: () => port.close() };
});

describe("opfs adapter", () => {
  it("a new port on the same directory sees the files (reopen after reload)", async () => {
    const root = `${testRoot}/${crypto.randomUUID()}`;
    const first = pagePort(root);
    await first.append("sessions/a.jsonl", text("one\n"));
    await first.write("blobs/x", text("blob"));
    await first.close();

    const second = pagePort(root);
    expect(decode(await second.read("sessions/a.jsonl"))).toBe("one\n");
    expect(decode(await second.read("blobs/x"))).toBe("blob");
    expect((await second.list("")).map((entry) => `${entry.kind}:${entry.name}`)).toEqual(["dir:blobs", "dir:sessions"]);
  });

  it("a file one worker is appending to: another worker reads it, but its append gets 'locked' until the first closes", async () => {
    const root = `${testRoot}/${crypto.randomUUID()}`;
    const writer = pagePort(root);
    const otherTab = pagePort(root);
    await writer.append("s.jsonl", text("first\n")); // the writer's worker now holds the sync handle

    expect(decode(await otherTab.read("s.jsonl"))).toBe("first\n");
    await expect(otherTab.append("s.jsonl", text("intruder\n"))).rejects.toSatisfy((error) => isStorageError(error, "locked"));

    await writer.close();
    await otherTab.append("s.jsonl", text("second\n"));
    expect(decode(await otherTab.read("s.jsonl"))).toBe("first\nsecond\n");
  });

  it("Web Locks: a second port's acquireLock gets 'locked' until the first releases", async () => {
    const root = `${testRoot}/${crypto.randomUUID()}`;
    const first = pagePort(root);
    const second = pagePort(root);
    const lock = await first.acquireLock("sessions/a.jsonl");
    await expect(second.acquireLock("sessions/a.jsonl")).rejects.toSatisfy((error) => isStorageError(error, "locked"));
    await lock.release();
    await (await second.acquireLock("sessions/a.jsonl")).release();
  });

  it("write replaces a file that is open for appending, leaves no temp file, and appends continue after it", async () => {
    const port = pagePort();
    await port.append("dir/s", text("old old old"));
    await port.write("dir/s", text("new"));
    await port.append("dir/s", text("+tail"));
    await port.sync("dir/s");
    expect(decode(await port.read("dir/s"))).toBe("new+tail");
    expect((await port.list("dir")).map((entry) => entry.name)).toEqual(["s"]);
  });

  it("finds files again after another tab removed and re-created their directory", async () => {
    const root = `${testRoot}/${crypto.randomUUID()}`;
    const port = pagePort(root);
    await port.write("d/x", text("1"));
    expect(decode(await port.read("d/x"))).toBe("1"); // the worker now remembers d's handle

    const rootDir = await (await navigator.storage.getDirectory()).getDirectoryHandle(testRoot).then((dir) => dir.getDirectoryHandle(root.split("/")[1]!));
    await rootDir.removeEntry("d", { recursive: true });
    expect(await port.read("d/x")).toBeNull();
    expect(await port.stat("d/x")).toBeNull();

    const recreated = await rootDir.getDirectoryHandle("d", { create: true });
    const writable = await (await recreated.getFileHandle("y", { create: true })).createWritable();
    await writable.write(text("from the other tab"));
    await writable.close();
    expect(decode(await port.read("d/y"))).toBe("from the other tab");

    await rootDir.removeEntry("d", { recursive: true });
    await port.append("d/z", text("again")); // creates the directory anew
    expect((await port.list("d")).map((entry) => entry.name)).toEqual(["z"]);
  });

  it("appends cost the same on a large file (in place at the end, no copy)", async () => {
    const port = pagePort();
    await port.append("small", text("x"));
    await port.write("large", new Uint8Array(32 * MiB));
    await port.append("large", text("x")); // opens the handle
    const line = new Uint8Array(200).fill(65);
    const timeAppends = async (path: string) => {
      const started = performance.now();
      for (let i = 0; i < 100; i++) await port.append(path, line);
      return performance.now() - started;
    };
    const onSmall = await timeAppends("small");
    const onLarge = await timeAppends("large");
    // A copy-on-append backend moves 3.2 GB here (seconds); in-place appends cost the same on both.
    expect(onLarge).toBeLessThan(4 * onSmall + 250);
    expect(await port.stat("large")).toMatchObject({ size: 32 * MiB + 1 + 100 * line.length });
  });

  it("a quota failure gives 'quota' and leaves the file as it was (sync handle and createWritable)", async () => {
    const bucket = await openSmallBucket(4 * MiB);
    const root = `${testRoot}/${crypto.randomUUID()}`;
    const viaWorker = track(opfsStorage({ root, bucket: bucket.name }));
    const onPage = track(opfsWorkerStorage({ root: `${root}-page`, bucket: bucket.name }));
    try {
      for (const port of [viaWorker, onPage]) {
        await port.write("s.jsonl", text("kept\n"));
        await port.append("s.jsonl", text("more\n"));
        const tooBig = new Uint8Array(8 * MiB).fill(7);
        await expect(port.append("s.jsonl", tooBig)).rejects.toSatisfy((error) => isStorageError(error, "quota"));
        await expect(port.write("s.jsonl", tooBig)).rejects.toSatisfy((error) => isStorageError(error, "quota"));
        await expect(port.write("new.bin", tooBig)).rejects.toSatisfy((error) => isStorageError(error, "quota"));
        expect(await port.stat("new.bin")).toBeNull();
        expect(decode(await port.read("s.jsonl"))).toBe("kept\nmore\n");
        await port.append("s.jsonl", text("after\n"));
        expect(decode(await port.read("s.jsonl"))).toBe("kept\nmore\nafter\n");
        expect((await port.list("")).map((entry) => entry.name)).toEqual(["s.jsonl"]); // no temp file left
      }
    } finally {
      await Promise.all([viaWorker.close(), onPage.close()]);
      await deleteBucket(bucket);
    }
  });

  it("an append and the sync after it travel to the worker as one message and come back as one", async () => {
    // The page side of opfsStorage(), built here so that its worker's messages can be watched.
    const root = `${testRoot}/${crypto.randomUUID()}`;
    const worker = new Worker(new URL("../../adapters/opfs/sessionkit-opfs-worker.js", import.meta.url), { type: "module", name: encodeWorkerName({ root }) });
    const port = rpcClientStorage(worker);
    try {
      await port.append("s", text("a"));
      const posted = vi.spyOn(worker, "postMessage");
      const received: unknown[] = [];
      worker.addEventListener("message", (event) => received.push(event.data));
      await Promise.all([port.append("s", text("b")), port.sync("s")]);
      expect(posted).toHaveBeenCalledTimes(1);
      // The calls resolved in the client's listener; ours runs after it, within the same dispatch.
      await new Promise((resolve) => setTimeout(resolve, 0));
      expect(received).toMatchObject([{ responses: [{ ok: true }, { ok: true }] }]);
      expect(decode(await port.read("s"))).toBe("ab");
    } finally {
      await port.close();
      worker.terminate();
    }
  });

  it("a SessionManager inside a worker writes on the port there; the page reads it, and may write once the worker closes it", async () => {
    const root = `${testRoot}/${crypto.randomUUID()}`;
    const worker = new Worker(new URL("./session-worker.js", import.meta.url), { type: "module" });
    const reply = <T>() => new Promise<T>((resolve) => worker.addEventListener("message", (event) => resolve(event.data as T), { once: true }));
    try {
      const written = reply<{ path: string; ids: string[]; flushes: number; error?: string }>();
      worker.postMessage({ root, cwd: "/work/in-worker", count: 40, flushEvery: 4 });
      const { path, ids, flushes, error } = await written;
      expect(error).toBeUndefined();
      expect(flushes).toBe(10);

      const page = pagePort(root);
      const reader = await SessionManager.open(page, path, { readOnly: true });
      expect(reader.getEntries().map((entry) => entry.id)).toEqual(ids);
      // The worker's session holds the writer lock: the page gets a read-only view only.
      await expect(SessionManager.open(page, path)).rejects.toSatisfy((e) => isStorageError(e, "locked"));

      const closed = reply<string>();
      worker.postMessage("close");
      expect(await closed).toBe("closed");
      const writer = await SessionManager.open(page, path);
      writer.appendMessage({ role: "user", content: "from the page", timestamp: 1 });
      await writer.close();
      const again = await SessionManager.open(page, path, { readOnly: true });
      expect(again.getEntries()).toHaveLength(ids.length + 1);
    } finally {
      worker.terminate();
    }
  });

  it("a worker that fails to start fails calls with 'io' at once, not after the timeout", async () => {
    const worker = new Worker(new URL("./crashing-worker.js", import.meta.url), { type: "module" });
    const client = rpcClientStorage(worker, { timeoutMs: 30_000 });
    const started = performance.now();
    await expect(client.stat("x")).rejects.toSatisfy((error) => isStorageError(error, "io"));
    expect(performance.now() - started).toBeLessThan(10_000);
    worker.terminate();
  });
});
