/**
 * pi's test/session-manager/tree-traversal.test.ts and oh-my-pi's (A4). The two files hold the
 * same cases except the model change and compaction signatures, where we follow pi (and test omp's
 * model form through `appendRoleModelChange`). In-memory cases use `SessionManager.inMemory()`;
 * the persisted createBranchedSession cases use real files through `nodeFsStorage`.
 *
 * Not ported:
 * - pi's agent-session-branching.test.ts (3 cases), agent-session-tree-navigation.test.ts
 *   (10 cases), omp's agent-session-branching/compaction/tree-navigation and compaction-hooks
 *   tests (A9): they drive a live agent and need an Anthropic API key.
 * - pi's tree-selector.test.ts: a TUI test (focus, filters, folding).
 * omp's rewrite-tool-call.test.ts (A7) is ported in omp-operations.test.ts, with its other
 * session operations.
 */
import { existsSync } from "node:fs";
import { mkdtemp, readFile, rm } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterEach, beforeEach, describe, expect, it } from "vitest";
import { nodeFsStorage, type NodeFsStorage } from "../../../adapters/node-fs/index.js";
import {
  SessionError,
  SessionManager,
  type BranchSummaryEntry,
  type CompactionEntry,
  type CustomEntry,
  type ModelChangeEntry,
  type SessionTreeNode,
  type ThinkingLevelChangeEntry,
} from "../../../src/index.js";
import { assistantMsg, userMsg } from "../../shared/messages.js";

const notFound = (id: string) => new SessionError("entry-not-found", `Entry ${id} not found`);

function findNode(nodes: SessionTreeNode[], id: string): SessionTreeNode | undefined {
  const stack = [...nodes];
  while (stack.length > 0) {
    const node = stack.pop()!;
    if (node.entry.id === id) return node;
    stack.push(...node.children);
  }
  return undefined;
}

const childIds = (node: SessionTreeNode | undefined) => (node?.children ?? []).map((c) => c.entry.id).sort();

describe("SessionManager append and tree traversal", () => {
  describe("append operations", () => {
    it("appendMessage creates entry with correct parentId chain", () => {
      const sm = SessionManager.inMemory();
      const id1 = sm.appendMessage(userMsg("first"));
      const id2 = sm.appendMessage(assistantMsg("second"));
      const id3 = sm.appendMessage(userMsg("third"));

      const entries = sm.getEntries();
      expect(entries).toHaveLength(3);
      expect(entries.map((e) => e.type)).toEqual(["message", "message", "message"]);
      expect(entries.map((e) => e.id)).toEqual([id1, id2, id3]);
      expect(entries.map((e) => e.parentId)).toEqual([null, id1, id2]);
    });

    it("appendThinkingLevelChange integrates into tree", () => {
      const sm = SessionManager.inMemory();
      const msgId = sm.appendMessage(userMsg("hello"));
      const thinkingId = sm.appendThinkingLevelChange("high");
      sm.appendMessage(assistantMsg("response"));

      const entries = sm.getEntries();
      const thinking = entries.find((e): e is ThinkingLevelChangeEntry => e.type === "thinking_level_change");
      expect(thinking).toMatchObject({ id: thinkingId, parentId: msgId, thinkingLevel: "high" });
      expect(entries[2]!.parentId).toBe(thinkingId);
    });

    it("appendModelChange integrates into tree (follows pi: appendModelChange(provider, modelId), not omp's \"provider/modelId\")", () => {
      const sm = SessionManager.inMemory();
      const msgId = sm.appendMessage(userMsg("hello"));
      const modelId = sm.appendModelChange("openai", "gpt-4");
      sm.appendMessage(assistantMsg("response"));

      const entries = sm.getEntries();
      const change = entries.find((e): e is ModelChangeEntry => e.type === "model_change");
      expect(change).toMatchObject({ id: modelId, parentId: msgId, provider: "openai", modelId: "gpt-4" });
      expect(change).not.toHaveProperty("model");
      expect(entries[2]!.parentId).toBe(modelId);
    });

    it("appendModelChange integrates into tree (omp form through appendRoleModelChange(\"openai/gpt-4\"))", () => {
      const sm = SessionManager.inMemory();
      const msgId = sm.appendMessage(userMsg("hello"));
      const modelId = sm.appendRoleModelChange("openai/gpt-4");
      const smolId = sm.appendRoleModelChange("openai/gpt-4o-mini", "smol");
      sm.appendMessage(assistantMsg("response"));

      const entries = sm.getEntries();
      const changes = entries.filter((e): e is ModelChangeEntry => e.type === "model_change");
      expect(changes[0]).toMatchObject({ id: modelId, parentId: msgId, model: "openai/gpt-4" });
      expect(changes[0]).not.toHaveProperty("provider");
      expect(changes[0]!.role).toBeUndefined();
      expect(changes[1]).toMatchObject({ id: smolId, parentId: modelId, model: "openai/gpt-4o-mini", role: "smol" });
      expect(entries[3]!.parentId).toBe(smolId);
    });

    it("appendCompaction integrates into tree (follows pi: appendCompaction(summary, firstKeptEntryId, tokensBefore), no omp shortSummary)", () => {
      const sm = SessionManager.inMemory();
      const id1 = sm.appendMessage(userMsg("first"));
      const id2 = sm.appendMessage(assistantMsg("second"));
      const compactionId = sm.appendCompaction("summary", id1, 1000);
      sm.appendMessage(userMsg("third"));

      const entries = sm.getEntries();
      const compaction = entries.find((e): e is CompactionEntry => e.type === "compaction");
      expect(compaction).toMatchObject({ id: compactionId, parentId: id2, summary: "summary", firstKeptEntryId: id1, tokensBefore: 1000 });
      expect(entries[3]!.parentId).toBe(compactionId);
    });

    it("appendCustomEntry integrates into tree", () => {
      const sm = SessionManager.inMemory();
      const msgId = sm.appendMessage(userMsg("hello"));
      const customId = sm.appendCustomEntry("my_data", { key: "value" });
      sm.appendMessage(assistantMsg("response"));

      const entries = sm.getEntries();
      const custom = entries.find((e): e is CustomEntry => e.type === "custom");
      expect(custom).toMatchObject({ id: customId, parentId: msgId, customType: "my_data", data: { key: "value" } });
      expect(entries[2]!.parentId).toBe(customId);
    });

    it("leaf pointer advances after each append", () => {
      const sm = SessionManager.inMemory();
      expect(sm.getLeafId()).toBeNull();
      const id1 = sm.appendMessage(userMsg("1"));
      expect(sm.getLeafId()).toBe(id1);
      const id2 = sm.appendMessage(assistantMsg("2"));
      expect(sm.getLeafId()).toBe(id2);
      const id3 = sm.appendThinkingLevelChange("high");
      expect(sm.getLeafId()).toBe(id3);
    });
  });

  describe("getPath", () => {
    it("returns empty array for empty session", () => {
      expect(SessionManager.inMemory().getBranch()).toEqual([]);
    });

    it("returns single entry path", () => {
      const sm = SessionManager.inMemory();
      const id = sm.appendMessage(userMsg("hello"));
      expect(sm.getBranch().map((e) => e.id)).toEqual([id]);
    });

    it("returns full path from root to leaf", () => {
      const sm = SessionManager.inMemory();
      const id1 = sm.appendMessage(userMsg("1"));
      const id2 = sm.appendMessage(assistantMsg("2"));
      const id3 = sm.appendThinkingLevelChange("high");
      const id4 = sm.appendMessage(userMsg("3"));
      expect(sm.getBranch().map((e) => e.id)).toEqual([id1, id2, id3, id4]);
    });

    it("returns path from specified entry to root", () => {
      const sm = SessionManager.inMemory();
      const id1 = sm.appendMessage(userMsg("1"));
      const id2 = sm.appendMessage(assistantMsg("2"));
      sm.appendMessage(userMsg("3"));
      sm.appendMessage(assistantMsg("4"));
      expect(sm.getBranch(id2).map((e) => e.id)).toEqual([id1, id2]);
    });
  });

  describe("getTree", () => {
    it("returns empty array for empty session", () => {
      expect(SessionManager.inMemory().getTree()).toEqual([]);
    });

    it("returns single root for linear session", () => {
      const sm = SessionManager.inMemory();
      const id1 = sm.appendMessage(userMsg("1"));
      const id2 = sm.appendMessage(assistantMsg("2"));
      const id3 = sm.appendMessage(userMsg("3"));

      const tree = sm.getTree();
      expect(tree).toHaveLength(1);
      const root = tree[0]!;
      expect(root.entry.id).toBe(id1);
      expect(root.children).toHaveLength(1);
      expect(root.children[0]!.entry.id).toBe(id2);
      expect(root.children[0]!.children).toHaveLength(1);
      expect(root.children[0]!.children[0]!.entry.id).toBe(id3);
      expect(root.children[0]!.children[0]!.children).toHaveLength(0);
    });

    it("returns tree with branches after branch", () => {
      const sm = SessionManager.inMemory();
      const id1 = sm.appendMessage(userMsg("1"));
      const id2 = sm.appendMessage(assistantMsg("2"));
      const id3 = sm.appendMessage(userMsg("3"));
      sm.branch(id2);
      const id4 = sm.appendMessage(userMsg("4-branch"));

      const tree = sm.getTree();
      expect(tree).toHaveLength(1);
      expect(tree[0]!.entry.id).toBe(id1);
      expect(tree[0]!.children).toHaveLength(1);
      const node2 = tree[0]!.children[0]!;
      expect(node2.entry.id).toBe(id2);
      expect(node2.children).toHaveLength(2);
      expect(childIds(node2)).toEqual([id3, id4].sort());
    });

    it("handles multiple branches at same point", () => {
      const sm = SessionManager.inMemory();
      sm.appendMessage(userMsg("1"));
      const id2 = sm.appendMessage(assistantMsg("2"));
      sm.branch(id2);
      const idA = sm.appendMessage(userMsg("A"));
      sm.branch(id2);
      const idB = sm.appendMessage(userMsg("B"));
      sm.branch(id2);
      const idC = sm.appendMessage(userMsg("C"));

      const node2 = findNode(sm.getTree(), id2);
      expect(node2?.children).toHaveLength(3);
      expect(new Set(childIds(node2))).toEqual(new Set([idA, idB, idC]));
    });

    it("handles deep branching", () => {
      const sm = SessionManager.inMemory();
      sm.appendMessage(userMsg("1"));
      const id2 = sm.appendMessage(assistantMsg("2"));
      const id3 = sm.appendMessage(userMsg("3"));
      const id4 = sm.appendMessage(assistantMsg("4"));
      sm.branch(id2);
      const id5 = sm.appendMessage(userMsg("5"));
      const id6 = sm.appendMessage(assistantMsg("6"));
      sm.branch(id5);
      const id7 = sm.appendMessage(assistantMsg("7"));

      const tree = sm.getTree();
      expect(childIds(findNode(tree, id2))).toEqual([id3, id5].sort());
      expect(childIds(findNode(tree, id5))).toEqual([id6, id7].sort());
      expect(childIds(findNode(tree, id3))).toEqual([id4]);
    });
  });

  describe("branch", () => {
    it("moves leaf pointer to specified entry", () => {
      const sm = SessionManager.inMemory();
      const id1 = sm.appendMessage(userMsg("1"));
      sm.appendMessage(assistantMsg("2"));
      const id3 = sm.appendMessage(userMsg("3"));
      expect(sm.getLeafId()).toBe(id3);
      sm.branch(id1);
      expect(sm.getLeafId()).toBe(id1);
    });

    it("throws for non-existent entry", () => {
      const sm = SessionManager.inMemory();
      sm.appendMessage(userMsg("hello"));
      expect(() => sm.branch("nonexistent")).toThrow(notFound("nonexistent"));
    });

    it("new appends become children of branch point", () => {
      const sm = SessionManager.inMemory();
      const id1 = sm.appendMessage(userMsg("1"));
      sm.appendMessage(assistantMsg("2"));
      sm.branch(id1);
      const id3 = sm.appendMessage(userMsg("branched"));
      expect(sm.getEntry(id3)?.parentId).toBe(id1);
    });
  });

  describe("branchWithSummary", () => {
    it("inserts branch summary and advances leaf", () => {
      const sm = SessionManager.inMemory();
      const id1 = sm.appendMessage(userMsg("1"));
      sm.appendMessage(assistantMsg("2"));
      sm.appendMessage(userMsg("3"));

      const summaryId = sm.branchWithSummary(id1, "Summary of abandoned work");
      expect(sm.getLeafId()).toBe(summaryId);
      const summary = sm.getEntries().find((e): e is BranchSummaryEntry => e.type === "branch_summary");
      expect(summary).toMatchObject({ id: summaryId, parentId: id1, summary: "Summary of abandoned work" });
    });

    it("throws for non-existent entry", () => {
      const sm = SessionManager.inMemory();
      sm.appendMessage(userMsg("hello"));
      expect(() => sm.branchWithSummary("nonexistent", "summary")).toThrow(notFound("nonexistent"));
    });
  });

  describe("getLeafEntry", () => {
    it("returns undefined for empty session", () => {
      expect(SessionManager.inMemory().getLeafEntry()).toBeUndefined();
    });

    it("returns current leaf entry", () => {
      const sm = SessionManager.inMemory();
      sm.appendMessage(userMsg("1"));
      const id2 = sm.appendMessage(assistantMsg("2"));
      expect(sm.getLeafEntry()?.id).toBe(id2);
    });
  });

  describe("getEntry", () => {
    it("returns undefined for non-existent id", () => {
      expect(SessionManager.inMemory().getEntry("nonexistent")).toBeUndefined();
    });

    it("returns entry by id", () => {
      const sm = SessionManager.inMemory();
      const id1 = sm.appendMessage(userMsg("first"));
      const id2 = sm.appendMessage(assistantMsg("second"));
      expect(sm.getEntry(id1)).toMatchObject({ type: "message", message: { content: "first" } });
      expect(sm.getEntry(id2)).toMatchObject({ type: "message", message: { role: "assistant", content: [{ text: "second" }] } });
    });
  });

  describe("buildSessionContext with branches", () => {
    it("returns messages from current branch only", () => {
      const sm = SessionManager.inMemory();
      sm.appendMessage(userMsg("msg1"));
      const id2 = sm.appendMessage(assistantMsg("msg2"));
      sm.appendMessage(userMsg("msg3"));
      sm.branch(id2);
      sm.appendMessage(assistantMsg("msg4-branch"));

      const { messages } = sm.buildSessionContext();
      expect(messages).toHaveLength(3);
      expect(messages[0]!.content).toBe("msg1");
      expect(messages[1]).toMatchObject({ content: [{ text: "msg2" }] });
      expect(messages[2]).toMatchObject({ content: [{ text: "msg4-branch" }] });
      expect(JSON.stringify(messages)).not.toContain("msg3");
    });
  });
});

describe("createBranchedSession", () => {
  it("throws for non-existent entry", () => {
    const sm = SessionManager.inMemory();
    sm.appendMessage(userMsg("hello"));
    expect(() => sm.createBranchedSession("nonexistent")).toThrow(notFound("nonexistent"));
  });

  it("creates new session with path to specified leaf (in-memory)", () => {
    const sm = SessionManager.inMemory();
    const id1 = sm.appendMessage(userMsg("1"));
    const id2 = sm.appendMessage(assistantMsg("2"));
    const id3 = sm.appendMessage(userMsg("3"));
    sm.appendMessage(assistantMsg("4"));
    sm.branch(id3);
    sm.appendMessage(assistantMsg("5"));
    const oldSessionId = sm.getSessionId();

    expect(sm.createBranchedSession(id2)).toBeUndefined();
    expect(sm.getEntries().map((e) => e.id)).toEqual([id1, id2]);
    expect(sm.getSessionId()).not.toBe(oldSessionId);
  });

  it("extracts correct path from branched tree", () => {
    const sm = SessionManager.inMemory();
    const id1 = sm.appendMessage(userMsg("1"));
    const id2 = sm.appendMessage(assistantMsg("2"));
    sm.appendMessage(userMsg("3"));
    sm.branch(id2);
    const id4 = sm.appendMessage(userMsg("4"));
    const id5 = sm.appendMessage(assistantMsg("5"));

    sm.createBranchedSession(id5);
    expect(sm.getEntries().map((e) => e.id)).toEqual([id1, id2, id4, id5]);
  });

  describe("persisted", () => {
    let root: string;
    let storage: NodeFsStorage;
    let sm: SessionManager | undefined;

    beforeEach(async () => {
      root = await mkdtemp(join(tmpdir(), "sessionkit-tree-"));
      storage = nodeFsStorage({ root });
    });

    afterEach(async () => {
      await sm?.close();
      sm = undefined;
      await storage.close();
      await rm(root, { recursive: true, force: true });
    });

    async function linesOf(path: string): Promise<Array<Record<string, unknown>>> {
      const text = await readFile(join(root, path), "utf8");
      return text.split("\n").filter((l) => l.trim()).map((l) => JSON.parse(l) as Record<string, unknown>);
    }

    it("does not duplicate entries when forking from first user message (#1672)", async () => {
      sm = await SessionManager.create(storage, root, { sessionDir: "sessions/x" });
      const id1 = sm.appendMessage(userMsg("first question"));
      sm.appendMessage(assistantMsg("first answer"));
      sm.appendMessage(userMsg("second question"));
      sm.appendMessage(assistantMsg("second answer"));
      await sm.flush();
      const oldFile = sm.getSessionFile()!;

      const newFile = sm.createBranchedSession(id1);
      expect(newFile).toBeDefined();
      expect(newFile).not.toBe(oldFile);
      // The path holds no assistant message, so the new file is deferred.
      await sm.flush();
      expect(existsSync(join(root, newFile!))).toBe(false);

      sm.appendCustomEntry("preset-state", { name: "plan" });
      await sm.flush();
      expect(existsSync(join(root, newFile!))).toBe(false);

      sm.appendMessage(assistantMsg("answer on the fork"));
      await sm.flush();
      expect(existsSync(join(root, newFile!))).toBe(true);

      const records = await linesOf(newFile!);
      expect(records.filter((r) => r.type === "session")).toHaveLength(1);
      expect(records[0]).toMatchObject({ type: "session", id: sm.getSessionId(), parentSession: oldFile });
      const ids = records.slice(1).map((r) => r.id);
      expect(new Set(ids).size).toBe(ids.length);
      expect(records.slice(1).map((r) => r.type)).toEqual(["message", "custom", "message"]);
      // The source session is untouched.
      expect((await linesOf(oldFile)).map((r) => r.type)).toEqual(["session", "message", "message", "message", "message"]);
    });

    it("writes file immediately when forking from a point with assistant messages", async () => {
      sm = await SessionManager.create(storage, root, { sessionDir: "sessions/x" });
      const id1 = sm.appendMessage(userMsg("first question"));
      const id2 = sm.appendMessage(assistantMsg("first answer"));
      sm.appendMessage(userMsg("second question"));
      sm.appendMessage(assistantMsg("second answer"));

      const newFile = sm.createBranchedSession(id2);
      await sm.flush();
      expect(existsSync(join(root, newFile!))).toBe(true);
      const records = await linesOf(newFile!);
      expect(records.filter((r) => r.type === "session")).toHaveLength(1);
      expect(records.slice(1).map((r) => r.id)).toEqual([id1, id2]);
    });
  });
});
