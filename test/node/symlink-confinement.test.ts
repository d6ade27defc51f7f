/**
 * Symbolic links below a node-fs root are never followed: every port operation through a link to
 * a file or a directory outside the root (or elsewhere inside it) is refused with "forbidden",
 * names only the storage path, and changes nothing outside. The same attack through
 * `sessionkit serve` (read-only and --write, HTTP and rpc) and the Electron bridge, which serve
 * node-fs ports. Real temp dirs, real links, real servers.
 */
import { lstat, mkdir, mkdtemp, readdir, readFile, readlink, rm, symlink, writeFile } from "node:fs/promises";
import { request as httpRequest } from "node:http";
import { tmpdir } from "node:os";
import { dirname, join, relative } from "node:path";
import { afterAll, describe, expect, it } from "vitest";
import { electronStorage } from "../../adapters/electron/renderer.js";
import { exposeStorageBridge } from "../../adapters/electron/preload.js";
import type { StorageBridge } from "../../adapters/electron/types.js";
import { nodeFsStorage } from "../../adapters/node-fs/index.js";
import { encodeFrame } from "../../adapters/rpc/frame.js";
import { RPC_PROTOCOL } from "../../adapters/rpc/protocol.js";
import { StorageError, type StoragePort } from "../../src/port.js";
import { removeBundles, startElectronMain, type ElectronMain } from "./electron/harness.js";
import { rendererIpc } from "./electron/renderer-ipc.js";
import { serveTempStore, type ServedStore } from "./serve-helpers.js";

const OUTSIDE_SECRET = "outside-secret-sk-do-not-leak";
const OUTSIDE_LINE = '{"type":"outside-line"}\n';
const AUTH_SECRET = '{"apiKey":"sk-auth-do-not-leak"}';
const SESSION = '{"type":"session","version":3,"id":"s","timestamp":"2026-01-01T00:00:00.000Z","cwd":"/p"}\n';

const cleanups: (() => Promise<void>)[] = [];
afterAll(async () => {
  for (const cleanup of cleanups.reverse()) await cleanup();
});

async function tempDir(prefix: string): Promise<string> {
  const dir = await mkdtemp(join(tmpdir(), prefix));
  cleanups.push(() => rm(dir, { recursive: true, force: true }));
  return dir;
}

/** A link at `root/<at>` to `target`, written relative to the link's directory when `relativeTarget`. */
async function link(root: string, at: string, target: string, relativeTarget = false): Promise<void> {
  const file = join(root, ...at.split("/"));
  await symlink(relativeTarget ? relative(dirname(file), target) : target, file);
}

/**
 * A store at `root` (a session, an `auth.json` beside sessions/) and links in it: to a file and a
 * directory outside, to `auth.json`, to the session and its directory, dangling ones to where a
 * file or a directory outside would be created, and a lock file that is a link.
 */
async function plantLinks(root: string, outside: string): Promise<void> {
  await mkdir(join(outside, "dir"), { recursive: true });
  await writeFile(join(outside, "secret.json"), OUTSIDE_SECRET);
  await writeFile(join(outside, "dir", "inner.jsonl"), OUTSIDE_LINE);
  await mkdir(join(root, "sessions", "--p--"), { recursive: true });
  await writeFile(join(root, "sessions", "--p--", "s.jsonl"), SESSION);
  await writeFile(join(root, "auth.json"), AUTH_SECRET);
  await link(root, "sessions/file-link", join(outside, "secret.json"), true);
  await link(root, "sessions/dir-link", join(outside, "dir"));
  await link(root, "sessions/auth-link", join(root, "auth.json"), true);
  await link(root, "sessions/inside-link", join(root, "sessions", "--p--", "s.jsonl"), true);
  await link(root, "sessions/inside-dir-link", join(root, "sessions", "--p--"), true);
  await link(root, "sessions/dangling-link", join(outside, "created-through-link.jsonl"));
  await link(root, "sessions/dangling-dir-link", join(outside, "created-dir"));
  await link(root, "sessions/planted.jsonl.lock", join(outside, "secret.json"));
}

/** Every file below `dir` with its bytes, and every link with its target: what must not change. */
async function snapshot(dir: string): Promise<string> {
  const entries = (await readdir(dir, { recursive: true })).sort();
  const parts = await Promise.all(
    entries.map(async (entry) => {
      const full = join(dir, entry);
      const info = await lstat(full);
      if (info.isSymbolicLink()) return `${entry} -> ${await readlink(full)}`;
      return info.isDirectory() ? `${entry}/` : `${entry}: ${(await readFile(full)).toString("base64")}`;
    }),
  );
  return parts.join("\n");
}

/** Links to files: outside, to auth.json, to the session, dangling. */
const FILE_LINKS = ["sessions/file-link", "sessions/auth-link", "sessions/inside-link", "sessions/dangling-link"];
/** Files in linked directories, there or not. */
const IN_LINKED_DIRS = ["sessions/dir-link/inner.jsonl", "sessions/dir-link/new.jsonl", "sessions/dir-link/deeper/new.jsonl", "sessions/inside-dir-link/s.jsonl", "sessions/dangling-dir-link/new.jsonl"];
const THROUGH_LINKS = [...FILE_LINKS, ...IN_LINKED_DIRS];
/** Directories that are links, or below one. */
const LINKED_DIRS = ["sessions/dir-link", "sessions/dir-link/deeper", "sessions/inside-dir-link", "sessions/dangling-dir-link"];

type Attack = [name: string, path: string, run: () => Promise<unknown>];

/**
 * Every port operation on every path through a link; `operations` limits them (a read-only
 * server). A lock's file is `<key>.lock`: it goes through a link for keys in linked directories,
 * and for a key whose lock file was planted as a link.
 */
function attacks(port: StoragePort, operations: "all" | "reads" = "all"): Attack[] {
  const bytes = new TextEncoder().encode('{"type":"planted"}\n');
  const list: Attack[] = [];
  for (const path of THROUGH_LINKS) {
    list.push([`read ${path}`, path, () => port.read(path)], [`stat ${path}`, path, () => port.stat(path)]);
    if (operations === "reads") continue;
    list.push(
      [`append ${path}`, path, () => port.append(path, bytes)],
      [`write ${path}`, path, () => port.write(path, bytes)],
      [`truncate ${path}`, path, () => port.truncate(path, 0)],
      [`remove ${path}`, path, () => port.remove(path)],
      [`sync ${path}`, path, () => port.sync!(path)],
    );
    if (IN_LINKED_DIRS.includes(path)) list.push([`acquireLock ${path}`, path, async () => (await port.acquireLock!(path)).release()]);
  }
  for (const dir of LINKED_DIRS) {
    list.push([`list ${dir}`, dir, () => port.list(dir)], [`watch ${dir}`, dir, async () => (await port.watch!(dir, () => {})).close()]);
  }
  if (operations === "all") list.push(["acquireLock sessions/planted.jsonl (its lock file is a link)", "sessions/planted.jsonl", async () => (await port.acquireLock!("sessions/planted.jsonl")).release()]);
  return list;
}

/**
 * Runs every attack: each must reject with StorageError "forbidden" naming its storage path, no
 * absolute host path in its message (`hostDirs`).
 */
async function expectAllRefused(list: Attack[], hostDirs: string[]): Promise<void> {
  const outcomes: Record<string, string> = {};
  for (const [name, path, run] of list) {
    outcomes[name] = await run().then(
      (value) => `resolved ${JSON.stringify(value instanceof Uint8Array ? new TextDecoder().decode(value) : value)}`,
      (error: unknown) => {
        if (!(error instanceof StorageError)) return `threw ${String(error)}`;
        const leaks = hostDirs.filter((dir) => error.message.includes(dir));
        if (leaks.length > 0) return `${error.code}, message with a host path: ${error.message}`;
        if (!error.message.includes(JSON.stringify(path))) return `${error.code}, message without the path: ${error.message}`;
        return error.code;
      },
    );
  }
  expect(outcomes).toEqual(Object.fromEntries(list.map(([name]) => [name, "forbidden"])));
}

/** Lists `sessions`: the real directory only, no link (they are not followed, so not listed). */
async function expectLinksHidden(port: StoragePort): Promise<void> {
  expect((await port.list("sessions")).map((entry) => entry.name)).toEqual(["--p--"]);
}

describe("node-fs never follows a symbolic link below its root", () => {
  async function world() {
    const dir = await tempDir("sessionkit-links-");
    const root = join(dir, "store");
    const outside = join(dir, "outside");
    await plantLinks(root, outside);
    return { dir, root, outside, before: { outside: await snapshot(outside), root: await snapshot(root) } };
  }

  it("refuses every operation through a link to a file or a directory, outside the root or inside it; nothing changes anywhere", async () => {
    const { dir, root, outside, before } = await world();
    const port = nodeFsStorage({ root });
    await expectAllRefused(attacks(port), [dir]);
    await port.close();
    expect(await snapshot(outside)).toBe(before.outside);
    expect(await snapshot(root)).toBe(before.root);
  });

  it("lists no link, and serves the files and directories that are not links as before", async () => {
    const { root } = await world();
    const port = nodeFsStorage({ root });
    await expectLinksHidden(port);
    expect(new TextDecoder().decode((await port.read("sessions/--p--/s.jsonl"))!)).toBe(SESSION);
    await port.append("sessions/--p--/s.jsonl", new TextEncoder().encode("x\n"));
    await port.write("sessions/--q--/new.jsonl", new TextEncoder().encode("y\n"));
    expect((await port.stat("sessions/--p--/s.jsonl"))?.size).toBe(SESSION.length + 2);
    expect(await port.read("sessions/--q--/new.jsonl")).toEqual(new TextEncoder().encode("y\n"));
    expect(await port.read("sessions/missing-dir/x.jsonl")).toBeNull();
    expect(await port.list("sessions/missing-dir")).toEqual([]);
    const lock = await port.acquireLock("sessions/--p--/s.jsonl");
    await lock.release();
    await port.close();
  });

  it("a root that is itself a link (or below one) is resolved once and works", async () => {
    const { dir, root } = await world();
    await symlink(root, join(dir, "store-link"));
    const port = nodeFsStorage({ root: join(dir, "store-link") });
    expect(new TextDecoder().decode((await port.read("sessions/--p--/s.jsonl"))!)).toBe(SESSION);
    await expectLinksHidden(port);
    await port.append("sessions/--p--/s.jsonl", new TextEncoder().encode("x\n"));
    expect((await port.stat("sessions/--p--/s.jsonl"))?.size).toBe(SESSION.length + 2);
    await expectStorageCode(port.read("sessions/dir-link/inner.jsonl"), "forbidden");
    await port.close();
  });

  for (const watchMode of ["auto", "poll"] as const) {
    it(`watch (${watchMode}) does not report through a link to a directory made while it watches`, async () => {
      const { root, outside } = await world();
      const port = nodeFsStorage({ root, watchMode, pollIntervalMs: 50 });
      const seen: string[] = [];
      const watch = await port.watch("sessions", (path) => seen.push(path));
      await link(root, "sessions/late-link", join(outside, "dir"));
      await new Promise((resolve) => setTimeout(resolve, 200)); // a watcher following the link would be on it now
      await writeFile(join(outside, "dir", "made-outside.jsonl"), OUTSIDE_LINE);
      await new Promise((resolve) => setTimeout(resolve, 200));
      await writeFile(join(root, "sessions", "--p--", "made-inside.jsonl"), SESSION); // as another process would
      while (!seen.includes("sessions/--p--/made-inside.jsonl")) await new Promise((resolve) => setTimeout(resolve, 20));
      await new Promise((resolve) => setTimeout(resolve, 200));
      await watch.close();
      await port.close();
      expect(seen.filter((path) => path.startsWith("sessions/late-link/"))).toEqual([]);
    });
  }
});

async function expectStorageCode(promise: Promise<unknown>, code: string): Promise<void> {
  await expect(promise).rejects.toMatchObject({ name: "StorageError", code });
}

describe("sessionkit serve: the same links, over HTTP and the rpc", () => {
  interface Reply {
    status: number;
    body: string;
  }
  function send(served: ServedStore, method: string, path: string, body?: Uint8Array): Promise<Reply> {
    const withToken = `${path}${path.includes("?") ? "&" : "?"}token=${served.server.token}`;
    return new Promise((resolve, reject) => {
      const request = httpRequest({ host: "127.0.0.1", port: served.server.port, method, path: withToken }, (response) => {
        const parts: Buffer[] = [];
        response.on("data", (part: Buffer) => parts.push(part));
        response.on("end", () => resolve({ status: response.statusCode ?? 0, body: Buffer.concat(parts).toString("latin1") }));
        response.on("error", reject);
      });
      request.on("error", reject);
      if (body) request.write(body);
      request.end();
    });
  }
  const rpcCall = (op: Record<string, unknown>) => encodeFrame({ protocol: RPC_PROTOCOL, id: 1, call: op });

  async function served(write: boolean) {
    const server = await serveTempStore(write ? { write: true } : {});
    cleanups.push(() => server.cleanup());
    const outside = await tempDir("sessionkit-links-outside-");
    await plantLinks(server.root, outside);
    return { server, outside, before: { outside: await snapshot(outside), root: await snapshot(server.root) } };
  }

  function expectNoSecret(reply: Reply, what: string) {
    for (const secret of [OUTSIDE_SECRET, OUTSIDE_LINE.trim(), "sk-auth-do-not-leak"]) expect(reply.body, what).not.toContain(secret);
  }

  it("read-only: GET …/files/<link>, rpc reads and lists over POST and the WebSocket are refused (403 'forbidden'); nothing read, nothing changed", async () => {
    const { server, outside, before } = await served(false);
    for (const path of THROUGH_LINKS) {
      const reply = await send(server, "GET", `/api/stores/${server.store}/files/${path}`);
      expect(reply.status, path).toBe(403);
      expectNoSecret(reply, path);
      for (const op of [{ op: "read", path, maxBytes: 1 << 20 }, { op: "stat", path }]) {
        const answer = await send(server, "POST", `/api/stores/${server.store}/rpc`, rpcCall(op));
        expect(answer.status, `${op.op} ${path}`).toBe(403);
        expect(answer.body).toContain("forbidden");
        expectNoSecret(answer, `${op.op} ${path}`);
      }
    }
    for (const dir of LINKED_DIRS) {
      const answer = await send(server, "POST", `/api/stores/${server.store}/rpc`, rpcCall({ op: "list", dir }));
      expect(answer.status, dir).toBe(403);
      expect(answer.body, dir).not.toContain("inner.jsonl");
      const changes = await send(server, "GET", `/api/stores/${server.store}/changes?dir=${encodeURIComponent(dir)}`);
      expect(changes.status, `changes ${dir}`).toBe(403);
    }
    const client = server.client();
    await expectAllRefused(attacks(client, "reads"), [server.root, outside, tmpdir()]);
    await expectLinksHidden(client);
    expect(await snapshot(outside)).toBe(before.outside);
    expect(await snapshot(server.root)).toBe(before.root);
  });

  it("--write: every operation through a link, over the WebSocket rpc and POST, is refused with 'forbidden'; nothing outside changes", async () => {
    const { server, outside, before } = await served(true);
    const client = server.client();
    await expectAllRefused(attacks(client), [server.root, outside, tmpdir()]);
    const data = new TextEncoder().encode('{"type":"planted"}\n');
    for (const path of THROUGH_LINKS) {
      for (const op of [
        { op: "append", path, content: { kind: "inline", data } },
        { op: "write", path, content: { kind: "inline", data } },
        { op: "truncate", path, size: 0 },
        { op: "remove", path },
      ]) {
        const answer = await send(server, "POST", `/api/stores/${server.store}/rpc`, rpcCall(op));
        expect(answer.status, `${op.op} ${path}`).toBe(403);
        expect(answer.body, `${op.op} ${path}`).toContain("forbidden");
      }
    }
    expect(await snapshot(outside)).toBe(before.outside);
    expect(await snapshot(server.root)).toBe(before.root);
    // The store itself still works.
    await client.append("sessions/--p--/s.jsonl", data);
    expect(new TextDecoder().decode((await client.read("sessions/--p--/s.jsonl"))!)).toBe(SESSION + new TextDecoder().decode(data));
  });
});

describe("the Electron bridge (main in a worker thread): the same links", () => {
  it("every operation through a link is refused with 'forbidden' across the bridge; links are not listed; nothing outside changes", async () => {
    const main: ElectronMain = await startElectronMain({ writable: ["sessions"] }); // writes opted in, so each is refused for its link, not as read-only
    cleanups.push(async () => {
      await main.stop();
      await removeBundles();
    });
    const outside = await tempDir("sessionkit-links-outside-");
    await plantLinks(main.root, outside);
    const before = { outside: await snapshot(outside), root: await snapshot(main.root) };
    const { port } = await main.newRenderer();
    const { ipcRenderer, contextBridge, window } = rendererIpc(port);
    exposeStorageBridge(contextBridge, ipcRenderer);
    const storage = electronStorage({ bridge: window.sessionkitStorage as StorageBridge });
    await expectAllRefused(attacks(storage), [main.root, outside, tmpdir()]);
    await expectLinksHidden(storage);
    expect(await snapshot(outside)).toBe(before.outside);
    expect(await snapshot(main.root)).toBe(before.root);
    await storage.close();
  });
});
