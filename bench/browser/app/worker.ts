/**
 * The bench's own dedicated worker: the append workload with the SessionManager in the worker on
 * the OPFS port (no rpc hop: how the README says to run a session where the handles are), and
 * floors (the cost of the bare primitives): OPFS sync access handles, OPFS file reads, and a
 * page ↔ worker message round trip, and that floor with the entries' serialization; and the workload on
 * the floor's own calls (bare-sync-port.ts).
 */
import { memoryStorage } from "../../../adapters/memory/index.js";
import { opfsWorkerStorage } from "../../../adapters/opfs/index.js";
import type { SyncAccessHandle } from "../../../adapters/opfs/directories.js";
import { bareSyncHandlePort } from "../bare-sync-port.js";
import { floorPieces, instrumented, serializedFlushes, timeAppends, timePairedAppends } from "../workload.js";

export type WorkerTask =
  | { task: "appends"; name: string; count: number; flushEvery: number; breakdown: boolean }
  | { task: "appendsInMemory"; count: number; flushEvery: number }
  | { task: "appendsOnBarePort"; name: string; count: number; flushEvery: number }
  | { task: "pairedAppends"; name: string; count: number; flushEvery: number }
  | { task: "syncHandleFloor"; name: string; iterations: number; bytes: number }
  | { task: "syncHandleFlushFloor"; name: string; flushes: number; bytes: number }
  | { task: "serializedFlushFloor"; name: string; count: number; flushEvery: number }
  | { task: "echo"; data: Uint8Array }
  | { task: "floorOpen"; name: string }
  | { task: "floorWriteFlush"; data: Uint8Array }
  | { task: "floorClose" }
  | { task: "fileSize"; root: string; path: string }
  | { task: "readAll"; root: string; path: string; rangeBytes: number }
  | { task: "readRange"; root: string; path: string; offset: number; length: number };


/** A File snapshot of `path` below the OPFS directory `root`. */
async function fileAt(root: string, path: string): Promise<File> {
  let dir = await (await navigator.storage.getDirectory()).getDirectoryHandle(root);
  const segments = path.split("/");
  for (const segment of segments.slice(0, -1)) dir = await dir.getDirectoryHandle(segment);
  return (await dir.getFileHandle(segments[segments.length - 1]!)).getFile();
}

/** A sync access handle on a new file in the OPFS directory `name`: what the floors write through. */
async function floorHandle(name: string): Promise<SyncAccessHandle> {
  const dir = await (await navigator.storage.getDirectory()).getDirectoryHandle(name, { create: true });
  const file = (await dir.getFileHandle("floor.bin", { create: true })) as FileSystemFileHandle & { createSyncAccessHandle(): Promise<SyncAccessHandle> };
  return file.createSyncAccessHandle();
}

/** The rpc floor's open file, between its messages. */
let pageFloor: { access: SyncAccessHandle; at: number } | undefined;

async function run(task: WorkerTask): Promise<unknown> {
  switch (task.task) {
    case "echo":
      // The bytes go one way, as an append's do; the reply is small, as the rpc's is.
      return task.data.length;
    case "fileSize":
      return (await fileAt(task.root, task.path)).size;
    case "readAll": {
      const start = performance.now();
      const file = await fileAt(task.root, task.path);
      for (let offset = 0; offset < file.size; offset += task.rangeBytes) {
        await file.slice(offset, offset + task.rangeBytes).arrayBuffer();
      }
      return performance.now() - start;
    }
    case "readRange": {
      const file = await fileAt(task.root, task.path);
      return new Uint8Array(await file.slice(task.offset, task.offset + task.length).arrayBuffer());
    }
    case "appends": {
      const port = opfsWorkerStorage({ root: task.name });
      try {
        await port.stat("warm-up");
        if (!task.breakdown) return await timeAppends(port, task.count, task.flushEvery);
        return await instrumented(port, (timed, hooks) => timeAppends(timed, task.count, task.flushEvery, hooks));
      } finally {
        await port.close();
      }
    }
    case "pairedAppends": {
      // Ours on the OPFS port and, after each of our flushes, the floor plus serialization for the
      // same flush on a file of its own (as serializedFlushFloor does, step by step).
      const port = opfsWorkerStorage({ root: task.name });
      const access = await floorHandle(`${task.name}-floor`);
      const flushes = serializedFlushes(task.count, task.flushEvery)[Symbol.iterator]();
      const encoder = new TextEncoder();
      const buffer = new Uint8Array(1 << 20);
      let at = 0;
      try {
        await port.stat("warm-up");
        return await timePairedAppends(port, task.count, task.flushEvery, async () => {
          const bytes = buffer.subarray(0, encoder.encodeInto(flushes.next().value as string, buffer).written);
          access.write(bytes, { at });
          access.flush();
          at += bytes.length;
        });
      } finally {
        access.close();
        await port.close();
        await (await navigator.storage.getDirectory()).removeEntry(`${task.name}-floor`, { recursive: true }).catch(() => {});
      }
    }
    case "appendsOnBarePort": {
      const port = bareSyncHandlePort(await (await navigator.storage.getDirectory()).getDirectoryHandle(task.name, { create: true }));
      try {
        return await timeAppends(port, task.count, task.flushEvery);
      } finally {
        await port.close();
      }
    }
    case "appendsInMemory":
      return timeAppends(memoryStorage(), task.count, task.flushEvery);
    case "syncHandleFlushFloor": {
      // The appends' OPFS floor: per flush, the flush's bytes written at the end and flush()ed.
      const access = await floorHandle(task.name);
      const pieces = floorPieces(task.flushes, task.bytes);
      try {
        const start = performance.now();
        for (let i = 0, at = 0; i < task.flushes; i++, at += task.bytes) {
          access.write(pieces[i]!, { at });
          access.flush();
        }
        return performance.now() - start;
      } finally {
        access.close();
      }
    }
    case "serializedFlushFloor": {
      // The floor plus what any JSONL writer of these entries must do: per flush, its entries made
      // (id, parent, time) and serialized as lines, encoded, written at the end and flush()ed.
      const access = await floorHandle(task.name);
      const flushes = serializedFlushes(task.count, task.flushEvery);
      const encoder = new TextEncoder();
      const buffer = new Uint8Array(1 << 20); // encodeInto, the cheaper way (SessionManager's too)
      try {
        const start = performance.now();
        let at = 0;
        for (const lines of flushes) {
          const bytes = buffer.subarray(0, encoder.encodeInto(lines, buffer).written);
          access.write(bytes, { at });
          access.flush();
          at += bytes.length;
        }
        return performance.now() - start;
      } finally {
        access.close();
      }
    }
    // The rpc floor's worker side (the page serializes and sends each flush): a sync handle kept
    // open between messages, each message's bytes written at the end and flush()ed.
    case "floorOpen":
      pageFloor = { access: await floorHandle(task.name), at: 0 };
      return null;
    case "floorWriteFlush": {
      const floor = pageFloor!;
      floor.access.write(task.data, { at: floor.at });
      floor.access.flush();
      floor.at += task.data.length;
      return task.data.length;
    }
    case "floorClose":
      pageFloor?.access.close();
      pageFloor = undefined;
      return null;
    case "syncHandleFloor": {
      const access = await floorHandle(task.name);
      const data = new Uint8Array(task.bytes).fill(0x61);
      try {
        let at = 0;
        let start = performance.now();
        for (let i = 0; i < task.iterations; i++, at += data.length) access.write(data, { at });
        const writeMs = performance.now() - start;
        start = performance.now();
        for (let i = 0; i < task.iterations; i++, at += data.length) {
          access.write(data, { at });
          access.flush();
        }
        return { writeMs: writeMs / task.iterations, writeFlushMs: (performance.now() - start) / task.iterations };
      } finally {
        access.close();
      }
    }
  }
}

self.onmessage = async (event: MessageEvent<WorkerTask>) => {
  try {
    self.postMessage({ result: await run(event.data) });
  } catch (error) {
    self.postMessage({ error: String(error) });
  }
};
