// @vitest-environment happy-dom
/**
 * The viewer's tree: chains flat, branches indented and collapsible, labels as badges, the leaf
 * marked with its root → leaf path, clicks reported as the entry to view up to.
 */
import { describe, expect, it } from "vitest";
import { SessionManager } from "../../../src/index.js";
import { entrySummary, renderTree, showLeaf } from "../../../web-demo/src/render/tree.js";
import { assistantMsg, userMsg } from "../../shared/messages.js";

/**
 * model change → question → answer, then two branches from the answer; labels on the answer and
 * on branch B's answer (label entries are appended at the leaf, so both sit at the end of branch B).
 */
function branchedSession() {
  const sm = SessionManager.inMemory("/work/app");
  const model = sm.appendModelChange("anthropic", "claude");
  const question = sm.appendMessage(userMsg("the question"));
  const answer = sm.appendMessage(assistantMsg("the answer"));
  const followA = sm.appendMessage(userMsg("follow-up A"));
  const answerA = sm.appendMessage(assistantMsg("answer A"));
  sm.branch(answer);
  const followB = sm.appendMessage(userMsg("follow-up B"));
  const answerB = sm.appendMessage(assistantMsg("answer B"));
  sm.appendLabelChange(answer, "checkpoint");
  sm.appendLabelChange(answerB, "chosen");
  return { sm, ids: { model, question, answer, followA, answerA, followB, answerB } };
}

const rowIds = (root: ParentNode, selector = ".tree-entry") => [...root.querySelectorAll<HTMLElement>(selector)].map((r) => r.dataset.entryId);

describe("renderTree", () => {
  it("keeps a chain at one level and puts each branch in its own collapsible list", () => {
    const { sm, ids } = branchedSession();
    const tree = renderTree(sm.getTree(), { leafId: ids.answerA, onSelect: () => {} });
    expect(rowIds(tree, ":scope > .tree-entry")).toEqual([ids.model, ids.question, ids.answer]);
    const branches = [...tree.querySelectorAll<HTMLElement>(":scope > .tree-branch")];
    expect(branches).toHaveLength(2);
    expect(branches.map((b) => b.querySelector(".branch-toggle")!.textContent)).toEqual(["branch 1 of 2", "branch 2 of 2"]);
    expect(rowIds(branches[0]!)).toEqual([ids.followA, ids.answerA]);
    expect(rowIds(branches[1]!)).toEqual([ids.followB, ids.answerB, ...sm.getEntries().filter((e) => e.type === "label").map((e) => e.id)]);
    expect(rowIds(tree)).toHaveLength(sm.getEntries().length);
  });

  it("shows labels as badges on their entries", () => {
    const { sm, ids } = branchedSession();
    const tree = renderTree(sm.getTree(), { leafId: null, onSelect: () => {} });
    const labelOf = (id: string) => tree.querySelector(`[data-entry-id="${id}"] .label`)?.textContent;
    expect(labelOf(ids.answer)).toBe("checkpoint");
    expect(labelOf(ids.answerB)).toBe("chosen");
    expect(labelOf(ids.question)).toBeUndefined();
    expect(tree.querySelectorAll(".label")).toHaveLength(2);
  });

  it("marks the leaf and exactly the entries on its root → leaf path", () => {
    const { sm, ids } = branchedSession();
    const tree = renderTree(sm.getTree(), { leafId: ids.answerA, onSelect: () => {} });
    const leaves = tree.querySelectorAll(".is-leaf");
    expect(leaves).toHaveLength(1);
    expect((leaves[0] as HTMLElement).dataset.entryId).toBe(ids.answerA);
    expect(leaves[0]!.getAttribute("aria-current")).toBe("true");
    expect(tree.querySelectorAll(".leaf-marker")).toHaveLength(1);
    expect(leaves[0]!.querySelector(".leaf-marker")!.textContent).toBe("◀ leaf");
    expect(rowIds(tree, ".on-path")).toEqual(sm.getBranch(ids.answerA).map((e) => e.id));
  });

  it("moves the marker in place when another leaf is shown, keeping collapsed branches collapsed", () => {
    const { sm, ids } = branchedSession();
    const tree = renderTree(sm.getTree(), { leafId: ids.answerA, onSelect: () => {} });
    const toggle = tree.querySelector<HTMLButtonElement>(".branch-toggle")!;
    toggle.click();
    showLeaf(tree, ids.followB);
    expect(rowIds(tree, ".is-leaf")).toEqual([ids.followB]);
    expect(tree.querySelectorAll(".leaf-marker")).toHaveLength(1);
    expect(rowIds(tree, ".on-path")).toEqual(sm.getBranch(ids.followB).map((e) => e.id));
    expect(toggle.getAttribute("aria-expanded")).toBe("false");
    showLeaf(tree, null);
    expect(tree.querySelectorAll(".is-leaf, .on-path, .leaf-marker")).toHaveLength(0);
  });

  it("collapses and expands a branch with its toggle", () => {
    const { sm } = branchedSession();
    const tree = renderTree(sm.getTree(), { leafId: null, onSelect: () => {} });
    const branch = tree.querySelector(".tree-branch")!;
    const toggle = branch.querySelector<HTMLButtonElement>(".branch-toggle")!;
    const list = branch.querySelector<HTMLUListElement>("ul")!;
    expect(list.hidden).toBe(false);
    toggle.click();
    expect(list.hidden).toBe(true);
    expect(toggle.getAttribute("aria-expanded")).toBe("false");
    toggle.click();
    expect(list.hidden).toBe(false);
    expect(toggle.getAttribute("aria-expanded")).toBe("true");
  });

  it("reports a click on an entry (or inside it) as the entry to view up to", () => {
    const { sm, ids } = branchedSession();
    const selected: string[] = [];
    const tree = renderTree(sm.getTree(), { leafId: ids.answerB, onSelect: (id) => selected.push(id) });
    tree.querySelector<HTMLElement>(`[data-entry-id="${ids.followA}"] button`)!.click();
    tree.querySelector<HTMLElement>(`[data-entry-id="${ids.answer}"] .label`)!.click();
    tree.querySelector<HTMLButtonElement>(".branch-toggle")!.click();
    expect(selected).toEqual([ids.followA, ids.answer]);
  });

  it("renders a 20,000-entry chain flat, without recursion", () => {
    const sm = SessionManager.inMemory();
    for (let i = 0; i < 10_000; i++) {
      sm.appendMessage(userMsg(`q${i}`));
      sm.appendMessage(assistantMsg(`a${i}`));
    }
    const tree = renderTree(sm.getTree(), { leafId: sm.getLeafId(), onSelect: () => {} });
    const rows = [...tree.children] as HTMLElement[];
    expect(rows).toHaveLength(20_000);
    expect(rows.every((row) => row.classList.contains("tree-entry") && row.classList.contains("on-path"))).toBe(true);
    expect(rows.map((row) => row.dataset.entryId)).toEqual(sm.getEntries().map((e) => e.id));
    expect(rows.at(-1)!.classList.contains("is-leaf")).toBe(true);
  });

  it("puts several roots side by side as branches", () => {
    const sm = SessionManager.inMemory();
    const first = sm.appendMessage(userMsg("root one"));
    sm.resetLeaf();
    const second = sm.appendMessage(userMsg("root two"));
    const tree = renderTree(sm.getTree(), { leafId: second, onSelect: () => {} });
    const branches = tree.querySelectorAll(":scope > .tree-branch");
    expect(branches).toHaveLength(2);
    expect(rowIds(branches[0]!)).toEqual([first]);
    expect(rowIds(tree, ".on-path")).toEqual([second]);
  });
});

describe("entrySummary", () => {
  it("describes each kind of entry on one line", () => {
    const sm = SessionManager.inMemory();
    const ids = {
      model: sm.appendModelChange("openai", "gpt-5"),
      ompModel: sm.appendRoleModelChange("anthropic/claude", "smol"),
      thinking: sm.appendThinkingLevelChange("high"),
      user: sm.appendMessage(userMsg("line one\nline two")),
      tool: sm.appendMessage({ ...assistantMsg(""), content: [{ type: "toolCall", id: "c", name: "bash", arguments: {} }] }),
      result: sm.appendMessage({ role: "toolResult", toolCallId: "c", toolName: "bash", content: [{ type: "text", text: "ok" }], isError: false, timestamp: 1 }),
      bash: sm.appendMessage({ role: "bashExecution", command: "ls -la", output: "", exitCode: 0, cancelled: false, truncated: false, timestamp: 1 }),
      name: sm.appendSessionInfo("My session"),
      custom: sm.appendCustomEntry("state", { a: 1 }),
      customMessage: sm.appendCustomMessageEntry("note", [{ type: "text", text: "hello" }], true),
    };
    sm.appendLabelChange(ids.user, "start");
    const summary = (id: string) => entrySummary(sm.getEntry(id)!);
    expect(summary(ids.model)).toBe("model → openai/gpt-5");
    expect(summary(ids.ompModel)).toBe("model → anthropic/claude (smol)");
    expect(summary(ids.thinking)).toBe("thinking → high");
    expect(summary(ids.user)).toBe("user: line one");
    expect(summary(ids.tool)).toBe("assistant: → bash");
    expect(summary(ids.result)).toBe("result bash: ok");
    expect(summary(ids.bash)).toBe("$ ls -la");
    expect(summary(ids.name)).toBe("name: My session");
    expect(summary(ids.custom)).toBe("custom state");
    expect(summary(ids.customMessage)).toBe("note: hello");
    expect(summary(sm.getLeafId()!)).toBe(`label “start” on ${ids.user}`);
  });
});
