/**
 * The browser soak's page (driven by ../browser.ts): appends to one session on IndexedDB and one
 * on OPFS (through its worker) until Chromium is killed, logging the ids each flush()
 * acknowledged; after a relaunch, reads the sessions back. It also logs what Chromium reports
 * lost when it opens the database.
 */
import { indexedDbStorage } from "../../../adapters/indexeddb/index.js";
import { opfsStorage } from "../../../adapters/opfs/index.js";
import { SessionManager, type StoragePort } from "../../../src/index.js";

export type Backend = "indexeddb" | "opfs";
export const BACKENDS: readonly Backend[] = ["indexeddb", "opfs"];
export type Paths = Record<Backend, string | null>;
export interface ReadBack {
  /** The file's size, or null when it is missing. */
  size: number | null;
  ids: string[];
  /** What the load reported, as "<kind>: <message>" (a torn last line is what a kill mid-write leaves). */
  problems: string[];
}

const CWD = "/home/dev/browser-soak";

const storages: Record<Backend, StoragePort> = {
  // A database Chromium finds corrupt is deleted and recreated empty; the soak counts that as a failure.
  indexeddb: indexedDbStorage({ dbName: "sessionkit-soak", onDataLoss: ({ dbName, message }) => console.log(`dataloss total of ${dbName}: ${message}`) }),
  opfs: opfsStorage({ root: "sessionkit-soak" }),
};

/** mulberry32, as test/shared/prng.ts. */
function prng(seed: number): () => number {
  let state = seed >>> 0;
  return () => {
    state = (state + 0x6d2b79f5) >>> 0;
    let t = state;
    t = Math.imul(t ^ (t >>> 15), t | 1);
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61);
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
  };
}

/** A macrotask turn (no timer clamping): lets the page answer the driver between flushes. */
function nextTask(): Promise<void> {
  return new Promise((resolve) => {
    const channel = new MessageChannel();
    channel.port1.onmessage = () => resolve();
    channel.port2.postMessage(null);
  });
}

async function appendForever(backend: Backend, sm: SessionManager, seed: number): Promise<void> {
  const random = prng(seed);
  for (let n = 0; ; n++) {
    await nextTask();
    const flushEvery = 1 + Math.floor(random() * 4);
    const ids: string[] = [];
    for (let i = 0; i < flushEvery; i++) {
      const text = `${backend} ${seed} #${n}.${i} ${"x".repeat(20 + Math.floor(random() * 2000))}`;
      ids.push(sm.appendMessage({ role: "user", content: text, timestamp: Date.now() }));
    }
    await sm.flush();
    console.log(`ack ${backend} ${ids.join(",")}`);
  }
}

const soak = {
  /** Each backend's session at its path (a new one where the path is null), appended to until the browser dies. */
  async start(paths: Paths, seed: number): Promise<Record<Backend, string>> {
    const opened: Partial<Record<Backend, string>> = {};
    for (const backend of BACKENDS) {
      const storage = storages[backend];
      const path = paths[backend];
      // Written from the first entry on (pi's rule would hold back a session without an assistant message).
      const sm = path ? await SessionManager.open(storage, path, { deferUntilAssistant: false }) : await SessionManager.create(storage, CWD, { deferUntilAssistant: false });
      if (path && sm.getEntries().length === 0) throw new Error(`${backend}: the session ${path} is missing or empty after the relaunch`);
      if (!path) {
        sm.appendMessage({ role: "user", content: `soak session on ${backend}`, timestamp: Date.now() });
        await sm.flush();
      }
      opened[backend] = sm.getSessionFile()!;
      void appendForever(backend, sm, seed + (backend === "opfs" ? 1 : 0)).catch((error: unknown) => console.log(`error ${backend} ${String(error)}`));
    }
    return opened as Record<Backend, string>;
  },

  /** The entry ids of each backend's session and the problems its load reported. */
  async read(paths: Record<Backend, string>): Promise<Record<Backend, ReadBack>> {
    const out: Partial<Record<Backend, ReadBack>> = {};
    for (const backend of BACKENDS) {
      const stat = await storages[backend].stat(paths[backend]);
      const sm = await SessionManager.open(storages[backend], paths[backend], { readOnly: true });
      out[backend] = { size: stat?.size ?? null, ids: sm.getEntries().map((entry) => entry.id), problems: sm.getLoadProblems().map((problem) => `${problem.kind}: ${problem.message}`) };
      await sm.close();
    }
    return out as Record<Backend, ReadBack>;
  },

  /** Removes each backend's session (none where the path is null: it was gone at the last check). */
  async remove(paths: Paths): Promise<void> {
    for (const backend of BACKENDS) {
      const path = paths[backend];
      if (path) await storages[backend].remove(path);
    }
  },
};

declare global {
  interface Window {
    soak: typeof soak;
  }
}

window.soak = soak;
document.querySelector("#status")!.textContent = "ready";
