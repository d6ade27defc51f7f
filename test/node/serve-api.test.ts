/** The HTTP API of `sessionkit serve` beyond the rpc socket: file bytes with Range, one-shot rpc POSTs, the change stream. */
import { mkdir, writeFile, appendFile } from "node:fs/promises";
import { join } from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { decodeFrame, encodeFrame, FRAME_CONTENT_TYPE } from "../../adapters/rpc/frame.js";
import { RPC_PROTOCOL } from "../../adapters/rpc/protocol.js";
import { waitFor } from "../shared/wait.js";
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
});
