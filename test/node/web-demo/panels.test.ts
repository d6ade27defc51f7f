// @vitest-environment happy-dom
/**
 * The import report with real archive errors (code, member, message) from the core, and the
 * storage choice.
 */
import { BlobWriter, TextReader, ZipWriter } from "@zip.js/zip.js";
import { describe, expect, it } from "vitest";
import { memoryStorage } from "../../../adapters/memory/index.js";
import { importArchive, importSessionFiles } from "../../../src/archive/index.js";
import { ArchiveError, SessionError, StorageError } from "../../../src/index.js";
import { loadBackendChoice, saveBackendChoice } from "../../../web-demo/src/backend.js";
import { renderError, renderImportReport } from "../../../web-demo/src/render/import-report.js";

describe("import report", () => {
  it("shows what each session import did", async () => {
    const storage = memoryStorage();
    const file = (id: string) => ({
      name: `${id}.jsonl`,
      bytes: new TextEncoder().encode(
        `${JSON.stringify({ type: "session", version: 3, id, timestamp: "2026-01-01T00:00:00.000Z", cwd: "/w" })}\n` +
          `${JSON.stringify({ type: "message", id: "e1", parentId: null, timestamp: "2026-01-01T00:00:01.000Z", message: { role: "user", content: "hi", timestamp: 1 } })}\n`,
      ),
    });
    await importSessionFiles(storage, [file("one")]);
    const summary = await importSessionFiles(storage, [file("one"), file("two")]);
    const report = renderImportReport([{ files: ["one.jsonl", "two.jsonl"], summary }]);
    expect(report.querySelector("h3")!.textContent).toBe("one.jsonl, two.jsonl");
    expect([...report.querySelectorAll("li[data-action]")].map((li) => li.getAttribute("data-action"))).toEqual(["skipped", "created"]);
    expect(report.textContent).toContain("Images: 0 stored, 0 already present.");
    expect(report.querySelector(".error")).toBeNull();
  });

  it("shows an archive error's code, member and message", async () => {
    const writer = new ZipWriter(new BlobWriter("application/zip"));
    await writer.add("notes/readme.txt", new TextReader("not a session"));
    const zip = await writer.close();
    const error = await importArchive(memoryStorage(), zip).catch((e: unknown) => e);
    expect(error).toBeInstanceOf(ArchiveError);

    const report = renderImportReport([{ files: ["shared.zip"], error }]);
    const unit = report.querySelector(".import-unit")!;
    expect(unit.classList.contains("failed")).toBe(true);
    const shown = unit.querySelector('.error[role="alert"]')!;
    expect(shown.querySelector('[data-field="code"] dd')!.textContent).toBe((error as ArchiveError).code);
    expect(shown.querySelector('[data-field="member"] dd')!.textContent).toBe("notes/readme.txt");
    expect(shown.querySelector(".error-message")!.textContent).toBe((error as ArchiveError).message);
  });

  it("shows the code of storage and session errors, and the message of any other", () => {
    const storageError = renderError(new StorageError("quota", "out of space", { path: "blobs/ab" }));
    expect(storageError.querySelector('[data-field="code"] dd')!.textContent).toBe("quota");
    expect(storageError.querySelector('[data-field="path"] dd')!.textContent).toBe("blobs/ab");
    expect(renderError(new SessionError("not-a-session", "x is not a session file")).querySelector(".error-kind")!.textContent).toBe("SessionError");
    const plain = renderError("plain failure");
    expect(plain.querySelector("dl")).toBeNull();
    expect(plain.querySelector(".error-message")!.textContent).toBe("plain failure");
  });
});

describe("backend choice", () => {
  it("is IndexedDB until OPFS is chosen, and remembered", () => {
    localStorage.clear();
    expect(loadBackendChoice()).toBe("indexeddb");
    saveBackendChoice("opfs");
    expect(loadBackendChoice()).toBe("opfs");
    saveBackendChoice("indexeddb");
    expect(loadBackendChoice()).toBe("indexeddb");
  });
});
