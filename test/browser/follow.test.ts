/** SessionManager.follow in Chromium: the writer and the follower on two ports over the same IndexedDB / OPFS directory. */
import { afterAll } from "vitest";
import { indexedDbStorage } from "../../adapters/indexeddb/index.js";
import { memoryStorage } from "../../adapters/memory/index.js";
import { opfsStorage } from "../../adapters/opfs/index.js";
import { describeFollowSuite } from "../shared/follow-suite.js";

const opfsRoot = `sessionkit-follow-${crypto.randomUUID()}`;
afterAll(async () => {
  await (await navigator.storage.getDirectory()).removeEntry(opfsRoot, { recursive: true }).catch(() => {});
});

describeFollowSuite("indexeddb (two ports on one database: changes arrive over the BroadcastChannel)", async () => {
  const dbName = `sessionkit-follow-${crypto.randomUUID()}`;
  const writer = indexedDbStorage({ dbName });
  const reader = indexedDbStorage({ dbName });
  return {
    writer,
    reader,
    cleanup: async () => {
      await Promise.all([writer.close(), reader.close()]);
      await new Promise((resolve) => (indexedDB.deleteDatabase(dbName).onsuccess = resolve));
    },
  };
});

describeFollowSuite("opfs (two workers on one directory)", async () => {
  const root = `${opfsRoot}/${crypto.randomUUID()}`;
  const writer = opfsStorage({ root });
  const reader = opfsStorage({ root });
  return { writer, reader, cleanup: async () => void (await Promise.all([writer.close(), reader.close()])) };
});

describeFollowSuite("memory (in Chromium)", async () => {
  const port = memoryStorage();
  return { writer: port, reader: port };
});
