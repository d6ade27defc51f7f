/**
 * `sessionkit serve` against hostile requests over real HTTP: each is refused with its status,
 * nothing is written, nothing outside the served paths is read, and the server answers afterwards.
 */
import { readdir, readFile, writeFile, mkdir, mkdtemp, rm } from "node:fs/promises";
import { request as httpRequest } from "node:http";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { WebSocket } from "ws";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { encodeFrame } from "../../adapters/rpc/frame.js";
import { RPC_PROTOCOL } from "../../adapters/rpc/protocol.js";
import { tokenSubprotocols } from "../../adapters/rpc/websocket.js";
import { serveTempStore, type ServedStore } from "./serve-helpers.js";

const SECRET = "sk-ant-do-not-leak";
let readOnly: ServedStore;
let writable: ServedStore;
let before: string;

interface Reply {
  status: number;
  body: string;
}

/** A raw HTTP request: any Host, Origin, path bytes or body, as a hostile page or script would send. */
function send(served: ServedStore, options: { method?: string; path: string; headers?: Record<string, string>; body?: Uint8Array | string; chunked?: boolean }): Promise<Reply> {
  return new Promise((resolve, reject) => {
    const request = httpRequest(
      { host: "127.0.0.1", port: served.server.port, method: options.method ?? "GET", path: options.path, headers: { host: `127.0.0.1:${served.server.port}`, ...options.headers } },
      (response) => {
        const parts: Buffer[] = [];
        response.on("data", (part: Buffer) => parts.push(part));
        response.on("end", () => resolve({ status: response.statusCode ?? 0, body: Buffer.concat(parts).toString("latin1") }));
        response.on("error", reject);
      },
    );
    request.on("error", reject);
    if (options.body !== undefined) request.write(options.body);
    request.end();
  });
}

const withToken = (served: ServedStore, path: string) => `${path}${path.includes("?") ? "&" : "?"}token=${served.server.token}`;
const files = (served: ServedStore, rest: string) => withToken(served, `/api/stores/${served.store}/files/${rest}`);
const rpc = (served: ServedStore) => withToken(served, `/api/stores/${served.store}/rpc`);
const call = (op: Record<string, unknown>) => encodeFrame({ protocol: RPC_PROTOCOL, id: 1, call: op });

async function tree(root: string): Promise<string> {
  const entries = await readdir(root, { recursive: true });
  const parts = await Promise.all(entries.sort().map(async (entry) => `${entry}:${await readFile(join(root, entry)).then((b) => b.toString("base64"), () => "dir")}`));
  return parts.join("\n");
}

function upgrade(served: ServedStore, path: string, headers: Record<string, string> = {}, protocols: string[] = []): Promise<{ status: number } | { open: WebSocket }> {
  return new Promise((resolve) => {
    const ws = new WebSocket(`ws://127.0.0.1:${served.server.port}${path}`, protocols, { headers });
    ws.on("open", () => resolve({ open: ws }));
    ws.on("unexpected-response", (_request, response) => resolve({ status: response.statusCode ?? 0 }));
    ws.on("error", () => {});
  });
}

beforeAll(async () => {
  readOnly = await serveTempStore();
  writable = await serveTempStore({ write: true, maxMessageBytes: 1 << 20 });
  for (const served of [readOnly, writable]) {
    await writeFile(join(served.root, "auth.json"), SECRET);
    await mkdir(join(served.root, "sessions", "--p--"), { recursive: true });
    await writeFile(join(served.root, "sessions", "--p--", "s.jsonl"), '{"type":"session","version":3,"id":"s","timestamp":"2026-01-01T00:00:00.000Z","cwd":"/p"}\n');
  }
  before = await tree(readOnly.root);
});

afterAll(async () => {
  await readOnly.cleanup();
  await writable.cleanup();
});

describe("sessionkit serve refuses", () => {
  it("a request without the token, or with a wrong one: 401, for the API, files and the WebSocket", async () => {
    for (const path of ["/api/stores", `/api/stores/${readOnly.store}/files/sessions/--p--/s.jsonl`, `/api/stores/${readOnly.store}/changes`]) {
      expect((await send(readOnly, { path })).status, path).toBe(401);
      expect((await send(readOnly, { path: `${path}?token=wrong` })).status, path).toBe(401);
      expect((await send(readOnly, { path, headers: { authorization: `Bearer ${readOnly.server.token}x` } })).status, path).toBe(401);
    }
    expect(await upgrade(readOnly, `/api/stores/${readOnly.store}/rpc`)).toEqual({ status: 401 });
    expect(await upgrade(readOnly, `/api/stores/${readOnly.store}/rpc?token=${readOnly.server.token.slice(1)}`)).toEqual({ status: 401 });
    expect(await upgrade(readOnly, `/api/stores/${readOnly.store}/rpc`, {}, tokenSubprotocols(readOnly.server.token.slice(1)))).toEqual({ status: 401 });
    // Not hex: no token at all (Buffer.from(…, "hex") would read the pairs before the first bad one).
    const [rpcName, tokenName] = tokenSubprotocols(readOnly.server.token);
    expect(await upgrade(readOnly, `/api/stores/${readOnly.store}/rpc`, {}, [rpcName!, `${tokenName}zz`])).toEqual({ status: 401 });
  });

  it("the token as a WebSocket subprotocol (browsers set no headers on a WebSocket): admitted; the handshake answers the rpc's name, not the token", async () => {
    const socket = await upgrade(readOnly, `/api/stores/${readOnly.store}/rpc`, {}, tokenSubprotocols(readOnly.server.token));
    if (!("open" in socket)) throw new Error(`no WebSocket: ${socket.status}`);
    expect(socket.open.protocol).toBe("sessionkit-rpc");
    socket.open.close();
  });

  it("no cookie: the printed URL sets none, and the cookie earlier versions set admits nothing (cookies ignore ports: any local service would get it)", async () => {
    const page = await fetch(`${readOnly.server.origin}/api/stores?token=${readOnly.server.token}`);
    expect(page.status).toBe(200);
    expect(page.headers.get("set-cookie")).toBeNull();
    expect((await send(readOnly, { path: "/api/stores", headers: { cookie: `sessionkit-${readOnly.server.port}=${readOnly.server.token}` } })).status).toBe(401);
  });

  it("the viewer's files (no data in them) need no token, so a reload works; the API does; a foreign Host or Origin is refused for both", async () => {
    const viewerDir = await mkdtemp(join(tmpdir(), "sessionkit-viewer-"));
    await writeFile(join(viewerDir, "index.html"), "<!doctype html><title>viewer</title>");
    const withViewer = await serveTempStore({ viewerDir, allowOrigins: ["http://localhost:5173"] });
    try {
      for (const path of ["/", "/index.html", "/?token=wrong"]) {
        const reply = await send(withViewer, { path });
        expect(reply.status, path).toBe(200);
        expect(reply.body).toContain("<title>viewer</title>");
      }
      expect((await send(withViewer, { path: "/api/stores" })).status).toBe(401);
      expect((await send(withViewer, { path: "/api/stores", headers: { authorization: `Bearer ${withViewer.server.token}` } })).status).toBe(200);
      expect((await send(withViewer, { path: "/", headers: { host: `attacker.example:${withViewer.server.port}` } })).status).toBe(403);
      expect((await send(withViewer, { path: "/", headers: { origin: "http://attacker.example" } })).status).toBe(403);
      // A preflight carries no credentials: an allowed origin's is answered without the token, a foreign one's refused.
      const preflight = { "access-control-request-method": "GET", "access-control-request-headers": "authorization, range" };
      expect((await send(withViewer, { method: "OPTIONS", path: `/api/stores/${withViewer.store}/files/sessions/x`, headers: { origin: "http://localhost:5173", ...preflight } })).status).toBe(204);
      expect((await send(withViewer, { method: "OPTIONS", path: "/api/stores", headers: { origin: "http://attacker.example", ...preflight } })).status).toBe(403);
    } finally {
      await withViewer.cleanup();
      await rm(viewerDir, { recursive: true, force: true });
    }
  });

  it("a foreign Host (DNS rebinding) or a foreign Origin: 403, even with the token", async () => {
    const ok = await send(readOnly, { path: withToken(readOnly, "/api/stores") });
    expect(ok.status).toBe(200);
    expect((await send(readOnly, { path: withToken(readOnly, "/api/stores"), headers: { host: `attacker.example:${readOnly.server.port}` } })).status).toBe(403);
    expect((await send(readOnly, { path: withToken(readOnly, "/api/stores"), headers: { host: "127.0.0.1:1" } })).status).toBe(403);
    expect((await send(readOnly, { path: withToken(readOnly, "/api/stores"), headers: { origin: "http://attacker.example" } })).status).toBe(403);
    expect((await send(readOnly, { path: withToken(readOnly, "/api/stores"), headers: { origin: "null" } })).status).toBe(403);
    expect(await upgrade(readOnly, withToken(readOnly, `/api/stores/${readOnly.store}/rpc`), { origin: "http://attacker.example" })).toEqual({ status: 403 });
    const bearer = `Bearer ${readOnly.server.token}`;
    expect((await send(readOnly, { path: "/api/stores", headers: { authorization: bearer } })).status).toBe(200);
    expect((await send(readOnly, { path: "/api/stores", headers: { authorization: bearer, origin: "http://attacker.example" } })).status).toBe(403);
    expect(await upgrade(readOnly, `/api/stores/${readOnly.store}/rpc`, { origin: "http://attacker.example" }, tokenSubprotocols(readOnly.server.token))).toEqual({ status: 403 });
  });

  it("paths with '..', absolute, encoded or backslashed, and paths outside sessions/ and blobs/: 400 or 403, the secret never sent", async () => {
    const attempts = [
      ["sessions/../auth.json", 403],
      ["sessions/%2e%2e/auth.json", 403],
      ["sessions%2F..%2Fauth.json", 400],
      ["%2e%2e%2fauth.json", 400],
      ["sessions/..%2F..%2Fauth.json", 400],
      ["sessions%5C..%5Cauth.json", 400],
      ["/etc/passwd", 400],
      ["%2Fetc%2Fpasswd", 400],
      ["auth.json", 403],
      ["sessions/%ZZ", 400],
    ] as const;
    for (const [path, status] of attempts) {
      const reply = await send(readOnly, { path: files(readOnly, path) });
      expect(reply.status, path).toBe(status);
      expect(reply.body, path).not.toContain(SECRET);
    }
    for (const path of ["../auth.json", "/etc/passwd", "auth.json", "sessions/../auth.json", "C:/x"]) {
      const reply = await send(readOnly, { method: "POST", path: rpc(readOnly), body: call({ op: "read", path, maxBytes: 1000 }) });
      expect([400, 403], path).toContain(reply.status);
      expect(reply.body, path).not.toContain(SECRET);
    }
  });

  it("a write on a read-only server: 403 over POST, 'read-only' over the WebSocket; nothing written", async () => {
    const data = new TextEncoder().encode('{"type":"message"}\n');
    for (const op of [
      { op: "append", path: "sessions/--p--/s.jsonl", content: { kind: "inline", data } },
      { op: "write", path: "sessions/--p--/new.jsonl", content: { kind: "inline", data } },
      { op: "truncate", path: "sessions/--p--/s.jsonl", size: 0 },
      { op: "remove", path: "sessions/--p--/s.jsonl" },
    ]) {
      const reply = await send(readOnly, { method: "POST", path: rpc(readOnly), body: call(op) });
      expect(reply.status, op.op).toBe(403);
      expect(reply.body).toContain("read-only");
    }
    const client = readOnly.client();
    await expect(client.append("sessions/--p--/s.jsonl", data)).rejects.toMatchObject({ code: "read-only" });
    await expect(client.acquireLock("sessions/--p--/s.jsonl")).rejects.toMatchObject({ code: "read-only" });
    expect(await tree(readOnly.root)).toBe(before);
  });

  it("a huge or malformed body: 413 or 400; a WebSocket message over the limit closes that socket (1009); nothing written", async () => {
    const huge = new Uint8Array((1 << 20) + 10);
    expect((await send(writable, { method: "POST", path: rpc(writable), body: huge })).status).toBe(413);
    expect((await send(writable, { method: "POST", path: rpc(writable), body: huge, headers: { "transfer-encoding": "chunked" } })).status).toBe(413);
    for (const body of [new Uint8Array([1, 2]), new TextEncoder().encode("not a frame at all"), encodeFrame({ protocol: RPC_PROTOCOL, id: 1, call: { op: "format-disk" } })]) {
      expect((await send(writable, { method: "POST", path: rpc(writable), body })).status).toBe(400);
    }
    const lying = encodeFrame({ protocol: RPC_PROTOCOL, id: 1, call: { op: "append", path: "sessions/x", content: { kind: "inline", data: new Uint8Array(4) } } });
    lying[lying.length - 5] = 0x39; // the byte range in the JSON now points past the end
    expect((await send(writable, { method: "POST", path: rpc(writable), body: lying.subarray(0, lying.length - 4) })).status).toBe(400);
    expect((await send(writable, { method: "POST", path: rpc(writable), body: call({ op: "acquireLock", key: "sessions/x" }) })).status).toBe(400);

    const socket = await upgrade(writable, withToken(writable, `/api/stores/${writable.store}/rpc`));
    if (!("open" in socket)) throw new Error(`no WebSocket: ${socket.status}`);
    const closed = new Promise<number>((resolve) => socket.open.on("close", (code) => resolve(code)));
    socket.open.send(encodeFrame({ protocol: RPC_PROTOCOL, id: 1, call: { op: "write", path: "sessions/big", content: { kind: "inline", data: huge } } }));
    expect(await closed).toBe(1009);
    expect(await readdir(join(writable.root, "sessions"))).toEqual(["--p--"]);
  });

  it("and goes on answering afterwards", async () => {
    for (const served of [readOnly, writable]) {
      expect((await send(served, { path: withToken(served, "/api/stores") })).status).toBe(200);
      const client = served.client();
      expect(await client.list("sessions")).toMatchObject([{ name: "--p--", kind: "dir" }]);
    }
    expect(await tree(readOnly.root)).toBe(before);
  });
});
