/**
 * The rig of the serve fuzzers (fuzz-serve*.test.ts): a world of files (a store root with sessions,
 * and sentinel files beside it that no client may read or change), a `startServe` server on it as
 * a child process (its memory read from /proc), raw HTTP requests and rpc WebSocket messages as
 * fast-check arbitraries, and the checks made after every case.
 *
 * Generated requests name the server's particulars by placeholders (<PORT>, <TOKEN>, <STORE>,
 * <BASE>, …), filled in when a case is sent: counterexamples stay readable and one arbitrary
 * serves every server.
 */
import { spawn, type ChildProcess } from "node:child_process";
import { createHash, randomBytes } from "node:crypto";
import { once } from "node:events";
import { lstatSync, readdirSync, readFileSync, readlinkSync, realpathSync, writeFileSync } from "node:fs";
import { mkdir, mkdtemp, rm, symlink, writeFile } from "node:fs/promises";
import { connect } from "node:net";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { fileURLToPath } from "node:url";
import fc from "fast-check";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { WebSocket } from "ws";
import { decodeFrame, encodeFrame, FRAME_CONTENT_TYPE } from "../../adapters/rpc/frame.js";
import { RPC_PROTOCOL } from "../../adapters/rpc/protocol.js";
import { tokenSubprotocols } from "../../adapters/rpc/websocket.js";
import { SEED, settings } from "./properties/fast-check.js";

const REPO = fileURLToPath(new URL("../..", import.meta.url)).replace(/\/$/, "");
const MIB = 1 << 20;
/** The server's largest body or WebSocket message (startServer's default maxMessageBytes). */
const MAX_MESSAGE_BYTES = 16 * MIB;
/** Over the streaming threshold of GET …/files (16 MiB read in one port call, larger in pieces). */
const HUGE_FILE_BYTES = 17 * MIB;
/** Longest wait for an answer, a reply or a health check: far over any answer's time, under the test's. */
const ANSWER_TIMEOUT_MS = 20_000;
/** How long the server may take to stop on SIGTERM. */
const STOP_TIMEOUT_MS = 10_000;

/** Cases per property: a few seconds' worth in `npm test`, SESSIONKIT_FUZZ_RUNS=<n> for a long run. */
const FUZZ_RUNS = Number(process.env.SESSIONKIT_FUZZ_RUNS ?? 100);
/** The bound on the server's peak RSS over its idle RSS (issue 22). */
const PEAK_OVER_IDLE_BOUND = 200 * MIB;

/**
 * A temp dir holding the store's root and, beside it, what no client may reach: files holding
 * `outsideMarker` (a folder `outside/`, a sibling whose name starts with the root's, a sibling of
 * the viewer's), and in the root, beside the served folders, pi's `auth.json` and
 * `settings.json` holding `unservedMarker`. The session file holds `sessionMarker`, which no
 * answer to a request without the token may carry.
 */
export interface FuzzWorld {
  base: string;
  root: string;
  cacheDir: string;
  viewerDir: string;
  outsideMarker: string;
  unservedMarker: string;
  sessionMarker: string;
  /** Absolute paths of the server's: no answer may name one the request did not. */
  serverPaths: string[];
  cleanup(): Promise<void>;
}

export interface WorldOptions {
  /**
   * Symbolic links inside the root to outside it: `sessions/link.jsonl` → `../../outside/auth.json`,
   * `sessions/linkdir` → `../../outside`, `sessions/abslink.jsonl` → the sibling's file by its
   * absolute path, `blobs/rootlink` → the root (pi's auth.json beside the served folders).
   */
  links?: boolean;
  /** Build the viewer (an index.html and a script); false leaves its folder missing, as in an unbuilt clone. */
  viewerBuilt?: boolean;
}

export async function makeWorld(options: WorldOptions = {}): Promise<FuzzWorld> {
  const base = await mkdtemp(join(tmpdir(), "sessionkit-fuzz-"));
  const tag = randomBytes(8).toString("hex");
  const outsideMarker = `FUZZ-OUTSIDE-${tag}`;
  const unservedMarker = `FUZZ-UNSERVED-${tag}`;
  const sessionMarker = `FUZZ-SESSION-${tag}`;
  const root = join(base, "store");
  const project = join(root, "sessions", "--p--");
  await mkdir(project, { recursive: true });
  await mkdir(join(root, "blobs"), { recursive: true });
  const header = '{"type":"session","version":3,"id":"s1","timestamp":"2026-01-01T00:00:00.000Z","cwd":"/p"}\n';
  const message = (id: string, text: string) => `${JSON.stringify({ type: "message", id, parentId: null, timestamp: "2026-01-01T00:00:01.000Z", message: { role: "user", content: text, timestamp: 0 } })}\n`;
  await writeFile(join(project, "s1.jsonl"), header + message("m1", sessionMarker));
  const line = message("m2", "y".repeat(1000));
  await writeFile(join(project, "huge.jsonl"), (header + line.repeat(Math.ceil(HUGE_FILE_BYTES / line.length))).slice(0, HUGE_FILE_BYTES - 1) + "\n");
  await writeFile(join(root, "blobs", "b1"), randomBytes(300));
  await writeFile(join(root, "auth.json"), JSON.stringify({ apiKey: unservedMarker }));
  await writeFile(join(root, "settings.json"), JSON.stringify({ note: unservedMarker }));
  for (const [dir, file] of [["outside", "auth.json"], ["outside", "notes.txt"], ["store-evil", "auth.json"], ["viewer-evil", "secret.txt"]] as const) {
    await mkdir(join(base, dir), { recursive: true });
    await writeFile(join(base, dir, file), JSON.stringify({ apiKey: outsideMarker }));
  }
  const cacheDir = join(base, "cache");
  await mkdir(cacheDir);
  const viewerDir = join(base, "viewer");
  if (options.viewerBuilt ?? true) {
    await mkdir(viewerDir);
    await writeFile(join(viewerDir, "index.html"), "<!doctype html><title>viewer</title><script src=app.js></script>");
    await writeFile(join(viewerDir, "app.js"), "console.log('viewer');");
  }
  if (options.links) {
    await symlink("../../outside/auth.json", join(root, "sessions", "link.jsonl"));
    await symlink("../../outside", join(root, "sessions", "linkdir"));
    await symlink(join(base, "store-evil", "auth.json"), join(root, "sessions", "abslink.jsonl"));
    await symlink("..", join(root, "blobs", "rootlink"));
  }
  const serverPaths = [...new Set([base, realpathSync(base), REPO])];
  return { base, root, cacheDir, viewerDir, outsideMarker, unservedMarker, sessionMarker, serverPaths, cleanup: () => rm(base, { recursive: true, force: true }) };
}

/**
 * What a client may never change: every file and link in the world's temp dir outside the served
 * folders (the root's `sessions/` and `blobs/`, and the cache dir mounted as `.sessionkit/`), by
 * size, mtime and content hash. A new entry shows up as a new key.
 */
function unservedState(world: FuzzWorld): Map<string, string> {
  const state = new Map<string, string>();
  const served = new Set([join(world.root, "sessions"), join(world.root, "blobs"), world.cacheDir]);
  const walk = (dir: string) => {
    for (const name of readdirSync(dir)) {
      const path = join(dir, name);
      if (served.has(path)) continue;
      try {
        const info = lstatSync(path);
        if (info.isDirectory()) {
          state.set(path, "dir");
          walk(path);
        } else if (info.isSymbolicLink()) state.set(path, `link ${readlinkSync(path)}`);
        else state.set(path, `file ${info.size} ${info.mtimeMs} ${createHash("sha1").update(readFileSync(path)).digest("hex")}`);
      } catch (error) {
        // Gone since readdir: a lock file of key "sessions" (`sessions.lock`, beside sessions/)
        // that the server released as the case's socket closed. What stays is compared after.
        if ((error as NodeJS.ErrnoException).code !== "ENOENT") throw error;
      }
    }
  };
  walk(world.base);
  return state;
}

function stateChanges(before: ReadonlyMap<string, string>, after: ReadonlyMap<string, string>): string[] {
  const changes: string[] = [];
  for (const [path, was] of before) if (after.get(path) !== was) changes.push(`${path}: ${was} → ${after.get(path) ?? "gone"}`);
  for (const [path, now] of after) if (!before.has(path)) changes.push(`${path}: new (${now})`);
  return changes;
}

/** `startServe` on the world's root in a child process, as `sessionkit serve --root` runs it. */
export interface ServeChild {
  pid: number;
  port: number;
  token: string;
  store: string;
  /** Why the process ended, while it has not been stopped; undefined while it runs. */
  readonly exited: string | undefined;
  memory(): { rss: number; peak: number };
  /** Sets the peak RSS (VmHWM) back to the RSS now. */
  resetPeak(): void;
  stop(): Promise<void>;
}

export async function startServeChild(world: FuzzWorld, options: { write: boolean }): Promise<ServeChild> {
  const serveOptions = { stores: [{ root: world.root, cacheDir: world.cacheDir }], port: 0, write: options.write, viewerDir: world.viewerDir };
  const script = `
    const { startServe } = await import(${JSON.stringify(join(REPO, "cli", "serve", "server.ts"))});
    const server = await startServe(${JSON.stringify(serveOptions)});
    process.stdout.write(JSON.stringify({ port: server.port, token: server.token, store: server.stores[0].id }) + "\\n");
    const stop = () => void server.close().then(() => process.exit(0));
    process.on("SIGTERM", stop);
    process.on("SIGINT", stop);
    // The test process is gone (its end of stdin closed): stop too, within 10 s whatever happens.
    process.stdin.on("end", () => { stop(); setTimeout(() => process.exit(1), 10_000).unref(); });
    process.stdin.resume();`;
  const child: ChildProcess = spawn(process.execPath, ["--import", "tsx", "--input-type=module", "-e", script], { cwd: REPO, stdio: ["pipe", "pipe", "pipe"] });
  let stderr = "";
  child.stderr!.on("data", (part: Buffer) => (stderr = (stderr + part.toString()).slice(-4000)));
  let exited: string | undefined;
  let stopping = false;
  child.on("exit", (code, signal) => {
    if (!stopping) exited = `the server exited (code ${code}, signal ${signal}): ${stderr}`;
  });
  let stdout = "";
  while (!stdout.includes("\n")) {
    const [part] = (await Promise.race([once(child.stdout!, "data"), once(child, "exit").then(() => Promise.reject(new Error(`the server did not start: ${stderr}`)))])) as [Buffer];
    stdout += part.toString();
  }
  const { port, token, store } = JSON.parse(stdout) as { port: number; token: string; store: string };
  const pid = child.pid!;
  return {
    pid,
    port,
    token,
    store,
    get exited() {
      return exited;
    },
    memory() {
      const status = readFileSync(`/proc/${pid}/status`, "utf8");
      const kib = (key: string) => Number(new RegExp(`^${key}:\\s+(\\d+) kB`, "m").exec(status)![1]) * 1024;
      return { rss: kib("VmRSS"), peak: kib("VmHWM") };
    },
    resetPeak() {
      writeFileSync(`/proc/${pid}/clear_refs`, "5");
    },
    async stop() {
      stopping = true;
      if (child.exitCode !== null || child.signalCode !== null) return;
      const exit = once(child, "exit");
      child.kill("SIGTERM");
      // serve stops on SIGTERM (Ctrl+C alike): one that does not is a fault, and is not left running.
      const stopped = await Promise.race([exit.then(() => true), new Promise<boolean>((resolve) => setTimeout(resolve, STOP_TIMEOUT_MS, false))]);
      if (stopped) return;
      child.kill("SIGKILL");
      await exit;
      throw new Error(`the server did not stop within ${STOP_TIMEOUT_MS} ms of SIGTERM`);
    },
  };
}

/** The server's particulars the placeholders of a generated case stand for. */
function placeholders(server: ServeChild, world: FuzzWorld): [string, string][] {
  const hex = Buffer.from(server.token).toString("hex");
  return [
    ["<HOST>", `127.0.0.1:${server.port}`],
    ["<PORT>", String(server.port)],
    ["<TOKENHEX>", hex],
    ["<TOKEN>", server.token],
    ["<STORE>", server.store],
    ["<BASE>", world.base],
    ["<ROOT>", world.root],
  ];
}

function fill(text: string, values: readonly [string, string][]): string {
  return values.reduce((filled, [name, value]) => filled.replaceAll(name, value), text);
}

/** `value` with the placeholders in each of its strings filled in (keys too), byte arrays as they are. */
function fillDeep(value: unknown, values: readonly [string, string][]): unknown {
  if (typeof value === "string") return fill(value, values);
  if (Array.isArray(value)) return value.map((item) => fillDeep(item, values));
  if (value === null || typeof value !== "object" || value instanceof Uint8Array) return value;
  return Object.fromEntries(Object.entries(value).map(([key, item]) => [fill(key, values), fillDeep(item, values)]));
}

// ---------------------------------------------------------------------------------------------
// Arbitraries

/** Path segments: the world's names, the classic escapes, and anything at all. */
const segment = fc.oneof(
  { weight: 8, arbitrary: fc.constantFrom("sessions", "blobs", ".sessionkit", "--p--", "s1.jsonl", "b1", "link.jsonl", "linkdir", "abslink.jsonl", "rootlink", "auth.json", "settings.json", "notes.txt", "catalog.json", "new.jsonl") },
  { weight: 1, arbitrary: fc.constant("huge.jsonl") },
  { weight: 4, arbitrary: fc.constantFrom("..", ".", "", "...", "outside", "store-evil", "store", "viewer-evil", "..\\..", "a\\b", "a\u0000b", "C:", "c:\\x", "~", "%2e%2e", "%00", "..%2f..", "a/b", " ", "con", ".git", "ü.jsonl", "\ud800") },
  { weight: 2, arbitrary: fc.string({ maxLength: 8 }) },
  { weight: 1, arbitrary: fc.string({ maxLength: 6, unit: "binary" }) },
);

/** Storage paths: mostly joined segments; the escapes that matter, whole; absolute ones of the server's. */
const storagePath = fc.oneof(
  { weight: 10, arbitrary: fc.constantFrom("sessions/--p--/s1.jsonl", "blobs/b1") },
  { weight: 3, arbitrary: fc.constantFrom("sessions/--p--/new.jsonl", "sessions/--p--", "sessions", "blobs", ".sessionkit", "") },
  { weight: 3, arbitrary: fc.constantFrom("sessions/link.jsonl", "sessions/linkdir/auth.json", "sessions/abslink.jsonl", "blobs/rootlink/auth.json") },
  { weight: 1, arbitrary: fc.constant("sessions/--p--/huge.jsonl") },
  { weight: 6, arbitrary: fc.array(segment, { minLength: 1, maxLength: 4 }).map((parts) => parts.join("/")) },
  {
    weight: 4,
    arbitrary: fc.constantFrom(
      "sessions/link.jsonl",
      "sessions/abslink.jsonl",
      "sessions/linkdir",
      "sessions/linkdir/auth.json",
      "sessions/linkdir/new.jsonl",
      "blobs/rootlink",
      "blobs/rootlink/auth.json",
      "blobs/rootlink/sessions/--p--/s1.jsonl",
      "../outside/auth.json",
      "sessions/../../outside/auth.json",
      "sessions\\..\\..\\outside\\auth.json",
      "sessions/%2e%2e/%2e%2e/outside/auth.json",
      "auth.json",
      "settings.json",
      ".sessionkit/catalog.json",
      "sessions",
      "",
      "/",
      "<BASE>/outside/auth.json",
      "<ROOT>/auth.json",
      "<ROOT>/sessions/--p--/s1.jsonl",
      "file://<BASE>/outside/auth.json",
      "/etc/passwd",
      "C:\\Windows\\win.ini",
      "\\\\server\\share\\x",
      "sessions/--p--/s1.jsonl\u0000.png",
      "sessions/--p--/" + "a".repeat(300),
    ),
  },
  { weight: 1, arbitrary: fc.string({ maxLength: 24, unit: "binary" }) },
);

const count = fc.oneof(
  { weight: 6, arbitrary: fc.nat({ max: 4096 }) },
  { weight: 1, arbitrary: fc.constantFrom<unknown>(0, 1, MIB, 16 * MIB, 2 ** 31, Number.MAX_SAFE_INTEGER, 2 ** 53, -1, 0.5, 1e300, "1", null) },
);
const maxBytes = fc.oneof({ weight: 4, arbitrary: fc.integer({ min: 1, max: 4096 }) }, { weight: 1, arbitrary: fc.constantFrom<unknown>(MIB, 16 * MIB, Number.MAX_SAFE_INTEGER, 0, -5) });
/** Client-named ids, and "<LAST_TRANSFER>"/"<LAST_LOCK>": the last one the server gave this socket. */
const transferId = fc.oneof(fc.constantFrom("t1", "t2", "<LAST_TRANSFER>", "", "x".repeat(129)), fc.string({ maxLength: 8 }));
const lockId = fc.oneof(fc.constantFrom("<LAST_LOCK>", "<LAST_TRANSFER>", "nope"), fc.string({ maxLength: 8 }));
const data = fc.oneof({ weight: 4, arbitrary: fc.uint8Array({ maxLength: 64 }) }, { weight: 1, arbitrary: fc.constantFrom<unknown>("text", null, [1, 2], { $bytes: [0, 1] }) });
const content = fc.oneof(
  { weight: 4, arbitrary: fc.record({ kind: fc.constant("inline"), data }) },
  { weight: 2, arbitrary: fc.record({ kind: fc.constant("staged"), transferId, size: count }) },
  { weight: 1, arbitrary: fc.anything() },
);

/** Every op, with arguments of the right names and any values (mostly plausible ones). */
const call = fc.oneof(
  { weight: 6, arbitrary: fc.record({ op: fc.constant("read"), path: storagePath, range: fc.option(fc.record({ offset: count, length: fc.option(count, { nil: undefined }) }, { requiredKeys: ["offset"] }), { nil: undefined }), maxBytes }) },
  { weight: 2, arbitrary: fc.record({ op: fc.constant("readMore"), transferId, offset: count }) },
  { weight: 4, arbitrary: fc.record({ op: fc.constant("stat"), path: storagePath }) },
  { weight: 4, arbitrary: fc.record({ op: fc.constant("list"), dir: storagePath }) },
  { weight: 2, arbitrary: fc.record({ op: fc.constant("stage"), transferId, offset: count, data }) },
  { weight: 3, arbitrary: fc.record({ op: fc.constantFrom("append", "write"), path: storagePath, content }) },
  { weight: 1, arbitrary: fc.record({ op: fc.constant("truncate"), path: storagePath, size: count }) },
  { weight: 2, arbitrary: fc.record({ op: fc.constantFrom("remove", "sync"), path: storagePath }) },
  { weight: 2, arbitrary: fc.record({ op: fc.constant("acquireLock"), key: storagePath }) },
  { weight: 1, arbitrary: fc.record({ op: fc.constant("releaseLock"), lockId }) },
  { weight: 1, arbitrary: fc.record({ op: fc.constantFrom("watch", "unwatch"), watchId: fc.constantFrom("w1", "w2", ""), dir: storagePath }) },
  { weight: 1, arbitrary: fc.record({ op: fc.constantFrom("renew", "close") }) },
  { weight: 1, arbitrary: fc.record({ op: fc.oneof(fc.string({ maxLength: 10 }), fc.constantFrom("__proto__", "constructor", "toString")) }) },
  { weight: 1, arbitrary: fc.anything() },
);

const rpcRequest = fc.oneof(
  { weight: 8, arbitrary: fc.record({ protocol: fc.constant(RPC_PROTOCOL), id: fc.nat(), call }) },
  { weight: 1, arbitrary: fc.record({ protocol: fc.oneof(fc.constant(RPC_PROTOCOL), fc.string()), id: fc.anything(), call }, { requiredKeys: [] }) },
);

/** rpc messages: single requests and batches (some over the 64-request cap), and what is no message. */
const rpcMessage = fc.oneof(
  { weight: 16, arbitrary: rpcRequest },
  { weight: 6, arbitrary: fc.record({ protocol: fc.constant(RPC_PROTOCOL), requests: fc.array(rpcRequest, { minLength: 1, maxLength: 8 }) }) },
  { weight: 1, arbitrary: fc.record({ protocol: fc.constant(RPC_PROTOCOL), requests: fc.array(fc.record({ protocol: fc.constant(RPC_PROTOCOL), id: fc.nat(), call: fc.record({ op: fc.constantFrom("read", "stat"), path: fc.constantFrom("sessions/--p--/s1.jsonl", "blobs/b1", "sessions/--p--/huge.jsonl"), maxBytes }) }), { minLength: 60, maxLength: 70 }) }) },
  { weight: 2, arbitrary: fc.record({ protocol: fc.oneof(fc.constant(RPC_PROTOCOL), fc.anything()), requests: fc.anything() }) },
  { weight: 2, arbitrary: fc.constantFrom<unknown>(null, 42, "read", [], [{ protocol: RPC_PROTOCOL, id: 1, call: { op: "stat", path: "sessions" } }], true) },
  { weight: 2, arbitrary: fc.anything({ withTypedArray: true, withNullPrototype: true }) },
);

/** A request body or WebSocket message: frames (whole or mangled), other bytes, text, an oversized run of zeros. */
type Payload =
  | { kind: "none" }
  | { kind: "frame"; message: unknown }
  | { kind: "mangled"; message: unknown; cut: number; jsonLength: number | undefined }
  | { kind: "bytes"; bytes: Uint8Array }
  | { kind: "text"; text: string }
  | { kind: "zeros"; size: number };

const framePayload = rpcMessage.map((message): Payload => ({ kind: "frame", message }));
const otherPayload = fc.oneof(
  { weight: 3, arbitrary: fc.record({ kind: fc.constant("mangled" as const), message: rpcMessage, cut: fc.nat({ max: 200 }), jsonLength: fc.option(fc.oneof(fc.nat({ max: 300 }), fc.constant(0xffffffff)), { nil: undefined }) }) },
  { weight: 2, arbitrary: fc.record({ kind: fc.constant("bytes" as const), bytes: fc.uint8Array({ maxLength: 64 }) }) },
  { weight: 2, arbitrary: fc.record({ kind: fc.constant("text" as const), text: fc.oneof(fc.json(), fc.string({ maxLength: 40, unit: "binary" })) }) },
  { weight: 1, arbitrary: fc.constant<Payload>({ kind: "zeros", size: MIB }) },
);
/** Rarely: a message one byte over the server's limit (413 over HTTP, close 1009 over a WebSocket). */
const oversized = fc.constant<Payload>({ kind: "zeros", size: MAX_MESSAGE_BYTES + 1 });

function payloadBytes(payload: Payload, values: readonly [string, string][]): Uint8Array {
  switch (payload.kind) {
    case "none":
      return new Uint8Array(0);
    case "frame":
      return encodeFrame(fillDeep(payload.message, values));
    case "mangled": {
      // A frame cut short, or its JSON length rewritten: parts of it, as a broken client sends them.
      const frame = encodeFrame(fillDeep(payload.message, values));
      const cut = frame.subarray(0, Math.max(0, frame.length - payload.cut));
      if (payload.jsonLength !== undefined && cut.length >= 4) new DataView(cut.buffer, cut.byteOffset).setUint32(0, payload.jsonLength);
      return cut;
    }
    case "bytes":
      return payload.bytes;
    case "text":
      return Buffer.from(fill(payload.text, values));
    case "zeros":
      return new Uint8Array(payload.size);
  }
}

// HTTP requests

/**
 * An HTTP case is a well-formed request to one route, with a few of its parts replaced: each part
 * is the route's own (undefined) most of the time, so that most cases get past the door and
 * reach the store, and every part is sometimes anything.
 */
type Route = "stores" | "files" | "rpc" | "changes" | "sessions" | "search" | "viewer";

/** Sometimes `arbitrary`, mostly undefined: the route's own value. */
function sometimes<T>(arbitrary: fc.Arbitrary<T>, weight = 1, outOf = 10): fc.Arbitrary<T | undefined> {
  return fc.oneof({ weight: outOf - weight, arbitrary: fc.constant(undefined) }, { weight, arbitrary });
}

/** A storage path as a URL path: each segment raw, percent-encoded, every byte encoded, or encoded twice. */
const urlPath = fc
  .tuple(storagePath, fc.oneof({ weight: 6, arbitrary: fc.constant("component") }, { weight: 1, arbitrary: fc.constantFrom("raw", "every-byte", "twice") }), fc.oneof({ weight: 12, arbitrary: fc.constant("/") }, { weight: 1, arbitrary: fc.constantFrom("\\", "%2f", "%5c", "//") }))
  .map(([path, encoding, separator]) =>
    path
      .split("/")
      .map((part) => encodeSegment(part, encoding))
      .join(separator),
  );

function encodeSegment(segment: string, encoding: string): string {
  const component = (text: string) => {
    try {
      return encodeURIComponent(text);
    } catch {
      return text; // a lone surrogate: sent as it is
    }
  };
  if (encoding === "component") return component(segment);
  if (encoding === "twice") return component(component(segment));
  if (encoding === "every-byte") return Array.from(Buffer.from(segment), (byte) => `%${byte.toString(16).padStart(2, "0")}`).join("");
  return segment;
}

const oddTarget = fc.oneof(
  {
    weight: 3,
    arbitrary: fc.constantFrom(
      "*",
      "http://[",
      "http://[::1",
      "http://<HOST>/api/stores?token=<TOKEN>",
      "http://evil.com/api/stores?token=<TOKEN>",
      "http://a:b@<HOST>/api/stores",
      "//evil/api/stores?token=<TOKEN>",
      "/api/stores/../../etc/passwd",
      "/api/stores/<STORE>/files/..%2f..%2f..%2foutside%2fauth.json?token=<TOKEN>",
      "/api/stores/<STORE>/files/sessions/..%2f..%2f..%2foutside%2fauth.json?token=<TOKEN>",
      "/api/stores/<STORE>/files/<BASE>/outside/auth.json?token=<TOKEN>",
      "/api/stores/<STORE>/files/%2e%2e/%2e%2e/outside/auth.json?token=<TOKEN>",
      "/api/stores/<STORE>/files/sessions/%2e%2e%5c%2e%2e%5coutside%5cauth.json?token=<TOKEN>",
      "/api/stores/<STORE>/files/auth.json?token=<TOKEN>",
      "/api/stores/<STORE>/files/sessions/--p--/s1.jsonl%00?token=<TOKEN>",
      "/api/stores/%2e%2e/files/auth.json?token=<TOKEN>",
      "/api/stores/<STORE>/changes?dir=..&token=<TOKEN>",
      "/api/stores/<STORE>/changes?dir=<BASE>&token=<TOKEN>",
      "/..%2f..%2foutside/auth.json",
      "/../viewer-evil/secret.txt",
      "/%2e%2e/viewer-evil/secret.txt",
      "/..%5cviewer-evil%5csecret.txt",
      "/%2e%2e%2fviewer-evil%2fsecret.txt",
      "/<BASE>/outside/auth.json",
      "/%",
      "/%zz",
      "",
      "/?",
      "/api//stores?token=<TOKEN>",
      "<HOST>",
      "/%00",
      "/index.html%00.txt",
    ),
  },
  { weight: 1, arbitrary: fc.string({ maxLength: 30 }) },
  { weight: 1, arbitrary: fc.string({ maxLength: 20, unit: "binary" }) },
);

const storeSegment = fc.oneof({ weight: 12, arbitrary: fc.constant("<STORE>") }, { weight: 1, arbitrary: fc.constantFrom("%3CSTORE%3E", "..", "%2e%2e", "store", "<STORE>%00", "<STORE>%2f..", "x") }, { weight: 1, arbitrary: fc.string({ maxLength: 6 }) });
/** The search route's parameters, raw: a query in FTS5's syntax and out of it, limits and sources in range and not. */
const searchQuery = fc.oneof(
  { weight: 3, arbitrary: fc.constantFrom("q=zebras", "q=%22grep%20found%22", "q=stor*", "q=NEAR(a%20b)", "q=-x", "q=a%20OR", "q=%5E*%3A()", "q=%00", "q=%ED%A0%80", "q=%", "q=", "q=%20", `q=${"z".repeat(1001)}`, "q=\u4e2d\u6587", "q=%E4%B8%AD%E6%96%87") },
  { weight: 2, arbitrary: fc.constantFrom("q=a&limit=0", "q=a&limit=1000", "q=a&limit=1e3", "q=a&limit=-1", "q=a&limit=", "q=a&sources=tool", "q=a&sources=", "q=a&sources=user,,", "q=a&sources=__proto__", "q=a&q=b", "limit=5") },
  { weight: 2, arbitrary: fc.string({ maxLength: 12 }).map((text) => `q=${encodeURIComponent(text)}`) },
  { weight: 1, arbitrary: fc.string({ maxLength: 20 }) },
);
const extraQuery = sometimes(fc.constantFrom("dir=sessions", "dir=", "dir=..", "dir=<BASE>", "a=%zz", "#frag", "token=wrong", "token=", "token=<TOKEN>x", "TOKEN=<TOKEN>", "token=<TOKENHEX>", "token=%3CTOKEN%3E"));
const hostHeader = fc.constantFrom("localhost:<PORT>", "LOCALHOST:<PORT>", "127.0.0.1", "127.0.0.1:<PORT>.evil.com", "evil.com", "[::1]:<PORT>", "", "127.0.0.1:<PORT>, evil.com", "127.0.0.2:<PORT>", "127.0.0.1:0<PORT>", "<omit>");
const originHeader = fc.constantFrom("http://<HOST>", "http://localhost:<PORT>", "null", "http://evil.com", "file://", "http://<HOST>/", "https://<HOST>", "");
const authorizationHeader = fc.constantFrom("Bearer wrong", "bearer <TOKEN>", "Bearer  <TOKEN>", "Basic <TOKEN>", "Bearer <TOKEN><TOKEN>", "Bearer ", "Bearer <TOKENHEX>", "<TOKEN>", "<omit>");
const rangeHeader = fc.oneof(
  { weight: 3, arbitrary: fc.tuple(fc.option(fc.nat({ max: 20 * MIB }), { nil: undefined }), fc.option(fc.nat({ max: 20 * MIB }), { nil: undefined })).map(([first, last]) => `bytes=${first ?? ""}-${last ?? ""}`) },
  { weight: 3, arbitrary: fc.tuple(fc.option(fc.nat({ max: 400 }), { nil: undefined }), fc.option(fc.nat({ max: 400 }), { nil: undefined })).map(([first, last]) => `bytes=${first ?? ""}-${last ?? ""}`) },
  { weight: 2, arbitrary: fc.constantFrom("bytes=0-10", "bytes=5-3", "bytes=-5", "bytes=10-", "bytes=0-0", "bytes=99999999999-", "bytes=0-1,2-3", "items=0-1", "bytes=-0", "bytes=--1", "bytes= 1 - 2", "bytes=1e3-", "bytes=0x10-", "bytes=18446744073709551616-", "bytes=-18446744073709551616", "bytes", "=", "bytes=0-16777216") },
  { weight: 1, arbitrary: fc.string({ maxLength: 16 }) },
);
const contentTypeHeader = fc.constantFrom(FRAME_CONTENT_TYPE, "application/json", "text/plain", "multipart/form-data; boundary=x", "", "<omit>");
const contentLength = fc.constantFrom("none", "more", "less", "garbage", "negative", "huge", "twice", "chunked", "chunked-raw", "chunked-and-length");
const extraHeader = fc.tuple(
  fc.oneof(fc.constantFrom("X-Forwarded-Host", "Forwarded", "Cookie", "Sec-WebSocket-Protocol", "Expect", "If-Range", "Accept-Encoding", "Transfer-Encoding", "Content-Length", "Connection", "Upgrade", "Authorization", "Host", "Origin", "Range"), fc.stringMatching(/^[A-Za-z][A-Za-z0-9-]{0,10}$/)),
  fc.oneof(fc.constantFrom("sessionkit-<PORT>=<TOKEN>", "100-continue", "evil.com", "keep-alive", "websocket", "gzip", "chunked", "0", "Bearer <TOKEN>", "sessionkit-rpc, sessionkit-token.<TOKENHEX>", "bytes=0-1", "a\u0000b", "a\r\nInjected: 1"), fc.string({ maxLength: 20 })),
);
/** An upgrade to the rpc WebSocket inside an HTTP case: the handshake's checks see the same paths and headers. */
const upgradeHeaders = fc.constantFrom<[string, string][]>(
  [["Upgrade", "websocket"], ["Connection", "Upgrade"], ["Sec-WebSocket-Key", "dGhlIHNhbXBsZSBub25jZQ=="], ["Sec-WebSocket-Version", "13"]],
  [["Upgrade", "websocket"], ["Connection", "Upgrade"], ["Sec-WebSocket-Key", "dGhlIHNhbXBsZSBub25jZQ=="], ["Sec-WebSocket-Version", "13"], ["Sec-WebSocket-Protocol", "sessionkit-rpc, sessionkit-token.<TOKENHEX>"]],
  [["Upgrade", "websocket"], ["Connection", "Upgrade"], ["Sec-WebSocket-Key", "dGhlIHNhbXBsZSBub25jZQ=="], ["Sec-WebSocket-Version", "13"], ["Sec-WebSocket-Protocol", "sessionkit-token.zz"]],
  [["Upgrade", "websocket"], ["Connection", "Upgrade"], ["Sec-WebSocket-Version", "8"]],
  [["Upgrade", "h2c"], ["Connection", "Upgrade"]],
);
const method = fc.oneof(
  { weight: 4, arbitrary: fc.constantFrom("GET", "POST", "HEAD", "OPTIONS") },
  { weight: 2, arbitrary: fc.constantFrom("PUT", "DELETE", "PATCH", "TRACE", "PROPFIND", "CONNECT", "get", "QUERY") },
  { weight: 1, arbitrary: fc.stringMatching(/^[A-Z]{1,8}$/) },
);

interface HttpCase {
  route: Route;
  /** The rpc route's body. */
  message: unknown;
  /** A HEAD instead of the files route's GET. */
  head: boolean;
  store: string;
  /** The file's path (files), the page's (viewer), the watched directory (changes). */
  path: string;
  /** The token in the query instead of the Authorization header. */
  tokenInQuery: boolean;
  query: string | undefined;
  /** The search route's parameters. */
  search: string;
  /** Overrides of the route's own parts ("<omit>": no such header). */
  target: string | undefined;
  method: string | undefined;
  version: string | undefined;
  host: string | undefined;
  origin: string | undefined;
  authorization: string | undefined;
  range: string | undefined;
  contentType: string | undefined;
  contentLength: string | undefined;
  upgrade: [string, string][] | undefined;
  extra: [string, string][];
  lowerCaseNames: boolean;
  body: Payload | undefined;
}

const httpCase: fc.Arbitrary<HttpCase> = fc.record({
  route: fc.oneof({ weight: 1, arbitrary: fc.constant<Route>("stores") }, { weight: 6, arbitrary: fc.constant<Route>("files") }, { weight: 6, arbitrary: fc.constant<Route>("rpc") }, { weight: 1, arbitrary: fc.constant<Route>("changes") }, { weight: 1, arbitrary: fc.constant<Route>("sessions") }, { weight: 2, arbitrary: fc.constant<Route>("search") }, { weight: 2, arbitrary: fc.constant<Route>("viewer") }),
  message: rpcMessage,
  head: fc.oneof({ weight: 3, arbitrary: fc.constant(false) }, { weight: 1, arbitrary: fc.constant(true) }),
  store: storeSegment,
  path: urlPath,
  tokenInQuery: fc.boolean(),
  query: extraQuery,
  search: searchQuery,
  target: sometimes(oddTarget, 1, 15),
  method: sometimes(method),
  version: sometimes(fc.constantFrom("HTTP/1.0", "HTTP/2.0", "HTTP/1.1x", "", "HTTP/0.9", "http/1.1"), 1, 30),
  host: sometimes(hostHeader, 1, 20),
  origin: sometimes(originHeader, 1, 10),
  authorization: sometimes(authorizationHeader, 1, 15),
  range: sometimes(rangeHeader, 3, 10),
  contentType: sometimes(contentTypeHeader, 1, 10),
  contentLength: sometimes(contentLength, 1, 10),
  upgrade: sometimes(upgradeHeaders, 1, 30),
  extra: fc.oneof({ weight: 6, arbitrary: fc.constant<[string, string][]>([]) }, { weight: 1, arbitrary: fc.array(extraHeader, { minLength: 1, maxLength: 2 }) }),
  lowerCaseNames: fc.boolean(),
  body: sometimes(fc.oneof({ weight: 40, arbitrary: fc.constant<Payload>({ kind: "none" }) }, { weight: 40, arbitrary: framePayload }, { weight: 30, arbitrary: otherPayload }, { weight: 1, arbitrary: oversized }), 1, 8),
});

/** The request's method: the route's own unless replaced. */
function methodOf(request: HttpCase): string {
  return request.method ?? (request.route === "rpc" ? "POST" : request.route === "files" && request.head ? "HEAD" : "GET");
}

/** A case as the bytes that go on the wire. */
function renderHttp(request: HttpCase, values: readonly [string, string][]): Buffer {
  const body = Buffer.from(payloadBytes(request.body ?? (request.route === "rpc" ? { kind: "frame", message: request.message } : { kind: "none" }), values));
  const headers: [string, string][] = [];
  const header = (name: string, value: string | undefined) => {
    if (value !== undefined && value !== "<omit>") headers.push([request.lowerCaseNames ? name.toLowerCase() : name, fill(value, values)]);
  };
  header("Host", request.host ?? "<HOST>");
  header("Origin", request.origin);
  header("Authorization", request.authorization ?? (request.tokenInQuery ? undefined : "Bearer <TOKEN>"));
  header("Range", request.range);
  header("Content-Type", request.contentType ?? (request.route === "rpc" ? FRAME_CONTENT_TYPE : undefined));
  for (const [name, value] of request.upgrade ?? [["Connection", "close"]]) header(name, value);
  for (const [name, value] of request.extra) header(name, value);
  let sent = body;
  const chunked = () => Buffer.concat([Buffer.from(`${body.length.toString(16)}\r\n`), body, Buffer.from(body.length > 0 ? "\r\n0\r\n\r\n" : "\r\n")]);
  switch (request.contentLength ?? "exact") {
    case "exact":
      if (body.length > 0 || methodOf(request) === "POST") header("Content-Length", String(body.length));
      break;
    case "more":
      header("Content-Length", String(body.length + 10));
      break;
    case "less":
      header("Content-Length", String(Math.max(0, body.length - 3)));
      break;
    case "garbage":
      header("Content-Length", "12abc");
      break;
    case "negative":
      header("Content-Length", "-1");
      break;
    case "huge":
      header("Content-Length", "99999999999999999999");
      break;
    case "twice":
      header("Content-Length", String(body.length));
      header("Content-Length", String(body.length + 1));
      break;
    case "chunked":
      header("Transfer-Encoding", "chunked");
      sent = chunked();
      break;
    case "chunked-raw":
      header("Transfer-Encoding", "chunked");
      break;
    case "chunked-and-length":
      header("Transfer-Encoding", "chunked");
      header("Content-Length", String(body.length));
      sent = chunked();
      break;
  }
  const head = `${methodOf(request)} ${fill(targetOf(request), values)} ${request.version ?? "HTTP/1.1"}\r\n${headers.map(([name, value]) => `${name}: ${value}\r\n`).join("")}\r\n`;
  return Buffer.concat([Buffer.from(head), sent]);
}

function targetOf(request: HttpCase): string {
  if (request.target !== undefined) return request.target;
  const query = [request.tokenInQuery ? "token=<TOKEN>" : undefined, request.query].filter((part) => part !== undefined).join("&");
  const suffix = query === "" ? "" : `?${query}`;
  switch (request.route) {
    case "stores":
      return `/api/stores${suffix}`;
    case "files":
      return `/api/stores/${request.store}/files/${request.path}${suffix}`;
    case "rpc":
      return `/api/stores/${request.store}/rpc${suffix}`;
    case "changes":
      return `/api/stores/${request.store}/changes?dir=${request.path}${query === "" ? "" : `&${query}`}`;
    case "sessions":
      return `/api/stores/${request.store}/sessions${suffix}`;
    case "search":
      return `/api/stores/${request.store}/search?${request.search}${query === "" ? "" : `&${query}`}`;
    case "viewer":
      return `/${request.path}${suffix}`;
  }
}

// The rpc WebSocket

/** How a socket presents the token: in the query, as the subprotocol, as a header, wrongly, or not at all. */
type WsAuth = "query" | "subprotocol" | "bearer" | "none" | "wrong" | "bad-hex" | "upper-hex" | "foreign-origin";

interface WsCase {
  auth: WsAuth;
  path: string;
  messages: Payload[];
  /** Sent at once, without waiting for each reply. */
  pipelined: boolean;
}

const wsCase: fc.Arbitrary<WsCase> = fc.record({
  auth: fc.oneof({ weight: 10, arbitrary: fc.constantFrom<WsAuth>("query", "subprotocol", "bearer") }, { weight: 1, arbitrary: fc.constantFrom<WsAuth>("none", "wrong", "bad-hex", "upper-hex", "foreign-origin") }),
  path: fc.oneof({ weight: 12, arbitrary: fc.constant("/api/stores/<STORE>/rpc") }, { weight: 1, arbitrary: fc.constantFrom("/api/stores/<STORE>/rpc/", "/api/stores/%3CSTORE%3E/rpc", "/api/stores/<STORE>/files/sessions", "/api/stores/x/rpc", "/", "/api/stores/..%2f<STORE>/rpc") }),
  messages: fc.array(fc.oneof({ weight: 200, arbitrary: framePayload }, { weight: 40, arbitrary: otherPayload }, { weight: 1, arbitrary: oversized }), { minLength: 1, maxLength: 6 }),
  pipelined: fc.boolean(),
});

// ---------------------------------------------------------------------------------------------
// Running cases

/** Counts of what the answers were, printed after a run: evidence the cases reach past the door. */
type Tally = Map<string, number>;

function count1(tally: Tally, key: string): void {
  tally.set(key, (tally.get(key) ?? 0) + 1);
}

function tallyLine(tally: Tally): string {
  return [...tally].sort(([a], [b]) => a.localeCompare(b)).map(([key, n]) => `${key} ${n}`).join(", ");
}

interface HttpAnswer {
  status: number;
  text: string;
}

/**
 * How long the server may stay silent before the client stops sending: a request still waiting
 * for body bytes it was promised then ends (a half-close), and the server answers or closes.
 * Ending at once would make Node drop every answer under way (its HTTP server does not allow half-open sockets).
 */
const SILENCE_MS = 150;

/** Sends raw bytes and gathers the answer until the server closes (an event stream: its head). */
function rawExchange(port: number, bytes: Buffer): Promise<{ bytes: Buffer; timedOut: boolean }> {
  return new Promise((resolve) => {
    const parts: Buffer[] = [];
    const socket = connect(port, "127.0.0.1");
    let silence: ReturnType<typeof setTimeout> | undefined;
    const quiet = () => {
      clearTimeout(silence);
      silence = setTimeout(() => socket.end(), SILENCE_MS);
    };
    const finish = (timedOut: boolean) => {
      clearTimeout(timer);
      clearTimeout(silence);
      socket.destroy();
      resolve({ bytes: Buffer.concat(parts), timedOut });
    };
    const timer = setTimeout(() => finish(true), ANSWER_TIMEOUT_MS);
    socket.on("connect", () => socket.write(bytes, quiet));
    let received = 0;
    socket.on("data", (part: Buffer) => {
      parts.push(part);
      received += part.length;
      quiet();
      // A change stream stays open: its head and first comment (in its first bytes) are its answer.
      if (received > 64 << 10) return;
      const text = Buffer.concat(parts).toString("latin1");
      if (/^content-type: text\/event-stream/im.test(text) && text.includes(": watching")) finish(false);
    });
    // The server may answer (413, 400) and close before it has read all that was sent.
    socket.on("error", () => {});
    socket.on("close", () => finish(false));
  });
}

/** The answers in what came back (more than one when a body's wrong length made a second request). */
function parseAnswers(bytes: Buffer, isHead: boolean): { answers: HttpAnswer[]; rest: string } {
  const answers: HttpAnswer[] = [];
  let at = 0;
  while (at < bytes.length) {
    const headEnd = bytes.indexOf("\r\n\r\n", at);
    if (headEnd < 0) break;
    const head = bytes.subarray(at, headEnd).toString("latin1");
    const statusLine = /^HTTP\/1\.[01] (\d{3}) /.exec(head);
    if (!statusLine) break;
    const status = Number(statusLine[1]);
    at = headEnd + 4;
    if (status === 101) {
      answers.push({ status, text: head });
      return { answers, rest: "" };
    }
    if (status < 200) continue;
    const length = /^content-length:\s*(\d+)\s*$/im.exec(head);
    let body: Buffer;
    if (isHead || status === 204 || status === 304) body = Buffer.alloc(0);
    else if (/^transfer-encoding:.*chunked/im.test(head)) {
      const parts: Buffer[] = [];
      for (;;) {
        const lineEnd = bytes.indexOf("\r\n", at);
        const size = lineEnd < 0 ? NaN : parseInt(bytes.subarray(at, lineEnd).toString("latin1"), 16);
        if (!Number.isFinite(size)) break;
        parts.push(bytes.subarray(lineEnd + 2, lineEnd + 2 + size));
        at = lineEnd + 2 + size + 2;
        if (size === 0) break;
      }
      body = Buffer.concat(parts);
    } else if (length) {
      body = bytes.subarray(at, at + Number(length[1]));
      at += body.length;
    } else {
      body = bytes.subarray(at);
      at = bytes.length;
    }
    answers.push({ status, text: `${head}\r\n\r\n${body.toString("latin1")}` });
  }
  return { answers, rest: bytes.subarray(at).toString("latin1") };
}

/**
 * A raw request's answers (status and text), the server's particulars filled in its head; and
 * whether the server kept the connection open past the answer timeout.
 */
export async function rawRequest(server: ServeChild, world: FuzzWorld, head: string, body: Uint8Array = new Uint8Array(0)): Promise<{ answers: HttpAnswer[]; timedOut: boolean }> {
  const reply = await rawExchange(server.port, Buffer.concat([Buffer.from(fill(head, placeholders(server, world))), body]));
  return { answers: parseAnswers(reply.bytes, false).answers, timedOut: reply.timedOut };
}

/** What the client knows: the text it sent and that text percent-decoded (once, twice, thrice), as Latin-1 bytes. */
function knownTo(sent: string): string {
  const decode = (text: string) => text.replace(/%([0-9a-fA-F]{2})/g, (_match, hex: string) => String.fromCharCode(parseInt(hex, 16)));
  const once = decode(sent);
  const twice = decode(once);
  return `${sent}\n${once}\n${twice}\n${decode(twice)}`;
}

/**
 * What an answer may not carry: a sentinel (a file outside the served folders), a server path the
 * request did not name, or a session's content when the request carried no token.
 */
function leaks(answer: string, sent: string, world: FuzzWorld, token: string): string[] {
  const known = knownTo(sent);
  // The store list names the store by its root (the label the viewer shows whoever holds the token).
  answer = answer.replaceAll(JSON.stringify({ label: world.root }).slice(1, -1), "");
  const found: string[] = [];
  for (const marker of [world.outsideMarker, world.unservedMarker]) if (answer.includes(marker)) found.push(`the answer holds ${marker} (a file no client may read)`);
  for (const path of world.serverPaths) {
    const at = answer.indexOf(path);
    if (at >= 0 && !known.includes(path)) found.push(`the answer names the server path ${path}: ${JSON.stringify(answer.slice(Math.max(0, at - 200), at + 200))}`);
  }
  if (answer.includes(world.sessionMarker) && !known.includes(token) && !known.includes(Buffer.from(token).toString("hex"))) found.push("the answer holds a session's content, and the request no token");
  return found;
}

/** Checks made after every case: the server runs and answers, and nothing outside the served folders changed. */
async function afterCase(server: ServeChild, world: FuzzWorld, before: ReadonlyMap<string, string>): Promise<string[]> {
  if (server.exited !== undefined) return [server.exited];
  const problems: string[] = [];
  const health = await fetch(`http://127.0.0.1:${server.port}/api/stores`, { headers: { authorization: `Bearer ${server.token}` }, signal: AbortSignal.timeout(ANSWER_TIMEOUT_MS) }).then(
    async (response) => (response.status === 200 && ((await response.json()) as unknown[]).length === 1 ? undefined : `health check: ${response.status}`),
    (error: Error) => `health check: ${error.message}`,
  );
  if (health !== undefined) problems.push(server.exited ?? health);
  // A call the case left under way (its socket closed first) may hold a temp file for a moment: a change must last.
  if (stateChanges(before, unservedState(world)).length > 0) await new Promise((resolve) => setTimeout(resolve, 1000));
  problems.push(...stateChanges(before, unservedState(world)));
  return problems;
}

/** One HTTP case: never a 5xx, never a leak, the server answers after, nothing outside changed. */
async function runHttpCase(request: HttpCase, server: ServeChild, world: FuzzWorld, before: ReadonlyMap<string, string>, tally: Tally): Promise<void> {
  const bytes = renderHttp(request, placeholders(server, world));
  const reply = await rawExchange(server.port, bytes);
  const { answers, rest } = parseAnswers(reply.bytes, request.method === "HEAD");
  const problems: string[] = [];
  if (reply.timedOut) problems.push(`no answer, and the connection still open, after ${ANSWER_TIMEOUT_MS} ms`);
  const route = request.target === undefined ? request.route : "other";
  if (answers.length === 0) count1(tally, `${route} ${reply.bytes.length === 0 ? "closed" : "unparsed"}`);
  for (const answer of answers) {
    count1(tally, `${route} ${answer.status}`);
    if (answer.status >= 500) problems.push(`status ${answer.status}: ${answer.text.slice(0, 600)}`);
  }
  const sent = bytes.subarray(0, 2 * MIB).toString("latin1");
  problems.push(...leaks(answers.map((answer) => answer.text).join("\n") + rest, sent, world, server.token));
  problems.push(...(await afterCase(server, world, before)));
  if (problems.length > 0) throw new Error(`${problems.join("\n")}\nrequest: ${JSON.stringify(sent.slice(0, 2000))}`);
}

interface WsReply {
  id?: unknown;
  ok?: boolean;
  push?: string;
  result?: { transferId?: unknown; lockId?: unknown } | null;
  error?: { code: string; message: string };
  responses?: WsReply[];
}

/** Error codes whose HTTP status is a 5xx (adapters/server/http.ts): a server fault, not the client's. */
const SERVER_FAULT_CODES = new Set(["io", "corrupt", "unsupported"]);

/**
 * One WebSocket case: the handshake is never a 5xx; every message the server sends is a frame,
 * none leaks, none is an error of a server fault (except "io" for calls after the client's own
 * `close`); each binary message gets its reply; then the health and world checks.
 */
async function runWsCase(socketCase: WsCase, server: ServeChild, world: FuzzWorld, before: ReadonlyMap<string, string>, tally: Tally): Promise<void> {
  const values = placeholders(server, world);
  const problems: string[] = [];
  const sentTexts: string[] = [];
  const auth = socketCase.auth;
  const query = auth === "query" ? "?token=<TOKEN>" : auth === "wrong" ? "?token=wrong" : "";
  const url = fill(`ws://<HOST>${socketCase.path}${query}`, values);
  const protocols = auth === "subprotocol" ? tokenSubprotocols(server.token) : auth === "bad-hex" ? ["sessionkit-rpc", "sessionkit-token.zz"] : auth === "upper-hex" ? ["sessionkit-rpc", `sessionkit-token.${Buffer.from(server.token).toString("hex").toUpperCase()}`] : [];
  const headers: Record<string, string> = auth === "bearer" ? { authorization: `Bearer ${server.token}` } : auth === "foreign-origin" ? { origin: "http://evil.com" } : {};
  sentTexts.push(url, ...protocols, ...Object.values(headers));
  const ws = new WebSocket(url, protocols, { headers });
  const replies: WsReply[] = [];
  let closed = false;
  let wake = () => {};
  ws.on("error", () => {});
  ws.on("message", (data: Buffer, isBinary: boolean) => {
    const text = data.toString("latin1");
    let reply: WsReply;
    try {
      if (!isBinary) throw new Error("a text message");
      reply = decodeFrame(data) as WsReply;
    } catch (error) {
      problems.push(`the server sent what is no frame (${(error as Error).message}): ${text.slice(0, 200)}`);
      return;
    }
    problems.push(...leaks(text, sentTexts.join("\n"), world, server.token));
    replies.push(reply);
    wake();
  });
  ws.on("close", () => {
    closed = true;
    wake();
  });
  const opened = await new Promise<boolean>((resolve) => {
    ws.on("open", () => resolve(true));
    ws.on("unexpected-response", (_request, response) => {
      const status = response.statusCode ?? 0;
      count1(tally, `handshake ${status}`);
      if (status >= 500) problems.push(`the handshake got ${status}`);
      response.resume();
      resolve(false);
    });
    ws.on("close", () => resolve(false));
  });
  if (opened) {
    count1(tally, "open");
    let lastTransfer = "none-yet";
    let lastLock = "none-yet";
    let closedByClient = false;
    const answered = () => replies.filter((reply) => reply.push === undefined).length;
    const waitForReplies = async (wanted: number) => {
      const deadline = performance.now() + ANSWER_TIMEOUT_MS;
      while (answered() < wanted && !closed && performance.now() < deadline) {
        await new Promise<void>((resolve) => {
          wake = resolve;
          setTimeout(resolve, 200);
        });
      }
      if (answered() < wanted && !closed) problems.push(`${wanted - answered()} messages unanswered after ${ANSWER_TIMEOUT_MS} ms`);
    };
    let binaryMessages = 0;
    for (const payload of socketCase.messages) {
      if (closed) break;
      const bytes = payloadBytes(payload, [["<LAST_TRANSFER>", lastTransfer], ["<LAST_LOCK>", lastLock], ...values]);
      const text = Buffer.from(bytes.subarray(0, 2 * MIB)).toString("latin1");
      sentTexts.push(text);
      if (/"op":"close"/.test(text)) closedByClient = true;
      if (payload.kind === "text") ws.send(text, { binary: false });
      else {
        ws.send(bytes, { binary: true });
        binaryMessages++;
      }
      if (!socketCase.pipelined) await waitForReplies(binaryMessages);
      for (const reply of replies.flatMap((each) => each.responses ?? [each])) {
        if (typeof reply.result?.transferId === "string") lastTransfer = reply.result.transferId;
        if (typeof reply.result?.lockId === "string") lastLock = reply.result.lockId;
      }
    }
    await waitForReplies(binaryMessages);
    for (const reply of replies.flatMap((each) => each.responses ?? [each])) {
      if (reply.push !== undefined) continue;
      const code = reply.error?.code;
      count1(tally, reply.ok ? "ok" : `error ${code}`);
      if (code !== undefined && SERVER_FAULT_CODES.has(code) && !(code === "io" && closedByClient)) problems.push(`a reply with error "${code}": ${reply.error!.message}`);
    }
  }
  ws.terminate();
  problems.push(...(await afterCase(server, world, before)));
  if (problems.length > 0) throw new Error(`${problems.join("\n")}\nsent: ${JSON.stringify(sentTexts.join("\n").slice(0, 2000))}`);
}

/**
 * The server's RSS when idle: after a read of each kind (a file by GET, an rpc POST, a WebSocket
 * call), so that what every request loads once is not counted as the cases' work.
 */
async function idleRss(server: ServeChild, world: FuzzWorld): Promise<number> {
  const before = unservedState(world);
  const warmUp = { kind: "frame", message: { protocol: RPC_PROTOCOL, id: 1, call: { op: "read", path: "sessions/--p--/s1.jsonl", maxBytes: MIB } } } as const;
  const get = await fetch(`http://127.0.0.1:${server.port}/api/stores/${server.store}/files/sessions/--p--/s1.jsonl`, { headers: { authorization: `Bearer ${server.token}` } });
  if (get.status !== 200) throw new Error(`warm-up GET: ${get.status}`);
  await get.arrayBuffer();
  const tally: Tally = new Map();
  const post = { route: "rpc", message: warmUp.message, head: false, store: "<STORE>", path: "", tokenInQuery: false, query: undefined, search: "", target: undefined, method: undefined, version: undefined, host: undefined, origin: undefined, authorization: undefined, range: undefined, contentType: undefined, contentLength: undefined, upgrade: undefined, extra: [], lowerCaseNames: false, body: undefined } satisfies HttpCase;
  await runHttpCase(post, server, world, before, tally);
  await runWsCase({ auth: "query", path: "/api/stores/<STORE>/rpc", messages: [warmUp], pipelined: false }, server, world, before, tally);
  if (tally.get("rpc 200") !== 1 || tally.get("ok") !== 1) throw new Error(`warm-up: ${tallyLine(tally)}`);
  await new Promise((resolve) => setTimeout(resolve, 300));
  return server.memory().rss;
}

const mb = (bytes: number): string => (bytes / MIB).toFixed(0);

/**
 * The fuzzing of one world: a read-only server (its viewer built) and a --write one (its viewer
 * not built: its 404s are fuzzed too), each given FUZZ_RUNS raw HTTP cases and as many WebSocket
 * cases. Each run prints one line: cases, failures, the server's peak RSS over idle, the time,
 * and a tally of the answers.
 */
export function describeFuzzedServe(title: string, options: Omit<WorldOptions, "viewerBuilt">): void {
  const timeoutMs = 60_000 + FUZZ_RUNS * 200;
  describe(`${title} (fast-check, seed ${SEED}, ${FUZZ_RUNS} cases per property)`, () => {
    for (const write of [false, true]) {
      const mode = write ? "--write" : "read-only";
      describe(mode, () => {
        let world: FuzzWorld;
        let server: ServeChild;
        let before: Map<string, string>;
        let idle: number;

        beforeAll(async () => {
          world = await makeWorld({ ...options, viewerBuilt: !write });
          server = await startServeChild(world, { write });
          before = unservedState(world);
          idle = await idleRss(server, world);
        });
        afterAll(async () => {
          try {
            await server?.stop();
          } finally {
            await world?.cleanup();
          }
        });

        const run = async <T>(kind: string, cases: fc.Arbitrary<T>, runCase: (value: T, tally: Tally) => Promise<void>) => {
          const tally: Tally = new Map();
          server.resetPeak();
          const started = performance.now();
          await fc.assert(
            fc.asyncProperty(cases, (value) => runCase(value, tally)),
            settings(FUZZ_RUNS),
          );
          const overIdle = server.memory().peak - idle;
          console.log(`fuzz: ${title}, ${mode}, ${kind}: ${FUZZ_RUNS} cases, 0 failures, peak RSS ${mb(overIdle)} MB over idle (${mb(idle)} MB), ${((performance.now() - started) / 1000).toFixed(1)} s; answers: ${tallyLine(tally)}`);
          expect(overIdle).toBeLessThanOrEqual(PEAK_OVER_IDLE_BOUND);
        };

        it(
          "raw HTTP requests: never a 5xx or a leak; the server answers after each; nothing outside the served folders changes; memory bounded",
          () => run("HTTP", httpCase, (request, tally) => runHttpCase(request, server, world, before, tally)),
          timeoutMs,
        );

        it(
          "rpc WebSocket messages: never a 5xx handshake, a server-fault error or a leak; every message answered; the same checks after each",
          () => run("WebSocket", wsCase, (socketCase, tally) => runWsCase(socketCase, server, world, before, tally)),
          timeoutMs,
        );
      });
    }
  });
}
