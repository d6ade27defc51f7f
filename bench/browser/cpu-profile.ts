/** Summaries of a V8 CPU profile (CDP `Profiler.stop`): self time by function. */

interface ProfileNode {
  id: number;
  callFrame: { functionName: string; url: string; lineNumber: number };
}

export interface CpuProfile {
  nodes: ProfileNode[];
  samples?: number[];
  timeDeltas?: number[];
}

export interface SelfTime {
  name: string;
  ms: number;
  share: number;
}

/** The `top` functions by self time, plus "(idle)", "(program)" and "(garbage collector)" as V8 names them. */
export function selfTimes(profile: CpuProfile, top: number): { totalMs: number; rows: SelfTime[] } {
  const byId = new Map(profile.nodes.map((node) => [node.id, node]));
  const totals = new Map<string, number>();
  const samples = profile.samples ?? [];
  const deltas = profile.timeDeltas ?? [];
  let totalUs = 0;
  samples.forEach((id, i) => {
    // A sample's time is the delta to the next sample.
    const us = deltas[i + 1] ?? 0;
    totalUs += us;
    const frame = byId.get(id)?.callFrame;
    const where = frame?.url ? ` (${frame.url.replace(/^.*\/(?=[^/]+$)/, "").replace(/\?.*$/, "")}:${frame.lineNumber + 1})` : "";
    const name = `${frame?.functionName || "(anonymous)"}${where}`;
    totals.set(name, (totals.get(name) ?? 0) + us);
  });
  const rows = [...totals.entries()]
    .sort((a, b) => b[1] - a[1])
    .slice(0, top)
    .map(([name, us]) => ({ name, ms: us / 1000, share: totalUs ? us / totalUs : 0 }));
  return { totalMs: totalUs / 1000, rows };
}
