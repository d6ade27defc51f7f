/**
 * pi's test/session-manager/migration.test.ts and oh-my-pi's (A2): the same two cases.
 * `migrateSessionEntries(entries)` maps to our `migrateRecords(records)` (header first, in place).
 */
import { describe, expect, it } from "vitest";
import { migrateRecords } from "../../../src/format/migrate.js";

const timestamp = "2025-01-01T00:00:00Z";

describe("migrateSessionEntries", () => {
  it("should add id/parentId to v1 entries", () => {
    const records: Record<string, unknown>[] = [
      { type: "session", id: "sess-1", timestamp, cwd: "/tmp" },
      { type: "message", timestamp, message: { role: "user", content: "hi", timestamp: 1 } },
      { type: "message", timestamp, message: { role: "assistant", content: [{ type: "text", text: "hello" }], timestamp: 2 } },
    ];

    expect(migrateRecords(records)).toBe(1);

    const [header, msg1, msg2] = records as [Record<string, unknown>, Record<string, unknown>, Record<string, unknown>];
    expect(header.version).toBe(3);
    expect(msg1.id).toMatch(/^[0-9a-f]{8}$/);
    expect(msg1.parentId).toBeNull();
    expect(msg2.id).toMatch(/^[0-9a-f]{8}$/);
    expect(msg2.id).not.toBe(msg1.id);
    expect(msg2.parentId).toBe(msg1.id);
  });

  it("should be idempotent (skip already migrated)", () => {
    const records: Record<string, unknown>[] = [
      { type: "session", id: "sess-1", version: 2, timestamp, cwd: "/tmp" },
      { type: "message", id: "abc12345", parentId: null, timestamp, message: { role: "user", content: "hi", timestamp: 1 } },
      { type: "message", id: "def67890", parentId: "abc12345", timestamp, message: { role: "assistant", content: [{ type: "text", text: "hello" }], timestamp: 2 } },
    ];

    // v2 → v3 still runs (upstream does not assert the version; we do).
    expect(migrateRecords(records)).toBe(2);
    expect(records[0]!.version).toBe(3);
    expect(records.slice(1).map((r) => [r.id, r.parentId])).toEqual([
      ["abc12345", null],
      ["def67890", "abc12345"],
    ]);
    // A current file is left alone.
    const snapshot = structuredClone(records);
    expect(migrateRecords(records)).toBeNull();
    expect(records).toEqual(snapshot);
  });
});
