/**
 * Archives in real Chromium, on memory storage: sessions (one of them a plain pi v1 file with an
 * inline image) exported to a stream collected into a Blob, as a download would be, imported from
 * that Blob into an empty store; and a few hostile archives refused with the store unchanged.
 */
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { terminateWorkers } from "@zip.js/zip.js";
import { memoryStorage } from "../../adapters/memory/index.js";
import { exportArchive, importArchive, importSessionFiles, verifyArchive } from "../../src/archive/index.js";
import { ArchiveError, SessionManager, type ExportSummary, type ImportSummary, type StoragePort } from "../../src/index.js";
import { bytesToBase64 } from "../../src/blobs/base64.js";
import { sha256Hex } from "../../src/blobs/blob-store.js";
import { patchField, rebuildZip, zipMembers } from "../shared/zip-fixtures.js";

const CWD = "/home/me/project";

function noise(length: number, seed: number): Uint8Array {
  const out = new Uint8Array(length);
  let x = seed;
  for (let i = 0; i < length; i++) {
    x ^= x << 13;
    x ^= x >>> 17;
    x ^= x << 5;
    out[i] = x & 0xff;
  }
  return out;
}

const user = (text: string, image?: Uint8Array) => ({
  role: "user",
  content: [{ type: "text", text }, ...(image ? [{ type: "image", data: bytesToBase64(image), mimeType: "image/png" }] : [])],
  timestamp: Date.now(),
});
const assistant = (text: string) => ({ role: "assistant", content: [{ type: "text", text }], provider: "anthropic", model: "claude-test", stopReason: "stop", timestamp: Date.now() });

/** Every file of a store with its size and hash. */
async function listing(storage: StoragePort, dir = ""): Promise<{ path: string; size: number; sha256: string }[]> {
  const out: { path: string; size: number; sha256: string }[] = [];
  for (const entry of await storage.list(dir)) {
    const path = dir ? `${dir}/${entry.name}` : entry.name;
    if (entry.kind === "dir") out.push(...(await listing(storage, path)));
    else out.push({ path, size: entry.size, sha256: await sha256Hex((await storage.read(path))!) });
  }
  return out.sort((a, b) => a.path.localeCompare(b.path));
}

/** A pi v1 file (no ids) with an inline image, as pi wrote them in 2025. */
function piV1File(image: Uint8Array): Uint8Array {
  const lines = [
    { type: "session", id: "0b5e6f7a-1111-4222-8333-944455556666", timestamp: "2025-11-20T10:00:00.000Z", cwd: CWD, provider: "anthropic", modelId: "claude", thinkingLevel: "off" },
    { type: "message", timestamp: "2025-11-20T10:00:01.000Z", message: user("what is in this picture?", image) },
    { type: "message", timestamp: "2025-11-20T10:00:02.000Z", message: assistant("noise") },
    { type: "thinking_level_change", timestamp: "2025-11-20T10:00:03.000Z", thinkingLevel: "high" },
    { type: "message", timestamp: "2025-11-20T10:00:04.000Z", message: user("thanks") },
  ];
  return new TextEncoder().encode(lines.map((l) => JSON.stringify(l)).join("\n") + "\n");
}

const source = memoryStorage();
const target = memoryStorage();
let paths: string[];
let plain: ImportSummary;
let exported: ExportSummary;
let archive: Blob;
let imported: ImportSummary;

beforeAll(async () => {
  const branched = await SessionManager.create(source, CWD, { deferUntilAssistant: false });
  const root = branched.appendMessage(user("look", noise(6000, 5)));
  const answer = branched.appendMessage(assistant("a picture of noise"));
  branched.appendMessage(user("and then?"));
  branched.appendLabelChange(answer, "key answer");
  branched.branch(root);
  branched.appendMessage(assistant("another take"));
  const simple = await SessionManager.create(source, "/other", { deferUntilAssistant: false });
  simple.appendMessage(user("hi"));
  simple.appendMessage(assistant("hello"));
  await branched.close();
  await simple.close();
  plain = await importSessionFiles(source, [{ name: "pi-v1.jsonl", bytes: piV1File(noise(3000, 9)) }]);
  paths = [branched.getSessionFile()!, simple.getSessionFile()!, plain.sessions[0]!.path];

  const chunks: Uint8Array[] = [];
  exported = await exportArchive(source, paths, new WritableStream({ write: (chunk) => void chunks.push(chunk) }));
  archive = new Blob(chunks as BlobPart[], { type: "application/zip" });
  imported = await importArchive(target, archive);
});

afterAll(() => terminateWorkers());

describe("archive round trip in the browser", () => {
  it("the plain v1 file was migrated and its image moved into a blob", async () => {
    expect(plain.sessions[0]).toMatchObject({ action: "created", entries: 4 });
    const text = new TextDecoder().decode((await source.read(plain.sessions[0]!.path))!);
    expect(text).toContain('"version":3');
    expect(text).toContain('"data":"blob:sha256:');
  });

  it("imports every session into an empty store, byte-identical, with the same entries, tree and context", async () => {
    expect(imported.sessions.map((s) => [s.action, s.path])).toEqual(paths.map((p) => ["created", p]));
    const members = new Map((await zipMembers(archive)).map((m) => [m.name, m.data]));
    for (const session of imported.sessions) {
      const stored = (await target.read(session.path))!;
      expect(await sha256Hex(stored)).toBe(await sha256Hex(members.get(session.source)!));
      expect(await sha256Hex(stored)).toBe(await sha256Hex((await source.read(session.path))!));
      const a = await SessionManager.open(source, session.path, { readOnly: true });
      const b = await SessionManager.open(target, session.path, { readOnly: true });
      expect(b.getEntries()).toEqual(a.getEntries());
      expect(b.getTree()).toEqual(a.getTree());
      expect(b.buildSessionContext()).toEqual(a.buildSessionContext());
      await a.close();
      await b.close();
    }
  });

  it("the blobs are identical", async () => {
    expect(exported.blobs.count).toBe(2);
    const blobs = await target.list("blobs");
    expect(blobs.map((b) => b.name).sort()).toEqual((await source.list("blobs")).map((b) => b.name).sort());
    for (const blob of blobs) expect(await sha256Hex((await target.read(`blobs/${blob.name}`))!)).toBe(blob.name);
  });

  it("importing the same archive twice changes nothing", async () => {
    const before = await listing(target);
    const again = await importArchive(target, archive);
    expect(again.sessions.map((s) => s.action)).toEqual(["skipped", "skipped", "skipped"]);
    expect(await listing(target)).toEqual(before);
  });

  it("a stream source works too (buffered)", async () => {
    const summary = await verifyArchive(archive.stream());
    expect(summary.sessions.map((s) => s.id)).toEqual(exported.sessions.map((s) => s.id));
  });
});

describe("hostile archives in the browser", () => {
  const cases: { name: string; build: () => Promise<Uint8Array>; code: string; member: () => string | undefined }[] = [
    { name: "a ../ name", build: () => rebuildZip(archive, (ms) => [...ms, { name: "../escape", data: "x" }]), code: "unsafe-name", member: () => "../escape" },
    {
      name: "a crc mismatch",
      build: async () => patchField(new Uint8Array(await archive.arrayBuffer()), exported.sessions[1]!.member, "crc", (crc) => crc ^ 1),
      code: "crc",
      member: () => exported.sessions[1]!.member,
    },
    {
      name: "a ratio bomb",
      build: () => rebuildZip(archive, (ms) => [...ms, { name: `blobs/${"0".repeat(64)}`, data: new Uint8Array(8 * 1024 * 1024) }]),
      code: "ratio",
      member: () => `blobs/${"0".repeat(64)}`,
    },
    { name: "a non-zip", build: async () => new TextEncoder().encode("PK but not really"), code: "not-a-zip", member: () => undefined },
    { name: "a truncated zip", build: async () => new Uint8Array(await archive.arrayBuffer()).slice(0, archive.size - 64), code: "truncated", member: () => undefined },
  ];
  for (const hostile of cases) {
    it(`${hostile.name} → ${hostile.code}`, async () => {
      const before = await listing(target);
      const error = await importArchive(target, new Blob([(await hostile.build()) as BlobPart])).catch((e: unknown) => e);
      expect(error).toBeInstanceOf(ArchiveError);
      expect({ code: (error as ArchiveError).code, member: (error as ArchiveError).member }).toEqual({ code: hostile.code, member: hostile.member() });
      expect(await listing(target)).toEqual(before);
    });
  }
});
