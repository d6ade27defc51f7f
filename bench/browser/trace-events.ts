/** Chromium trace events (CDP tracing, `browser.stopTracing()`), and where a task's time went. */

export interface TraceEvent {
  name: string;
  cat?: string;
  ph: string;
  ts: number;
  dur?: number;
  /** The thread's own time (CPU) in the event, µs. */
  tdur?: number;
  pid: number;
  tid: number;
  args?: { name?: string; data?: Record<string, unknown> };
}

/** Self time (µs) by event name among nested complete events, sorted by start: layout, style, script, GC… */
export function eventSelfTimes(events: TraceEvent[]): Map<string, number> {
  const self = new Map<string, number>();
  const stack: { e: TraceEvent; end: number; child: number }[] = [];
  const close = (until: number) => {
    while (stack.length > 0 && stack.at(-1)!.end <= until) {
      const top = stack.pop()!;
      self.set(top.e.name, (self.get(top.e.name) ?? 0) + (top.e.dur! - top.child));
      if (stack.length > 0) stack.at(-1)!.child += top.e.dur!;
    }
  };
  for (const e of events) {
    close(e.ts);
    stack.push({ e, end: e.ts + e.dur!, child: 0 });
  }
  close(Infinity);
  return self;
}
