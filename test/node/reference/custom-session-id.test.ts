/** pi's test/session-manager/custom-session-id.test.ts: `newSession({id})` on an in-memory session. */
import { describe, expect, it } from "vitest";
import { SessionManager } from "../../../src/index.js";

describe("SessionManager.newSession with custom id", () => {
  it("uses the provided id instead of generating one", () => {
    const sm = SessionManager.inMemory();
    sm.newSession({ id: "my-custom-id" });
    expect(sm.getSessionId()).toBe("my-custom-id");
  });

  it("generates a random id when no id is provided", () => {
    const sm = SessionManager.inMemory();
    const before = sm.getSessionId();
    sm.newSession();
    const id = sm.getSessionId();
    expect(id).toBeDefined();
    expect(id).not.toBe("");
    expect(id).not.toBe(before);
  });

  it("generates a random id when options is provided without id", () => {
    const sm = SessionManager.inMemory();
    sm.newSession({ parentSession: "parent.jsonl" });
    const id = sm.getSessionId();
    expect(id).toBeDefined();
    expect(id).not.toBe("");
    expect(sm.getHeader()?.parentSession).toBe("parent.jsonl");
  });

  it("includes the custom id in the session header", () => {
    const sm = SessionManager.inMemory();
    sm.newSession({ id: "header-test-id" });
    const header = sm.getHeader();
    expect(header).not.toBeNull();
    expect(header!.id).toBe("header-test-id");
  });
});
