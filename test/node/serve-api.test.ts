/** The HTTP API of `sessionkit serve` beyond the rpc socket: file bytes with Range, one-shot rpc POSTs, the change stream. */
import { createHash } from "node:crypto";
import { mkdir, mkdtemp, rm, writeFile, appendFile } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { nodeFsStorage } from "../../adapters/node-fs/index.js";
import { WebSocket } from "ws";
import { decodeFrame, encodeFrame, FRAME_CONTENT_TYPE } from "../../adapters/rpc/frame.js";
import { httpStorage } from "../../adapters/rpc/http.js";
import type { WebSocketLike } from "../../adapters/rpc/websocket.js";
import { RPC_PROTOCOL } from "../../adapters/rpc/protocol.js";
import type { ByteRange } from "../../src/port.js";
import { waitFor } from "../../src/testing/index.js";
import { serveTempStore, type ServedStore } from "./serve-helpers.js";

let served: ServedStore;
const body = "0123456789".repeat(100);
const url = (path: string) => `${served.server.origin}/api/stores/${served.store}${path}${path.includes("?") ? "&" : "?"}token=${served.server.token}`;

beforeAll(async () => {
  served = await serveTempStore();
  await mkdir(join(served.root, "sessions", "--p--"), { recursive: true });
  await writeFile(join(served.root, "sessions", "--p--", "s.jsonl"), body);
});
afterAll(() => served.cleanup());

describe("sessionkit serve's HTTP API", () => {
  it("GET …/files/<path> gives the bytes; a Range gives part of them (206), one past the end 416, HEAD the size", async () => {
    const whole = await fetch(url("/files/sessions/--p--/s.jsonl"));
    expect(whole.status).toBe(200);
    expect(whole.headers.get("content-type")).toBe("application/octet-stream");
    expect(whole.headers.get("content-security-policy")).toContain("sandbox");
    expect(await whole.text()).toBe(body);
    const part = await fetch(url("/files/sessions/--p--/s.jsonl"), { headers: { Range: "bytes=10-19" } });
    expect(part.status).toBe(206);
    expect(part.headers.get("content-range")).toBe("bytes 10-19/*");
    expect(await part.text()).toBe("0123456789");
    expect((await fetch(url("/files/sessions/--p--/s.jsonl"), { headers: { Range: "bytes=5000-" } })).status).toBe(416);
    // Named by both ends (as httpStorage asks): clamped to the end, or 416 naming the size past it.
    const tail = await fetch(url("/files/sessions/--p--/s.jsonl"), { headers: { Range: "bytes=995-1004" } });
    expect([tail.status, tail.headers.get("content-range"), await tail.text()]).toEqual([206, "bytes 995-999/*", "56789"]);
    expect(tail.headers.get("last-modified")).toMatch(/GMT$/);
    const past = await fetch(url("/files/sessions/--p--/s.jsonl"), { headers: { Range: "bytes=1000-1009" } });
    expect([past.status, past.headers.get("content-range")]).toEqual([416, "bytes */1000"]);
    expect((await fetch(url("/files/sessions/--p--/s.jsonl"), { headers: { Range: "bytes=9-3" } })).status).toBe(416);
    const head = await fetch(url("/files/sessions/--p--/s.jsonl"), { method: "HEAD" });
    expect(head.headers.get("content-length")).toBe(String(body.length));
    expect((await fetch(url("/files/sessions/--p--/missing.jsonl"))).status).toBe(404);
  });

  it("an httpStorage opens its WebSocket with its first call over it: reads by fetch open none, nor does closing a port never called", async () => {
    const opened: string[] = [];
    class CountedSocket extends WebSocket {
      constructor(address: string, protocols?: string[]) {
        super(address, protocols);
        opened.push(address);
      }
    }
    const options = { url: served.server.origin, token: served.server.token, store: served.store, WebSocket: CountedSocket as unknown as new (url: string) => WebSocketLike };
    const port = httpStorage(options);
    try {
      const bytes = await port.read("sessions/--p--/s.jsonl", { offset: 0, length: 1 << 20 });
      expect(new TextDecoder().decode(bytes!)).toBe(body);
      expect(opened).toEqual([]);
      expect(await port.stat("sessions/--p--/s.jsonl")).toMatchObject({ size: body.length });
      expect(opened).toHaveLength(1);
      expect(opened[0]).toMatch(/^ws:\/\/127\.0\.0\.1:\d+\/api\/stores\/[^/]+\/rpc$/);
    } finally {
      await port.close();
    }
    await httpStorage(options).close();
    expect(opened).toHaveLength(1);
  });

  it("a Range named by both ends is read without waiting for the file's stat (they go to the store together)", async () => {
    // The store answers the stat only once the read has been asked for: a server that read after the stat would wait for ever.
    const store = nodeFsStorage({ root: served.root });
    let readAsked!: () => void;
    const readBegun = new Promise<void>((resolve) => (readAsked = resolve));
    const { server, store: id, cleanup } = await serveTempStore({
      stores: [
        {
          root: served.root,
          storage: {
            ...store,
            stat: async (path: string) => (await readBegun, store.stat(path)),
            read: (path: string, range?: ByteRange) => (readAsked(), store.read(path, range)),
          },
        },
      ],
    });
    try {
      const response = await fetch(`${server.origin}/api/stores/${id}/files/sessions/--p--/s.jsonl?token=${server.token}`, { headers: { Range: "bytes=10-19" }, signal: AbortSignal.timeout(5000) });
      expect([response.status, await response.text()]).toEqual([206, "0123456789"]);
    } finally {
      await cleanup();
    }
  });

  /**
   * Runs `body` with fetch wrapped so that the Range of each GET of a file is recorded ("whole" for
   * none), and, for each, how many GETs had been asked for when its answer came.
   */
  async function withRangesRecorded(body: (ranges: string[], askedWhenAnswered: number[], statuses: number[]) => Promise<void>): Promise<void> {
    const ranges: string[] = [];
    const askedWhenAnswered: number[] = [];
    const statuses: number[] = [];
    const realFetch = globalThis.fetch;
    globalThis.fetch = ((input: string | URL | Request, init?: RequestInit) => {
      if (!String(input).includes("/files/")) return realFetch(input, init);
      const index = ranges.push(new Headers(init?.headers).get("range") ?? "whole") - 1;
      return realFetch(input, init).then((response) => ((askedWhenAnswered[index] = ranges.length), (statuses[index] = response.status), response));
    }) as typeof fetch;
    try {
      await body(ranges, askedWhenAnswered, statuses);
    } finally {
      globalThis.fetch = realFetch;
    }
  }

  const block = 16 << 20; // BLOCK_BYTES (adapters/rpc/fetch-blocks.ts)
  /** Byte for byte (toEqual compares megabytes element by element, for seconds). */
  const same = (actual: Uint8Array | null, expected: Uint8Array) => actual !== null && Buffer.from(actual.buffer, actual.byteOffset, actual.length).equals(expected);
  const blockRange = (offset: number) => `bytes=${offset}-${offset + block - 1}`;

  it("ranges read one after another come from one GET of a 16 MiB block; two readers of one range each get their own bytes", async () => {
    const piece = 300 << 10; // above the size httpStorage reads over the rpc instead of fetching
    const bytes = new Uint8Array(3 * piece);
    for (let i = 0; i < bytes.length; i++) bytes[i] = (i * 7 + 3) & 0xff;
    await writeFile(join(served.root, "sessions", "--p--", "big.jsonl"), bytes);
    const client = served.client();
    const path = "sessions/--p--/big.jsonl";
    try {
      await withRangesRecorded(async (ranges, _askedWhenAnswered, statuses) => {
        // As the lazy open reads: several ranges asked for at once, then the next.
        const [first, second] = await Promise.all([client.read(path, { offset: 0, length: piece }), client.read(path, { offset: piece, length: piece })]);
        const third = await client.read(path, { offset: 2 * piece, length: piece });
        expect([same(first, bytes.subarray(0, piece)), same(second, bytes.subarray(piece, 2 * piece)), same(third, bytes.subarray(2 * piece))]).toEqual([true, true, true]);
        expect(ranges).toEqual([blockRange(0)]);
        // Past the end the block saw: its last byte and the next are asked for, to learn that the file
        // has not grown (one byte comes back: a 206, not the 416 the next byte alone would get).
        expect(await client.read(path, { offset: 3 * piece, length: piece })).toEqual(new Uint8Array(0));
        expect([ranges.slice(1), statuses]).toEqual([[`bytes=${3 * piece - 1}-${3 * piece}`], [206, 206]]);
        // Two readers of one range at once: the same bytes, each a copy of its own.
        const [a, b] = await Promise.all([client.read(path, { offset: piece, length: piece }), client.read(path, { offset: piece, length: piece })]);
        expect([same(a, bytes.subarray(piece, 2 * piece)), same(b, bytes.subarray(piece, 2 * piece))]).toEqual([true, true]);
        expect(b === a).toBe(false); // (not.toBe would compare the arrays' elements for its message)
      });
    } finally {
      await client.close();
    }
  });

  it("a file that fills a block has the next one asked for ahead (with the first, when a stat showed the file longer); a read that a block holds only part of sees the file grown since", async () => {
    const range = 4 << 20; // the session reader's
    const half = range / 2;
    const bytes = new Uint8Array(block + range + half);
    for (let i = 0; i < bytes.length; i++) bytes[i] = (i * 13 + 5) & 0xff;
    const file = join(served.root, "sessions", "--p--", "two-blocks.jsonl");
    await writeFile(file, bytes);
    const client = served.client();
    const path = "sessions/--p--/two-blocks.jsonl";
    try {
      await withRangesRecorded(async (ranges, askedWhenAnswered) => {
        expect(await client.stat(path)).toMatchObject({ size: bytes.length }); // as SessionManager.open does before reading
        for (let offset = 0; offset < block + range; offset += range) {
          expect(same(await client.read(path, { offset, length: range }), bytes.subarray(offset, offset + range))).toBe(true);
        }
        expect(ranges).toEqual([blockRange(0), blockRange(block)]);
        expect(askedWhenAnswered[0]).toBe(2); // the second block was asked for before the first answered
        // Another writer appends: the second block holds only the first half of the next range;
        // its last byte then and the next, both there, show that the file grew, so the range is fetched anew.
        const more = new Uint8Array(range).fill(0x61);
        await appendFile(file, more);
        const grown = new Uint8Array([...bytes.subarray(block + range), ...more.subarray(0, half)]);
        expect(same(await client.read(path, { offset: block + range, length: range }), grown)).toBe(true);
        expect(ranges.slice(2)).toEqual([`bytes=${bytes.length - 1}-${bytes.length}`, `bytes=${block + range}-${block + 2 * range - 1}`]);
      });
    } finally {
      await client.close();
      await rm(file);
    }
  });

  it("a change through the port is seen by the reads after it: the blocks asked for before it are not read from", async () => {
    const piece = 300 << 10;
    const path = "sessions/--p--/changing.jsonl";
    const writable = await serveTempStore({ write: true });
    const client = writable.client();
    try {
      await client.write(path, new Uint8Array(2 * piece).fill(0x62));
      expect(same(await client.read(path, { offset: 0, length: piece }), new Uint8Array(piece).fill(0x62))).toBe(true);
      await client.write(path, new Uint8Array(2 * piece).fill(0x63));
      expect(same(await client.read(path, { offset: piece, length: piece }), new Uint8Array(piece).fill(0x63))).toBe(true);
    } finally {
      await writable.cleanup();
    }
  });

  it("POST …/rpc answers one request (or a batch) in a frame", async () => {
    const response = await fetch(url("/rpc"), {
      method: "POST",
      headers: { "content-type": FRAME_CONTENT_TYPE },
      body: encodeFrame({ protocol: RPC_PROTOCOL, requests: [{ protocol: RPC_PROTOCOL, id: 1, call: { op: "stat", path: "sessions/--p--/s.jsonl" } }, { protocol: RPC_PROTOCOL, id: 2, call: { op: "read", path: "sessions/--p--/s.jsonl", range: { offset: 0, length: 4 }, maxBytes: 100 } }] }) as Uint8Array<ArrayBuffer>,
    });
    expect(response.status).toBe(200);
    const answer = decodeFrame(new Uint8Array(await response.arrayBuffer())) as { responses: { ok: boolean; result: unknown }[] };
    expect(answer.responses[0]).toMatchObject({ ok: true, result: { size: body.length } });
    expect(answer.responses[1]).toMatchObject({ ok: true, result: { data: new TextEncoder().encode("0123"), size: 4 } });
  });

  it("POST …/rpc: a change where a directory is, or below a file, is 409 with the error 'collision', naming storage paths only", async () => {
    const writable = await serveTempStore({ write: true });
    try {
      await mkdir(join(writable.root, "sessions", "--p--"), { recursive: true });
      await writeFile(join(writable.root, "sessions", "--p--", "s.jsonl"), body);
      const post = async (call: object) => {
        const response = await fetch(`${writable.server.origin}/api/stores/${writable.store}/rpc?token=${writable.server.token}`, {
          method: "POST",
          headers: { "content-type": FRAME_CONTENT_TYPE },
          body: encodeFrame({ protocol: RPC_PROTOCOL, id: 1, call }) as Uint8Array<ArrayBuffer>,
        });
        return { status: response.status, answer: decodeFrame(new Uint8Array(await response.arrayBuffer())) };
      };
      const data = { kind: "inline", data: new TextEncoder().encode("x") };
      expect(await post({ op: "write", path: "sessions/--p--", content: data })).toEqual({
        status: 409,
        answer: { protocol: RPC_PROTOCOL, id: 1, ok: false, error: { code: "collision", message: 'cannot write "sessions/--p--": it is a directory', path: "sessions/--p--" } },
      });
      expect(await post({ op: "append", path: "sessions/--p--/s.jsonl/x", content: data })).toEqual({
        status: 409,
        answer: { protocol: RPC_PROTOCOL, id: 1, ok: false, error: { code: "collision", message: 'cannot append to "sessions/--p--/s.jsonl/x": "sessions/--p--/s.jsonl" is a file', path: "sessions/--p--/s.jsonl/x" } },
      });
      expect(await post({ op: "remove", path: "sessions/--p--" })).toMatchObject({ status: 409, answer: { error: { code: "collision" } } });
    } finally {
      await writable.cleanup();
    }
  });

  it("GET …/changes?dir= streams the paths that change (Server-Sent Events)", async () => {
    const abort = new AbortController();
    const response = await fetch(url("/changes?dir=sessions"), { signal: abort.signal });
    expect(response.headers.get("content-type")).toBe("text/event-stream");
    const reader = response.body!.getReader();
    let text = "";
    const reading = (async () => {
      for (;;) {
        const { value, done } = await reader.read();
        if (done) return;
        text += new TextDecoder().decode(value);
      }
    })().catch(() => {});
    await waitFor(() => text.includes(": watching"), "the stream to start");
    await appendFile(join(served.root, "sessions", "--p--", "s.jsonl"), "more");
    await waitFor(() => text.includes('"sessions/--p--/s.jsonl"'), () => `the change in ${JSON.stringify(text)}`);
    expect(text).toMatch(/data: \{"paths":\[[^\]]*"sessions\/--p--\/s\.jsonl"/);
    abort.abort();
    await reading;
    expect((await fetch(url("/changes?dir=auth.json"))).status).toBe(403);
  });

  it("the viewer's pages carry the app's Content Security Policy as a header, frame-ancestors 'none' included and index.html's inline script and stylesheet allowed by their hashes (no others); its scripts do not need one; pages are never cached, its assets (named by their content's hash) for good", async () => {
    const viewerDir = await mkdtemp(join(tmpdir(), "sessionkit-serve-viewer-"));
    await mkdir(join(viewerDir, "assets"));
    const boot = "globalThis.booted = 1;";
    const style = "body { margin: 0; }";
    await writeFile(join(viewerDir, "index.html"), `<!doctype html><title>viewer</title><script type="module" src="./assets/app.js"></script><script>${boot}</script><style>${style}</style>`);
    await writeFile(join(viewerDir, "assets", "app.js"), "export {};");
    const viewer = await serveTempStore({ viewerDir });
    try {
      const page = await fetch(`${viewer.server.url}`);
      expect(page.status).toBe(200);
      const bootHash = `'sha256-${createHash("sha256").update(boot).digest("base64")}'`;
      const policy = page.headers.get("content-security-policy") ?? "";
      const styleHash = `'sha256-${createHash("sha256").update(style).digest("base64")}'`;
      expect(policy).toContain(`script-src 'self' 'wasm-unsafe-eval' ${bootHash};`);
      expect(policy).toContain(`style-src 'self' ${styleHash};`);
      expect(policy.match(/'sha256-/g)).toHaveLength(2);
      expect(policy).not.toContain("unsafe-inline");
      expect(policy).toMatch(/; frame-ancestors 'none'$/);
      expect(await page.text()).toContain("<title>viewer</title>");
      expect(page.headers.get("cache-control")).toBe("no-store");
      const script = await fetch(`${viewer.server.origin}/assets/app.js?token=${viewer.server.token}`);
      expect(script.headers.get("content-type")).toBe("text/javascript; charset=utf-8");
      expect(script.headers.get("content-security-policy")).toBeNull();
      expect(script.headers.get("cache-control")).toBe("public, max-age=31536000, immutable");
      const pageByAssets = await fetch(`${viewer.server.origin}/assets/%2E%2E/index.html`);
      expect(await pageByAssets.text()).toContain("<title>viewer</title>");
      expect(pageByAssets.headers.get("cache-control")).toBe("no-store");
    } finally {
      await viewer.cleanup();
      await rm(viewerDir, { recursive: true, force: true });
    }
  });

  it("an asset once sent is kept by the server (its name changes with its content), the page is read each time, and a missing asset is a 404 until it exists", async () => {
    const viewerDir = await mkdtemp(join(tmpdir(), "sessionkit-serve-viewer-"));
    await mkdir(join(viewerDir, "assets"));
    await writeFile(join(viewerDir, "index.html"), "<title>one</title>");
    await writeFile(join(viewerDir, "assets", "app-1.js"), "export const one = 1;");
    const viewer = await serveTempStore({ viewerDir });
    const get = async (path: string) => {
      const response = await fetch(`${viewer.server.origin}${path}`);
      return `${response.status} ${await response.text()}`;
    };
    try {
      expect(await get("/assets/app-1.js")).toBe("200 export const one = 1;");
      expect(await get("/assets/app-2.js")).toMatch(/^404 /);
      await rm(join(viewerDir, "assets", "app-1.js"));
      await writeFile(join(viewerDir, "assets", "app-2.js"), "export const two = 2;");
      await writeFile(join(viewerDir, "index.html"), "<title>two</title>");
      expect(await get("/assets/app-1.js")).toBe("200 export const one = 1;");
      expect(await get("/assets/app-2.js")).toBe("200 export const two = 2;");
      expect(await get(`/?token=${viewer.server.token}`)).toBe("200 <title>two</title>");
    } finally {
      await viewer.cleanup();
      await rm(viewerDir, { recursive: true, force: true });
    }
  });
});
