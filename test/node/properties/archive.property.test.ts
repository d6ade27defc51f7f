/**
 * Any mutation of a valid archive (bytes flipped, overwritten, inserted, deleted, the file cut
 * short; one to three at once): import either fails with an ArchiveError and leaves the store
 * exactly as it was, or stores exactly the original content.
 */
import fc from "fast-check";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { terminateWorkers } from "@zip.js/zip.js";
import { memoryStorage } from "../../../adapters/memory/index.js";
import { nodeArchiveCodecs } from "../../../adapters/node-fs/index.js";
import { importArchive } from "../../../src/archive/index.js";
import { isArchiveError, SessionManager, type StoragePort } from "../../../src/index.js";
import { exportToBytes } from "../archive/helpers.js";
import { SEED, settings } from "./fast-check.js";

type Snapshot = Map<string, string>;

/** Every file of a store with its bytes (hex), by path. */
async function snapshot(storage: StoragePort, dir = "", out: Snapshot = new Map()): Promise<Snapshot> {
  for (const entry of await storage.list(dir)) {
    const path = dir === "" ? entry.name : `${dir}/${entry.name}`;
    if (entry.kind === "dir") await snapshot(storage, path, out);
    else out.set(path, Buffer.from((await storage.read(path))!).toString("hex"));
  }
  return out;
}

type Mutation =
  | { kind: "flip"; at: number; mask: number }
  | { kind: "overwrite"; at: number; bytes: Uint8Array }
  | { kind: "insert"; at: number; bytes: Uint8Array }
  | { kind: "delete"; at: number; length: number }
  | { kind: "cut"; at: number };

const mutation: fc.Arbitrary<Mutation> = fc.oneof(
  fc.record({ kind: fc.constant("flip" as const), at: fc.nat(), mask: fc.integer({ min: 1, max: 255 }) }),
  fc.record({ kind: fc.constant("overwrite" as const), at: fc.nat(), bytes: fc.uint8Array({ minLength: 1, maxLength: 16 }) }),
  fc.record({ kind: fc.constant("insert" as const), at: fc.nat(), bytes: fc.uint8Array({ minLength: 1, maxLength: 16 }) }),
  fc.record({ kind: fc.constant("delete" as const), at: fc.nat(), length: fc.integer({ min: 1, max: 64 }) }),
  fc.record({ kind: fc.constant("cut" as const), at: fc.nat() }),
);

function mutate(bytes: Uint8Array, change: Mutation): Uint8Array {
  const at = change.at % Math.max(bytes.length, 1);
  switch (change.kind) {
    case "flip": {
      const out = bytes.slice();
      out[at] = out[at]! ^ change.mask;
      return out;
    }
    case "overwrite": {
      const out = bytes.slice();
      out.set(change.bytes.subarray(0, out.length - at), at);
      return out;
    }
    case "insert":
      return new Uint8Array(Buffer.concat([bytes.subarray(0, at), change.bytes, bytes.subarray(at)]));
    case "delete":
      return new Uint8Array(Buffer.concat([bytes.subarray(0, at), bytes.subarray(at + change.length)]));
    case "cut":
      return bytes.slice(0, at);
  }
}

let archive: Uint8Array;
/** What a clean import adds to the store: the session file and its blob, by path. */
let added: Snapshot;

/** A store that already holds another session and a blob of its own. */
async function existingStore(): Promise<StoragePort> {
  const storage = memoryStorage();
  const other = await SessionManager.create(storage, "/elsewhere", { deferUntilAssistant: false });
  other.appendMessage({ role: "user", content: "already here", timestamp: 1 });
  await other.close();
  await storage.write("blobs/0000000000000000000000000000000000000000000000000000000000000000", new Uint8Array([1, 2, 3]));
  return storage;
}

beforeAll(async () => {
  const source = memoryStorage();
  const sm = await SessionManager.create(source, "/work/app", { deferUntilAssistant: false });
  sm.appendMessage({ role: "user", content: "hi", timestamp: 1 });
  const image = Buffer.from(Array.from({ length: 1500 }, (_, i) => (i * 37) & 0xff)).toString("base64");
  sm.appendMessage({ role: "user", content: [{ type: "text", text: "look" }, { type: "image", data: image, mimeType: "image/png" }], timestamp: 2 });
  sm.appendMessage({ role: "assistant", content: [{ type: "text", text: "a picture" }], provider: "p", model: "m", timestamp: 3 });
  const path = sm.getSessionFile()!;
  await sm.close();
  archive = (await exportToBytes(source, [path])).bytes;
  const target = await existingStore();
  const before = await snapshot(target);
  await importArchive(target, archive);
  added = new Map([...(await snapshot(target))].filter(([file]) => !before.has(file)));
  expect([...added.keys()].filter((file) => file.startsWith("blobs/"))).toHaveLength(1);
  expect([...added.keys()].filter((file) => file.endsWith(".jsonl"))).toHaveLength(1);
  // The session is stored as it was in the source store, byte for byte.
  const stored = [...added].find(([file]) => file.endsWith(".jsonl"))!;
  expect(stored[1]).toBe(Buffer.from((await source.read(path))!).toString("hex"));
});

afterAll(async () => {
  await terminateWorkers();
});

describe(`archive import properties (fast-check, seed ${SEED})`, () => {
  it("a mutated archive is refused with an ArchiveError and the store unchanged, or imports exactly the original content", async () => {
    await fc.assert(
      // With the core's web codecs or Node's (node-fs's nodeArchiveCodecs, as the CLI imports).
      fc.asyncProperty(fc.array(mutation, { minLength: 1, maxLength: 3 }), fc.boolean(), async (changes, nodeCodecs) => {
        const mutated = changes.reduce(mutate, archive);
        const storage = await existingStore();
        const before = await snapshot(storage);
        try {
          await importArchive(storage, mutated, nodeCodecs ? nodeArchiveCodecs : {});
        } catch (error) {
          if (!isArchiveError(error)) throw error;
          expect(await snapshot(storage)).toEqual(before);
          return;
        }
        expect(await snapshot(storage)).toEqual(new Map([...before, ...added]));
      }),
      settings(300),
    );
  });
});
