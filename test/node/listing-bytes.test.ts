/**
 * The listing takes most message lines from their bytes (session-info.ts addMessageLine) instead
 * of parsing them (addRecord). Whatever a line and the summary so far, what it takes must leave the
 * summary exactly as the parse would; and a whole file must list the same as its parsed records.
 */
import fc from "fast-check";
import { describe, expect, it } from "vitest";
import { messageLineShape, readMessageLine } from "../../src/format/message-line.js";
import { memoryStorage } from "../../adapters/memory/index.js";
import { listAllSessions } from "../../src/session/listing.js";
import { addMessageLine, addRecord, emptySummary, toSessionInfo, type SessionSummary } from "../../src/session/session-info.js";

const encoder = new TextEncoder();
const shape = messageLineShape("parentId");

const text = fc.oneof(fc.constant(""), fc.string({ maxLength: 8 }), fc.constantFrom("hello", "naïve ✔", 'say "hi"\n'));
const block = fc.oneof(
  text.map((t) => ({ type: "text", text: t })),
  fc.constant({ type: "image", data: "eA==", mimeType: "image/png" }),
  fc.constant({ type: "text" }),
  fc.constant(null),
  fc.constant(3),
  fc.constant("loose"),
  fc.constant([]),
);
/** A `"content":…` member as written (or none), several times or once. */
const contentValue = fc.oneof(text.map((t) => JSON.stringify(t)), fc.array(block, { maxLength: 3 }).map((b) => JSON.stringify(b)), fc.constantFrom("null", "7", '{"text":"a"}', "true", "[]"));
const members = fc.array(
  fc.oneof(
    contentValue.map((v) => `"content":${v}`),
    fc.oneof(fc.integer({ min: -5, max: 2e12 }), fc.double({ noNaN: true, noDefaultInfinity: true, min: 0, max: 2e12 })).map((n) => `"timestamp":${JSON.stringify(n)}`),
    fc.constant('"provider":"x"'),
    fc.constant('"usage":{"input":1,"content":null}'),
  ),
  { maxLength: 4 },
);
const line = fc
  .record({
    role: fc.constantFrom("user", "assistant", "toolResult", "custom"),
    members,
    recordTimestamp: fc.constantFrom("2026-01-01T00:00:00.000Z", "2025-06-30T12:00:00Z", "not a date", ""),
  })
  .map(({ role, members, recordTimestamp }) => `{"type":"message","id":"e1","parentId":"e0","timestamp":${JSON.stringify(recordTimestamp)},"message":{"role":${JSON.stringify(role)}${members.map((m) => `,${m}`).join("")}}}`);

const summarySoFar = fc.record({
  records: fc.constantFrom(0, 1, 5),
  valid: fc.boolean(),
  firstMessage: fc.constantFrom("", "an earlier question"),
  lastActivityTime: fc.option(fc.constantFrom(0, 1, 1.7e12, 4e12), { nil: undefined }),
  messageCount: fc.constantFrom(0, 3),
});

describe("listing message lines from their bytes", () => {
  it("a line taken from its bytes leaves the summary as addRecord leaves it with the line parsed", () => {
    const seen = { taken: 0, left: 0 };
    fc.assert(
      fc.property(line, summarySoFar, (written, so) => {
        const bytes = encoder.encode(`${written}\n`);
        const head = readMessageLine(bytes, new DataView(bytes.buffer), 0, bytes.length, shape);
        if (!head) return; // not proved: parsed, as before
        const start: SessionSummary = { ...emptySummary(), ...so, valid: so.records > 0 && so.valid, id: "s", cwd: "/p", headerTimestamp: "2026-01-01T00:00:00.000Z" };
        const taken = structuredClone(start);
        const parsed = structuredClone(start);
        addRecord(parsed, JSON.parse(written) as Record<string, unknown>);
        if (addMessageLine(taken, head, bytes)) {
          seen.taken++;
          expect(taken).toEqual(parsed);
        } else {
          seen.left++;
          expect(taken).toEqual(start); // nothing added: the caller parses it
        }
      }),
      { numRuns: 3000 },
    );
    // Both ways were taken often: the property tested something.
    expect(seen.taken).toBeGreaterThan(1000);
    expect(seen.left).toBeGreaterThan(20);
  });

  it("a whole file lists as its records parsed one by one do (torn tail, blank and glued lines included), read at once or resumed after an append", async () => {
    await fc.assert(
      fc.asyncProperty(fc.array(fc.oneof(line, line, fc.constantFrom("", '{"type":"session_info","id":"i","parentId":"e1","timestamp":"2026-01-02T00:00:00.000Z","name":"named"}', "not json", '{"type":"message","id":"g"}{"type":"custom","id":"h","customType":"x"}')), { maxLength: 12 }), fc.constantFrom("", '{"type":"message","id":"t'), fc.nat(12), async (lines, tail, cut) => {
        const header = '{"type":"session","version":3,"id":"s1","timestamp":"2026-01-01T00:00:00.000Z","cwd":"/p"}';
        const file = `${[header, ...lines].join("\n")}\n${tail}`;
        const storage = memoryStorage();
        // Listed once with its first lines (the catalog keeps where it stopped), then with the rest appended.
        const first = `${[header, ...lines.slice(0, cut)].join("\n")}\n`;
        await storage.write("sessions/--p--/s.jsonl", encoder.encode(first));
        await listAllSessions(storage);
        await storage.append("sessions/--p--/s.jsonl", encoder.encode(file.slice(first.length)));
        const [listed] = await listAllSessions(storage, { catalog: false });
        expect(await listAllSessions(storage)).toEqual(listed === undefined ? [] : [listed]);
        const summary = emptySummary();
        for (const each of file.split("\n").slice(0, tail ? -1 : undefined)) {
          if (each.trim() === "") continue;
          try {
            addRecord(summary, JSON.parse(each) as Record<string, unknown>);
          } catch {
            if (each.startsWith('{"type":"message","id":"g"}')) for (const glued of ['{"type":"message","id":"g"}', '{"type":"custom","id":"h","customType":"x"}']) addRecord(summary, JSON.parse(glued) as Record<string, unknown>);
          }
        }
        const mtimeMs = (await storage.stat("sessions/--p--/s.jsonl"))!.mtimeMs;
        expect(listed).toEqual(summary.valid ? toSessionInfo("sessions/--p--/s.jsonl", summary, mtimeMs) : undefined);
      }),
      { numRuns: 300 },
    );
  });
});
