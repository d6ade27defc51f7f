/** The viewer's import of picked or dropped files (.jsonl batch, .zip archives, one report per unit). */
import { describe, expect, it } from "vitest";
import { memoryStorage } from "../../../adapters/memory/index.js";
import { exportArchive } from "../../../src/archive/index.js";
import { isArchiveError, SessionManager, type StoragePort } from "../../../src/index.js";
import { SAMPLE_SESSION } from "../../../web-demo/src/first-run.js";
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

/** A zip of one session, as the viewer's export button makes it (main.ts). */
async function exportToBlob(storage: StoragePort, path: string): Promise<{ blob: Blob }> {
  const chunks: Uint8Array<ArrayBuffer>[] = [];
  await exportArchive(storage, [path], new WritableStream<Uint8Array>({ write: (chunk) => void chunks.push(chunk.slice()) }));
  return { blob: new Blob(chunks, { type: "application/zip" }) };
}

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
