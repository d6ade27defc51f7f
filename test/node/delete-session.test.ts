/**
 * Deleting a session with its now-unreferenced blobs: a blob goes only when no other file in the
 * store references it; side files go with the session; a session with a live writer stays.
 */
import { describe, expect, it } from "vitest";
import { memoryStorage } from "../../adapters/memory/index.js";
import { bytesToBase64 } from "../../src/blobs/base64.js";
import { deleteSessionWithBlobs, isStorageError, SessionManager, type StoragePort } from "../../src/index.js";
import { sha256Hex } from "../../src/blobs/blob-store.js";
import { assistantMsg, userMsg } from "../shared/messages.js";

/** Distinct image bytes, large enough (≥ 1024 base64 chars) to be stored as a blob. */
function imageBytes(seed: number): Uint8Array {
  return Uint8Array.from({ length: 1200 }, (_, i) => (i * 31 + seed * 17) % 251);
}

async function blobPath(bytes: Uint8Array): Promise<string> {
  return `blobs/${await sha256Hex(bytes)}`;
}

/** A stored session whose user message carries `images`. */
async function sessionWithImages(storage: StoragePort, cwd: string, images: Uint8Array[], options: { sessionDir?: string } = {}): Promise<string> {
  const sm = await SessionManager.create(storage, cwd, options);
  sm.appendMessage({
    role: "user",
    content: [{ type: "text", text: "look" }, ...images.map((bytes) => ({ type: "image", data: bytesToBase64(bytes), mimeType: "image/png" }))],
    timestamp: Date.now(),
  });
  sm.appendMessage(assistantMsg("seen"));
  const path = sm.getSessionFile()!;
  await sm.close();
  return path;
}

const exists = async (storage: StoragePort, path: string) => (await storage.stat(path)) !== null;

describe("deleteSessionWithBlobs", () => {
  it("removes the session and the blobs only it referenced; shared blobs stay", async () => {
    const storage = memoryStorage();
    const [own, shared, otherOwn] = [imageBytes(1), imageBytes(2), imageBytes(3)];
    const doomed = await sessionWithImages(storage, "/work/a", [own, shared]);
    const kept = await sessionWithImages(storage, "/work/b", [shared, otherOwn]);

    const result = await deleteSessionWithBlobs(storage, doomed);
    expect(result.removedFiles).toEqual([doomed]);
    expect(result.removedBlobs).toEqual([await blobPath(own)]);
    expect(result.keptBlobRefs).toEqual([`blob:sha256:${await sha256Hex(shared)}`]);
    expect(await exists(storage, doomed)).toBe(false);
    expect(await exists(storage, await blobPath(own))).toBe(false);
    expect(await exists(storage, await blobPath(shared))).toBe(true);
    expect(await exists(storage, await blobPath(otherOwn))).toBe(true);

    expect((await SessionManager.listAll(storage)).map((i) => i.path)).toEqual([kept]);
    // The remaining session still opens with both its images.
    const sm = await SessionManager.open(storage, kept, { readOnly: true, onWarning: (w) => expect.unreachable(w) });
    await sm.close();
  });

  it("keeps a blob referenced from anywhere else in the store: a custom session dir, another session's backup", async () => {
    const storage = memoryStorage();
    const [inCustomDir, inBackup, alone] = [imageBytes(4), imageBytes(5), imageBytes(6)];
    const doomed = await sessionWithImages(storage, "/work/a", [inCustomDir, inBackup, alone]);
    await sessionWithImages(storage, "/work/c", [inCustomDir], { sessionDir: "elsewhere/sessions" });
    const other = await sessionWithImages(storage, "/work/b", [inBackup]);
    // The other session's only reference is in a side file kept by a repair.
    await storage.write(`${other}.torn-1700000000000`, (await storage.read(other))!);
    await storage.write(other, new TextEncoder().encode(`${JSON.stringify({ type: "session", version: 3, id: "other", timestamp: new Date().toISOString(), cwd: "/work/b" })}\n`));

    const result = await deleteSessionWithBlobs(storage, doomed);
    expect(result.removedBlobs).toEqual([await blobPath(alone)]);
    expect(await exists(storage, await blobPath(inCustomDir))).toBe(true);
    expect(await exists(storage, await blobPath(inBackup))).toBe(true);
  });

  it("removes the session's own side files, and blobs only they referenced", async () => {
    const storage = memoryStorage();
    const [current, onlyInBackup] = [imageBytes(7), imageBytes(8)];
    const doomed = await sessionWithImages(storage, "/work/a", [current]);
    const backupSource = await sessionWithImages(storage, "/work/tmp", [onlyInBackup]);
    const sideFiles = [`${doomed}.v2.bak`, `${doomed}.torn-1700000000000`];
    await storage.write(sideFiles[0]!, (await storage.read(backupSource))!);
    await storage.write(sideFiles[1]!, new TextEncoder().encode('{"type":"mess'));
    await deleteSessionWithBlobs(storage, backupSource);
    expect(await exists(storage, await blobPath(onlyInBackup))).toBe(true); // the backup still references it

    const result = await deleteSessionWithBlobs(storage, doomed);
    expect(result.removedFiles.sort()).toEqual([doomed, ...sideFiles].sort());
    expect(result.removedBlobs.sort()).toEqual([await blobPath(current), await blobPath(onlyInBackup)].sort());
    for (const path of result.removedFiles) expect(await exists(storage, path)).toBe(false);
    expect(await storage.list("blobs")).toEqual([]);
  });

  it("does not delete a session another writer holds, and removes nothing", async () => {
    const storage = memoryStorage();
    const image = imageBytes(9);
    const path = await sessionWithImages(storage, "/work/a", [image]);
    const writer = await SessionManager.open(storage, path);
    const error = await deleteSessionWithBlobs(storage, path).catch((e: unknown) => e);
    expect(isStorageError(error, "locked")).toBe(true);
    expect(await exists(storage, path)).toBe(true);
    expect(await exists(storage, await blobPath(image))).toBe(true);
    await writer.close();
    await deleteSessionWithBlobs(storage, path);
    expect(await exists(storage, path)).toBe(false);
  });

  it("fails with not-found for a session that is not stored", async () => {
    const error = await deleteSessionWithBlobs(memoryStorage(), "sessions/--x--/missing.jsonl").catch((e: unknown) => e);
    expect(isStorageError(error, "not-found")).toBe(true);
  });

  it("deletes a session without images without touching the blobs of others", async () => {
    const storage = memoryStorage();
    const image = imageBytes(10);
    await sessionWithImages(storage, "/work/a", [image]);
    const plain = await SessionManager.create(storage, "/work/b");
    plain.appendMessage(userMsg("no images here"));
    plain.appendMessage(assistantMsg("ok"));
    const path = plain.getSessionFile()!;
    await plain.close();
    expect(await deleteSessionWithBlobs(storage, path)).toEqual({ removedFiles: [path], removedBlobs: [], keptBlobRefs: [] });
    expect(await exists(storage, await blobPath(image))).toBe(true);
  });
});
