/**
 * pi's test/session-manager/save-entry.test.ts and oh-my-pi's (A6), which differ only in the
 * custom type's name ("my_data" / "my_hook"): one test covers both.
 */
import { describe, expect, it } from "vitest";
import { SessionManager } from "../../../src/index.js";
import { assistantMsg, userMsg } from "../../shared/messages.js";

describe("SessionManager.saveCustomEntry", () => {
  it("saves custom entries and includes them in tree traversal", () => {
    const sm = SessionManager.inMemory();
    const msgId = sm.appendMessage(userMsg("hello"));
    const customId = sm.appendCustomEntry("my_data", { foo: "bar" });
    const msg2Id = sm.appendMessage(assistantMsg("hi"));

    const entries = sm.getEntries();
    expect(entries).toHaveLength(3);

    const custom = entries.find((e) => e.type === "custom");
    expect(custom).toMatchObject({ customType: "my_data", data: { foo: "bar" }, id: customId, parentId: msgId });

    expect(sm.getBranch().map((e) => e.id)).toEqual([msgId, customId, msg2Id]);
    // The custom entry adds nothing to the model context.
    expect(sm.buildSessionContext().messages).toHaveLength(2);
  });
});
