/**
 * Fault injection on oh-my-pi's rewrites: `moveTo` (the session file and its side folder moved,
 * the header's cwd rewritten, the breadcrumb updated), a rename (the header's title rewritten) and
 * `fork`. Each runs once for every storage operation it performs, with that one operation failing
 * (test/shared/faulty-port.ts). Storage must then hold the old state or the new one, never a mix;
 * a failure is a typed SessionError "rewrite-failed"; the session goes on where its file is.
 */
import { describe, expect, it } from "vitest";
import { memoryStorage, type MemoryStorage } from "../../adapters/memory/index.js";
import { breadcrumbPath } from "../../src/session/breadcrumbs.js";
import { isSessionError, SessionManager, type SessionManagerOptions, type StoragePort } from "../../src/index.js";
import { joinPath } from "../../src/port.js";
import { sessionDirFor } from "../../src/session/paths.js";
import { sideFolderOf } from "../../src/session/relocate.js";
import { faultyPort } from "../shared/faulty-port.js";
import { assistantMsg, userMsg } from "../shared/messages.js";

const CWD_A = "/work/a";
const CWD_B = "/work/b";
const CRUMB = { terminalId: "pts-9" };
const OPTIONS: SessionManagerOptions = { layout: "omp", terminalBreadcrumb: CRUMB };
const decoder = new TextDecoder();

type Snapshot = Map<string, string>;

/** Every file of a store and its text (binary-safe enough: the bytes are ours). */
async function snapshot(storage: StoragePort, dir = ""): Promise<Snapshot> {
  const out: Snapshot = new Map();
  for (const entry of await storage.list(dir)) {
    const path = joinPath(dir, entry.name);
    if (entry.kind === "dir") for (const [p, t] of await snapshot(storage, path)) out.set(p, t);
    else out.set(path, decoder.decode((await storage.read(path))!));
  }
  return out;
}

async function storeFrom(files: Snapshot): Promise<MemoryStorage> {
  const storage = memoryStorage();
  for (const [path, text] of files) await storage.write(path, new TextEncoder().encode(text));
  return storage;
}

/** The starting store: a written omp session with a title, two artifacts in its side folder, and a blob. */
async function startingStore(): Promise<{ files: Snapshot; path: string }> {
  const storage = memoryStorage();
  const sm = await SessionManager.create(storage, CWD_A, { layout: "omp" });
  sm.appendMessage({ role: "user", content: [{ type: "text", text: "look" }, { type: "image", data: btoa("x".repeat(1200)), mimeType: "image/png" }], timestamp: 1 });
  sm.appendMessage(assistantMsg("seen"));
  sm.appendMessage(userMsg("more"));
  sm.appendMessage({ ...assistantMsg(""), content: [{ type: "toolCall", id: "call_1", name: "edit", arguments: { v: 1 } }] });
  await sm.setSessionName("Old title");
  await sm.close();
  const path = sm.getSessionFile()!;
  const side = sideFolderOf(path);
  await storage.write(`${side}/tool/output.txt`, new TextEncoder().encode("artifact 1"));
  await storage.write(`${side}/plan.md`, new TextEncoder().encode("artifact 2"));
  return { files: await snapshot(storage), path };
}

/** `files` without the breadcrumb (written best-effort after a move: a state does not include it). */
function withoutCrumb(files: Snapshot): Snapshot {
  const out = new Map(files);
  out.delete(breadcrumbPath(CRUMB.terminalId));
  return out;
}

function headerReplaced(text: string, change: (header: Record<string, unknown>) => Record<string, unknown>): string {
  const newline = text.indexOf("\n");
  return `${JSON.stringify(change(JSON.parse(text.slice(0, newline))))}${text.slice(newline)}`;
}

interface Operation {
  name: string;
  run(sm: SessionManager): Promise<unknown>;
  /** The store after a successful run, from the one before (absent: what the fault-free run left). */
  expected?(before: Snapshot, path: string, sm: SessionManager): Snapshot;
}

const moveTo: Operation = {
  name: "moveTo",
  run: (sm) => sm.moveTo(CWD_B),
  expected(before, path) {
    const after = new Map<string, string>();
    const newPath = joinPath(sessionDirFor(CWD_B), path.slice(path.lastIndexOf("/") + 1));
    const [oldSide, newSide] = [sideFolderOf(path), sideFolderOf(newPath)];
    for (const [file, text] of before) {
      if (file === path) after.set(newPath, headerReplaced(text, (h) => ({ ...h, cwd: CWD_B })));
      else if (file.startsWith(`${oldSide}/`)) after.set(newSide + file.slice(oldSide.length), text);
      else after.set(file, text);
    }
    return after;
  },
};

const rename: Operation = {
  name: "setSessionName (omp: the header's title)",
  run: (sm) => sm.setSessionName("New title"),
  expected(before, path) {
    const after = new Map(before);
    after.set(path, headerReplaced(before.get(path)!, (h) => ({ ...h, title: "New title" })));
    return after;
  },
};

const fork: Operation = {
  name: "fork",
  run: (sm) => sm.fork(),
  expected(before, path, sm) {
    const after = new Map(before);
    const newPath = sm.getSessionFile()!;
    if (newPath === path) return after; // the fault-free run is the one that knows the new path
    after.set(newPath, headerReplaced(before.get(path)!, (h) => ({ ...h, id: sm.getSessionId(), timestamp: sm.getHeader()!.timestamp, parentSession: h.id })));
    return after;
  },
};

const rewriteToolCall: Operation = {
  name: "rewriteAssistantToolCallArgs (the whole file from memory)",
  run: (sm) => sm.rewriteAssistantToolCallArgs("call_1", { v: 2 }),
};

describe.each([moveTo, rename, fork, rewriteToolCall])("a fault at every storage operation of $name", (operation) => {
  it("leaves the old state or the new one, never a mix; the session goes on from where its file is", async () => {
    const { files, path } = await startingStore();
    const start = withoutCrumb(files);

    // A fault-free run counts the operations of opening and of the operation itself.
    const clean = faultyPort(await storeFrom(files));
    const cleanSm = await SessionManager.open(clean, path, OPTIONS);
    const opened = clean.log.length;
    await operation.run(cleanSm);
    await cleanSm.close();
    const done = clean.log.length;
    const newState = withoutCrumb(await snapshot(clean));
    if (operation.expected) expect(newState).toEqual(operation.expected(start, path, cleanSm));
    expect(newState).not.toEqual(start);
    const expectedAfter = (sm: SessionManager) => (operation.expected ? withoutCrumb(operation.expected(start, path, sm)) : newState);
    const steps = clean.log.slice(opened, done).map((op) => `${op.op} ${op.path}`);
    expect(steps.length).toBeGreaterThan(2);

    const outcomes = { old: 0, new: 0 };
    for (let k = opened + 1; k <= done; k++) {
      const storage = faultyPort(await storeFrom(files), { failAt: k });
      const sm = await SessionManager.open(storage, path, OPTIONS);
      const failure = await operation.run(sm).then(
        () => null,
        (error: unknown) => error,
      );
      const step = `operation ${k} (${storage.log[k - 1]?.op} ${storage.log[k - 1]?.path})`;
      const after = withoutCrumb(await snapshot(storage));
      const isOld = JSON.stringify([...after].sort()) === JSON.stringify([...start].sort());
      const isNew = JSON.stringify([...after].sort()) === JSON.stringify([...expectedAfter(sm)].sort());
      expect(isOld || isNew, `${step}: storage holds neither the old state nor the new one:\n${[...after.keys()].join("\n")}`).toBe(true);
      if (failure !== null) {
        expect(isSessionError(failure, "rewrite-failed"), `${step}: ${String(failure)}`).toBe(true);
        expect(isOld, `${step} failed but left the new state`).toBe(true);
        expect(sm.getSessionFile(), step).toBe(path);
      }
      outcomes[isOld ? "old" : "new"]++;

      // The session goes on: an append lands in its file, which reopens whole.
      const entries = sm.getEntries().length;
      sm.appendMessage(userMsg(`after ${step}`));
      await sm.close();
      const reopened = await SessionManager.open(storage, sm.getSessionFile()!, { readOnly: true });
      expect(reopened.getEntries(), step).toHaveLength(entries + 1);
      expect(reopened.getSessionName(), step).toBe(sm.getSessionName());
    }
    // Every step before the last write fails and undoes; a fault after it (the breadcrumb) leaves the new state.
    expect(outcomes.old, JSON.stringify(steps)).toBeGreaterThan(0);
  });
});

describe("moveTo's steps", () => {
  it("copies every file before removing any, the session file last, and then writes the breadcrumb", async () => {
    const { files, path } = await startingStore();
    const storage = faultyPort(await storeFrom(files));
    const sm = await SessionManager.open(storage, path, OPTIONS);
    const opened = storage.log.length;
    await sm.moveTo(CWD_B);
    await sm.close();
    const ops = storage.log.slice(opened).map((op) => op.op);
    const lastWrite = ops.lastIndexOf("write");
    const firstRemove = ops.indexOf("remove");
    const writesBeforeRemoves = ops.slice(0, firstRemove).filter((op) => op === "write").length;
    expect(writesBeforeRemoves).toBe(3); // the session file and two artifacts
    expect(storage.log.slice(opened).filter((op) => op.op === "remove").at(-1)!.path).toBe(path);
    expect(storage.log[opened + lastWrite]!.path).toBe(breadcrumbPath(CRUMB.terminalId));
  });
});
