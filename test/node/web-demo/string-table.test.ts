/** The viewer's StringTable (ids and tool call ids of a session, in typed arrays) against a Map. */
import fc from "fast-check";
import { describe, expect, it } from "vitest";
import { StringTable } from "../../../web-demo/src/model/string-table.js";

describe("StringTable", () => {
  it("numbers strings in the order added and finds each by its text, as a Map does, across growth", () => {
    fc.assert(
      fc.property(fc.uniqueArray(fc.oneof(fc.string(), fc.string({ unit: "binary" }), fc.string({ unit: "grapheme", minLength: 3000, maxLength: 5000 })), { maxLength: 700 }), fc.array(fc.string(), { maxLength: 50 }), (texts, others) => {
        const table = new StringTable();
        const map = new Map<string, number>();
        for (const text of texts) {
          expect(table.add(text)).toBe(map.size);
          map.set(text, map.size);
        }
        expect(table.size).toBe(map.size);
        for (const [text, k] of map) {
          expect(table.indexOf(text)).toBe(k);
          expect(table.at(k)).toBe(text);
        }
        for (const other of others) expect(table.indexOf(other)).toBe(map.get(other) ?? -1);
      }),
      { numRuns: 60 },
    );
  });

  it("holds a million eight-character ids", () => {
    const table = new StringTable();
    const id = (n: number) => n.toString(16).padStart(8, "0");
    for (let n = 0; n < 1_000_000; n++) table.add(id(n * 7919));
    expect(table.size).toBe(1_000_000);
    expect(table.indexOf(id(123_456 * 7919))).toBe(123_456);
    expect(table.at(999_999)).toBe(id(999_999 * 7919));
    expect(table.indexOf("zzzzzzzz")).toBe(-1);
  });
});
