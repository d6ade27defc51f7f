/**
 * Any bytes as a session file: the reader only ever throws typed errors; in a file with a header,
 * every valid entry line is kept, in order (whatever damage surrounds it), every other non-blank
 * line is reported as a problem with its line number, and how the file is cut into read ranges
 * changes nothing.
 */
import fc from "fast-check";
import { describe, expect, it } from "vitest";
import { memoryStorage } from "../../../adapters/memory/index.js";
import { isSessionError } from "../../../src/errors.js";
import { scanJsonl } from "../../../src/format/jsonl-reader.js";
import { readSessionFile } from "../../../src/format/session-file.js";
import { SessionManager } from "../../../src/index.js";
import { isStorageError } from "../../../src/port.js";
import { SEED, settings } from "./fast-check.js";

const PATH = "sessions/--p--/s.jsonl";
const NEWLINE = 0x0a;
const encoder = new TextEncoder();
const HEADER = JSON.stringify({ type: "session", version: 3, id: "0b5e55e5-0000-4000-8000-00000000000f", timestamp: "2026-01-01T00:00:00.000Z", cwd: "/p" });

/** One line of a generated file, before it is numbered. */
type LineSpec =
  | { kind: "entry"; text: string }
  | { kind: "garbage"; text: string }
  | { kind: "bytes"; bytes: Uint8Array }
  | { kind: "json"; value: unknown }
  | { kind: "cut"; text: string; keep: number };

const lineSpec: fc.Arbitrary<LineSpec> = fc.oneof(
  { weight: 5, arbitrary: fc.string({ unit: "grapheme", maxLength: 40 }).map((text) => ({ kind: "entry" as const, text })) },
  { weight: 1, arbitrary: fc.string({ maxLength: 30 }).map((text) => ({ kind: "garbage" as const, text: text.replace(/\n/g, "") })) },
  { weight: 1, arbitrary: fc.uint8Array({ maxLength: 30 }).map((bytes) => ({ kind: "bytes" as const, bytes: bytes.map((b) => (b === NEWLINE ? 0 : b)) })) },
  { weight: 1, arbitrary: fc.jsonValue({ maxDepth: 2 }).map((value) => ({ kind: "json" as const, value })) },
  { weight: 1, arbitrary: fc.tuple(fc.string({ maxLength: 20 }), fc.nat()).map(([text, keep]) => ({ kind: "cut" as const, text, keep })) },
);

interface Generated {
  bytes: Uint8Array;
  /** Ids of the valid entry lines, in file order. */
  validIds: string[];
}

function entryLine(index: number, text: string): { id: string; line: string } {
  const id = `e${index.toString(16).padStart(7, "0")}`;
  const entry = { type: "message", id, parentId: null, timestamp: "2026-01-01T00:00:01.000Z", message: { role: "user", content: text, timestamp: index } };
  return { id, line: JSON.stringify(entry) };
}

/** A file: the header, the lines, and a last line that is whole, whole without "\n", or torn. */
const sessionFile: fc.Arbitrary<Generated> = fc
  .tuple(fc.array(lineSpec, { maxLength: 25 }), fc.constantFrom("clean", "missing-newline", "torn"), fc.nat())
  .map(([specs, ending, cutAt]) => {
    const parts: Uint8Array[] = [encoder.encode(`${HEADER}\n`)];
    const validIds: string[] = [];
    specs.forEach((spec, i) => {
      if (spec.kind === "entry") {
        const { id, line } = entryLine(i, spec.text);
        validIds.push(id);
        parts.push(encoder.encode(`${line}\n`));
      } else if (spec.kind === "garbage") parts.push(encoder.encode(`${spec.text}\n`));
      else if (spec.kind === "bytes") parts.push(spec.bytes, Uint8Array.of(NEWLINE));
      else if (spec.kind === "json") parts.push(encoder.encode(`${JSON.stringify(spec.value) ?? "null"}\n`));
      else {
        const { line } = entryLine(i, spec.text);
        parts.push(encoder.encode(`${line.slice(0, spec.keep % line.length)}\n`));
      }
    });
    const last = entryLine(specs.length, "the last one");
    if (ending === "clean") {
      validIds.push(last.id);
      parts.push(encoder.encode(`${last.line}\n`));
    } else if (ending === "missing-newline") {
      validIds.push(last.id);
      parts.push(encoder.encode(last.line));
    } else {
      parts.push(encoder.encode(last.line.slice(0, 1 + (cutAt % (last.line.length - 1)))));
    }
    return { bytes: new Uint8Array(Buffer.concat(parts)), validIds };
  });

async function stored(bytes: Uint8Array) {
  const storage = memoryStorage();
  await storage.write(PATH, bytes);
  return storage;
}

/** The lines of a file as the reader numbers them, decoded. */
function linesOf(bytes: Uint8Array): string[] {
  const lines: string[] = [];
  let from = 0;
  for (let nl = bytes.indexOf(NEWLINE); nl >= 0; nl = bytes.indexOf(NEWLINE, from)) {
    lines.push(new TextDecoder().decode(bytes.subarray(from, nl)));
    from = nl + 1;
  }
  if (from < bytes.length) lines.push(new TextDecoder().decode(bytes.subarray(from)));
  return lines;
}

function isTypedError(error: unknown): boolean {
  return isSessionError(error) || isStorageError(error);
}

describe(`session reader properties (fast-check, seed ${SEED})`, () => {
  it("any bytes: reading and opening give a result or a typed error, nothing else", async () => {
    await fc.assert(
      fc.asyncProperty(fc.oneof(fc.uint8Array({ maxLength: 400 }), sessionFile.map((file) => file.bytes)), async (bytes) => {
        const storage = await stored(bytes);
        await readSessionFile(storage, PATH).catch((error: unknown) => {
          if (!isTypedError(error)) throw error;
        });
        const opened = await SessionManager.open(storage, PATH, { readOnly: true, onWarning: () => {} }).catch((error: unknown) => {
          if (!isTypedError(error)) throw error;
          return null;
        });
        if (opened) {
          opened.buildSessionContext();
          await opened.close();
        }
      }),
      settings(300),
    );
  });

  it("a session with damaged lines: every valid entry kept in order, every other non-blank line reported at its number", async () => {
    await fc.assert(
      fc.asyncProperty(sessionFile, async ({ bytes, validIds }) => {
        const read = await readSessionFile(await stored(bytes), PATH);
        expect(read.kind).toBe("session");
        if (read.kind !== "session") return;
        const ids = read.entries.map((entry) => entry.id);
        expect(ids.filter((id) => validIds.includes(id))).toEqual(validIds);
        const accounted = new Set([1, ...read.entryLines, ...read.problems.map((problem) => problem.line)]);
        const unaccounted = linesOf(bytes)
          .map((text, i) => ({ line: i + 1, text }))
          .filter(({ line, text }) => text.trim() !== "" && !accounted.has(line));
        expect(unaccounted).toEqual([]);
      }),
      settings(400),
    );
  });

  it("the records, problems and tail do not depend on the size of the read ranges", async () => {
    await fc.assert(
      fc.asyncProperty(sessionFile, fc.integer({ min: 1, max: 97 }), async ({ bytes }, chunkSize) => {
        const storage = await stored(bytes);
        const scan = async (options: { chunkSize?: number }) => {
          const records: [number, unknown][] = [];
          const result = await scanJsonl(storage, PATH, (record, line) => records.push([line, record]), options);
          return { records, result };
        };
        expect(await scan({ chunkSize })).toEqual(await scan({}));
      }),
      settings(200),
    );
  });
});
