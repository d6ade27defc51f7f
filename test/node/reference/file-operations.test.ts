/**
 * pi's test/session-manager/file-operations.test.ts and oh-my-pi's (A1), which hold the same
 * cases: one test each. Real files in a temp dir, through `nodeFsStorage`.
 *
 * Mapping: pi's `loadEntriesFromFile(path)` → `readSessionFile(storage, path)`, which returns
 * {kind:"missing"} | {kind:"empty"} | {kind:"session", header, entries, problems, …} and throws
 * SessionError "not-a-session" for content that is not a session. pi's
 * `SessionManager.open(path)` → `SessionManager.open(storage, path)`.
 *
 * DESIGN §3: a file that is not a session is never overwritten or truncated. Where pi returns []
 * for such a file or rewrites it with a new header, we refuse with "not-a-session" and leave the
 * bytes as they were; those cases carry the inverted expectation in their names. A 0-byte file
 * holds nothing to lose, so there we behave as pi does.
 */
import { mkdir, mkdtemp, readdir, readFile, rm, utimes, writeFile } from "node:fs/promises";
import { tmpdir } from "node:os";
import { dirname, join } from "node:path";
import { afterEach, beforeEach, describe, expect, it } from "vitest";
import { nodeFsStorage, type NodeFsStorage } from "../../../adapters/node-fs/index.js";
import { findMostRecentSession, isSessionError, SessionError, SessionManager } from "../../../src/index.js";
import { readSessionFile } from "../../../src/format/session-file.js";

const HEADER = '{"type":"session","id":"abc","timestamp":"2025-01-01T00:00:00Z","cwd":"/tmp"}';
const MESSAGE = '{"type":"message","id":"1","parentId":null,"timestamp":"2025-01-01T00:00:01Z","message":{"role":"user","content":"hi","timestamp":1}}';

let root: string;
let storage: NodeFsStorage;

beforeEach(async () => {
  root = await mkdtemp(join(tmpdir(), "session-test-"));
  storage = nodeFsStorage({ root });
});

afterEach(async () => {
  await storage.close();
  await rm(root, { recursive: true, force: true });
});

async function put(path: string, content: string): Promise<void> {
  await mkdir(dirname(join(root, path)), { recursive: true });
  await writeFile(join(root, path), content);
}

/** Sets a file's mtime `secondsAgo` in the past, so mtime order does not hang on timer resolution. */
async function age(path: string, secondsAgo: number): Promise<void> {
  const t = new Date(Date.now() - secondsAgo * 1000);
  await utimes(join(root, path), t, t);
}

async function rejection(promise: Promise<unknown>): Promise<unknown> {
  try {
    await promise;
  } catch (error) {
    return error;
  }
  throw new Error("expected a rejection");
}

describe("loadEntriesFromFile", () => {
  it("returns empty array for non-existent file", async () => {
    expect(await readSessionFile(storage, "nonexistent.jsonl")).toEqual({ kind: "missing" });
  });

  it("returns empty array for empty file", async () => {
    await put("empty.jsonl", "");
    expect(await readSessionFile(storage, "empty.jsonl")).toEqual({ kind: "empty" });
  });

  it("rejects a file without valid session header with not-a-session (pi returns []; DESIGN §3)", async () => {
    await put("no-header.jsonl", '{"type":"message","id":"1"}\n');
    const error = await rejection(readSessionFile(storage, "no-header.jsonl"));
    expect(isSessionError(error, "not-a-session")).toBe(true);
    expect((error as SessionError).path).toBe("no-header.jsonl");
    expect((error as SessionError).message).toContain('"message"');
  });

  it("rejects malformed JSON with not-a-session (pi returns []; DESIGN §3)", async () => {
    await put("malformed.jsonl", "not json\n");
    const error = await rejection(readSessionFile(storage, "malformed.jsonl"));
    expect(isSessionError(error, "not-a-session")).toBe(true);
    expect((error as SessionError).path).toBe("malformed.jsonl");
  });

  it("loads valid session file", async () => {
    await put("valid.jsonl", `${HEADER}\n${MESSAGE}\n`);
    const file = await readSessionFile(storage, "valid.jsonl");
    if (file.kind !== "session") throw new Error(`read as ${file.kind}`);
    // pi's array holds the header and the entries; ours keeps the header apart.
    expect([file.header, ...file.entries]).toHaveLength(2);
    expect(file.header.type).toBe("session");
    expect(file.header.id).toBe("abc");
    expect(file.entries[0]!.type).toBe("message");
    expect(file.problems).toEqual([]);
  });

  it("skips malformed lines but keeps valid ones", async () => {
    await put("mixed.jsonl", `${HEADER}\nnot valid json\n${MESSAGE}\n`);
    const file = await readSessionFile(storage, "mixed.jsonl");
    if (file.kind !== "session") throw new Error(`read as ${file.kind}`);
    expect([file.header, ...file.entries]).toHaveLength(2);
    expect(file.entries[0]!.message).toMatchObject({ content: "hi" });
    // What pi drops silently we report, with its line number.
    expect(file.problems).toMatchObject([{ line: 2, kind: "unparseable" }]);
  });
});

describe("findMostRecentSession", () => {
  it("returns null for empty directory", async () => {
    await mkdir(join(root, "sessions"));
    expect(await findMostRecentSession(storage, "sessions")).toBeNull();
  });

  it("returns null for non-existent directory", async () => {
    expect(await findMostRecentSession(storage, "nonexistent")).toBeNull();
  });

  it("ignores non-jsonl files", async () => {
    await put("sessions/file.txt", "hello");
    await put("sessions/file.json", "{}");
    // A session header in a file that is not .jsonl does not count either.
    await put("sessions/header.json", `${HEADER}\n`);
    expect(await findMostRecentSession(storage, "sessions")).toBeNull();
  });

  it("ignores jsonl files without valid session header", async () => {
    await put("sessions/invalid.jsonl", '{"type":"message"}\n');
    expect(await findMostRecentSession(storage, "sessions")).toBeNull();
  });

  it("returns single valid session file", async () => {
    await put("sessions/session.jsonl", `${HEADER}\n`);
    expect(await findMostRecentSession(storage, "sessions")).toBe("sessions/session.jsonl");
  });

  it("returns most recently modified session", async () => {
    // Written newer first, so the answer cannot come from creation or name order.
    await put("sessions/newer.jsonl", '{"type":"session","id":"new","timestamp":"2025-01-01T00:00:00Z"}\n');
    await put("sessions/older.jsonl", '{"type":"session","id":"old","timestamp":"2025-01-02T00:00:00Z"}\n');
    await age("sessions/older.jsonl", 10);
    expect(await findMostRecentSession(storage, "sessions")).toBe("sessions/newer.jsonl");
  });

  it("skips invalid files and returns valid one", async () => {
    await put("sessions/valid.jsonl", `${HEADER}\n`);
    await age("sessions/valid.jsonl", 10);
    await put("sessions/invalid.jsonl", '{"type":"not-session"}\n');
    expect(await findMostRecentSession(storage, "sessions")).toBe("sessions/valid.jsonl");
  });
});

describe("SessionManager.setSessionFile with corrupted files", () => {
  it("truncates and rewrites empty file with valid header", async () => {
    await put("sessions/empty.jsonl", "");
    const sm = await SessionManager.open(storage, "sessions/empty.jsonl");
    try {
      expect(sm.getSessionId()).toBeTruthy();
      expect(sm.getHeader()?.type).toBe("session");

      const lines = (await readFile(join(root, "sessions/empty.jsonl"), "utf8")).split("\n").filter((l) => l.trim());
      expect(lines).toHaveLength(1);
      expect(JSON.parse(lines[0]!)).toMatchObject({ type: "session", id: sm.getSessionId() });
    } finally {
      await sm.close();
    }
    // The header written now is the session from then on.
    const again = await SessionManager.open(storage, "sessions/empty.jsonl");
    expect(again.getSessionId()).toBe(sm.getSessionId());
    await again.close();
  });

  it("refuses to overwrite a file without a valid session header (pi truncates it; DESIGN §3)", async () => {
    const content =
      '{"type":"message","id":"abc","parentId":"orphaned","timestamp":"2025-01-01T00:00:00Z","message":{"role":"assistant","content":"test"}}\n';
    await put("sessions/no-header.jsonl", content);

    const error = await rejection(SessionManager.open(storage, "sessions/no-header.jsonl"));
    expect(error).toBeInstanceOf(SessionError);
    expect(error).toMatchObject({ code: "not-a-session", path: "sessions/no-header.jsonl" });

    expect(await readFile(join(root, "sessions/no-header.jsonl"), "utf8")).toBe(content);
    // Nothing was left behind either: no lock file, no temp file, no new session.
    expect(await readdir(join(root, "sessions"))).toEqual(["no-header.jsonl"]);
  });

  it("preserves explicit session file path when recovering from corrupted file", async () => {
    await put("sessions/my-session.jsonl", "");
    const sm = await SessionManager.open(storage, "sessions/my-session.jsonl");
    try {
      expect(sm.getSessionFile()).toBe("sessions/my-session.jsonl");
      sm.appendMessage({ role: "user", content: "hello", timestamp: 1 });
      await sm.flush();
      const lines = (await readFile(join(root, "sessions/my-session.jsonl"), "utf8")).split("\n").filter((l) => l.trim());
      expect(lines.map((l) => (JSON.parse(l) as { type: string }).type)).toEqual(["session", "message"]);
    } finally {
      await sm.close();
    }
  });

  it("subsequent loads of recovered file refuse it the same way and keep it intact (pi recovers and rewrites it; DESIGN §3)", async () => {
    await put("sessions/garbage.jsonl", "garbage content\n");

    for (let attempt = 0; attempt < 2; attempt++) {
      const error = await rejection(SessionManager.open(storage, "sessions/garbage.jsonl"));
      expect(error).toMatchObject({ name: "SessionError", code: "not-a-session", path: "sessions/garbage.jsonl" });
    }
    expect(await readFile(join(root, "sessions/garbage.jsonl"), "utf8")).toBe("garbage content\n");
    expect(await readdir(join(root, "sessions"))).toEqual(["garbage.jsonl"]);
  });
});
