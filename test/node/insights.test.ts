/**
 * Insights (src/insights): a session's turns, context and tools, and usage across sessions, on
 * generated sessions whose figures the generator writes down as it goes (every cost a multiple of
 * 2^-22 dollars, so sums are exact in any order), and on every corpus file, where the totals must
 * be the viewer header's own numbers.
 */
import { readdirSync, readFileSync } from "node:fs";
import { join } from "node:path";
import { describe, expect, it } from "vitest";
import { memoryStorage } from "../../adapters/memory/index.js";
import { encodeRecord } from "../../src/format/dialect.js";
import type { SessionEntry, SessionHeader, SessionInfo } from "../../src/format/types.js";
import { sessionInsights } from "../../src/insights/session-insights.js";
import { INSIGHTS_DIR, matchesQuery, readSessionUsage, summarizeUsage } from "../../src/insights/store-insights.js";
import type { StoragePort } from "../../src/port.js";
import { SessionManager } from "../../src/session/session-manager.js";
import { loadSession } from "../../web-demo/src/data/load-session.js";
import { countingPort } from "../shared/counting-port.js";
import { CORPUS_DIR } from "../shared/corpus.js";
import { mulberry32, type Rng } from "../shared/prng.js";

const encoder = new TextEncoder();

type Tokens = { input: number; output: number; cacheRead: number; cacheWrite: number };
type Cost = Tokens & { total: number };
type Sums = { tokens: Tokens; cost: Cost };
const zero = (): Sums => ({ tokens: { input: 0, output: 0, cacheRead: 0, cacheWrite: 0 }, cost: { input: 0, output: 0, cacheRead: 0, cacheWrite: 0, total: 0 } });
function add(into: Sums, tokens: Tokens, cost: Cost): void {
  for (const key of ["input", "output", "cacheRead", "cacheWrite"] as const) {
    into.tokens[key] += tokens[key];
    into.cost[key] += cost[key];
  }
  into.cost.total += cost.total;
}

interface ToolFigures {
  calls: number;
  results: number;
  errors: number;
  timedResults: number;
  durationMs: number;
  maxDurationMs: number;
  outputBytes: number;
}

/** What a generated session holds, written down while generating it. */
interface Expected {
  totals: Sums & { assistantMessages: number; toolCalls: number; toolResults: number; toolErrors: number; models: string[] };
  turns: Array<
    Sums & {
      entryId: string;
      prompt: string;
      startMs: number;
      endMs: number;
      assistantMessages: number;
      toolCalls: number;
      toolErrors: number;
      context: number | null;
      peakContext: number | null;
      compactions: Array<{ entryId: string; tokensBefore: number }>;
    }
  >;
  tools: Map<string, ToolFigures>;
  /** Every assistant message (all branches): its UTC day, model and figures. */
  calls: Array<{ day: string; model: string; tokens: Tokens; cost: Cost }>;
  leafId: string;
}

const MODELS = ["anthropic/claude-x", "openai/gpt-y", "google/gemini-z"];
const TOOLS = ["bash", "read", "edit"];
const OUTPUT_PIECES = ["ok ", "é", "€uro ", "😀", "line\n", "日本語"];
const iso = (ms: number) => new Date(ms).toISOString();

/**
 * A pi session: a model change, then turns of user → (assistant with tool calls → their results)* →
 * answer, a compaction in one turn, a side branch off turn 2 (in the totals, not in the turns), an
 * assistant message without usage, one whose cost gives only its total, one without cache fields.
 */
function generateSession(rng: Rng, id: string, cwd: string, startMs: number): { records: Record<string, unknown>[]; expected: Expected } {
  let now = startMs;
  let nextId = 0;
  const records: Record<string, unknown>[] = [{ type: "session", version: 3, id, timestamp: iso(now), cwd }];
  const expected: Expected = {
    totals: { ...zero(), assistantMessages: 0, toolCalls: 0, toolResults: 0, toolErrors: 0, models: [] },
    turns: [],
    tools: new Map(),
    calls: [],
    leafId: "",
  };
  let parent: string | null = null;
  const entry = (fields: Record<string, unknown>, parentId: string | null, advanceMs: number) => {
    now += advanceMs;
    const entryId = `e${(nextId++).toString(16).padStart(7, "0")}`;
    records.push({ type: "message", id: entryId, parentId, timestamp: iso(now), ...fields });
    return entryId;
  };
  const tool = (name: string) => expected.tools.get(name) ?? expected.tools.set(name, { calls: 0, results: 0, errors: 0, timedResults: 0, durationMs: 0, maxDurationMs: 0, outputBytes: 0 }).get(name)!;
  let callCount = 0;
  /** An assistant message; returns its id and the tool calls it made. */
  const assistant = (parentId: string, turn: Expected["turns"][number] | null, toolCalls: number) => {
    const model = rng.pick(MODELS);
    const [provider, modelName] = model.split("/") as [string, string];
    const tokens = { input: rng.between(0, 9000), output: rng.between(1, 4000), cacheRead: rng.between(0, 60000), cacheWrite: rng.between(0, 3000) };
    const parts = { input: tokens.input * 2 ** -20, output: tokens.output * 2 ** -18, cacheRead: tokens.cacheRead * 2 ** -22, cacheWrite: tokens.cacheWrite * 2 ** -19 };
    let cost: Cost = { ...parts, total: parts.input + parts.output + parts.cacheRead + parts.cacheWrite };
    let usage: Record<string, unknown> | undefined = { ...tokens, totalTokens: 0, cost };
    const kind = callCount++ % 9;
    if (kind === 4) {
      usage = undefined; // an aborted call that reported nothing
      cost = { input: 0, output: 0, cacheRead: 0, cacheWrite: 0, total: 0 };
      Object.assign(tokens, { input: 0, output: 0, cacheRead: 0, cacheWrite: 0 });
    } else if (kind === 6) {
      cost = { input: 0, output: 0, cacheRead: 0, cacheWrite: 0, total: 3 * 2 ** -10 };
      usage = { ...tokens, cost: { total: cost.total } };
    } else if (kind === 8) {
      Object.assign(tokens, { cacheRead: 0, cacheWrite: 0 });
      cost = { input: parts.input, output: parts.output, cacheRead: 0, cacheWrite: 0, total: parts.input + parts.output };
      usage = { input: tokens.input, output: tokens.output, cost: { input: parts.input, output: parts.output, total: cost.total } };
    }
    const calls = Array.from({ length: toolCalls }, (_, i) => ({ type: "toolCall", id: `call-${nextId}-${i}`, name: rng.pick(TOOLS), arguments: { n: i } }));
    const content = [...(toolCalls === 0 ? [{ type: "text", text: "done" }] : []), ...calls];
    const message = { role: "assistant", content, api: "x", provider, model: modelName, ...(usage ? { usage } : {}), stopReason: toolCalls ? "toolUse" : "stop", timestamp: now };
    const entryId = entry({ message }, parentId, rng.between(500, 20_000));
    expected.totals.assistantMessages++;
    add(expected.totals, tokens, cost);
    expected.totals.toolCalls += toolCalls;
    if (!expected.totals.models.includes(model)) expected.totals.models.push(model);
    expected.calls.push({ day: iso(now).slice(0, 10), model, tokens: { ...tokens }, cost: { ...cost } });
    for (const call of calls) tool(call.name).calls++;
    if (turn) {
      turn.assistantMessages++;
      turn.toolCalls += toolCalls;
      add(turn, tokens, cost);
      const context = tokens.input + tokens.cacheRead + tokens.cacheWrite;
      if (context > 0) {
        turn.context = context;
        turn.peakContext = Math.max(turn.peakContext ?? 0, context);
      }
      turn.endMs = now;
    }
    return { entryId, calls };
  };
  /** The results of `calls`, one after another: each one's duration is its time after the entry before it. */
  const results = (afterId: string, calls: Array<{ id: string; name: string }>, turn: Expected["turns"][number] | null) => {
    let previous = afterId;
    for (const call of calls) {
      const duration = rng.between(0, 30_000);
      const isError = rng.chance(0.25);
      const text = Array.from({ length: rng.between(0, 40) }, () => rng.pick(OUTPUT_PIECES)).join("");
      const message = { role: "toolResult", toolCallId: call.id, toolName: call.name, content: [{ type: "text", text }, { type: "image", data: "aGk=", mimeType: "image/png" }], isError, timestamp: now + duration };
      previous = entry({ message }, previous, duration);
      const figures = tool(call.name);
      figures.results++;
      figures.timedResults++;
      figures.durationMs += duration;
      figures.maxDurationMs = Math.max(figures.maxDurationMs, duration);
      figures.outputBytes += Buffer.byteLength(text, "utf8");
      expected.totals.toolResults++;
      if (isError) {
        figures.errors++;
        expected.totals.toolErrors++;
        if (turn) turn.toolErrors++;
      }
      if (turn) turn.endMs = now;
    }
    return previous;
  };

  now += 1000;
  records.push({ type: "model_change", id: "m0000000", parentId: null, timestamp: iso(now), provider: "anthropic", modelId: "claude-x" });
  parent = "m0000000";
  const turnCount = rng.between(3, 7);
  for (let t = 1; t <= turnCount; t++) {
    const prompt = `question ${t}: ${rng.pick(["why", "wie", "なぜ"])}`;
    const userId = entry({ message: { role: "user", content: [{ type: "text", text: `  ${prompt}\n` }], timestamp: now } }, parent, rng.between(1000, 600_000));
    const turn: Expected["turns"][number] = {
      ...zero(),
      entryId: userId,
      prompt,
      startMs: now,
      endMs: now,
      assistantMessages: 0,
      toolCalls: 0,
      toolErrors: 0,
      context: null,
      peakContext: null,
      compactions: [],
    };
    expected.turns.push(turn);
    parent = userId;
    const steps = rng.between(1, 4);
    for (let s = 0; s < steps; s++) {
      const last = s === steps - 1;
      const { entryId, calls } = assistant(parent, turn, last ? 0 : rng.between(1, 3));
      parent = results(entryId, calls, turn);
    }
    if (t === 2) {
      // A side branch off this turn's prompt: paid for, so in the totals; not on the path.
      const { entryId, calls } = assistant(userId, null, 1);
      results(entryId, calls, null);
    }
    if (t === turnCount - 1) {
      now += 2000;
      const tokensBefore = rng.between(50_000, 150_000);
      const compactionId = `c${t.toString().padStart(7, "0")}`;
      records.push({ type: "compaction", id: compactionId, parentId: parent, timestamp: iso(now), summary: "earlier turns", firstKeptEntryId: parent, tokensBefore });
      turn.compactions.push({ entryId: compactionId, tokensBefore });
      turn.endMs = now;
      parent = compactionId;
    }
  }
  expected.leafId = parent;
  return { records, expected };
}

const jsonl = (records: readonly Record<string, unknown>[]) => records.map((record) => JSON.stringify(record)).join("\n") + "\n";

async function openEntries(storage: StoragePort, path: string): Promise<{ header: SessionHeader; entries: SessionEntry[]; leafId: string | null }> {
  const sm = await SessionManager.open(storage, path, { readOnly: true });
  const opened = { header: sm.getHeader()!, entries: sm.getEntries(), leafId: sm.getLeafId() };
  await sm.close();
  return opened;
}

function checkSession(insights: ReturnType<typeof sessionInsights>, expected: Expected): void {
  const { totals } = expected;
  expect(insights.totals).toEqual({
    usage: { tokens: totals.tokens, cost: totals.cost },
    assistantMessages: totals.assistantMessages,
    toolCalls: totals.toolCalls,
    toolResults: totals.toolResults,
    toolErrors: totals.toolErrors,
    models: totals.models,
  });
  expect(insights.leafId).toBe(expected.leafId);
  expect(insights.turns).toEqual(
    expected.turns.map((turn, i) => ({
      turn: i + 1,
      entryId: turn.entryId,
      timestamp: iso(turn.startMs),
      durationMs: turn.endMs - turn.startMs,
      prompt: turn.prompt,
      assistantMessages: turn.assistantMessages,
      usage: { tokens: turn.tokens, cost: turn.cost },
      context: turn.context,
      peakContext: turn.peakContext,
      toolCalls: turn.toolCalls,
      toolErrors: turn.toolErrors,
      compactions: turn.compactions,
    })),
  );
  const path = zero();
  for (const turn of expected.turns) add(path, turn.tokens, turn.cost);
  expect(insights.pathUsage).toEqual(path);
  expect(Object.fromEntries(insights.tools.map(({ name, ...figures }) => [name, figures]))).toEqual(Object.fromEntries(expected.tools));
  const calls = insights.tools.map((tool) => tool.calls);
  expect(calls).toEqual([...calls].sort((a, b) => b - a));
}

describe("sessionInsights on generated sessions", () => {
  for (const seed of [1, 2, 3, 4, 5, 6]) {
    it(`seed ${seed}: totals over every branch, turns on the leaf's path, tools, as the generator counted them`, async () => {
      const { records, expected } = generateSession(mulberry32(seed), `s-${seed}`, "/work/project", Date.UTC(2026, 2, 1 + seed, 9));
      const storage = memoryStorage();
      await storage.write("sessions/--work-project--/s.jsonl", encoder.encode(jsonl(records)));
      const opened = await openEntries(storage, "sessions/--work-project--/s.jsonl");
      checkSession(sessionInsights(opened.header, opened.entries, opened.leafId), expected);
      // Without a leaf: the file's, the same here.
      checkSession(sessionInsights(opened.header, opened.entries), expected);
      // The viewer's header adds up the same numbers.
      const loaded = await loadSession(storage, "sessions/--work-project--/s.jsonl");
      expect({ tokens: loaded.model.stats.tokens, cost: loaded.model.stats.cost }).toEqual({ tokens: expected.totals.tokens, cost: expected.totals.cost });
      expect(loaded.model.stats.toolCalls).toBe(expected.totals.toolCalls);
      expect(loaded.model.stats.models).toEqual(expected.totals.models);
    });
  }

  it("reads seed 003's dialect to the same figures", async () => {
    const { records, expected } = generateSession(mulberry32(7), "s-7", "/work/project", Date.UTC(2026, 2, 9, 9));
    const seed003 = records.map((record) => encodeRecord("seed003", record));
    expect(seed003[0]!.type).toBe("session_header");
    const storage = memoryStorage();
    await storage.write("sessions/s.jsonl", encoder.encode(jsonl(seed003)));
    const opened = await openEntries(storage, "sessions/s.jsonl");
    checkSession(sessionInsights(opened.header, opened.entries, opened.leafId), expected);
    const [usage] = await readSessionUsage(storage, [info("sessions/s.jsonl", "s-7", "/work/project")]);
    expect({ tokens: usage!.usage.tokens, cost: usage!.usage.cost }).toEqual({ tokens: expected.totals.tokens, cost: expected.totals.cost });
  });

  it("follows another leaf when asked: the turns of that branch, the same totals", async () => {
    const { records, expected } = generateSession(mulberry32(8), "s-8", "/p", Date.UTC(2026, 2, 9, 9));
    const storage = memoryStorage();
    await storage.write("sessions/--p--/s.jsonl", encoder.encode(jsonl(records)));
    const opened = await openEntries(storage, "sessions/--p--/s.jsonl");
    const secondPrompt = expected.turns[1]!.entryId;
    const branchLeaf = opened.entries.filter((entry) => entry.parentId === secondPrompt).at(-1)!;
    const insights = sessionInsights(opened.header, opened.entries, branchLeaf.id);
    expect(insights.leafId).toBe(branchLeaf.id);
    expect(insights.turns.map((turn) => turn.entryId)).toEqual([expected.turns[0]!.entryId, secondPrompt]);
    expect(insights.turns[1]!.assistantMessages).toBe(1);
    expect(insights.totals.usage).toEqual({ tokens: expected.totals.tokens, cost: expected.totals.cost });
    expect(sessionInsights(opened.header, opened.entries, "no-such-entry").turns).toEqual([]);
  });

  it("counts output as UTF-8 bytes of text, durations from each result's parent entry, results without a call by their tool name", () => {
    const header: SessionHeader = { type: "session", version: 3, id: "h", timestamp: "2026-01-01T00:00:00.000Z", cwd: "/p" };
    const at = (second: number) => `2026-01-01T00:00:${String(second).padStart(2, "0")}.000Z`;
    const entries = [
      { type: "message", id: "u", parentId: null, timestamp: at(0), message: { role: "user", content: "go" } },
      {
        type: "message",
        id: "a",
        parentId: "u",
        timestamp: at(10),
        message: { role: "assistant", content: [{ type: "toolCall", id: "c1", name: "bash" }, { type: "toolCall", id: "c2", name: "bash" }, { type: "toolCall", name: "nameless-id" }] },
      },
      { type: "message", id: "r1", parentId: "a", timestamp: at(13), message: { role: "toolResult", toolCallId: "c1", toolName: "bash", content: "😀é", isError: false } },
      { type: "message", id: "r2", parentId: "r1", timestamp: at(20), message: { role: "toolResult", toolCallId: "c2", toolName: "bash", content: [{ type: "text", text: "abc" }], isError: true } },
      { type: "message", id: "r3", parentId: "r2", timestamp: "not a time", message: { role: "toolResult", toolCallId: "gone", toolName: "grep", content: [], isError: false } },
    ] as unknown as SessionEntry[];
    const insights = sessionInsights(header, entries);
    expect(insights.tools).toEqual([
      { name: "bash", calls: 2, results: 2, errors: 1, timedResults: 2, durationMs: 3000 + 7000, maxDurationMs: 7000, outputBytes: 4 + 2 + 3 },
      { name: "nameless-id", calls: 1, results: 0, errors: 0, timedResults: 0, durationMs: 0, maxDurationMs: 0, outputBytes: 0 },
      { name: "grep", calls: 0, results: 1, errors: 0, timedResults: 0, durationMs: 0, maxDurationMs: 0, outputBytes: 0 },
    ]);
    expect(insights.turns).toHaveLength(1);
    expect(insights.turns[0]).toMatchObject({ turn: 1, toolCalls: 3, toolErrors: 1, durationMs: null, context: null });
  });
});

function info(path: string, id: string, cwd: string, extra: Partial<SessionInfo> = {}): SessionInfo {
  return { path, id, cwd, created: new Date(0), modified: new Date(0), messageCount: 0, firstMessage: "", ...extra };
}

describe("usage across sessions", () => {
  /** 12 sessions in 3 projects, started on 4 days, and what the generator counted for each. */
  async function store() {
    const storage = memoryStorage();
    const sessions: Array<{ path: string; cwd: string; id: string; expected: Expected }> = [];
    for (let i = 0; i < 12; i++) {
      const cwd = `/work/p${i % 3}`;
      const path = `sessions/--work-p${i % 3}--/s${i}.jsonl`;
      // Late in the day: a session's calls spill over midnight.
      const { records, expected } = generateSession(mulberry32(100 + i), `id-${i}`, cwd, Date.UTC(2026, 3, 1 + (i % 4), 23, 40));
      await storage.write(path, encoder.encode(jsonl(records)));
      sessions.push({ path, cwd, id: `id-${i}`, expected });
    }
    return { storage, sessions };
  }

  function expectedTable(rows: Array<{ key: string; session: string; tokens: Tokens; cost: Cost }>) {
    const table = new Map<string, Sums & { sessions: Set<string>; assistantMessages: number }>();
    for (const row of rows) {
      const entry = table.get(row.key) ?? table.set(row.key, { ...zero(), sessions: new Set(), assistantMessages: 0 }).get(row.key)!;
      entry.sessions.add(row.session);
      entry.assistantMessages++;
      add(entry, row.tokens, row.cost);
    }
    return new Map([...table].map(([key, { sessions, assistantMessages, tokens, cost }]) => [key, { key, sessions: sessions.size, assistantMessages, usage: { tokens, cost } }]));
  }

  it("sums by day (UTC), model, project, agent and session what the generator counted", async () => {
    const { storage, sessions } = await store();
    const infos = (await SessionManager.listAll(storage)).filter((listed) => matchesQuery(listed, ""));
    expect(infos).toHaveLength(12);
    const usage = await readSessionUsage(storage, infos);
    const agentOf = (path: string) => (Number(/s(\d+)\.jsonl$/.exec(path)![1]) < 6 ? "pi" : "omp");
    const summary = summarizeUsage(
      usage.map((session) => ({ ...session, agent: agentOf(session.info.path) })),
      { timeZone: "utc" },
    );
    const calls = sessions.flatMap(({ path, cwd, expected }) => expected.calls.map((call) => ({ ...call, path, cwd })));
    const byKey = (rows: Array<{ key: string }>) => new Map(rows.map((row) => [row.key, row]));
    expect(byKey(summary.byDay)).toEqual(expectedTable(calls.map((call) => ({ key: call.day, session: call.path, tokens: call.tokens, cost: call.cost }))));
    expect(byKey(summary.byModel)).toEqual(expectedTable(calls.map((call) => ({ key: call.model, session: call.path, tokens: call.tokens, cost: call.cost }))));
    expect(byKey(summary.byProject)).toEqual(expectedTable(calls.map((call) => ({ key: call.cwd, session: call.path, tokens: call.tokens, cost: call.cost }))));
    expect(byKey(summary.byAgent)).toEqual(expectedTable(calls.map((call) => ({ key: agentOf(call.path), session: call.path, tokens: call.tokens, cost: call.cost }))));
    expect(summary.byDay.map((row) => row.key)).toEqual([...new Set(calls.map((call) => call.day))].sort());
    expect(new Set(summary.byDay.map((row) => row.key)).size).toBeGreaterThan(4); // past midnight
    const costs = summary.byModel.map((row) => row.usage.cost.total);
    expect(costs).toEqual([...costs].sort((a, b) => b - a));
    expect(summary.sessions).toBe(12);
    expect(summary.assistantMessages).toBe(calls.length);
    for (const { path, id, expected } of sessions) {
      const row = summary.bySession.find((session) => session.key === path);
      expect(row).toEqual({ key: path, id, label: `  ${expected.turns[0]!.prompt}\n`, sessions: 1, assistantMessages: expected.totals.assistantMessages, usage: { tokens: expected.totals.tokens, cost: expected.totals.cost } });
    }
  });

  it("narrows to the sessions whose name, first message, dir or id hold every word", async () => {
    const listed = info("sessions/a.jsonl", "0123abcd", "/home/me/Shop", { name: "Fix the Cart", firstMessage: "why is checkout slow" });
    expect(matchesQuery(listed, "")).toBe(true);
    expect(matchesQuery(listed, "cart CHECKOUT")).toBe(true);
    expect(matchesQuery(listed, "shop 0123")).toBe(true);
    expect(matchesQuery(listed, "cart payment")).toBe(false);
  });

  it("reads a file whose message lines it skips from their bytes (compact, as pi writes them) to the same figures as one whose lines it must parse", async () => {
    const { storage, sessions } = await store();
    const spaced = memoryStorage();
    for (const { path } of sessions) {
      const text = new TextDecoder().decode((await storage.read(path))!);
      // "{ " before each line's first key: no line is proved, every one is parsed.
      await spaced.write(path, encoder.encode(text.replace(/^\{/gm, "{ ")));
    }
    const infos = await SessionManager.listAll(storage);
    const usage = await readSessionUsage(storage, infos, { cache: false });
    expect(usage.reduce((n, session) => n + session.assistantMessages, 0)).toBeGreaterThan(0);
    expect(await readSessionUsage(spaced, infos, { cache: false })).toEqual(usage);
    // A tool result's line before the header: no session, whether that line is skipped or parsed.
    const [header, ...rest] = new TextDecoder().decode((await storage.read(infos[0]!.path))!).split("\n");
    const toolLine = rest.find((line) => line.includes('"role":"toolResult"'))!;
    const headerless = async (first: string) => {
      const one = memoryStorage();
      await one.write(infos[0]!.path, encoder.encode(`${first}\n${header}\n${rest.join("\n")}`));
      return readSessionUsage(one, [infos[0]!], { cache: false });
    };
    expect(await headerless(toolLine)).toEqual([]);
    expect(await headerless(`{ ${toolLine.slice(1)}`)).toEqual([]);
  });

  it("reads only the cache files there are: a store without any lists their folder once and asks for none of them (a served store answers each with a 404, which a browser logs)", async () => {
    const { storage } = await store();
    const infos = await SessionManager.listAll(storage);
    const asked: string[] = [];
    const watched: typeof storage = { ...storage, read: (path, range) => (asked.push(`read ${path}`), storage.read(path, range)), list: (dir) => (asked.push(`list ${dir}`), storage.list(dir)) };
    await readSessionUsage(watched, infos);
    expect(asked.filter((call) => call.includes(INSIGHTS_DIR))).toEqual([`list ${INSIGHTS_DIR}`]);
    // Written then, and read the next time.
    asked.length = 0;
    await readSessionUsage(watched, infos);
    expect(asked.filter((call) => call.startsWith(`read ${INSIGHTS_DIR}`))).toHaveLength(3);
  });

  it("keeps each file's usage in .sessionkit/insights: an unchanged store is not read again, a grown file only from where it was read, a rewritten one in full", async () => {
    const { storage } = await store();
    const infos = await SessionManager.listAll(storage);
    const first = await readSessionUsage(storage, infos);
    expect((await storage.list(INSIGHTS_DIR)).map((entry) => entry.name).sort()).toEqual(["sessions%2F--work-p0--.json", "sessions%2F--work-p1--.json", "sessions%2F--work-p2--.json"]);
    const { port, counter } = countingPort(storage);
    expect(await readSessionUsage(port, infos)).toEqual(first);
    const cacheBytes = counter.bytesRead;
    let cacheSize = 0;
    for (const entry of await storage.list(INSIGHTS_DIR)) cacheSize += entry.size;
    expect(cacheBytes).toBe(cacheSize); // only the caches were read

    // A turn appended to one session: read from the end of what was read.
    const grown = infos[0]!.path;
    const sizeBefore = (await storage.stat(grown))!.size;
    const more = encoder.encode(jsonl(generateSession(mulberry32(999), "more", "/x", Date.UTC(2026, 5, 1)).records.slice(1, 8)));
    await storage.append(grown, more);
    counter.bytesRead = 0;
    const afterAppend = await readSessionUsage(port, infos);
    // What was appended, the header line (read twice, up to 4 KiB each) and the bytes before the resume point.
    const resumeBound = more.length + 2 * 4096 + 2 * 64;
    expect(sizeBefore).toBeGreaterThan(resumeBound);
    expect(counter.bytesRead - cacheSize).toBeLessThanOrEqual(resumeBound);
    expect(afterAppend).toEqual(await readSessionUsage(storage, infos, { cache: false }));
    expect(afterAppend[0]!.assistantMessages).toBeGreaterThan(first[0]!.assistantMessages);

    // Rewritten with other content: read again from the start, not added to what was kept.
    const rewritten = generateSession(mulberry32(5), "rewritten", "/x", Date.UTC(2026, 5, 2)).records;
    await storage.write(grown, encoder.encode(jsonl(rewritten)));
    const afterRewrite = await readSessionUsage(storage, infos);
    expect(afterRewrite).toEqual(await readSessionUsage(storage, infos, { cache: false }));
    const alone = generateSession(mulberry32(5), "rewritten", "/x", Date.UTC(2026, 5, 2)).expected;
    expect(afterRewrite[0]!.usage).toEqual({ tokens: alone.totals.tokens, cost: alone.totals.cost });

    // A damaged cache is read past; a removed file is left out.
    await storage.write(`${INSIGHTS_DIR}/sessions%2F--work-p0--.json`, encoder.encode("{not json"));
    await storage.remove(infos[1]!.path);
    const afterDamage = await readSessionUsage(storage, infos);
    expect(afterDamage.map((session) => session.info.path)).toEqual(infos.filter((_, i) => i !== 1).map((listed) => listed.path));
    expect(afterDamage).toEqual(await readSessionUsage(storage, infos, { cache: false }));
  });
});

function corpusFiles(): string[] {
  const out: string[] = [];
  for (const dir of readdirSync(CORPUS_DIR, { withFileTypes: true })) {
    if (!dir.isDirectory()) continue;
    for (const name of readdirSync(join(CORPUS_DIR, dir.name))) if (name.endsWith(".jsonl")) out.push(`${dir.name}/${name}`);
  }
  return out.sort();
}

describe("insights of the corpus: the viewer header's own numbers", () => {
  for (const file of corpusFiles()) {
    it(file, async () => {
      const storage = memoryStorage();
      const path = "sessions/--corpus--/s.jsonl";
      await storage.write(path, readFileSync(join(CORPUS_DIR, file)));
      const { model } = await loadSession(storage, path);
      const header = { tokens: model.stats.tokens, cost: model.stats.cost };
      // The viewer's entries (what the insights view is given) and the CLI's (SessionManager).
      const viewed = sessionInsights(model.header, model.allEntries(), model.fileLeafId);
      const opened = await openEntries(storage, path);
      const cli = sessionInsights(opened.header, opened.entries, opened.leafId);
      for (const insights of [viewed, cli]) {
        expect(insights.totals.usage).toEqual(header);
        expect(insights.totals.toolCalls).toBe(model.stats.toolCalls);
        expect(insights.totals.assistantMessages).toBe(model.stats.assistantMessages);
        expect(insights.totals.toolResults).toBe(model.stats.toolResults);
        expect(insights.totals.models).toEqual(model.stats.models);
        expect(insights.tools.reduce((n, tool) => n + tool.calls, 0)).toBe(model.stats.toolCalls);
        // The turns are the user messages of the viewed path.
        const users = model.pathIndexes(model.fileLeafId).filter((i) => {
          const entry = model.entry(i);
          return entry.type === "message" && entry.message.role === "user";
        });
        expect(insights.turns.filter((turn) => turn.turn > 0)).toHaveLength(users.length);
      }
      expect(viewed.turns.map((turn) => turn.usage)).toEqual(cli.turns.map((turn) => turn.usage));
      // The store's reading, cached by file, adds up the same numbers.
      const [usage] = await readSessionUsage(storage, await SessionManager.listAll(storage));
      expect(usage!.usage).toEqual(header);
      expect(usage!.assistantMessages).toBe(model.stats.assistantMessages);
    });
  }
});
