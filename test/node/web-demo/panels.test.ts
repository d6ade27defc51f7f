// @vitest-environment happy-dom
/**
 * The viewer's other panels: the session list, the header with load problems, and the import
 * report with real archive errors (code, member, message) from the core.
 */
import { BlobWriter, TextReader, ZipWriter } from "@zip.js/zip.js";
import { describe, expect, it } from "vitest";
import { memoryStorage } from "../../../adapters/memory/index.js";
import {
  ArchiveError,
  importArchive,
  importSessionFiles,
  SessionError,
  StorageError,
  type SessionHeader,
  type SessionInfo,
} from "../../../src/index.js";
import { loadBackendChoice, saveBackendChoice } from "../../../web-demo/src/backend.js";
import { renderError, renderImportReport } from "../../../web-demo/src/render/import-report.js";
import { renderLoadNotice, renderSessionHeader } from "../../../web-demo/src/render/session-header.js";
import { renderSessionList } from "../../../web-demo/src/render/session-list.js";

function info(overrides: Partial<SessionInfo>): SessionInfo {
  return {
    path: "sessions/--work-app--/2026-01-01T00-00-00-000Z_a.jsonl",
    id: "a",
    cwd: "/work/app",
    created: new Date("2026-01-01T00:00:00Z"),
    modified: new Date("2026-01-02T00:00:00Z"),
    messageCount: 4,
    firstMessage: "how do I fix the build?",
    allMessagesText: "",
    ...overrides,
  };
}

describe("session list", () => {
  it("shows the name, or the first message, with modified time and message count; a click opens", () => {
    const opened: string[] = [];
    const named = info({ path: "p/named.jsonl", name: "Build fix", messageCount: 1 });
    const unnamed = info({ path: "p/unnamed.jsonl" });
    const empty = info({ path: "p/empty.jsonl", firstMessage: "", messageCount: 0 });
    const list = renderSessionList([named, unnamed, empty], { selectedPath: "p/unnamed.jsonl", onOpen: (p) => opened.push(p) });
    const items = [...list.querySelectorAll<HTMLElement>("li.session")];
    expect(items.map((i) => i.querySelector(".session-title")!.textContent)).toEqual(["Build fix", "how do I fix the build?", "(no messages)"]);
    expect(items.map((i) => i.querySelector(".session-meta")!.textContent!.split(" · ")[1])).toEqual(["1 message (all branches)", "4 messages (all branches)", "0 messages (all branches)"]);
    expect(items[0]!.querySelector("time")!.getAttribute("datetime")).toBe("2026-01-02T00:00:00.000Z");
    expect(items[1]!.classList.contains("selected")).toBe(true);
    expect(list.querySelectorAll(".selected")).toHaveLength(1);
    items[2]!.querySelector("button")!.click();
    expect(opened).toEqual(["p/empty.jsonl"]);
  });

  it("says so when nothing is stored", () => {
    expect(renderSessionList([], { selectedPath: null, onOpen: () => {} }).textContent).toContain("No sessions stored");
  });
});

describe("session header", () => {
  const header: SessionHeader = { type: "session", version: 3, id: "s1", timestamp: "2026-01-01T10:00:00.000Z", cwd: "/work/app", parentSession: "sessions/--work-app--/parent.jsonl" };
  const base = { path: "sessions/--work-app--/x_s1.jsonl", header, name: "My session", entryCount: 12, problems: [], migratedFrom: null, warnings: [] };

  it("shows cwd, created, version and parent session", () => {
    const view = renderSessionHeader(base);
    const field = (name: string) => view.querySelector(`[data-field="${name}"] dd`)?.textContent;
    expect(view.querySelector("h2")!.textContent).toBe("My session");
    expect(field("cwd")).toBe("/work/app");
    expect(field("version")).toBe("3");
    expect(field("parent session")).toBe("sessions/--work-app--/parent.jsonl");
    expect(field("created")).toBe(new Date(header.timestamp).toLocaleString());
    expect(field("entries (all types, all branches)")).toBe("12");
    expect(view.querySelector(".load-notice")).toBeNull();
  });

  it("leaves out a missing parent session and names a v1 header", () => {
    const view = renderSessionHeader({ ...base, name: undefined, header: { type: "session", id: "s1", timestamp: header.timestamp } });
    expect(view.querySelector('[data-field="parent session"]')).toBeNull();
    expect(view.querySelector('[data-field="cwd"]')).toBeNull();
    expect(view.querySelector('[data-field="version"] dd')!.textContent).toBe("1 (no version field)");
    expect(view.querySelector("h2")!.textContent).toBe("Unnamed session");
  });

  it("shows skipped and glued lines, a migration and missing blobs as a notice", () => {
    const notice = renderLoadNotice({
      problems: [
        { line: 7, kind: "glued", message: "2 JSON objects on one line, all recovered" },
        { line: 9, kind: "unparseable", message: "not JSON" },
      ],
      migratedFrom: 2,
      warnings: ["entry abc: missing blob blob:sha256:00"],
    })!;
    expect(notice.getAttribute("role")).toBe("status");
    expect(notice.textContent).toContain("(1 skipped, 1 recovered)");
    expect([...notice.querySelectorAll("li[data-kind]")].map((li) => li.textContent)).toEqual([
      "line 7: glued — 2 JSON objects on one line, all recovered",
      "line 9: unparseable — not JSON",
    ]);
    expect(notice.textContent).toContain("Stored as version 2");
    expect(notice.querySelector(".warnings")!.textContent).toContain("missing blob");
  });
});

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
