/**
 * `sessionkit stats` as a real child process: --json prints what the insights API returns (a
 * session's turns and tools, or the tables across sessions), with dollars and tokens the test
 * adds up itself; a session named by file or id prefix, a query over the list otherwise; text
 * escaped for the terminal; the usage cache in the cache folder, none in the store.
 */
import { mkdir, mkdtemp, readdir, rm, writeFile } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { nodeFsStorage } from "../../adapters/node-fs/index.js";
import { sessionInsights } from "../../src/insights/session-insights.js";
import { readSessionUsage, summarizeUsage } from "../../src/insights/store-insights.js";
import { SessionManager } from "../../src/session/session-manager.js";
import { sessionDirFor, sessionFileName } from "../../src/session/paths.js";
import { bundleCli, runCli, type CliResult } from "../shared/cli-runner.js";

let dir: string;
let root: string;
let cliBundle: string;
const sk = (...args: string[]): Promise<CliResult> => runCli(cliBundle, ["--root", root, ...args], { env: { TZ: "UTC" } });

/** A session's calls: model, input and output tokens, dollars (multiples of 2^-10: sums are exact). */
type Call = { model: string; input: number; output: number; dollars: number };
interface Made {
  id: string;
  cwd: string;
  file: string;
  prompt: string;
  day: string;
  calls: Call[];
}
const made: Made[] = [];

const RED_CWD = "/work/红色\x1b[31mred";

async function writeSession(id: string, cwd: string, day: string, prompt: string, calls: Call[]): Promise<void> {
  const start = `${day}T10:00:00.000Z`;
  const time = (second: number) => `${day}T10:00:${String(second).padStart(2, "0")}.000Z`;
  const lines: unknown[] = [{ type: "session", version: 3, id, timestamp: start, cwd }];
  lines.push({ type: "message", id: "u0000001", parentId: null, timestamp: time(1), message: { role: "user", content: prompt, timestamp: 0 } });
  let parent = "u0000001";
  calls.forEach((call, i) => {
    const [provider, model] = call.model.split("/");
    const usage = { input: call.input, output: call.output, cacheRead: 0, cacheWrite: 0, cost: { input: call.dollars, output: 0, cacheRead: 0, cacheWrite: 0, total: call.dollars } };
    const toolCall = { type: "toolCall", id: `c${i}`, name: "bash", arguments: {} };
    lines.push({ type: "message", id: `a000000${i}`, parentId: parent, timestamp: time(2 + 2 * i), message: { role: "assistant", content: [toolCall], provider, model, usage, stopReason: "toolUse", timestamp: 0 } });
    lines.push({ type: "message", id: `r000000${i}`, parentId: `a000000${i}`, timestamp: time(3 + 2 * i), message: { role: "toolResult", toolCallId: `c${i}`, toolName: "bash", content: [{ type: "text", text: "out" }], isError: i === 0, timestamp: 0 } });
    parent = `r000000${i}`;
  });
  const folder = join(root, sessionDirFor(cwd));
  await mkdir(folder, { recursive: true });
  const file = join(folder, sessionFileName(start, id));
  await writeFile(file, lines.map((line) => JSON.stringify(line)).join("\n") + "\n");
  made.push({ id, cwd, file, prompt, day, calls });
}

beforeAll(async () => {
  dir = await mkdtemp(join(tmpdir(), "sk-cli-stats-"));
  root = join(dir, "agent");
  cliBundle = await bundleCli(dir);
  await writeSession("aaaa1111-0000-4000-8000-000000000001", "/work/shop", "2026-02-03", "fix the cart totals", [
    { model: "anthropic/opus", input: 1200, output: 300, dollars: 0.5 },
    { model: "anthropic/opus", input: 2500, output: 100, dollars: 0.75 },
  ]);
  await writeSession("aaaa1111-0000-4000-8000-000000000002", "/work/shop", "2026-02-04", "why is checkout slow", [{ model: "openai/gpt", input: 800, output: 50, dollars: 0.125 }]);
  await writeSession("bbbb3333-0000-4000-8000-000000000003", "/work/blog", "2026-02-04", "draft the release post", [
    { model: "anthropic/opus", input: 4000, output: 900, dollars: 2 },
    { model: "openai/gpt", input: 100, output: 10, dollars: 0.0625 },
  ]);
  await writeSession("cccc4444-0000-4000-8000-000000000004", RED_CWD, "2026-02-05", "colours", [{ model: "anthropic/\x1b]0;title\x07opus", input: 10, output: 10, dollars: 0.25 }]);
});

afterAll(async () => {
  await rm(dir, { recursive: true, force: true });
});

/** Terminal columns of text made of ASCII and Han characters (two columns each). */
const columns = (text: string) => [...text].reduce((sum, char) => sum + (/\p{Script=Han}/u.test(char) ? 2 : 1), 0);

const absolute = <T extends { key: string }>(rows: T[]) => rows.map((row) => ({ ...row, key: join(root, ...row.key.split("/")) }));

describe("sessionkit stats", () => {
  it("--all --json: the API's tables, each dollar and token as the test adds them up; the cache outside the store", async () => {
    const result = await sk("stats", "--all", "--json");
    expect(result.code).toBe(0);
    expect(result.stderr).toBe("");
    const printed = JSON.parse(result.stdout);
    const storage = nodeFsStorage({ root });
    const api = summarizeUsage(
      (await readSessionUsage(storage, await SessionManager.listAll(storage, { catalog: false }), { cache: false })).map((session) => ({ ...session, agent: "pi" })),
      { timeZone: "utc" },
    );
    await storage.close();
    expect(printed).toEqual(JSON.parse(JSON.stringify({ ...api, bySession: absolute(api.bySession) })));

    const calls = made.flatMap((session) => session.calls.map((call) => ({ ...call, session })));
    const sum = (list: typeof calls, of: (call: Call) => number) => list.reduce((n, call) => n + of(call), 0);
    expect(printed.sessions).toBe(4);
    expect(printed.usage.cost.total).toBe(sum(calls, (call) => call.dollars));
    expect(printed.usage.tokens.input).toBe(sum(calls, (call) => call.input));
    const row = (table: Array<{ key: string; usage: { cost: { total: number }; tokens: { output: number } }; sessions: number }>, key: string) => table.find((r) => r.key === key)!;
    for (const day of ["2026-02-03", "2026-02-04", "2026-02-05"]) {
      const ofDay = calls.filter((call) => call.session.day === day);
      expect(row(printed.byDay, day).usage.cost.total).toBe(sum(ofDay, (call) => call.dollars));
      expect(row(printed.byDay, day).sessions).toBe(new Set(ofDay.map((call) => call.session.id)).size);
    }
    expect(printed.byDay.map((r: { key: string }) => r.key)).toEqual(["2026-02-03", "2026-02-04", "2026-02-05"]);
    expect(row(printed.byModel, "anthropic/opus").usage.tokens.output).toBe(300 + 100 + 900);
    expect(row(printed.byProject, "/work/shop").usage.cost.total).toBe(0.5 + 0.75 + 0.125);
    expect(printed.byAgent).toEqual([expect.objectContaining({ key: "pi", sessions: 4, assistantMessages: calls.length })]);
    expect(printed.bySession[0].key).toBe(made[2]!.file); // the costliest first

    // The cache lives in the cache folder (the runner's XDG_CACHE_HOME), never in the store.
    expect(await readdir(root)).toEqual(["sessions"]);
    const stores = await readdir(join(dir, "cache", "sessionkit", "stores"));
    expect(await readdir(join(dir, "cache", "sessionkit", "stores", stores[0]!))).toEqual(expect.arrayContaining(["catalog", "insights"]));
  });

  it("a session by file or id prefix: its turns and tools, as sessionInsights returns them", async () => {
    const session = made[0]!;
    const storage = nodeFsStorage({ root });
    const sm = await SessionManager.open(storage, session.file.slice(root.length + 1), { readOnly: true });
    const api = sessionInsights(sm.getHeader()!, sm.getEntries(), sm.getLeafId());
    await sm.close();
    await storage.close();
    const expected = JSON.parse(JSON.stringify({ file: session.file, agent: "pi", store: root, ...api }));
    const byFile = await sk("stats", session.file, "--json");
    expect(byFile.code).toBe(0);
    expect(JSON.parse(byFile.stdout)).toEqual(expected);
    expect(JSON.parse((await sk("stats", session.id, "--json")).stdout)).toEqual(expected);
    expect(JSON.parse((await sk("stats", made[2]!.id.slice(0, 8), "--json")).stdout)).toMatchObject({ id: made[2]!.id, file: made[2]!.file });
    expect(api.turns).toHaveLength(1);
    expect(api.turns[0]!.usage.cost.total).toBe(0.5 + 0.75);
    expect(api.turns[0]!.context).toBe(2500);
    expect(api.tools).toEqual([{ name: "bash", calls: 2, results: 2, errors: 1, timedResults: 2, durationMs: 2000, maxDurationMs: 1000, outputBytes: 6 }]);

    const text = await sk("stats", session.id);
    expect(text.stdout).toContain(`session  ${session.id}`);
    expect(text.stdout).toMatch(/\n {3}1 {2}2026-02-03 10:00 .* \$1\.250 .*fix the cart totals\n/);
    expect(text.stdout).toMatch(/\nbash +2 +2 +1 +2\.0 s +1\.0 s +1\.0 s +6 B\n/);
    expect(text.stdout).toContain("· 1 turn to leaf r0000001\n");
  });

  it("anything else is a query: the sessions whose name, first message, dir or id hold every word; without --all, one project's", async () => {
    const shop = JSON.parse((await sk("stats", "--cwd", "/work/shop", "--json")).stdout);
    expect(shop.sessions).toBe(2);
    expect(shop.usage.cost.total).toBe(0.5 + 0.75 + 0.125);
    const query = JSON.parse((await sk("stats", "checkout", "slow", "--all", "--json")).stdout);
    expect(query.bySession.map((r: { id: string }) => r.id)).toEqual([made[1]!.id]);
    // "bbbb" is shorter than an id prefix: a word of the query (ids match too).
    expect(JSON.parse((await sk("stats", "bbbb", "--all", "--json")).stdout).bySession.map((r: { id: string }) => r.id)).toEqual([made[2]!.id]);
    // An id prefix of two sessions is a query as well.
    expect(JSON.parse((await sk("stats", "aaaa1111", "--all", "--json")).stdout).bySession.map((r: { id: string }) => r.id).sort()).toEqual([made[0]!.id, made[1]!.id]);
    expect(JSON.parse((await sk("stats", "nothing-matches-this", "--all", "--json")).stdout)).toMatchObject({ sessions: 0, byDay: [] });
  });

  it("text tables: one per --by, control characters of a dir or a model made visible", async () => {
    const all = await sk("stats", "--all");
    expect(all.code).toBe(0);
    expect(all.stdout).toMatch(/^4 sessions of all projects · 6 assistant messages · ↑8\.6k ↓1\.4k R0 W0 · \$3\.688\n/);
    for (const title of ["DAY", "MODEL", "PROJECT", "AGENT", "SESSION"]) expect(all.stdout).toMatch(new RegExp(`\\n${title} +SESSIONS|\\n${title} +CALLS`));
    expect(all.stdout).not.toMatch(/[\x1b\x07]/);
    expect(all.stdout).toContain("/work/红色\\x1b[31mred");
    // Columns line up by terminal columns (a Han character takes two): every row of a table is as wide.
    const projectTable = all.stdout.slice(all.stdout.indexOf("\nPROJECT ") + 1).split("\n\n")[0]!.split("\n");
    expect(projectTable).toHaveLength(4);
    expect(new Set(projectTable.map(columns)).size).toBe(1);
    expect(all.stdout).toContain("anthropic/\\x1b]0;title\\x07opus");
    const byModel = await sk("stats", "--all", "--by", "model");
    expect(byModel.stdout.split("\n").filter((line) => /^(DAY|MODEL|PROJECT|AGENT|SESSION) /.test(line))).toEqual([expect.stringMatching(/^MODEL +SESSIONS +CALLS +INPUT +OUTPUT +CACHE R +CACHE W +COST +TOKENS$/)]);
    expect(byModel.stdout).toMatch(/\nanthropic\/opus +2 +3 +7\.7k +1\.3k +0 +0 +\$3\.250 +9\.0k\n/);
    const oneProject = await sk("stats", "--cwd", "/work/blog");
    expect(oneProject.stdout).toContain("--all reads every project");
  });

  it("usage errors are one line", async () => {
    for (const args of [["stats", "--all", "--cwd", "/a"], ["stats", "--by", "week"], ["stats", "--limit", "3"], ["stats", ""]]) {
      const result = await sk(...args);
      expect(result.code, args.join(" ")).toBe(2);
      expect(result.stderr.trim().split("\n"), args.join(" ")).toHaveLength(1);
    }
    const missing = await sk("stats", "/no/such/session.jsonl");
    expect(missing.code).toBe(1);
  });
});
