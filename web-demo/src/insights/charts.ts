/**
 * The insights' charts, drawn by uPlot on a canvas: tokens and cost per turn, context per turn
 * with its compactions marked, cost and tokens per day. Each chart takes its colours from the
 * page's theme (CSS variables, insights.css) and is drawn again when the theme or its width
 * changes. The numbers are in the tables beside them too: the canvas has a text label only.
 */
import uPlot from "uplot";
import "uplot/dist/uPlot.min.css";
import { el, formatTokens } from "../render/dom.js";

const HEIGHT = 220;

interface Palette {
  text: string;
  grid: string;
  input: string;
  output: string;
  cacheRead: string;
  cacheWrite: string;
  cost: string;
  context: string;
  compaction: string;
}

function palette(): Palette {
  const style = getComputedStyle(document.documentElement);
  const value = (name: string) => style.getPropertyValue(name).trim();
  return {
    text: value("--muted"),
    grid: value("--border"),
    input: value("--chart-input"),
    output: value("--chart-output"),
    cacheRead: value("--chart-cache-read"),
    cacheWrite: value("--chart-cache-write"),
    cost: value("--chart-cost"),
    context: value("--chart-context"),
    compaction: value("--chart-compaction"),
  };
}

const dollars = (value: number) => `$${value < 0.1 && value > 0 ? value.toFixed(4) : value.toFixed(2)}`;

function axis(colors: Palette, extra: uPlot.Axis = {}): uPlot.Axis {
  return { stroke: colors.text, grid: { stroke: colors.grid, width: 1 }, ticks: { stroke: colors.grid, width: 1 }, font: "11px system-ui, sans-serif", ...extra };
}

/** Whole numbers only on an axis of turns. */
const turnTicks = (_u: uPlot, splits: number[]) => splits.map((v) => (Number.isInteger(v) ? String(v) : ""));

type Build = (width: number, colors: Palette) => { options: Omit<uPlot.Options, "width" | "height">; data: uPlot.AlignedData };

/**
 * A chart in a figure with a caption; drawn again on a theme change (the page's data-theme or the
 * system's scheme) and when its width changes; its observers go with it when the figure leaves
 * the page.
 */
function chart(id: string, caption: string, summary: string, build: Build): HTMLElement {
  const canvasBox = el("div", { class: "chart-canvas", role: "img", "aria-label": summary });
  const figure = el("figure", { class: "insights-chart", id }, el("figcaption", {}, caption), canvasBox);
  let plot: uPlot | null = null;
  let drawnWidth = 0;
  const draw = () => {
    const width = Math.floor(canvasBox.clientWidth);
    if (width <= 0) return;
    plot?.destroy();
    drawnWidth = width;
    const { options, data } = build(width, palette());
    plot = new uPlot({ ...options, width, height: HEIGHT }, data, canvasBox);
  };
  const resized = new ResizeObserver(() => {
    if (!figure.isConnected) return stop();
    if (Math.floor(canvasBox.clientWidth) !== drawnWidth) draw();
  });
  const themed = new MutationObserver(() => (figure.isConnected ? draw() : stop()));
  const scheme = window.matchMedia("(prefers-color-scheme: dark)");
  const onScheme = () => (figure.isConnected ? draw() : stop());
  function stop() {
    resized.disconnect();
    themed.disconnect();
    scheme.removeEventListener("change", onScheme);
    plot?.destroy();
    plot = null;
  }
  resized.observe(canvasBox);
  themed.observe(document.documentElement, { attributes: true, attributeFilter: ["data-theme"] });
  scheme.addEventListener("change", onScheme);
  return figure;
}

export interface TurnPoint {
  turn: number;
  input: number;
  output: number;
  cacheRead: number;
  cacheWrite: number;
  cost: number;
  context: number | null;
  compactions: number[];
}

/**
 * Tokens per turn as stacked bars (input, output, cache read, cache write: each bar drawn from 0
 * to its running sum, the tallest first, so the parts stack), and the turn's cost as a line on
 * its own axis.
 */
export function turnTokensChart(turns: readonly TurnPoint[]): HTMLElement {
  const x = turns.map((t) => t.turn);
  const parts = [turns.map((t) => t.input), turns.map((t) => t.output), turns.map((t) => t.cacheRead), turns.map((t) => t.cacheWrite)];
  const sums = parts.map((_, k) => turns.map((_, i) => parts.slice(0, k + 1).reduce((n, part) => n + part[i]!, 0)));
  const totalCost = turns.reduce((n, t) => n + t.cost, 0);
  return chart("chart-turn-tokens", "Tokens and cost per turn", `Tokens and cost of ${turns.length} turns, ${dollars(totalCost)} in all; the numbers are in the table of turns below.`, (_width, colors) => {
    const bars = uPlot.paths.bars!({ size: [0.7, 48] });
    const names = ["Input", "Output", "Cache read", "Cache write"];
    const fills = [colors.input, colors.output, colors.cacheRead, colors.cacheWrite];
    // Drawn tallest (the running sum of all four) first: each later bar covers the lower part.
    const order = [3, 2, 1, 0];
    return {
      options: {
        scales: { x: { time: false }, y: { range: (_u, _min, max) => [0, Math.max(1, max)] }, cost: { range: (_u, _min, max) => [0, max > 0 ? max : 1] } },
        axes: [axis(colors, { values: turnTicks }), axis(colors, { size: 52, values: (_u, splits) => splits.map((v) => formatTokens(v)) }), axis(colors, { scale: "cost", side: 1, size: 60, grid: { show: false }, values: (_u, splits) => splits.map(dollars) })],
        series: [
          { label: "Turn" },
          ...order.map((k) => ({ label: names[k]!, fill: fills[k]!, stroke: fills[k]!, width: 0, paths: bars, points: { show: false }, value: (_u: uPlot, _v: number | null, _s: number, i: number | null) => (i === null ? "" : formatTokens(parts[k]![i]!)) })),
          { label: "Cost", scale: "cost", stroke: colors.cost, width: 2, points: { show: true, size: 5, fill: colors.cost }, value: (_u, v) => (v === null ? "" : dollars(v)) },
        ],
      },
      data: [x, ...order.map((k) => sums[k]!), turns.map((t) => t.cost)],
    };
  });
}

/** What each turn's last call was sent, with a dashed line at each turn that compacted the context. */
export function contextChart(turns: readonly TurnPoint[]): HTMLElement {
  const x = turns.map((t) => t.turn);
  const compacted = turns.filter((t) => t.compactions.length > 0);
  const peak = Math.max(0, ...turns.map((t) => t.context ?? 0));
  const summary = `Context per turn, at most ${formatTokens(peak)} tokens; ${compacted.length === 0 ? "no compaction" : `compacted in turn ${compacted.map((t) => t.turn).join(", ")}`}.`;
  return chart("chart-context", "Context per turn (what the model was sent) · dashed: compacted", summary, (_width, colors) => ({
    options: {
      scales: { x: { time: false }, y: { range: (_u, _min, max) => [0, Math.max(1, max) * 1.08] } },
      axes: [axis(colors, { values: turnTicks }), axis(colors, { size: 52, values: (_u, splits) => splits.map((v) => formatTokens(v)) })],
      series: [
        { label: "Turn" },
        { label: "Context", stroke: colors.context, width: 2, spanGaps: true, points: { show: true, size: 5, fill: colors.context }, value: (_u, v) => (v === null ? "" : formatTokens(v)) },
      ],
      hooks: {
        draw: [
          (u) => {
            const { ctx } = u;
            const top = u.bbox.top;
            const bottom = u.bbox.top + u.bbox.height;
            ctx.save();
            ctx.strokeStyle = colors.compaction;
            ctx.fillStyle = colors.compaction;
            ctx.lineWidth = 2 * uPlot.pxRatio;
            ctx.setLineDash([5 * uPlot.pxRatio, 4 * uPlot.pxRatio]);
            ctx.font = `${11 * uPlot.pxRatio}px system-ui, sans-serif`;
            for (const turn of compacted) {
              const at = Math.round(u.valToPos(turn.turn, "x", true));
              ctx.beginPath();
              ctx.moveTo(at, top);
              ctx.lineTo(at, bottom);
              ctx.stroke();
              // The label left of the line, unless there is no room for it there.
              const label = `compacted ${formatTokens(turn.compactions[0]!)}`;
              const gap = 4 * uPlot.pxRatio;
              const leftOfLine = at - u.bbox.left > ctx.measureText(label).width + 2 * gap;
              ctx.textAlign = leftOfLine ? "right" : "left";
              ctx.textBaseline = "top";
              ctx.fillText(label, leftOfLine ? at - gap : at + gap, top + gap);
            }
            ctx.restore();
          },
        ],
      },
    },
    data: [x, turns.map((t) => t.context)],
  }));
}

export interface DayPoint {
  /** Local midnight, in seconds. */
  time: number;
  cost: number;
  tokens: number;
}

/** Days up to which the tokens line marks each day with a point. */
const POINTS_UP_TO = 60;

/** Cost per day as bars, tokens per day as a line on its own axis. */
export function daysChart(days: readonly DayPoint[]): HTMLElement {
  const total = days.reduce((n, d) => n + d.cost, 0);
  const costliest = days.reduce<DayPoint | undefined>((best, d) => (best === undefined || d.cost > best.cost ? d : best), undefined);
  const summary = `Cost and tokens over ${days.length} days, ${dollars(total)} in all${costliest && costliest.cost > 0 ? `; the costliest day ${new Date(costliest.time * 1000).toLocaleDateString()} at ${dollars(costliest.cost)}` : ""}.`;
  return chart("chart-days", "Cost and tokens per day", summary, (_width, colors) => ({
    options: {
      scales: { x: { time: true }, y: { range: (_u, _min, max) => [0, max > 0 ? max * 1.05 : 1] }, tokens: { range: (_u, _min, max) => [0, Math.max(1, max) * 1.05] } },
      axes: [
        axis(colors, { space: 60 }),
        axis(colors, { size: 60, values: (_u, splits) => splits.map(dollars) }),
        axis(colors, { scale: "tokens", side: 1, size: 52, grid: { show: false }, values: (_u, splits) => splits.map((v) => formatTokens(v)) }),
      ],
      series: [
        { label: "Day", value: (_u, v) => (v === null ? "" : new Date(v * 1000).toLocaleDateString()) },
        // Bars at least 2 px wide: a year of days on a phone is narrower than a pixel a day.
        { label: "Cost", fill: colors.cost, stroke: colors.cost, width: 0, paths: uPlot.paths.bars!({ size: [0.7, 40, 2] }), points: { show: false }, value: (_u, v) => (v === null ? "" : dollars(v)) },
        { label: "Tokens", scale: "tokens", stroke: colors.input, width: 1.5, points: { show: days.length <= POINTS_UP_TO, size: 4, fill: colors.input }, value: (_u, v) => (v === null ? "" : formatTokens(v)) },
      ],
    },
    data: [days.map((d) => d.time), days.map((d) => d.cost), days.map((d) => d.tokens)],
  }));
}
