/** The streaming reader at chunk sizes far smaller than its lines, over a real port. */
import { describe, expect, it } from "vitest";
import { memoryStorage } from "../../adapters/memory/index.js";
import { scanJsonl } from "../../src/format/jsonl-reader.js";

const encoder = new TextEncoder();

async function scan(text: string, chunkSize: number) {
  const storage = memoryStorage();
  await storage.write("s.jsonl", encoder.encode(text));
  const records: unknown[] = [];
  const result = await scanJsonl(storage, "s.jsonl", (record) => records.push(record), { chunkSize });
  return { records, result: result! };
}

describe("scanJsonl", () => {
  const lines = [
    { type: "session", id: "s" },
    { type: "message", text: "é日本語🙂".repeat(300) }, // multi-byte characters across chunk edges
    { type: "message", text: "x".repeat(5000) },
    { type: "label", label: "short" },
  ];
  const text = lines.map((l) => JSON.stringify(l) + "\n").join("");

  for (const chunkSize of [1, 3, 7, 64, 4096, 1 << 20]) {
    it(`reads every line whole with ${chunkSize}-byte ranges`, async () => {
      const { records, result } = await scan(text, chunkSize);
      expect(records).toEqual(lines);
      expect(result.problems).toEqual([]);
      expect(result.tail).toEqual({ kind: "clean" });
      expect(result.bytes).toBe(encoder.encode(text).length);
      expect(result.completeBytes).toBe(result.bytes);
    });
  }

  it("finds a torn last line spanning several ranges, with its offset and length", async () => {
    const torn = '{"type":"message","text":"' + "y".repeat(300);
    const { records, result } = await scan(text + torn, 16);
    expect(records).toEqual(lines);
    expect(result.tail).toEqual({ kind: "torn", offset: encoder.encode(text).length, length: torn.length });
    expect(result.problems.map((p) => p.kind)).toEqual(["torn"]);
  });

  it("recovers two objects glued on one line and reports the line", async () => {
    const glued = JSON.stringify({ type: "message", timestamp: "t1" }) + JSON.stringify({ type: "message", timestamp: "t2" });
    const { records, result } = await scan(`${JSON.stringify(lines[0])}\n${glued}\n`, 5);
    expect(records).toHaveLength(3);
    expect(result.problems).toEqual([{ line: 2, kind: "glued", message: expect.stringContaining("line 2") }]);
  });
});

describe("scanJsonl: a byte order mark", () => {
  const line = (text: string) => JSON.stringify({ type: "message", text }) + "\n";
  const text = "\ufeff" + line("first") + "\ufeff" + line("x".repeat(50)) + line("last");

  it("is dropped at the file's start only, whatever the range size", async () => {
    const results = [];
    for (const chunkSize of [1, 5, 31, 32, 33, 4096]) {
      const { records, result } = await scan(text, chunkSize);
      results.push({ records, problems: result.problems });
    }
    // The mid-file mark is kept in its line (which is then recovered as a glued object), in every run.
    expect(results[0]!.records[0]).toEqual({ type: "message", text: "first" });
    expect(results[0]!.problems.map((p) => p.line)).toEqual([2]);
    for (const result of results) expect(result).toEqual(results[0]);
  });
});
