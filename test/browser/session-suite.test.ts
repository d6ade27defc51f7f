/**
 * The shared SessionManager suite in Chromium: IndexedDB (in pi's dialect and seed 003's), OPFS
 * through its worker, and memory.
 * Each test gets a database / OPFS directory of its own (browser storage is shared between files).
 */
import { afterAll } from "vitest";
import { indexedDbStorage, type IndexedDbStorage } from "../../adapters/indexeddb/index.js";
import { memoryStorage } from "../../adapters/memory/index.js";
import { opfsStorage, type OpfsStorage } from "../../adapters/opfs/index.js";
import { describeSessionManagerSuite } from "../shared/session-suite.js";

function deleteDatabase(name: string): Promise<void> {
  return new Promise((resolve, reject) => {
    const request = indexedDB.deleteDatabase(name);
    request.onsuccess = () => resolve();
    request.onerror = () => reject(request.error);
  });
}

const indexedDbUnderTest = async () => {
  const dbName = `sessionkit-session-suite-${crypto.randomUUID()}`;
  const ports: IndexedDbStorage[] = [];
  const openPort = () => {
    const port = indexedDbStorage({ dbName });
    ports.push(port);
    return port;
  };
  const storage = openPort();
  return {
    storage,
    reopen: async () => {
      await storage.close();
      return openPort();
    },
    openSecond: async () => openPort(),
    cleanup: async () => {
      await Promise.all(ports.map((port) => port.close()));
      await deleteDatabase(dbName);
    },
  };
};

describeSessionManagerSuite("indexeddb", indexedDbUnderTest, { persistent: true });
describeSessionManagerSuite("indexeddb, seed 003's dialect in a flat store", indexedDbUnderTest, { persistent: true, layout: "seed003" });

/** Every OPFS directory of this file lives below this one. */
const opfsTestRoot = `sessionkit-session-suite-${crypto.randomUUID()}`;
afterAll(async () => {
  await (await navigator.storage.getDirectory()).removeEntry(opfsTestRoot, { recursive: true }).catch(() => {});
});

describeSessionManagerSuite(
  "opfs (worker with sync access handles, through rpc)",
  async () => {
    const root = `${opfsTestRoot}/${crypto.randomUUID()}`;
    const ports: OpfsStorage[] = [];
    // Each port starts a worker of its own, as each page does; close() ends it.
    const openPort = () => {
      const port = opfsStorage({ root });
      ports.push(port);
      return port;
    };
    const storage = openPort();
    return {
      storage,
      reopen: async () => {
        await storage.close();
        return openPort();
      },
      openSecond: async () => openPort(),
      cleanup: async () => {
        await Promise.all(ports.map((port) => port.close()));
      },
    };
  },
  { persistent: true },
);

describeSessionManagerSuite("memory (in Chromium)", async () => ({ storage: memoryStorage() }));
