/** Self time per function from a V8 .cpuprofile (as written by `node --cpu-prof`). */
import { readFileSync } from "node:fs";
import { relative } from "node:path";

interface ProfileNode {
  id: number;
  callFrame: { functionName: string; url: string; lineNumber: number };
}

interface CpuProfile {
  nodes: ProfileNode[];
  samples: number[];
  timeDeltas: number[];
}

export interface SelfTime {
  /** "name (file)"; builtins and V8 states have no file. */
  where: string;
  ms: number;
  /** Share of the busy (non-idle) time. */
  share: number;
}

/** Functions by self time, largest first. */
export function topSelfTimes(profileFile: string, root: string, limit: number): { busyMs: number; top: SelfTime[] } {
  const profile = JSON.parse(readFileSync(profileFile, "utf8")) as CpuProfile;
  const byNode = new Map(profile.nodes.map((node) => [node.id, node]));
  const totals = new Map<string, number>();
  let busy = 0;
  for (let i = 0; i < profile.samples.length; i++) {
    const node = byNode.get(profile.samples[i]!)!;
    // timeDeltas[i] is the time since the previous sample; the next delta is this sample's span.
    const us = profile.timeDeltas[i + 1] ?? 0;
    const { functionName, url, lineNumber } = node.callFrame;
    if (functionName === "(idle)") continue;
    busy += us;
    const file = url ? relative(root, url.replace(/^file:\/\//, "")) : "";
    // tsx's output puts a module's code on one line: its line numbers say nothing.
    const location = !file ? "" : file.endsWith(".ts") ? file : `${file}:${lineNumber + 1}`;
    const where = `${functionName || "(anonymous)"}${location ? ` (${location})` : ""}`;
    totals.set(where, (totals.get(where) ?? 0) + us);
  }
  const top = [...totals]
    .sort((a, b) => b[1] - a[1])
    .slice(0, limit)
    .map(([where, us]) => ({ where, ms: us / 1000, share: busy ? us / busy : 0 }));
  return { busyMs: busy / 1000, top };
}
