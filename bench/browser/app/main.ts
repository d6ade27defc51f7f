/**
 * The browser bench page: `window.bench` runs one measurement per call (driven by ../run.ts
 * through page.evaluate) on IndexedDB, OPFS through its worker, or the naive whole-file peer.
 */
import { indexedDbStorage } from "../../../adapters/indexeddb/index.js";
import { memoryStorage } from "../../../adapters/memory/index.js";
import { opfsStorage } from "../../../adapters/opfs/index.js";
import { httpStorage } from "../../../adapters/rpc/http.js";
import type { StoragePort } from "../../../src/port.js";
import { idbFloor, idbFloorSteps, type IdbFloor } from "../floors.js";
import { wholeFileRewriteStorage } from "../naive-port.js";
import type { Breakdown } from "../timed-port.js";
import {
  OPEN_SESSION_PATH,
  encodedFlushes,
  instrumented,
  largeSessionBytes,
  serializedFlushes,
  sha256,
  timeAppends,
  timeOpen,
  timePairedAppends,
  type AppendRun,
  type OpenRun,
  type PairedRun,
} from "../workload.js";
import type { WorkerTask } from "./worker.js";

export type Backend = "indexeddb" | "opfs" | "naive";

type ClosablePort = StoragePort & { close(): Promise<void> };

/** A port whose data lives under `name`: a database, or a directory below the OPFS root. */
function openPort(backend: Backend, name: string): ClosablePort {
  if (backend === "indexeddb") return indexedDbStorage({ dbName: name });
  if (backend === "opfs") return opfsStorage({ root: name });
  return wholeFileRewriteStorage(name);
}

/** Ready to serve: the database connection is open, the worker is up and has loaded its modules. */
async function warmedPort(backend: Backend, name: string): Promise<ClosablePort> {
  const port = openPort(backend, name);
  await port.stat("warm-up");
  return port;
}

async function removeData(backend: Backend, name: string): Promise<void> {
  if (backend === "opfs") {
    await (await navigator.storage.getDirectory()).removeEntry(name, { recursive: true }).catch(() => {});
    return;
  }
  await new Promise<void>((resolve, reject) => {
    const request = indexedDB.deleteDatabase(name);
    request.onsuccess = () => resolve();
    request.onerror = () => reject(request.error);
  });
}

/** A bench worker (./worker.ts) answering one task at a time; `end` terminates it. */
function benchWorker() {
  const worker = new Worker(new URL("./worker.ts", import.meta.url), { type: "module" });
  return {
    /** Runs `task` in the worker; `transfer` moves those buffers instead of copying them. */
    run<R>(task: WorkerTask, transfer: Transferable[] = []): Promise<R> {
      return new Promise<R>((resolve, reject) => {
        worker.onmessage = (event: MessageEvent<{ result?: R; error?: string }>) =>
          event.data.error === undefined ? resolve(event.data.result as R) : reject(new Error(event.data.error));
        worker.onerror = (event) => reject(new Error(event.message));
        worker.postMessage(task, transfer);
      });
    },
    end: () => worker.terminate(),
  };
}

/** Runs one task in a new bench worker. */
async function inWorker<R>(task: WorkerTask): Promise<R> {
  const worker = benchWorker();
  try {
    return await worker.run<R>(task);
  } finally {
    worker.end();
  }
}

/** Ports holding the large session between `prepareOpen` and `finishOpen`. */
const openPorts = new Map<Backend, { name: string; port: ClosablePort }>();

const bench = {
  /** Removes databases and OPFS directories whose names start with `prefix` (left by an aborted run). */
  async removeAll(prefix: string): Promise<number> {
    let removed = 0;
    for (const { name } of await indexedDB.databases()) {
      if (name?.startsWith(prefix)) {
        await removeData("indexeddb", name);
        removed++;
      }
    }
    const root = (await navigator.storage.getDirectory()) as FileSystemDirectoryHandle & { keys(): AsyncIterable<string> };
    for await (const name of root.keys()) {
      if (name.startsWith(prefix)) {
        await removeData("opfs", name);
        removed++;
      }
    }
    return removed;
  },

  /** `count` appends, `flush()` every `flushEvery`, on fresh storage that is removed afterwards. */
  async appends(backend: Backend, name: string, count: number, flushEvery: number, breakdown = false): Promise<AppendRun & { breakdown?: Breakdown }> {
    const port = await warmedPort(backend, name);
    try {
      if (!breakdown) return await timeAppends(port, count, flushEvery);
      return await instrumented(port, (timed, hooks) => timeAppends(timed, count, flushEvery, hooks));
    } finally {
      await port.close();
      await removeData(backend, name);
    }
  },

  /** Writes the large session into fresh storage and keeps the port for `open`. */
  async prepareOpen(backend: Backend, name: string, targetBytes: number): Promise<{ bytes: number; sha256: string }> {
    const bytes = largeSessionBytes(targetBytes);
    const port = await warmedPort(backend, name);
    await port.write(OPEN_SESSION_PATH, bytes);
    openPorts.set(backend, { name, port });
    return { bytes: bytes.length, sha256: await sha256(bytes) };
  },

  async open(backend: Backend, breakdown = false): Promise<OpenRun & { breakdown?: Breakdown }> {
    const { port } = openPorts.get(backend)!;
    if (!breakdown) return timeOpen(port, OPEN_SESSION_PATH);
    return instrumented(port, (timed, hooks) => timeOpen(timed, OPEN_SESSION_PATH, hooks));
  },

  /** Open + context of the same session served by `sessionkit serve` from Node. */
  async openHttp(origin: string, token: string, store: string): Promise<OpenRun> {
    const port = httpStorage({ url: origin, token, store });
    try {
      await port.stat("sessions/warm-up"); // the socket is open
      return await timeOpen(port, OPEN_SESSION_PATH);
    } finally {
      await port.close();
    }
  },

  async finishOpen(backend: Backend): Promise<void> {
    const { name, port } = openPorts.get(backend)!;
    openPorts.delete(backend);
    await port.close();
    await removeData(backend, name);
  },

  /**
   * The same appends with SessionManager inside a dedicated worker on the OPFS port directly (no
   * rpc hop; the README's way to run a session where the sync handles are).
   */
  async appendsInWorker(name: string, count: number, flushEvery: number, breakdown = false): Promise<AppendRun & { breakdown?: Breakdown }> {
    try {
      return await inWorker({ task: "appends", name, count, flushEvery, breakdown });
    } finally {
      await removeData("opfs", name);
    }
  },

  /** The same appends in a worker on the floor's own sync-handle calls behind a bare port (no sessionkit port): SessionManager's share apart from the adapter's. */
  async appendsOnBarePort(name: string, count: number, flushEvery: number): Promise<AppendRun> {
    try {
      return await inWorker({ task: "appendsOnBarePort", name, count, flushEvery });
    } finally {
      await removeData("opfs", name);
    }
  },

  /** The same appends on the memory port (no platform storage): SessionManager's own cost, in the page or in a worker. */
  async appendsInMemory(count: number, flushEvery: number, where: "page" | "worker"): Promise<AppendRun> {
    if (where === "worker") return inWorker({ task: "appendsInMemory", count, flushEvery });
    return timeAppends(memoryStorage(), count, flushEvery);
  },

  /**
   * The appends on IndexedDB paired flush by flush with their floor (timePairedAppends): after
   * each of ours, one strict transaction of raw IndexedDB adds the same flush's bytes (encoded
   * beforehand: the floor is the platform's work alone) to a database of its own.
   */
  async idbPairedAppends(name: string, count: number, flushEvery: number): Promise<PairedRun> {
    const port = await warmedPort("indexeddb", name);
    const floor = await idbFloorSteps(`${name}-floor`, encodedFlushes(count, flushEvery));
    try {
      return await timePairedAppends(port, count, flushEvery, floor.step);
    } finally {
      floor.close();
      await port.close();
      await removeData("indexeddb", name);
      await removeData("indexeddb", `${name}-floor`);
    }
  },

  /**
   * The appends from the page through the rpc to the OPFS worker, paired flush by flush with their
   * floor: after each of ours, the page serializes the same flush's entries, encodes them and
   * moves the buffer to a worker of its own, which writes it through a sync handle, flush()es and
   * replies (pageToWorkerFlushFloor's steps).
   */
  async rpcPairedAppends(name: string, count: number, flushEvery: number): Promise<PairedRun> {
    const port = await warmedPort("opfs", name);
    const worker = benchWorker();
    const flushes = serializedFlushes(count, flushEvery)[Symbol.iterator]();
    const encoder = new TextEncoder();
    try {
      await worker.run({ task: "floorOpen", name: `${name}-floor` });
      return await timePairedAppends(port, count, flushEvery, async () => {
        const data = encoder.encode(flushes.next().value as string);
        await worker.run({ task: "floorWriteFlush", data }, [data.buffer]);
      });
    } finally {
      await worker.run({ task: "floorClose" }).catch(() => {});
      worker.end();
      await port.close();
      await removeData("opfs", name);
      await removeData("opfs", `${name}-floor`);
    }
  },

  /** The appends with the SessionManager in a worker on the OPFS port, paired flush by flush with the floor plus serialization on a file of its own in the same worker. */
  async workerPairedAppends(name: string, count: number, flushEvery: number): Promise<PairedRun> {
    try {
      return await inWorker({ task: "pairedAppends", name, count, flushEvery });
    } finally {
      await removeData("opfs", name);
    }
  },

  /** Total ms of `flushes` sync-handle writes of `bytes` each with a flush() after each, in a worker: the appends' OPFS floor. */
  async syncHandleFlushFloor(name: string, flushes: number, bytes: number): Promise<number> {
    try {
      return await inWorker({ task: "syncHandleFlushFloor", name, flushes, bytes });
    } finally {
      await removeData("opfs", name);
    }
  },

  /** The OPFS floor plus the entries' serialization (made, stringified, encoded per flush), in a worker: what any JSONL writer pays. */
  async serializedFlushFloor(name: string, count: number, flushEvery: number): Promise<number> {
    try {
      return await inWorker({ task: "serializedFlushFloor", name, count, flushEvery });
    } finally {
      await removeData("opfs", name);
    }
  },

  async idbFloor(name: string, iterations: number, bytes: number): Promise<IdbFloor> {
    try {
      return await idbFloor(name, iterations, bytes);
    } finally {
      await removeData("indexeddb", name);
    }
  },

  /** Per-iteration ms of `bytes` written through a bare sync access handle, without and with flush(). */
  async syncHandleFloor(name: string, iterations: number, bytes: number): Promise<{ writeMs: number; writeFlushMs: number }> {
    try {
      return await inWorker({ task: "syncHandleFloor", name, iterations, bytes });
    } finally {
      await removeData("opfs", name);
    }
  },

  /** Per-iteration ms of a page → worker → page message round trip carrying `bytes` to the worker and a number back (no validation, no storage). */
  async messageFloor(iterations: number, bytes: number): Promise<number> {
    const worker = benchWorker();
    try {
      const data = new Uint8Array(bytes);
      await worker.run({ task: "echo", data }); // the worker's start-up is not part of it
      const start = performance.now();
      for (let i = 0; i < iterations; i++) await worker.run({ task: "echo", data });
      return (performance.now() - start) / iterations;
    } finally {
      worker.end();
    }
  },

  /**
   * Reading the large session file from OPFS (the prepared one) in `rangeBytes` ranges without
   * sessionkit: File.slice().arrayBuffer() in a worker, and the same with each range sent to the
   * page (a structured-clone copy, as the rpc sends bytes). Total ms of each.
   */
  async opfsReadFloor(rangeBytes: number): Promise<{ inWorkerMs: number; toPageMs: number }> {
    const root = openPorts.get("opfs")!.name;
    const worker = benchWorker();
    try {
      const size = await worker.run<number>({ task: "fileSize", root, path: OPEN_SESSION_PATH });
      const inWorkerMs = await worker.run<number>({ task: "readAll", root, path: OPEN_SESSION_PATH, rangeBytes });
      const start = performance.now();
      for (let offset = 0; offset < size; offset += rangeBytes) {
        await worker.run<Uint8Array>({ task: "readRange", root, path: OPEN_SESSION_PATH, offset, length: rangeBytes });
      }
      return { inWorkerMs, toPageMs: performance.now() - start };
    } finally {
      worker.end();
    }
  },
};

declare global {
  interface Window {
    bench: typeof bench;
  }
}

window.bench = bench;
document.querySelector("#status")!.textContent = "ready";
