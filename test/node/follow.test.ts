/** SessionManager.follow on the Node-side ports; the same suite runs in Chromium (test/browser/follow.test.ts). */
import { mkdtemp, rm } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { memoryStorage } from "../../adapters/memory/index.js";
import { nodeFsStorage } from "../../adapters/node-fs/index.js";
import { afterEach, describe, expect, it, vi } from "vitest";
import { SessionManager, SessionTail, type StoragePort } from "../../src/index.js";
import { describeFollowSuite } from "../shared/follow-suite.js";
import { userMsg } from "../shared/messages.js";
import { waitFor } from "../../src/testing/index.js";

describeFollowSuite("memory (one port)", async () => {
  const port = memoryStorage();
  return { writer: port, reader: port };
});

for (const watchMode of ["auto", "poll"] as const) {
  describeFollowSuite(`node-fs, the writer on a port of its own (watch: ${watchMode === "auto" ? "fs.watch" : "polling"})`, async () => {
    const root = await mkdtemp(join(tmpdir(), "sessionkit-follow-"));
    const writer = nodeFsStorage({ root });
    const reader = nodeFsStorage({ root, watchMode, pollIntervalMs: 50 });
    return {
      writer,
      reader,
      cleanup: async () => {
        await Promise.all([writer.close(), reader.close()]);
        await rm(root, { recursive: true, force: true });
      },
    };
  });
}

describeFollowSuite("a port without watch (polled every 1 s)", async () => {
  const { watch: _watch, ...port } = memoryStorage();
  return { writer: port, reader: port, pollMs: 1000 };
});

describe("SessionManager.follow on a port without watch", () => {
  afterEach(() => vi.useRealTimers());

  for (const pollMs of [undefined, 250]) {
    it(`looks at the file every ${pollMs ?? "1000 (the default)"} ms and not in between`, async () => {
      vi.useFakeTimers({ toFake: ["setInterval", "clearInterval"] });
      const { watch: _watch, ...port } = memoryStorage();
      const writer = await SessionManager.create(port, "/work/poll", { deferUntilAssistant: false });
      writer.appendMessage(userMsg("first"));
      await writer.flush();
      let looks = 0; // a look starts with a stat of the file
      const reader = await SessionManager.open({ ...port, stat: (path) => (looks++, port.stat(path)) }, writer.getSessionFile()!, { readOnly: true });
      const follow = await reader.follow(() => {}, pollMs === undefined ? {} : { pollMs });
      await follow.check(); // the look it makes when it starts, done
      const before = looks;

      writer.appendMessage(userMsg("second"));
      await writer.flush();
      const interval = pollMs ?? 1000;
      await vi.advanceTimersByTimeAsync(interval - 1);
      expect(looks).toBe(before);
      await vi.advanceTimersByTimeAsync(1);
      expect(looks).toBe(before + 1);
      await waitFor(() => reader.getEntries().length === 2, "the second entry");
      await vi.advanceTimersByTimeAsync(interval);
      expect(looks).toBe(before + 2);

      await follow.close();
      await vi.advanceTimersByTimeAsync(10 * interval);
      expect(looks).toBe(before + 2);
      await writer.close();
    });
  }
});

describe("SessionManager.follow on a seed 003 file", () => {
  it("decodes appended seed-003 lines as the loader does", async () => {
    const port = memoryStorage();
    const writer = await SessionManager.create(port, "/work/seed", { layout: "seed003", deferUntilAssistant: false });
    writer.appendMessage(userMsg("first"));
    await writer.flush();
    const reader = await SessionManager.open(port, writer.getSessionFile()!, { readOnly: true });
    expect(reader.getDialect()).toBe("seed003");
    const follow = await reader.follow(() => {});
    for (let i = 0; i < 3; i++) writer.appendMessage(userMsg(`more ${i}`));
    await writer.flush();
    await waitFor(() => reader.getEntries().length === writer.getEntries().length, "the seed-003 entries");
    expect(reader.getEntries()).toEqual(writer.getEntries());
    expect(reader.buildSessionContext()).toEqual(writer.buildSessionContext());
    await follow.close();
    await writer.close();
  });
});

describe("SessionTail", () => {
  it("reports a skipped appended line once when a look fails part-way and the next one reads it again", async () => {
    const memory = memoryStorage();
    let failReadAt: number | null = null;
    const storage: StoragePort = {
      ...memory,
      read: (path, range) => {
        if (range?.offset !== failReadAt) return memory.read(path, range);
        failReadAt = null;
        return Promise.reject(new Error("read failed"));
      },
    };
    const jsonl = (...records: object[]) => new TextEncoder().encode(records.map((record) => `${JSON.stringify(record)}\n`).join(""));
    const path = "sessions/--tail--/tail.jsonl";
    const timestamp = "2026-01-01T00:00:00.000Z";
    const start = jsonl({ type: "session", version: 3, id: "s", timestamp, cwd: "/tail" }, { type: "message", id: "m1", parentId: null, timestamp, message: userMsg("first") });
    await storage.write(path, start);
    const tail = await SessionTail.start(storage, path, { completeBytes: start.length, completeLines: 2 });
    // Line 3 is invalid (empty id); line 4 is long enough that the look reads a second range (4 MiB each).
    const invalid = { type: "message", id: "", parentId: "m1", timestamp, message: userMsg("no id") };
    await storage.append(path, jsonl(invalid, { type: "message", id: "m2", parentId: "m1", timestamp, message: userMsg("x".repeat(5_000_000)) }));
    failReadAt = start.length + 4 * 1024 * 1024;
    await expect(tail.next()).rejects.toThrow("read failed");
    const read = await tail.next();
    expect(read.kind === "appended" && read.entries.map((entry) => entry.id)).toEqual(["m2"]);
    expect(read.kind === "appended" && read.problems.map((problem) => [problem.line, problem.kind])).toEqual([[3, "invalid-entry"]]);
  });
});
