// @vitest-environment happy-dom
/**
 * The viewer's context rendering: each message role in its own style, images from base64 with
 * their mime type, thinking collapsed, tool calls on one line, text never parsed as HTML.
 */
import { describe, expect, it } from "vitest";
import { memoryStorage } from "../../../adapters/memory/index.js";
import { buildSessionContext, SessionManager, type AgentMessage, type SessionContext } from "../../../src/index.js";
import { importSampleOnFirstRun } from "../../../web-demo/src/first-run.js";
import { renderContext, renderMessage, toolCallSummary } from "../../../web-demo/src/render/context.js";
import { assistantMsg, userMsg } from "../../shared/messages.js";

/** 1x1 transparent PNG. */
const PNG_BASE64 = "iVBORw0KGgoAAAANSUhEUgAAAAEAAAABCAYAAAAfFcSJAAAADUlEQVR42mNkYPhfDwAChwGA60e6kgAAAABJRU5ErkJggg==";

function contextOf(messages: AgentMessage[]): SessionContext {
  return { messages, thinkingLevel: "high", model: { provider: "anthropic", modelId: "claude-sonnet-4-5" } };
}

const assistantWithBlocks = (content: unknown[]): AgentMessage => ({ ...assistantMsg(""), content });

describe("renderContext", () => {
  it("gives each role its own article, in context order", () => {
    // A context as the core builds it: a compaction, a branch summary and a custom message included.
    const sm = SessionManager.inMemory("/work/app");
    const first = sm.appendMessage(userMsg("first question"));
    sm.appendMessage(assistantMsg("first answer"));
    sm.appendCompaction("what happened so far", first, 1234);
    sm.appendMessage(userMsg("run the tests"));
    sm.appendMessage({ ...assistantMsg(""), content: [{ type: "toolCall", id: "c1", name: "bash", arguments: { command: "npm test" } }] });
    sm.appendMessage({ role: "toolResult", toolCallId: "c1", toolName: "bash", content: [{ type: "text", text: "1 passed" }], isError: false, timestamp: 1 });
    sm.branchWithSummary(sm.getLeafId(), "an abandoned attempt");
    sm.appendCustomMessageEntry("reminder", "do not forget the docs", true);
    sm.appendMessage({ role: "bashExecution", command: "git status", output: "clean", exitCode: 0, cancelled: false, truncated: false, timestamp: 2 });

    const view = renderContext(sm.buildSessionContext());
    const roles = [...view.querySelectorAll("article.message")].map((a) => a.getAttribute("data-role"));
    expect(roles).toEqual(["compactionSummary", "user", "assistant", "user", "assistant", "toolResult", "branchSummary", "custom", "bashExecution"]);
    for (const role of new Set(roles)) expect(view.querySelector(`article.role-${role}`)).not.toBeNull();
    expect(view.querySelector(".role-compactionSummary")!.textContent).toContain("what happened so far");
    expect(view.querySelector(".role-compactionSummary header")!.textContent).toContain("1,234 tokens before");
    expect(view.querySelector(".role-branchSummary")!.textContent).toContain("an abandoned attempt");
    expect(view.querySelector(".role-custom header")!.textContent).toContain("reminder");
    expect(view.querySelector(".role-bashExecution pre.command")!.textContent).toBe("$ git status");
    expect(view.querySelector(".context-meta")!.textContent).toContain("9 messages in context");
  });

  it("renders images from their base64 with their mime type", () => {
    const view = renderContext(
      contextOf([
        {
          role: "user",
          content: [
            { type: "text", text: "see this" },
            { type: "image", data: PNG_BASE64, mimeType: "image/png" },
          ],
          timestamp: 1,
        },
        { role: "toolResult", toolCallId: "c", toolName: "screenshot", content: [{ type: "image", data: PNG_BASE64, mimeType: "image/webp" }], isError: false, timestamp: 2 },
      ]),
    );
    const sources = [...view.querySelectorAll("img")].map((img) => img.getAttribute("src"));
    expect(sources).toEqual([`data:image/png;base64,${PNG_BASE64}`, `data:image/webp;base64,${PNG_BASE64}`]);
  });

  it("shows an unresolved blob ref or a non-image mime type as a note, not an <img>", () => {
    const ref = `blob:sha256:${"a".repeat(64)}`;
    const view = renderContext(
      contextOf([
        {
          role: "user",
          content: [
            { type: "image", data: ref, mimeType: "image/png" },
            { type: "image", data: PNG_BASE64, mimeType: "text/html" },
          ],
          timestamp: 1,
        },
      ]),
    );
    expect(view.querySelectorAll("img")).toHaveLength(0);
    const notes = [...view.querySelectorAll(".missing-image")].map((n) => n.textContent);
    expect(notes[0]).toContain(ref);
    expect(notes[1]).toContain("text/html");
  });

  it("collapses thinking and summarizes tool calls on one line, with the arguments behind it", () => {
    const view = renderMessage(
      assistantWithBlocks([
        { type: "thinking", thinking: "secret reasoning" },
        { type: "text", text: "Let me look." },
        { type: "toolCall", id: "c1", name: "read", arguments: { path: "src/index.ts", offset: 10 } },
      ]),
    );
    const thinking = view.querySelector("details.thinking")!;
    expect(thinking.hasAttribute("open")).toBe(false);
    expect(thinking.querySelector("summary")!.textContent).toBe("Thinking");
    expect(thinking.textContent).toContain("secret reasoning");
    const toolCall = view.querySelector("details.tool-call")!;
    expect(toolCall.hasAttribute("open")).toBe(false);
    expect(toolCall.querySelector("summary")!.textContent).toBe("read src/index.ts");
    expect(JSON.parse(toolCall.querySelector("pre.tool-arguments")!.textContent!)).toEqual({ path: "src/index.ts", offset: 10 });
    expect(view.querySelector("header")!.textContent).toContain("anthropic/test");
  });

  it("shows tool output in monospace blocks and marks failed tool results", () => {
    const view = renderMessage({ role: "toolResult", toolCallId: "c", toolName: "bash", content: [{ type: "text", text: "FAIL\n  expected 1" }], isError: true, timestamp: 1 });
    expect(view.classList.contains("is-error")).toBe(true);
    expect(view.querySelector("pre.tool-output")!.textContent).toBe("FAIL\n  expected 1");
    expect(view.querySelector("header")!.textContent).toContain("error");
  });

  it("treats message text as text: markup in a session never becomes elements", () => {
    const view = renderContext(contextOf([userMsg('<img src="x" onerror="alert(1)"><script>alert(2)</script>')]));
    expect(view.querySelectorAll("img, script")).toHaveLength(0);
    expect(view.querySelector(".text")!.textContent).toBe('<img src="x" onerror="alert(1)"><script>alert(2)</script>');
  });

  it("shows a role it does not know as stored, and an empty branch as empty", () => {
    const unknown = renderMessage({ role: "ompNote", note: "kept" } as AgentMessage);
    expect(unknown.getAttribute("data-role")).toBe("ompNote");
    expect(JSON.parse(unknown.querySelector("pre.raw")!.textContent!)).toEqual({ role: "ompNote", note: "kept" });
    const empty = renderContext(buildSessionContext([], null));
    expect(empty.querySelector(".empty")!.textContent).toBe("No messages on this branch.");
    expect(empty.querySelector(".context-meta")!.textContent).toContain("model none · thinking off");
  });

  it("summarizes a tool call by its most telling argument", () => {
    expect(toolCallSummary("bash", { command: "npm test\nnpm run lint" })).toBe("bash npm test");
    expect(toolCallSummary("grep", { pattern: "TODO", path: "src" })).toBe("grep TODO");
    expect(toolCallSummary("custom", { a: 1 })).toBe('custom {"a":1}');
    expect(toolCallSummary("noargs", undefined)).toBe("noargs {}");
  });

  it("renders the bundled sample: its screenshot from the blob store, thinking collapsed, every role styled", async () => {
    const storage = memoryStorage();
    await importSampleOnFirstRun(storage);
    const [info] = await SessionManager.listAll(storage);
    const sm = await SessionManager.open(storage, info!.path, { readOnly: true });
    const firstUser = sm.getEntries().find((e) => e.type === "message" && e.message.role === "user")!;
    // Up to the tool result after the first user message, then the whole branch to the leaf.
    const early = renderContext(buildSessionContext(sm.getEntries(), sm.getChildren(sm.getChildren(firstUser.id)[0]!.id)[0]!.id));
    const img = early.querySelector<HTMLImageElement>(".role-user img")!;
    expect(img.getAttribute("src")).toMatch(/^data:image\/png;base64,iVBORw0KGgo[A-Za-z0-9+/]{1000,}={0,2}$/);
    expect(early.querySelector(".role-assistant details.thinking")!.hasAttribute("open")).toBe(false);
    expect(early.querySelector(".role-toolResult pre.tool-output")!.textContent).toContain("dueLabel");

    const full = renderContext(sm.buildSessionContext());
    const roles = new Set([...full.querySelectorAll("article")].map((a) => a.getAttribute("data-role")));
    expect([...roles].sort()).toEqual(["assistant", "bashExecution", "branchSummary", "compactionSummary", "custom", "toolResult", "user"]);
    await sm.close();
  });
});
