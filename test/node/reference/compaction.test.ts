/**
 * The session parts of pi's test/compaction.test.ts and oh-my-pi's copy (A8): buildSessionContext
 * over compactions, and loading the large v1 fixture. pi's `parseSessionEntries` +
 * `migrateSessionEntries` map to `readSessionFile` (which reads through storage and migrates).
 *
 * Not ported (APIs this kit does not have; compaction itself is the agent's job, not storage's):
 * - "Token calculation" (calculateContextTokens), "getLastAssistantUsage", "shouldCompact".
 * - "findCutPoint" (4 cases) and "should find cut point in large session".
 * - "LLM summarization" (2 tests) and omp's "should produce valid session after compaction": they
 *   need an Anthropic API key.
 */
import { readFile } from "node:fs/promises";
import { join } from "node:path";
import {
  buildSessionContext as piBuildSessionContext,
  migrateSessionEntries as piMigrateSessionEntries,
  parseSessionEntries as piParseSessionEntries,
} from "@mariozechner/pi-coding-agent";
import { beforeEach, describe, expect, it } from "vitest";
import { nodeFsStorage } from "../../../adapters/node-fs/index.js";
import { buildSessionContext, type AgentMessage, type SessionContext, type SessionEntry } from "../../../src/index.js";
import { readSessionFile, type LoadedSessionFile } from "../../../src/format/session-file.js";
import { CORPUS_DIR } from "../../shared/corpus.js";

let counter = 0;
let lastId: string | null = null;

function chain<T extends Omit<SessionEntry, "id" | "parentId" | "timestamp">>(fields: T): SessionEntry {
  const id = `test-id-${counter++}`;
  const entry = { ...fields, id, parentId: lastId, timestamp: new Date().toISOString() } as unknown as SessionEntry;
  lastId = id;
  return entry;
}

function createMessageEntry(message: AgentMessage): SessionEntry {
  return chain({ type: "message", message });
}

function createCompactionEntry(summary: string, firstKeptEntryId: string): SessionEntry {
  return chain({ type: "compaction", summary, firstKeptEntryId, tokensBefore: 10000 });
}

function createModelChangeEntry(provider: string, modelId: string): SessionEntry {
  return chain({ type: "model_change", provider, modelId });
}

function createThinkingLevelEntry(thinkingLevel: string): SessionEntry {
  return chain({ type: "thinking_level_change", thinkingLevel });
}

function user(text: string): AgentMessage {
  return { role: "user", content: text, timestamp: Date.now() };
}

function assistant(text: string): AgentMessage {
  return {
    role: "assistant",
    content: [{ type: "text", text }],
    api: "anthropic-messages",
    provider: "anthropic",
    model: "claude-sonnet-4-5",
    usage: { input: 100, output: 50, cacheRead: 0, cacheWrite: 0, totalTokens: 150, cost: { input: 0, output: 0, cacheRead: 0, cacheWrite: 0, total: 0 } },
    stopReason: "stop",
    timestamp: Date.now(),
  };
}

describe("buildSessionContext", () => {
  beforeEach(() => {
    counter = 0;
    lastId = null;
  });

  it("should load all messages when no compaction (follows pi: model, not omp's models.default)", () => {
    const entries = [createMessageEntry(user("1")), createMessageEntry(assistant("a")), createMessageEntry(user("2")), createMessageEntry(assistant("b"))];
    const context = buildSessionContext(entries);
    expect(context.messages).toHaveLength(4);
    expect(context.thinkingLevel).toBe("off");
    expect(context.model).toEqual({ provider: "anthropic", modelId: "claude-sonnet-4-5" });
  });

  it("should handle single compaction", () => {
    const u1 = createMessageEntry(user("1"));
    const a1 = createMessageEntry(assistant("a"));
    const u2 = createMessageEntry(user("2"));
    const a2 = createMessageEntry(assistant("b"));
    const compaction = createCompactionEntry("Summary of 1,a,2,b", u2.id);
    const u3 = createMessageEntry(user("3"));
    const a3 = createMessageEntry(assistant("c"));
    const context = buildSessionContext([u1, a1, u2, a2, compaction, u3, a3]);
    expect(context.messages).toHaveLength(5);
    expect(context.messages[0]!.role).toBe("compactionSummary");
    expect(context.messages[0]!.summary).toContain("Summary of 1,a,2,b");
    expect(context.messages.slice(1).map((m) => m.role)).toEqual(["user", "assistant", "user", "assistant"]);
  });

  it("should handle multiple compactions (only latest matters)", () => {
    const u1 = createMessageEntry(user("1"));
    const a1 = createMessageEntry(assistant("a"));
    const c1 = createCompactionEntry("First summary", u1.id);
    const u2 = createMessageEntry(user("2"));
    const b = createMessageEntry(assistant("b"));
    const u3 = createMessageEntry(user("3"));
    const c = createMessageEntry(assistant("c"));
    const c2 = createCompactionEntry("Second summary", u3.id);
    const u4 = createMessageEntry(user("4"));
    const d = createMessageEntry(assistant("d"));
    const context = buildSessionContext([u1, a1, c1, u2, b, u3, c, c2, u4, d]);
    expect(context.messages).toHaveLength(5);
    expect(context.messages[0]!.summary).toContain("Second summary");
    expect(context.messages[1]!.content).toBe("3");
  });

  it("should keep all messages when firstKeptEntryId is first entry", () => {
    const u1 = createMessageEntry(user("1"));
    const a1 = createMessageEntry(assistant("a"));
    const c1 = createCompactionEntry("First summary", u1.id);
    const u2 = createMessageEntry(user("2"));
    const b = createMessageEntry(assistant("b"));
    const context = buildSessionContext([u1, a1, c1, u2, b]);
    expect(context.messages).toHaveLength(5);
    expect(context.messages.slice(1).map((m) => m.content)).toEqual(["1", [{ type: "text", text: "a" }], "2", [{ type: "text", text: "b" }]]);
  });

  it("should track model and thinking level changes (follows pi: model, not omp's models.default)", () => {
    const entries = [
      createMessageEntry(user("1")),
      createModelChangeEntry("openai", "gpt-4"),
      createMessageEntry(assistant("a")),
      createThinkingLevelEntry("high"),
    ];
    const context = buildSessionContext(entries);
    // The assistant message after the model change overrides it.
    expect(context.model).toEqual({ provider: "anthropic", modelId: "claude-sonnet-4-5" });
    expect(context.thinkingLevel).toBe("high");
  });
});

const storage = nodeFsStorage({ root: CORPUS_DIR });

async function loadFixture(name: string): Promise<LoadedSessionFile> {
  const file = await readSessionFile(storage, `badlogic__pi-mono/${name}`);
  if (file.kind !== "session") throw new Error(`fixture ${name} read as ${file.kind}`);
  return file;
}

/** What pi computes for the same fixture: parse, migrate, drop the header, build the context. */
async function piContext(name: string): Promise<SessionContext> {
  const entries = piParseSessionEntries(await readFile(join(CORPUS_DIR, "badlogic__pi-mono", name), "utf8"));
  piMigrateSessionEntries(entries);
  const body = entries.filter((e) => e.type !== "session") as Parameters<typeof piBuildSessionContext>[0];
  return piBuildSessionContext(body) as unknown as SessionContext;
}

function countRoles(messages: AgentMessage[]): Record<string, number> {
  const out: Record<string, number> = {};
  for (const m of messages) out[m.role] = (out[m.role] ?? 0) + 1;
  return out;
}

describe("Large session fixture", () => {
  it("should parse the large session", async () => {
    const file = await loadFixture("large-session.jsonl");
    expect(file.migratedFrom).toBe(1);
    expect(file.problems).toEqual([]);
    expect(file.entries.length).toBeGreaterThan(100);
    expect(file.entries.filter((e) => e.type === "message").length).toBeGreaterThan(100);
    // The fixture's exact figures (pi-session-tests.md): 1018 entries, 914 of them messages.
    expect(file.entries).toHaveLength(1018);
    expect(file.entries.filter((e) => e.type === "message")).toHaveLength(914);
  });

  it("should load session correctly (follows pi: model, not omp's models keys)", async () => {
    const file = await loadFixture("large-session.jsonl");
    const context = buildSessionContext(file.entries);
    expect(context.messages.length).toBeGreaterThan(100);
    expect(context.model).not.toBeNull();
    // The legacy model_change {provider, modelId} is pi's form: no omp state.
    expect(context.omp).toBeUndefined();
  });

  it("large-session migrated gives 914 context messages, thinking off, anthropic/claude-sonnet-4-5, as pi computes", async () => {
    const file = await loadFixture("large-session.jsonl");
    const context = buildSessionContext(file.entries);
    expect(context.messages).toHaveLength(914);
    expect(context.thinkingLevel).toBe("off");
    expect(context.model).toEqual({ provider: "anthropic", modelId: "claude-sonnet-4-5" });
    expect(context).toEqual(await piContext("large-session.jsonl"));
  });

  it("before-compaction migrated maps firstKeptEntryIndex through v1 line numbers and gives 446 context messages, as pi computes", async () => {
    const file = await loadFixture("before-compaction.jsonl");
    expect(file.migratedFrom).toBe(1);
    const compactions = file.entries.filter((e) => e.type === "compaction");
    expect(compactions).toHaveLength(2);
    // firstKeptEntryIndex 293 and 551 count the header as line 0: entries[292] and entries[550].
    expect(compactions.map((c) => c.firstKeptEntryId)).toEqual([file.entries[292]!.id, file.entries[550]!.id]);
    expect(compactions.every((c) => !("firstKeptEntryIndex" in c))).toBe(true);

    const context = buildSessionContext(file.entries);
    expect(context.messages).toHaveLength(446);
    expect(countRoles(context.messages)).toEqual({ compactionSummary: 1, assistant: 219, toolResult: 192, user: 31, bashExecution: 3 });
    expect(context.thinkingLevel).toBe("off");
    expect(context.model).toEqual({ provider: "anthropic", modelId: "claude-opus-4-5" });
    expect(context).toEqual(await piContext("before-compaction.jsonl"));
  });
});
