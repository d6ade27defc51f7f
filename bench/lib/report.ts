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
