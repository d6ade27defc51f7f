/** The HTTP API of `sessionkit serve` beyond the rpc socket: file bytes with Range, one-shot rpc POSTs, the change stream. */
import { mkdir, mkdtemp, rm, writeFile, appendFile } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { decodeFrame, encodeFrame, FRAME_CONTENT_TYPE } from "../../adapters/rpc/frame.js";
import { RPC_PROTOCOL } from "../../adapters/rpc/protocol.js";
import { APP_CSP_HEADER } from "../../web-demo/app-csp.js";
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
    const head = await fetch(url("/files/sessions/--p--/s.jsonl"), { method: "HEAD" });
    expect(head.headers.get("content-length")).toBe(String(body.length));
    expect((await fetch(url("/files/sessions/--p--/missing.jsonl"))).status).toBe(404);
  });

  it("a range being fetched already (read ahead) is not fetched again by a read asking for it; each reader gets its own bytes", async () => {
    const piece = 300 << 10; // above the size httpStorage reads over the rpc instead of fetching
    const bytes = new Uint8Array(3 * piece).map((_, i) => (i * 7 + 3) & 0xff);
    await writeFile(join(served.root, "sessions", "--p--", "big.jsonl"), bytes);
    const client = served.client();
    const ranges: string[] = [];
    const realFetch = globalThis.fetch;
    globalThis.fetch = ((input: string | URL | Request, init?: RequestInit) => {
      if (String(input).includes("/files/")) ranges.push(new Headers(init?.headers).get("range") ?? "whole");
      return realFetch(input, init);
    }) as typeof fetch;
    try {
      const path = "sessions/--p--/big.jsonl";
      expect(await client.read(path, { offset: 0, length: piece })).toEqual(bytes.subarray(0, piece));
      // The read of the first range fetched the second ahead; two readers ask for it at once (as
      // the lazy open reads several ranges ahead).
      const [first, second] = await Promise.all([client.read(path, { offset: piece, length: piece }), client.read(path, { offset: piece, length: piece })]);
      expect(first).toEqual(bytes.subarray(piece, 2 * piece));
      expect(second).toEqual(first);
      expect(second).not.toBe(first);
      const secondRange = `bytes=${piece}-${2 * piece - 1}`;
      expect(ranges.filter((range) => range === secondRange)).toHaveLength(1);
    } finally {
      globalThis.fetch = realFetch;
      await client.close();
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

  it("the viewer's pages carry the app's Content Security Policy as a header, frame-ancestors 'none' included; its scripts do not need one; pages are never cached, its assets (named by their content's hash) for good", async () => {
    const viewerDir = await mkdtemp(join(tmpdir(), "sessionkit-serve-viewer-"));
    await mkdir(join(viewerDir, "assets"));
    await writeFile(join(viewerDir, "index.html"), "<!doctype html><title>viewer</title>");
    await writeFile(join(viewerDir, "assets", "app.js"), "export {};");
    const viewer = await serveTempStore({ viewerDir });
    try {
      const page = await fetch(`${viewer.server.url}`);
      expect(page.status).toBe(200);
      expect(page.headers.get("content-security-policy")).toBe(APP_CSP_HEADER);
      expect(APP_CSP_HEADER).toMatch(/script-src 'self' 'wasm-unsafe-eval';.*frame-ancestors 'none'$/);
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
});
