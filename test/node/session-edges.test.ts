/**
 * Edges where stored bytes could be lost or misread: torn tails another writer completed, catalog
 * resumes after unterminated lines and rewrites, migrations of long text, switching files with
 * writes queued, invalid entries, blobs deleted behind a session's back, non-canonical base64.
 */
import { mkdtemp, readdir, rm } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterEach, beforeEach, describe, expect, it, vi } from "vitest";
import { memoryStorage } from "../../adapters/memory/index.js";
import { nodeFsStorage } from "../../adapters/node-fs/index.js";
import { deleteSessionWithBlobs, findMostRecentSession, isStorageError, SessionManager, StorageError, type StoragePort } from "../../src/index.js";
import { readSessionFile } from "../../src/format/session-file.js";
import { assistantMsg, userMsg } from "../shared/messages.js";

const encoder = new TextEncoder();
const decoder = new TextDecoder();
const DIR = "sessions/--edge--";
const jsonl = (...records: unknown[]) => encoder.encode(records.map((r) => JSON.stringify(r) + "\n").join(""));
const header = { type: "session", version: 3, id: "edge-1", timestamp: "2026-01-01T00:00:00.000Z", cwd: "/edge" };
const message = (id: string, parentId: string | null, role: string, text: string) => ({
  type: "message",
  id,
  parentId,
  timestamp: "2026-01-01T00:00:01.000Z",
  message: role === "user" ? { role, content: text, timestamp: 1 } : { role, content: [{ type: "text", text }], provider: "p", model: "m", timestamp: 2 },
});

async function lines(storage: StoragePort, path: string): Promise<unknown[]> {
  const text = decoder.decode((await storage.read(path))!);
  return text.split("\n").filter((l) => l !== "").map((l) => JSON.parse(l));
}

describe("torn tail and a second writer", () => {
  it("a torn tail that grew after it was read is not cut: every byte stays", async () => {
    const storage = memoryStorage();
    const path = `${DIR}/a.jsonl`;
    const torn = '{"type":"message","id":"torn';
    await storage.write(path, new Uint8Array([...jsonl(header, message("u1", null, "user", "hi"), message("a1", "u1", "assistant", "yo")), ...encoder.encode(torn)]));
    const sm = await SessionManager.open(storage, path, { lock: false });
    // pi (which takes no lock) completes its line after we read the file.
    const completion = '","parentId":"a1","timestamp":"2026-01-01T00:00:02.000Z","message":{"role":"user","content":"late"}}\n';
    await storage.append(path, encoder.encode(completion));
    sm.appendMessage(userMsg("ours"));
    await sm.flush();
    const text = decoder.decode((await storage.read(path))!);
    expect(text).toContain(torn + completion);
    expect(text.endsWith("\n")).toBe(true);
    const reopened = await SessionManager.open(storage, path, { readOnly: true });
    expect(reopened.getEntries().map((e) => e.id)).toContain("torn");
    expect((await storage.list(DIR)).map((e) => e.name).filter((n) => n.includes(".torn-"))).toEqual([]);
    await sm.close();
  });
});

describe("catalog", () => {
  it("a last line without a newline is counted once after the next append", async () => {
    const storage = memoryStorage();
    const path = `${DIR}/b.jsonl`;
    const bytes = jsonl(header, message("u1", null, "user", "first"), message("a1", "u1", "assistant", "answer"));
    await storage.write(path, bytes.subarray(0, bytes.length - 1)); // no final "\n"
    expect((await SessionManager.list(storage, "", { sessionDir: DIR }))[0]!.messageCount).toBe(2);
    const sm = await SessionManager.open(storage, path);
    sm.appendMessage(userMsg("second"));
    await sm.close();
    const [info] = await SessionManager.list(storage, "", { sessionDir: DIR, withText: true });
    expect(info!.messageCount).toBe(3);
    expect(info!.allMessagesText).toBe("first answer second");
  });

  it("a rewrite that keeps the header line is read again in full, not resumed mid-file", async () => {
    const storage = memoryStorage();
    const path = `${DIR}/c.jsonl`;
    await storage.write(path, jsonl(header, message("u1", null, "user", "old question"), message("a1", "u1", "assistant", "old")));
    expect((await SessionManager.list(storage, "", { sessionDir: DIR }))[0]!.firstMessage).toBe("old question");
    // Same header line, longer file, different bytes before the catalog's offset.
    await storage.write(
      path,
      jsonl(header, message("u9", null, "user", "a new, longer first question"), message("a9", "u9", "assistant", "new"), message("u8", "a9", "user", "more")),
    );
    const [info] = await SessionManager.list(storage, "", { sessionDir: DIR, withText: true });
    expect(info!.firstMessage).toBe("a new, longer first question");
    expect(info!.messageCount).toBe(3);
    expect(info!.allMessagesText).toBe("a new, longer first question new more");
  });
});

describe("migration", () => {
  it("keeps text over the persistence limit whole (truncation is for new writes)", async () => {
    const storage = memoryStorage();
    const path = `${DIR}/v1.jsonl`;
    const long = "x".repeat(600_000);
    await storage.write(
      path,
      jsonl(
        { type: "session", id: "v1-long", timestamp: "2026-01-01T00:00:00.000Z", cwd: "/edge" },
        { type: "message", timestamp: "2026-01-01T00:00:01.000Z", message: { role: "user", content: long, timestamp: 1 } },
      ),
    );
    const sm = await SessionManager.open(storage, path);
    await sm.close();
    const [migratedHeader, entry] = (await lines(storage, path)) as [{ version: number }, { message: { content: string } }];
    expect(migratedHeader.version).toBe(3);
    expect(entry.message.content).toBe(long);
    expect((await storage.list(DIR)).map((e) => e.name)).toEqual(["v1.jsonl"]);
  });
});

describe("switching files", () => {
  it("writes queued for the current file land there, and the lock moves with the session", async () => {
    const memory = memoryStorage();
    // Slow writes keep the first file's writes queued while the session switches.
    const storage: StoragePort = {
      ...memory,
      write: async (path, data) => {
        await new Promise((resolve) => setTimeout(resolve, 20));
        return memory.write(path, data);
      },
    };
    const sm = await SessionManager.create(storage, "/edge", { sessionDir: DIR });
    sm.appendMessage(userMsg("q"));
    sm.appendMessage(assistantMsg("a")); // the file's first write, queued
    await Promise.resolve();
    sm.appendMessage(userMsg("after")); // an append queued behind it
    const first = sm.getSessionFile()!;
    const other = `${DIR}/other.jsonl`;
    await memory.write(other, jsonl(header, message("u1", null, "user", "other")));
    await sm.setSessionFile(other);
    expect((await lines(storage, first)).length).toBe(4);
    await expect(SessionManager.open(storage, other)).rejects.toSatisfy((e) => isStorageError(e, "locked"));
    const reopenedFirst = await SessionManager.open(storage, first);
    await reopenedFirst.close();
    await sm.close();
  });
});

describe("invalid entries", () => {
  it("an entry its type's schema rejects is left out and reported with its line; the rest loads", async () => {
    const storage = memoryStorage();
    const path = `${DIR}/d.jsonl`;
    const broken = { type: "message", id: "bad", parentId: "u1", timestamp: "2026-01-01T00:00:02.000Z" }; // no message
    await storage.write(path, jsonl(header, message("u1", null, "user", "hi"), broken, message("a1", "u1", "assistant", "yo")));
    const warnings: string[] = [];
    const sm = await SessionManager.open(storage, path, { readOnly: true, onWarning: (w) => warnings.push(w) });
    expect(sm.getEntries().map((e) => e.id)).toEqual(["u1", "a1"]);
    expect(sm.getLoadProblems()).toEqual([{ line: 3, kind: "invalid-entry", entryId: "bad", message: expect.stringContaining("message") }]);
    expect(sm.buildSessionContext().messages).toHaveLength(2);
    expect(warnings.some((w) => w.includes("line 3"))).toBe(true);
  });
});

describe("blobs", () => {
  const image = (data: string) => ({ role: "user", content: [{ type: "image", data, mimeType: "image/png" }], timestamp: 1 });
  const bytes = Uint8Array.from({ length: 1500 }, (_, i) => (i * 7) % 256);
  const canonical = Buffer.from(bytes).toString("base64");

  it("a blob deleted behind the session's back is written again by the next put", async () => {
    const storage = memoryStorage();
    const sm = await SessionManager.create(storage, "/edge", { sessionDir: DIR, deferUntilAssistant: false });
    sm.appendMessage(image(canonical));
    await sm.flush();
    const [blob] = await storage.list("blobs");
    await storage.remove(`blobs/${blob!.name}`);
    sm.appendMessage(image(canonical));
    await sm.flush();
    expect(await storage.stat(`blobs/${blob!.name}`)).not.toBeNull();
    await sm.close();
  });

  it("only canonical base64 moves to the store: other spellings stay inline as written", async () => {
    const storage = memoryStorage();
    const urlSafe = canonical.replace(/\+/g, "-").replace(/\//g, "_").replace(/=+$/, "");
    expect(urlSafe).not.toBe(canonical);
    const sm = await SessionManager.create(storage, "/edge", { sessionDir: DIR, deferUntilAssistant: false });
    sm.appendMessage(image(urlSafe));
    sm.appendMessage(image(canonical));
    await sm.close();
    const stored = (await lines(storage, sm.getSessionFile()!)) as Array<{ message?: { content: Array<{ data: string }> } }>;
    expect(stored[1]!.message!.content[0]!.data).toBe(urlSafe);
    expect(stored[2]!.message!.content[0]!.data).toMatch(/^blob:sha256:[0-9a-f]{64}$/);
  });
});

describe("on node-fs", () => {
  let root: string;
  beforeEach(async () => {
    root = await mkdtemp(join(tmpdir(), "sessionkit-edges-"));
  });
  afterEach(async () => {
    await rm(root, { recursive: true, force: true });
  });

  it("deleting a session removes its side files but not its own lock file", async () => {
    const storage = nodeFsStorage({ root });
    const sm = await SessionManager.create(storage, "/edge", { sessionDir: DIR });
    sm.appendMessage(userMsg("q"));
    sm.appendMessage(assistantMsg("a"));
    await sm.close();
    const path = sm.getSessionFile()!;
    await storage.write(`${path}.torn-1`, encoder.encode("torn bytes"));
    const result = await deleteSessionWithBlobs(storage, path);
    expect(result.removedFiles.sort()).toEqual([path, `${path}.torn-1`].sort());
    expect(await readdir(join(root, DIR))).toEqual([]);
    await storage.close();
  });

  it("findMostRecentSession reports a storage failure instead of taking it for no session", async () => {
    const storage = nodeFsStorage({ root });
    await storage.write(`${DIR}/s.jsonl`, jsonl(header));
    const failing: StoragePort = {
      ...storage,
      read: async (path) => {
        throw new StorageError("io", `disk error reading ${path}`, { path });
      },
    };
    await expect(findMostRecentSession(failing, DIR)).rejects.toSatisfy((e) => isStorageError(e, "io"));
    expect(await findMostRecentSession(storage, DIR)).toBe(`${DIR}/s.jsonl`);
    await storage.close();
  });
});

describe("a new session that never writes", () => {
  let dir: string;
  beforeEach(async () => {
    dir = await mkdtemp(join(tmpdir(), "sessionkit-unwritten-"));
  });
  afterEach(async () => {
    await rm(dir, { recursive: true, force: true });
  });

  it("leaves no file and no project folder behind: only the first assistant message writes", async () => {
    const storage = nodeFsStorage({ root: dir });
    const sm = await SessionManager.create(storage, "/home/me/app");
    sm.appendMessage(userMsg("only a question"));
    await sm.flush();
    await sm.close();
    expect(await readdir(dir)).toEqual([]);

    const answered = await SessionManager.create(storage, "/home/me/app");
    answered.appendMessage(userMsg("a question"));
    answered.appendMessage(assistantMsg("an answer"));
    await answered.flush();
    const name = answered.getSessionFile()!.split("/").pop()!;
    expect((await readdir(join(dir, "sessions", "--home-me-app--"))).sort()).toEqual([name, `${name}.lock`]);
    await answered.close();
    await storage.close();
  });
});

describe("timestamps", () => {
  afterEach(() => vi.useRealTimers());

  it("gives each entry the time of its append, to the millisecond, also when the clock goes back", async () => {
    // The ISO text is formatted once per millisecond and reused: a new millisecond (earlier ones
    // included) must get its own.
    vi.useFakeTimers({ toFake: ["Date"] });
    const sm = await SessionManager.create(memoryStorage(), "/ts");
    const times = [Date.UTC(2026, 10, 25, 12, 0, 0, 1), Date.UTC(2026, 10, 25, 12, 0, 0, 1), Date.UTC(2026, 10, 25, 12, 0, 0, 2), Date.UTC(2026, 10, 25, 11, 59, 59, 999)];
    const ids = times.map((time) => {
      vi.setSystemTime(time);
      return sm.appendMessage(userMsg("at a time"));
    });
    expect(ids.map((id) => sm.getEntry(id)!.timestamp)).toEqual(times.map((time) => new Date(time).toISOString()));
    await sm.close();
  });
});

describe("append buffers", () => {
  it("hands each batch's bytes to the port untouched until its append settles", async () => {
    // SessionManager encodes batches into one reused buffer: a port that takes its time with the
    // bytes (here: copies them only after a delay) must still store every batch as it was.
    const memory = memoryStorage();
    const slow: StoragePort = {
      ...memory,
      kind: "slow-copy",
      append: async (path, data) => {
        await new Promise((resolve) => setTimeout(resolve, 2));
        return memory.append(path, data);
      },
    };
    const sm = await SessionManager.create(slow, "/slow");
    sm.appendMessage(assistantMsg("first, so the file starts"));
    const texts = Array.from({ length: 40 }, (_, i) => `message ${i} ${"é€😀".repeat(i)} ${"x".repeat(i * 37)}`);
    for (const [i, text] of texts.entries()) {
      sm.appendMessage(userMsg(text));
      // Batches of one, two and three appends queue behind one another; some flushed, some not.
      if (i % 3 === 2) await sm.flush();
      else if (i % 3 === 1) await Promise.resolve();
    }
    await sm.close();
    const stored = await readSessionFile(memory, sm.getSessionFile()!);
    if (stored.kind !== "session") throw new Error(`the session file is ${stored.kind}`);
    expect(stored.problems).toEqual([]);
    expect(stored.entries.slice(1).map((entry) => (entry.type === "message" ? entry.message.content : null))).toEqual(texts);
  });
});
