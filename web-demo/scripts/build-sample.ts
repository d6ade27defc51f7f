/**
 * Writes web-demo/src/samples/pi-sample.jsonl, the session the viewer imports on first run, with
 * pi's own SessionManager (the installed @mariozechner/pi-coding-agent), so the sample is a file
 * pi itself wrote: two branches, labels, a compaction, a branch summary, two images (PNGs over
 * 1024 base64 chars, so the import moves them into blobs/: one in a user message, one in a tool
 * result on the latest branch), thinking and model changes, tool calls and results, a bash
 * execution and an extension message.
 *
 *   npx tsx web-demo/scripts/build-sample.ts
 */
import { copyFile, mkdtemp, rm } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { fileURLToPath } from "node:url";
import { crc32, deflateSync } from "node:zlib";
import { SessionManager } from "@mariozechner/pi-coding-agent";

const OUTPUT = fileURLToPath(new URL("../src/samples/pi-sample.jsonl", import.meta.url));

/** A PNG chunk: length, type, data, CRC over type and data. */
function pngChunk(type: string, data: Buffer): Buffer {
  const length = Buffer.alloc(4);
  length.writeUInt32BE(data.length);
  const typed = Buffer.concat([Buffer.from(type, "ascii"), data]);
  const crc = Buffer.alloc(4);
  crc.writeUInt32BE(crc32(typed));
  return Buffer.concat([length, typed, crc]);
}

/** Distance from (x, y) to the segment (ax, ay)–(bx, by). */
function segmentDistance(x: number, y: number, [ax, ay, bx, by]: number[]): number {
  const t = Math.max(0, Math.min(1, ((x - ax!) * (bx! - ax!) + (y - ay!) * (by! - ay!)) / ((bx! - ax!) ** 2 + (by! - ay!) ** 2)));
  return Math.hypot(x - (ax! + t * (bx! - ax!)), y - (ay! + t * (by! - ay!)));
}

/** A 64×64 RGB CI status badge: a red disc with a white cross, or a green one with a check mark. */
function badgePng(status: "failed" | "passed"): Buffer {
  const size = 64;
  const disc = status === "failed" ? [214, 48, 49] : [46, 160, 67];
  const strokes = status === "failed" ? [[-14, -14, 14, 14], [-14, 14, 14, -14]] : [[-15, 1, -5, 11], [-5, 11, 15, -11]];
  const rows: Buffer[] = [];
  for (let y = 0; y < size; y++) {
    const row = Buffer.alloc(1 + size * 3); // filter byte 0, then RGB
    for (let x = 0; x < size; x++) {
      const dx = x - size / 2 + 0.5;
      const dy = y - size / 2 + 0.5;
      const inDisc = dx * dx + dy * dy < 28 * 28;
      const onStroke = strokes.some((segment) => segmentDistance(dx, dy, segment) < 3.5);
      row.set(inDisc ? (onStroke ? [255, 255, 255] : disc) : [240, 236, 228], 1 + x * 3);
    }
    rows.push(row);
  }
  const ihdr = Buffer.alloc(13);
  ihdr.writeUInt32BE(size, 0);
  ihdr.writeUInt32BE(size, 4);
  ihdr.set([8, 2, 0, 0, 0], 8); // 8 bits, truecolor, deflate, no filter, no interlace
  // Stored, not compressed: keeps the base64 well over the 1024 chars that make it a blob.
  const idat = deflateSync(Buffer.concat(rows), { level: 0 });
  const signature = Buffer.from([0x89, 0x50, 0x4e, 0x47, 0x0d, 0x0a, 0x1a, 0x0a]);
  return Buffer.concat([signature, pngChunk("IHDR", ihdr), pngChunk("IDAT", idat), pngChunk("IEND", Buffer.alloc(0))]);
}

const at = () => Date.now();

const usage = (input: number, output: number) => ({
  input,
  output,
  cacheRead: 0,
  cacheWrite: 0,
  totalTokens: input + output,
  cost: { input: input * 3e-6, output: output * 15e-6, cacheRead: 0, cacheWrite: 0, total: input * 3e-6 + output * 15e-6 },
});

type AssistantBlock =
  | { type: "text"; text: string }
  | { type: "thinking"; thinking: string }
  | { type: "toolCall"; id: string; name: string; arguments: Record<string, unknown> };

function assistant(model: { provider: string; model: string; api: string }, content: AssistantBlock[], stopReason: "stop" | "toolUse" = "stop") {
  return { role: "assistant" as const, content, ...model, usage: usage(1200, 180), stopReason, timestamp: at() };
}

function toolResult(toolCallId: string, toolName: string, text: string, isError = false) {
  return { role: "toolResult" as const, toolCallId, toolName, content: [{ type: "text" as const, text }], isError, timestamp: at() };
}

const claude = { provider: "anthropic", model: "claude-sonnet-4-5", api: "anthropic-messages" };
const gpt = { provider: "openai", model: "gpt-5", api: "openai-responses" };

const dir = await mkdtemp(join(tmpdir(), "sessionkit-sample-"));
try {
  const sm = SessionManager.create("/home/demo/todo-app", dir);
  sm.appendModelChange(claude.provider, claude.model);
  sm.appendThinkingLevelChange("medium");
  sm.appendMessage({
    role: "user",
    content: [
      { type: "text", text: "The due-date test fails on CI every evening, but never on my machine. This is what CI shows:" },
      { type: "image", data: badgePng("failed").toString("base64"), mimeType: "image/png" },
    ],
    timestamp: at(),
  });
  sm.appendMessage(
    assistant(
      claude,
      [
        { type: "thinking", thinking: "Fails only in the evening on CI: CI runs in UTC, the developer is probably ahead of UTC. A date computed with local time and compared in UTC would flip days around midnight UTC. Read the test first." },
        { type: "text", text: "A test that fails only at certain hours usually mixes local time and UTC. Let me read it." },
        { type: "toolCall", id: "call_read_1", name: "read", arguments: { path: "test/due-date.test.ts" } },
      ],
      "toolUse",
    ),
  );
  sm.appendMessage(
    toolResult(
      "call_read_1",
      "read",
      [
        'import { dueLabel } from "../src/due-date";',
        "",
        'test("a task due today says today", () => {',
        "  const today = new Date();",
        '  expect(dueLabel(today.toISOString().slice(0, 10))).toBe("today");',
        "});",
      ].join("\n"),
    ),
  );
  sm.appendMessage(assistant(claude, [{ type: "toolCall", id: "call_bash_1", name: "bash", arguments: { command: "TZ=Pacific/Auckland npm test -- due-date" } }], "toolUse"));
  sm.appendMessage(
    toolResult(
      "call_bash_1",
      "bash",
      [
        " FAIL  test/due-date.test.ts",
        "  ✕ a task due today says today (4 ms)",
        "",
        '    Expected: "today"',
        '    Received: "yesterday"',
        "",
        "Tests: 1 failed, 11 passed, 12 total",
      ].join("\n"),
      true,
    ),
  );
  sm.appendMessage(
    assistant(
      claude,
      [
        { type: "text", text: "Reproduced: `toISOString()` gives the UTC date, while `dueLabel` compares against the local date. I'll build the date string from local fields." },
        {
          type: "toolCall",
          id: "call_edit_1",
          name: "edit",
          arguments: {
            path: "test/due-date.test.ts",
            oldText: "today.toISOString().slice(0, 10)",
            newText: 'today.toLocaleDateString("sv-SE")',
          },
        },
      ],
      "toolUse",
    ),
  );
  sm.appendMessage(toolResult("call_edit_1", "edit", "Successfully replaced text in test/due-date.test.ts."));
  const fixed = sm.appendMessage(assistant(claude, [{ type: "text", text: "Fixed: the test now builds today's date in local time, like `dueLabel` does. It passes with TZ=Pacific/Auckland and TZ=UTC." }]));
  sm.appendLabelChange(fixed, "fix applied");
  sm.appendSessionInfo("Flaky due-date test");
  sm.appendMessage({
    role: "bashExecution",
    command: "git diff --stat",
    output: " test/due-date.test.ts | 2 +-\n 1 file changed, 1 insertion(+), 1 deletion(-)",
    exitCode: 0,
    cancelled: false,
    truncated: false,
    timestamp: at(),
  });
  sm.appendCompaction(
    "## Goal\nFix the due-date test that fails on CI in the evening.\n\n## Done\n- Cause: the test built today's date with `toISOString()` (UTC) while `dueLabel` uses local time.\n- Fixed in test/due-date.test.ts with `toLocaleDateString(\"sv-SE\")`; passes in Pacific/Auckland and UTC.",
    fixed,
    48213,
  );
  sm.appendThinkingLevelChange("high");
  const branchPoint = sm.appendModelChange(gpt.provider, gpt.model);
  sm.appendMessage({ role: "user", content: "Add a test for the day daylight saving time starts, too.", timestamp: at() });
  const dst = sm.appendMessage(
    assistant(gpt, [
      { type: "thinking", thinking: "Fake timers at 2026-03-29T01:30 Europe/Berlin, the skipped hour. dueLabel must still say today." },
      { type: "text", text: "Added `due-date.dst.test.ts`: it freezes time inside the skipped hour of 29 March 2026 (Europe/Berlin) and checks `dueLabel` still says today." },
    ]),
  );
  sm.appendLabelChange(dst, "dst attempt");
  sm.branchWithSummary(
    branchPoint,
    "Tried a DST test with fake timers at 2026-03-29 01:30 Europe/Berlin; abandoned: the CI image has no tzdata, so the test could not set the zone.",
  );
  sm.appendMessage({ role: "user", content: "Forget the DST test. Write down the timezone assumption in the README instead.", timestamp: at() });
  sm.appendCustomMessageEntry("todo-reminder", "Open todo: release notes for 1.4 mention the due-date fix.", true, { source: "todo-extension" });
  sm.appendMessage(
    assistant(
      gpt,
      [
        { type: "text", text: "First a look at the CI status badge the README shows, to describe the current state." },
        { type: "toolCall", id: "call_read_2", name: "read", arguments: { path: "docs/ci-status.png" } },
      ],
      "toolUse",
    ),
  );
  sm.appendMessage({
    role: "toolResult",
    toolCallId: "call_read_2",
    toolName: "read",
    content: [
      { type: "text", text: "Read image file [image/png]" },
      { type: "image", data: badgePng("passed").toString("base64"), mimeType: "image/png" },
    ],
    isError: false,
    timestamp: at(),
  });
  sm.appendMessage(
    assistant(gpt, [
      { type: "toolCall", id: "call_edit_2", name: "edit", arguments: { path: "README.md", oldText: "## Testing", newText: "## Testing\n\nDates are local: tests must build dates from local fields, never from toISOString()." } },
    ], "toolUse"),
  );
  sm.appendMessage(toolResult("call_edit_2", "edit", "Successfully replaced text in README.md."));
  sm.appendMessage(assistant(gpt, [{ type: "text", text: "The README now says dates are local and tests must not build them with `toISOString()`." }]));
  await copyFile(sm.getSessionFile()!, OUTPUT);
  console.log(`wrote ${OUTPUT}`);
} finally {
  await rm(dir, { recursive: true, force: true });
}
