/**
 * The viewer's import of picked or dropped files (.jsonl batch, .zip archives, one report per
 * unit) and its export of a session or a branch into a zip Blob.
 */
import { BlobReader, TextWriter, ZipReader } from "@zip.js/zip.js";
import { describe, expect, it } from "vitest";
import { memoryStorage } from "../../../adapters/memory/index.js";
import { isArchiveError, MANIFEST_NAME, parseManifest, SessionManager, type StoragePort } from "../../../src/index.js";
import { archiveFileName, exportToBlob } from "../../../web-demo/src/export-session.js";
import { importSampleOnFirstRun, SAMPLE_SESSION } from "../../../web-demo/src/first-run.js";
import { importFiles, UnsupportedFilesError } from "../../../web-demo/src/import-files.js";
import { assistantMsg, userMsg } from "../../shared/messages.js";

async function storedSession(storage: StoragePort, cwd: string, text: string): Promise<string> {
  const sm = await SessionManager.create(storage, cwd);
  sm.appendMessage(userMsg(text));
  sm.appendMessage(assistantMsg(`answer to ${text}`));
  const path = sm.getSessionFile()!;
  await sm.close();
  return path;
}

async function zipMembers(blob: Blob): Promise<Map<string, string>> {
  const reader = new ZipReader(new BlobReader(blob));
  const members = new Map<string, string>();
  for (const entry of await reader.getEntries()) {
    if (!entry.directory) members.set(entry.filename, await entry.getData!(new TextWriter()));
  }
  await reader.close();
  return members;
}

describe("exportToBlob", () => {
  it("exports a session with its image blobs as a zip with a manifest", async () => {
    const storage = memoryStorage();
    await importSampleOnFirstRun(storage);
    const [info] = await SessionManager.listAll(storage);
    const { blob, summary } = await exportToBlob(storage, info!.path);
    expect(blob.type).toBe("application/zip");
    expect(blob.size).toBe(summary.archiveBytes);
    const members = await zipMembers(blob);
    const manifest = parseManifest(new TextEncoder().encode(members.get(MANIFEST_NAME)!));
    expect(manifest.sessions.map((s) => s.id)).toEqual([info!.id]);
    expect(manifest.blobs).toHaveLength(2);
    expect([...members.keys()].sort()).toEqual([MANIFEST_NAME, ...manifest.blobs.map((b) => `blobs/${b.hash}`), `sessions/${info!.id}.jsonl`].sort());
  });

  it("exports a branch as a session of its own, which imports elsewhere with only that branch", async () => {
    const storage = memoryStorage();
    const sm = await SessionManager.create(storage, "/work/app");
    const question = sm.appendMessage(userMsg("question"));
    sm.appendMessage(assistantMsg("first answer"));
    sm.branch(question);
    const second = sm.appendMessage(assistantMsg("second answer"));
    sm.appendMessage(userMsg("thanks"));
    const path = sm.getSessionFile()!;
    await sm.close();

    const { blob, summary } = await exportToBlob(storage, { path, leafId: second });
    expect(summary.sessions[0]!.leafId).toBe(second);
    const target = memoryStorage();
    const [result] = await importFiles(target, [new File([blob], archiveFileName("x", second))]);
    expect(result!.error).toBeUndefined();
    const imported = await SessionManager.open(target, result!.summary!.sessions[0]!.path, { readOnly: true });
    expect(imported.buildSessionContext().messages.map((m) => m.content)).toEqual(["question", [{ type: "text", text: "second answer" }]]);
    await imported.close();
  });

  it("names the download after the session and the leaf, in safe characters", () => {
    expect(archiveFileName("0199-abc")).toBe("session-0199-abc.zip");
    expect(archiveFileName("id/../x", "a1b2")).toBe("session-id____x-branch-a1b2.zip");
  });
});

describe("importFiles", () => {
  it("imports .jsonl files as one batch and each .zip on its own", async () => {
    const source = memoryStorage();
    const exported = await storedSession(source, "/work/zip", "from the archive");
    const { blob } = await exportToBlob(source, exported);

    const storage = memoryStorage();
    const results = await importFiles(storage, [
      new File([SAMPLE_SESSION], "pi-sample.jsonl"),
      new File([blob], "shared.ZIP"),
      new File([(await source.read(exported))!.slice()], "plain.jsonl"),
    ]);
    expect(results.map((r) => r.files)).toEqual([["pi-sample.jsonl", "plain.jsonl"], ["shared.ZIP"]]);
    expect(results.map((r) => r.summary?.sessions.map((s) => s.action))).toEqual([["created", "created"], ["skipped"]]);
    expect((await SessionManager.listAll(storage)).map((i) => i.firstMessage).sort()).toEqual(["The due-date test fails on CI every evening, but never on my machine. This is what CI shows:", "from the archive"].sort());
  });

  it("reports a bad archive on its own, with its ArchiveError, and still imports the rest", async () => {
    const storage = memoryStorage();
    const results = await importFiles(storage, [new File(["not a zip at all"], "broken.zip"), new File([SAMPLE_SESSION], "pi-sample.jsonl")]);
    const broken = results.find((r) => r.files[0] === "broken.zip")!;
    expect(isArchiveError(broken.error, "not-a-zip")).toBe(true);
    expect(results.find((r) => r.files[0] === "pi-sample.jsonl")!.summary!.sessions[0]!.action).toBe("created");
  });

  it("reports a .jsonl batch that is not a session, and imports nothing of that batch", async () => {
    const storage = memoryStorage();
    const [result] = await importFiles(storage, [new File([SAMPLE_SESSION], "good.jsonl"), new File(['{"hello":"world"}\n'], "notes.jsonl")]);
    expect(isArchiveError(result!.error)).toBe(true);
    expect((result!.error as Error).message).toContain("notes.jsonl");
    expect(await SessionManager.listAll(storage)).toEqual([]);
  });

  it("refuses files that are neither .jsonl nor .zip before importing anything", async () => {
    const storage = memoryStorage();
    const error = await importFiles(storage, [new File([SAMPLE_SESSION], "ok.jsonl"), new File(["x"], "photo.png")]).catch((e: unknown) => e);
    expect(error).toBeInstanceOf(UnsupportedFilesError);
    expect((error as UnsupportedFilesError).names).toEqual(["photo.png"]);
    expect(await SessionManager.listAll(storage)).toEqual([]);
  });
});
