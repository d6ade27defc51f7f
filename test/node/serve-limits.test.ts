/**
 * `sessionkit serve` against clients that ask for more than a server should hold: the attacks of
 * issue 22 on a real `serve` child process (the CLI bundle), its peak RSS over idle read from
 * /proc (VmHWM, reset before each attack through clear_refs), each figure printed as one line.
 * After each attack the server answers another client. Then the caps one by one
 * (createStorageServer's limits), malformed frames, and error messages that must not name the
 * server's own paths.
 */
import { spawn, type ChildProcess } from "node:child_process";
import { once } from "node:events";
import { readFileSync, writeFileSync } from "node:fs";
import { mkdir, mkdtemp, realpath, rm, symlink, writeFile } from "node:fs/promises";
import { request as httpRequest } from "node:http";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { WebSocket } from "ws";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { memoryStorage } from "../../adapters/memory/index.js";
import { decodeFrame, encodeFrame } from "../../adapters/rpc/frame.js";
import { httpStorage } from "../../adapters/rpc/http.js";
import { MAX_BATCH_REQUESTS, RPC_PROTOCOL } from "../../adapters/rpc/protocol.js";
import { createStorageServer } from "../../adapters/rpc/server.js";
import type { WebSocketLike } from "../../adapters/rpc/websocket.js";
import { DEFAULT_LIMITS } from "../../adapters/server/server.js";
import { startServe } from "../../cli/serve/server.js";
import { StorageError, type StoragePort } from "../../src/port.js";
import { bundleCli } from "../shared/cli-runner.js";

/** The bound: the server's peak RSS under each attack, over its RSS when idle. */
const PEAK_OVER_IDLE_BOUND = 200 << 20;
const MIB = 1 << 20;
const BIG_FILE = "sessions/--p--/big.jsonl";
const BIG_FILE_BYTES = 950_000;

let dir: string;
let bundle: string;
let root: string;

beforeAll(async () => {
  dir = await mkdtemp(join(tmpdir(), "sessionkit-serve-limits-"));
  bundle = await bundleCli(dir);
  root = join(dir, "agent");
  await mkdir(join(root, "sessions", "--p--"), { recursive: true });
  const header = '{"type":"session","version":3,"id":"big","timestamp":"2026-01-01T00:00:00.000Z","cwd":"/p"}\n';
  const line = `${JSON.stringify({ type: "message", id: "x", parentId: null, timestamp: "2026-01-01T00:00:01.000Z", message: { role: "user", content: "y".repeat(900), timestamp: 0 } })}\n`;
  let text = header;
  while (text.length + line.length <= BIG_FILE_BYTES) text += line;
  await writeFile(join(root, BIG_FILE), text.padEnd(BIG_FILE_BYTES, "\n"));
}, 120_000);
afterAll(() => rm(dir, { recursive: true, force: true }));

/** Where a server listens and with which token: a child process, or one in this process. */
interface Served {
  port: number;
  token: string;
  store: string;
}

interface ServeChild extends Served {
  pid: number;
  port: number;
  token: string;
  store: string;
  stop(): Promise<void>;
}

/** `sessionkit serve --root <root> --port 0` as a child process, once it prints its URL. */
async function startServeChild(args: string[] = []): Promise<ServeChild> {
  const child: ChildProcess = spawn(process.execPath, [bundle, "serve", "--root", root, "--port", "0", ...args], {
    stdio: ["ignore", "pipe", "pipe"],
    env: { ...process.env, PI_CODING_AGENT_DIR: "", XDG_CACHE_HOME: join(dir, "cache") },
  });
  let stderr = "";
  child.stderr!.on("data", (part: Buffer) => (stderr += part.toString()));
  let stdout = "";
  while (!stdout.includes("\n")) {
    const [part] = (await Promise.race([once(child.stdout!, "data"), once(child, "exit").then(() => Promise.reject(new Error(`serve exited: ${stderr}`)))])) as [Buffer];
    stdout += part.toString();
  }
  const url = new URL(stdout.slice("sessionkit serve: ".length).trim());
  const token = url.searchParams.get("token")!;
  const stores = (await (await fetch(new URL(`/api/stores?token=${token}`, url))).json()) as { id: string }[];
  return {
    pid: child.pid!,
    port: Number(url.port),
    token,
    store: stores[0]!.id,
    stop: async () => {
      if (child.exitCode !== null) return;
      child.kill("SIGINT");
      await once(child, "exit");
    },
  };
}

function memory(pid: number): { rss: number; peak: number } {
  const status = readFileSync(`/proc/${pid}/status`, "utf8");
  const bytes = (key: string) => Number(new RegExp(`^${key}:\\s+(\\d+) kB`, "m").exec(status)![1]) * 1024;
  return { rss: bytes("VmRSS"), peak: bytes("VmHWM") };
}

const mb = (bytes: number) => (bytes / MIB).toFixed(0);

/**
 * Runs `attack` on a fresh server and returns its peak RSS over idle: idle is the RSS after one
 * warm-up read; the peak is VmHWM, reset to the idle RSS just before the attack.
 */
async function measure(name: string, args: string[], attack: (server: ServeChild) => Promise<void>): Promise<number> {
  const server = await startServeChild(args);
  try {
    const warmUp = await RawClient.open(server);
    expect((await warmUp.call({ op: "read", path: BIG_FILE, maxBytes: 4 * MIB })).ok).toBe(true);
    warmUp.close();
    await new Promise((resolve) => setTimeout(resolve, 300));
    const idle = memory(server.pid).rss;
    writeFileSync(`/proc/${server.pid}/clear_refs`, "5");
    const started = performance.now();
    await attack(server);
    const overIdle = memory(server.pid).peak - idle;
    console.log(`serve-limits: ${name}: peak RSS ${mb(overIdle)} MB over idle (idle ${mb(idle)} MB), ${((performance.now() - started) / 1000).toFixed(1)} s`);
    await expectServing(server);
    return overIdle;
  } finally {
    await server.stop();
  }
}

interface Reply {
  id: number | null;
  ok: boolean;
  result?: { data?: Uint8Array; transferId?: string };
  error?: { code: string; message: string };
}

/** A client of the rpc WebSocket that sends raw frames: what a hostile script would send. */
class RawClient {
  readonly replies: Reply[] = [];
  private waiters: (() => void)[] = [];
  private nextId = 1;

  private constructor(readonly ws: WebSocket) {
    ws.on("message", (data: Buffer) => {
      const message = decodeFrame(data) as Reply | { responses: Reply[] };
      if ("responses" in message) this.replies.push(...message.responses);
      else this.replies.push(message);
      for (const wake of this.waiters.splice(0)) wake();
    });
  }

  static async open(server: Served): Promise<RawClient> {
    const ws = new WebSocket(`ws://127.0.0.1:${server.port}/api/stores/${server.store}/rpc?token=${server.token}`);
    ws.on("error", () => {});
    await once(ws, "open");
    return new RawClient(ws);
  }

  request(call: Record<string, unknown>): Record<string, unknown> {
    return { protocol: RPC_PROTOCOL, id: this.nextId++, call };
  }

  send(message: unknown): void {
    this.ws.send(encodeFrame(message));
  }

  async call(call: Record<string, unknown>): Promise<Reply> {
    const request = this.request(call);
    this.send(request);
    await this.until(() => this.replies.some((reply) => reply.id === request.id));
    return this.replies.find((reply) => reply.id === request.id)!;
  }

  async until(done: () => boolean, timeoutMs = 60_000): Promise<void> {
    const deadline = performance.now() + timeoutMs;
    while (!done()) {
      if (performance.now() > deadline) throw new Error(`no reply within ${timeoutMs} ms (${this.replies.length} replies)`);
      await new Promise<void>((resolve) => {
        this.waiters.push(resolve);
        setTimeout(resolve, 100);
      });
    }
  }

  close(): void {
    this.ws.terminate();
  }
}

/** Another client reads the big file in full, within a few seconds. */
async function expectServing(server: ServeChild): Promise<void> {
  const other = await RawClient.open(server);
  try {
    const reply = await other.call({ op: "read", path: BIG_FILE, maxBytes: 4 * MIB });
    expect(reply.ok).toBe(true);
    expect(reply.result?.data?.length).toBe(BIG_FILE_BYTES);
  } finally {
    other.close();
  }
}

/** A raw POST; the body is decoded when it is a frame of at most 64 MiB (only its size is kept otherwise). */
function post(server: Served, body: Uint8Array): Promise<{ status: number; bytes: number; message: unknown }> {
  return new Promise((resolve, reject) => {
    const request = httpRequest(
      { host: "127.0.0.1", port: server.port, method: "POST", path: `/api/stores/${server.store}/rpc?token=${server.token}`, headers: { host: `127.0.0.1:${server.port}` } },
      (response) => {
        const parts: Buffer[] = [];
        let bytes = 0;
        response.on("data", (part: Buffer) => {
          bytes += part.length;
          if (bytes <= 64 * MIB) parts.push(part);
        });
        response.on("end", () => {
          const whole = bytes <= 64 * MIB ? Buffer.concat(parts) : undefined;
          let message: unknown;
          try {
            message = whole && decodeFrame(whole);
          } catch {
            message = whole?.toString();
          }
          resolve({ status: response.statusCode ?? 0, bytes, message });
        });
        response.on("error", reject);
      },
    );
    request.on("error", reject);
    request.end(body);
  });
}

describe("sessionkit serve under the attacks of issue 22 (peak RSS of the server process)", () => {
  it("one 130 KB POST batch of 1,000 reads of a 0.95 MB file: refused as a whole ('limit', 429)", async () => {
    const overIdle = await measure("POST batch of 1,000 reads of a 0.95 MB file", [], async (server) => {
      const requests = Array.from({ length: 1000 }, (_, i) => ({ protocol: RPC_PROTOCOL, id: i + 1, call: { op: "read", path: BIG_FILE, maxBytes: 4 * MIB } }));
      const body = encodeFrame({ protocol: RPC_PROTOCOL, requests });
      expect(body.length).toBeGreaterThan(100_000);
      const reply = await post(server, body);
      expect(reply.status).toBe(429);
      const responses = (reply.message as { responses: Reply[] }).responses;
      expect(responses).toHaveLength(1000);
      expect(new Set(responses.map((response) => response.error?.code))).toEqual(new Set(["limit"]));
    });
    expect(overIdle).toBeLessThanOrEqual(PEAK_OVER_IDLE_BOUND);
  }, 180_000);

  it("a POST batch of as many reads as the cap allows: the reads past the bytes a client may hold get 'limit'", async () => {
    const overIdle = await measure(`POST batch of ${DEFAULT_LIMITS.maxBatchRequests} reads of a 0.95 MB file`, [], async (server) => {
      const requests = Array.from({ length: DEFAULT_LIMITS.maxBatchRequests }, (_, i) => ({ protocol: RPC_PROTOCOL, id: i + 1, call: { op: "read", path: BIG_FILE, maxBytes: 4 * MIB } }));
      const reply = await post(server, encodeFrame({ protocol: RPC_PROTOCOL, requests }));
      expect(reply.status).toBe(200);
      const codes = (reply.message as { responses: Reply[] }).responses.map((response) => (response.ok ? "ok" : response.error!.code));
      const fitting = Math.floor(DEFAULT_LIMITS.maxHeldBytes / BIG_FILE_BYTES);
      expect(codes).toEqual([...Array<string>(fitting).fill("ok"), ...Array<string>(requests.length - fitting).fill("limit")]);
      expect(reply.bytes).toBeLessThan(DEFAULT_LIMITS.maxHeldBytes + MIB);
    });
    expect(overIdle).toBeLessThanOrEqual(PEAK_OVER_IDLE_BOUND);
  }, 180_000);

  it("a client that sends 1,000 reads and never pulls their rest (readMore): the reads over its cap get 'limit'", async () => {
    const overIdle = await measure("1,000 reads never pulled (readMore)", [], async (server) => {
      const attacker = await RawClient.open(server);
      for (let i = 0; i < 1000; i++) attacker.send(attacker.request({ op: "read", path: BIG_FILE, maxBytes: 1 }));
      await attacker.until(() => attacker.replies.length === 1000);
      const codes = attacker.replies.map((reply) => (reply.ok ? "ok" : reply.error!.code));
      expect(codes.filter((code) => code !== "ok" && code !== "limit")).toEqual([]);
      expect(codes).toContain("limit");
      await expectServing(server);
      attacker.close();
    });
    expect(overIdle).toBeLessThanOrEqual(PEAK_OVER_IDLE_BOUND);
  }, 180_000);

  it("a client that sends 1,000 reads and never reads its socket: the server stops reading it, and serves others meanwhile", async () => {
    const overIdle = await measure("1,000 reads, replies never read from the socket", [], async (server) => {
      const attacker = await RawClient.open(server);
      attacker.ws.pause();
      for (let i = 0; i < 1000; i++) attacker.send(attacker.request({ op: "read", path: BIG_FILE, maxBytes: 4 * MIB }));
      await new Promise((resolve) => setTimeout(resolve, 3000));
      await expectServing(server);
      attacker.close();
    });
    expect(overIdle).toBeLessThanOrEqual(PEAK_OVER_IDLE_BOUND);
  }, 180_000);

  it("50 × 4 MiB `stage` on a read-only server: each refused ('read-only')", async () => {
    const overIdle = await measure("50 x 4 MiB stage, read-only", [], async (server) => {
      const attacker = await RawClient.open(server);
      const transferId = "t1";
      for (let i = 0; i < 50; i++) attacker.send(attacker.request({ op: "stage", transferId, offset: i * 4 * MIB, data: new Uint8Array(4 * MIB).fill(i) }));
      await attacker.until(() => attacker.replies.length === 50);
      expect(new Set(attacker.replies.map((reply) => reply.error?.code))).toEqual(new Set(["read-only"]));
      attacker.close();
    });
    expect(overIdle).toBeLessThanOrEqual(PEAK_OVER_IDLE_BOUND);
  }, 180_000);

  it("50 × 4 MiB `stage` on a --write server: the piece over the staged-bytes cap gets 'limit' and drops the upload", async () => {
    const overIdle = await measure("50 x 4 MiB stage, --write", ["--write"], async (server) => {
      const attacker = await RawClient.open(server);
      const transferId = "t1";
      for (let i = 0; i < 50; i++) attacker.send(attacker.request({ op: "stage", transferId, offset: i * 4 * MIB, data: new Uint8Array(4 * MIB).fill(i) }));
      await attacker.until(() => attacker.replies.length === 50);
      const fitting = DEFAULT_LIMITS.maxStagedBytes / (4 * MIB);
      // The pieces after the refused one name an upload that is gone: "invalid".
      expect(attacker.replies.map((reply) => (reply.ok ? "ok" : reply.error!.code))).toEqual([...Array<string>(fitting).fill("ok"), "limit", ...Array<string>(49 - fitting).fill("invalid")]);
      attacker.close();
    });
    expect(overIdle).toBeLessThanOrEqual(PEAK_OVER_IDLE_BOUND);
  }, 180_000);
});

const bytes = (text: string) => new TextEncoder().encode(text);
const request = (id: number, call: Record<string, unknown>) => ({ protocol: RPC_PROTOCOL, id, call });

describe("createStorageServer's limits, one by one", () => {
  it("maxBatchRequests: a longer batch is refused, every request in it with 'limit'; rpc clients split 200 calls at once into batches that fit", async () => {
    const connection = createStorageServer(memoryStorage(), { limits: { maxBatchRequests: 3 } }).connect();
    const refused = await connection.handleBatch({ protocol: RPC_PROTOCOL, requests: [1, 2, 3, 4].map((id) => request(id, { op: "stat", path: "a" })) });
    expect(refused).toMatchObject({ responses: [1, 2, 3, 4].map((id) => ({ id, ok: false, error: { code: "limit" } })) });
    expect(await connection.handleBatch({ protocol: RPC_PROTOCOL, requests: [1, 2, 3].map((id) => request(id, { op: "stat", path: "a" })) })).toMatchObject({ responses: [{ ok: true }, { ok: true }, { ok: true }] });

    const served = await startServe({ stores: [{ root }], port: 0, viewerDir: null });
    const client = httpStorage({ url: served.origin, token: served.token, store: served.stores[0]!.id, WebSocket: WebSocket as unknown as new (url: string) => WebSocketLike });
    try {
      const stats = await Promise.all(Array.from({ length: 200 }, () => client.stat(BIG_FILE)));
      expect(stats.every((info) => info?.size === BIG_FILE_BYTES)).toBe(true);
      expect(DEFAULT_LIMITS.maxBatchRequests).toBe(MAX_BATCH_REQUESTS);
    } finally {
      await client.close();
      await served.close();
    }
  });

  it("maxCallsInFlight: port calls start in the order they came, at most that many at once", async () => {
    const base = memoryStorage();
    let running = 0;
    let most = 0;
    const started: string[] = [];
    const port: StoragePort = {
      ...base,
      kind: "slow",
      async stat(path) {
        started.push(path);
        most = Math.max(most, ++running);
        await new Promise((resolve) => setTimeout(resolve, 5));
        running--;
        return base.stat(path);
      },
    };
    const connection = createStorageServer(port, { limits: { maxCallsInFlight: 3 } }).connect();
    const paths = Array.from({ length: 10 }, (_, i) => `f${i}`);
    const answer = await connection.handleBatch({ protocol: RPC_PROTOCOL, requests: paths.map((path, i) => request(i, { op: "stat", path })) });
    expect((answer as { responses: { ok: boolean }[] }).responses.every((response) => response.ok)).toBe(true);
    expect(most).toBe(3);
    expect(started).toEqual(paths);
  });

  it("maxHeldBytes: a file over it is refused after reading one byte more than fits; unpulled snapshots refuse later reads until pulled", async () => {
    const base = memoryStorage();
    await base.write("f", new Uint8Array(100).fill(7));
    const asked: (number | undefined)[] = [];
    const port: StoragePort = { ...base, read: (path, range) => (asked.push(range?.length), base.read(path, range)) };
    const connection = createStorageServer(port, { limits: { maxHeldBytes: 50 } }).connect();

    expect(await connection.handle(request(1, { op: "read", path: "f", maxBytes: 1000 }))).toMatchObject({ ok: false, error: { code: "limit", path: "f" } });
    expect(asked).toEqual([51]);
    const first = await connection.handle(request(2, { op: "read", path: "f", range: { offset: 0, length: 40 }, maxBytes: 10 }));
    expect(first).toMatchObject({ ok: true, result: { size: 40 } });
    const transferId = (first as { result: { transferId: string } }).result.transferId;
    // 40 bytes are held for the snapshot: 20 more do not fit.
    expect(await connection.handle(request(3, { op: "read", path: "f", range: { offset: 0, length: 20 }, maxBytes: 100 }))).toMatchObject({ ok: false, error: { code: "limit" } });
    for (let offset = 10; offset < 40; offset += 10) expect(await connection.handle(request(4, { op: "readMore", transferId, offset }))).toMatchObject({ ok: true });
    expect(await connection.handle(request(5, { op: "read", path: "f", range: { offset: 0, length: 50 }, maxBytes: 100 }))).toMatchObject({ ok: true, result: { size: 50 } });
  });

  it("maxStagedBytes: the piece that would go over it gets 'limit' and its upload is dropped; others may stage again", async () => {
    const connection = createStorageServer(memoryStorage(), { limits: { maxStagedBytes: 10 } }).connect();
    const stage = (id: number, transferId: string, offset: number, size: number) => connection.handle(request(id, { op: "stage", transferId, offset, data: new Uint8Array(size) }));
    expect(await stage(1, "a", 0, 6)).toMatchObject({ ok: true });
    expect(await stage(2, "a", 6, 6)).toMatchObject({ ok: false, error: { code: "limit" } });
    expect(await connection.handle(request(3, { op: "write", path: "x", content: { kind: "staged", transferId: "a", size: 12 } }))).toMatchObject({ ok: false, error: { code: "invalid" } });
    expect(await stage(4, "b", 0, 10)).toMatchObject({ ok: true });
    expect(await connection.handle(request(5, { op: "write", path: "x", content: { kind: "staged", transferId: "b", size: 10 } }))).toMatchObject({ ok: true });
  });
});

describe("malformed frames and what error messages show", () => {
  it("a frame whose JSON is null, a number, a string or an array: 400 over POST, 'invalid' over the WebSocket, which goes on", async () => {
    const served = await startServe({ stores: [{ root }], port: 0, viewerDir: null });
    const where = { port: served.port, token: served.token, store: served.stores[0]!.id };
    const socket = await RawClient.open(where);
    try {
      for (const message of [null, 42, "read", [request(1, { op: "stat", path: BIG_FILE })]]) {
        const reply = await post(where, encodeFrame(message));
        expect(reply.status, JSON.stringify(message)).toBe(400);
        expect(String(reply.message)).toContain("not an object");
        const before = socket.replies.length;
        socket.send(message);
        await socket.until(() => socket.replies.length > before);
        expect(socket.replies[before]).toMatchObject({ id: null, ok: false, error: { code: "invalid" } });
      }
      expect(await socket.call({ op: "stat", path: BIG_FILE })).toMatchObject({ ok: true, result: { size: BIG_FILE_BYTES } });
    } finally {
      socket.close();
      await served.close();
    }
  });

  it("error messages name store-relative paths, never the server's directories: over the WebSocket, POST and GET", async () => {
    const cacheDir = join(dir, "limits-cache");
    await mkdir(cacheDir, { recursive: true });
    await symlink("loop", join(root, "sessions", "loop")).catch(() => {});
    const served = await startServe({ stores: [{ root, cacheDir }], port: 0, viewerDir: null });
    const where = { port: served.port, token: served.token, store: served.stores[0]!.id };
    const client = httpStorage({ url: served.origin, token: served.token, store: where.store, WebSocket: WebSocket as unknown as new (url: string) => WebSocketLike });
    const serverDirs = [root, cacheDir, await realpath(root), await realpath(cacheDir), tmpdir()];
    const longName = "a".repeat(300);
    try {
      for (const path of [`sessions/${longName}`, `.sessionkit/${longName}`, "sessions/loop"]) {
        const messages: string[] = [];
        for (const failing of [client.read(path, { offset: 0, length: 10 }), client.stat(path)]) messages.push(await failing.then(() => "no error", (error: Error) => error.message));
        messages.push(JSON.stringify((await post(where, encodeFrame(request(1, { op: "read", path, maxBytes: 100 })))).message));
        const get = await fetch(`${served.origin}/api/stores/${where.store}/files/${path}?token=${served.token}`);
        messages.push(`${get.status} ${await get.text()}`);
        for (const message of messages) {
          expect(message, path).toContain(path);
          for (const serverDir of serverDirs) expect(message, path).not.toContain(serverDir);
        }
      }
    } finally {
      await client.close();
      await served.close();
    }
  });

  it("an absolute path no store directory accounts for is hidden; an invalid path the client sent is quoted as sent", async () => {
    const failing: StoragePort = {
      ...memoryStorage(),
      read: () => Promise.reject(new Error("EIO: i/o error, open '/var/lib/secret/x.jsonl'")),
      stat: () => Promise.reject(new StorageError("io", "cannot stat C:\\Users\\me\\store\\x (see /etc/sessionkit.conf)")),
    };
    const connection = createStorageServer(failing, { paths: [""], hostPaths: { "/srv/store": "" } }).connect();
    const read = await connection.handle(request(1, { op: "read", path: "x", maxBytes: 10 }));
    expect(read).toMatchObject({ ok: false, error: { code: "io", message: "read failed: Error: EIO: i/o error, open '<server path>'" } });
    const stat = await connection.handle(request(2, { op: "stat", path: "x" }));
    expect(stat).toMatchObject({ ok: false, error: { message: "cannot stat <server path> (see <server path>)" } });
    const invalid = await connection.handle(request(3, { op: "read", path: "/etc/passwd", maxBytes: 10 }));
    expect(invalid).toMatchObject({ ok: false, error: { code: "invalid", message: expect.stringContaining('"/etc/passwd"') } });
  });
});
