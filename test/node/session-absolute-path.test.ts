/**
 * SessionManager takes the absolute file paths pi's API takes and `sessionkit ls --json` prints,
 * when they lie inside the storage root (StoragePort.root); any other absolute path fails with an
 * error saying storage paths are relative to that root.
 */
import { mkdtemp, rm } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { memoryStorage } from "../../adapters/memory/index.js";
import { nodeFsStorage, type NodeFsStorage } from "../../adapters/node-fs/index.js";
import { SessionManager, StorageError, type StoragePort } from "../../src/index.js";

const usage = { input: 0, output: 0, cacheRead: 0, cacheWrite: 0, totalTokens: 0, cost: { input: 0, output: 0, cacheRead: 0, cacheWrite: 0, total: 0 } };

let dir: string;
let storage: NodeFsStorage;
/** The session's storage path, and its file as `ls --json` prints it. */
let path: string;
let file: string;

async function write(port: StoragePort, cwd: string): Promise<string> {
  const sm = await SessionManager.create(port, cwd);
  sm.appendMessage({ role: "user", content: "where is the config read?", timestamp: Date.now() });
  sm.appendMessage({ role: "assistant", content: [{ type: "text", text: "in src/config.ts" }], api: "x", provider: "x", model: "x", usage, stopReason: "stop", timestamp: Date.now() });
  await sm.close();
  return sm.getSessionFile()!;
}

beforeAll(async () => {
  dir = await mkdtemp(join(tmpdir(), "sk-absolute-path-"));
  storage = nodeFsStorage({ root: join(dir, "agent") });
  path = await write(storage, "/work/app");
  file = join(storage.root, ...path.split("/"));
});

afterAll(async () => {
  await storage.close();
  await rm(dir, { recursive: true, force: true });
});

/** The StorageError a call rejects with. */
async function storageErrorOf(call: Promise<unknown>): Promise<StorageError> {
  const error = await call.then(
    () => undefined,
    (reason: unknown) => reason,
  );
  expect(error).toBeInstanceOf(StorageError);
  return error as StorageError;
}

describe("SessionManager and absolute paths", () => {
  it("open takes the absolute path ls --json prints, inside the root, as its storage path", async () => {
    const [listed] = await SessionManager.listAll(storage);
    expect(join(storage.root, listed!.path)).toBe(file);
    const byAbsolute = await SessionManager.open(storage, file, { readOnly: true });
    const byRelative = await SessionManager.open(storage, path, { readOnly: true });
    expect(byAbsolute.getSessionFile()).toBe(path);
    expect(byAbsolute.getEntries()).toEqual(byRelative.getEntries());
    // "." and ".." are resolved first: this names the same file.
    expect((await SessionManager.open(storage, `${storage.root}/sessions/./../${path}`, { readOnly: true })).getSessionFile()).toBe(path);
  });

  it("forkFrom and setSessionFile take one too", async () => {
    const fork = await SessionManager.forkFrom(storage, file, "/work/other");
    expect(fork.getHeader()!.parentSession).toBe(path);
    expect(fork.getEntries().map((entry) => entry.id)).toEqual((await SessionManager.open(storage, path, { readOnly: true })).getEntries().map((entry) => entry.id));
    await fork.close();
    const sm = await SessionManager.open(storage, fork.getSessionFile()!, { readOnly: true });
    await sm.setSessionFile(file);
    expect(sm.getSessionFile()).toBe(path);
  });

  it("an absolute path outside the root fails with StorageError \"invalid\" naming the root", async () => {
    for (const outside of [join(dir, "elsewhere.jsonl"), `${storage.root}/../agent-copy/${path}`, `${storage.root}-old/${path}`, storage.root]) {
      const error = await storageErrorOf(SessionManager.open(storage, outside, { readOnly: true }));
      expect(error.code).toBe("invalid");
      expect(error.message).toBe(`${JSON.stringify(outside)} is not inside the storage root ${storage.root}: storage paths are relative to it (such as "sessions/<dir>/<file>.jsonl")`);
    }
  });

  it("a port without a root (memory, IndexedDB, a database) says that storage paths are relative to the storage root", async () => {
    const memory = memoryStorage();
    const error = await storageErrorOf(SessionManager.open(memory, "/home/me/.pi/agent/sessions/x.jsonl"));
    expect(error.code).toBe("invalid");
    expect(error.message).toBe(`"/home/me/.pi/agent/sessions/x.jsonl" is an absolute path: storage paths are relative to the storage root (such as "sessions/<dir>/<file>.jsonl")`);
  });

  it("a Windows root takes paths with either separator and any case of drive letter", async () => {
    const windows: StoragePort = { ...memoryStorage(), root: "C:\\Users\\me\\.pi\\agent" };
    const stored = await write(windows, "C:\\work\\app");
    const backslashes = `c:\\Users\\me\\.pi\\agent\\${stored.split("/").join("\\")}`;
    expect((await SessionManager.open(windows, backslashes, { readOnly: true })).getSessionFile()).toBe(stored);
    expect((await SessionManager.open(windows, `C:/Users/me/.pi/agent/${stored}`, { readOnly: true })).getSessionFile()).toBe(stored);
    const error = await storageErrorOf(SessionManager.open(windows, "D:\\Users\\me\\.pi\\agent\\x.jsonl"));
    expect(error.message).toContain("is not inside the storage root C:\\Users\\me\\.pi\\agent");
  });
});
