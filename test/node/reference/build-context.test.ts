/**
 * pi's test/session-manager/build-context.test.ts and oh-my-pi's copy of it (A3), ported to our
 * free function `buildSessionContext(entries, leafId?)`. The two upstream files hold the same
 * cases; they differ only in how the model is reported (pi: `model {provider, modelId}`; omp:
 * `models.default = "provider/modelId"`). We follow pi and say so in those names; omp's form is
 * tested at the end, where our context carries it as `omp.models` when omp entries are on the path.
 *
 * Every pi-dialect case is also checked against the real pi package (the oracle): our whole
 * context must equal what pi's own buildSessionContext returns for the same entries.
 */
import { buildSessionContext as piBuildSessionContext } from "@mariozechner/pi-coding-agent";
import { describe, expect, it } from "vitest";
import {
  buildSessionContext,
  SessionManager,
  type BranchSummaryEntry,
  type CompactionEntry,
  type MessageEntry,
  type ModelChangeEntry,
  type SessionContext,
  type SessionEntry,
  type ThinkingLevelChangeEntry,
} from "../../../src/index.js";
import { assistantMsg, userMsg } from "../../shared/messages.js";

const TIMESTAMP = "2025-01-01T00:00:00Z";

function msg(id: string, parentId: string | null, role: "user" | "assistant", text: string): MessageEntry {
  const message =
    role === "user"
      ? { role, content: text, timestamp: 1 }
      : { role, content: [{ type: "text", text }], provider: "anthropic", model: "claude-test", timestamp: 1 };
  return { type: "message", id, parentId, timestamp: TIMESTAMP, message };
}

function compaction(id: string, parentId: string | null, summary: string, firstKeptEntryId: string): CompactionEntry {
  return { type: "compaction", id, parentId, timestamp: TIMESTAMP, summary, firstKeptEntryId, tokensBefore: 1000 };
}

function branchSummary(id: string, parentId: string | null, summary: string, fromId: string): BranchSummaryEntry {
  return { type: "branch_summary", id, parentId, timestamp: TIMESTAMP, summary, fromId };
}

function thinkingLevel(id: string, parentId: string | null, level: string): ThinkingLevelChangeEntry {
  return { type: "thinking_level_change", id, parentId, timestamp: TIMESTAMP, thinkingLevel: level };
}

function modelChange(id: string, parentId: string | null, provider: string, modelId: string): ModelChangeEntry {
  return { type: "model_change", id, parentId, timestamp: TIMESTAMP, provider, modelId };
}

/** omp's builder: `{model: "provider/modelId"}`, with an optional role. */
function roleModelChange(id: string, parentId: string | null, model: string, role?: string): ModelChangeEntry {
  return { type: "model_change", id, parentId, timestamp: TIMESTAMP, model, ...(role ? { role } : {}) };
}

/** Our context, after checking that pi computes exactly the same one. */
function ctx(entries: SessionEntry[], leafId?: string): SessionContext {
  const ours = buildSessionContext(entries, leafId);
  const pi = piBuildSessionContext(entries as unknown as Parameters<typeof piBuildSessionContext>[0], leafId);
  expect(ours).toEqual(pi);
  return ours;
}

describe("buildSessionContext", () => {
  describe("trivial cases", () => {
    it("empty entries returns empty context (follows pi: model null, not omp's models {})", () => {
      const context = ctx([]);
      expect(context.messages).toEqual([]);
      expect(context.thinkingLevel).toBe("off");
      expect(context.model).toBeNull();
      expect(context.omp).toBeUndefined();
    });

    it("single user message", () => {
      const context = ctx([msg("1", null, "user", "hello")]);
      expect(context.messages).toHaveLength(1);
      expect(context.messages[0]!.role).toBe("user");
    });

    it("simple conversation", () => {
      const entries = [
        msg("1", null, "user", "hello"),
        msg("2", "1", "assistant", "hi there"),
        msg("3", "2", "user", "how are you"),
        msg("4", "3", "assistant", "great"),
      ];
      const context = ctx(entries);
      expect(context.messages.map((m) => m.role)).toEqual(["user", "assistant", "user", "assistant"]);
    });

    it("tracks thinking level changes", () => {
      const entries = [msg("1", null, "user", "hello"), thinkingLevel("2", "1", "high"), msg("3", "2", "assistant", "thinking hard")];
      const context = ctx(entries);
      expect(context.thinkingLevel).toBe("high");
      expect(context.messages).toHaveLength(2);
    });

    it("tracks model from assistant message (follows pi: model, not omp's models.default)", () => {
      const context = ctx([msg("1", null, "user", "hello"), msg("2", "1", "assistant", "hi")]);
      expect(context.model).toEqual({ provider: "anthropic", modelId: "claude-test" });
      expect(context.omp).toBeUndefined();
    });

    it("tracks model from model change entry (follows pi: model_change {provider, modelId}, not omp's \"provider/modelId\")", () => {
      const entries = [msg("1", null, "user", "hello"), modelChange("2", "1", "openai", "gpt-4"), msg("3", "2", "assistant", "hi")];
      const context = ctx(entries);
      // The assistant message after the model change overrides it.
      expect(context.model).toEqual({ provider: "anthropic", modelId: "claude-test" });
      expect(context.omp).toBeUndefined();
    });
  });

  describe("with compaction", () => {
    it("includes summary before kept messages", () => {
      const entries = [
        msg("1", null, "user", "first"),
        msg("2", "1", "assistant", "response1"),
        msg("3", "2", "user", "second"),
        msg("4", "3", "assistant", "response2"),
        compaction("5", "4", "Summary of first two turns", "3"),
        msg("6", "5", "user", "third"),
        msg("7", "6", "assistant", "response3"),
      ];
      const { messages } = ctx(entries);
      expect(messages).toHaveLength(5);
      expect(messages[0]!.summary).toContain("Summary of first two turns");
      expect(messages[1]!.content).toBe("second");
      expect(messages[2]).toMatchObject({ content: [{ text: "response2" }] });
      expect(messages[3]!.content).toBe("third");
      expect(messages[4]).toMatchObject({ content: [{ text: "response3" }] });
    });

    it("handles compaction keeping from first message", () => {
      const entries = [
        msg("1", null, "user", "first"),
        msg("2", "1", "assistant", "response"),
        compaction("3", "2", "Empty summary", "1"),
        msg("4", "3", "user", "second"),
      ];
      const { messages } = ctx(entries);
      expect(messages).toHaveLength(4);
      expect(messages[0]!.summary).toContain("Empty summary");
    });

    it("multiple compactions uses latest", () => {
      const entries = [
        msg("1", null, "user", "a"),
        msg("2", "1", "assistant", "b"),
        compaction("3", "2", "First summary", "1"),
        msg("4", "3", "user", "c"),
        msg("5", "4", "assistant", "d"),
        compaction("6", "5", "Second summary", "4"),
        msg("7", "6", "user", "e"),
      ];
      const { messages } = ctx(entries);
      expect(messages).toHaveLength(4);
      expect(messages[0]!.summary).toContain("Second summary");
      expect(messages.slice(1).map((m) => m.content)).toEqual(["c", [{ type: "text", text: "d" }], "e"]);
    });
  });

  describe("with branches", () => {
    it("follows path to specified leaf", () => {
      const entries = [
        msg("1", null, "user", "start"),
        msg("2", "1", "assistant", "response"),
        msg("3", "2", "user", "branch A"),
        msg("4", "2", "user", "branch B"),
      ];
      const contextA = ctx(entries, "3");
      expect(contextA.messages).toHaveLength(3);
      expect(contextA.messages[2]!.content).toBe("branch A");

      const contextB = ctx(entries, "4");
      expect(contextB.messages).toHaveLength(3);
      expect(contextB.messages[2]!.content).toBe("branch B");
    });

    it("includes branch summary in path", () => {
      const entries = [
        msg("1", null, "user", "start"),
        msg("2", "1", "assistant", "response"),
        msg("3", "2", "user", "abandoned path"),
        branchSummary("4", "2", "Summary of abandoned work", "3"),
        msg("5", "4", "user", "new direction"),
      ];
      const { messages } = ctx(entries, "5");
      expect(messages).toHaveLength(4);
      expect(messages[2]!.summary).toContain("Summary of abandoned work");
      expect(messages[3]!.content).toBe("new direction");
    });

    it("complex tree with multiple branches and compaction", () => {
      const entries = [
        msg("1", null, "user", "start"),
        msg("2", "1", "assistant", "r1"),
        msg("3", "2", "user", "q2"),
        msg("4", "3", "assistant", "r2"),
        compaction("5", "4", "Compacted history", "3"),
        msg("6", "5", "user", "q3"),
        msg("7", "6", "assistant", "r3"),
        msg("8", "3", "user", "wrong path"),
        msg("9", "8", "assistant", "wrong response"),
        branchSummary("10", "3", "Tried wrong approach", "9"),
        msg("11", "10", "user", "better approach"),
      ];

      const main = ctx(entries, "7");
      expect(main.messages).toHaveLength(5);
      expect(main.messages[0]!.summary).toContain("Compacted history");
      expect(main.messages[1]!.content).toBe("q2");
      expect(main.messages[2]).toMatchObject({ content: [{ text: "r2" }] });
      expect(main.messages[3]!.content).toBe("q3");
      expect(main.messages[4]).toMatchObject({ content: [{ text: "r3" }] });

      // The compaction is on the other branch, so it does not apply here.
      const retried = ctx(entries, "11");
      expect(retried.messages).toHaveLength(5);
      expect(retried.messages[0]!.content).toBe("start");
      expect(retried.messages[1]).toMatchObject({ content: [{ text: "r1" }] });
      expect(retried.messages[2]!.content).toBe("q2");
      expect(retried.messages[3]!.summary).toContain("Tried wrong approach");
      expect(retried.messages[4]!.content).toBe("better approach");
    });
  });

  describe("edge cases", () => {
    it("uses last entry when leafId not found", () => {
      const entries = [msg("1", null, "user", "hello"), msg("2", "1", "assistant", "hi")];
      expect(ctx(entries, "nonexistent").messages).toHaveLength(2);
    });

    it("handles orphaned entries gracefully", () => {
      const entries = [msg("1", null, "user", "hello"), msg("2", "missing", "assistant", "orphan")];
      // The walk stops at the missing parent.
      expect(ctx(entries, "2").messages).toHaveLength(1);
    });
  });
});

/**
 * omp's model form and extra state. No upstream case asserts these on our `omp` field; they are
 * the omp halves of the cases above, plus the "only when omp entries exist" rule of our API.
 */
describe("buildSessionContext (omp dialect)", () => {
  it("tracks model from model change entry (omp form: a later assistant overrides models.default)", () => {
    const entries = [msg("1", null, "user", "hello"), roleModelChange("2", "1", "openai/gpt-4"), msg("3", "2", "assistant", "hi")];
    const context = buildSessionContext(entries);
    expect(context.omp?.models).toEqual({ default: "anthropic/claude-test" });
    expect(context.model).toEqual({ provider: "anthropic", modelId: "claude-test" });
  });

  it("a \"provider/modelId\" model change without a later assistant sets models.default and model", () => {
    const entries = [msg("1", null, "user", "hello"), msg("2", "1", "assistant", "hi"), roleModelChange("3", "2", "openai/gpt-4")];
    const context = buildSessionContext(entries);
    expect(context.omp?.models).toEqual({ default: "openai/gpt-4" });
    expect(context.model).toEqual({ provider: "openai", modelId: "gpt-4" });
  });

  it("a model change with a role fills models[role]; models.default still comes from the earlier assistant (as omp)", () => {
    const entries = [msg("1", null, "user", "hello"), msg("2", "1", "assistant", "hi"), roleModelChange("3", "2", "openai/gpt-4o-mini", "smol")];
    const context = buildSessionContext(entries);
    // omp keeps `models` for the whole walk, so an assistant seen before the first omp entry counts.
    expect(context.omp?.models).toStrictEqual({ default: "anthropic/claude-test", smol: "openai/gpt-4o-mini" });
    expect(context.model).toEqual({ provider: "anthropic", modelId: "claude-test" });
  });

  it("ttsr injections accumulate deduplicated rules in first-seen order; mode defaults to \"none\"", () => {
    const entries: SessionEntry[] = [
      msg("1", null, "user", "hello"),
      { type: "ttsr_injection", id: "2", parentId: "1", timestamp: TIMESTAMP, injectedRules: ["no-any", "tests-first"] },
      { type: "ttsr_injection", id: "3", parentId: "2", timestamp: TIMESTAMP, injectedRules: ["tests-first", "small-diffs"] },
    ];
    const context = buildSessionContext(entries);
    expect(context.omp).toEqual({ models: {}, injectedTtsrRules: ["no-any", "tests-first", "small-diffs"], mode: "none" });
    expect(context.messages).toHaveLength(1);
  });

  it("mode and modeData come from the last mode_change on the path", () => {
    const entries: SessionEntry[] = [
      msg("1", null, "user", "hello"),
      { type: "mode_change", id: "2", parentId: "1", timestamp: TIMESTAMP, mode: "plan", data: { step: 1 } },
      { type: "mode_change", id: "3", parentId: "2", timestamp: TIMESTAMP, mode: "act", data: { step: 2 } },
      { type: "mode_change", id: "4", parentId: "2", timestamp: TIMESTAMP, mode: "review" },
    ];
    expect(buildSessionContext(entries, "3").omp).toMatchObject({ mode: "act", modeData: { step: 2 } });
    expect(buildSessionContext(entries, "4").omp).toMatchObject({ mode: "review", modeData: undefined });
  });

  it("a session_init alone makes an omp context; omp entries off the path do not", () => {
    const entries: SessionEntry[] = [
      { type: "session_init", id: "1", parentId: null, timestamp: TIMESTAMP, task: "fix the build" },
      msg("2", "1", "user", "hello"),
      { type: "mode_change", id: "3", parentId: "2", timestamp: TIMESTAMP, mode: "plan" },
      msg("4", null, "user", "another root"),
    ];
    expect(buildSessionContext(entries, "2").omp).toEqual({ models: {}, injectedTtsrRules: [], mode: "none" });
    expect(buildSessionContext(entries, "4").omp).toBeUndefined();
  });

  it("appendRoleModelChange on a SessionManager reaches the context as omp.models", () => {
    const sm = SessionManager.inMemory();
    sm.appendMessage(userMsg("hello"));
    sm.appendMessage(assistantMsg("hi"));
    sm.appendRoleModelChange("openai/gpt-4");
    sm.appendRoleModelChange("google/gemini-flash", "smol");
    const context = sm.buildSessionContext();
    expect(context.omp?.models).toEqual({ default: "openai/gpt-4", smol: "google/gemini-flash" });
    expect(context.model).toEqual({ provider: "openai", modelId: "gpt-4" });
    expect(context.messages).toHaveLength(2);
  });
});
