/**
 * node-fs's archive codecs, as the CLI exports: the session deflated in pieces on zlib's thread
 * pool and joined. Read back by three decoders that share nothing with the writer: Node's
 * one-stream zlib inflate, the core's import (the web DecompressionStream) and Info-ZIP's
 * `unzip -t`.
 */
import { execFile } from "node:child_process";
import { writeFile } from "node:fs/promises";
import { join } from "node:path";
import { promisify } from "node:util";
import { deflateRawSync, inflateRawSync } from "node:zlib";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { BlobReader, ZipReader, Uint8ArrayWriter } from "@zip.js/zip.js";
import { nodeArchiveCodecs, nodeCrc32, nodeDeflateSession } from "../../../adapters/node-fs/index.js";
import { crc32 } from "../../../src/archive/hashes.js";
import { importArchive, verifyArchive } from "../../../src/archive/index.js";
import { SessionManager } from "../../../src/index.js";
import { exportToBytes, noise, OWN_STORE, tempStore, user, assistant, type TempStore } from "./helpers.js";

const execFileAsync = promisify(execFile);
const PIECE = 4 << 20;

/** Words in a random order: text that compresses as session text does. */
function prose(length: number, seed: number): string {
  const words = ["session", "entry", "parent", "tool", "result", "the", "a", "of", "compaction", "branch", "leaf", "summary", "blob", "import", "export"];
  const bytes = noise(Math.ceil(length / 4), seed);
  let text = "";
  for (const byte of bytes) text += words[byte % words.length] + " ";
  return text.slice(0, length);
}

describe("nodeDeflateSession", () => {
  it.each([0, 1, 1000, PIECE - 1, PIECE, PIECE + 1, 2 * PIECE + 12345])("joins its pieces into one valid deflate stream (%i bytes)", async (length) => {
    const bytes = new TextEncoder().encode(prose(length, length + 1));
    const compressed = Buffer.concat(await nodeDeflateSession(bytes));
    expect(Buffer.from(inflateRawSync(compressed)).equals(Buffer.from(bytes))).toBe(true);
    // As small as one stream, give or take the pieces' flush markers.
    expect(compressed.length).toBeLessThanOrEqual(deflateRawSync(bytes).length * 1.002 + 64);
  });

  it("primes each piece with the window before it, so a repeat across the cut is still a back-reference", async () => {
    const repeated = noise(16 << 10, 7);
    const bytes = new Uint8Array(PIECE + (64 << 10));
    bytes.set(repeated, PIECE - repeated.length);
    bytes.set(repeated, PIECE);
    const compressed = Buffer.concat(await nodeDeflateSession(bytes));
    expect(Buffer.from(inflateRawSync(compressed)).equals(Buffer.from(bytes))).toBe(true);
    // The noise is stored once (16 KiB, plus ~4 KiB for the zeros); a piece without the window
    // would store it twice (32 KiB and more).
    expect(compressed.length).toBeLessThan(24 << 10);
  });
});

describe("nodeCrc32", () => {
  it("is hash-wasm's CRC-32, whole and in pieces", async () => {
    for (const size of [0, 1, 7, 64, 1000, 65_537, 1 << 20]) {
      const data = noise(size, size + 1);
      const expected = await crc32(data);
      const whole = nodeCrc32();
      whole.update(data);
      expect(Number.parseInt(whole.hex(), 16)).toBe(expected);
      const pieces = nodeCrc32();
      for (let at = 0; at < size; at += 4093) pieces.update(data.subarray(at, at + 4093));
      expect(pieces.hex()).toBe(whole.hex());
      expect(await crc32(data, nodeCrc32)).toBe(expected);
    }
  });
});

describe("exportArchive with nodeArchiveCodecs", () => {
  let store: TempStore;
  let target: TempStore;
  let session: Uint8Array;
  let archive: Uint8Array;
  let path: string;
  const image = noise(50_000, 3);

  beforeAll(async () => {
    store = await tempStore();
    target = await tempStore();
    const sm = await SessionManager.create(store.storage, "/project/pieces", OWN_STORE);
    for (let i = 0; i < 90; i++) {
      sm.appendMessage(user(prose(60_000, i), i === 10 ? image : undefined) as never);
      sm.appendMessage(assistant(prose(40_000, 1000 + i)) as never);
    }
    await sm.close();
    path = sm.getSessionFile()!;
    session = (await store.storage.read(path))!;
    archive = (await exportToBytes(store.storage, [path], nodeArchiveCodecs)).bytes;
  });

  afterAll(async () => {
    await store?.cleanup();
    await target?.cleanup();
  });

  it("writes the session as a deflated member of several pieces that zip.js reads back", async () => {
    expect(session.length).toBeGreaterThan(2 * PIECE);
    const reader = new ZipReader(new BlobReader(new Blob([archive as Uint8Array<ArrayBuffer>])));
    const entry = (await reader.getEntries()).find((e) => e.filename.endsWith(".jsonl"))!;
    expect(entry.compressionMethod).toBe(8);
    expect(entry.uncompressedSize).toBe(session.length);
    expect(entry.compressedSize).toBeLessThan(session.length / 2);
    const back = await (entry as { getData(writer: Uint8ArrayWriter): Promise<Uint8Array> }).getData(new Uint8ArrayWriter());
    expect(Buffer.from(back).equals(Buffer.from(session))).toBe(true);
    await reader.close();
  });

  it("imports with the core's web codecs into the same bytes, and verifies", async () => {
    expect((await verifyArchive(new Blob([archive as Uint8Array<ArrayBuffer>]))).ok).toBe(true);
    const summary = await importArchive(target.storage, new Blob([archive as Uint8Array<ArrayBuffer>]), OWN_STORE);
    expect(summary.blobs.written).toBe(1);
    const imported = await target.storage.read(summary.sessions[0]!.path);
    expect(Buffer.from(imported!).equals(Buffer.from(session))).toBe(true);
  });

  it("imports with nodeArchiveCodecs into the same bytes; a flipped byte in a stored blob fails its CRC-32, the store unchanged", async () => {
    const fresh = await tempStore();
    try {
      const summary = await importArchive(fresh.storage, new Blob([archive as Uint8Array<ArrayBuffer>]), { ...OWN_STORE, ...nodeArchiveCodecs });
      expect(Buffer.from((await fresh.storage.read(summary.sessions[0]!.path))!).equals(Buffer.from(session))).toBe(true);
    } finally {
      await fresh.cleanup();
    }
    const at = Buffer.from(archive).indexOf(Buffer.from(image.subarray(0, 64)));
    expect(at).toBeGreaterThan(0);
    const damaged = archive.slice();
    damaged[at + 25_000]! ^= 0x01;
    const empty = await tempStore();
    try {
      await expect(importArchive(empty.storage, new Blob([damaged as Uint8Array<ArrayBuffer>]), { ...OWN_STORE, ...nodeArchiveCodecs })).rejects.toMatchObject({ name: "ArchiveError", code: "crc" });
      expect(await empty.storage.list("")).toEqual([]);
    } finally {
      await empty.cleanup();
    }
  });

  it("passes Info-ZIP's `unzip -t` (CRC-32 of every member)", async () => {
    const file = join(store.parent, "pieces.zip");
    await writeFile(file, archive);
    const { stdout } = await execFileAsync("unzip", ["-t", file]);
    expect(stdout).toMatch(/No errors detected/);
    expect(stdout).toMatch(/testing: .*\.jsonl +OK/);
  });
});
