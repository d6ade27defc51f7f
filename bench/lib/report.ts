/** The results table and the machine it was measured on. */
import os from "node:os";

export type Verdict = "PASS" | "FAIL" | "info";

export interface Row {
  name: string;
  ours: string;
  peer: string;
  /** ours ÷ peer, as the target states it. */
  ratio: string;
  target: string;
  verdict: Verdict;
  /**
   * Where the row's figures go in the `--json` results (a dotted path, documented in
   * bench/README.md); rows may share a key when their figure names differ.
   */
  key: string;
  /** The numbers the row prints (and its peers' and floors'), unrounded, in the units their names end in. */
  figures: Figures;
}

/** Numbers by name: `…Ms` milliseconds, `…Bytes` bytes, `…PerSec` per second, ratios plain; booleans for equalities. */
export type Figures = Record<string, number | boolean>;

/** A JSON object of figures by dotted key. */
interface FigureTree {
  [name: string]: number | boolean | FigureTree;
}

/**
 * The `--json` results: every row's figures at `<key>.<name>` from the root (and those of `more`:
 * the figures of other tables), `meta` (when, where, flags) and `rows` (each row as printed, with
 * its key and verdict). A figure set twice is a bug in
 * a section (keys must stay unique): it throws.
 */
export function resultsJson(rows: readonly Row[], meta: Record<string, unknown>, more: readonly Pick<Row, "key" | "figures">[] = []): Record<string, unknown> {
  const figures: FigureTree = {};
  for (const row of [...rows, ...more]) {
    if (row.key === "meta" || row.key.startsWith("meta.") || row.key === "rows" || row.key.startsWith("rows.")) throw new Error(`bench --json: the key ${row.key} is reserved`);
    for (const [name, value] of Object.entries(row.figures)) setFigure(figures, `${row.key}.${name}`, value);
  }
  return {
    ...figures,
    meta,
    rows: rows.map(({ key, name, ours, peer, ratio, target, verdict }) => ({ key, name, ours, peer, ratio, target, verdict })),
  };
}

function setFigure(tree: FigureTree, path: string, value: number | boolean): void {
  const parts = path.split(".");
  let node = tree;
  for (const part of parts.slice(0, -1)) {
    const next = (node[part] ??= {});
    if (typeof next !== "object") throw new Error(`bench --json: ${path} runs through the figure ${part}`);
    node = next;
  }
  const last = parts[parts.length - 1]!;
  if (last in node) throw new Error(`bench --json: ${path} is set twice`);
  if (typeof value === "number" && !Number.isFinite(value)) throw new Error(`bench --json: ${path} is ${value}`);
  node[last] = value;
}

export function verdict(pass: boolean): Verdict {
  return pass ? "PASS" : "FAIL";
}

export function ratio(value: number): string {
  return `${value < 0.1 ? value.toFixed(3) : value.toFixed(2)}×`;
}

export function markdownTable(rows: readonly Row[]): string {
  const header = ["#", "measurement", "ours", "peer / baseline", "ratio", "target", "result"];
  const escape = (cell: string) => cell.replace(/\|/g, "\\|").replace(/\n/g, " ");
  const lines = [`| ${header.join(" | ")} |`, `|${header.map((_, i) => (i === 0 || i >= 4 ? ":-:" : "---")).join("|")}|`];
  rows.forEach((row, i) => {
    const result = row.verdict === "info" ? "—" : `**${row.verdict}**`;
    lines.push(`| ${[String(i + 1), row.name, row.ours, row.peer, row.ratio, row.target, result].map(escape).join(" | ")} |`);
  });
  return lines.join("\n");
}

export function machineInfo(): string[] {
  const cpus = os.cpus();
  const load = os.loadavg().map((l) => l.toFixed(2)).join(" / ");
  return [
    `node ${process.version} on ${os.type()} ${os.release()} (${process.arch})`,
    `${cpus.length} × ${cpus[0]?.model.trim() ?? "unknown cpu"}, ${(os.totalmem() / 2 ** 30).toFixed(1)} GiB RAM`,
    `load average (1/5/15 min) at start: ${load}`,
  ];
}
