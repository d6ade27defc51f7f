/**
 * oh-my-pi's session operations (REFERENCE.md, "oh-my-pi's session operations"), ported from its
 * tests where they exist (reference-tests/oh-my-pi-session-tests.md: A7 rewrite-tool-call, B
 * move-to, C9 rewrites, C11 discovery prefix, C12 breadcrumbs) and written after its source where
 * they do not (fork, rewriteEntries, the listing title, getRecentSessions, terminal ids). Sessions
 * are real files in temp dirs through `nodeFsStorage`, in oh-my-pi's layout.
 *
 * Where we differ from oh-my-pi, the test says so:
 * - `moveTo` takes the new cwd as given (oh-my-pi `path.resolve`s it; the core has no file system).
 * - `open()` of a path with no file writes nothing until the first assistant message (pi's rule,
 *   which oh-my-pi later replaced with a header-only write): B4 and B5 check that the first write
 *   after the move lands at the new path.
 */
import { existsSync } from "node:fs";
import { mkdir, mkdtemp, readdir, readFile, rm, utimes, writeFile } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterEach, beforeEach, describe, expect, it } from "vitest";
import { nodeFsStorage, nodeTerminalBreadcrumb, terminalId, type NodeFsStorage } from "../../../adapters/node-fs/index.js";
import { breadcrumbPath } from "../../../src/session/breadcrumbs.js";
import { formatTimeAgo } from "../../../src/session/recent.js";
import { getRecentSessions, isSessionError, SessionManager, type AgentMessage, type MessageEntry, type SessionManagerOptions } from "../../../src/index.js";
import { sessionDirFor } from "../../../src/session/paths.js";
import { sideFolderOf } from "../../../src/session/relocate.js";
import { assistantMsg, userMsg } from "../../shared/messages.js";

let dir: string;
let storage: NodeFsStorage;
const file = (path: string) => join(dir, ...path.split("/"));
const lines = async (path: string) => (await readFile(file(path), "utf8")).trimEnd().split("\n").map((line) => JSON.parse(line) as Record<string, unknown>);
const OMP: SessionManagerOptions = { layout: "omp" };
const CWD_A = "/work/project-a";
const CWD_B = "/work/project-b";

beforeEach(async () => {
  dir = await mkdtemp(join(tmpdir(), "sessionkit-omp-"));
  storage = nodeFsStorage({ root: dir });
});
afterEach(async () => {
  await storage.close();
  await rm(dir, { recursive: true, force: true });
});

async function writtenSession(cwd = CWD_A, options: SessionManagerOptions = OMP): Promise<SessionManager> {
  const sm = await SessionManager.create(storage, cwd, options);
  sm.appendMessage(userMsg("hello"));
  sm.appendMessage(assistantMsg("hi"));
  await sm.flush();
  return sm;
}

function toolCallAssistant(id: string, args: Record<string, unknown>): AgentMessage {
  return { ...assistantMsg(""), content: [{ type: "toolCall", id, name: "edit", arguments: args }], stopReason: "toolUse" };
}

describe("rewriteAssistantToolCallArgs (omp A7 rewrite-tool-call.test.ts)", () => {
  it("rewrites assistant toolCall arguments in context", async () => {
    const session = SessionManager.inMemory();
    const toolCallId = "toolu_rewrite_1";
    session.appendMessage(toolCallAssistant(toolCallId, { path: "file.ts", op: "update", diff: "@@\n-old\n+new" }));
    const updated = await session.rewriteAssistantToolCallArgs(toolCallId, { path: "file.ts", op: "update", diff: "@@\n-old\n+newer" });
    expect(updated).toBe(true);
    const assistant = session.buildSessionContext().messages.find((m) => m.role === "assistant")!;
    const call = (assistant.content as { type: string; id: string; arguments: unknown }[]).find((block) => block.type === "toolCall" && block.id === toolCallId);
    expect(call?.arguments).toEqual({ path: "file.ts", op: "update", diff: "@@\n-old\n+newer" });
  });

  it("persisted: the newest call with that id is rewritten in the file, atomically; an unknown id changes nothing", async () => {
    const sm = await SessionManager.create(storage, CWD_A, OMP);
    sm.appendMessage(userMsg("edit twice"));
    sm.appendMessage(toolCallAssistant("call_1", { v: 1 }));
    sm.appendMessage(toolCallAssistant("call_1", { v: 2 })); // the same id again: the newest is rewritten
    await sm.flush();
    const path = sm.getSessionFile()!;
    const before = await readFile(file(path));

    expect(await sm.rewriteAssistantToolCallArgs("no-such-call", { v: 0 })).toBe(false);
    expect(await readFile(file(path))).toEqual(before);

    expect(await sm.rewriteAssistantToolCallArgs("call_1", { v: 3 })).toBe(true);
    const written = await lines(path);
    const args = written.slice(1).flatMap((line) => ((line.message as AgentMessage | undefined)?.content as { arguments?: unknown }[] | undefined) ?? []).map((b) => b.arguments).filter(Boolean);
    expect(args).toEqual([{ v: 1 }, { v: 3 }]);
    expect((await readdir(file(sessionDirFor(CWD_A)))).filter((name) => name.endsWith(".tmp"))).toEqual([]);
    await sm.close();
    const reopened = await SessionManager.open(storage, path, { readOnly: true });
    expect(reopened.getEntries()).toEqual(sm.getEntries());
  });
});

describe("moveTo (omp B move-to.test.ts)", () => {
  it("1. baseline: the old file is gone, the new one exists, the header has the new cwd, the assistant entry is there", async () => {
    const sm = await writtenSession();
    const oldPath = sm.getSessionFile()!;
    await sm.moveTo(CWD_B);
    const newPath = sm.getSessionFile()!;
    expect(newPath).toBe(`${sessionDirFor(CWD_B)}/${oldPath.slice(oldPath.lastIndexOf("/") + 1)}`);
    expect(existsSync(file(oldPath))).toBe(false);
    const written = await lines(newPath);
    expect(written[0]).toMatchObject({ type: "session", cwd: CWD_B });
    expect(written.some((line) => (line.message as AgentMessage | undefined)?.role === "assistant")).toBe(true);
    expect(sm.getCwd()).toBe(CWD_B);
    expect(sm.getSessionDir()).toBe(sessionDirFor(CWD_B));
    // It goes on at the new place, under its lock there.
    sm.appendMessage(userMsg("after the move"));
    await sm.close();
    expect((await lines(newPath)).length).toBe(4);
    expect((await SessionManager.list(storage, CWD_B)).map((info) => info.id)).toEqual([sm.getSessionId()]);
    expect(await SessionManager.list(storage, CWD_A)).toEqual([]);
  });

  it("2. a fresh session with no messages: no error, no file; the first write lands at the new path with the new cwd", async () => {
    const sm = await SessionManager.create(storage, CWD_A, OMP);
    await sm.moveTo(CWD_B);
    expect(existsSync(file(sessionDirFor(CWD_B)))).toBe(false);
    sm.appendMessage(userMsg("hello"));
    sm.appendMessage(assistantMsg("hi"));
    await sm.flush();
    expect(sm.getSessionFile()!.startsWith(`${sessionDirFor(CWD_B)}/`)).toBe(true);
    expect((await lines(sm.getSessionFile()!))[0]).toMatchObject({ cwd: CWD_B });
    await sm.close();
  });

  it("3. the file deleted on disk while the session is in memory: moveTo writes it again, from memory", async () => {
    const sm = await writtenSession();
    await rm(file(sm.getSessionFile()!));
    await sm.moveTo(CWD_B);
    const written = await lines(sm.getSessionFile()!);
    expect(written[0]).toMatchObject({ cwd: CWD_B });
    expect(written.slice(1).map((line) => line.id)).toEqual(sm.getEntries().map((entry) => entry.id));
    await sm.close();
  });

  it("4 and 5. a session opened at a path with no file yet (with a pending user message): the first write goes to the new path (we write nothing before an assistant message)", async () => {
    const path = `${sessionDirFor(CWD_A)}/2026-01-01T00-00-00-000Z_0195f1a2-0000-7000-8000-000000000001.jsonl`;
    const sm = await SessionManager.open(storage, path, { ...OMP, cwdOverride: CWD_A });
    sm.appendMessage(userMsg("pending"));
    await sm.moveTo(CWD_B);
    expect(existsSync(file(path))).toBe(false);
    sm.appendMessage(assistantMsg("answered"));
    await sm.close();
    const written = await lines(sm.getSessionFile()!);
    expect(sm.getSessionFile()).toBe(`${sessionDirFor(CWD_B)}/2026-01-01T00-00-00-000Z_0195f1a2-0000-7000-8000-000000000001.jsonl`);
    expect(written[0]).toMatchObject({ cwd: CWD_B });
    expect(written).toHaveLength(3);
  });

  it("6. the side folder (artifacts) moves with the file, to the new file's path without .jsonl", async () => {
    const sm = await writtenSession();
    const side = sideFolderOf(sm.getSessionFile()!);
    await mkdir(file(`${side}/bash`), { recursive: true });
    await writeFile(file(`${side}/bash/out-1.txt`), "artifact one");
    await writeFile(file(`${side}/notes.md`), "artifact two");
    await sm.moveTo(CWD_B);
    const newSide = sm.getSessionFile()!.slice(0, -".jsonl".length);
    expect(await readFile(file(`${newSide}/bash/out-1.txt`), "utf8")).toBe("artifact one");
    expect(await readFile(file(`${newSide}/notes.md`), "utf8")).toBe("artifact two");
    expect(existsSync(file(`${side}/notes.md`))).toBe(false);
    expect(existsSync(file(`${side}/bash/out-1.txt`))).toBe(false);
    await sm.close();
  });

  it("6b. a side folder without a session file moves too", async () => {
    const sm = await SessionManager.create(storage, CWD_A, OMP);
    const side = sideFolderOf(sm.getSessionFile()!);
    await mkdir(file(side), { recursive: true });
    await writeFile(file(`${side}/artifact.txt`), "made before any answer");
    await sm.moveTo(CWD_B);
    expect(await readFile(file(`${sideFolderOf(sm.getSessionFile()!)}/artifact.txt`), "utf8")).toBe("made before any answer");
    expect(existsSync(file(sm.getSessionFile()!))).toBe(false);
    await sm.close();
  });

  it("the same cwd is no move; a file already at the target is not replaced and nothing changes", async () => {
    const sm = await writtenSession();
    const path = sm.getSessionFile()!;
    await sm.moveTo(`${CWD_A}/`);
    expect(sm.getSessionFile()).toBe(path);
    const target = `${sessionDirFor(CWD_B)}/${path.slice(path.lastIndexOf("/") + 1)}`;
    await mkdir(file(sessionDirFor(CWD_B)), { recursive: true });
    await writeFile(file(target), "someone else's\n");
    const error = await sm.moveTo(CWD_B).catch((caught: unknown) => caught);
    expect(isSessionError(error, "rewrite-failed"), String(error)).toBe(true);
    expect(await readFile(file(target), "utf8")).toBe("someone else's\n");
    expect(sm.getSessionFile()).toBe(path);
    expect(sm.getCwd()).toBe(CWD_A);
    expect((await lines(path))[0]).toMatchObject({ cwd: CWD_A });
    await sm.close();
  });

  it("in a flat seed-003 store the file stays where it is; only its header's cwd changes", async () => {
    const sm = await writtenSession(CWD_A, { layout: "seed003" });
    const path = sm.getSessionFile()!;
    await sm.moveTo(CWD_B);
    expect(sm.getSessionFile()).toBe(path);
    expect((await lines(path))[0]).toMatchObject({ type: "session_header", cwd: CWD_B });
    expect((await SessionManager.list(storage, CWD_B, { layout: "seed003" })).map((info) => info.id)).toEqual([sm.getSessionId()]);
    await sm.close();
  });
});

describe("the session name is the header's title (omp C9)", () => {
  it("before any file exists nothing is written; the title is in the first write", async () => {
    const sm = await SessionManager.create(storage, CWD_A, OMP);
    sm.appendMessage(userMsg("hello"));
    await sm.setSessionName("  My title  ");
    expect(existsSync(file(sessionDirFor(CWD_A)))).toBe(false);
    sm.appendMessage(assistantMsg("hi"));
    await sm.close();
    const written = await lines(sm.getSessionFile()!);
    expect(written[0]).toMatchObject({ type: "session", title: "My title" });
    expect(written.filter((line) => line.type === "session_info")).toEqual([]);
    expect(sm.getSessionName()).toBe("My title");
  });

  it("after the file exists, its header line is rewritten atomically: no temp file left, the other lines byte for byte", async () => {
    const sm = await writtenSession();
    const path = sm.getSessionFile()!;
    // A damaged line the loader skips must survive the rename: only the header line is replaced.
    await sm.close();
    await writeFile(file(path), `${await readFile(file(path), "utf8")}not json at all\n`);
    const reopened = await SessionManager.open(storage, path, OMP);
    const before = (await readFile(file(path), "utf8")).split("\n");
    await reopened.setSessionName("Renamed");
    const after = (await readFile(file(path), "utf8")).split("\n");
    expect(JSON.parse(after[0]!)).toEqual({ ...JSON.parse(before[0]!), title: "Renamed" });
    expect(after.slice(1)).toEqual(before.slice(1));
    expect((await readdir(file(sessionDirFor(CWD_A)))).filter((name) => name.endsWith(".tmp"))).toEqual([]);
    // Appends queued before the rename land before it; the ones after, after it.
    reopened.appendMessage(userMsg("queued"));
    await reopened.setSessionName("Renamed again");
    reopened.appendMessage(assistantMsg("after"));
    await reopened.close();
    const final = await lines(path).catch(() => null);
    expect(final).toBeNull(); // the damaged line is still there, so the file is not all JSON
    const text = (await readFile(file(path), "utf8")).trimEnd().split("\n");
    expect(JSON.parse(text[0]!).title).toBe("Renamed again");
    expect(text.slice(-2).map((line) => JSON.parse(line).message.role)).toEqual(["user", "assistant"]);
    const listed = await SessionManager.list(storage, CWD_A);
    expect(listed[0]!.title).toBe("Renamed again");
    expect((await SessionManager.open(storage, path, { readOnly: true })).getSessionName()).toBe("Renamed again");
  });

  it("pi's and seed 003's layouts keep pi's way: a session_info entry", async () => {
    for (const layout of ["pi", "seed003"] as const) {
      const sm = await writtenSession(CWD_A, { layout });
      await sm.setSessionName("named");
      await sm.close();
      const written = await lines(sm.getSessionFile()!);
      expect(written.at(-1)).toMatchObject({ type: "session_info", name: "named" });
      expect(written[0]!.title).toBeUndefined();
    }
  });
});

describe("fork (omp's SessionManager.fork)", () => {
  it("a new id and file with the whole history; parentSession is the old id; the title is kept; the old file is untouched", async () => {
    const sm = await writtenSession();
    await sm.setSessionName("Forked title");
    const oldId = sm.getSessionId();
    const oldPath = sm.getSessionFile()!;
    const oldBytes = await readFile(file(oldPath));
    const entries = sm.getEntries();

    const result = await sm.fork();
    expect(result).toEqual({ oldSessionFile: oldPath, newSessionFile: sm.getSessionFile() });
    expect(sm.getSessionId()).not.toBe(oldId);
    const written = await lines(result!.newSessionFile);
    expect(written[0]).toMatchObject({ type: "session", id: sm.getSessionId(), parentSession: oldId, title: "Forked title", cwd: CWD_A });
    expect(written.slice(1).map((line) => line.id)).toEqual(entries.map((entry) => entry.id));
    expect(await readFile(file(oldPath))).toEqual(oldBytes);
    sm.appendMessage(userMsg("only in the fork"));
    await sm.close();
    expect((await lines(result!.newSessionFile)).length).toBe(entries.length + 2);
    expect(await readFile(file(oldPath))).toEqual(oldBytes);
  });

  it("in memory there is nothing to fork: undefined", async () => {
    expect(await SessionManager.inMemory().fork()).toBeUndefined();
  });

  it("a seed-003 session forks into a seed-003 file with parent_session", async () => {
    const sm = await writtenSession(CWD_A, { layout: "seed003" });
    const oldId = sm.getSessionId();
    const { newSessionFile } = (await sm.fork())!;
    await sm.close();
    expect((await lines(newSessionFile))[0]).toMatchObject({ type: "session_header", parent_session: oldId });
  });
});

describe("rewriteEntries (omp's rewrite after pruning tool output)", () => {
  it("rewrites the whole file from memory after entries were changed in place; the leaf stays", async () => {
    const sm = await SessionManager.create(storage, CWD_A, OMP);
    sm.appendMessage(userMsg("run it"));
    sm.appendMessage(toolCallAssistant("call_1", { command: "ls" }));
    const resultId = sm.appendMessage({ role: "toolResult", toolCallId: "call_1", toolName: "bash", content: [{ type: "text", text: "x".repeat(10_000) }], isError: false, timestamp: 3 });
    const leafId = sm.appendMessage(assistantMsg("done"));
    await sm.flush();
    const pruned = sm.getEntry(resultId) as MessageEntry;
    pruned.message.content = [{ type: "text", text: "[Output truncated]" }];
    await sm.rewriteEntries();
    expect(sm.getLeafId()).toBe(leafId);
    const written = await lines(sm.getSessionFile()!);
    expect(JSON.stringify(written)).not.toContain("x".repeat(100));
    expect(JSON.stringify(written)).toContain("[Output truncated]");
    await sm.close();
    const reopened = await SessionManager.open(storage, sm.getSessionFile()!, { readOnly: true });
    expect(reopened.getEntries()).toEqual(sm.getEntries());
  });

  it("lines that did not load are kept aside in a .bak before the rewrite", async () => {
    const sm = await writtenSession();
    const path = sm.getSessionFile()!;
    await sm.close();
    await writeFile(file(path), `${await readFile(file(path), "utf8")}{"broken\n`);
    const damaged = await readFile(file(path));
    const warnings: string[] = [];
    const reopened = await SessionManager.open(storage, path, { ...OMP, onWarning: (w) => warnings.push(w) });
    await reopened.rewriteEntries();
    await reopened.close();
    const backups = (await readdir(file(sessionDirFor(CWD_A)))).filter((name) => name.includes(".rewrite-") && name.endsWith(".bak"));
    expect(backups).toHaveLength(1);
    expect(await readFile(file(`${sessionDirFor(CWD_A)}/${backups[0]}`))).toEqual(damaged);
    expect(warnings.some((w) => w.includes(backups[0]!))).toBe(true);
    expect((await lines(path)).length).toBe(3);
  });
});

describe("the listing title: the header's title, else the last compaction's shortSummary", () => {
  it("follows oh-my-pi's rule", async () => {
    const titled = await writtenSession();
    await titled.setSessionName("A title");
    const summarized = await writtenSession();
    summarized.appendCompaction("long summary", summarized.getEntries()[0]!.id, 10);
    const compactionEntry = summarized.getEntries().at(-1)!;
    (compactionEntry as { shortSummary?: string }).shortSummary = "Short recap";
    await summarized.rewriteEntries();
    const plain = await writtenSession();
    await Promise.all([titled.close(), summarized.close(), plain.close()]);
    const byId = new Map((await SessionManager.list(storage, CWD_A)).map((info) => [info.id, info]));
    expect(byId.get(titled.getSessionId())!.title).toBe("A title");
    expect(byId.get(summarized.getSessionId())!.title).toBe("Short recap");
    expect(byId.get(plain.getSessionId())!.title).toBeUndefined();
  });
});

describe("getRecentSessions (omp C11 and its source)", () => {
  const HOUR = 3_600_000;

  async function sessionFile(name: string, header: Record<string, unknown>, rest: unknown[], mtime: number): Promise<string> {
    const path = `${sessionDirFor(CWD_A)}/${name}`;
    await mkdir(file(sessionDirFor(CWD_A)), { recursive: true });
    await writeFile(file(path), [header, ...rest].map((record) => `${JSON.stringify(record)}\n`).join(""));
    await utimes(file(path), mtime / 1000, mtime / 1000);
    return path;
  }

  it("newest first by mtime, limited; names from the title, the first prompt, the id, the file name; cut to 40 characters", async () => {
    const now = Date.UTC(2026, 2, 1, 12);
    const message = (content: unknown) => ({ type: "message", id: "m1", parentId: null, timestamp: "2026-03-01T00:00:00.000Z", message: { role: "user", content } });
    await sessionFile("titled.jsonl", { type: "session", id: "id-titled", title: "A title\nsecond line", timestamp: "x" }, [message("ignored prompt")], now - 30_000);
    await sessionFile("prompted.jsonl", { type: "session", id: "id-prompted", timestamp: "x" }, [message([{ type: "image", data: "", mimeType: "image/png" }, { type: "text", text: "\u0007The prompt text" }])], now - 5 * 60_000);
    await sessionFile("long.jsonl", { type: "session", id: "id-long", title: "T".repeat(60), timestamp: "x" }, [], now - 3 * HOUR);
    // The first prompt lies beyond the 4 KiB prefix: the id names it.
    const padding = { type: "custom", id: "c1", parentId: null, timestamp: "2026-03-01T00:00:00.000Z", customType: "pad", data: "p".repeat(5000) };
    await sessionFile("far.jsonl", { type: "session", id: "id-far", timestamp: "x" }, [padding, message("too far")], now - 2 * 24 * HOUR);
    await sessionFile("blank-id.jsonl", { type: "session", id: "   ", timestamp: "x" }, [], now - 8 * 24 * HOUR);
    await sessionFile("not-a-session.jsonl", { type: "message", id: "x" }, [], now);
    await writeFile(file(`${sessionDirFor(CWD_A)}/notes.txt`), "not jsonl");

    const recent = await getRecentSessions(storage, sessionDirFor(CWD_A), 10, { now });
    expect(recent.map((info) => [info.fullName, info.name, info.timeAgo])).toEqual([
      ["A title", "A title", "just now"],
      ["The prompt text", "The prompt text", "5m ago"],
      ["T".repeat(60), `${"T".repeat(39)}…`, "3h ago"],
      ["id-far", "id-far", "2d ago"],
      ["blank-id", "blank-id", new Date(now - 8 * 24 * HOUR).toLocaleDateString()],
    ]);
    expect(recent[0]!.path).toBe(`${sessionDirFor(CWD_A)}/titled.jsonl`);
    expect((await getRecentSessions(storage, sessionDirFor(CWD_A), undefined, { now })).map((info) => info.fullName)).toEqual(["A title", "The prompt text", "T".repeat(60)]);
    expect(await getRecentSessions(storage, "sessions/--nowhere--")).toEqual([]);
  });

  it("formatTimeAgo's steps", () => {
    const now = 1_000_000_000_000;
    expect([0, 59_999, 60_000, 3_599_999, 3_600_000, 86_399_999, 86_400_000, 6 * 86_400_000].map((ago) => formatTimeAgo(now - ago, now))).toEqual([
      "just now",
      "just now",
      "1m ago",
      "59m ago",
      "1h ago",
      "23h ago",
      "1d ago",
      "6d ago",
    ]);
  });
});

describe("terminal breadcrumbs (omp C12)", () => {
  it("the terminal id: the tty when stdin is one, then kitty, tmux, Apple Terminal, Windows Terminal; else none", () => {
    expect(terminalId({ env: { KITTY_WINDOW_ID: "7" }, stdinIsTty: true, ttyPath: () => "/dev/pts/3" })).toBe("pts-3");
    expect(terminalId({ env: { KITTY_WINDOW_ID: "7", TMUX_PANE: "%1" }, stdinIsTty: false })).toBe("kitty-7");
    expect(terminalId({ env: { TMUX_PANE: "%1" }, stdinIsTty: false })).toBe("tmux-%1");
    expect(terminalId({ env: { TERM_SESSION_ID: "w0t0p0:ABC" }, stdinIsTty: false })).toBe("apple-w0t0p0:ABC");
    expect(terminalId({ env: { WT_SESSION: "guid" }, stdinIsTty: true, ttyPath: () => null })).toBe("wt-guid");
    expect(terminalId({ env: {}, stdinIsTty: false })).toBeUndefined();
  });

  it("the breadcrumb is exactly two lines, the cwd and the absolute session file; it follows create, fork and move", async () => {
    const crumb = nodeTerminalBreadcrumb(dir, { env: { TMUX_PANE: "%4" }, stdinIsTty: false })!;
    const crumbFile = file(breadcrumbPath(crumb.terminalId));
    const sm = await writtenSession(CWD_A, { ...OMP, terminalBreadcrumb: crumb });
    await sm.flush();
    await sm.close(); // waits for the breadcrumb write
    expect(await readFile(crumbFile, "utf8")).toBe(`${CWD_A}\n${file(sm.getSessionFile()!)}\n`);

    const resumed = await SessionManager.continueRecent(storage, CWD_A, { ...OMP, terminalBreadcrumb: crumb });
    await resumed.moveTo(CWD_B);
    await resumed.close();
    expect(await readFile(crumbFile, "utf8")).toBe(`${CWD_B}\n${file(resumed.getSessionFile()!)}\n`);
  });

  it("continueRecent prefers the breadcrumb over the most recent session; ignores it for another cwd or a missing file", async () => {
    const crumb = nodeTerminalBreadcrumb(dir, { env: { KITTY_WINDOW_ID: "1" }, stdinIsTty: false })!;
    const mine = await writtenSession(CWD_A, { ...OMP, terminalBreadcrumb: crumb });
    await mine.close();
    const newer = await writtenSession(CWD_A); // no breadcrumb: another terminal
    await newer.close();
    await utimes(file(mine.getSessionFile()!), 1, 1);

    const resumed = await SessionManager.continueRecent(storage, CWD_A, { ...OMP, terminalBreadcrumb: crumb });
    expect(resumed.getSessionId()).toBe(mine.getSessionId());
    await resumed.close();
    const elsewhere = await SessionManager.continueRecent(storage, CWD_A, OMP);
    expect(elsewhere.getSessionId()).toBe(newer.getSessionId());
    await elsewhere.close();

    // The breadcrumb names another cwd: the folder's most recent session.
    await writeFile(file(breadcrumbPath(crumb.terminalId)), `${CWD_B}\n${file(mine.getSessionFile()!)}\n`);
    const otherCwd = await SessionManager.continueRecent(storage, CWD_A, { ...OMP, terminalBreadcrumb: crumb });
    expect(otherCwd.getSessionId()).toBe(newer.getSessionId());
    await otherCwd.close();

    // Its file is gone: the same.
    await writeFile(file(breadcrumbPath(crumb.terminalId)), `${CWD_A}\n${file(`${sessionDirFor(CWD_A)}/gone.jsonl`)}\n`);
    const gone = await SessionManager.continueRecent(storage, CWD_A, { ...OMP, terminalBreadcrumb: crumb });
    expect(gone.getSessionId()).toBe(newer.getSessionId());
    await gone.close();

    // A file outside this store is not ours to open.
    await writeFile(file(breadcrumbPath(crumb.terminalId)), `${CWD_A}\n/etc/passwd\n`);
    const outside = await SessionManager.continueRecent(storage, CWD_A, { ...OMP, terminalBreadcrumb: crumb });
    expect(outside.getSessionId()).toBe(newer.getSessionId());
    await outside.close();
  });
});
