import { openDB } from "idb";
import { afterAll, afterEach, describe, expect, it, vi } from "vitest";
import { CHUNK_BYTES, MERGE_IDLE_MS, TAIL_LIMIT_BYTES, TAIL_MERGE_BYTES, indexedDbStorage, type FileMeta, type IndexedDbStorage } from "../../adapters/indexeddb/index.js";
import { SessionManager } from "../../src/index.js";
import { isStorageError } from "../../src/port.js";
import { assistantMsg, userMsg } from "../shared/messages.js";
import { describePortConformance } from "../../src/testing/index.js";
import { deleteBucket, openSmallBucket } from "./storage-quota.js";

const text = (s: string) => new TextEncoder().encode(s);

/** Bytes that do not compress (getRandomValues fills at most 64 KiB per call). */
function randomBytes(length: number): Uint8Array {
  const out = new Uint8Array(length);
  for (let at = 0; at < length; at += 65536) crypto.getRandomValues(out.subarray(at, at + 65536));
  return out;
}
const decode = (bytes: Uint8Array | null) => (bytes === null ? null : new TextDecoder().decode(bytes));

const dbNameOfPort = new Map<IndexedDbStorage, string>();

/** A port on a database no other test uses (or on the database of an earlier port). */
function freshPort(dbName = `sessionkit-test-${crypto.randomUUID()}`, factory?: IDBFactory): IndexedDbStorage {
  const port = indexedDbStorage({ dbName, ...(factory ? { indexedDB: factory } : {}) });
  dbNameOfPort.set(port, dbName);
  return port;
}

function dbNameOf(port: IndexedDbStorage): string {
  return dbNameOfPort.get(port) ?? "";
}

/** Reads the raw records of one file, bypassing the adapter. */
async function rawRecords(dbName: string, path: string): Promise<{ meta: FileMeta | undefined; chunkKeys: [string, number][] }> {
  const db = await openDB(dbName);
  try {
    const meta = (await db.get("files", path)) as FileMeta | undefined;
    const chunkKeys = (await db.getAllKeys("chunks", IDBKeyRange.bound([path, 0], [path, Infinity]))) as [string, number][];
    return { meta, chunkKeys };
  } finally {
    db.close();
  }
}

afterEach(() => {
  vi.restoreAllMocks();
});

afterAll(async () => {
  await Promise.all([...dbNameOfPort.keys()].map((port) => port.close()));
  await Promise.all([...new Set(dbNameOfPort.values())].map((name) => new Promise((resolve) => (indexedDB.deleteDatabase(name).onsuccess = resolve))));
});

const conformanceDb = `sessionkit-test-${crypto.randomUUID()}`;
describePortConformance(
  "indexeddb",
  async () => {
    const port = freshPort(conformanceDb);
    // Another port on the database: its changes reach ours only over the BroadcastChannel.
    return { port, openSecond: async () => freshPort(conformanceDb), cleanup: () => port.close() };
  },
  { sync: true, locks: true, watch: true, secondPort: true },
);

/** Runs `body` with timers and Date faked (the idle merges' clock), real again afterwards. */
async function withFakeClock(body: () => Promise<void>): Promise<void> {
  vi.useFakeTimers({ toFake: ["setTimeout", "clearTimeout", "Date"] });
  try {
    await body();
  } finally {
    vi.useRealTimers();
  }
}

describe("indexeddb adapter", () => {
  it("a new port on the same database sees the files (reopen after reload)", async () => {
    const first = freshPort();
    await first.append("sessions/a.jsonl", text("one\n"));
    await first.append("sessions/a.jsonl", text("two\n"));
    await first.write("blobs/x", text("blob"));
    await first.close();

    const second = freshPort(dbNameOf(first));
    expect(decode(await second.read("sessions/a.jsonl"))).toBe("one\ntwo\n");
    expect(decode(await second.read("blobs/x"))).toBe("blob");
    expect((await second.list("")).map((entry) => `${entry.kind}:${entry.name}`)).toEqual(["dir:blobs", "dir:sessions"]);
  });

  it("coalesces appends issued together into one transaction and one chunk, in call order", async () => {
    const port = freshPort();
    await port.append("s.jsonl", text("")); // opens the database before counting
    const transaction = vi.spyOn(IDBDatabase.prototype, "transaction");
    const lines = Array.from({ length: 50 }, (_, i) => `line ${i}\n`);
    await Promise.all(lines.map((line) => port.append("s.jsonl", text(line))));

    expect(transaction).toHaveBeenCalledTimes(1);
    expect(decode(await port.read("s.jsonl"))).toBe(lines.join(""));
    const { meta, chunkKeys } = await rawRecords(dbNameOf(port), "s.jsonl");
    expect(chunkKeys).toEqual([["s.jsonl", 0]]);
    expect(meta).toMatchObject({ size: lines.join("").length, chunkCount: 1 });
  });

  it("keeps a mutation issued after a read out of the read's result", async () => {
    const port = freshPort();
    await port.append("s", text("a"));
    const [before] = await Promise.all([port.read("s"), port.append("s", text("b"))]);
    expect(decode(before)).toBe("a");
    expect(decode(await port.read("s"))).toBe("ab");
  });

  it("small appends add a record each; once the file is idle, a tail of 64 KiB or more merges into one; large appends add their own", async () => {
    await withFakeClock(async () => {
      const port = freshPort();
      const KiB = 1024;
      const part = (letter: string) => new Uint8Array(20 * KiB).fill(letter.charCodeAt(0));
      for (const letter of "abcd") await port.append("s", part(letter));
      // 80 KiB of small records: due for merging, but not on the appends' way.
      let { chunkKeys, meta } = await rawRecords(dbNameOf(port), "s");
      expect(chunkKeys.map((key) => key[1])).toEqual([0, 20 * KiB, 40 * KiB, 60 * KiB]);
      expect(meta).toMatchObject({ size: 80 * KiB, chunkCount: 4, tailOffset: 0 });

      vi.advanceTimersByTime(MERGE_IDLE_MS - 1);
      await port.read("s"); // ordered after any transaction the timers started
      expect((await rawRecords(dbNameOf(port), "s")).chunkKeys).toHaveLength(4);
      vi.advanceTimersByTime(1);
      await port.read("s");
      ({ chunkKeys, meta } = await rawRecords(dbNameOf(port), "s"));
      expect(chunkKeys.map((key) => key[1])).toEqual([0]);
      expect(meta).toMatchObject({ size: 80 * KiB, chunkCount: 1, lastChunkOffset: 0, tailOffset: 80 * KiB });

      await port.append("s", new Uint8Array(TAIL_MERGE_BYTES).fill(66)); // large: a record of its own
      await port.append("s", text("five\n")); // starts a new tail
      ({ chunkKeys, meta } = await rawRecords(dbNameOf(port), "s"));
      expect(chunkKeys.map((key) => key[1])).toEqual([0, 80 * KiB, 80 * KiB + TAIL_MERGE_BYTES]);
      expect(meta).toMatchObject({ size: 80 * KiB + TAIL_MERGE_BYTES + 5, chunkCount: 3, tailOffset: 80 * KiB + TAIL_MERGE_BYTES });
      expect(decode(await port.read("s", { offset: 80 * KiB + TAIL_MERGE_BYTES - 2 }))).toBe("BBfive\n");
      expect(decode(await port.read("s", { offset: 20 * KiB - 1, length: 2 }))).toBe("ab");
      expect(decode(await port.read("s", { offset: 60 * KiB - 1, length: 2 }))).toBe("cd");
      // A 5-byte tail is not due: the timers start nothing.
      vi.advanceTimersByTime(10 * MERGE_IDLE_MS);
      await port.read("s");
      expect((await rawRecords(dbNameOf(port), "s")).chunkKeys).toHaveLength(3);
    });
  });

  it("a writer that keeps writing puts the merge off; close runs it", async () => {
    await withFakeClock(async () => {
      const port = freshPort();
      for (let i = 0; i < 6; i++) {
        await port.append("s", new Uint8Array(30 << 10).fill(97 + i));
        vi.advanceTimersByTime(MERGE_IDLE_MS / 2);
        await port.read("s", { offset: 0, length: 1 });
      }
      expect((await rawRecords(dbNameOf(port), "s")).chunkKeys).toHaveLength(6);
      await port.close();
      const { chunkKeys, meta } = await rawRecords(dbNameOf(port), "s");
      expect(chunkKeys.map((key) => key[1])).toEqual([0]);
      expect(meta).toMatchObject({ size: 180 << 10, chunkCount: 1, tailOffset: 180 << 10 });
      const reopened = freshPort(dbNameOf(port));
      const bytes = (await reopened.read("s"))!;
      expect(bytes.length).toBe(180 << 10);
      expect([0, 1, 2, 3, 4, 5].map((i) => bytes[i * (30 << 10)])).toEqual([97, 98, 99, 100, 101, 102]);
    });
  });

  it("an append merges the tail itself before it would pass TAIL_LIMIT_BYTES, into records of at most CHUNK_BYTES", async () => {
    await withFakeClock(async () => {
      const port = freshPort();
      const piece = TAIL_MERGE_BYTES - 4096; // small: a record each
      const fits = Math.floor(TAIL_LIMIT_BYTES / piece);
      for (let i = 0; i < fits; i++) await port.append("s", new Uint8Array(piece).fill(i % 251));
      expect((await rawRecords(dbNameOf(port), "s")).chunkKeys).toHaveLength(fits);
      await port.append("s", new Uint8Array(piece).fill(252)); // would pass the limit
      const { chunkKeys, meta } = await rawRecords(dbNameOf(port), "s");
      const merged = fits * piece;
      const expected = Array.from({ length: Math.ceil(merged / CHUNK_BYTES) }, (_, i) => i * CHUNK_BYTES);
      expect(chunkKeys.map((key) => key[1])).toEqual([...expected, merged]);
      expect(meta).toMatchObject({ size: merged + piece, chunkCount: expected.length + 1, lastChunkOffset: merged, tailOffset: merged });
      const bytes = (await port.read("s"))!;
      expect(bytes.length).toBe(merged + piece);
      for (let i = 0; i < fits; i += 37) expect(bytes[i * piece + 17]).toBe(i % 251);
      expect(bytes[merged]).toBe(252);
    });
  });

  it("uses relaxed transactions, and a strict one for sync", async () => {
    const port = freshPort();
    await port.append("s", text("x"));
    const transaction = vi.spyOn(IDBDatabase.prototype, "transaction");
    await port.append("s", text("y"));
    await port.sync("s");
    expect(transaction.mock.calls.map((call) => call[2]?.durability)).toEqual(["relaxed", "strict"]);
    await expect(port.sync("missing")).rejects.toSatisfy((error) => isStorageError(error, "not-found"));
  });

  it("a sync issued with appends joins their batch: one strict transaction commits both", async () => {
    const port = freshPort();
    await port.append("s", text("x"));
    const transaction = vi.spyOn(IDBDatabase.prototype, "transaction");
    await Promise.all([port.append("s", text("y")), port.sync("s")]);
    expect(transaction.mock.calls.map((call) => call[2]?.durability)).toEqual(["strict"]);
    expect(decode(await port.read("s"))).toBe("xy");

    // A sync of a missing file fails alone; the rest of its batch commits.
    const [appended, synced] = await Promise.allSettled([port.append("s", text("z")), port.sync("missing")]);
    expect(appended.status).toBe("fulfilled");
    expect(synced.status === "rejected" && isStorageError(synced.reason, "not-found")).toBe(true);
    expect(decode(await port.read("s"))).toBe("xyz");
  });

  it("SessionManager.flush() commits its entries and the durability barrier in one strict transaction", async () => {
    const port = freshPort();
    const sm = await SessionManager.create(port, "/work/app");
    sm.appendMessage(userMsg("first"));
    sm.appendMessage(assistantMsg("the file is written from the first answer on"));
    await sm.flush();
    const transaction = vi.spyOn(IDBDatabase.prototype, "transaction");
    for (let i = 0; i < 4; i++) sm.appendMessage(i % 2 ? assistantMsg(`answer ${i}`) : userMsg(`question ${i}`));
    await sm.flush();
    expect(transaction.mock.calls.map((call) => call[2]?.durability)).toEqual(["strict"]);
    const path = sm.getSessionFile()!;
    await sm.close();
    const lines = decode(await port.read(path))!.trimEnd().split("\n");
    expect(lines.map((line) => JSON.parse(line).type)).toEqual(["session", ...Array(6).fill("message")]);
  });

  it("an append on a file it wrote last issues its writes without waiting for the metadata read, which checks them", async () => {
    const port = freshPort();
    const order: string[] = [];
    const get = IDBObjectStore.prototype.get;
    vi.spyOn(IDBObjectStore.prototype, "get").mockImplementation(function (this: IDBObjectStore, query) {
      order.push(`get ${this.name}`);
      const request = get.call(this, query);
      request.addEventListener("success", () => order.push(`got ${this.name}`));
      return request;
    });
    for (const method of ["add", "put"] as const) {
      const original = IDBObjectStore.prototype[method];
      vi.spyOn(IDBObjectStore.prototype, method).mockImplementation(function (this: IDBObjectStore, value, key) {
        order.push(`${method} ${this.name}`);
        return original.call(this, value, key);
      });
    }

    await port.append("s", text("first")); // a new file: read, then write
    expect(order.splice(0)).toEqual(["get files", "got files", "add chunks", "put files"]);
    await port.append("s", text("+second")); // remembered: writes go out with the check
    expect(order.splice(0)).toEqual(["get files", "add chunks", "put files", "got files"]);
    expect(decode(await port.read("s"))).toBe("first+second");
  });

  it("remembered metadata that another port made stale is redone from the stored file, in order", async () => {
    const mine = freshPort();
    const other = freshPort(dbNameOf(mine));
    await mine.append("s", text("a"));
    const abort = vi.spyOn(IDBTransaction.prototype, "abort");

    await other.append("s", text("B"));
    await mine.append("s", text("c"));
    expect(abort).toHaveBeenCalledTimes(1); // the attempt built on the stale metadata
    expect(decode(await other.read("s"))).toBe("aBc");

    await other.write("s", text("new"));
    await mine.append("s", text("d"));
    expect(decode(await mine.read("s"))).toBe("newd");

    await other.truncate("s", 2);
    // Operations issued behind a redone batch still run after it: the read sees "e", "f" lands after it.
    const [, seen] = await Promise.all([mine.append("s", text("e")), mine.read("s"), mine.append("s", text("f"))]);
    expect(decode(seen)).toBe("nee");
    expect(decode(await mine.read("s"))).toBe("neef");

    await other.remove("s");
    await Promise.all([mine.append("s", text("g")), mine.sync("s")]);
    expect(decode(await other.read("s"))).toBe("g");
    expect(await other.stat("s")).toMatchObject({ size: 1 });
  });

  it("while it holds a file's lock, an append commits without reading the metadata back; the lock drops what it remembered", async () => {
    const mine = freshPort();
    const other = freshPort(dbNameOf(mine));
    await mine.append("s", text("a"));
    await other.append("s", text("B")); // before mine takes the lock: what mine remembers is stale
    const get = vi.spyOn(IDBObjectStore.prototype, "get");
    const lock = await mine.acquireLock("s");

    await mine.append("s", text("c")); // the first append under the lock reads the stored file
    expect(get).toHaveBeenCalledTimes(1);
    get.mockClear();
    await Promise.all([mine.append("s", text("d")), mine.sync("s")]);
    await mine.append("s", text("e"));
    expect(get).not.toHaveBeenCalled();
    expect(decode(await other.read("s"))).toBe("aBcde");

    await lock.release(); // from now on its appends are checked again
    await other.append("s", text("F"));
    await mine.append("s", text("g"));
    expect(decode(await mine.read("s"))).toBe("aBcdeFg");
  });

  it("merges trailing records it wrote itself without reading them back; a new port reads them", async () => {
    await withFakeClock(async () => {
      const port = freshPort();
      const lock = await port.acquireLock("s");
      const KiB = 1024;
      const part = (letter: string) => new Uint8Array(20 * KiB).fill(letter.charCodeAt(0));
      const getAll = vi.spyOn(IDBObjectStore.prototype, "getAll");
      for (const letter of "abcd") await port.append("s", part(letter));
      vi.advanceTimersByTime(MERGE_IDLE_MS);
      await port.stat("s"); // ordered after the merge
      expect(getAll).not.toHaveBeenCalled();
      expect((await rawRecords(dbNameOf(port), "s")).chunkKeys.map((key) => key[1])).toEqual([0]);
      await lock.release();
      await port.close();

      const reopened = freshPort(dbNameOf(port));
      for (const letter of "efgh") await reopened.append("s", part(letter)); // built on the stored metadata
      vi.advanceTimersByTime(MERGE_IDLE_MS);
      await reopened.stat("s");
      expect(getAll.mock.calls.filter(([range]) => range instanceof IDBKeyRange)).toHaveLength(1);
      const expected = "abcdefgh".split("").map((letter) => letter.repeat(20 * KiB)).join("");
      expect(decode(await reopened.read("s"))).toBe(expected);
      expect((await rawRecords(dbNameOf(port), "s")).chunkKeys.map((key) => key[1])).toEqual([0, 80 * KiB]);
    });
  });

  it("group commit: flushes of several sessions issued while a transaction commits share the next one", async () => {
    const port = freshPort();
    const sessions = await Promise.all(Array.from({ length: 8 }, (_, i) => SessionManager.create(port, `/work/app-${i}`)));
    for (const sm of sessions) {
      sm.appendMessage(userMsg("first"));
      sm.appendMessage(assistantMsg("written from here on"));
    }
    await Promise.all(sessions.map((sm) => sm.flush()));
    const transaction = vi.spyOn(IDBDatabase.prototype, "transaction");
    const ROUNDS = 10;
    // Each session flushes ROUNDS times, i + 1 macrotasks after its previous flush resolved: the
    // flushes arrive at different moments, not in one tick (which would batch them anyway).
    const macrotask = () => new Promise((resolve) => setTimeout(resolve, 0));
    await Promise.all(
      sessions.map(async (sm, i) => {
        for (let round = 0; round < ROUNDS; round++) {
          for (let wait = 0; wait <= i; wait++) await macrotask();
          sm.appendMessage(userMsg(`session ${i} round ${round}`));
          await sm.flush();
        }
      }),
    );
    const flushes = sessions.length * ROUNDS;
    const strict = transaction.mock.calls.filter((call) => call[2]?.durability === "strict").length;
    expect(transaction.mock.calls.length).toBe(strict); // every write is a flush's
    // One transaction per flush without group commit; measured here: 37 for 80.
    expect(strict).toBeLessThanOrEqual(flushes * 0.75);
    for (const [i, sm] of sessions.entries()) {
      const lines = decode(await port.read(sm.getSessionFile()!))!.trimEnd().split("\n");
      expect(lines.slice(3).map((line) => JSON.parse(line).message.content)).toEqual(Array.from({ length: ROUNDS }, (_, round) => `session ${i} round ${round}`));
      await sm.close();
    }
  });

  it("a range read loads only the chunks it overlaps", async () => {
    const port = freshPort();
    const part = 40 << 10; // two parts would pass the tail limit: one record per part
    for (const letter of "abcd") await port.append("s", new Uint8Array(part).fill(letter.charCodeAt(0)));
    expect((await rawRecords(dbNameOf(port), "s")).chunkKeys.map((key) => key[1])).toEqual([0, part, 2 * part, 3 * part]);
    // Damage the first chunk behind the adapter's back: reads that need it must notice,
    // reads that do not need it must not touch it.
    const db = await openDB(dbNameOf(port));
    await db.delete("chunks", ["s", 0]);
    db.close();

    expect(decode(await port.read("s", { offset: 3 * part - 3, length: 5 }))).toBe("cccdd");
    expect(decode(await port.read("s", { offset: part + 1, length: 2 }))).toBe("bb");
    await expect(port.read("s", { offset: part - 1, length: 2 })).rejects.toSatisfy((error) => isStorageError(error, "corrupt"));
    await expect(port.read("s")).rejects.toSatisfy((error) => isStorageError(error, "corrupt"));
  });

  it("cuts large writes into 1 MiB chunks and reads across chunk boundaries", async () => {
    const port = freshPort();
    const data = new Uint8Array(2 * CHUNK_BYTES + 1000).map((_, i) => i % 251);
    await port.write("big", data);
    const { chunkKeys, meta } = await rawRecords(dbNameOf(port), "big");
    expect(chunkKeys.map((key) => key[1])).toEqual([0, CHUNK_BYTES, 2 * CHUNK_BYTES]);
    expect(meta).toMatchObject({ size: data.length, chunkCount: 3 });
    const across = await port.read("big", { offset: CHUNK_BYTES - 10, length: 20 });
    expect(across).toEqual(data.slice(CHUNK_BYTES - 10, CHUNK_BYTES + 10));

    await port.write("big", text("small")); // replaces every old chunk
    expect((await rawRecords(dbNameOf(port), "big")).chunkKeys).toEqual([["big", 0]]);
    expect(decode(await port.read("big"))).toBe("small");
  });

  it("truncates inside a chunk, drops the chunks past the end, and appends after the cut", async () => {
    const port = freshPort();
    const part = 40 << 10;
    for (const letter of "abc") await port.append("s", new Uint8Array(part).fill(letter.charCodeAt(0)));
    await port.truncate("s", part + 10);
    expect((await rawRecords(dbNameOf(port), "s")).meta).toMatchObject({ size: part + 10, chunkCount: 2, lastChunkOffset: part });
    await port.append("s", text("xy"));
    expect(decode(await port.read("s", { offset: part + 8 }))).toBe("bbxy");
    expect((await port.read("s"))!.length).toBe(part + 12);
  });

  it("a quota failure gives StorageError 'quota' and leaves the file as it was", async () => {
    const bucket = await openSmallBucket(4 << 20);
    const port = freshPort(`sessionkit-test-${crypto.randomUUID()}`, bucket.indexedDB);
    try {
      await port.write("s.jsonl", text("kept\n"));
      // Random: Chromium may compress IndexedDB values (150 does), and 8 MiB of one byte value
      // then fits the 4 MiB bucket.
      const tooBig = randomBytes(8 << 20);
      await expect(port.write("s.jsonl", tooBig)).rejects.toSatisfy((error) => isStorageError(error, "quota"));
      await expect(port.write("new.bin", tooBig)).rejects.toSatisfy((error) => isStorageError(error, "quota"));
      expect(await port.stat("new.bin")).toBeNull();
      // Every caller of a failed batch gets the quota error; none of the batch lands.
      const batch = [port.append("s.jsonl", text("lost\n")), port.append("s.jsonl", tooBig)];
      for (const result of await Promise.allSettled(batch)) {
        expect(result.status === "rejected" && isStorageError(result.reason, "quota")).toBe(true);
      }
      expect(decode(await port.read("s.jsonl"))).toBe("kept\n");
      expect(await port.stat("s.jsonl")).toMatchObject({ size: 5 });
      // Below the quota the port goes on working, when the browser has room left. Chromium writes a
      // refused write's 1 MiB records as blob files, and in some runs (4 of 30 here) those written
      // before the quota was hit stay counted in the bucket's usage: it stayed over the quota for
      // 90 s, through closing and reopening the database. Then the port must refuse cleanly again.
      const { usage, quota } = await bucket.estimate();
      if (usage + (64 << 10) > quota) {
        console.log(`quota: Chromium still counts ${usage - quota} bytes over the bucket's quota after the refused writes`);
        await expect(port.append("s.jsonl", text("more\n"))).rejects.toSatisfy((error) => isStorageError(error, "quota"));
        expect(decode(await port.read("s.jsonl"))).toBe("kept\n");
        return;
      }
      // Chromium's accounting may lag the aborts (once 2 s on a loaded machine): retry up to 15 s.
      const refusedSince = performance.now();
      for (let attempt = 0; ; attempt++) {
        const appended = await port.append("s.jsonl", text("more\n")).then(() => true, (error: unknown) => {
          if (!isStorageError(error, "quota") || performance.now() - refusedSince > 15_000) throw error;
          return false;
        });
        if (appended) {
          if (attempt > 0) console.log(`quota: an append below the quota was refused for ${Math.round(performance.now() - refusedSince)} ms after the failures (${attempt} retries)`);
          break;
        }
        await new Promise((resolve) => setTimeout(resolve, 100));
      }
      expect(decode(await port.read("s.jsonl"))).toBe("kept\nmore\n");
    } finally {
      await port.close();
      await deleteBucket(bucket);
    }
  });

  it("closes for another tab's upgrade (blocking) and reopens on next use", async () => {
    const port = freshPort();
    await port.append("s", text("before"));
    const name = dbNameOf(port);
    const { version } = await openDB(name).then((db) => (db.close(), db));

    let blocked = false;
    const upgraded = await openDB(name, version + 1, { blocked: () => (blocked = true) });
    expect(blocked).toBe(false);
    upgraded.close();

    await port.append("s", text("+after"));
    expect(decode(await port.read("s"))).toBe("before+after");
  });

  it("reopens and retries once when the connection was dropped without notice", async () => {
    const port = freshPort();
    const transaction = vi.spyOn(IDBDatabase.prototype, "transaction");
    await port.append("s", text("a"));
    // What the browser does when its IndexedDB backend goes away: the connection is closed and
    // the next transaction() throws InvalidStateError.
    (transaction.mock.contexts[0] as IDBDatabase).close();
    await port.append("s", text("b"));
    expect(decode(await port.read("s"))).toBe("ab");
  });

  it("Web Locks: a second holder gets 'locked' until the first releases", async () => {
    const first = freshPort();
    const second = freshPort(dbNameOf(first));
    const lock = await first.acquireLock("sessions/a.jsonl");
    await expect(second.acquireLock("sessions/a.jsonl")).rejects.toSatisfy((error) => isStorageError(error, "locked"));
    const other = await second.acquireLock("sessions/b.jsonl"); // other keys are free
    await lock.release();
    const again = await second.acquireLock("sessions/a.jsonl");
    await Promise.all([again.release(), other.release()]);
  });
});
