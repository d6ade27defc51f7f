/** readLineRanges: a file's complete lines, range by range, whatever the ranges cut (src/format/line-ranges.ts). */
import fc from "fast-check";
import { describe, expect, it } from "vitest";
import { memoryStorage } from "../../adapters/memory/index.js";
import { readLineRanges, type LineRangesOptions } from "../../src/format/line-ranges.js";

const encoder = new TextEncoder();
const decoder = new TextDecoder();

/** Reads `path` and returns the lines handed over (each without its "\n") and what readLineRanges returned. */
async function collect(storage: ReturnType<typeof memoryStorage>, path: string, options: Partial<LineRangesOptions> & { rangeBytes: number }) {
  const lines: string[] = [];
  const size = (await storage.stat(path))?.size ?? 0;
  const result = await readLineRanges(storage, path, {
    size,
    readAhead: 3,
    stopped: () => false,
    onLines: (bytes, from) => {
      let at = from;
      for (let newline = bytes.indexOf(0x0a, at); newline >= 0; newline = bytes.indexOf(0x0a, at)) {
        lines.push(decoder.decode(bytes.subarray(at, newline)));
        at = newline + 1;
      }
      return at;
    },
    ...options,
  });
  return { lines, result };
}

describe("readLineRanges", () => {
  it("hands over every complete line once, in order, and the unfinished last one as the tail, whatever the range size", async () => {
    await fc.assert(
      fc.asyncProperty(fc.array(fc.string({ maxLength: 40 }).map((s) => s.replace(/\n/g, "")), { maxLength: 30 }), fc.string({ maxLength: 10 }).map((s) => s.replace(/\n/g, "")), fc.integer({ min: 1, max: 64 }), async (lines, tail, rangeBytes) => {
        const storage = memoryStorage();
        const text = lines.map((line) => `${line}\n`).join("") + tail;
        await storage.write("f.jsonl", encoder.encode(text));
        const { lines: seen, result } = await collect(storage, "f.jsonl", { rangeBytes });
        expect(seen).toEqual(lines);
        expect(result.completeBytes).toBe(encoder.encode(text).length - encoder.encode(tail).length);
        expect(result.tail === null ? "" : decoder.decode(result.tail)).toBe(tail);
        expect(result.missing).toBe(false);
      }),
    );
  });

  it("reads on past the size it was given (the file grew), and says when the file is missing", async () => {
    const storage = memoryStorage();
    await storage.write("f.jsonl", encoder.encode("a\nbb\nccc\ndddd\n"));
    const { lines, result } = await collect(storage, "f.jsonl", { rangeBytes: 4, size: 5 });
    expect(lines).toEqual(["a", "bb", "ccc", "dddd"]);
    expect(result.completeBytes).toBe(14);
    const gone = await collect(storage, "none.jsonl", { rangeBytes: 4 });
    expect(gone.result).toEqual({ missing: true, completeBytes: 0, tail: null });
  });

  it("stops when the reader says so, and a throw from onRead stops it with that error", async () => {
    const storage = memoryStorage();
    await storage.write("f.jsonl", encoder.encode("a\nb\nc\nd\n"));
    let ranges = 0;
    const stopped = await collect(storage, "f.jsonl", { rangeBytes: 2, onRange: () => ranges++, stopped: () => ranges >= 2 });
    expect(stopped.lines).toEqual(["a", "b"]);
    await expect(collect(storage, "f.jsonl", { rangeBytes: 2, onRead: () => { throw new Error("cancelled"); } })).rejects.toThrow("cancelled");
  });
});
