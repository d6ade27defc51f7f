/**
 * `sessionkit serve`'s HTTP at its edges (RFC 9110): every kind of Range, malformed and
 * unsatisfiable ones included, and allowed origins that would serialize as "null".
 */
import { mkdir, writeFile } from "node:fs/promises";
import { join } from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { startServer } from "../../adapters/server/server.js";
import { memoryStorage } from "../../adapters/memory/index.js";
import { serveTempStore, type ServedStore } from "./serve-helpers.js";

let served: ServedStore;
const TEN = "0123456789";

beforeAll(async () => {
  served = await serveTempStore();
  await mkdir(join(served.root, "sessions", "--p--"), { recursive: true });
  await writeFile(join(served.root, "sessions", "--p--", "ten.jsonl"), TEN);
  await writeFile(join(served.root, "sessions", "--p--", "empty.jsonl"), "");
});
afterAll(() => served.cleanup());

/** GET (or HEAD) of a file with `range`: status, Content-Range, body. */
async function get(file: string, range: string, method = "GET"): Promise<{ status: number; contentRange: string | null; body: string }> {
  const response = await fetch(`${served.server.origin}/api/stores/${served.store}/files/sessions/--p--/${file}`, { method, headers: { Authorization: `Bearer ${served.server.token}`, Range: range } });
  return { status: response.status, contentRange: response.headers.get("content-range"), body: await response.text() };
}

describe("Range on GET …/files/<path>", () => {
  it("one satisfiable range: 206 with its bytes; a suffix or an end beyond the file is cut to the file", async () => {
    expect(await get("ten.jsonl", "bytes=3-5")).toEqual({ status: 206, contentRange: "bytes 3-5/*", body: "345" });
    expect(await get("ten.jsonl", "bytes=7-")).toEqual({ status: 206, contentRange: "bytes 7-9/*", body: "789" });
    expect(await get("ten.jsonl", "bytes=3-1000")).toEqual({ status: 206, contentRange: "bytes 3-9/*", body: TEN.slice(3) });
    expect(await get("ten.jsonl", "bytes=-4")).toEqual({ status: 206, contentRange: "bytes 6-9/*", body: "6789" });
    expect(await get("ten.jsonl", "bytes=-500")).toEqual({ status: 206, contentRange: "bytes 0-9/*", body: TEN });
    expect(await get("ten.jsonl", "bytes=5-5")).toEqual({ status: 206, contentRange: "bytes 5-5/*", body: "5" });
  });

  it("an inverted, malformed, empty or past-the-end range: 416 with Content-Range bytes */SIZE, for GET and HEAD", async () => {
    for (const range of ["bytes=5-3", "bytes=10-", "bytes=11-20", "bytes=-0", "bytes=-", "bytes=abc", "bytes=1-2-3", "bytes=0x1-2", "bytes=-1-2"]) {
      const answer = await get("ten.jsonl", range);
      expect(answer.status, range).toBe(416);
      expect(answer.contentRange, range).toBe("bytes */10");
      expect(answer.body, range).not.toContain("01234");
      expect((await get("ten.jsonl", range, "HEAD")).status, range).toBe(416);
    }
    expect(await get("empty.jsonl", "bytes=0-")).toMatchObject({ status: 416, contentRange: "bytes */0" });
  });

  it("a Range this server does not serve (several ranges, another unit, no '='): ignored, the whole file (200)", async () => {
    for (const range of ["bytes=0-1,4-5", "bytes=5-3,0-1", "items=0-1", "bytes 0-1"]) {
      expect(await get("ten.jsonl", range), range).toEqual({ status: 200, contentRange: null, body: TEN });
    }
    // A suffix of an empty file names no byte: the whole (empty) file.
    expect(await get("empty.jsonl", "bytes=-5")).toEqual({ status: 200, contentRange: null, body: "" });
  });
});

describe("allowed origins", () => {
  it("one that serializes as \"null\" (file:, data:) is refused: it would admit every sandboxed frame and data: page", async () => {
    for (const origin of ["file:///home/me/viewer.html", "data:text/html,hi"]) {
      await expect(startServer({ stores: [{ root: "/mem", storage: memoryStorage() }], port: 0, allowOrigins: [origin] })).rejects.toThrow(/has no origin of its own/);
    }
  });
});
