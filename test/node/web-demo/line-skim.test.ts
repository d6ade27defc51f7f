/**
 * line-skim.ts reads from a proved line's bytes what the viewer's index needs of a message (an
 * assistant's usage, model, tool calls and whether it has text; a tool result's call, where the
 * core's proof found it): it must
 * equal what the parsed message gives (assistantFacts), duplicate keys and escapes included, or
 * give up (null) so the line is parsed.
 */
import fc from "fast-check";
import { describe, expect, it } from "vitest";
import { messageLineShape, readMessageLine } from "../../../src/format/message-line.js";
import { afterRole, assistantFacts, skimAssistant, toolCallIdAt } from "../../../web-demo/src/data/line-skim.js";

const shape = messageLineShape("parentId");
const encoder = new TextEncoder();

const lineOf = (messageJson: string) => `{"type":"message","id":"a1","parentId":null,"timestamp":"2026-01-01T00:00:00.000Z","message":${messageJson}}`;

function proved(line: string) {
  const bytes = encoder.encode(`${line}\n`);
  return { bytes, head: readMessageLine(bytes, new DataView(bytes.buffer), 0, bytes.length, shape) };
}

/** The line of a message entry holding `messageJson` (its text as written), skimmed. */
function skim(messageJson: string) {
  const line = lineOf(messageJson);
  const { bytes, head } = proved(line);
  if (!head) throw new Error(`the core did not prove ${line}`);
  const at = afterRole(head.timestampEnd, head.role);
  const parsed = (JSON.parse(line) as { message: Record<string, unknown> }).message;
  return head.role === "assistant" ? { skimmed: skimAssistant(bytes, at), parsed: assistantFacts(parsed) } : { skimmed: toolCallIdAt(bytes, head.toolCallIdStart, head.toolCallIdEnd), parsed: parsed.toolCallId };
}

const usage = '{"input":95408,"output":5684,"cacheRead":91749,"cacheWrite":0,"totalTokens":192841,"cost":{"input":0.28622400000000003,"output":0.08526,"cacheRead":0.0275247,"cacheWrite":0,"total":0.39900870000000005}}';

describe("skimAssistant", () => {
  const cases: [what: string, message: string][] = [
    ["pi's assistant message", `{"role":"assistant","content":[{"type":"thinking","thinking":"hm \\"q\\" \\\\"},{"type":"text","text":"Done."},{"type":"toolCall","id":"toolu_1","name":"bash","arguments":{"command":"ls \\"a\\""}}],"api":"anthropic-messages","provider":"anthropic","model":"claude-sonnet-4-5","usage":${usage},"stopReason":"toolUse","timestamp":1767603629478}`],
    ["tool calls only", `{"role":"assistant","content":[{"type":"toolCall","id":"t1","name":"read","arguments":{}},{"type":"toolCall","name":"x"}],"stopReason":"toolUse"}`],
    ["whitespace-only text", `{"role":"assistant","content":[{"type":"text","text":" \\n\\t "},{"type":"text","text":"\u00a0\u2028"}],"stopReason":"stop"}`],
    ["text after non-ASCII whitespace", `{"role":"assistant","content":[{"type":"text","text":"\u3000x"}]}`],
    ["escaped whitespace and an escaped letter", `{"role":"assistant","content":[{"type":"text","text":"\\u0020"},{"type":"text","text":"\\u0041"}]}`],
    ["a failed call without text", `{"role":"assistant","content":[],"stopReason":"error","errorMessage":"boom"}`],
    ["content as a string", `{"role":"assistant","content":"  hello  ","model":"m"}`],
    ["content neither string nor array", `{"role":"assistant","content":{"type":"text","text":"x"},"provider":"p"}`],
    ["duplicate content: the last counts", `{"role":"assistant","content":[{"type":"text","text":"hi"},{"type":"toolCall","id":"a"}],"content":[{"type":"toolCall","id":"b"}]}`],
    ["duplicate usage and model: the last count", `{"role":"assistant","content":[],"usage":{"input":1},"model":"a","usage":{"input":2,"cost":3},"model":"b"}`],
    ["duplicate keys in a block", `{"role":"assistant","content":[{"type":"text","text":"x","type":"toolCall","id":"c1","id":"c2"}]}`],
    ["non-string ids and texts, non-object blocks", `{"role":"assistant","content":[1,"s",null,[],{"type":"text","text":5},{"type":"toolCall","id":7}]}`],
    ["whitespace between tokens", `{"role":"assistant" , "content" : [ { "type" : "text" , "text" : "a" } , { "type":"toolCall" ,"id" : "z" } ] , "usage" : { "input" : 4 } }`],
    ["escaped keys and types in blocks", `{"role":"assistant","content":[{"t\\u0079pe":"t\\u0065xt","te\\u0078t":"x"},{"type":"tool\\u0043all","\\u0069d":"c"},{"\\"":1,"type":"t\\u0065xts"}]}`],
    ["a nested key named like a member", `{"role":"assistant","content":[{"type":"toolCall","id":"q","arguments":{"content":[],"usage":{"input":99},"type":"text","text":"no"}}],"stopReason":"toolUse"}`],
  ];
  for (const [what, message] of cases) {
    it(`reads ${what} as the parsed message gives it`, () => {
      const { skimmed, parsed } = skim(message);
      expect(skimmed).not.toBeNull();
      expect(skimmed).toEqual(parsed);
    });
  }

  it("never sees a message's key written with escapes: the core parses such a line (it might hide a second role)", () => {
    expect(proved(lineOf(`{"role":"assistant","cont\\u0065nt":[{"type":"text","text":"x"}]}`)).head).toBeNull();
    expect(proved(lineOf(`{"role":"toolResult","toolCall\\u0049d":"c1"}`)).head).toBeNull();
  });

  it("equals the parsed message's facts for any assistant message JSON.stringify writes", () => {
    const text = fc.oneof(fc.string(), fc.string({ unit: "binary" }), fc.constantFrom("", " ", "\n\t", "\u00a0", "\u2028x", "\\", '"'));
    const block = fc.oneof(
      fc.record({ type: fc.constant("text"), text }),
      fc.record({ type: fc.constant("toolCall"), id: fc.option(fc.string(), { nil: undefined }), name: fc.string(), arguments: fc.jsonValue() }),
      fc.record({ type: fc.constant("thinking"), thinking: text }),
      fc.jsonValue(),
    );
    const message = fc.record(
      {
        content: fc.oneof(fc.array(block, { maxLength: 6 }), text, fc.jsonValue()),
        provider: fc.string(),
        model: fc.oneof(fc.string(), fc.jsonValue()),
        usage: fc.oneof(fc.record({ input: fc.double(), output: fc.integer(), cost: fc.oneof(fc.double(), fc.record({ input: fc.double(), total: fc.double() })) }), fc.jsonValue()),
        stopReason: fc.constantFrom("stop", "toolUse", "error", "aborted", undefined),
        details: fc.jsonValue(),
      },
      { requiredKeys: [] },
    );
    fc.assert(
      fc.property(message, (fields) => {
        const { skimmed, parsed } = skim(JSON.stringify({ role: "assistant", ...fields }));
        expect(skimmed).not.toBeNull();
        expect(skimmed).toEqual(parsed);
      }),
      { numRuns: 500 },
    );
  });
});

describe("toolCallIdAt", () => {
  it("reads the result's call id (the last one of the message, as JSON.parse keeps it), not one nested deeper", () => {
    expect(skim('{"role":"toolResult","toolCallId":"c1","toolName":"bash","content":[{"type":"text","text":"\\"toolCallId\\":\\"no\\""}],"details":{"toolCallId":"deep"},"isError":false}')).toEqual({ skimmed: "c1", parsed: "c1" });
    expect(skim('{"role":"toolResult","toolCallId":"c1","content":[],"toolCallId":"c2"}')).toEqual({ skimmed: "c2", parsed: "c2" });
    expect(skim('{"role":"toolResult","toolCallId":5}')).toEqual({ skimmed: undefined, parsed: 5 });
    expect(skim('{"role":"toolResult","toolCallId":"c\\u0031"}')).toEqual({ skimmed: "c1", parsed: "c1" });
  });
});
