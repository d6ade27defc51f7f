/**
 * Seed 003's format (seed `003_…`, its only reference: no public implementation was found), read
 * and written as itself. Files are written from the seed's own example lines (their `...`
 * placeholders filled in) and give the contexts its `build_session_context` describes; sessions
 * created in the dialect round-trip byte for byte; archives carry them unchanged. The shared
 * SessionManager suite runs on seed-003 stores in test/node/session-suite.test.ts.
 */
import { mkdtemp, readdir, rm } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterEach, beforeEach, describe, expect, it } from "vitest";
import { memoryStorage, type MemoryStorage } from "../../adapters/memory/index.js";
import { nodeFsStorage, type NodeFsStorage } from "../../adapters/node-fs/index.js";
import { importArchive, verifyArchive } from "../../src/archive/index.js";
import { buildSessionContext, getRecentSessions, SessionManager, type AgentMessage, type SessionEntry } from "../../src/index.js";
import { decodeRecord, DialectError, encodeRecord } from "../../src/format/dialect.js";
import { encodeSessionFile, readSessionFile } from "../../src/format/session-file.js";
import { exportToBytes, noise } from "./archive/helpers.js";
import { assistantMsg, userMsg } from "../shared/messages.js";

const encoder = new TextEncoder();
const decoder = new TextDecoder();
const T = (second: number) => `2026-03-01T10:00:${String(second).padStart(2, "0")}.000Z`;
const SESSION_ID = "0195f1a2-7c3d-7e4f-8a9b-0c1d2e3f4a5b";
const FILE = `sessions/2026-03-01T10-00-00-000000_${SESSION_ID}.jsonl`;

const user = (text: string): AgentMessage => ({ role: "user", content: text, timestamp: 1_772_359_200_000 });
const assistant = (text: string): AgentMessage => ({
  role: "assistant",
  content: [{ type: "text", text }],
  provider: "anthropic",
  model: "claude-test",
  stopReason: "stop",
  timestamp: 1_772_359_201_000,
});

/** The seed's example session, line for line; `...` filled with times and messages. */
const SEED_EXAMPLE = [
  `{"type":"session_header","id":"${SESSION_ID}","timestamp":"${T(0)}","cwd":"/my/project"}`,
  `{"type":"message","id":"a1","parent_id":null,"timestamp":"${T(1)}","message":${JSON.stringify(user("first question"))}}`,
  `{"type":"message","id":"a2","parent_id":"a1","timestamp":"${T(2)}","message":${JSON.stringify(assistant("first answer"))}}`,
  // As in the seed: no timestamp, no tokens_before.
  `{"type":"compaction","id":"a3","parent_id":"a2","summary":"the first turn","first_kept_entry_id":"a2"}`,
  `{"type":"message","id":"a4","parent_id":"a3","timestamp":"${T(4)}","message":${JSON.stringify(user("after the compaction"))}}`,
  `{"type":"leaf","id":"a5","parent_id":"a4","timestamp":"${T(5)}","target_id":"a2"}`,
];

/** A branch entry, labels, a custom message, and thinking-level and model changes, in seed 003's spelling. */
const BRANCHES = [
  `{"type":"session_header","id":"${SESSION_ID}","timestamp":"${T(0)}","cwd":"/my/project"}`,
  `{"type":"message","id":"b1","parent_id":null,"timestamp":"${T(1)}","message":${JSON.stringify(user("start"))}}`,
  `{"type":"message","id":"b2","parent_id":"b1","timestamp":"${T(2)}","message":${JSON.stringify(assistant("first answer"))}}`,
  `{"type":"message","id":"b3","parent_id":"b2","timestamp":"${T(3)}","message":${JSON.stringify(user("a path left later"))}}`,
  `{"type":"thinking_level_change","id":"b4","parent_id":"b3","timestamp":"${T(4)}","thinking_level":"high"}`,
  `{"type":"branch","id":"b5","parent_id":"b2","timestamp":"${T(5)}","from_id":"b2","summary":"tried a path and left it"}`,
  `{"type":"label","id":"b6","parent_id":"b5","timestamp":"${T(6)}","target_id":"b1","label":"start here"}`,
  `{"type":"label","id":"b7","parent_id":"b6","timestamp":"${T(7)}","target_id":"b2","label":"answer"}`,
  `{"type":"label","id":"b8","parent_id":"b7","timestamp":"${T(8)}","target_id":"b2","label":null}`,
  `{"type":"custom_message","id":"b9","parent_id":"b8","timestamp":"${T(9)}","custom_type":"note","content":"shown, not sent","display":true}`,
  `{"type":"custom_info","id":"b10","parent_id":"b9","timestamp":"${T(10)}","custom_type":"ext","data":{"count":1}}`,
  `{"type":"model_change","id":"b11","parent_id":"b10","timestamp":"${T(11)}","provider":"openai","model_id":"gpt-x"}`,
  `{"type":"session_info","id":"b12","parent_id":"b11","timestamp":"${T(12)}","name":"seed session"}`,
  `{"type":"message","id":"b13","parent_id":"b12","timestamp":"${T(13)}","message":${JSON.stringify(user("a new direction"))}}`,
];

const fileOf = (lines: readonly string[]) => encoder.encode(lines.map((line) => `${line}\n`).join(""));
const textOf = (message: AgentMessage): string =>
  typeof message.content === "string"
    ? message.content
    : Array.isArray(message.content)
      ? (message.content as { text?: string }[]).map((block) => block.text ?? "").join("")
      : String(message.summary ?? "");

async function storeWith(lines: readonly string[]): Promise<MemoryStorage> {
  const storage = memoryStorage();
  await storage.write(FILE, fileOf(lines));
  return storage;
}

describe("the codec", () => {
  it("every line of the seed's examples decodes to canonical records and encodes back to the same text", () => {
    for (const line of [...SEED_EXAMPLE, ...BRANCHES]) {
      const raw = JSON.parse(line) as Record<string, unknown>;
      const canonical = decodeRecord("seed003", raw);
      expect(JSON.stringify(canonical)).not.toMatch(/"(parent_id|first_kept_entry_id|target_id|from_id|thinking_level|model_id|custom_type)"/);
      expect(JSON.stringify(encodeRecord("seed003", canonical))).toBe(line);
    }
    expect(decodeRecord("seed003", JSON.parse(BRANCHES[5]!))).toEqual({ type: "branch_summary", id: "b5", parentId: "b2", timestamp: T(5), fromId: "b2", summary: "tried a path and left it" });
    expect(decodeRecord("seed003", JSON.parse(SEED_EXAMPLE[0]!))).toEqual({ type: "session", id: SESSION_ID, timestamp: T(0), cwd: "/my/project" });
  });

  it("pi's dialect is canonical as it is", () => {
    const record = { type: "message", id: "x", parentId: null, timestamp: T(1), message: user("hi") };
    expect(decodeRecord("pi", record)).toBe(record);
    expect(encodeRecord("pi", record)).toBe(record);
  });

  it("a record that could not be written back as it was is refused: both spellings of a key, a canonical type name", () => {
    expect(() => decodeRecord("seed003", { type: "message", id: "x", parent_id: null, parentId: null })).toThrow(DialectError);
    expect(() => decodeRecord("seed003", { type: "message", id: "x", parentId: null })).toThrow(/"parentId" of the other spelling/);
    expect(() => decodeRecord("seed003", { type: "branch_summary", id: "x", parent_id: null })).toThrow(/type "branch_summary"/);
    expect(() => encodeRecord("seed003", { type: "message", id: "x", parentId: null, parent_id: null })).toThrow(DialectError);
  });

  it("the reader reports such lines with their line numbers and skips them; the rest loads", async () => {
    const storage = await storeWith([
      ...SEED_EXAMPLE.slice(0, 3),
      `{"type":"message","id":"bad","parent_id":"a2","parentId":"a2","timestamp":"${T(3)}","message":{"role":"user","content":"x"}}`,
      `{"type":"branch_summary","id":"bad2","parent_id":"a2","timestamp":"${T(3)}","from_id":"a2","summary":"x"}`,
    ]);
    const file = await readSessionFile(storage, FILE);
    if (file.kind !== "session") throw new Error(file.kind);
    expect(file.dialect).toBe("seed003");
    expect(file.entries.map((entry) => entry.id)).toEqual(["a1", "a2"]);
    expect(file.problems.map((problem) => [problem.line, problem.kind, problem.entryId])).toEqual([
      [4, "invalid-entry", "bad"],
      [5, "invalid-entry", "bad2"],
    ]);
  });
});

describe("files written from the seed's examples", () => {
  it("the leaf entry moves the leaf back to a2; the context is the seed's: the path to a2, the compaction not on it", async () => {
    const storage = await storeWith(SEED_EXAMPLE);
    const sm = await SessionManager.open(storage, FILE);
    expect(sm.getDialect()).toBe("seed003");
    expect(sm.getLayout()).toBe("seed003");
    expect(sm.getHeader()).toEqual({ type: "session", id: SESSION_ID, timestamp: T(0), cwd: "/my/project" });
    expect(sm.getEntries().map((entry) => [entry.type, entry.id, entry.parentId])).toEqual([
      ["message", "a1", null],
      ["message", "a2", "a1"],
      ["compaction", "a3", "a2"],
      ["message", "a4", "a3"],
      ["leaf", "a5", "a4"],
    ]);
    // The seed's compaction has no timestamp and no tokens_before: the previous record's, and 0.
    expect(sm.getEntry("a3")).toMatchObject({ firstKeptEntryId: "a2", tokensBefore: 0, timestamp: T(2) });
    expect(sm.getLeafId()).toBe("a2");
    const context = sm.buildSessionContext();
    expect(context.messages.map(textOf)).toEqual(["first question", "first answer"]);
    expect(context).toMatchObject({ thinkingLevel: "off", model: null });

    // At a4 the compaction is on the path: its summary, the kept tail from a2, then a4.
    const atA4 = sm.buildSessionContext("a4");
    expect(atA4.messages.map((m) => m.role)).toEqual(["compactionSummary", "assistant", "user"]);
    expect(atA4.messages.map(textOf)).toEqual(["the first turn", "first answer", "after the compaction"]);
    expect(atA4.messages[0]).toMatchObject({ role: "compactionSummary", summary: "the first turn", tokensBefore: 0, timestamp: Date.parse(T(2)) });

    // The leaf entry is a tree node under the leaf it left.
    const [root] = sm.getTree();
    expect(root!.entry.id).toBe("a1");
    const a2 = root!.children[0]!;
    expect(a2.children.map((node) => node.entry.id)).toEqual(["a3"]);
    expect(a2.children[0]!.children[0]!.children.map((node) => [node.entry.type, node.entry.targetId])).toEqual([["leaf", "a2"]]);
    await sm.close();
    expect(await storage.read(FILE)).toEqual(fileOf(SEED_EXAMPLE)); // opening writes nothing
  });

  it("an append goes below the restored leaf, in seed 003's spelling; reopened, the new entry is the leaf", async () => {
    const storage = await storeWith(SEED_EXAMPLE);
    const sm = await SessionManager.open(storage, FILE);
    const id = sm.appendMessage(user("on from a2"));
    await sm.close();
    const lines = decoder.decode((await storage.read(FILE))!).trimEnd().split("\n");
    expect(lines.slice(0, -1)).toEqual(SEED_EXAMPLE);
    const appended = JSON.parse(lines.at(-1)!);
    expect(Object.keys(appended)).toEqual(["type", "id", "parent_id", "timestamp", "message"]);
    expect(appended).toMatchObject({ type: "message", id, parent_id: "a2" });

    const reopened = await SessionManager.open(storage, FILE, { readOnly: true });
    expect(reopened.getLeafId()).toBe(id);
    expect(reopened.buildSessionContext().messages.map(textOf)).toEqual(["first question", "first answer", "on from a2"]);
  });

  it("branch entries, labels, custom messages and settings give the seed's context, not pi's", async () => {
    const storage = await storeWith(BRANCHES);
    const sm = await SessionManager.open(storage, FILE, { readOnly: true });
    expect(sm.getLeafId()).toBe("b13");
    expect(sm.getEntry("b5")).toMatchObject({ type: "branch_summary", fromId: "b2", parentId: "b2" });
    expect(sm.getEntry("b10")).toMatchObject({ type: "custom", customType: "ext", data: { count: 1 } });
    expect(sm.getLabel("b1")).toBe("start here");
    expect(sm.getLabel("b2")).toBeUndefined(); // a null label clears
    expect(sm.getSessionName()).toBe("seed session");
    expect(sm.getChildren("b2").map((entry) => entry.id)).toEqual(["b3", "b5"]);

    const context = sm.buildSessionContext();
    // Message and branch entries only: the custom message is shown in a UI, not sent.
    expect(context.messages.map((m) => m.role)).toEqual(["user", "assistant", "branchSummary", "user"]);
    expect(context.messages[2]).toMatchObject({ role: "branchSummary", summary: "tried a path and left it", fromId: "b2" });
    // "Scan all entries": the thinking level set on the branch left still counts; the model is the model change's.
    expect(context.thinkingLevel).toBe("high");
    expect(context.model).toEqual({ provider: "openai", modelId: "gpt-x" });

    // pi's rules on the same entries differ exactly there.
    const pi = buildSessionContext(sm.getEntries(), sm.getLeafId());
    expect(pi.messages.map((m) => m.role)).toEqual(["user", "assistant", "branchSummary", "custom", "user"]);
    expect(pi.thinkingLevel).toBe("off");
    expect(buildSessionContext(sm.getEntries(), sm.getLeafId(), undefined, { dialect: "seed003" })).toEqual(context);
  });

  it("branch() writes a leaf entry, so the navigation survives a restart; branchWithSummary writes a branch entry", async () => {
    const storage = await storeWith(BRANCHES);
    const sm = await SessionManager.open(storage, FILE);
    sm.branch("b2");
    expect(sm.getLeafId()).toBe("b2");
    const summaryId = sm.branchWithSummary("b1", "left two answers");
    await sm.close();
    const lines = decoder.decode((await storage.read(FILE))!).trimEnd().split("\n");
    const [leaf, branch] = lines.slice(-2).map((line) => JSON.parse(line));
    expect(leaf).toMatchObject({ type: "leaf", parent_id: "b13", target_id: "b2" });
    expect(branch).toEqual({ type: "branch", id: summaryId, parent_id: "b1", timestamp: branch.timestamp, from_id: "b1", summary: "left two answers" });

    const reopened = await SessionManager.open(storage, FILE, { readOnly: true });
    expect(reopened.getLeafId()).toBe(summaryId);
    expect(reopened.buildSessionContext().messages.map(textOf)).toEqual(["start", "left two answers"]);

    // Without the branch summary, the leaf entry alone brings a restart back to b2.
    const navigated = await storeWith([...BRANCHES, lines.at(-2)!]);
    const restarted = await SessionManager.open(navigated, FILE, { readOnly: true });
    expect(restarted.getLeafId()).toBe("b2");
    expect(restarted.buildSessionContext().messages.map(textOf)).toEqual(["start", "first answer"]);
  });
});

describe("a session created in seed 003's dialect", () => {
  let dir: string;
  let storage: NodeFsStorage;

  beforeEach(async () => {
    dir = await mkdtemp(join(tmpdir(), "sessionkit-seed003-"));
    storage = nodeFsStorage({ root: dir });
  });
  afterEach(async () => {
    await storage.close();
    await rm(dir, { recursive: true, force: true });
  });

  /** Every kind of entry, a large image (the Python agent keeps it in its line), a leaf entry, a cleared label. */
  async function writeEverything(): Promise<SessionManager> {
    const sm = await SessionManager.create(storage, "/my/project", { layout: "seed003" });
    const u1 = sm.appendMessage(userMsg("hello"));
    const a1 = sm.appendMessage(assistantMsg("hi"));
    sm.appendThinkingLevelChange("medium");
    sm.appendModelChange("openai", "gpt-x");
    sm.appendMessage({ role: "user", content: [{ type: "text", text: "see" }, { type: "image", data: Buffer.from(noise(3000)).toString("base64"), mimeType: "image/png" }], timestamp: 5 });
    sm.appendMessage(assistantMsg("seen"));
    sm.appendCompaction("so far", a1, 1234, { readFiles: ["a.ts"] }, false);
    sm.appendMessage(userMsg("after"));
    sm.branch(u1);
    sm.appendMessage(assistantMsg("again"));
    sm.branchWithSummary(a1, "left a path", { note: 1 });
    sm.appendLabelChange(u1, "first");
    sm.appendLabelChange(a1, "tmp");
    sm.appendLabelChange(a1, undefined);
    sm.appendSessionInfo("everything");
    sm.appendCustomEntry("ext", { state: 2 });
    sm.appendCustomMessageEntry("ext", "injected", false, { why: "test" });
    sm.appendMessage(userMsg("last"));
    await sm.close();
    return sm;
  }

  it("is written in seed 003's spelling, named as its seed names files, and reopens to the same entries, tree and context", async () => {
    const sm = await writeEverything();
    const path = sm.getSessionFile()!;
    expect(path).toMatch(/^sessions\/\d{4}-\d\d-\d\dT\d\d-\d\d-\d\d-\d{6}_[0-9a-f-]{36}\.jsonl$/);
    expect(await readdir(join(dir, "sessions"))).toEqual([path.slice("sessions/".length)]);
    const lines = decoder.decode((await storage.read(path))!).trimEnd().split("\n").map((line) => JSON.parse(line) as Record<string, unknown>);
    expect(lines[0]).toEqual({ type: "session_header", id: sm.getSessionId(), timestamp: lines[0]!.timestamp, cwd: "/my/project" });
    expect(lines.slice(1).map((line) => line.type)).toEqual([
      "message", "message", "thinking_level_change", "model_change", "message", "message", "compaction", "message", "leaf", "message",
      "branch", "label", "label", "label", "session_info", "custom_info", "custom_message", "message",
    ]);
    for (const line of lines) {
      expect(Object.keys(line).filter((key) => /[A-Z]/.test(key)), JSON.stringify(line)).toEqual([]);
    }
    // The agent resolves no blob refs: the image stays inline, byte for byte, and no blob is written.
    expect(JSON.stringify(lines[5])).toContain(`"data":"${Buffer.from(noise(3000)).toString("base64")}"`);
    expect(JSON.stringify(lines)).not.toContain("blob:sha256:");
    expect(await readdir(dir)).toEqual(["sessions"]);

    const reopened = await SessionManager.open(storage, path);
    expect(reopened.getEntries()).toEqual(sm.getEntries());
    expect(reopened.getTree()).toEqual(sm.getTree());
    expect(reopened.getLeafId()).toBe(sm.getLeafId());
    expect(reopened.buildSessionContext()).toEqual(sm.buildSessionContext());
    expect(reopened.getSessionName()).toBe("everything");
    await reopened.close();
  });

  it("round-trips byte for byte: re-encoded, rewritten from memory, reopened and closed", async () => {
    const sm = await writeEverything();
    const path = sm.getSessionFile()!;
    const bytes = (await storage.read(path))!;

    const file = await readSessionFile(storage, path);
    if (file.kind !== "session") throw new Error(file.kind);
    expect(file.problems).toEqual([]);
    expect(encodeSessionFile(file.dialect, file.header, file.entries)).toEqual(bytes);

    const reopened = await SessionManager.open(storage, path);
    await reopened.rewriteEntries(); // the whole file again, from memory
    await reopened.close();
    expect(await storage.read(path)).toEqual(bytes);
  });
});

describe("a flat seed-003 store: one folder for every project", () => {
  async function twoProjects(): Promise<{ storage: MemoryStorage; a: SessionManager[]; b: SessionManager }> {
    const storage = memoryStorage();
    const a: SessionManager[] = [];
    for (const text of ["older", "newer"]) {
      const sm = await SessionManager.create(storage, "/work/a", { layout: "seed003" });
      sm.appendMessage({ ...userMsg(`a ${text}`), timestamp: text === "older" ? 1000 : 2000 });
      sm.appendMessage({ ...assistantMsg("ok"), timestamp: text === "older" ? 1001 : 2001 });
      await sm.close();
      a.push(sm);
    }
    const b = await SessionManager.create(storage, "/work/b/", { layout: "seed003" });
    b.appendMessage(userMsg("b only"));
    b.appendMessage(assistantMsg("ok"));
    await b.close();
    return { storage, a, b };
  }

  it("list(cwd) filters by the header's cwd; listAll lists every session; all files are in sessions/", async () => {
    const { storage, a, b } = await twoProjects();
    expect((await storage.list("sessions")).map((entry) => entry.kind)).toEqual(["file", "file", "file"]);
    const listA = await SessionManager.list(storage, "/work/a", { layout: "seed003" });
    expect(listA.map((info) => info.id)).toEqual([a[1]!.getSessionId(), a[0]!.getSessionId()]);
    expect(listA.map((info) => info.firstMessage)).toEqual(["a newer", "a older"]);
    const listB = await SessionManager.list(storage, "/work/b", { layout: "seed003" }); // a trailing "/" is the same directory
    expect(listB.map((info) => info.id)).toEqual([b.getSessionId()]);
    const all = await SessionManager.listAll(storage);
    expect(all.map((info) => info.id).sort()).toEqual([...a, b].map((sm) => sm.getSessionId()).sort());
    // oh-my-pi's picker over a flat folder: one project's sessions by the header's cwd.
    const recent = await getRecentSessions(storage, "sessions", 10, { cwd: "/work/a" });
    expect(recent.map((info) => info.fullName).sort()).toEqual(["a newer", "a older"]);
  });

  it("continueRecent(cwd) resumes the project's most recent session, or starts one in the flat folder", async () => {
    const { storage, a, b } = await twoProjects();
    // mtimes decide; make b's file the newest of all, a's newer one newer than a's older one.
    await storage.append(a[1]!.getSessionFile()!, new Uint8Array());
    const resumed = await SessionManager.continueRecent(storage, "/work/a", { layout: "seed003" });
    expect([a[0]!.getSessionId(), a[1]!.getSessionId()]).toContain(resumed.getSessionId());
    expect(resumed.getCwd()).toBe("/work/a");
    await resumed.close();
    const resumedB = await SessionManager.continueRecent(storage, "/work/b/", { layout: "seed003" });
    expect(resumedB.getSessionId()).toBe(b.getSessionId());
    await resumedB.close();
    const fresh = await SessionManager.continueRecent(storage, "/work/c", { layout: "seed003" });
    expect(fresh.getEntries()).toEqual([]);
    expect(fresh.getSessionFile()).toMatch(/^sessions\/[^/]+\.jsonl$/);
    expect(fresh.getDialect()).toBe("seed003");
    await fresh.close();
  });
});

describe("archives carry seed-003 sessions and import them unchanged", () => {
  it("export keeps the bytes; import into a flat store (or pi's layout) writes the same bytes; again changes nothing", async () => {
    const source = await storeWith(BRANCHES);
    const original = (await source.read(FILE))!;
    const { bytes: zip, summary } = await exportToBytes(source, [FILE]);
    expect(summary.warnings).toEqual([]);
    const verified = await verifyArchive(zip);
    expect(verified.sessions).toEqual([{ id: SESSION_ID, member: `sessions/${SESSION_ID}.jsonl`, cwd: "/my/project", entries: 13, bytes: original.length }]);

    const flat = memoryStorage();
    const imported = await importArchive(flat, zip, { layout: "seed003" });
    expect(imported.sessions.map((s) => [s.action, s.path])).toEqual([["created", FILE]]);
    expect(await flat.read(FILE)).toEqual(original);
    expect((await importArchive(flat, zip, { layout: "seed003" })).sessions.map((s) => s.action)).toEqual(["skipped"]);

    const piLayout = memoryStorage();
    const [placed] = (await importArchive(piLayout, zip)).sessions;
    expect(placed!.path).toBe(`sessions/--my-project--/2026-03-01T10-00-00-000Z_${SESSION_ID}.jsonl`);
    expect(await piLayout.read(placed!.path)).toEqual(original);
    const sm = await SessionManager.open(piLayout, placed!.path, { readOnly: true });
    expect(sm.getDialect()).toBe("seed003");
    expect(sm.buildSessionContext().messages.map((m) => m.role)).toEqual(["user", "assistant", "branchSummary", "user"]);
  });

  it("an archive that extends a stored seed-003 session appends the new entries in seed 003's spelling", async () => {
    const shorter = BRANCHES.slice(0, 8);
    const store = await storeWith(shorter);
    const { bytes: zip } = await exportToBytes(await storeWith(BRANCHES), [FILE]);
    const result = await importArchive(store, zip);
    expect(result.sessions.map((s) => [s.action, s.newEntries])).toEqual([["extended", BRANCHES.length - shorter.length]]);
    expect(await store.read(FILE)).toEqual(fileOf(BRANCHES));
  });

  it("a branch exported with leafId is a seed-003 session of the path", async () => {
    const { bytes: zip, summary } = await exportToBytes(await storeWith(BRANCHES), [{ path: FILE, leafId: "b5" }]);
    const target = memoryStorage();
    const [session] = (await importArchive(target, zip, { layout: "seed003" })).sessions;
    expect(summary.sessions[0]!.leafId).toBe("b5");
    const lines = decoder.decode((await target.read(session!.path))!).trimEnd().split("\n").map((line) => JSON.parse(line));
    expect(lines[0]).toMatchObject({ type: "session_header", parent_session: FILE });
    expect(lines.slice(1).map((line) => [line.type, line.id])).toEqual([
      ["message", "b1"],
      ["message", "b2"],
      ["branch", "b5"],
      ["label", expect.any(String)],
    ]);
    const entries: SessionEntry[] = (await SessionManager.open(target, session!.path, { readOnly: true })).getEntries();
    expect(entries.at(-1)).toMatchObject({ type: "label", targetId: "b1", label: "start here" });
  });
});
