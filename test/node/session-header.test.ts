/**
 * decodeHeader's check, by hand since listing stopped loading zod for it: it takes what pi writes
 * and seed 003's header, keeps fields it does not name, and refuses each field of the wrong type.
 */
import { describe, expect, it } from "vitest";
import { detectDialect } from "../../src/format/dialect.js";
import { decodeHeader } from "../../src/format/header.js";

const good = { type: "session", version: 3, id: "s-1", timestamp: "2026-01-01T00:00:00.000Z", cwd: "/p", parentSession: "sessions/x.jsonl", title: "t", later: { kept: true } };

describe("decodeHeader", () => {
  it("takes pi's header and keeps fields it does not name; version and the strings may be absent", () => {
    expect(decodeHeader("pi", good)).toEqual({ success: true, data: good });
    expect(decodeHeader("pi", { type: "session", id: "s-2" })).toEqual({ success: true, data: { type: "session", id: "s-2" } });
  });

  it("decodes seed 003's header to the canonical one", () => {
    const raw = { type: "session_header", id: "s-3", cwd: "/q" };
    const decoded = decodeHeader(detectDialect(raw)!, raw);
    expect(decoded.success && decoded.data).toMatchObject({ type: "session", id: "s-3", cwd: "/q" });
  });

  it.each([
    ["another type", { type: "message" }],
    ["an id that is not a string", { id: 42 }],
    ["no id", { id: undefined }],
    ["version 0", { version: 0 }],
    ["a fractional version", { version: 1.5 }],
    ["a version beyond safe integers", { version: 2 ** 53 }],
    ["a version as a string", { version: "3" }],
    ["a timestamp that is not a string", { timestamp: null }],
    ["a cwd that is not a string", { cwd: 5 }],
    ["a parentSession that is not a string", { parentSession: ["x"] }],
    ["a title that is not a string", { title: {} }],
  ])("refuses %s", (_, change) => {
    expect(decodeHeader("pi", { ...good, ...change })).toEqual({ success: false });
  });
});
