/**
 * SessionManager.follow over a real StoragePort: a writer appends, a read-only manager follows.
 * Universal APIs only, so it runs in Node and in Chromium alike.
 */
import { afterEach, describe, expect, it, vi } from "vitest";
import { SessionManager, isSessionError, type FollowUpdate, type StoragePort } from "../../src/index.js";
import { encodeJsonl } from "../../src/format/session-file.js";
import { countingPort } from "./counting-port.js";
import { assistantMsg, userMsg } from "./messages.js";
import { waitFor } from "../../src/testing/index.js";

export interface FollowStorage {
  /** The port the writer uses. */
  writer: StoragePort;
  /** The port the follower reads through: another port over the same place where the backend has one. */
  reader: StoragePort;
  /**
   * The reader has no `watch`: the follower looks every this many ms. The suite then runs its
   * poll timer on a clock it moves, and moves it by this much where it waits for a change.
   */
  pollMs?: number;
  cleanup?: () => Promise<void>;
}

const CWD = "/work/follow";

export function describeFollowSuite(name: string, makeStorage: () => Promise<FollowStorage>): void {
  describe(`SessionManager.follow: ${name}`, () => {
    const cleanups: (() => Promise<void>)[] = [];
    afterEach(async () => {
      vi.useRealTimers();
      for (const cleanup of cleanups.splice(0).reverse()) await cleanup();
    });

    async function setUp(prefillEntries = 2) {
      const storage = await makeStorage();
      cleanups.push(async () => storage.cleanup?.());
      if (storage.pollMs !== undefined) vi.useFakeTimers({ toFake: ["setInterval", "clearInterval"] });
      const writer = await SessionManager.create(storage.writer, CWD);
      cleanups.push(() => writer.close());
      for (let i = 0; i < prefillEntries; i += 2) {
        writer.appendMessage(userMsg(`question ${i} ${"x".repeat(4000)}`));
        writer.appendMessage(assistantMsg(`answer ${i}`));
      }
      await writer.flush();
      const path = writer.getSessionFile()!;
      const counted = countingPort(storage.reader);
      const reader = await SessionManager.open(counted.port, path, { readOnly: true });
      const updates: FollowUpdate[] = [];
      const follow = await reader.follow((update) => updates.push(update));
      cleanups.push(() => follow.close());
      /** Waits until `condition` holds, as the follower's next look makes it (on a polled port, once the poll's time has passed). */
      const caughtUp = async (condition: () => boolean, what: string | (() => string)) => {
        if (storage.pollMs !== undefined) await vi.advanceTimersByTimeAsync(storage.pollMs);
        await waitFor(condition, what);
      };
      return { storage, writer, reader, path, counter: counted.counter, updates, follow, caughtUp };
    }

    const sameView = (reader: SessionManager, writer: SessionManager) => {
      expect(reader.getEntries()).toEqual(writer.getEntries());
      expect(reader.getLeafId()).toBe(writer.getLeafId());
      expect(reader.getTree()).toEqual(writer.getTree());
      expect(reader.buildSessionContext()).toEqual(writer.buildSessionContext());
    };

    it("entries flushed by the writer join the follower's index, tree and context, and its listener hears each once", async () => {
      const { writer, reader, updates, caughtUp } = await setUp();
      const appended: string[] = [];
      for (let i = 0; i < 6; i++) {
        appended.push(writer.appendMessage(userMsg(`more ${i}`)));
        if (i === 2) appended.push(writer.appendLabelChange(appended[0]!, "marked"));
        await writer.flush();
      }
      appended.push(writer.appendSessionInfo("followed"));
      await writer.flush();
      await caughtUp(() => reader.getEntries().length === writer.getEntries().length, () => `${writer.getEntries().length} entries (have ${reader.getEntries().length})`);

      sameView(reader, writer);
      expect(reader.getLabel(appended[0]!)).toBe("marked");
      expect(reader.getSessionName()).toBe("followed");
      const heard = updates.flatMap((update) => (update.kind === "appended" ? update.entries.map((entry) => entry.id) : []));
      expect(heard).toEqual(appended);
      expect(updates.every((update) => update.kind === "appended")).toBe(true);
    });

    it("reads only the new bytes: what it reads grows with the appends, not with the file", async () => {
      const { storage, writer, reader, path, counter, caughtUp } = await setUp(200); // ~0.8 MB before following
      const sizeBefore = (await storage.writer.stat(path))!.size;
      const readBefore = counter.bytesRead;
      const looksBefore = counter.reads;
      for (let i = 0; i < 20; i++) {
        writer.appendMessage(userMsg(`small ${i}`));
        await writer.flush();
      }
      await caughtUp(() => reader.getEntries().length === writer.getEntries().length, "the follower to catch up");
      const appendedBytes = (await storage.writer.stat(path))!.size - sizeBefore;
      const readWhileFollowing = counter.bytesRead - readBefore;
      const reads = counter.reads - looksBefore;
      // Each look reads the new bytes, the header line (~200 bytes) and 64 bytes before the offset.
      expect(readWhileFollowing).toBeGreaterThanOrEqual(appendedBytes);
      expect(readWhileFollowing).toBeLessThanOrEqual(appendedBytes + reads * 400);
      expect(readWhileFollowing).toBeLessThan(sizeBefore / 10);
    });

    it("a line that lands in two pieces becomes an entry once its newline arrives, once", async () => {
      const { storage, reader, path, updates, follow, caughtUp } = await setUp();
      const leaf = reader.getLeafId();
      const line = new TextDecoder().decode(encodeJsonl([{ type: "message", id: "abcd1234", parentId: leaf, timestamp: new Date().toISOString(), message: userMsg("in two pieces") }]));
      const half = Math.floor(line.length / 2);
      await storage.writer.append(path, new TextEncoder().encode(line.slice(0, half)));
      await follow.check();
      expect(reader.getEntry("abcd1234")).toBeUndefined();
      await storage.writer.append(path, new TextEncoder().encode(line.slice(half)));
      await caughtUp(() => reader.getEntry("abcd1234") !== undefined, "the completed line");
      await follow.check();
      expect(reader.getEntries().filter((entry) => entry.id === "abcd1234")).toHaveLength(1);
      expect(updates.filter((update) => update.kind === "appended")).toHaveLength(1);
    });

    it("a rewritten file (other bytes before the offset) is loaded again; a removed one is reported", async () => {
      const { storage, reader, path, updates, caughtUp } = await setUp();
      const other = SessionManager.inMemory(CWD);
      other.appendMessage(userMsg("a different history"));
      other.appendMessage(assistantMsg("replacing the file"));
      await storage.writer.write(path, encodeJsonl([{ ...reader.getHeader()!, cwd: "/work/rewritten" }, ...other.getEntries()]));
      await caughtUp(() => updates.some((update) => update.kind === "reloaded"), "a reload");
      expect(reader.getEntries()).toEqual(other.getEntries());
      expect(reader.getCwd()).toBe("/work/rewritten");

      await storage.writer.remove(path);
      await caughtUp(() => updates.some((update) => update.kind === "removed"), "the removal");
    });

    it("a session that writes its file cannot follow it", async () => {
      const { writer } = await setUp();
      const error = await writer.follow(() => {}).then(
        () => null,
        (e: unknown) => e,
      );
      expect(isSessionError(error, "not-read-only")).toBe(true);
    });

    it("close() stops following", async () => {
      const { writer, reader, follow } = await setUp();
      await follow.close();
      const before = reader.getEntries().length;
      writer.appendMessage(userMsg("after close"));
      await writer.flush();
      await follow.check();
      expect(reader.getEntries()).toHaveLength(before);
    });
  });
}
