/**
 * Image externalization and blob refs: oh-my-pi's section C 6–8 (threshold, already-a-ref,
 * reload, missing blob) and B's blob-store, blob-store-ref-validation and
 * session-persistence-images cases, on real files through `nodeFsStorage`.
 *
 * Not ported (APIs this kit does not have): blob-store's `put(…, {extension})` with its
 * `displayPath` sidecar, `externalizeImageData(store, b64, "image/webp")` with a `.webp` sidecar,
 * `blobExtensionForImageMimeType`, and the synchronous / data-URL resolvers
 * (`resolveImageDataSync`, `resolveImageDataUrl`); our blobs are extension-less and resolved
 * asynchronously through `resolveImages`.
 */
import { createHash } from "node:crypto";
import { mkdtemp, readdir, readFile, rm, unlink, writeFile } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterEach, beforeEach, describe, expect, it } from "vitest";
import { nodeFsStorage, type NodeFsStorage } from "../../../adapters/node-fs/index.js";
import { BLOB_REF_PREFIX, BlobStore, parseBlobRef } from "../../../src/blobs/blob-store.js";
import { resolveImages } from "../../../src/blobs/images.js";
import { SessionManager, type MessageEntry, type SessionManagerOptions } from "../../../src/index.js";
import { assistantMsg, userMsg } from "../../shared/messages.js";

const CWD = "/work/app";
const SESSION_DIR = "sessions/x";
/** oh-my-pi's own store: the form these tests check is oh-my-pi's (blob refs). */
const OMP: SessionManagerOptions = { owner: "omp" };

let root: string;
let storage: NodeFsStorage;
const open: SessionManager[] = [];

beforeEach(async () => {
  root = await mkdtemp(join(tmpdir(), "sessionkit-blobs-"));
  storage = nodeFsStorage({ root });
});

afterEach(async () => {
  for (const sm of open.splice(0)) await sm.close().catch(() => {});
  await storage.close();
  await rm(root, { recursive: true, force: true });
});

async function track(sm: Promise<SessionManager>): Promise<SessionManager> {
  const opened = await sm;
  open.push(opened);
  return opened;
}

/** `n` pseudo-random bytes (deterministic, so base64 lengths are exact). */
function bytes(n: number, seed = 1): Buffer {
  const out = Buffer.alloc(n);
  let x = seed;
  for (let i = 0; i < n; i++) {
    x = (x * 1103515245 + 12345) >>> 0;
    out[i] = x >>> 24;
  }
  return out;
}

const sha256 = (data: Uint8Array) => createHash("sha256").update(data).digest("hex");
const image = (data: string) => ({ type: "image", data, mimeType: "image/png" });

async function recordsOnDisk(path: string): Promise<Array<Record<string, any>>> {
  const text = await readFile(join(root, path), "utf8");
  return text.trimEnd().split("\n").map((line) => JSON.parse(line) as Record<string, any>);
}

const blobFiles = () => readdir(join(root, "blobs")).catch(() => [] as string[]);

/** A session whose user message carries `images`, written and closed; returns its path and ids. */
async function writeSessionWithImages(images: object[], extraText = "look"): Promise<{ path: string; id: string }> {
  const sm = await SessionManager.create(storage, CWD, { ...OMP, sessionDir: SESSION_DIR });
  const id = sm.appendMessage({ role: "user", content: [{ type: "text", text: extraText }, ...images], timestamp: Date.now() });
  sm.appendMessage(assistantMsg("seen"));
  await sm.close();
  return { path: sm.getSessionFile()!, id };
}

describe("externalization threshold (C 6)", () => {
  it("base64 of 1023 chars stays inline; 1024 chars becomes blob:sha256:<sha256 of the raw bytes> with blobs/<hash> holding the raw bytes", async () => {
    // 767 bytes → 1023 base64 chars unpadded (decodable, so only the threshold keeps it inline).
    const small = bytes(767, 7).toString("base64").replace(/=+$/, "");
    const raw = bytes(768, 8);
    const large = raw.toString("base64");
    expect(small).toHaveLength(1023);
    expect(large).toHaveLength(1024);

    const sm = await track(SessionManager.create(storage, CWD, { ...OMP, sessionDir: SESSION_DIR }));
    const id = sm.appendMessage({ role: "user", content: [{ type: "text", text: "two images" }, image(small), image(large)], timestamp: 1 });
    sm.appendMessage(assistantMsg("seen"));
    await sm.flush();

    const content = (await recordsOnDisk(sm.getSessionFile()!)).find((r) => r.id === id)!.message.content;
    const hash = sha256(raw);
    expect(content[1]).toEqual(image(small));
    expect(content[2]).toEqual({ type: "image", data: `blob:sha256:${hash}`, mimeType: "image/png" });
    expect(await blobFiles()).toEqual([hash]);
    expect(Buffer.compare(await readFile(join(root, "blobs", hash)), raw)).toBe(0);
    // Memory keeps the base64.
    expect(((sm.getEntry(id) as MessageEntry).message.content as Array<{ data: string }>)[2]!.data).toBe(large);
  });

  it("images in custom_message content are externalized too, and the same image is stored once", async () => {
    const raw = bytes(3000, 3);
    const sm = await track(SessionManager.create(storage, CWD, { ...OMP, sessionDir: SESSION_DIR }));
    sm.appendMessage({ role: "user", content: [image(raw.toString("base64"))], timestamp: 1 });
    sm.appendMessage(assistantMsg("seen"));
    const customId = sm.appendCustomMessageEntry("screenshot", [{ type: "text", text: "again" }, { type: "image", data: raw.toString("base64"), mimeType: "image/png" }], true);
    await sm.flush();

    const custom = (await recordsOnDisk(sm.getSessionFile()!)).find((r) => r.id === customId)!;
    expect(custom.content[1].data).toBe(`blob:sha256:${sha256(raw)}`);
    expect(await blobFiles()).toEqual([sha256(raw)]);
  });
});

describe("already a ref (C 7)", () => {
  it("a data value that is already a ref is left alone and no blob is written for it", async () => {
    const raw = bytes(2000, 4);
    const ref = await new BlobStore(storage).put(raw);
    const blobsBefore = await blobFiles();

    const { path, id } = await writeSessionWithImages([image(ref)]);
    const content = (await recordsOnDisk(path)).find((r) => r.id === id)!.message.content;
    expect(content[1]).toEqual(image(ref));
    expect(await blobFiles()).toEqual(blobsBefore);

    const reopened = await track(SessionManager.open(storage, path, OMP));
    expect(((reopened.getEntry(id) as MessageEntry).message.content as Array<{ data: string }>)[1]!.data).toBe(raw.toString("base64"));
  });
});

describe("reload (C 8)", () => {
  it("reload resolves refs back to identical base64", async () => {
    const a = bytes(5000, 5).toString("base64");
    const b = bytes(1500, 6).toString("base64");
    const { path, id } = await writeSessionWithImages([image(a), image(b)]);
    expect(JSON.stringify(await recordsOnDisk(path))).not.toContain(a.slice(0, 200));

    const reopened = await track(SessionManager.open(storage, path, OMP));
    const content = (reopened.getEntry(id) as MessageEntry).message.content as Array<{ data?: string }>;
    expect(content.map((c) => c.data)).toEqual([undefined, a, b]);
    expect(reopened.buildSessionContext().messages[0]).toMatchObject({ content: [{ type: "text" }, { data: a }, { data: b }] });
  });

  it("resolveImages \"lazy\" keeps refs on load until resolveImages() is asked", async () => {
    const a = bytes(5000, 5).toString("base64");
    const { path, id } = await writeSessionWithImages([image(a)]);
    const options: SessionManagerOptions = { ...OMP, resolveImages: "lazy" };
    const reopened = await track(SessionManager.open(storage, path, options));
    const entry = reopened.getEntry(id) as MessageEntry;
    expect((entry.message.content as Array<{ data?: string }>)[1]!.data).toMatch(/^blob:sha256:[0-9a-f]{64}$/);
    const resolved = await reopened.resolveImages(entry);
    expect((resolved.message.content as Array<{ data?: string }>)[1]!.data).toBe(a);
  });

  it("a missing blob keeps the ref string in place and warns", async () => {
    const raw = bytes(4000, 9);
    const { path, id } = await writeSessionWithImages([image(raw.toString("base64"))]);
    await unlink(join(root, "blobs", sha256(raw)));

    const warnings: string[] = [];
    const reopened = await track(SessionManager.open(storage, path, { ...OMP, onWarning: (w) => warnings.push(w) }));
    const ref = `blob:sha256:${sha256(raw)}`;
    expect(((reopened.getEntry(id) as MessageEntry).message.content as Array<{ data?: string }>)[1]!.data).toBe(ref);
    expect(warnings.some((w) => w.includes(ref))).toBe(true);
  });
});

describe("session-persistence-images (B)", () => {
  it("a toolResult's content image is externalized and restored; details.images data stays inline (follows omp at the target)", async () => {
    const contentImage = bytes(1500, 11).toString("base64");
    const detailImage = bytes(1500, 12).toString("base64");
    const toolResult = {
      role: "toolResult",
      toolCallId: "call_1",
      toolName: "screenshot",
      content: [{ type: "text", text: "captured" }, image(contentImage)],
      details: { images: [{ data: detailImage, mimeType: "image/png" }] },
      isError: false,
      timestamp: 1,
    };
    const sm = await track(SessionManager.create(storage, CWD, { ...OMP, sessionDir: SESSION_DIR }));
    sm.appendMessage(userMsg("take a screenshot"));
    sm.appendMessage(assistantMsg("taking it"));
    const id = sm.appendMessage(toolResult);
    const path = sm.getSessionFile()!;
    await sm.close();

    const onDisk = (await recordsOnDisk(path)).find((r) => r.id === id)!.message;
    expect(onDisk.content[1].data).toBe(`blob:sha256:${sha256(Buffer.from(contentImage, "base64"))}`);
    expect(onDisk.details.images[0].data).toBe(detailImage);

    const reopened = await track(SessionManager.open(storage, path, OMP));
    expect((reopened.getEntry(id) as MessageEntry).message).toEqual(toolResult);
  });
});

describe("blob-store (B)", () => {
  it("put stores the bytes under blobs/<sha256> and returns blob:sha256:<hash>", async () => {
    const store = new BlobStore(storage);
    const data = bytes(1234, 13);
    const ref = await store.put(data);
    const hash = sha256(data);
    expect(ref).toBe(BLOB_REF_PREFIX + hash);
    expect(store.pathOf(hash).endsWith(hash)).toBe(true);
    expect(Buffer.compare(await readFile(join(root, store.pathOf(hash))), data)).toBe(0);
    expect(Buffer.compare(Buffer.from((await store.get(ref))!), data)).toBe(0);
    // Same bytes, same ref, one file.
    expect(await store.put(Buffer.from(data))).toBe(ref);
    expect(await blobFiles()).toEqual([hash]);
  });
});

describe("blob-store ref validation (B)", () => {
  const valid = "0123456789abcdef".repeat(4);

  it("parseBlobRef accepts exactly 64 lowercase hex characters", () => {
    expect(parseBlobRef(`blob:sha256:${valid}`)).toBe(valid);
    expect(parseBlobRef("not a blob ref")).toBeNull();
    expect(parseBlobRef(valid)).toBeNull();
    for (const suffix of ["../../../secret.txt", "A".repeat(64), "a".repeat(63), "a".repeat(65), ""]) {
      expect(parseBlobRef(`blob:sha256:${suffix}`)).toBeNull();
    }
  });

  it("resolving a traversal ref returns it unchanged without reading outside the blob directory", async () => {
    // The file "blobs/../secret.txt" would name if the ref were used as a path.
    await writeFile(join(root, "secret.txt"), "top secret");
    const traversal = "blob:sha256:../secret.txt";
    const missing: string[] = [];
    const value = { content: [image(traversal)] };
    expect(await resolveImages(value, new BlobStore(storage), (ref) => missing.push(ref))).toEqual(value);
    expect(missing).toEqual([traversal]);

    const { path, id } = await writeSessionWithImages([image("blob:sha256:../../../secret.txt")]);
    const warnings: string[] = [];
    const reopened = await track(SessionManager.open(storage, path, { ...OMP, onWarning: (w) => warnings.push(w) }));
    expect(((reopened.getEntry(id) as MessageEntry).message.content as Array<{ data?: string }>)[1]!.data).toBe("blob:sha256:../../../secret.txt");
    expect(warnings.some((w) => w.includes("blob:sha256:../../../secret.txt"))).toBe(true);
  });

  it("a valid ref from put(\"hello\") still resolves to the base64 of \"hello\"", async () => {
    const store = new BlobStore(storage);
    const ref = await store.put(new TextEncoder().encode("hello"));
    const resolved = await resolveImages({ content: [image(ref)] }, store, () => {
      throw new Error("the blob exists");
    });
    expect(resolved.content[0]!.data).toBe(Buffer.from("hello").toString("base64"));
  });
});
