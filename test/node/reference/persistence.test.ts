/**
 * oh-my-pi's persistence rules (section C of oh-my-pi-session-tests.md: cases the code at the
 * target implies but no upstream test covers) and B's signature-persistence case, on real files
 * through `nodeFsStorage` as oh-my-pi's store (error latching: a failing StoragePort around
 * `memoryStorage`).
 * Image externalization (C 6–8) is in blobs.test.ts.
 *
 * Not ported (APIs this kit does not have):
 * - omp's move-to.test.ts (6 cases): `moveTo(cwd)` and artifact directories.
 * - omp's session-storage.test.ts (2 cases): `deleteSessionWithArtifacts`.
 * - omp's usage-statistics.test.ts (3 cases): usage totals are not part of our API.
 * - C 9, second half: omp's `setSessionName` rewrites the header title through a temp file; in
 *   pi and here a name is an appended session_info entry, so there is no header rewrite. Our one
 *   full rewrite of an existing file (migration) is checked for leftovers instead.
 * - C 12 (breadcrumbs): omp's terminal breadcrumb files.
 * - omp's later session test files listed by name only (close-drop-empty, draft, …): no cases given.
 */
import { existsSync } from "node:fs";
import { mkdir, mkdtemp, readdir, readFile, rm, writeFile } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterEach, beforeEach, describe, expect, it } from "vitest";
import { memoryStorage } from "../../../adapters/memory/index.js";
import { nodeFsStorage, type NodeFsStorage } from "../../../adapters/node-fs/index.js";
import { MAX_PERSIST_CHARS, TRUNCATION_NOTICE } from "../../../src/session/persist-transform.js";
import { SessionError, SessionManager, StorageError, type MessageEntry, type StoragePort } from "../../../src/index.js";
import { assistantMsg, userMsg } from "../../shared/messages.js";

const CWD = "/work/app";
const SESSION_DIR = "sessions/x";

let root: string;
let storage: NodeFsStorage;
const open: SessionManager[] = [];

beforeEach(async () => {
  root = await mkdtemp(join(tmpdir(), "sessionkit-persist-"));
  storage = nodeFsStorage({ root });
});

afterEach(async () => {
  for (const sm of open.splice(0)) await sm.close().catch(() => {});
  await storage.close();
  await rm(root, { recursive: true, force: true });
});

async function createSession(options: Parameters<typeof SessionManager.create>[2] = {}): Promise<SessionManager> {
  const sm = await SessionManager.create(storage, CWD, { owner: "omp", sessionDir: SESSION_DIR, ...options });
  open.push(sm);
  return sm;
}

/** The file's records, parsed from the bytes on disk. */
async function recordsOnDisk(path: string): Promise<Array<Record<string, any>>> {
  const text = await readFile(join(root, path), "utf8");
  expect(text.endsWith("\n")).toBe(true);
  return text.slice(0, -1).split("\n").map((line) => JSON.parse(line) as Record<string, any>);
}

const messageOf = (sm: SessionManager, id: string) => (sm.getEntry(id) as MessageEntry).message as Record<string, any>;

/** A string of `length` chars whose every position is distinguishable from its neighbours. */
function patterned(length: number): string {
  const unit = "0123456789abcdefghijklmnopqrstuvwxyz";
  return unit.repeat(Math.ceil(length / unit.length)).slice(0, length);
}

describe("deferral (C 1)", () => {
  it("appending only user messages does not create the file; the first assistant message writes header and every earlier entry in order", async () => {
    const sm = await createSession();
    const path = sm.getSessionFile()!;
    const u1 = sm.appendMessage(userMsg("first"));
    const thinking = sm.appendThinkingLevelChange("high");
    const u2 = sm.appendMessage(userMsg("second"));
    await sm.flush();
    expect(existsSync(join(root, path))).toBe(false);

    const a1 = sm.appendMessage(assistantMsg("answer"));
    await sm.flush();
    const records = await recordsOnDisk(path);
    expect(records[0]).toMatchObject({ type: "session", id: sm.getSessionId(), cwd: CWD, version: 3 });
    expect(records.slice(1).map((r) => r.id)).toEqual([u1, thinking, u2, a1]);
    expect(records.slice(1).map((r) => r.parentId)).toEqual([null, u1, thinking, u2]);

    // From then on each entry is appended.
    const u3 = sm.appendMessage(userMsg("third"));
    await sm.flush();
    expect((await recordsOnDisk(path)).slice(1).map((r) => r.id)).toEqual([u1, thinking, u2, a1, u3]);
  });

  it("deferUntilAssistant: false writes the file with the first entry (users keep first turns)", async () => {
    const sm = await createSession({ deferUntilAssistant: false });
    const u1 = sm.appendMessage(userMsg("first"));
    await sm.flush();
    const records = await recordsOnDisk(sm.getSessionFile()!);
    expect(records.map((r) => r.type)).toEqual(["session", "message"]);
    expect(records[1]!.id).toBe(u1);
  });

  it("a session name set before any file exists writes nothing and appears in the first bulk write (C 9, first half; as a session_info entry)", async () => {
    const sm = await createSession();
    const path = sm.getSessionFile()!;
    sm.appendMessage(userMsg("hello"));
    sm.appendSessionInfo("  Refactor the parser  ");
    await sm.flush();
    expect(existsSync(join(root, path))).toBe(false);

    sm.appendMessage(assistantMsg("ok"));
    await sm.flush();
    const records = await recordsOnDisk(path);
    expect(records.find((r) => r.type === "session_info")?.name).toBe("Refactor the parser");
    const [info] = await SessionManager.list(storage, CWD, { sessionDir: SESSION_DIR });
    expect(info?.name).toBe("Refactor the parser");
  });
});

describe("truncation (C 2, 3, 5)", () => {
  it("a string of 600,000 chars in any field is persisted as its first 499,953 chars + the notice; exactly 500,000 is unchanged; memory keeps both whole", async () => {
    const big = patterned(600_000);
    const exact = patterned(500_000);
    const nestedBig = "n" + patterned(599_999);
    const sm = await createSession();
    const userId = sm.appendMessage(userMsg(big));
    const assistantId = sm.appendMessage(assistantMsg(exact));
    const customId = sm.appendCustomEntry("blob-holder", { nested: [{ text: nestedBig }] });
    await sm.flush();

    const records = await recordsOnDisk(sm.getSessionFile()!);
    const byId = new Map(records.map((r) => [r.id, r]));
    const expected = big.slice(0, 499_953) + TRUNCATION_NOTICE;
    expect(expected).toHaveLength(MAX_PERSIST_CHARS);
    expect(byId.get(userId)!.message.content).toBe(expected);
    expect(byId.get(assistantId)!.message.content[0].text).toBe(exact);
    expect(byId.get(customId)!.data.nested[0].text).toBe(nestedBig.slice(0, 499_953) + TRUNCATION_NOTICE);

    expect(messageOf(sm, userId).content).toBe(big);
    expect((sm.getEntry(customId) as { data: { nested: Array<{ text: string }> } }).data.nested[0]!.text).toBe(nestedBig);
  });

  it("a high surrogate at index 499,952 is dropped, giving 499,999 chars and no half pair (C 3)", async () => {
    const text = "a".repeat(499_952) + "\u{1F600}" + "b".repeat(600_000 - 499_954);
    expect(text.charCodeAt(499_952)).toBe(0xd83d);
    const sm = await createSession();
    const id = sm.appendMessage(userMsg(text));
    sm.appendMessage(assistantMsg("ok"));
    await sm.flush();

    const onDisk = (await recordsOnDisk(sm.getSessionFile()!)).find((r) => r.id === id)!.message.content as string;
    expect(onDisk).toHaveLength(499_999);
    expect(onDisk).toBe("a".repeat(499_952) + TRUNCATION_NOTICE);
  });

  it("lineCount of a fileMention file whose 600k content was cut is recomputed from the cut content (C 5)", async () => {
    const bigContent = "line of text\n".repeat(Math.ceil(600_000 / 13)).slice(0, 600_000);
    const fileMention = {
      role: "fileMention",
      files: [
        { path: "big.txt", content: bigContent, lineCount: bigContent.split("\n").length },
        { path: "small.txt", content: "a\nb", lineCount: 2 },
      ],
      timestamp: Date.now(),
    };
    const sm = await createSession();
    const id = sm.appendMessage(fileMention);
    sm.appendMessage(assistantMsg("ok"));
    await sm.flush();

    const files = (await recordsOnDisk(sm.getSessionFile()!)).find((r) => r.id === id)!.message.files;
    const truncated = bigContent.slice(0, 499_953) + TRUNCATION_NOTICE;
    expect(files[0]).toEqual({ path: "big.txt", content: truncated, lineCount: truncated.split("\n").length });
    expect(files[0].lineCount).not.toBe(fileMention.files[0]!.lineCount);
    expect(files[1]).toEqual({ path: "small.txt", content: "a\nb", lineCount: 2 });
    // Memory keeps the full content and its own count.
    expect(messageOf(sm, id).files[0]).toEqual(fileMention.files[0]);
  });

  it("long signatures are truncated like any string (follows omp at the target; later omp writes \"\")", async () => {
    const signature = (c: string) => c.repeat(600_000);
    const assistant = {
      ...assistantMsg("answer"),
      content: [
        { type: "thinking", thinking: "let me think", thinkingSignature: signature("t") },
        { type: "text", text: "answer", textSignature: signature("x") },
        { type: "toolCall", id: "call_1", name: "read", arguments: { path: "a.ts" }, thoughtSignature: signature("g") },
      ],
    };
    const sm = await createSession();
    sm.appendMessage(userMsg("question"));
    sm.appendMessage(assistant);
    const path = sm.getSessionFile()!;
    await sm.close();

    const reopened = await SessionManager.open(storage, path, { owner: "omp" });
    open.push(reopened);
    const content = reopened.getBranch()[1]!.message as { content: Array<Record<string, unknown>> };
    const cut = (c: string) => c.repeat(499_953) + TRUNCATION_NOTICE;
    expect(content.content).toEqual([
      { type: "thinking", thinking: "let me think", thinkingSignature: cut("t") },
      { type: "text", text: "answer", textSignature: cut("x") },
      { type: "toolCall", id: "call_1", name: "read", arguments: { path: "a.ts" }, thoughtSignature: cut("g") },
    ]);
  });
});

describe("transient keys (C 4)", () => {
  it("partialJson and jsonlEvents are removed at any depth on disk; the in-memory entry keeps them", async () => {
    const assistant = {
      ...assistantMsg("calling a tool"),
      content: [
        { type: "text", text: "calling a tool" },
        { type: "toolCall", id: "call_1", name: "edit", arguments: { path: "a.ts" }, partialJson: '{"path":"a.t' },
      ],
      jsonlEvents: ['{"type":"delta"}'],
      details: { deeper: { still: [{ partialJson: "{", jsonlEvents: [], kept: true }] } },
    };
    const sm = await createSession();
    sm.appendMessage(userMsg("edit a.ts"));
    const id = sm.appendMessage(assistant);
    await sm.flush();

    const text = await readFile(join(root, sm.getSessionFile()!), "utf8");
    expect(text).not.toContain("partialJson");
    expect(text).not.toContain("jsonlEvents");
    const onDisk = (await recordsOnDisk(sm.getSessionFile()!)).find((r) => r.id === id)!.message;
    expect(onDisk.content[1]).toEqual({ type: "toolCall", id: "call_1", name: "edit", arguments: { path: "a.ts" } });
    expect(onDisk.details).toEqual({ deeper: { still: [{ kept: true }] } });

    const inMemory = messageOf(sm, id);
    expect(inMemory.content[1].partialJson).toBe('{"path":"a.t');
    expect(inMemory.jsonlEvents).toEqual(['{"type":"delta"}']);
    expect(inMemory.details.deeper.still[0]).toEqual({ partialJson: "{", jsonlEvents: [], kept: true });
  });
});

describe("rewrites (C 9)", () => {
  it("the full rewrite of a migrated v1 file leaves no temp or backup files behind", async () => {
    const dir = join(root, SESSION_DIR);
    await mkdir(dir, { recursive: true });
    const v1 = [
      { type: "session", id: "v1-session", timestamp: "2025-01-01T00:00:00Z", cwd: CWD },
      { type: "message", timestamp: "2025-01-01T00:00:01Z", message: { role: "user", content: "hi", timestamp: 1 } },
      { type: "message", timestamp: "2025-01-01T00:00:02Z", message: { role: "assistant", content: [{ type: "text", text: "hello" }], provider: "a", model: "m", timestamp: 2 } },
    ];
    await writeFile(join(dir, "old.jsonl"), v1.map((r) => JSON.stringify(r) + "\n").join(""));

    const sm = await SessionManager.open(storage, `${SESSION_DIR}/old.jsonl`, { owner: "omp" });
    await sm.close();

    expect(await readdir(dir)).toEqual(["old.jsonl"]);
    const records = await recordsOnDisk(`${SESSION_DIR}/old.jsonl`);
    expect(records[0]).toMatchObject({ type: "session", id: "v1-session", version: 3 });
    expect(records.slice(1).map((r) => r.id)).toEqual(sm.getEntries().map((e) => e.id));
  });
});

/** memoryStorage whose appends fail from the start; full writes still succeed. */
function appendFails(inner: StoragePort): StoragePort {
  return {
    ...inner,
    kind: inner.kind,
    append: async (path) => {
      throw new StorageError("io", `append refused for ${path}`, { path });
    },
  };
}

function thrownBy(fn: () => unknown): unknown {
  try {
    fn();
  } catch (error) {
    return error;
  }
  return undefined;
}

describe("error latching (C 10)", () => {
  it("after a write error, later append* calls throw the same SessionError \"persist-failed\" and flush() rejects with it", async () => {
    const warnings: string[] = [];
    const sm = await SessionManager.create(appendFails(memoryStorage()), CWD, { sessionDir: SESSION_DIR, onWarning: (w) => warnings.push(w) });
    const u1 = sm.appendMessage(userMsg("first"));
    sm.appendMessage(assistantMsg("answer")); // the bulk write goes through write(), which works
    await sm.flush();

    sm.appendMessage(userMsg("second")); // appended: fails in the queue
    const error = await sm.flush().then(
      () => undefined,
      (e: unknown) => e,
    );
    expect(error).toBeInstanceOf(SessionError);
    expect(error).toMatchObject({ code: "persist-failed", path: sm.getSessionFile() });
    expect((error as Error).message).toContain(sm.getSessionFile()!);
    expect((error as Error).cause).toBeInstanceOf(StorageError);

    const entriesBefore = sm.getEntries().length;
    expect(thrownBy(() => sm.appendMessage(userMsg("third")))).toBe(error);
    expect(thrownBy(() => sm.appendThinkingLevelChange("low"))).toBe(error);
    expect(thrownBy(() => sm.appendCustomEntry("x", {}))).toBe(error);
    expect(thrownBy(() => sm.appendLabelChange(u1, "l"))).toBe(error);
    expect(thrownBy(() => sm.appendSessionInfo("name"))).toBe(error);
    expect(sm.getEntries()).toHaveLength(entriesBefore);

    await expect(sm.flush()).rejects.toBe(error);
    await expect(sm.close()).rejects.toBe(error);
    expect(warnings.filter((w) => w === (error as Error).message)).toHaveLength(1);
  });
});
