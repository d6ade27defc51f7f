import { MessageChannel, type MessagePort } from "node:worker_threads";
import { afterEach, describe, expect, it, vi } from "vitest";
import { memoryStorage } from "../../adapters/memory/index.js";
import {
  RPC_PROTOCOL,
  createStorageServer,
  rpcClientStorage,
  serveStorage,
  type MessageEndpoint,
  type RpcClientOptions,
  type RpcRequest,
} from "../../adapters/rpc/index.js";
import { StorageError, type StoragePort } from "../../src/port.js";
import type { StorageServer } from "../../adapters/rpc/index.js";
import { checksum, describePortConformance, expectStorageError, pseudoRandomBytes, waitFor } from "../../src/testing/index.js";

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

/**
 * A client whose requests go through a request function, cloned both ways like Electron's invoke,
 * on a connection of its own to `server`; pushes reach it through `subscribe`.
 */
function overRequestFunction(server: StoragePort | StorageServer, options?: RpcClientOptions & { leaseMs?: number }) {
  const storageServer = "connect" in server ? server : createStorageServer(server);
  const listeners = new Set<(message: unknown) => void>();
  const connection = storageServer.connect({
    push: (message) => listeners.forEach((listener) => listener(structuredClone(message))),
    ...(options?.leaseMs === undefined ? {} : { leaseMs: options.leaseMs }),
  });
  const client = rpcClientStorage((request) => connection.handle(structuredClone(request)).then(structuredClone), {
    ...options,
    subscribe: (listener) => {
      listeners.add(listener);
      return () => listeners.delete(listener);
    },
  });
  return Object.assign(client, { connection });
}

describePortConformance(
  "rpc over a MessageChannel (memory behind it)",
  async () => {
    const server = memoryStorage();
    const { client } = overMessageChannel(server);
    return { port: client, openSecond: async () => overMessageChannel(server).client, cleanup: () => client.close() };
  },
  { sync: true, locks: true, watch: true, secondPort: true },
);

// Small pieces, so reads, writes and large appends in the suite all travel staged.
describePortConformance(
  "rpc over a request function, 100 KB pieces (memory behind it)",
  async () => {
    const server = createStorageServer(memoryStorage());
    const client = overRequestFunction(server, { chunkBytes: 100_000 });
    return { port: client, openSecond: async () => overRequestFunction(server), cleanup: () => client.close() };
  },
  { sync: true, locks: true, watch: true, secondPort: true },
);

/** Records every message one end posts. */
function recordPosts(end: MessagePort): unknown[][] {
  const posts: unknown[][] = [];
  const post = end.postMessage.bind(end);
  vi.spyOn(end, "postMessage").mockImplementation((...args: unknown[]) => {
    posts.push(args);
    post(args[0], args[1] as Parameters<typeof post>[1]);
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

  it("with `transfer`, the bytes of appends, writes and staged pieces move to the peer (the client's own copy), the caller's buffer stays as it was", async () => {
    const server = memoryStorage();
    const { client, clientEnd } = overMessageChannel(server, { chunkBytes: 64 * KiB, transfer: true });
    const requests = recordPosts(clientEnd);
    const small = text("one line\n");
    const big = pseudoRandomBytes(150 * KiB, 11); // staged in three pieces

    await Promise.all([client.append("a", small), client.sync("a")]);
    await client.write("b", big);

    expect([small.byteLength, big.byteLength]).toEqual([9, 150 * KiB]); // not detached: the caller's
    expect(new TextDecoder().decode((await client.read("a"))!)).toBe("one line\n");
    expect(checksum((await client.read("b"))!)).toBe(checksum(big));
    // Each message moves exactly the buffers of the bytes it carries, each an exact-size copy.
    const moved = requests.map(([message, transfer]) => [opsOf([[message]])[0], (transfer as ArrayBuffer[] | undefined)?.length ?? 0]);
    expect(moved).toEqual([
      [["append", "sync"], 1],
      [["stage"], 1],
      [["stage"], 1],
      [["stage"], 1],
      [["write"], 0],
      [["read"], 0],
      [["read"], 0],
      [["readMore"], 0],
      [["readMore"], 0],
    ]);
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
    const connection = createStorageServer(server).connect();
    const handleStorageRequest = (_port: StoragePort, request: unknown) => connection.handle(request);
    const noId = await handleStorageRequest(server, { hello: "world" });
    expect(noId).toMatchObject({ ok: false, id: null, error: { code: "invalid" } });
    const badPath = await handleStorageRequest(server, { protocol: RPC_PROTOCOL, id: 7, call: { op: "read", path: 5, maxBytes: 1 } });
    expect(badPath).toMatchObject({ ok: false, id: 7, error: { code: "invalid" } });
    // In English, as the protocol's schemas are built at their first use with zod's English messages.
    expect((badPath as { error: { message: string } }).error.message).toMatch(/expected string, received number.*call\.path/s);
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
    const connection = createStorageServer(server).connect();
    const handleStorageRequest = (_port: StoragePort, request: unknown) => connection.handle(request);
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

describe("rpc server: state per client", () => {
  const request = (id: number, call: Record<string, unknown>) => ({ protocol: RPC_PROTOCOL, id, call });

  it("a client can never release, read or finish another client's lock or transfer", async () => {
    const port = memoryStorage();
    const server = createStorageServer(port);
    const [alice, mallory, third] = [server.connect(), server.connect(), server.connect()];
    const lock = await alice.handle(request(1, { op: "acquireLock", key: "sessions/a.jsonl" }));
    const { lockId } = (lock as { result: { lockId: string } }).result;

    // Mallory names Alice's lock: nothing of Alice's is touched, the lock stays held.
    expect(await mallory.handle(request(2, { op: "releaseLock", lockId }))).toMatchObject({ ok: true });
    expect(await third.handle(request(3, { op: "acquireLock", key: "sessions/a.jsonl" }))).toMatchObject({ ok: false, error: { code: "locked" } });

    await port.write("big", pseudoRandomBytes(3000, 1));
    const read = (await alice.handle(request(4, { op: "read", path: "big", maxBytes: 1000 }))) as { result: { transferId: string } };
    expect(await mallory.handle(request(5, { op: "readMore", transferId: read.result.transferId, offset: 1000 }))).toMatchObject({ ok: false, error: { code: "invalid" } });
    expect(await alice.handle(request(6, { op: "readMore", transferId: read.result.transferId, offset: 1000 }))).toMatchObject({ ok: true });

    expect(await alice.handle(request(7, { op: "stage", transferId: "upload-1", offset: 0, data: text("alice's bytes") }))).toMatchObject({ ok: true });
    const stolen = await mallory.handle(request(8, { op: "write", path: "stolen", content: { kind: "staged", transferId: "upload-1", size: 13 } }));
    expect(stolen).toMatchObject({ ok: false, error: { code: "invalid" } });
    expect(await port.stat("stolen")).toBeNull();
    expect(await alice.handle(request(9, { op: "write", path: "mine", content: { kind: "staged", transferId: "upload-1", size: 13 } }))).toMatchObject({ ok: true });
    expect(new TextDecoder().decode((await port.read("mine"))!)).toBe("alice's bytes");

    // Alice's own release frees it.
    expect(await alice.handle(request(10, { op: "releaseLock", lockId }))).toMatchObject({ ok: true });
    expect(await third.handle(request(11, { op: "acquireLock", key: "sessions/a.jsonl" }))).toMatchObject({ ok: true });
  });

  it("a client whose channel closes loses its locks at once; other clients go on", async () => {
    const port = memoryStorage();
    const first = overMessageChannel(port);
    const other = overMessageChannel(port);
    await first.client.acquireLock("sessions/a.jsonl");
    await expectStorageError(other.client.acquireLock("sessions/a.jsonl"), "locked");

    first.clientEnd.close(); // the page reloaded, the worker died
    await waitFor(async () => !!(await other.client.acquireLock("sessions/a.jsonl").catch(() => null)), "the lock to be free");
    expect(await other.client.stat("x")).toBeNull();
  });

  it("a client on a lease that stops renewing loses its locks once the lease runs out; one that renews keeps them", async () => {
    // The server's lease timers and the client's heartbeat run on a clock the test moves.
    vi.useFakeTimers({ toFake: ["setTimeout", "clearTimeout", "setInterval", "clearInterval"] });
    try {
      const server = createStorageServer(memoryStorage());
      const silent = overRequestFunction(server, { leaseMs: 300 });
      const alive = overRequestFunction(server, { leaseMs: 300, heartbeatMs: 50 });
      const other = overRequestFunction(server);
      await silent.acquireLock("sessions/silent.jsonl");
      await alive.acquireLock("sessions/alive.jsonl");

      await vi.advanceTimersByTimeAsync(299);
      expect(silent.connection.ended).toBe(false);
      await expectStorageError(other.acquireLock("sessions/silent.jsonl"), "locked");
      await vi.advanceTimersByTimeAsync(1);
      expect(silent.connection.ended).toBe(true);
      await (await other.acquireLock("sessions/silent.jsonl")).release();
      const error = await expectStorageError(silent.stat("x"), "io");
      expect(error.message).toContain("lease");

      await vi.advanceTimersByTimeAsync(600); // two leases' time, renewed every 50 ms
      await expectStorageError(other.acquireLock("sessions/alive.jsonl"), "locked");
      expect(alive.connection.lockCount).toBe(1);
      await alive.close();
      expect(alive.connection.lockCount).toBe(0);
      await (await other.acquireLock("sessions/alive.jsonl")).release();
    } finally {
      vi.useRealTimers();
    }
  });

  it("the client's close ends only its own state: its locks are released, the served port stays open", async () => {
    const port = memoryStorage();
    const server = createStorageServer(port);
    const leaving = overRequestFunction(server);
    const staying = overRequestFunction(server);
    await leaving.acquireLock("sessions/a.jsonl");
    await leaving.close();
    await (await staying.acquireLock("sessions/a.jsonl")).release();
    await staying.append("still-open", text("x"));
    expect(await port.stat("still-open")).toMatchObject({ size: 1 });
  });

  it("read-only: every call that would change the store is refused with 'read-only' and nothing is written; reads and watches work", async () => {
    const port = memoryStorage();
    await port.write("sessions/s.jsonl", text("kept\n"));
    const client = overRequestFunction(createStorageServer(port, { readOnly: true }), { chunkBytes: 64 });
    const big = pseudoRandomBytes(200, 2); // travels staged: the stage itself is refused
    for (const attempt of [
      client.append("sessions/s.jsonl", text("more\n")),
      client.write("sessions/s.jsonl", text("replaced")),
      client.write("sessions/big", big),
      client.truncate("sessions/s.jsonl", 0),
      client.remove("sessions/s.jsonl"),
      client.acquireLock("sessions/s.jsonl"),
    ]) {
      const error = await expectStorageError(attempt, "read-only");
      expect(error.message).toContain("read-only");
    }
    expect(new TextDecoder().decode((await client.read("sessions/s.jsonl"))!)).toBe("kept\n");
    expect(await port.list("sessions")).toMatchObject([{ name: "s.jsonl", size: 5 }]);
    const seen: string[] = [];
    await client.watch("sessions", (path) => seen.push(path));
    await port.append("sessions/s.jsonl", text("by the owner\n"));
    await waitFor(() => seen.includes("sessions/s.jsonl"), "the owner's change");
  });

  it("a path policy exposes only its directories: other paths are 'forbidden', listings and watches show only the way to them", async () => {
    const port = memoryStorage();
    await port.write("auth.json", text('{"secret":"key"}'));
    await port.write("sessions/--p--/s.jsonl", text("{}\n"));
    await port.write("blobs/abc", text("blob"));
    const client = overRequestFunction(createStorageServer(port, { paths: ["sessions", "blobs"] }));

    for (const attempt of [client.read("auth.json"), client.stat("auth.json"), client.append("auth.json", text("x")), client.list("other"), client.acquireLock("auth.json"), client.watch("other", () => {})]) {
      await expectStorageError(attempt, "forbidden");
    }
    await expectStorageError(client.read("../auth.json"), "invalid");
    expect((await client.list("")).map((entry) => entry.name)).toEqual(["blobs", "sessions"]);
    expect(await client.read("blobs/abc")).toEqual(text("blob"));
    await client.append("sessions/--p--/s.jsonl", text("{}\n"));

    const seen: string[] = [];
    await client.watch("", (path) => seen.push(path));
    await port.append("auth.json", text(" "));
    await port.append("sessions/--p--/s.jsonl", text("{}\n"));
    await waitFor(() => seen.includes("sessions/--p--/s.jsonl"), "the session's change");
    expect(seen).not.toContain("auth.json");
    expect(new TextDecoder().decode((await port.read("auth.json"))!)).toBe('{"secret":"key"} ');
  });
});
