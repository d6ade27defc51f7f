/**
 * CPU time of every process on the machine, by kind (Linux /proc): Chromium's by process type
 * (renderer, browser, gpu-process, utility.NetworkService…), the bench's serve process, other
 * Node processes (Playwright's driver, the bench itself). On a 2-core machine a page's wall time
 * follows what all of them spend, not its main thread alone: a served page also pays the browser
 * process, the network service and the server for each request. Diagnostics for
 * viewer-profile.ts; a process that starts and ends between two snapshots is not seen.
 */
import { readdirSync, readFileSync } from "node:fs";

/** CPU ms (user + system) by "kind|pid" at one moment. */
export type ProcessCpuSnapshot = Map<string, number>;

/** Clock ticks per second of /proc's times (USER_HZ: 100 on Linux). */
const TICK_MS = 10;

function kindOf(commandLine: string[]): string {
  const executable = commandLine[0] ?? "";
  if (executable.includes("chrom")) {
    const type = commandLine.find((arg) => arg.startsWith("--type="))?.slice("--type=".length) ?? "browser";
    const service = commandLine.find((arg) => arg.startsWith("--utility-sub-type="))?.replace(/^.*\./, "");
    return `chromium ${type}${service ? ` ${service}` : ""}`;
  }
  const line = commandLine.join(" ");
  if (line.includes("serve-process")) return "serve process";
  if (executable.includes("node")) return "node (driver, bench)";
  return "other";
}

/** Every process's CPU time so far, by kind and pid. */
export function processCpuSnapshot(): ProcessCpuSnapshot {
  const snapshot: ProcessCpuSnapshot = new Map();
  for (const pid of readdirSync("/proc")) {
    if (!/^\d+$/.test(pid)) continue;
    try {
      // Chromium rewrites its title: its arguments may be joined by spaces instead of NULs.
      const commandLine = readFileSync(`/proc/${pid}/cmdline`, "utf8").split(/[\0 ]/);
      const stat = readFileSync(`/proc/${pid}/stat`, "utf8");
      const fields = stat.slice(stat.lastIndexOf(")") + 2).split(" ");
      snapshot.set(`${kindOf(commandLine)}|${pid}`, (Number(fields[11]) + Number(fields[12])) * TICK_MS);
    } catch {
      // gone meanwhile
    }
  }
  return snapshot;
}

/** CPU ms spent by each kind of process between `before` and `after` (a process new since counts from zero). */
export function cpuByKind(before: ProcessCpuSnapshot, after: ProcessCpuSnapshot): Map<string, number> {
  const byKind = new Map<string, number>();
  for (const [key, ms] of after) {
    const kind = key.slice(0, key.lastIndexOf("|"));
    byKind.set(kind, (byKind.get(kind) ?? 0) + ms - (before.get(key) ?? 0));
  }
  return byKind;
}
