/**
 * `sessionkit serve` fuzzed (issue 22): fast-check sends raw HTTP requests (any method, path,
 * encoding, Host, Origin, Range, Authorization, Content-Type, Content-Length, body, rpc frames
 * well-formed or not) and rpc WebSocket messages (every op with any arguments, batches, broken
 * frames) to a `startServe` server in a child process, read-only and with --write. After every
 * case: no answer was a 5xx (nor an rpc error of a server fault), none carried a file from outside
 * the served folders or a server path, the server answers a health request, and no file outside
 * the served folders changed or appeared. After each run: the server's peak RSS over idle stays
 * under 200 MB.
 *
 * A few seconds' worth by default; SESSIONKIT_FUZZ_RUNS=<cases per property> for a long run (each
 * of the four properties runs that many). The seed is fixed (printed on failure with the shrunk
 * case); FAST_CHECK_SEED=<n> explores others. Symbolic links out of the root: fuzz-serve-links.test.ts.
 */
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { encodeFrame } from "../../adapters/rpc/frame.js";
import { RPC_PROTOCOL } from "../../adapters/rpc/protocol.js";
import { describeFuzzedServe, makeWorld, rawRequest, startServeChild, type FuzzWorld, type ServeChild } from "./fuzz-helpers.js";

describeFuzzedServe("sessionkit serve, fuzzed", {});

/** Each a request the fuzzer found a fault with; each failed before its fix (see the commit). */
describe("what the fuzzer found, one request each", () => {
  let world: FuzzWorld;
  let server: ServeChild;

  beforeAll(async () => {
    world = await makeWorld({ viewerBuilt: false });
    server = await startServeChild(world, { write: true });
  });
  afterAll(async () => {
    try {
      await server?.stop();
    } finally {
      await world?.cleanup();
    }
  });

  const frame = (call: Record<string, unknown>): [string, Uint8Array] => {
    const body = encodeFrame({ protocol: RPC_PROTOCOL, id: 1, call });
    return [`POST /api/stores/<STORE>/rpc HTTP/1.1\r\nHost: <HOST>\r\nAuthorization: Bearer <TOKEN>\r\nConnection: close\r\nContent-Length: ${body.length}\r\n\r\n`, body];
  };
  const get = (target: string) => `GET ${target} HTTP/1.1\r\nHost: <HOST>\r\nAuthorization: Bearer <TOKEN>\r\nConnection: close\r\n\r\n`;

  it("a request target no URL can be made of (`GET http://[`), plain or as an upgrade: 400, and the server goes on (it exited)", async () => {
    for (const request of [get("http://["), "GET http://[ HTTP/1.1\r\nHost: <HOST>\r\nUpgrade: websocket\r\nConnection: Upgrade\r\nSec-WebSocket-Key: dGhlIHNhbXBsZSBub25jZQ==\r\nSec-WebSocket-Version: 13\r\n\r\n"]) {
      const { answers } = await rawRequest(server, world, request);
      expect(answers.map((answer) => answer.status)).toEqual([400]);
      expect(server.exited).toBeUndefined();
      expect((await rawRequest(server, world, get("/api/stores"))).answers[0]?.status).toBe(200);
    }
  });

  it("the page of a server whose viewer is not built: a 404 that names no directory of the server's (it named the viewer's index.html)", async () => {
    const [answer] = (await rawRequest(server, world, get("/"))).answers;
    expect(answer?.status).toBe(404);
    expect(answer?.text).toContain("the viewer is not built");
    expect(answer?.text).not.toContain(world.base);
  });

  it("a name too long for the file system: 400 'invalid', named by its storage path only (it was 500 'io', with the server's path hidden)", async () => {
    const longName = `sessions/--p--/${"a".repeat(300)}`;
    const cases = [
      frame({ op: "stat", path: longName }),
      frame({ op: "list", dir: longName }),
      frame({ op: "read", path: longName, maxBytes: 10 }),
      frame({ op: "write", path: longName, content: { kind: "inline", data: new Uint8Array([1]) } }),
      [get(`/api/stores/<STORE>/files/${longName}`)] as const,
    ];
    for (const [head, body] of cases) {
      const [answer] = (await rawRequest(server, world, head, body)).answers;
      expect(answer?.status, answer?.text).toBe(400);
      expect(answer?.text).toContain(longName);
      expect(answer?.text).not.toContain(world.base);
    }
  });

  it("a refused WebSocket upgrade whose client goes on sending: the server closes the connection (it kept it, unread, and could not stop)", async () => {
    const upgrade = "GET /api/stores/<STORE>/rpc HTTP/1.1\r\nHost: <HOST>\r\nUpgrade: websocket\r\nConnection: Upgrade\r\nSec-WebSocket-Key: dGhlIHNhbXBsZSBub25jZQ==\r\nSec-WebSocket-Version: 13\r\n\r\n";
    const { answers, timedOut } = await rawRequest(server, world, upgrade, new Uint8Array(16 << 20));
    expect(timedOut).toBe(false);
    // The close resets a connection with bytes unread: the client may lose the 401 (as with ws's own refusals).
    expect(answers.filter((answer) => answer.status !== 401)).toEqual([]);
  }, 60_000);
});
