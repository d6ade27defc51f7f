/**
 * The sample the viewer imports on first run: imported once into an empty store, never again;
 * it has every feature the viewer shows; and it is a session pi itself reads the same way.
 */
import { mkdtemp, rm, writeFile } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { SessionManager as PiSessionManager } from "@mariozechner/pi-coding-agent";
import { describe, expect, it } from "vitest";
import { memoryStorage } from "../../../adapters/memory/index.js";
import { EXTERNALIZE_MIN_BASE64 } from "../../../src/blobs/images.js";
import { importSessionFiles } from "../../../src/archive/index.js";
import { SessionManager, type SessionEntry, type StoragePort } from "../../../src/index.js";
import { FIRST_RUN_MARKER, importSampleOnFirstRun, SAMPLE_SESSION } from "../../../web-demo/src/first-run.js";
import { assistantMsg, userMsg } from "../../shared/messages.js";

async function openOnly(storage: StoragePort) {
  const [info, ...others] = await SessionManager.listAll(storage);
  expect(others).toEqual([]);
  return SessionManager.open(storage, info!.path, { readOnly: true });
}

describe("first run", () => {
  it("imports the sample into an empty store once; a deleted sample does not come back", async () => {
    const storage = memoryStorage();
    const summary = await importSampleOnFirstRun(storage);
    expect(summary?.sessions.map((s) => s.action)).toEqual(["created"]);
    expect(summary?.blobs.written).toBe(2);
    const [info] = await SessionManager.listAll(storage);
    expect(info!.name).toBe("Flaky due-date test");
    expect(await storage.stat(FIRST_RUN_MARKER)).not.toBeNull();

    expect(await importSampleOnFirstRun(storage)).toBeNull();
    await storage.remove(info!.path);
    expect(await importSampleOnFirstRun(storage)).toBeNull();
    expect(await SessionManager.listAll(storage)).toEqual([]);
  });

  it("leaves a store that already has sessions alone", async () => {
    const storage = memoryStorage();
    const sm = await SessionManager.create(storage, "/work/mine");
    sm.appendMessage(userMsg("my own session"));
    sm.appendMessage(assistantMsg("yes"));
    await sm.close();
    expect(await importSampleOnFirstRun(storage)).toBeNull();
    expect((await SessionManager.listAll(storage)).map((i) => i.firstMessage)).toEqual(["my own session"]);
  });
});

describe("the sample session", () => {
  it("has branches, labels, a compaction, a branch summary, an image blob, thinking and model changes", async () => {
    const storage = memoryStorage();
    await importSampleOnFirstRun(storage);
    const sm = await openOnly(storage);
    const entries = sm.getEntries();
    const ofType = (type: string) => entries.filter((e) => e.type === type);
    const childCount = new Map<string | null, number>();
    for (const e of entries) childCount.set(e.parentId, (childCount.get(e.parentId) ?? 0) + 1);
    const leaves = entries.filter((e) => !childCount.has(e.id));
    expect(leaves.length).toBeGreaterThanOrEqual(2);
    expect(ofType("label").length).toBeGreaterThanOrEqual(2);
    expect(ofType("compaction")).toHaveLength(1);
    expect(ofType("branch_summary")).toHaveLength(1);
    expect(ofType("thinking_level_change").length).toBeGreaterThanOrEqual(2);
    expect(ofType("model_change").length).toBeGreaterThanOrEqual(2);
    expect(ofType("custom_message")).toHaveLength(1);

    const blocks = entries.flatMap((e: SessionEntry) => (e.type === "message" && Array.isArray(e.message.content) ? (e.message.content as { type: string; data?: string }[]) : []));
    // One image on the latest branch, so the viewer's first view shows one.
    const leafContext = sm.buildSessionContext().messages;
    expect(leafContext.some((m) => Array.isArray(m.content) && m.content.some((b: { type: string }) => b.type === "image"))).toBe(true);
    const images = blocks.filter((b) => b.type === "image");
    expect(images).toHaveLength(2);
    for (const image of images) expect(image.data!.length).toBeGreaterThanOrEqual(EXTERNALIZE_MIN_BASE64);
    expect(blocks.some((b) => b.type === "thinking")).toBe(true);
    expect(blocks.some((b) => b.type === "toolCall")).toBe(true);
    // Stored as blobs, referenced from the session file.
    expect(await storage.list("blobs")).toHaveLength(2);
    const stored = new TextDecoder().decode((await storage.read(sm.getSessionFile()!))!);
    expect(stored).toContain("blob:sha256:");

    const roles = sm.buildSessionContext().messages.map((m) => m.role);
    expect(roles).toEqual(expect.arrayContaining(["compactionSummary", "branchSummary", "custom", "user", "assistant", "toolResult"]));
    await sm.close();
  });

  it("is a session pi reads the same way: pi's context equals the imported one, on every leaf", async () => {
    const dir = await mkdtemp(join(tmpdir(), "sessionkit-sample-"));
    try {
      const path = join(dir, "sample.jsonl");
      await writeFile(path, SAMPLE_SESSION);
      const pi = PiSessionManager.open(path, dir);

      const storage = memoryStorage();
      await importSessionFiles(storage, [{ name: "sample.jsonl", bytes: new TextEncoder().encode(SAMPLE_SESSION) }]);
      const ours = await openOnly(storage);
      expect(ours.getEntries().map((e) => e.id)).toEqual(pi.getEntries().map((e) => e.id));
      for (const entry of pi.getEntries()) {
        pi.branch(entry.id);
        ours.branch(entry.id);
        expect(ours.buildSessionContext()).toEqual(JSON.parse(JSON.stringify(pi.buildSessionContext())));
      }
      await ours.close();
    } finally {
      await rm(dir, { recursive: true, force: true });
    }
  });
});
