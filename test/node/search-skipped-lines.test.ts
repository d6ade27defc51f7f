/**
 * The search index skips, from their bytes, the message lines whose role gives no text of the
 * group it builds (search-index.ts): a tool result is not parsed for the user and assistant
 * group. Each role's words must still be found in exactly the sources that role gives, and a file
 * whose first line is a message stays unindexed, skipped line or not.
 */
import { describe, expect, it } from "vitest";
import { memoryStorage } from "../../adapters/memory/index.js";
import { searchSessions, type SearchSource } from "../../src/index.js";

const encoder = new TextEncoder();
const header = (id: string) => JSON.stringify({ type: "session", version: 3, id, timestamp: "2026-01-01T00:00:00.000Z", cwd: "/p" });
let n = 0;
const message = (message: Record<string, unknown>) => JSON.stringify({ type: "message", id: `e${++n}`, parentId: n > 1 ? `e${n - 1}` : null, timestamp: "2026-01-01T00:00:00.000Z", message: { ...message, timestamp: 1 } });

/** One line per role, each with a word of its own; the sources a search finds each word in. */
const lines: { line: string; word: string; sources: SearchSource[] }[] = [
  { line: message({ role: "user", content: "alphaword" }), word: "alphaword", sources: ["user"] },
  { line: message({ role: "assistant", content: [{ type: "text", text: "bravoword" }, { type: "thinking", thinking: "charlieword" }] }), word: "bravoword", sources: ["assistant"] },
  { line: message({ role: "assistant", content: [{ type: "thinking", thinking: "charlieword" }] }), word: "charlieword", sources: ["thinking"] },
  { line: message({ role: "toolResult", toolCallId: "t1", toolName: "bash", content: [{ type: "text", text: "deltaword" }], isError: false }), word: "deltaword", sources: ["tool"] },
  { line: message({ role: "bashExecution", command: "echo echoword", output: "echoword", exitCode: 0 }), word: "echoword", sources: ["tool"] },
  { line: message({ role: "custom", customType: "note", content: "foxtrotword", display: true }), word: "foxtrotword", sources: [] },
];

describe("search index: message lines skipped from their bytes", () => {
  it("finds each role's words in exactly the sources that role gives, in either group", async () => {
    const storage = memoryStorage();
    await storage.write("sessions/--p--/a.jsonl", encoder.encode(`${[header("a"), ...lines.map((l) => l.line)].join("\n")}\n`));
    for (const { word, sources } of lines) {
      for (const source of ["user", "assistant", "thinking", "tool"] as const) {
        const hits = await searchSessions(storage, word, { sources: [source] });
        expect([word, source, hits.length > 0]).toEqual([word, source, sources.includes(source)]);
      }
    }
  });

  it("a file whose first line is a message is not indexed, even when a header follows that line", async () => {
    const storage = memoryStorage();
    const toolFirst = lines[3]!.line;
    await storage.write("sessions/--p--/b.jsonl", encoder.encode(`${[toolFirst, header("b"), lines[0]!.line].join("\n")}\n`));
    expect(await searchSessions(storage, "alphaword")).toEqual([]);
    expect(await searchSessions(storage, "deltaword", { sources: ["tool"] })).toEqual([]);
  });
});
