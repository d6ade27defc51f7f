/**
 * The insights view, over the app's session pane: for the open session, tokens and cost per turn
 * on the viewed branch, the context per turn with its compactions, and its tools; for the listed
 * sessions (narrowed as the list is: words, store, project), cost and tokens per day, by model, by
 * project, by agent and by session. Figures come from the core (src/insights): a session's totals
 * are the header's own numbers, added up by the same function.
 */
import { formatDollars, formatDuration } from "../../../src/insights/format.js";
import { sessionInsights, type SessionInsights, type ToolInsight, type TurnInsight } from "../../../src/insights/session-insights.js";
import { matchesQuery, readSessionUsage, summarizeUsage, type SessionUsage, type UsageRow, type UsageSummary } from "../../../src/insights/store-insights.js";
import { totalTokens, type Usage } from "../../../src/insights/usage.js";
import { append, el, formatBytes, formatTime, formatTokens, preview, type Child } from "../render/dom.js";
import { contextChart, daysChart, turnTokensChart, type DayPoint, type TurnPoint } from "./charts.js";
import { closeInsights, insightsHash, type InsightsHost, type InsightsLink } from "./link.js";
import "./insights.css";

/** Tokens as the session header writes them: ↑input ↓output Rcache-read Wcache-write, zeros left out. */
function headerTokens(usage: Usage): string {
  const { input, output, cacheRead, cacheWrite } = usage.tokens;
  return [input && `↑${formatTokens(input)}`, output && `↓${formatTokens(output)}`, cacheRead && `R${formatTokens(cacheRead)}`, cacheWrite && `W${formatTokens(cacheWrite)}`].filter(Boolean).join(" ") || "0";
}
const figure = (name: string, label: string, value: string) => el("div", { class: "info-item", "data-field": name }, el("span", { class: "info-label" }, `${label}:`), el("span", { class: "info-value" }, value));

interface Column<T> {
  title: string;
  cell: (row: T) => Child;
  numeric?: boolean;
}

function table<T>(id: string, caption: string, columns: readonly Column<T>[], rows: readonly T[]): HTMLElement {
  return el(
    "div",
    { class: "table-wrap" },
    el(
      "table",
      { class: "insights-table", id },
      el("caption", {}, caption),
      el("thead", {}, el("tr", {}, ...columns.map((c) => el("th", { scope: "col", class: c.numeric ? "num" : undefined }, c.title)))),
      el("tbody", {}, ...rows.map((row) => el("tr", {}, ...columns.map((c) => el("td", { class: c.numeric ? "num" : undefined }, c.cell(row)))))),
    ),
  );
}

const usageColumns = <T>(usage: (row: T) => Usage): Column<T>[] => [
  { title: "Input", numeric: true, cell: (r) => formatTokens(usage(r).tokens.input) },
  { title: "Output", numeric: true, cell: (r) => formatTokens(usage(r).tokens.output) },
  { title: "Cache read", numeric: true, cell: (r) => formatTokens(usage(r).tokens.cacheRead) },
  { title: "Cache write", numeric: true, cell: (r) => formatTokens(usage(r).tokens.cacheWrite) },
  { title: "Cost", numeric: true, cell: (r) => formatDollars(usage(r).cost.total) },
];

/** Shows the view for `link` over the host's pane (replacing an insights view already there). */
export async function showInsights(link: InsightsLink, host: InsightsHost): Promise<void> {
  closeInsights(host.pane);
  const current = host.current();
  const tab = (scope: InsightsLink["scope"], label: string, enabled: boolean) =>
    el(
      "button",
      { type: "button", class: scope === link.scope ? "header-btn on" : "header-btn", "aria-pressed": String(scope === link.scope), "data-scope": scope, disabled: enabled ? undefined : "" },
      label,
    );
  const close = el("button", { type: "button", class: "header-btn", id: "insights-close", title: "Back to the session (Esc)" }, "✕ Close");
  const tabs = el("div", { class: "insights-tabs", role: "group", "aria-label": "Insights of" }, tab("session", "This session", current !== null), tab("store", "All listed sessions", true));
  const body = el("div", { class: "insights-body" });
  const heading = el("h2", { tabindex: "-1" }, "Insights");
  const panel = el("section", { class: "insights-panel", id: "insights", "aria-label": "Insights", "data-scope": link.scope }, el("div", { class: "insights-bar" }, heading, tabs, close), body);
  tabs.addEventListener("click", (event) => {
    const scope = (event.target as Element).closest<HTMLElement>("[data-scope]")?.dataset.scope;
    if (scope !== "session" && scope !== "store") return;
    const session = host.current();
    location.hash = insightsHash(scope === "session" && session ? { scope, store: session.storeId, path: session.path, leafId: session.leafId } : { scope: "store", store: null, path: null, leafId: null });
  });
  close.addEventListener("click", () => host.close());
  panel.addEventListener("keydown", (event) => {
    if (event.key === "Escape") {
      event.stopPropagation();
      host.close();
    }
  });
  host.pane.append(panel);
  if (link.scope === "session") {
    if (!current) body.append(el("p", { class: "empty" }, "No session is open."));
    else renderSession(body, current.session.model.sessionName() ?? `Session: ${current.session.model.header.id}`, sessionInsights(current.session.model.header, current.session.model.allEntries(), link.leafId ?? current.leafId));
  } else await renderStore(body, host);
  // Keys go to the view (Esc closes it); the reader starts at its top.
  heading.focus({ preventScroll: true });
}

function turnPoint(turn: TurnInsight): TurnPoint {
  const { tokens, cost } = turn.usage;
  return { turn: turn.turn, ...tokens, cost: cost.total, context: turn.context, compactions: turn.compactions.map((c) => c.tokensBefore) };
}

function renderSession(body: HTMLElement, title: string, insights: SessionInsights): void {
  const { totals, turns, tools } = insights;
  const compactions = turns.reduce((n, t) => n + t.compactions.length, 0);
  const peak = Math.max(0, ...turns.map((t) => t.peakContext ?? 0));
  body.append(
    el("h3", { class: "insights-title" }, title),
    el(
      "div",
      { class: "header-info insights-figures", id: "insights-totals" },
      figure("tokens", "Tokens", headerTokens(totals.usage)),
      figure("cost", "Cost", formatDollars(totals.usage.cost.total)),
      figure("tool-calls", "Tool calls", String(totals.toolCalls)),
      figure("tool-errors", "Failed", String(totals.toolErrors)),
      figure("turns", "Turns on this branch", String(turns.filter((t) => t.turn > 0).length)),
      figure("branch-cost", "Cost of this branch", formatDollars(insights.pathUsage.cost.total)),
      figure("peak-context", "Largest context", formatTokens(peak)),
      figure("compactions", "Compactions", String(compactions)),
    ),
    el("p", { class: "muted insights-note" }, "Totals count every branch, as the header does; turns follow the branch being viewed."),
  );
  if (turns.length > 0) {
    const points = turns.map(turnPoint);
    body.append(el("div", { class: "insights-charts" }, turnTokensChart(points), contextChart(points)));
    // The figures first, the prompt (the widest) last.
    const [input, output, cacheRead, cacheWrite, cost] = usageColumns<TurnInsight>((t) => t.usage) as [Column<TurnInsight>, Column<TurnInsight>, Column<TurnInsight>, Column<TurnInsight>, Column<TurnInsight>];
    const turnColumns: Column<TurnInsight>[] = [
      { title: "Turn", numeric: true, cell: (t) => String(t.turn) },
      { title: "Started", cell: (t) => formatTime(t.timestamp) },
      { title: "Time", numeric: true, cell: (t) => formatDuration(t.durationMs) },
      cost,
      { title: "Context", numeric: true, cell: (t) => (t.context === null ? "" : formatTokens(t.context)) },
      { title: "Compacted", numeric: true, cell: (t) => t.compactions.map((c) => formatTokens(c.tokensBefore)).join(", ") },
      { title: "Calls", numeric: true, cell: (t) => String(t.assistantMessages) },
      { title: "Tools", numeric: true, cell: (t) => String(t.toolCalls) },
      { title: "Failed", numeric: true, cell: (t) => (t.toolErrors ? String(t.toolErrors) : "") },
      input,
      output,
      cacheRead,
      cacheWrite,
      { title: "Prompt", cell: (t) => el("span", { class: "prompt", title: t.prompt }, preview(t.prompt, 80)) },
    ];
    body.append(table("insights-turns", "Turns (the user's message and what followed, on this branch)", turnColumns, turns));
  } else body.append(el("p", { class: "empty" }, "No turns: the branch has no user message."));
  const toolColumns: Column<ToolInsight>[] = [
    { title: "Tool", cell: (t) => el("code", {}, t.name) },
    { title: "Calls", numeric: true, cell: (t) => String(t.calls) },
    { title: "Results", numeric: true, cell: (t) => String(t.results) },
    { title: "Failed", numeric: true, cell: (t) => (t.errors ? String(t.errors) : "") },
    { title: "Time", numeric: true, cell: (t) => formatDuration(t.timedResults ? t.durationMs : null) },
    { title: "Mean", numeric: true, cell: (t) => formatDuration(t.timedResults ? t.durationMs / t.timedResults : null) },
    { title: "Longest", numeric: true, cell: (t) => formatDuration(t.timedResults ? t.maxDurationMs : null) },
    { title: "Output", numeric: true, cell: (t) => formatBytes(t.outputBytes) },
  ];
  body.append(
    tools.length > 0
      ? table("insights-tools", "Tools (every branch; time: from the entry before each result)", toolColumns, tools)
      : el("p", { class: "empty" }, "No tool calls."),
  );
}

/** A session of the view: its usage, the store it is in and its agent (the store's, else the store's label). */
type StoreSession = SessionUsage & { agent: string; storeId: string; key: string };

const sessionKey = (storeId: string, path: string) => `${storeId}\n${path}`;

async function renderStore(body: HTMLElement, host: InsightsHost): Promise<void> {
  const { source } = host;
  const filter = el("input", { type: "search", id: "insights-filter", placeholder: "Filter sessions…", "aria-label": "Filter sessions (as the list)", autocomplete: "off" });
  const storeSelect = el("select", { id: "insights-store", "aria-label": "Store" }, el("option", { value: "" }, `All ${source.stores.length} stores`), ...source.stores.map((store) => el("option", { value: store.id }, store.label)));
  storeSelect.hidden = source.stores.length < 2;
  const projectSelect = el("select", { id: "insights-project", "aria-label": "Project" });
  const status = el("p", { class: "muted", id: "insights-status", "aria-live": "polite" }, "Reading sessions…");
  const results = el("div", { class: "insights-results" });
  body.append(el("div", { class: "insights-filters" }, filter, storeSelect, projectSelect), status, results);

  const sessions: StoreSession[] = [];
  const byStore = new Map<string, typeof host.sessions[number][]>();
  for (const listed of host.sessions) {
    const list = byStore.get(listed.storeId);
    if (list) list.push(listed);
    else byStore.set(listed.storeId, [listed]);
  }
  let done = 0;
  for (const store of source.stores) {
    const listed = byStore.get(store.id) ?? [];
    const usages = await readSessionUsage(store.storage, listed, { onProgress: (n) => (status.textContent = `Reading sessions: ${done + n} of ${host.sessions.length}…`) });
    done += listed.length;
    for (const usage of usages) sessions.push({ ...usage, agent: store.agent ?? store.label, storeId: store.id, key: sessionKey(store.id, usage.info.path) });
  }
  const byKey = new Map(sessions.map((session) => [session.key, session]));

  const projects = () => {
    const counts = new Map<string, number>();
    for (const s of sessions) if (storeSelect.value === "" || s.storeId === storeSelect.value) counts.set(s.info.cwd, (counts.get(s.info.cwd) ?? 0) + 1);
    const chosen = projectSelect.value;
    projectSelect.replaceChildren(
      el("option", { value: "" }, `All ${counts.size} projects`),
      ...[...counts].sort((a, b) => b[1] - a[1]).map(([cwd, n]) => el("option", { value: cwd }, `${cwd || "(no dir)"} (${n})`)),
    );
    projectSelect.value = counts.has(chosen) ? chosen : "";
  };
  const render = () => {
    const chosen = sessions.filter((s) => (storeSelect.value === "" || s.storeId === storeSelect.value) && (projectSelect.value === "" || s.info.cwd === projectSelect.value) && matchesQuery(s.info, filter.value));
    // Paths are unique within a store only: a session is keyed by both in the tables.
    const summary = summarizeUsage(chosen.map((s) => ({ ...s, info: { ...s.info, path: s.key } })));
    status.textContent = `${chosen.length} of ${sessions.length} sessions`;
    results.replaceChildren();
    append(results, ...storeResults(summary, byKey));
  };
  projects();
  render();
  filter.addEventListener("input", render);
  storeSelect.addEventListener("change", () => {
    projects();
    render();
  });
  projectSelect.addEventListener("change", render);
}

const DAY_SECONDS = 86_400;
/** Days drawn one by one, empty ones too, up to this span; a longer one draws the days that have usage. */
const FILLED_DAYS = 400;

function dayPoints(rows: readonly UsageRow[]): DayPoint[] {
  const dated = rows.filter((row) => /^\d{4}-\d{2}-\d{2}$/.test(row.key));
  const midnight = (key: string) => {
    const [y, m, d] = key.split("-").map(Number) as [number, number, number];
    return new Date(y, m - 1, d).getTime() / 1000;
  };
  const points = new Map(dated.map((row) => [midnight(row.key), { time: midnight(row.key), cost: row.usage.cost.total, tokens: totalTokens(row.usage) }]));
  const times = [...points.keys()].sort((a, b) => a - b);
  if (times.length < 2 || (times.at(-1)! - times[0]!) / DAY_SECONDS > FILLED_DAYS) return times.map((t) => points.get(t)!);
  const filled: DayPoint[] = [];
  // Local midnights step by 23 to 25 hours across daylight-saving changes: step by calendar day.
  for (let day = new Date(times[0]! * 1000); day.getTime() / 1000 <= times.at(-1)!; day.setDate(day.getDate() + 1)) {
    const time = day.getTime() / 1000;
    filled.push(points.get(time) ?? { time, cost: 0, tokens: 0 });
  }
  return filled;
}

function storeResults(summary: UsageSummary, sessions: ReadonlyMap<string, StoreSession>): Child[] {
  const figures = el(
    "div",
    { class: "header-info insights-figures", id: "insights-totals" },
    figure("sessions", "Sessions", String(summary.sessions)),
    figure("calls", "Model calls", String(summary.assistantMessages)),
    figure("tokens", "Tokens", headerTokens(summary.usage)),
    figure("cost", "Cost", formatDollars(summary.usage.cost.total)),
  );
  if (summary.assistantMessages === 0) return [figures, el("p", { class: "empty" }, "No model calls in these sessions.")];
  const totalCost = summary.usage.cost.total;
  const allTokens = totalTokens(summary.usage);
  /** The row's share of the cost (of the tokens when nothing cost anything), as a bar. */
  const share = (row: UsageRow) => {
    const part = totalCost > 0 ? row.usage.cost.total / totalCost : allTokens > 0 ? totalTokens(row.usage) / allTokens : 0;
    const percent = `${(part * 100).toFixed(part < 0.1 ? 1 : 0)} %`;
    return el("span", { class: "share", title: percent }, el("meter", { min: "0", max: "1", value: String(part), "aria-label": percent }), el("span", { class: "share-text" }, percent));
  };
  // Cost first after the name: on a phone the table scrolls sideways.
  const rowColumns = (title: string, label: (row: UsageRow) => Child): Column<UsageRow>[] => [
    { title, cell: label },
    { title: "Cost", numeric: true, cell: (r) => formatDollars(r.usage.cost.total) },
    { title: "Tokens", numeric: true, cell: (r) => formatTokens(totalTokens(r.usage)) },
    { title: "Calls", numeric: true, cell: (r) => String(r.assistantMessages) },
    { title: "Sessions", numeric: true, cell: (r) => String(r.sessions) },
    { title: "Share", cell: share },
  ];
  const sessionLink = (row: UsageRow) => {
    const session = sessions.get(row.key)!;
    const button = el("button", { type: "button", class: "link-button", "data-store": session.storeId, "data-path": session.info.path, title: session.info.path }, preview(session.info.name ?? session.info.firstMessage, 70) || "(no messages)");
    button.addEventListener("click", () => (location.hash = insightsHash({ scope: "session", store: session.storeId, path: session.info.path, leafId: null })));
    return button;
  };
  const TOP = 25;
  return [
    figures,
    el("div", { class: "insights-charts" }, daysChart(dayPoints(summary.byDay))),
    el(
      "div",
      { class: "insights-tables" },
      table("insights-by-model", "By model", rowColumns("Model", (r) => el("code", {}, r.key)), summary.byModel),
      table("insights-by-project", "By project", rowColumns("Project", (r) => r.key), summary.byProject),
      table("insights-by-agent", "By agent", rowColumns("Agent", (r) => r.key), summary.byAgent),
      table("insights-by-day", "By day", rowColumns("Day", (r) => r.key), [...summary.byDay].reverse()),
    ),
    table(
      "insights-by-session",
      summary.bySession.length > TOP ? `The ${TOP} costliest sessions of ${summary.bySession.length}` : "By session",
      rowColumns("Session", sessionLink).filter((c) => c.title !== "Sessions"),
      summary.bySession.slice(0, TOP),
    ),
  ];
}
