/** Entry and session ids as pi makes them (src/format/ids.ts). */
import { describe, expect, it } from "vitest";
import { createEntryId, createSessionId } from "../../src/format/ids.js";

describe("createEntryId", () => {
  it("gives 8 lowercase hex chars, every digit at every position, from far more ids than one random draw holds", () => {
    const seen = Array.from({ length: 8 }, () => new Set<string>());
    const taken = new Set<string>();
    for (let i = 0; i < 20_000; i++) {
      const id = createEntryId(taken);
      expect(id).toMatch(/^[0-9a-f]{8}$/);
      expect(taken.has(id)).toBe(false);
      taken.add(id);
      [...id].forEach((digit, position) => seen[position]!.add(digit));
    }
    for (const digits of seen) expect(digits.size).toBe(16);
  });

  it("draws again while the id is taken", () => {
    const refused: string[] = [];
    const id = createEntryId({
      has(candidate) {
        if (refused.length === 3) return false;
        refused.push(candidate);
        return true;
      },
    });
    expect(refused).toHaveLength(3);
    expect(refused).not.toContain(id);
    expect(id).toMatch(/^[0-9a-f]{8}$/);
  });

  it("falls back to a whole UUID when every draw collides", () => {
    expect(createEntryId({ has: () => true })).toMatch(/^[0-9a-f]{8}-[0-9a-f]{4}-4[0-9a-f]{3}-[89ab][0-9a-f]{3}-[0-9a-f]{12}$/);
  });
});

describe("createSessionId", () => {
  it("is a UUIDv7 whose first 48 bits are the time", () => {
    const id = createSessionId(Date.UTC(2026, 10, 25));
    expect(id).toMatch(/^[0-9a-f]{8}-[0-9a-f]{4}-7[0-9a-f]{3}-[89ab][0-9a-f]{3}-[0-9a-f]{12}$/);
    expect(Number.parseInt(id.replace(/-/g, "").slice(0, 12), 16)).toBe(Date.UTC(2026, 10, 25));
  });
});
