/**
 * A session id that is already stored: identical → skip, extended → append, diverged → fork with
 * parentSession; the explicit policies; dry runs; branches; rollback when storage fails.
 */
import { readFile } from "node:fs/promises";
import { join } from "node:path";
import { afterAll, afterEach, beforeEach, describe, expect, it } from "vitest";
import { terminateWorkers } from "@zip.js/zip.js";
import { exportArchive, importArchive, importSessionFiles, verifyArchive } from "../../../src/archive/index.js";
import { ArchiveError, SessionManager, StorageError, type StoragePort } from "../../../src/index.js";
import { CORPUS_DIR } from "../../shared/corpus.js";
import { zipMembers } from "../../shared/zip-fixtures.js";
import { assistant, exportToBytes, listing, memorySink, noise, OWN_STORE, sha256, tempStore, user, type TempStore } from "./helpers.js";

const CWD = "/work/app";
let stores: TempStore[] = [];

async function store(): Promise<TempStore> {
  const s = await tempStore();
  stores.push(s);
  return s;
}

beforeEach(() => {
  stores = [];
});
afterEach(async () => {
  for (const s of stores) await s.cleanup();
});
afterAll(() => terminateWorkers());

/** A session with `turns` user/assistant pairs; returns its path. */
async function createSession(storage: StoragePort, turns: number, image?: Uint8Array): Promise<string> {
  const sm = await SessionManager.create(storage, CWD, { ...OWN_STORE, deferUntilAssistant: false });
  for (let i = 0; i < turns; i++) {
    sm.appendMessage(user(`question ${i}`, i === 0 ? image : undefined));
    sm.appendMessage(assistant(`answer ${i}`));
  }
  const path = sm.getSessionFile()!;
  await sm.close();
  return path;
}

async function appendTurn(storage: StoragePort, path: string, text: string): Promise<void> {
  const sm = await SessionManager.open(storage, path, OWN_STORE);
  sm.appendMessage(user(text));
  sm.appendMessage(assistant(`re: ${text}`));
  await sm.close();
}

describe("conflicts under onConflict auto", () => {
  it("an archive whose session has more entries extends the stored one", async () => {
    const origin = await store();
    const path = await createSession(origin.storage, 2);
    const shorter = await exportToBytes(origin.storage, [path]);
    await appendTurn(origin.storage, path, "more");
    const longer = await exportToBytes(origin.storage, [path]);

    const target = await store();
    expect((await importArchive(target.storage, shorter.bytes)).sessions[0]).toMatchObject({ action: "created", path, newEntries: 4 });
    const summary = await importArchive(target.storage, longer.bytes);
    expect(summary.sessions).toEqual([
      { source: `sessions/${shorter.summary.sessions[0]!.id}.jsonl`, id: shorter.summary.sessions[0]!.id, action: "extended", path, entries: 6, newEntries: 2, reason: "appended 2 entries the stored session did not have" },
    ]);
    expect(sha256((await target.storage.read(path))!)).toBe(sha256((await origin.storage.read(path))!));

    const before = await listing(target.root);
    expect((await importArchive(target.storage, longer.bytes)).sessions[0]!.action).toBe("skipped");
    const older = await importArchive(target.storage, shorter.bytes);
    expect(older.sessions[0]).toMatchObject({ action: "skipped", reason: "the stored session already holds all its entries" });
    expect(await listing(target.root)).toEqual(before);
  });

  it("a diverged session becomes a fork with parentSession, once", async () => {
    const origin = await store();
    const path = await createSession(origin.storage, 1);
    const common = await exportToBytes(origin.storage, [path]);
    const target = await store();
    await importArchive(target.storage, common.bytes);
    await appendTurn(target.storage, path, "theirs");
    await appendTurn(origin.storage, path, "ours");
    const diverged = await exportToBytes(origin.storage, [path]);
    const storedBefore = (await target.storage.read(path))!;

    const summary = await importArchive(target.storage, diverged.bytes);
    const fork = summary.sessions[0]!;
    expect(fork).toMatchObject({ action: "forked", parentSession: path, entries: 4, newEntries: 4 });
    expect(fork.id).not.toBe(diverged.summary.sessions[0]!.id);
    expect(fork.path).toMatch(new RegExp(`^sessions/--work-app--/.*_${fork.id}\\.jsonl$`));
    expect(sha256((await target.storage.read(path))!)).toBe(sha256(storedBefore));

    const forked = await SessionManager.open(target.storage, fork.path, { readOnly: true });
    const original = await SessionManager.open(origin.storage, path, { readOnly: true });
    expect(forked.getHeader()).toMatchObject({ id: fork.id, parentSession: path, cwd: CWD });
    expect(forked.getEntries()).toEqual(original.getEntries());
    expect(forked.buildSessionContext()).toEqual(original.buildSessionContext());
    await forked.close();
    await original.close();
    const listed = await SessionManager.list(target.storage, CWD);
    expect(listed.find((i) => i.id === fork.id)?.parentSessionPath).toBe(path);

    const before = await listing(target.root);
    const again = await importArchive(target.storage, diverged.bytes);
    expect(again.sessions[0]).toMatchObject({ action: "skipped", path: fork.path, reason: `already imported as a fork of ${path}` });
    expect(await listing(target.root)).toEqual(before);
  });
});

describe("the explicit policies and dry runs", () => {
  async function extendedPair() {
    const origin = await store();
    const path = await createSession(origin.storage, 1);
    const shorter = await exportToBytes(origin.storage, [path]);
    await appendTurn(origin.storage, path, "more");
    const longer = await exportToBytes(origin.storage, [path]);
    const target = await store();
    await importArchive(target.storage, shorter.bytes);
    return { origin, path, shorter, longer, target };
  }

  it("skip keeps the stored session", async () => {
    const { path, longer, target } = await extendedPair();
    const before = await listing(target.root);
    const summary = await importArchive(target.storage, longer.bytes, { onConflict: "skip" });
    expect(summary.sessions[0]).toMatchObject({ action: "skipped", path, newEntries: 0 });
    expect(await listing(target.root)).toEqual(before);
  });

  it("replace overwrites the stored file with the member, and is a no-op when identical", async () => {
    const { path, longer, target } = await extendedPair();
    await appendTurn(target.storage, path, "local change");
    const summary = await importArchive(target.storage, longer.bytes, { onConflict: "replace" });
    expect(summary.sessions[0]).toMatchObject({ action: "replaced", path });
    const member = (await zipMembers(longer.bytes)).find((m) => m.name.startsWith("sessions/"))!;
    expect(sha256((await target.storage.read(path))!)).toBe(sha256(member.data));
    const before = await listing(target.root);
    expect((await importArchive(target.storage, longer.bytes, { onConflict: "replace" })).sessions[0]!.action).toBe("skipped");
    expect(await listing(target.root)).toEqual(before);
  });

  it("fork imports beside the stored session even when it would extend it", async () => {
    const { path, longer, target } = await extendedPair();
    const summary = await importArchive(target.storage, longer.bytes, { onConflict: "fork" });
    expect(summary.sessions[0]).toMatchObject({ action: "forked", parentSession: path, reason: "imported as a fork (onConflict fork)" });
    expect((await target.storage.list("sessions/--work-app--")).filter((f) => f.name.endsWith(".jsonl"))).toHaveLength(2);
  });

  it("a dry run plans the same actions and writes nothing", async () => {
    const { path, longer, target } = await extendedPair();
    const before = await listing(target.root);
    const planned = await importArchive(target.storage, longer.bytes, { dryRun: true });
    expect(planned.dryRun).toBe(true);
    expect(planned.sessions[0]).toMatchObject({ action: "extended", path, newEntries: 2 });
    expect(await listing(target.root)).toEqual(before);
    const real = await importArchive(target.storage, longer.bytes);
    expect({ ...real, dryRun: true }).toEqual(planned);
  });
});

describe("blobs", () => {
  it("images travel as blobs; without blobs the refs stay and the missing blobs are named", async () => {
    const origin = await store();
    const image = noise(3000, 7);
    const path = await createSession(origin.storage, 1, image);
    const [blob] = await origin.storage.list("blobs");
    expect(blob!.name).toBe(sha256(image));

    const withBlobs = await exportToBytes(origin.storage, [path]);
    expect(withBlobs.summary.blobs).toEqual({ count: 1, bytes: 3000 });
    const target = await store();
    const progress: string[] = [];
    const summary = await importArchive(target.storage, withBlobs.bytes, { ...OWN_STORE, onProgress: (p) => progress.push(`${p.phase} ${p.member} ${p.done}/${p.total}`) });
    expect(summary.blobs).toEqual({ written: 1, present: 0, bytesWritten: 3000 });
    expect(progress).toEqual([
      `verify blobs/${blob!.name} 1/2`,
      `verify ${withBlobs.summary.sessions[0]!.member} 2/2`,
      `write blobs/${blob!.name} 1/2`,
      `write ${path} 2/2`,
    ]);
    expect(sha256((await target.storage.read(`blobs/${blob!.name}`))!)).toBe(blob!.name);

    const without = await exportToBytes(origin.storage, [path], { includeBlobs: false });
    expect(without.summary.blobs).toEqual({ count: 0, bytes: 0 });
    expect((await zipMembers(without.bytes)).map((m) => m.name)).toEqual(["manifest.json", `sessions/${without.summary.sessions[0]!.id}.jsonl`]);
    expect((await verifyArchive(without.bytes)).blobsNotInArchive).toEqual([blob!.name]);
    const bare = await store();
    const imported = await importArchive(bare.storage, without.bytes, OWN_STORE);
    expect(imported.missingBlobs).toEqual([blob!.name]);
    expect(imported.warnings).toEqual([`blob ${blob!.name} is referenced but neither in the import nor in the store`]);
    // Into a store that has the blob already, nothing is missing.
    expect((await importArchive(target.storage, without.bytes, OWN_STORE)).missingBlobs).toEqual([]);
  });
});

describe("branches", () => {
  it("exports one branch root → leaf with its labels re-emitted, as createBranchedSession does", async () => {
    const origin = await store();
    const sm = await SessionManager.create(origin.storage, CWD, { deferUntilAssistant: false });
    const a = sm.appendMessage(user("a"));
    const b = sm.appendMessage(assistant("b"));
    sm.appendMessage(user("c"));
    sm.appendLabelChange(b, "important");
    sm.branch(b);
    const d = sm.appendMessage(user("d"));
    sm.appendLabelChange(a, "start");
    const path = sm.getSessionFile()!;
    const originalId = sm.getSessionId();
    sm.branch(d);
    const expectedContext = sm.buildSessionContext();
    await sm.close();

    const first = await exportToBytes(origin.storage, [{ path, leafId: d }]);
    const second = await exportToBytes(origin.storage, [{ path, leafId: d }]);
    const member = (m: Uint8Array) => zipMembers(m).then((ms) => ms.find((x) => x.name.startsWith("sessions/"))!);
    expect(sha256((await member(first.bytes)).data)).toBe(sha256((await member(second.bytes)).data));
    expect(first.summary.sessions[0]).toMatchObject({ originalPath: path, leafId: d, entries: 5 });

    const target = await store();
    const imported = (await importArchive(target.storage, first.bytes)).sessions[0]!;
    expect(imported.action).toBe("created");
    const branch = await SessionManager.open(target.storage, imported.path, { readOnly: true });
    expect(branch.getHeader()).toMatchObject({ parentSession: path, cwd: CWD });
    expect(branch.getHeader()!.id).not.toBe(originalId);
    const entries = branch.getEntries();
    expect(entries.slice(0, 3).map((e) => e.id)).toEqual([a, b, d]);
    expect(entries.slice(3).map((e) => [e.type, e.targetId, e.label])).toEqual([
      ["label", b, "important"],
      ["label", a, "start"],
    ]);
    expect(branch.getLabel(a)).toBe("start");
    expect(branch.getLabel(b)).toBe("important");
    expect(branch.buildSessionContext()).toEqual(expectedContext);
    await branch.close();
  });

  it("a leaf that is not in the session is an error and the sink is aborted", async () => {
    const origin = await store();
    const path = await createSession(origin.storage, 1);
    const { sink, aborted, closed } = memorySink();
    const error = await exportArchive(origin.storage, [{ path, leafId: "nope" }], sink).catch((e) => e);
    expect(error).toBeInstanceOf(ArchiveError);
    expect(error).toMatchObject({ code: "not-found", member: path });
    expect(aborted()).toBe(error);
    expect(closed()).toBe(false);
  });
});

describe("plain files", () => {
  it("a v1 file that grew extends its earlier import, in one batch or two", async () => {
    const bytes = await readFile(join(CORPUS_DIR, "badlogic__pi-mono/large-session.jsonl"));
    const lines = bytes.toString("utf8").split("\n");
    const prefix = Buffer.from(lines.slice(0, 40).join("\n") + "\n");
    const target = await store();
    const first = await importSessionFiles(target.storage, [{ name: "early.jsonl", bytes: prefix }]);
    expect(first.sessions[0]).toMatchObject({ action: "created", entries: 39 });
    const second = await importSessionFiles(target.storage, [{ name: "late.jsonl", bytes }]);
    expect(second.sessions[0]).toMatchObject({ action: "extended", path: first.sessions[0]!.path, newEntries: second.sessions[0]!.entries - 39 });

    const batch = await store();
    const both = await importSessionFiles(batch.storage, [
      { name: "early.jsonl", bytes: prefix },
      { name: "late.jsonl", bytes },
    ]);
    expect(both.sessions.map((s) => s.action)).toEqual(["created", "extended"]);
    expect(sha256((await batch.storage.read(both.sessions[0]!.path))!)).toBe(sha256((await target.storage.read(first.sessions[0]!.path))!));
  });

  it("a line that is not JSON fails the batch, naming the file and line, and nothing is written", async () => {
    const target = await store();
    const good = await readFile(join(CORPUS_DIR, "jazzyalex__agent-sessions/small.jsonl"));
    const lines = good.toString("utf8").split("\n");
    lines.splice(2, 0, "{not json");
    const error = await importSessionFiles(target.storage, [
      { name: "good.jsonl", bytes: good },
      { name: "bad.jsonl", bytes: Buffer.from(lines.join("\n")) },
    ]).catch((e) => e);
    expect(error).toBeInstanceOf(ArchiveError);
    expect(error).toMatchObject({ code: "bad-session", member: "bad.jsonl" });
    expect(error.message).toMatch(/^bad\.jsonl: line 3: not JSON/);
    expect(await listing(target.root)).toEqual([]);
  });

  it("a file that is not a session is refused", async () => {
    const target = await store();
    const error = await importSessionFiles(target.storage, [{ name: "notes.jsonl", bytes: Buffer.from('{"type":"message","id":"x"}\n') }]).catch((e) => e);
    expect(error).toMatchObject({ code: "bad-session", member: "notes.jsonl" });
    expect(error.message).toContain("not a session file");
  });
});

describe("export from a live store", () => {
  it("a session appended to between the two passes is exported as first seen", async () => {
    const origin = await store();
    const first = await createSession(origin.storage, 1);
    const second = await createSession(origin.storage, 1);
    const seen = (await origin.storage.read(second))!;
    let appended = false;
    const live: StoragePort = {
      ...origin.storage,
      kind: origin.storage.kind,
      // The second pass reads a range: the session grows just before it.
      read: async (path, range) => {
        if (path === second && range !== undefined && !appended) {
          appended = true;
          await origin.storage.append(second, new TextEncoder().encode(JSON.stringify({ type: "custom", customType: "late", id: "late0001", parentId: null, timestamp: new Date().toISOString() }) + "\n"));
        }
        return origin.storage.read(path, range);
      },
    };
    const progress: string[] = [];
    const { bytes, summary } = await exportToBytes(live, [first, second], { onProgress: (p) => progress.push(`${p.phase} ${p.done}/${p.total}`) });
    expect(appended).toBe(true);
    expect(progress).toEqual(["prepare 1/2", "prepare 2/2", "export 1/2", "export 2/2"]);
    expect(summary.sessions.map((s) => s.entries)).toEqual([2, 2]);
    const member = (await zipMembers(bytes)).find((m) => m.name === summary.sessions[1]!.member)!;
    expect(sha256(member.data)).toBe(sha256(seen));
  });

  it("a session rewritten between the two passes fails the export and aborts the sink", async () => {
    const origin = await store();
    const first = await createSession(origin.storage, 1);
    const second = await createSession(origin.storage, 1);
    const rewritten = memorySink();
    const live: StoragePort = {
      ...origin.storage,
      kind: origin.storage.kind,
      read: async (path, range) => {
        const bytes = await origin.storage.read(path, range);
        return path === second && range !== undefined && bytes ? bytes.map((b, i) => (i === 60 ? b ^ 1 : b)) : bytes;
      },
    };
    const error = await exportArchive(live, [first, second], rewritten.sink).catch((e) => e);
    expect(error).toBeInstanceOf(ArchiveError);
    expect(error).toMatchObject({ code: "changed-during-export", member: second });
    expect(rewritten.aborted()).toBe(error);
    expect(rewritten.closed()).toBe(false);
  });
});

describe("export failures", () => {
  it("a sink that fails mid-archive fails the export (it does not hang)", async () => {
    const origin = await store();
    const path = await createSession(origin.storage, 3, noise(200_000, 5));
    let written = 0;
    const full = new WritableStream<Uint8Array>({
      write(chunk) {
        written += chunk.length;
        if (written > 100_000) throw new Error("no space left on device");
      },
    });
    await expect(exportArchive(origin.storage, [path], full)).rejects.toThrow("no space left on device");
  });

  it("a path that is not a session is refused before the sink is touched", async () => {
    const origin = await store();
    await origin.storage.write("notes/todo.jsonl", new TextEncoder().encode('{"todo":1}\n'));
    const { sink, aborted } = memorySink();
    const error = await exportArchive(origin.storage, ["notes/todo.jsonl", "sessions/none.jsonl"], sink).catch((e) => e);
    expect(error).toMatchObject({ code: "bad-session", member: "notes/todo.jsonl" });
    expect(aborted()).toBe(error);
    const missing = await exportArchive(origin.storage, ["sessions/none.jsonl"], memorySink().sink).catch((e) => e);
    expect(missing).toMatchObject({ code: "not-found", member: "sessions/none.jsonl" });
  });
});

describe("commit failures", () => {
  it("storage failing mid-import undoes every write of the import", async () => {
    const origin = await store();
    const extended = await createSession(origin.storage, 1);
    const shorter = await exportToBytes(origin.storage, [extended]);
    await appendTurn(origin.storage, extended, "more");
    const created = await createSession(origin.storage, 2, noise(5000, 3));
    const full = await exportToBytes(origin.storage, [extended, created]);

    const target = await store();
    await importArchive(target.storage, shorter.bytes, OWN_STORE);
    const before = await listing(target.root);
    // The blob is written and the stored session appended to; then the new session's write fails.
    const calls: string[] = [];
    const failing: StoragePort = {
      ...target.storage,
      kind: target.storage.kind,
      append: async (path, data) => {
        calls.push(`append ${path}`);
        return target.storage.append(path, data);
      },
      writeFiles: async (files) => {
        calls.push(...files.map((file) => `writeFiles ${file.path}`));
        return target.storage.writeFiles(files);
      },
      write: async (path, data) => {
        calls.push(`write ${path}`);
        if (path.endsWith(".jsonl")) throw new StorageError("quota", "disk full", { path });
        return target.storage.write(path, data);
      },
    };
    const error = await importArchive(failing, full.bytes, OWN_STORE).catch((e) => e);
    expect(calls.map((c) => c.split(" ")[0])).toEqual(["writeFiles", "append", "write"]);
    expect(calls[0]).toMatch(/^writeFiles blobs\/[0-9a-f]{64}$/);
    expect(calls[1]).toBe(`append ${extended}`);
    expect(error).toBeInstanceOf(ArchiveError);
    expect(error).toMatchObject({ code: "write-failed", member: created });
    expect(error.message).toContain("disk full");
    expect(error.message).toContain("every change of this import was undone");
    expect(await listing(target.root)).toEqual(before);
    // The same import on healthy storage then succeeds.
    const summary = await importArchive(target.storage, full.bytes, OWN_STORE);
    expect(summary.sessions.map((s) => s.action)).toEqual(["extended", "created"]);
  });

  it("a session open for writing elsewhere is not appended to", async () => {
    const origin = await store();
    const path = await createSession(origin.storage, 1);
    const shorter = await exportToBytes(origin.storage, [path]);
    await appendTurn(origin.storage, path, "more");
    const longer = await exportToBytes(origin.storage, [path]);
    const target = await store();
    await importArchive(target.storage, shorter.bytes);
    const writer = await SessionManager.open(target.storage, path);
    const before = await listing(target.root);
    const error = await importArchive(target.storage, longer.bytes).catch((e) => e);
    expect(error).toMatchObject({ code: "conflict", member: path });
    expect(await listing(target.root)).toEqual(before);
    await writer.close();
    expect((await importArchive(target.storage, longer.bytes)).sessions[0]!.action).toBe("extended");
  });
});
