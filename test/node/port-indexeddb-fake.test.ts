/**
 * Fast unit runs of the IndexedDB adapter on fake-indexeddb. It models neither quota, durability
 * nor other tabs: the Chromium suite (test/browser/port-indexeddb.test.ts) is the one that counts.
 */
import "fake-indexeddb/auto";
import { describe, expect, it } from "vitest";
import { indexedDbStorage } from "../../adapters/indexeddb/index.js";
import type { StoragePort } from "../../src/port.js";
import { describePortConformance, expectStorageError } from "../../src/testing/index.js";

/** The port without acquireLock: Node has no Web Locks (navigator.locks). */
function withoutLocks(port: StoragePort): StoragePort {
  return {
    kind: port.kind,
    read: (path, range) => port.read(path, range),
    stat: (path) => port.stat(path),
    list: (dir) => port.list(dir),
    append: (path, data) => port.append(path, data),
    write: (path, data) => port.write(path, data),
    truncate: (path, size) => port.truncate(path, size),
    remove: (path) => port.remove(path),
    sync: (path) => port.sync!(path),
    watch: (dir, onChange) => port.watch!(dir, onChange),
    close: () => port.close!(),
  };
}

describePortConformance(
  "indexeddb on fake-indexeddb",
  async () => {
    const dbName = `sessionkit-test-${crypto.randomUUID()}`;
    const port = withoutLocks(indexedDbStorage({ dbName }));
    // Node's BroadcastChannel carries the second port's changes, as it carries another tab's in a browser.
    return { port, openSecond: async () => withoutLocks(indexedDbStorage({ dbName })), cleanup: () => port.close!() };
  },
  { sync: true, locks: false, watch: true, secondPort: true },
);

describe("indexeddb adapter without Web Locks", () => {
  it("acquireLock fails with 'unsupported'", async () => {
    const port = indexedDbStorage({ dbName: `sessionkit-test-${crypto.randomUUID()}` });
    await expectStorageError(port.acquireLock("a"), "unsupported");
    await port.close();
  });

  it("reopens a database created by other code, adding its stores", async () => {
    const dbName = `sessionkit-test-${crypto.randomUUID()}`;
    await new Promise<void>((resolve) => {
      const request = indexedDB.open(dbName, 3);
      request.onupgradeneeded = () => request.result.createObjectStore("unrelated");
      request.onsuccess = () => (request.result.close(), resolve());
    });
    const port = indexedDbStorage({ dbName });
    await port.append("a", new Uint8Array([1, 2]));
    expect(await port.read("a")).toEqual(new Uint8Array([1, 2]));
    await port.close();
  });
});
