/**
 * `sessionkit stats`: where tokens and money went. For one session its turns and tools
 * (src/insights/session-insights.ts); for the sessions of a project, or of all, narrowed by a
 * query as the viewer's list is, cost and tokens by day, model, project, agent and session
 * (src/insights/store-insights.ts, whose per-file figures live in the store's cache).
 */
import { formatDollars, formatDuration } from "../src/insights/format.js";
import nodePath from "node:path";
import { sessionInsights, type SessionInsights, type ToolInsight, type TurnInsight } from "../src/insights/session-insights.js";
import { matchesQuery, readSessionUsage, summarizeUsage, type SessionRow, type SessionUsage, type UsageRow, type UsageSummary } from "../src/insights/store-insights.js";
import { totalTokens, type Usage } from "../src/insights/usage.js";
import { SessionManager } from "../src/session/session-manager.js";
import type { StatsArgs } from "./commands/stats.js";
import type { StatsTable } from "./command.js";
import { CliError } from "./errors.js";
import { listingProgress, type Progress } from "./progress.js";
import { oneLine } from "./render.js";
import { lookupContext, type Run } from "./run.js";
import { openReadOnly, resolveSessionArgument, type SessionFileRef } from "./session-argument.js";
import { statOrNull, storeFileOf, storeStorage } from "./store.js";
import { neutralizeControls } from "./terminal-text.js";
import { displayWidth, padToWidth } from "./text-width.js";

/** Characters of an id argument below which it is taken as a query word, not an id prefix. */
const ID_PREFIX_MIN = 8;
/** Sessions the text output lists when every table is shown. */
const TOP_SESSIONS = 10;

export async function statsCommand(run: Run<StatsArgs>): Promise<number> {
  const target = run.args.target.trim();
  const ref = target === "" ? null : await sessionTarget(run, target);
  if (ref) await sessionStats(run, ref);
  else await storeStats(run, target);
  return 0;
}

/**
 * The argument as a session: a file (an existing one, or anything that reads as a path), or an
 * id, or an id prefix of at least ID_PREFIX_MIN characters that names one session. Anything else
 * (null) is a query: a short hex word such as "add" would otherwise name a session by chance.
 */
async function sessionTarget(run: Run<StatsArgs>, target: string): Promise<SessionFileRef | null> {
  const pathLike = target.includes("/") || target.includes(nodePath.sep) || target.endsWith(".jsonl");
  if (pathLike || (await statOrNull(nodePath.resolve(run.io.cwd, target)))) return resolveSessionArgument(target, await lookupContext(run));
  if (target.length < ID_PREFIX_MIN || !/^[0-9a-f-]+$/i.test(target)) return null;
  try {
    return await resolveSessionArgument(target, await lookupContext(run));
  } catch (error) {
    // No session, or several, with that id prefix: the word is a query.
    if (error instanceof CliError && (error.kind === "not-found" || error.kind === "usage")) return null;
    throw error;
  }
}

async function sessionStats(run: Run<StatsArgs>, ref: SessionFileRef): Promise<void> {
  const sm = await openReadOnly(ref, run.warn);
  const insights = sessionInsights(sm.getHeader()!, sm.getEntries(), sm.getLeafId());
  const where = ref.store ? { agent: ref.store.agent, store: ref.store.root } : {};
  run.print({ file: ref.absolute, ...where, ...insights }, () => renderSessionInsights(ref.absolute, insights));
}

/** No progress lines for a --json reader on a pipe (as search). */
function progressFor(run: Run<StatsArgs>, label: string): Progress {
  return run.args.json && !run.io.stderr.isTTY ? { onProgress() {}, done() {} } : listingProgress(run.io.stderr, label);
}

async function storeStats(run: Run<StatsArgs>, query: string): Promise<void> {
  const stores = await run.stores();
  const cwd = nodePath.resolve(run.io.cwd, run.args.cwd ?? ".");
  const sessions: Array<SessionUsage & { agent: string }> = [];
  for (const store of stores) {
    // Read through the cache: the catalog and the usage are written there, never into the agent's folder.
    const storage = await storeStorage(store, run.io.env, run.home);
    const label = stores.length > 1 ? `sessionkit: stats: ${store.label}` : "sessionkit: stats";
    const listing = progressFor(run, label);
    const reading = progressFor(run, label);
    try {
      const infos = run.args.all ? await SessionManager.listAll(storage, { onProgress: listing.onProgress }) : await SessionManager.list(storage, cwd, { onProgress: listing.onProgress, layout: store.layout });
      listing.done();
      const chosen = infos.filter((info) => matchesQuery(info, query));
      for (const usage of await readSessionUsage(storage, chosen, { onProgress: reading.onProgress })) {
        sessions.push({ ...usage, info: { ...usage.info, path: storeFileOf(store, usage.info.path) }, agent: store.agent });
      }
    } finally {
      listing.done();
      reading.done();
      await storage.close();
    }
  }
  const summary = summarizeUsage(sessions);
  const scope = `${run.args.all ? "all projects" : cwd}${query ? ` matching ${JSON.stringify(query)}` : ""}`;
  run.print(summary, () => renderSummary(summary, scope, run.args.by, !run.args.all));
}

// --- text ------------------------------------------------------------------------------------

/** A table: columns as wide as their widest cell (in terminal columns), numbers to the right. */
function table(header: readonly string[], rows: readonly string[][], numeric: readonly boolean[]): string[] {
  const cells = rows.map((row) => row.map((cell) => neutralizeControls(cell)));
  const widths = header.map((title, column) => Math.max(displayWidth(title), ...cells.map((row) => displayWidth(row[column]!))));
  const line = (row: readonly string[]) =>
    row
      .map((cell, column) => (column === row.length - 1 && !numeric[column] ? cell : padToWidth(cell, widths[column]!, numeric[column] ? "start" : "end")))
      .join("  ");
  return [line(header), ...cells.map(line)];
}

const integer = (n: number) => n.toLocaleString("en-US");
/** pi's token figures, as the viewer shows them: 950, 1.2k, 45k, 1.3M. */
function tokens(count: number): string {
  if (count < 1000) return String(count);
  if (count < 10_000) return `${(count / 1000).toFixed(1)}k`;
  if (count < 1_000_000) return `${Math.round(count / 1000)}k`;
  return `${(count / 1_000_000).toFixed(1)}M`;
}
function bytes(count: number): string {
  if (count < 1000) return `${count} B`;
  if (count < 1e6) return `${(count / 1e3).toFixed(1)} KB`;
  return `${(count / 1e6).toFixed(1)} MB`;
}

function localTime(iso: string | undefined): string {
  const date = iso === undefined ? new Date(Number.NaN) : new Date(iso);
  if (Number.isNaN(date.getTime())) return "";
  const pad = (n: number) => String(n).padStart(2, "0");
  return `${date.getFullYear()}-${pad(date.getMonth() + 1)}-${pad(date.getDate())} ${pad(date.getHours())}:${pad(date.getMinutes())}`;
}

/** "↑12k ↓3.4k R1.2M W40k · $1.234", as the viewer's header writes tokens and cost. */
function usageLine(usage: Usage): string {
  const { input, output, cacheRead, cacheWrite } = usage.tokens;
  return `↑${tokens(input)} ↓${tokens(output)} R${tokens(cacheRead)} W${tokens(cacheWrite)} · ${formatDollars(usage.cost.total)}`;
}

const usageCells = (usage: Usage) => [tokens(usage.tokens.input), tokens(usage.tokens.output), tokens(usage.tokens.cacheRead), tokens(usage.tokens.cacheWrite), formatDollars(usage.cost.total)];
const USAGE_HEADER = ["INPUT", "OUTPUT", "CACHE R", "CACHE W", "COST"];

function turnRow(turn: TurnInsight): string[] {
  const compacted = turn.compactions.map((c) => tokens(c.tokensBefore)).join(", ");
  return [
    String(turn.turn),
    localTime(turn.timestamp),
    formatDuration(turn.durationMs),
    String(turn.assistantMessages),
    String(turn.toolCalls),
    turn.toolErrors ? String(turn.toolErrors) : "",
    ...usageCells(turn.usage),
    turn.context === null ? "" : tokens(turn.context),
    compacted,
    oneLine(turn.prompt, 60),
  ];
}

function toolRow(tool: ToolInsight): string[] {
  const mean = tool.timedResults > 0 ? tool.durationMs / tool.timedResults : null;
  return [tool.name, integer(tool.calls), integer(tool.results), tool.errors ? integer(tool.errors) : "", formatDuration(tool.timedResults ? tool.durationMs : null), formatDuration(mean), formatDuration(tool.timedResults ? tool.maxDurationMs : null), bytes(tool.outputBytes)];
}

function renderSessionInsights(file: string, insights: SessionInsights): string[] {
  const { totals } = insights;
  const lines = [
    `session  ${insights.id}`,
    `file     ${file}`,
    `total    ${usageLine(totals.usage)} · ${totals.assistantMessages} assistant messages · ${totals.toolCalls} tool calls${totals.toolErrors ? ` (${totals.toolErrors} failed)` : ""} · every branch`,
    `path     ${usageLine(insights.pathUsage)} · ${insights.turns.length} turn${insights.turns.length === 1 ? "" : "s"} to leaf ${insights.leafId ?? "(none)"}`,
    `models   ${totals.models.join(", ") || "unknown"}`,
    "",
  ];
  if (insights.turns.length === 0) lines.push("no turns: the session has no user message");
  else {
    const numeric = [true, false, true, true, true, true, true, true, true, true, true, true, true, false];
    lines.push(...table(["TURN", "STARTED", "TIME", "CALLS", "TOOLS", "ERRORS", ...USAGE_HEADER, "CONTEXT", "COMPACTED", "PROMPT"], insights.turns.map(turnRow), numeric));
  }
  lines.push("");
  if (insights.tools.length === 0) lines.push("no tool calls");
  else lines.push(...table(["TOOL", "CALLS", "RESULTS", "ERRORS", "TIME", "MEAN", "MAX", "OUTPUT"], insights.tools.map(toolRow), [false, true, true, true, true, true, true, true]));
  return lines;
}

const TABLE_TITLES: Record<StatsTable, string> = { day: "DAY", model: "MODEL", project: "PROJECT", agent: "AGENT", session: "SESSION" };

/** A table of rows; a session's row has no SESSIONS column (it is one). */
function usageTable(title: string, rows: readonly UsageRow[], label?: (row: UsageRow) => string): string[] {
  const sessions = label === undefined;
  const cells = rows.map((row) => [label ? label(row) : row.key, ...(sessions ? [integer(row.sessions)] : []), integer(row.assistantMessages), ...usageCells(row.usage), tokens(totalTokens(row.usage))]);
  const header = [title, ...(sessions ? ["SESSIONS"] : []), "CALLS", ...USAGE_HEADER, "TOKENS"];
  return table(header, cells, header.map((_, column) => column > 0));
}

function renderSummary(summary: UsageSummary, scope: string, by: StatsTable | undefined, oneProject: boolean): string[] {
  const lines = [`${summary.sessions} session${summary.sessions === 1 ? "" : "s"} of ${scope} · ${summary.assistantMessages} assistant messages · ${usageLine(summary.usage)}`];
  if (oneProject) lines.push("the sessions of one project dir: --all reads every project");
  if (summary.assistantMessages === 0) return lines;
  const sessionLabel = (row: UsageRow) => {
    const session = row as SessionRow;
    return `${session.id.slice(0, 8)} ${oneLine(session.label, 40)}`;
  };
  const tables: Record<StatsTable, () => string[]> = {
    day: () => usageTable(TABLE_TITLES.day, summary.byDay),
    model: () => usageTable(TABLE_TITLES.model, summary.byModel),
    project: () => usageTable(TABLE_TITLES.project, summary.byProject),
    agent: () => usageTable(TABLE_TITLES.agent, summary.byAgent),
    session: () => usageTable(TABLE_TITLES.session, by === "session" ? summary.bySession : summary.bySession.slice(0, TOP_SESSIONS), sessionLabel),
  };
  for (const name of by ? [by] : (Object.keys(tables) as StatsTable[])) {
    lines.push("", ...tables[name]());
    if (name === "session" && !by && summary.bySession.length > TOP_SESSIONS) lines.push(`… ${summary.bySession.length - TOP_SESSIONS} more (--by session lists them all)`);
  }
  return lines;
}
