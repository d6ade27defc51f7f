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
    const name = frameName(byId.get(id)?.callFrame);
    totals.set(name, (totals.get(name) ?? 0) + us);
  });
  const rows = [...totals.entries()]
    .sort((a, b) => b[1] - a[1])
    .slice(0, top)
    .map(([name, us]) => ({ name, ms: us / 1000, share: totalUs ? us / totalUs : 0 }));
  return { totalMs: totalUs / 1000, rows };
}

/** A sampled frame as the summaries name it: the function, and its file and line. */
function frameName(frame: ProfileNode["callFrame"] | undefined): string {
  const where = frame?.url ? ` (${frame.url.replace(/^.*\/(?=[^/]+$)/, "").replace(/\?.*$/, "")}:${frame.lineNumber + 1})` : "";
  return `${frame?.functionName || "(anonymous)"}${where}`;
}

/** Self time (µs) by function over the samples taken in [start, end) (µs, a Chromium trace's clock). */
export function functionSelfTimesIn(profile: CpuProfile & { startTime: number }, start: number, end: number): Map<string, number> {
  const byId = new Map(profile.nodes.map((node) => [node.id, node]));
  const out = new Map<string, number>();
  let t = profile.startTime;
  const samples = profile.samples ?? [];
  const deltas = profile.timeDeltas ?? [];
  for (let i = 0; i < samples.length; i++) {
    t += deltas[i] ?? 0;
    if (t < start || t >= end) continue;
    const name = frameName(byId.get(samples[i]!)?.callFrame);
    out.set(name, (out.get(name) ?? 0) + (deltas[i + 1] ?? 0));
  }
  return out;
}
