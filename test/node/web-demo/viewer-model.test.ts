/**
 * The viewer's data side, without a DOM: its paced loader reads every corpus file as the core's
 * readSessionFile does; the SessionModel's tree, paths, figures and labels agree with what pi
 * computes; pi's tree layout (flat chains, connectors, active branch first), its filters and
 * search; folding; following a session a writer appends to.
 */
import { readdirSync, readFileSync } from "node:fs";
import { join } from "node:path";
import fc from "fast-check";
import { describe, expect, it, vi } from "vitest";
import { memoryStorage } from "../../../adapters/memory/index.js";
import { readSessionFile } from "../../../src/format/session-file.js";
import { SessionManager, type SessionEntry } from "../../../src/index.js";
import { followSession, LoadCancelled, loadSession, ONE_TASK_BYTES, readSessionTail } from "../../../web-demo/src/data/load-session.js";
import { searchEntries } from "../../../web-demo/src/model/filters.js";
import { SessionModel } from "../../../web-demo/src/model/session-model.js";
import { layoutTree, treePrefix, type TreeLayoutOptions } from "../../../web-demo/src/model/tree-layout.js";
import { SAMPLE_SESSION } from "../../../web-demo/src/first-run.js";
import { CORPUS_DIR, loadPiReference } from "../../shared/corpus.js";
import { assistantMsg, userMsg } from "../../shared/messages.js";

const encoder = new TextEncoder();

async function storeText(text: string, path = "sessions/--x--/s.jsonl") {
  const storage = memoryStorage();
  await storage.write(path, encoder.encode(text));
  return { storage, path };
}

/** A pi session of `n` entries in one chain: user questions, assistant answers calling a tool, the tool's results. */
function chainSession(n: number): string {
  const t = "2026-02-01T12:00:00.000Z";
  const lines = [JSON.stringify({ type: "session", version: 3, id: "chain", timestamp: t, cwd: "/w" })];
  for (let i = 0; i < n; i++) {
    const parentId = i === 0 ? null : `e${i - 1}`;
    const message =
      i % 3 === 0
        ? userMsg(`question ${i}`)
        : i % 3 === 1
          ? { role: "assistant", content: [{ type: "text", text: `answer ${i}` }, { type: "toolCall", id: `call${i}`, name: "bash", arguments: { command: `echo ${i}` } }], provider: "p", model: "m", usage: { input: i, output: 1, cacheRead: 0, cacheWrite: 0, cost: { input: 0.5, output: 0.25, cacheRead: 0, cacheWrite: 0, total: 0.75 } }, stopReason: "toolUse", timestamp: i }
          : { role: "toolResult", toolCallId: `call${i - 1}`, toolName: "bash", content: [{ type: "text", text: `line ${i}\n`.repeat(100) }], isError: false, timestamp: i };
    lines.push(JSON.stringify({ type: "message", id: `e${i}`, parentId, timestamp: t, message }));
  }
  return lines.join("\n") + "\n";
}

function corpusFiles(): string[] {
  const out: string[] = [];
  for (const dir of readdirSync(CORPUS_DIR, { withFileTypes: true })) {
    if (!dir.isDirectory()) continue;
    for (const name of readdirSync(join(CORPUS_DIR, dir.name))) if (name.endsWith(".jsonl")) out.push(`${dir.name}/${name}`);
  }
  return out.sort();
}

/** The model of a loaded file (most message lines unparsed) indexes it as the model of its parsed entries does. */
function expectSameIndex(lazy: SessionModel, parsed: SessionModel): void {
  expect(lazy.size).toBe(parsed.size);
  expect(lazy.stats).toEqual(parsed.stats);
  expect(lazy.labels).toEqual(parsed.labels);
  expect(lazy.fileLeafId).toBe(parsed.fileLeafId);
  expect(lazy.sessionName()).toBe(parsed.sessionName());
  for (let i = 0; i < parsed.size; i++) {
    expect([lazy.id(i), lazy.parentIndex(i), lazy.flags(i), lazy.listed(i)]).toEqual([parsed.id(i), parsed.parentIndex(i), parsed.flags(i), parsed.listed(i)]);
    const entry = parsed.entry(i);
    if (entry.type === "message" && entry.message.role === "toolResult" && typeof entry.message.toolCallId === "string") {
      expect(lazy.toolCall(entry.message.toolCallId)).toEqual(parsed.toolCall(entry.message.toolCallId));
      expect(lazy.toolResult(entry.message.toolCallId)?.id).toBe(parsed.toolResult(entry.message.toolCallId)?.id);
    }
  }
}

describe("loadSession", () => {
  const reference = loadPiReference().files;
  for (const file of corpusFiles()) {
    it(`reads ${file} as readSessionFile does, in 64 KiB ranges, with pi's counts`, async () => {
      const { storage, path } = await storeText(readFileSync(join(CORPUS_DIR, file), "utf8"));
      const core = await readSessionFile(storage, path);
      if (core.kind !== "session") throw new Error("corpus file is not a session");
      const progress: number[] = [];
      const loaded = await loadSession(storage, path, { rangeBytes: 64 * 1024, onProgress: (read) => progress.push(read) });
      // A migrated file gets new ids on every read (v1 had none): compare the entries' types then.
      if (core.migratedFrom === null) expect(loaded.model.allEntries()).toEqual(core.entries);
      else expect(loaded.model.allEntries().map((e) => e.type)).toEqual(core.entries.map((e) => e.type));
      expect(loaded.model.header).toEqual(core.header);
      expect(loaded.problems.map((p) => p.kind)).toEqual(core.problems.map((p) => p.kind));
      expect(loaded.migratedFrom).toBe(core.migratedFrom);
      expect(progress.at(-1)).toBe((await storage.stat(path))!.size);
      if (core.migratedFrom === null) expectSameIndex(loaded.model, new SessionModel(core.header, core.entries, core.dialect));
      const pi = reference[file]!;
      if (core.migratedFrom !== null) return; // pi's figures for migrated files count what pi's migration keeps
      expect(loaded.model.size).toBe(pi.entries);
      expect(loaded.model.rootIndexes()).toHaveLength(pi.treeRoots);
      expect(loaded.model.pathIndexes(loaded.model.fileLeafId)).toHaveLength(pi.branchLength);
      expect(loaded.model.sessionName()).toBe(pi.sessionName ?? undefined);
    });
  }

  it("leaves message lines unparsed (parsing small values of them only), and parses an entry when asked for it", async () => {
    const text = chainSession(3000);
    const { storage, path } = await storeText(text);
    const parse = JSON.parse;
    let parsedChars = 0;
    const spy = vi.spyOn(JSON, "parse").mockImplementation((json: string, reviver) => {
      parsedChars += json.length;
      return parse(json, reviver) as unknown;
    });
    let loaded: Awaited<ReturnType<typeof loadSession>>;
    try {
      loaded = await loadSession(storage, path, { rangeBytes: 64 * 1024 });
    } finally {
      spy.mockRestore();
    }
    expect(loaded.model.size).toBe(3000);
    expect(parsedChars / text.length).toBeLessThan(0.1);
    const core = await readSessionFile(storage, path);
    if (core.kind !== "session") throw new Error("not read as a session");
    expect(loaded.model.entry(2999)).toEqual(core.entries[2999]);
    expectSameIndex(loaded.model, new SessionModel(core.header, core.entries));
  });

  it("stops reading once the session is no longer wanted (another was opened)", async () => {
    const { storage, path } = await storeText(chainSession(3000));
    let reads = 0;
    const counted = { ...storage, read: (p: string, range?: { offset: number; length?: number }) => (reads++, storage.read(p, range)) };
    let wanted = true;
    const loading = loadSession(counted, path, { rangeBytes: 16 * 1024, sliceMs: 0, isCurrent: () => wanted, onProgress: () => (wanted = false) });
    await expect(loading).rejects.toBeInstanceOf(LoadCancelled);
    const size = (await storage.stat(path))!.size;
    expect(reads).toBeLessThan(size / (16 * 1024) / 2);
  });

  it("reads a file's end as a model of its own: the file's leaf and the entries before it in that range", async () => {
    const text = chainSession(3000);
    const { storage, path } = await storeText(text);
    const { model } = await loadSession(storage, path);
    expect(await readSessionTail(storage, path, text.length)).toBeNull();
    const tail = (await readSessionTail(storage, path, 64 * 1024))!;
    expect(tail.size).toBe(encoder.encode(text).length);
    expect(tail.model.header).toEqual(model.header);
    expect(tail.model.fileLeafId).toBe(model.fileLeafId);
    // The leaf's path as far back as the range holds it is the end of the whole path.
    const tailPath = tail.model.pathIndexes(tail.model.fileLeafId).map((i) => tail.model.id(i));
    expect(tailPath.length).toBeGreaterThan(10);
    expect(model.pathIndexes(model.fileLeafId).slice(-tailPath.length).map((i) => model.id(i))).toEqual(tailPath);
    for (let k = 0; k < tailPath.length; k++) expect(tail.model.entry(tail.model.indexOf(tailPath[k]!)!)).toEqual(model.getEntry(tailPath[k]!));
    // A file that is no current session has no preview (the whole read says what it is).
    const old = await storeText('{"type":"session","id":"v1","timestamp":"2026-01-01T00:00:00.000Z","cwd":"/w"}\n' + '{"type":"message","timestamp":"2026-01-01T00:00:00.000Z","message":{"role":"user","content":"hi"}}\n'.repeat(2000));
    expect(await readSessionTail(old.storage, old.path, 1024)).toBeNull();
  });

  it("refuses a file whose first record is not a session header, and a missing file", async () => {
    const { storage, path } = await storeText('{"type":"message","id":"a"}\n');
    await expect(loadSession(storage, path)).rejects.toMatchObject({ name: "SessionError", code: "not-a-session" });
    await expect(loadSession(storage, "sessions/none.jsonl")).rejects.toMatchObject({ name: "SessionError" });
  });

  it("indexes in slices, yielding to the event loop between them (a timer set before loading runs before it ends)", async () => {
    const text = chainSession(1000);
    expect(encoder.encode(text).length).toBeGreaterThan(ONE_TASK_BYTES);
    const { storage, path } = await storeText(text);
    let timerRan = false;
    setTimeout(() => (timerRan = true), 0);
    let sawTimer = false;
    await loadSession(storage, path, { sliceMs: 0, onProgress: () => (sawTimer ||= timerRan) });
    expect(sawTimer).toBe(true);
  });

  it("indexes a file of at most ONE_TASK_BYTES in one go, whatever the slice (no frame painted before it is shown)", async () => {
    const text = chainSession(300);
    expect(encoder.encode(text).length).toBeLessThanOrEqual(ONE_TASK_BYTES);
    const { storage, path } = await storeText(text);
    let timerRan = false;
    setTimeout(() => (timerRan = true), 0);
    const { model } = await loadSession(storage, path, { sliceMs: 0 });
    expect(timerRan).toBe(false);
    expect(model.size).toBe(300);
  });

  it("slices a file that grew past ONE_TASK_BYTES after its size was read", async () => {
    const text = chainSession(1000);
    const { storage, path } = await storeText(text);
    const statedSmall = { ...storage, stat: async (p: string) => ({ ...(await storage.stat(p))!, size: 1000 }) };
    let timerRan = false;
    setTimeout(() => (timerRan = true), 0);
    let sawTimer = false;
    const { model } = await loadSession(statedSmall, path, { sliceMs: 0, onProgress: () => (sawTimer ||= timerRan) });
    expect(sawTimer).toBe(true);
    expect(model.size).toBe(1000);
  });
});

describe("seed 003", () => {
  it("reads seed 003's dialect as readSessionFile does, and its leaf entries move the leaf", async () => {
    const T = (second: number) => `2026-03-01T10:00:${String(second).padStart(2, "0")}.000Z`;
    const user = (text: string) => JSON.stringify({ role: "user", content: text, timestamp: 1 });
    const lines = [
      `{"type":"session_header","id":"s3","timestamp":"${T(0)}","cwd":"/my/project"}`,
      `{"type":"message","id":"a1","parent_id":null,"timestamp":"${T(1)}","message":${user("first question")}}`,
      `{"type":"message","id":"a2","parent_id":"a1","timestamp":"${T(2)}","message":${user("second")}}`,
      `{"type":"compaction","id":"a3","parent_id":"a2","summary":"the first turn","first_kept_entry_id":"a2"}`,
      `{"type":"leaf","id":"a5","parent_id":"a3","timestamp":"${T(5)}","target_id":"a1"}`,
    ];
    const { storage, path } = await storeText(lines.join("\n") + "\n");
    const core = await readSessionFile(storage, path);
    const loaded = await loadSession(storage, path);
    if (core.kind !== "session") throw new Error("not read as a session");
    expect(loaded.model.allEntries()).toEqual(core.entries);
    expect(loaded.model.header).toEqual(core.header);
    expect(loaded.model.fileLeafId).toBe("a1");
    const sm = await SessionManager.open(storage, path, { readOnly: true });
    expect(loaded.model.fileLeafId).toBe(sm.getLeafId());
    await sm.close();
  });
});

describe("SessionModel", () => {
  it("pairs tool calls with results, counts messages, tokens and cost over every branch, keeps labels", async () => {
    const { storage, path } = await storeText(SAMPLE_SESSION);
    const { model } = await loadSession(storage, path);
    const stats = model.stats;
    expect([stats.userMessages, stats.assistantMessages, stats.toolResults, stats.customMessages, stats.compactions, stats.branchSummaries, stats.toolCalls]).toEqual([3, 8, 5, 1, 1, 1, 5]);
    expect(stats.models).toEqual(["anthropic/claude-sonnet-4-5", "openai/gpt-5"]);
    expect(stats.tokens).toEqual({ input: 9600, output: 1440, cacheRead: 0, cacheWrite: 0 });
    expect(stats.cost.total).toBeCloseTo(8 * (1200 * 3e-6 + 180 * 15e-6), 10);
    expect([...model.labels.values()]).toEqual(["fix applied", "dst attempt"]);
    const results = model.allEntries().flatMap((e) => (e.type === "message" && e.message.role === "toolResult" ? [e.message] : []));
    expect(results).toHaveLength(5);
    for (const result of results) expect(model.toolCall(String(result.toolCallId))?.name).toBe(result.toolName);
    // Children oldest first; the newest leaf under the branch point is the file's leaf.
    const branchPoint = model.allEntries().find((e) => model.childCount(model.indexOf(e.id)!) > 1)!;
    expect(model.newestLeafUnder(branchPoint.id)).toBe(model.fileLeafId);
    expect(model.divergencePoint(model.fileLeafId!)?.id).toBe(branchPoint.id);
    expect(model.subtreeSize(0)).toBe(model.size);
  });

  it("places an entry written before its parent under that parent once it arrives", () => {
    const header = { type: "session" as const, version: 3, id: "s", timestamp: "2026-01-01T00:00:00.000Z", cwd: "/x" };
    const entry = (id: string, parentId: string | null, t: number): SessionEntry => ({ type: "message", id, parentId, timestamp: new Date(t).toISOString(), message: userMsg(id) });
    const model = new SessionModel(header, [entry("a", null, 1), entry("c", "b", 3)]);
    expect(model.rootIndexes().map((i) => model.id(i))).toEqual(["a", "c"]);
    model.append([entry("b", "a", 2)]);
    expect(model.rootIndexes().map((i) => model.id(i))).toEqual(["a"]);
    expect(model.pathIndexes("c").map((i) => model.id(i))).toEqual(["a", "b", "c"]);
  });
});

describe("tree layout", () => {
  /** A session with two branches from `q2`: the older one (a2) and the newer one (b2 → b3). */
  function branched(): SessionModel {
    const header = { type: "session" as const, version: 3, id: "s", timestamp: "2026-01-01T00:00:00.000Z", cwd: "/x" };
    let t = 0;
    const msg = (id: string, parentId: string | null, message: SessionEntry["message" & keyof SessionEntry]) => ({ type: "message", id, parentId, timestamp: new Date(++t * 1000).toISOString(), message }) as SessionEntry;
    return new SessionModel(header, [
      msg("q1", null, userMsg("first question")),
      msg("a1", "q1", assistantMsg("first answer")),
      { type: "model_change", id: "m1", parentId: "a1", timestamp: new Date(++t * 1000).toISOString(), provider: "p", modelId: "m" } as SessionEntry,
      msg("q2", "m1", userMsg("second question")),
      msg("a2", "q2", assistantMsg("older branch answer")),
      msg("b2", "q2", { role: "assistant", content: [{ type: "toolCall", id: "c1", name: "bash", arguments: { command: "ls" } }], stopReason: "toolUse" }),
      msg("b3", "b2", { role: "toolResult", toolCallId: "c1", toolName: "bash", content: [{ type: "text", text: "file.txt" }], isError: false }),
      msg("b4", "b3", assistantMsg("newer branch answer")),
      { type: "label", id: "l1", parentId: "b4", timestamp: new Date(++t * 1000).toISOString(), targetId: "q2", label: "here" } as SessionEntry,
    ]);
  }
  const options = (model: SessionModel, over: Partial<TreeLayoutOptions> = {}): TreeLayoutOptions => {
    const leafId = over.leafId === undefined ? model.fileLeafId : over.leafId;
    return { filter: "default", matches: null, activePath: new Set(model.pathIndexes(leafId)), leafId, folded: new Set(), ...over };
  };
  const rows = (model: SessionModel, over: Partial<TreeLayoutOptions> = {}) => {
    const layout = layoutTree(model, options(model, over));
    return Array.from({ length: layout.count }, (_, r) => {
      const row = layout.row(r);
      return `${treePrefix(row)}${row.entry.id}`;
    });
  };

  it("keeps chains flat, indents branches with connectors, lists the active branch first, hides settings and tool-only turns", () => {
    const model = branched();
    // Leaf l1 (the label) is shown: the current leaf always is. b2 only calls a tool: hidden.
    // pi indents the first generation after a branch point once more ("visual grouping").
    expect(rows(model)).toEqual(["q1", "a1", "q2", "├─ b3", "│     b4", "│     l1", "└─ a2"]);
    expect(rows(model, { leafId: "a2" })).toEqual(["q1", "a1", "q2", "├─ a2", "└─ b3", "      b4"]);
    const layout = layoutTree(model, options(model));
    expect([layout.shown, layout.total]).toEqual([7, 9]);
  });

  it("filters as pi does: no-tools, user only, labeled only, all", () => {
    const model = branched();
    expect(rows(model, { filter: "no-tools", leafId: "a2" })).toEqual(["q1", "a1", "q2", "├─ a2", "└─ b4"]);
    expect(rows(model, { filter: "user-only", leafId: "q1" })).toEqual(["q1", "q2"]);
    expect(rows(model, { filter: "labeled-only", leafId: "q1" })).toEqual(["q1", "q2"]);
    expect(rows(model, { filter: "all", leafId: "a2" })).toEqual(["q1", "a1", "m1", "q2", "├─ a2", "└─ b3", "      b4", "      l1"]);
  });

  it("folds a branch point or a branch, counting what the fold hides", () => {
    const model = branched();
    const folded = layoutTree(model, options(model, { folded: new Set(["q2"]) }));
    expect(folded.count).toBe(3);
    expect(folded.row(2)).toMatchObject({ foldable: true, folded: true, hiddenBelow: 5 });
    // b2 only calls a tool (always hidden): b3 heads its branch, and folds it.
    expect(rows(model, { folded: new Set(["b3"]), filter: "all" })).toEqual(["q1", "a1", "m1", "q2", "├─ b3", "└─ a2"]);
    // A chain entry is not foldable: folding it changes nothing.
    expect(rows(model, { folded: new Set(["a1"]) })).toEqual(rows(model));
  });

  it("search keeps entries with every word (label, role, text, command, model)", async () => {
    const model = branched();
    const numbers = (ids: Set<number> | null) => [...(ids ?? [])].map((i) => model.id(i));
    expect(numbers(await searchEntries(model, "Answer BRANCH"))).toEqual(["a2", "b4"]);
    expect(numbers(await searchEntries(model, "here question"))).toEqual(["q2"]);
    expect(numbers(await searchEntries(model, "model m"))).toEqual(["m1"]);
    expect(rows(model, { matches: await searchEntries(model, "newer") })).toEqual(["b4", "l1"]);
  });

  it("search finds in unparsed lines what it finds in parsed entries (escapes, two text blocks, labels, case)", async () => {
    const t = "2026-02-01T12:00:00.000Z";
    const texts = ['say "quoted" and back\\slash', "path/to/file.ts and a/b", "Crème brûlée ΟΔΟΣ 🎉 ok", "first half", "second half", "tab\there", "UPPER lower MiXeD"];
    const message = (id: string, parentId: string | null, body: Record<string, unknown>) => JSON.stringify({ type: "message", id, parentId, timestamp: t, message: body });
    const lines = [
      JSON.stringify({ type: "session", version: 3, id: "search", timestamp: t, cwd: "/w" }),
      message("u1", null, { role: "user", content: texts[0] }),
      message("a1", "u1", { role: "assistant", content: [{ type: "text", text: texts[1] }, { type: "toolCall", id: "c1", name: "bash", arguments: { command: "ls /tmp" } }], stopReason: "toolUse" }),
      message("r1", "a1", { role: "toolResult", toolCallId: "c1", toolName: "bash", content: [{ type: "text", text: texts[2] }], isError: false }),
      message("a2", "r1", { role: "assistant", content: [{ type: "text", text: texts[3] }, { type: "text", text: texts[4] }], stopReason: "stop" }),
      // Written with escapes JSON.stringify does not use: \u and \/.
      '{"type":"message","id":"u2","parentId":"a2","timestamp":"' + t + '","message":{"role":"user","content":"cr\\u00e8me br\\u00fbl\\u00e9e"}}',
      '{"type":"message","id":"u4","parentId":"u2","timestamp":"' + t + '","message":{"role":"user","content":"at x\\/y"}}',
      message("b1", "u4", { role: "bashExecution", command: "grep -rn needle .", output: "hay", exitCode: 0 }),
      message("u3", "b1", { role: "user", content: [{ type: "text", text: texts[5] }, { type: "image", data: "AAAA", mimeType: "image/png" }] }),
      message("a3", "u3", { role: "assistant", content: [{ type: "text", text: texts[6] }], stopReason: "stop" }),
      JSON.stringify({ type: "label", id: "l1", parentId: "a3", timestamp: t, targetId: "u1", label: "Checkpoint Here" }),
    ];
    const { storage, path } = await storeText(lines.join("\n") + "\n");
    const { model: lazy } = await loadSession(storage, path);
    const core = await readSessionFile(storage, path);
    if (core.kind !== "session") throw new Error("not read as a session");
    const parsed = new SessionModel(core.header, core.entries);
    const ids = async (model: SessionModel, query: string) => [...((await searchEntries(model, query)) ?? [])].map((i) => model.id(i));
    const queries = ["quoted", '"quoted"', "back\\slash", "to/file", "a/b", "x/y", "crème", "brûlée", "ΟΔΟΣ", "οδος", "🎉", "halfsecond", "first second", "needle", "grep", "tab\there", "here", "upper mixed", "checkpoint", "checkpoint say", "bash", "assistant half", "user", "toolresult"];
    for (const query of queries) expect(await ids(lazy, query), query).toEqual(await ids(parsed, query));
    // Words cut from the texts, and across their edges.
    const joined = texts.join(" ").toLowerCase();
    await fc.assert(
      fc.asyncProperty(fc.integer({ min: 0, max: joined.length - 1 }), fc.integer({ min: 1, max: 6 }), async (start, length) => {
        const query = joined.slice(start, start + length);
        expect(await ids(lazy, query)).toEqual(await ids(parsed, query));
      }),
      { numRuns: 300 },
    );
    expect(await ids(lazy, "halfsecond")).toEqual(["a2"]);
    expect(await ids(lazy, "brûlée crème")).toEqual(["r1", "u2"]);
    expect(await ids(lazy, "x/y")).toEqual(["u4"]);
  });

  it("draws at most 8 levels of connectors, naming the levels left out", () => {
    const row = { entry: {} as SessionEntry, indent: 11, showConnector: true, isLast: false, gutters: [{ position: 9, show: true }], isVirtualRootChild: false, multipleRoots: false, childCount: 0, foldable: false, folded: false, hiddenBelow: 0 };
    expect(treePrefix(row)).toBe(`‹3›${"   ".repeat(6)}│  ├─ `);
  });

  it("lays out 100,000 entries without recursion", () => {
    const header = { type: "session" as const, version: 3, id: "s", timestamp: "2026-01-01T00:00:00.000Z", cwd: "/x" };
    const entries: SessionEntry[] = [];
    for (let i = 0; i < 100_000; i++) entries.push({ type: "message", id: `e${i}`, parentId: i === 0 ? null : `e${i - 1}`, timestamp: new Date(i * 1000).toISOString(), message: i % 2 ? assistantMsg(`a${i}`) : userMsg(`q${i}`) });
    const model = new SessionModel(header, entries);
    const layout = layoutTree(model, options(model));
    expect(layout.count).toBe(100_000);
    expect(layout.row(99_999).entry.id).toBe("e99999");
    expect(model.pathIndexes("e99999")).toHaveLength(100_000);
  });
});

describe("followSession", () => {
  it("reads entries appended after loading, and only whole lines", async () => {
    const storage = memoryStorage();
    const writer = await SessionManager.create(storage, "/work/follow");
    writer.appendMessage(userMsg("first"));
    writer.appendMessage(assistantMsg("first answer"));
    await writer.flush();
    const path = writer.getSessionFile()!;
    const session = await loadSession(storage, path);
    const seen: string[] = [];
    const follower = await followSession(session, { onAppend: (entries) => seen.push(...entries.map((e) => e.id)), pollMs: 10 });
    try {
      const more = [writer.appendMessage(userMsg("second")), writer.appendMessage(assistantMsg("second answer"))];
      await writer.flush();
      await expect.poll(() => seen, { timeout: 5000 }).toEqual(more);
      // Half a line: nothing until the rest arrives.
      await storage.append(path, encoder.encode('{"type":"message","id":"zz","parentId":"' + more[1] + '","timestamp":"2026-01-01T00:00:00.000Z",'));
      await new Promise((r) => setTimeout(r, 60));
      expect(seen).toEqual(more);
      await storage.append(path, encoder.encode('"message":{"role":"user","content":"third","timestamp":1}}\n'));
      await expect.poll(() => seen, { timeout: 5000 }).toEqual([...more, "zz"]);
      expect(session.model.fileLeafId).toBe("zz");
    } finally {
      await follower.stop();
      await writer.close();
    }
  });

  it("says so when the file shrinks (replaced): what is shown is no longer its prefix", async () => {
    const { storage, path } = await storeText(SAMPLE_SESSION);
    const session = await loadSession(storage, path);
    let replaced = false;
    const follower = await followSession(session, { onAppend: () => {}, onReplaced: () => (replaced = true), pollMs: 10 });
    await storage.write(path, encoder.encode(SAMPLE_SESSION.slice(0, 400).split("\n")[0] + "\n"));
    await expect.poll(() => replaced, { timeout: 5000 }).toBe(true);
    await follower.stop();
  });
});
