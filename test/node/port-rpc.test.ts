import { MessageChannel, type MessagePort } from "node:worker_threads";
import { afterEach, describe, expect, it, vi } from "vitest";
import { memoryStorage } from "../../adapters/memory/index.js";
import {
  RPC_PROTOCOL,
  handleStorageRequest,
  rpcClientStorage,
  serveStorage,
  type MessageEndpoint,
  type RpcClientOptions,
  type RpcRequest,
} from "../../adapters/rpc/index.js";
import { StorageError, type StoragePort } from "../../src/port.js";
import { checksum, describePortConformance, expectStorageError, pseudoRandomBytes } from "../shared/port-conformance.js";

const text = (s: string) => new TextEncoder().encode(s);
const KiB = 1024;
const MiB = 1024 * KiB;

const openPorts: MessagePort[] = [];

afterEach(() => {
  for (const port of openPorts.splice(0)) port.close();
});

/** A client and a server joined by a node:worker_threads MessageChannel (structured clone, like a Worker). */
function overMessageChannel(server: StoragePort, options?: RpcClientOptions) {
  const { port1, port2 } = new MessageChannel();
  openPorts.push(port1, port2);
  const stop = serveStorage(server, port2 as unknown as MessageEndpoint);
  const client = rpcClientStorage(port1 as unknown as MessageEndpoint, options);
  return { client, clientEnd: port1, serverEnd: port2, stop };
}

/** A client whose requests go through a request function, cloned both ways like Electron's invoke. */
function overRequestFunction(server: StoragePort, options?: RpcClientOptions) {
  return rpcClientStorage((request) => handleStorageRequest(server, structuredClone(request)).then(structuredClone), options);
}

describePortConformance("rpc over a MessageChannel (memory behind it)", async () => {
  const { client } = overMessageChannel(memoryStorage());
  return { port: client, cleanup: () => client.close() };
});

// Small pieces, so reads, writes and large appends in the suite all travel staged.
describePortConformance("rpc over a request function, 100 KB pieces (memory behind it)", async () => {
  const client = overRequestFunction(memoryStorage(), { chunkBytes: 100_000 });
  return { port: client, cleanup: () => client.close() };
});

/** Records every message one end posts. */
function recordPosts(end: MessagePort): unknown[][] {
  const posts: unknown[][] = [];
  const post = end.postMessage.bind(end);
  vi.spyOn(end, "postMessage").mockImplementation((...args: unknown[]) => {
    posts.push(args);
    post(args[0]);
  });
  return posts;
}

/** The single requests or responses a message carries (a batch carries several). */
function unbatch(message: unknown): unknown[] {
  const { requests, responses } = message as { requests?: unknown[]; responses?: unknown[] };
  return requests ?? responses ?? [message];
}

function payloadBytes(message: unknown): number {
  return unbatch(message).reduce<number>((sum, single) => {
    const call = (single as RpcRequest).call as { data?: Uint8Array; content?: { data?: Uint8Array } };
    const result = (single as { result?: { data?: Uint8Array } }).result;
    return sum + ((call?.data ?? call?.content?.data ?? result?.data)?.byteLength ?? 0);
  }, 0);
}

const opsOf = (posts: unknown[][]) => posts.map(([message]) => unbatch(message).map((single) => (single as RpcRequest).call.op));

describe("rpc adapter", () => {
  it("sends bytes as copies in pieces of at most chunkBytes, and a big write commits in one port.write", async () => {
    const server = memoryStorage();
    const write = vi.spyOn(server, "write");
    const { client, clientEnd, serverEnd } = overMessageChannel(server, { chunkBytes: MiB });
    const requests = recordPosts(clientEnd);
    const replies = recordPosts(serverEnd);
    const data = pseudoRandomBytes(3.5 * MiB, 7);

    await client.write("big.bin", data);
    const read = await client.read("big.bin");

    expect(checksum(read!)).toBe(checksum(data));
    expect(write).toHaveBeenCalledTimes(1);
    expect(opsOf(requests).flat()).toEqual(["stage", "stage", "stage", "stage", "write", "read", "readMore", "readMore", "readMore"]);
    for (const args of [...requests, ...replies]) {
      expect(args).toHaveLength(1); // no transfer list
      expect(payloadBytes(args[0])).toBeLessThanOrEqual(MiB);
    }
    // Pieces are exact-size copies, not views that would clone a whole buffer.
    for (const [message] of [...requests, ...replies]) {
      const call = (message as { call?: { data?: Uint8Array } }).call;
      const result = (message as { result?: { data?: Uint8Array } }).result;
      for (const data of [call?.data, result?.data]) if (data) expect(data.buffer.byteLength).toBe(data.byteLength);
    }
  });

  it("calls issued together reach the served port in call order, a staged append's included", async () => {
    const server = memoryStorage();
    const started: string[] = [];
    for (const op of ["append", "write", "sync", "read"] as const) {
      const original = server[op].bind(server) as (...args: unknown[]) => Promise<unknown>;
      vi.spyOn(server, op).mockImplementation(((path: string, ...rest: unknown[]) => {
        started.push(`${op} ${path}`);
        return original(path, ...rest);
      }) as never);
    }
    const { client } = overMessageChannel(server, { chunkBytes: 64 * KiB });
    await client.write("a", text("0"));
    started.length = 0;

    // flush() issues its append and the sync without awaiting in between.
    await Promise.all([client.append("a", text("1")), client.sync("a")]);
    const big = pseudoRandomBytes(200 * KiB, 3); // travels in staged pieces first
    const [, , , readBack] = await Promise.all([client.append("a", big), client.sync("a"), client.append("b", text("x")), client.read("a")]);

    expect(started).toEqual(["append a", "sync a", "append a", "sync a", "append b", "read a"]);
    expect(checksum(readBack!)).toBe(checksum(new Uint8Array([...text("01"), ...big])));
  });

  it("calls made in one turn travel as one message each way, within chunkBytes", async () => {
    const server = memoryStorage();
    const { client, clientEnd, serverEnd } = overMessageChannel(server, { chunkBytes: MiB });
    await client.write("a", text("0"));
    const requests = recordPosts(clientEnd);
    const replies = recordPosts(serverEnd);

    await Promise.all([client.append("a", text("1")), client.sync("a")]);
    expect(opsOf(requests)).toEqual([["append", "sync"]]);
    expect(replies).toHaveLength(1);

    requests.length = 0;
    const piece = pseudoRandomBytes(300 * KiB, 5);
    await Promise.all(Array.from({ length: 10 }, () => client.append("a", piece)));
    expect(opsOf(requests)).toEqual([...Array(3).fill(["append", "append", "append"]), ["append"]]);
    for (const [message] of [...requests, ...replies]) expect(payloadBytes(message)).toBeLessThanOrEqual(MiB);
    expect(await client.stat("a")).toMatchObject({ size: 2 + 10 * piece.length });
  });

  it("the server answers each request of a batch on its own: a malformed one fails alone", async () => {
    const server = memoryStorage();
    const { clientEnd } = overMessageChannel(server);
    const answer = new Promise<unknown>((resolve) => clientEnd.once("message", resolve));
    clientEnd.postMessage({
      protocol: RPC_PROTOCOL,
      requests: [
        { protocol: RPC_PROTOCOL, id: 1, call: { op: "append", path: "a", content: { kind: "inline", data: text("x") } } },
        { protocol: RPC_PROTOCOL, id: 2, call: { op: "append", path: "../a", content: { kind: "inline", data: text("y") } } },
        { protocol: RPC_PROTOCOL, id: 3, call: { op: "format-disk" } },
        { protocol: RPC_PROTOCOL, id: 4, call: { op: "read", path: "a", maxBytes: 10 } },
      ],
    });
    expect(await answer).toMatchObject({
      protocol: RPC_PROTOCOL,
      responses: [
        { id: 1, ok: true },
        { id: 2, ok: false, error: { code: "invalid" } },
        { id: 3, ok: false, error: { code: "invalid" } },
        { id: 4, ok: true, result: { data: text("x") } },
      ],
    });
    const refused = new Promise<unknown>((resolve) => clientEnd.once("message", resolve));
    clientEnd.postMessage({ protocol: RPC_PROTOCOL, requests: "all of them" });
    expect(await refused).toMatchObject({ id: null, ok: false, error: { code: "invalid" } });
  });

  it("one watchdog timer serves every pending call", async () => {
    const setTimeoutSpy = vi.spyOn(globalThis, "setTimeout");
    const silent = rpcClientStorage(() => new Promise(() => {}), { timeoutMs: 100 });
    const calls = Array.from({ length: 50 }, (_, i) => silent.stat(`f${i}`));
    const errors = await Promise.all(calls.map((call) => expectStorageError(call, "io")));
    expect(errors[49]!.message).toMatch(/rpc stat f49: no reply .* within 100 ms/);
    // One timer for the earliest deadline, and at most one more for calls made a moment later.
    expect(setTimeoutSpy.mock.calls.length).toBeLessThanOrEqual(2);
  });

  it("keeps StorageError codes, messages and paths across the channel", async () => {
    const server = memoryStorage();
    const { client } = overMessageChannel(server);
    await server.append("f", text("abc"));

    const direct = await expectStorageError(server.truncate("f", 10), "invalid");
    const remote = await expectStorageError(client.truncate("f", 10), "invalid");
    expect(remote.message).toBe(direct.message);
    expect(remote.path).toBe("f");
    await expectStorageError(client.truncate("missing", 0), "not-found");
    await expectStorageError(client.read("../escape"), "invalid");
  });

  it("reports a server port failure that is not a StorageError as 'io'", async () => {
    const server = memoryStorage();
    vi.spyOn(server, "stat").mockRejectedValue(new TypeError("disk on fire"));
    const { client } = overMessageChannel(server);
    const error = await expectStorageError(client.stat("x"), "io");
    expect(error.message).toContain("disk on fire");
  });

  it("a peer that never answers fails the call with 'io' naming it, after the timeout", async () => {
    const { port1 } = new MessageChannel(); // nobody listens on port2
    openPorts.push(port1);
    const client = rpcClientStorage(port1 as unknown as MessageEndpoint, { timeoutMs: 150 });
    const started = performance.now();
    const error = await expectStorageError(client.stat("sessions/a.jsonl"), "io");
    expect(error.message).toMatch(/rpc stat sessions\/a\.jsonl: no reply .* within 150 ms/);
    expect(performance.now() - started).toBeLessThan(2_000);

    const silent = rpcClientStorage(() => new Promise(() => {}), { timeoutMs: 100 });
    await expectStorageError(silent.append("a", text("x")), "io");
  });

  it("a closed channel fails pending and later calls with 'io' at once", async () => {
    const { port1, port2 } = new MessageChannel();
    openPorts.push(port1);
    const client = rpcClientStorage(port1 as unknown as MessageEndpoint, { timeoutMs: 60_000 });
    const pending = client.read("x");
    port2.close();
    const error = await expectStorageError(pending, "io");
    expect(error.message).toContain("rpc read x");
    await expectStorageError(client.list(""), "io");
  });

  it("a worker 'error' event fails pending and later calls with 'io'", async () => {
    const worker = Object.assign(new EventTarget(), { postMessage: () => {} });
    const client = rpcClientStorage(worker, { timeoutMs: 60_000 });
    const pending = client.stat("x");
    worker.dispatchEvent(Object.assign(new Event("error"), { message: "worker script failed to load" }));
    const error = await expectStorageError(pending, "io");
    expect(error.message).toContain("worker script failed to load");
    await expectStorageError(client.stat("y"), "io");
  });

  it("the server rejects malformed requests as 'invalid'", async () => {
    const server = memoryStorage();
    const noId = await handleStorageRequest(server, { hello: "world" });
    expect(noId).toMatchObject({ ok: false, id: null, error: { code: "invalid" } });
    const badPath = await handleStorageRequest(server, { protocol: RPC_PROTOCOL, id: 7, call: { op: "read", path: 5, maxBytes: 1 } });
    expect(badPath).toMatchObject({ ok: false, id: 7, error: { code: "invalid" } });
    const badBytes = await handleStorageRequest(server, {
      protocol: RPC_PROTOCOL,
      id: 8,
      call: { op: "append", path: "a", content: { kind: "inline", data: "not bytes" } },
    });
    expect(badBytes).toMatchObject({ ok: false, id: 8, error: { code: "invalid" } });
    expect(await server.stat("a")).toBeNull();
    const unknownOp = await handleStorageRequest(server, { protocol: RPC_PROTOCOL, id: 9, call: { op: "format-disk" } });
    expect(unknownOp).toMatchObject({ ok: false, id: 9, error: { code: "invalid" } });
  });

  it("the server refuses staged pieces out of order and commits of incomplete uploads", async () => {
    const server = memoryStorage();
    const stage = (offset: number) =>
      handleStorageRequest(server, {
        protocol: RPC_PROTOCOL,
        id: 1,
        call: { op: "stage", transferId: "t", offset, data: new Uint8Array(4) },
      });
    expect(await stage(0)).toMatchObject({ ok: true });
    expect(await stage(8)).toMatchObject({ ok: false, error: { code: "invalid" } });
    const commit = await handleStorageRequest(server, {
      protocol: RPC_PROTOCOL,
      id: 2,
      call: { op: "write", path: "w", content: { kind: "staged", transferId: "t", size: 8 } },
    });
    expect(commit).toMatchObject({ ok: false, error: { code: "invalid" } });
    expect(await server.stat("w")).toBeNull();
  });

  it("the client rejects malformed replies as 'invalid'", async () => {
    const lyingServer = (result: unknown) => async (request: RpcRequest) => ({ protocol: RPC_PROTOCOL, id: request.id, ok: true, result });
    await expectStorageError(rpcClientStorage(lyingServer({ size: "big", mtimeMs: 0 })).stat("x"), "invalid");
    await expectStorageError(rpcClientStorage(lyingServer([{ name: "a", kind: "socket", size: 0, mtimeMs: 0 }])).list(""), "invalid");
    await expectStorageError(rpcClientStorage(async () => "not a reply").read("x"), "invalid");
    const wrongError = async (request: RpcRequest) => ({ protocol: RPC_PROTOCOL, id: request.id, ok: false, error: { code: "fatal" } });
    await expectStorageError(rpcClientStorage(wrongError).remove("x"), "invalid");
  });

  it("ignores unrelated traffic on a shared endpoint", async () => {
    const { client, clientEnd, serverEnd } = overMessageChannel(memoryStorage());
    serverEnd.postMessage({ type: "app-message" });
    clientEnd.postMessage("hello");
    await client.append("a", text("x"));
    expect(new TextDecoder().decode((await client.read("a"))!)).toBe("x");
  });

  it("forwards locks: a second client of the same port gets 'locked' until the first releases", async () => {
    const server = memoryStorage();
    const first = overMessageChannel(server).client;
    const second = overRequestFunction(server);
    const lock = await first.acquireLock("sessions/a");
    await expectStorageError(second.acquireLock("sessions/a"), "locked");
    await lock.release();
    await (await second.acquireLock("sessions/a")).release();
  });

  it("reports a port without sync or locks as 'unsupported'", async () => {
    const { sync: _sync, acquireLock: _lock, ...bare } = memoryStorage();
    const client = overRequestFunction(bare as StoragePort);
    await expectStorageError(client.sync("a"), "unsupported");
    await expectStorageError(client.acquireLock("a"), "unsupported");
  });

  it("after close every call fails with 'io'", async () => {
    const { client } = overMessageChannel(memoryStorage());
    await client.close();
    await client.close();
    const error = await expectStorageError(client.stat("a"), "io");
    expect(error).toBeInstanceOf(StorageError);
    expect(error.message).toContain("closed");
  });
});
