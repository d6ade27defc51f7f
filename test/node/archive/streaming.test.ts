/**
 * The pieces that keep archive import and export within memory and time on large sessions: the
 * incremental SHA-256 and CRC-32 (hash-wasm, against node:crypto and node:zlib), bounded in-order
 * concurrency, the line-by-line session scan (against the whole-file parse, over the corpus and
 * while the bytes are still arriving), stored members read from a Blob, concurrent writes undone
 * on failure, and a single exported session read once.
 */
import { createHash, randomBytes } from "node:crypto";
import { readFileSync } from "node:fs";
import { join } from "node:path";
import { crc32 as zlibCrc32 } from "node:zlib";
import { afterAll, describe, expect, it } from "vitest";
import { terminateWorkers } from "@zip.js/zip.js";
import { forEachInOrder, inOrderAhead } from "../../../src/archive/concurrency.js";
import { resolveLimits } from "../../../src/archive/limits.js";
import { openZip } from "../../../src/archive/zip-read.js";
import { crc32, crc32Incremental, sha256Incremental } from "../../../src/archive/hashes.js";
import { exportArchive, importArchive } from "../../../src/archive/index.js";
import { parseSessionBytes, scanSessionBytes, type SessionScan } from "../../../src/archive/session-bytes.js";
import { ArchiveError, SessionManager } from "../../../src/index.js";
import { StorageError, type StoragePort } from "../../../src/port.js";
import type { NodeFsStorage } from "../../../adapters/node-fs/index.js";
import { CORPUS_DIR, loadPiReference } from "../../shared/corpus.js";
import { editManifest, patchField, rebuildZip, zipBytes, zipMembers } from "../../shared/zip-fixtures.js";
import { assistant, exportToBytes, listing, memorySink, noise, OWN_STORE, sha256, tempStore, user, type TempStore } from "./helpers.js";

const stores: TempStore[] = [];
async function store(): Promise<TempStore> {
  const created = await tempStore();
  stores.push(created);
  return created;
}

afterAll(async () => {
  for (const created of stores) await created.cleanup();
  await terminateWorkers();
});

/** `bytes` cut into pieces of the given sizes, cycling through them. */
function pieces(bytes: Uint8Array, sizes: readonly number[]): Uint8Array[] {
  const out: Uint8Array[] = [];
  for (let offset = 0, i = 0; offset < bytes.length; i++) {
    const size = sizes[i % sizes.length]!;
    out.push(bytes.subarray(offset, offset + size));
    offset += size;
  }
  return out;
}

describe("sha256Incremental", () => {
  it("gives node:crypto's digest for every length around the block and padding edges, in any pieces", async () => {
    for (let length = 0; length <= 200; length++) {
      const data = randomBytes(length);
      const expected = createHash("sha256").update(data).digest("hex");
      for (const sizes of [[length || 1], [1], [7], [63, 1], [64], [65, 3]]) {
        const hash = await sha256Incremental();
        for (const piece of pieces(data, sizes)) hash.update(piece);
        expect(hash.hex(), `length ${length}, pieces ${sizes.join("/")}`).toBe(expected);
      }
    }
  });

  it("hashes megabytes in odd pieces (views at odd offsets) like node:crypto, and takes nothing after its digest", async () => {
    const data = randomBytes(3 * 1024 * 1024 + 13);
    const hash = await sha256Incremental();
    for (const piece of pieces(data, [65_537, 16_384, 1, 100_003])) hash.update(piece);
    expect(hash.hex()).toBe(createHash("sha256").update(data).digest("hex"));
    expect(() => hash.update(new Uint8Array(1))).toThrow(/after digest/);
  });

  it("keeps hashes fed in turns apart", async () => {
    const [a, b] = [randomBytes(100_000), randomBytes(100_001)];
    const [hashA, hashB] = await Promise.all([sha256Incremental(), sha256Incremental()]);
    for (let offset = 0; offset < b.length; offset += 4096) {
      hashA.update(a.subarray(offset, offset + 4096));
      hashB.update(b.subarray(offset, offset + 4096));
    }
    expect([hashA.hex(), hashB.hex()]).toEqual([createHash("sha256").update(a).digest("hex"), createHash("sha256").update(b).digest("hex")]);
  });
});

describe("crc32", () => {
  it("gives zlib's CRC-32 for every short length at every alignment and for a megabyte", async () => {
    const data = randomBytes(300);
    for (let start = 0; start < 4; start++) {
      for (let end = start; end <= data.length; end += 7) expect(await crc32(data.subarray(start, end))).toBe(zlibCrc32(data.subarray(start, end)));
    }
    const big = randomBytes(1024 * 1024 + 5);
    expect(await crc32(big)).toBe(zlibCrc32(big));
    expect(await crc32(new Uint8Array(0))).toBe(0);
  });

  it("gives the same value fed in pieces, and concurrent callers their own", async () => {
    const big = randomBytes(1024 * 1024 + 5);
    const hash = await crc32Incremental();
    for (const piece of pieces(big, [1, 65_536, 3])) hash.update(piece);
    expect(Number.parseInt(hash.hex(), 16)).toBe(zlibCrc32(big));
    const parts = Array.from({ length: 20 }, (_, i) => randomBytes(1000 + i));
    expect(await Promise.all(parts.map((part) => crc32(part)))).toEqual(parts.map((part) => zlibCrc32(part)));
  });
});

const delay = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));

describe("forEachInOrder", () => {
  it("hands results over in item order, with at most `limit` items worked on at once", async () => {
    let running = 0;
    let most = 0;
    const seen: number[] = [];
    await forEachInOrder(
      [30, 5, 20, 1, 15, 2, 8],
      3,
      async (ms, index) => {
        running++;
        most = Math.max(most, running);
        await delay(ms);
        running--;
        return index;
      },
      (index) => {
        seen.push(index);
      },
    );
    expect(seen).toEqual([0, 1, 2, 3, 4, 5, 6]);
    expect(most).toBe(3);
  });

  it("throws the first failure in item order, starts nothing after it, and waits for the work under way", async () => {
    const started: number[] = [];
    const finished: number[] = [];
    const error = await forEachInOrder([0, 1, 2, 3, 4, 5], 3, async (index) => {
      started.push(index);
      // Item 2 fails at once, item 1 fails later: item 1 is first in order.
      if (index === 2) throw new Error("two");
      await delay(index === 1 ? 20 : 40);
      if (index === 1) throw new Error("one");
      finished.push(index);
      return index;
    }).catch((e: unknown) => e);
    expect((error as Error).message).toBe("one");
    // Items 0-2 started at once, 3 when 0 was done; nothing after the failure of 1.
    expect(started).toEqual([0, 1, 2, 3]);
    // Item 3 was under way when 1 failed: it finished before the failure was thrown.
    expect(finished).toEqual([0, 3]);
  });
});

describe("inOrderAhead", () => {
  it("yields results in item order, with at most `limit` items worked on while the caller holds one", async () => {
    let running = 0;
    let most = 0;
    const seen: number[] = [];
    for await (const index of inOrderAhead([30, 5, 20, 1, 15, 2, 8], 3, async (ms, index) => {
      running++;
      most = Math.max(most, running);
      await delay(ms);
      running--;
      return index;
    })) {
      seen.push(index);
      await delay(3);
    }
    expect(seen).toEqual([0, 1, 2, 3, 4, 5, 6]);
    expect(most).toBe(3);
  });

  it("throws the first failure in item order after the work under way is done", async () => {
    const finished: number[] = [];
    const seen: number[] = [];
    const error = await (async () => {
      for await (const index of inOrderAhead([0, 1, 2, 3, 4], 3, async (index) => {
        await delay(index === 1 ? 5 : 30);
        if (index === 1) throw new Error("one");
        finished.push(index);
        return index;
      })) seen.push(index);
    })().catch((e: unknown) => e);
    expect((error as Error).message).toBe("one");
    expect(seen).toEqual([0]);
    // Item 2 was under way when 1 failed; item 3 started when 0 was handed over.
    expect(finished.sort()).toEqual([0, 2, 3]);
  });

  it("waits for the work under way when the caller stops early", async () => {
    const finished: number[] = [];
    for await (const index of inOrderAhead([0, 1, 2, 3], 2, async (index) => {
      await delay(10);
      finished.push(index);
      return index;
    })) {
      if (index === 0) break;
    }
    // Item 1 was under way (2 and 3 not started): it finished before the loop ended.
    expect(finished.sort()).toEqual([0, 1]);
  });
});

/** What a scan reports, comparable with a whole-file parse. */
function scanView(scan: SessionScan) {
  return { header: scan.header, problems: scan.problems, tail: scan.tail, entries: scan.entryIds.length, blobHashes: [...scan.blobHashes].sort() };
}

/**
 * Scans `bytes` as if they were still inflating: a buffer of their size, zero past what has
 * arrived, filled in random steps each time the scan waits for more.
 */
async function scanArriving(bytes: Uint8Array, source: string, seed: number): Promise<SessionScan> {
  const buffer = new Uint8Array(bytes.length);
  let filled = 0;
  let x = seed;
  return scanSessionBytes(buffer, source, async (end) => {
    while (filled < Math.min(end, bytes.length)) {
      x = (x * 1103515245 + 12345) >>> 0;
      const step = 1 + (x % 40_000);
      buffer.set(bytes.subarray(filled, filled + step), filled);
      filled = Math.min(bytes.length, filled + step);
      await Promise.resolve();
    }
  });
}

describe("scanSessionBytes", () => {
  const corpusFiles = Object.keys(loadPiReference().files).sort();

  it("reads every corpus file as the whole-file parse does, from a full buffer and while the bytes arrive", async () => {
    for (const [i, file] of corpusFiles.entries()) {
      const bytes = new Uint8Array(readFileSync(join(CORPUS_DIR, file)));
      const parsed = await parseSessionBytes(bytes, file);
      const whole = await scanSessionBytes(bytes, file);
      const arriving = await scanArriving(bytes, file, i + 1);
      const expected = { header: parsed.header, problems: parsed.problems, tail: parsed.tail, entries: parsed.entries.length, blobHashes: [] };
      // The parse migrates in memory (its header says 3); the scan reports what the file says.
      expect({ ...scanView(whole), header: { ...whole.header, version: parsed.header.version } }, file).toEqual(expected);
      expect(scanView(arriving), file).toEqual(scanView(whole));
      expect(whole.version, file).toBe(parsed.migratedFrom ?? parsed.header.version);
      if (parsed.migratedFrom === null) expect(whole.entryIds, file).toEqual(parsed.entries.map((e) => e.id));
    }
  });

  it("finds blob refs and reads lines far longer than its chunks, across chunk edges", async () => {
    const origin = await store();
    const sm = await SessionManager.create(origin.storage, "/work/long", { ...OWN_STORE, deferUntilAssistant: false });
    sm.appendMessage(user("with an image", noise(3000, 5)));
    // Lines of 1 byte to 300 KB around the 64 KiB chunk size.
    for (const size of [10, 65_400, 65_536, 65_600, 131_072, 300_000, 1]) sm.appendMessage(assistant("x".repeat(size)));
    const path = sm.getSessionFile()!;
    await sm.close();
    const bytes = (await origin.storage.read(path))!;
    const parsed = await parseSessionBytes(bytes, path);
    const whole = await scanSessionBytes(bytes, path);
    expect(whole.blobHashes).toEqual([(await origin.storage.list("blobs"))[0]!.name]);
    expect(whole.entryIds).toEqual(parsed.entries.map((e) => e.id));
    expect(scanView(await scanArriving(bytes, path, 7))).toEqual(scanView(whole));
  });

  it("refuses what is not a session with the whole-file parse's errors", async () => {
    const cases = ["", "\n\n", '{"hello":"world"}\n', "not json\n", '[1,2]\n{"type":"session","id":"x"}\n'];
    for (const text of cases) {
      const bytes = new TextEncoder().encode(text);
      const expected: Awaited<ReturnType<typeof parseSessionBytes>> | ArchiveError = await parseSessionBytes(bytes, "m").catch((e: unknown) => e as ArchiveError);
      const actual = await scanSessionBytes(bytes, "m").catch((e: unknown) => e);
      if (expected instanceof ArchiveError) expect(actual, JSON.stringify(text)).toEqual(expected);
      else {
        const scan = actual as SessionScan;
        // The parse migrates the header in memory; the scan reports it as written.
        expect({ ...scan.header, version: expected.header.version }, JSON.stringify(text)).toEqual(expected.header);
        expect(scan.problems, JSON.stringify(text)).toEqual(expected.problems);
      }
    }
  });
});

/** A store holding one session with `images` images, and its archive. */
async function sessionWithImages(images: number): Promise<{ origin: TempStore; path: string; archive: Uint8Array }> {
  const origin = await store();
  const sm = await SessionManager.create(origin.storage, "/work/images", { ...OWN_STORE, deferUntilAssistant: false });
  for (let i = 0; i < images; i++) {
    sm.appendMessage(user(`image ${i}`, noise(2000 + i, i + 1)));
    sm.appendMessage(assistant(`seen ${i}`));
  }
  const path = sm.getSessionFile()!;
  await sm.close();
  return { origin, path, archive: (await exportToBytes(origin.storage, [path])).bytes };
}

describe("stored members and concurrent writes", () => {
  it("imports from a Blob (stored members read as ranges of it) with the blobs byte for byte, and names a stored member whose CRC-32 is wrong", async () => {
    const { origin, path, archive } = await sessionWithImages(12);
    const target = await store();
    const summary = await importArchive(target.storage, new Blob([archive as Uint8Array<ArrayBuffer>]), OWN_STORE);
    expect(summary.blobs.written).toBe(12);
    for (const blob of await origin.storage.list("blobs")) expect(sha256((await target.storage.read(`blobs/${blob.name}`))!)).toBe(blob.name);
    expect(await target.storage.read(path)).toEqual(await origin.storage.read(path));

    const member = (await zipMembers(archive)).filter((m) => m.name.startsWith("blobs/"))[5]!.name;
    const empty = await store();
    const error = await importArchive(empty.storage, new Blob([patchField(archive, member, "crc", (crc) => crc ^ 1) as Uint8Array<ArrayBuffer>]), OWN_STORE).catch((e: unknown) => e);
    expect(error).toMatchObject({ code: "crc", member });
    expect(await listing(empty.root)).toEqual([]);
  });

  /**
   * Blob writes finish out of order; the 10th fails while later ones are under way, and the 12th
   * (started meanwhile) fails after it. Through node-fs's `writeFiles` (the failures come with the
   * files' bytes) and through the fallback for a port without one (`write` fails).
   */
  const failingPorts: Record<string, (storage: NodeFsStorage, started: string[]) => StoragePort> = {
    writeFiles: (storage, started) => ({
      ...storage,
      writeFiles: (files) =>
        storage.writeFiles(
          files.map(({ path, bytes }) => ({
            path,
            bytes: async () => {
              const n = started.push(path);
              await new Promise((resolve) => setTimeout(resolve, n === 10 ? 30 : n === 12 ? 80 : (n * 7) % 11));
              if (n === 10 || n === 12) throw new StorageError("io", `device error ${n}`, { path });
              return bytes();
            },
          })),
        ),
    }),
    "write (a port without writeFiles)": (storage, started) => ({
      ...storage,
      writeFiles: undefined,
      write: async (path, data) => {
        const n = started.push(path);
        await new Promise((resolve) => setTimeout(resolve, n === 10 ? 30 : n === 12 ? 80 : (n * 7) % 11));
        if (n === 10 || n === 12) throw new StorageError("io", `device error ${n}`, { path });
        return storage.write(path, data);
      },
    }),
  };

  for (const [through, failingPort] of Object.entries(failingPorts)) {
    it(`writes failing while others are under way (${through}): the first one is named, every write of the import is undone`, async () => {
      const { archive } = await sessionWithImages(24);
      const target = await store();
      const before = await listing(target.root);
      const started: string[] = [];
      const error = await importArchive(failingPort(target.storage, started), archive, OWN_STORE).catch((e: unknown) => e);
      const writes = started.length;
      expect(error).toMatchObject({ code: "write-failed", member: started[9], message: expect.stringContaining("device error 10") });
      expect((error as Error).message).toContain("every change of this import was undone");
      expect(writes).toBeGreaterThan(10);
      expect(await listing(target.root)).toEqual(before);
      // Nothing lands later either: the writes under way were waited for before undoing.
      await new Promise((resolve) => setTimeout(resolve, 50));
      expect(await listing(target.root)).toEqual(before);
    });
  }
});

describe("sessions checked while they inflate", () => {
  it("a member's bytes are readable up to `end` once `available(end)` resolves, not before", async () => {
    // ~6 MB of varied lines deflate to several of zip.js's chunks.
    const lines: string[] = [];
    for (let i = 0; lines.length < 60_000; i++) lines.push(JSON.stringify({ i, text: `line ${i} ${(i * 2654435761) % 1000003}`.repeat(1 + (i % 7)) }));
    const data = new TextEncoder().encode(lines.join("\n") + "\n");
    const zip = await openZip(await zipBytes([{ name: "sessions/big.jsonl", data }]), resolveLimits(undefined));
    const inflating = zip.inflate(zip.byName.get("sessions/big.jsonl")!);
    // The text holds no NUL: a 0 in the buffer is a byte that has not arrived.
    let arrivedLater = 0;
    let checked = 0;
    // Ends a byte to a megabyte apart: within the piece that last arrived and several pieces ahead.
    for (let end = 1, i = 0; end < data.length + 65_536; end += 1 + ((i++ * 389_017) % 1_000_000)) {
      const upTo = Math.min(end, data.length);
      if (inflating.bytes[upTo - 1] === 0) arrivedLater++;
      await inflating.available(end);
      expect(Buffer.from(inflating.bytes.subarray(checked, upTo)).equals(data.subarray(checked, upTo)), `bytes ${checked}-${upTo}`).toBe(true);
      checked = upTo;
    }
    expect(arrivedLater).toBeGreaterThan(0);
    expect(Buffer.from(await inflating.done).equals(data)).toBe(true);
    await zip.close();
  });


  it("a member that is not the manifest's is refused for its hash before its lines, and one over maxSessionLines for its length", async () => {
    const { archive } = await sessionWithImages(1);
    const member = (await zipMembers(archive)).find((m) => m.name.startsWith("sessions/"))!;
    const broken = await rebuildZip(archive, (ms) => ms.map((m) => (m.name === member.name ? { ...m, data: new TextEncoder().encode("not json\n".repeat(40)) } : m)));
    const sized = await editManifest(broken, (manifest) => void (manifest.sessions[0].bytes = 40 * 9));
    const target = await store();
    expect(await importArchive(target.storage, sized).catch((e: unknown) => e)).toMatchObject({ code: "manifest-mismatch", member: member.name, message: expect.stringMatching(/sha256/) });
    const hashed = await editManifest(sized, (manifest) => void (manifest.sessions[0].sha256 = sha256(new TextEncoder().encode("not json\n".repeat(40)))));
    expect(await importArchive(target.storage, hashed, { limits: { maxSessionLines: 10 } }).catch((e: unknown) => e)).toMatchObject({ code: "too-many-lines", member: member.name });
    expect(await importArchive(target.storage, hashed).catch((e: unknown) => e)).toMatchObject({ code: "bad-session", member: member.name, message: expect.stringMatching(/line 1: not JSON/) });
    expect(await listing(target.root)).toEqual([]);
  });
});

describe("export reads", () => {
  it("a single session is read once; with several, each is read twice (to hash, then to write)", async () => {
    const origin = await store();
    const paths: string[] = [];
    for (const name of ["one", "two"]) {
      const sm = await SessionManager.create(origin.storage, `/work/${name}`, { deferUntilAssistant: false });
      sm.appendMessage(user(name));
      paths.push(sm.getSessionFile()!);
      await sm.close();
    }
    const reads = new Map<string, number>();
    const counting: StoragePort = {
      ...origin.storage,
      kind: origin.storage.kind,
      read: async (path, range) => {
        reads.set(path, (reads.get(path) ?? 0) + 1);
        return origin.storage.read(path, range);
      },
    };
    await exportArchive(counting, [paths[0]!], memorySink().sink);
    expect(reads.get(paths[0]!)).toBe(1);
    reads.clear();
    await exportArchive(counting, paths, memorySink().sink);
    expect(paths.map((p) => reads.get(p))).toEqual([2, 2]);
  });
});
