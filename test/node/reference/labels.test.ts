/**
 * pi's test/session-manager/labels.test.ts and oh-my-pi's (A5): the same eight cases, in memory.
 */
import { describe, expect, it } from "vitest";
import { SessionError, SessionManager, type LabelEntry } from "../../../src/index.js";
import { assistantMsg, userMsg } from "../../shared/messages.js";

const labelEntries = (sm: SessionManager) => sm.getEntries().filter((e): e is LabelEntry => e.type === "label");

describe("SessionManager labels", () => {
  it("sets and gets labels", () => {
    const sm = SessionManager.inMemory();
    const msgId = sm.appendMessage({ role: "user", content: "hello", timestamp: 1 });
    expect(sm.getLabel(msgId)).toBeUndefined();

    const labelId = sm.appendLabelChange(msgId, "checkpoint");
    expect(sm.getLabel(msgId)).toBe("checkpoint");

    const label = labelEntries(sm).find((e) => e.id === labelId);
    expect(label).toMatchObject({ type: "label", id: labelId, targetId: msgId, label: "checkpoint" });
  });

  it("clears labels with undefined", () => {
    const sm = SessionManager.inMemory();
    const msgId = sm.appendMessage({ role: "user", content: "hello", timestamp: 1 });
    sm.appendLabelChange(msgId, "checkpoint");
    sm.appendLabelChange(msgId, undefined);
    expect(sm.getLabel(msgId)).toBeUndefined();
  });

  it("last label wins", () => {
    const sm = SessionManager.inMemory();
    const msgId = sm.appendMessage({ role: "user", content: "hello", timestamp: 1 });
    sm.appendLabelChange(msgId, "first");
    sm.appendLabelChange(msgId, "second");
    sm.appendLabelChange(msgId, "third");
    expect(sm.getLabel(msgId)).toBe("third");
  });

  it("labels are included in tree nodes", () => {
    const sm = SessionManager.inMemory();
    const msg1Id = sm.appendMessage(userMsg("hello"));
    const msg2Id = sm.appendMessage(assistantMsg("hi"));
    const label1Id = sm.appendLabelChange(msg1Id, "start");
    const label2Id = sm.appendLabelChange(msg2Id, "response");

    const tree = sm.getTree();
    expect(tree).toHaveLength(1);
    const root = tree[0]!;
    expect(root.entry.id).toBe(msg1Id);
    expect(root.label).toBe("start");

    const child = root.children.find((n) => n.entry.id === msg2Id);
    expect(child?.label).toBe("response");
    // The label entries are ordinary tree entries below the message they follow.
    expect(child!.children.map((n) => n.entry.id)).toEqual([label1Id]);
    expect(child!.children[0]!.children.map((n) => n.entry.id)).toEqual([label2Id]);
  });

  it("labels are preserved in createBranchedSession", () => {
    const sm = SessionManager.inMemory();
    const msg1Id = sm.appendMessage(userMsg("hello"));
    const msg2Id = sm.appendMessage(assistantMsg("hi"));
    const oldLabelIds = [sm.appendLabelChange(msg1Id, "important"), sm.appendLabelChange(msg2Id, "also-important")];

    sm.createBranchedSession(msg2Id);

    expect(sm.getLabel(msg1Id)).toBe("important");
    expect(sm.getLabel(msg2Id)).toBe("also-important");
    const labels = labelEntries(sm);
    expect(labels).toHaveLength(2);
    // Re-created after the path, not copied.
    expect(sm.getEntries().map((e) => e.type)).toEqual(["message", "message", "label", "label"]);
    expect(labels.map((l) => l.id)).not.toEqual(expect.arrayContaining(oldLabelIds));
    expect(labels[0]!.parentId).toBe(msg2Id);
    expect(labels[1]!.parentId).toBe(labels[0]!.id);
  });

  it("labels not on path are not preserved in createBranchedSession", () => {
    const sm = SessionManager.inMemory();
    const msg1Id = sm.appendMessage(userMsg("hello"));
    const msg2Id = sm.appendMessage(assistantMsg("hi"));
    const msg3Id = sm.appendMessage(userMsg("followup"));
    sm.appendLabelChange(msg1Id, "first");
    sm.appendLabelChange(msg2Id, "second");
    sm.appendLabelChange(msg3Id, "third");

    sm.createBranchedSession(msg2Id);

    expect(sm.getLabel(msg1Id)).toBe("first");
    expect(sm.getLabel(msg2Id)).toBe("second");
    expect(sm.getLabel(msg3Id)).toBeUndefined();
    expect(labelEntries(sm).map((l) => l.targetId)).toEqual([msg1Id, msg2Id]);
  });

  it("labels are not included in buildSessionContext", () => {
    const sm = SessionManager.inMemory();
    const msgId = sm.appendMessage(userMsg("hello"));
    sm.appendLabelChange(msgId, "checkpoint");
    const { messages } = sm.buildSessionContext();
    expect(messages).toHaveLength(1);
    expect(messages[0]!.role).toBe("user");
  });

  it("throws when labeling non-existent entry", () => {
    const sm = SessionManager.inMemory();
    expect(() => sm.appendLabelChange("non-existent", "label")).toThrow(new SessionError("entry-not-found", "Entry non-existent not found"));
    expect(sm.getEntries()).toEqual([]);
  });
});
