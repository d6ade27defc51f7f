/**
 * mountedStorage: the conformance suite on a base with a mount (the suite's paths go to the base),
 * and the routing itself on real files: what is below a mount point lives in the mounted port,
 * listings show the mount, locks and syncs follow the path. Last, what the CLI uses it for: a
 * listing of a store whose folder refuses every write keeps its catalog in the mounted cache.
 */
import { mkdtemp, readdir, rm } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterEach, beforeEach, describe, expect, it } from "vitest";
import { memoryStorage } from "../../adapters/memory/index.js";
import { mountedStorage } from "../../adapters/mounted.js";
import { nodeFsStorage, type NodeFsStorage } from "../../adapters/node-fs/index.js";
import { CATALOG_DIR } from "../../src/session/listing.js";
import { SessionManager, StorageError, type StoragePort } from "../../src/index.js";
import { describePortConformance, expectStorageError } from "../../src/testing/index.js";
import { assistantMsg, userMsg } from "../shared/messages.js";

const text = (value: string) => new TextEncoder().encode(value);

describePortConformance("mounted (memory base, memory mount at .sessionkit)", async () => ({ port: mountedStorage(memoryStorage(), { ".sessionkit": memoryStorage() }) }));

describe("mountedStorage routing", () => {
  let dir: string;
  let base: NodeFsStorage;
  let cache: NodeFsStorage;

  beforeEach(async () => {
    dir = await mkdtemp(join(tmpdir(), "sessionkit-mounted-"));
    base = nodeFsStorage({ root: join(dir, "store") });
    cache = nodeFsStorage({ root: join(dir, "cache") });
  });
  afterEach(async () => {
    await rm(dir, { recursive: true, force: true });
  });

  it("paths below the mount point live in the mounted port, without the mount point; the rest in the base", async () => {
    const port = mountedStorage(base, { ".sessionkit": cache });
    await port.write(".sessionkit/catalog/x.json", text("cached"));
    await port.append("sessions/--a--/s.jsonl", text("line\n"));
    expect(await readdir(join(dir, "cache/catalog"))).toEqual(["x.json"]);
    expect(await readdir(join(dir, "store"))).toEqual(["sessions"]);
    expect(await port.read(".sessionkit/catalog/x.json")).toEqual(text("cached"));
    expect(await port.stat(".sessionkit/catalog/x.json")).toMatchObject({ size: 6 });
    expect((await port.list(".sessionkit")).map((e) => [e.name, e.kind])).toEqual([["catalog", "dir"]]);
    expect((await port.list("")).map((e) => [e.name, e.kind])).toEqual([
      [".sessionkit", "dir"],
      ["sessions", "dir"],
    ]);
    await port.truncate(".sessionkit/catalog/x.json", 3);
    expect(await cache.read("catalog/x.json")).toEqual(text("cac"));
    await port.remove(".sessionkit/catalog/x.json");
    expect(await cache.stat("catalog/x.json")).toBeNull();
    // A base entry of the mount's name is hidden by the mount.
    await base.write(".sessionkit/old-catalog.json", text("in the store"));
    expect(await port.read(".sessionkit/old-catalog.json")).toBeNull();
    expect((await port.list(".sessionkit")).map((e) => e.name)).toEqual(["catalog"]);
  });

  it("an empty mount is not listed in its parent", async () => {
    const port = mountedStorage(memoryStorage(), { ".sessionkit": memoryStorage() });
    await port.write("sessions/a.jsonl", text("x"));
    expect((await port.list("")).map((e) => e.name)).toEqual(["sessions"]);
    await port.write(".sessionkit/c", text("x"));
    expect((await port.list("")).map((e) => e.name)).toEqual([".sessionkit", "sessions"]);
    await port.remove(".sessionkit/c");
    expect((await port.list("")).map((e) => e.name)).toEqual(["sessions"]);
  });

  it("the mount point itself is a directory, not a file; invalid paths are refused as everywhere", async () => {
    const port = mountedStorage(base, { ".sessionkit": cache });
    await expectStorageError(port.write(".sessionkit", text("x")), "invalid");
    await expectStorageError(port.read("../x"), "invalid");
    expect(() => mountedStorage(base, { "/abs": cache })).toThrow(StorageError);
  });

  it("locks and syncs follow the path; a nested mount wins over its parent", async () => {
    const inner = memoryStorage();
    const port = mountedStorage(base, { ".sessionkit": cache, ".sessionkit/deep": inner });
    const lock = await port.acquireLock!(".sessionkit/catalog/x.json");
    await expectStorageError(cache.acquireLock("catalog/x.json"), "locked");
    await lock.release();
    await port.write(".sessionkit/deep/y", text("y"));
    expect(await inner.read("y")).toEqual(text("y"));
    expect(await cache.stat("deep/y")).toBeNull();
    await port.sync!(".sessionkit/deep/y");
    expect((await port.list(".sessionkit")).map((e) => e.name)).toContain("deep");
  });

  it("a mount without locks refuses a lock below it", async () => {
    const lockless: StoragePort = { ...memoryStorage(), acquireLock: undefined };
    const port = mountedStorage(base, { ".sessionkit": lockless });
    await expectStorageError(port.acquireLock!(".sessionkit/x"), "unsupported");
  });

  it("close closes the base and every mount", async () => {
    const closed: string[] = [];
    const tracked = (name: string): StoragePort => ({ ...memoryStorage(), close: async () => void closed.push(name) });
    await mountedStorage(tracked("base"), { a: tracked("a"), b: tracked("b") }).close();
    expect(closed.sort()).toEqual(["a", "b", "base"]);
  });

  it("a store that refuses every write lists, and keeps its catalog in the mounted cache", async () => {
    const writer = nodeFsStorage({ root: join(dir, "store") });
    const sm = await SessionManager.create(writer, "/work/app");
    sm.appendMessage(userMsg("hello"));
    sm.appendMessage(assistantMsg("hi"));
    await sm.close();
    await writer.close();
    const refuse = async (path: string): Promise<never> => {
      throw new StorageError("io", `read-only file system: ${path}`, { path });
    };
    const readOnly: StoragePort = { ...base, append: refuse, write: refuse, truncate: refuse, remove: refuse };
    const port = mountedStorage(readOnly, { ".sessionkit": cache });
    const listed = await SessionManager.listAll(port);
    expect(listed.map((info) => info.firstMessage)).toEqual(["hello"]);
    expect((await cache.list(CATALOG_DIR.slice(".sessionkit/".length))).length).toBe(1);
    expect(await SessionManager.listAll(port)).toEqual(listed);
    // Without the mount the same store lists too, but its catalog cannot be kept: every listing reads every file.
    expect(await SessionManager.listAll(readOnly)).toEqual(listed);
    expect(await base.list(".sessionkit")).toEqual([]);
  });
});
