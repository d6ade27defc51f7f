/**
 * A StoragePort wrapper that adds up, per operation, how many calls were made and how long their
 * promises took, for calls started while `recording` is on (the workload's timed window), and the
 * wall time during which at least one call was pending. Calls may overlap (flush() issues its
 * append and its sync together), so the per-operation sums can add up to more than that wall
 * time; with SessionManager's one write queue, the rest of the window is SessionManager's own
 * work (encoding, scheduling).
 */
import type { StoragePort } from "../../src/port.js";

interface OpTotals {
  calls: number;
  ms: number;
  bytes: number;
}

export interface Breakdown {
  ops: Record<string, OpTotals>;
  /** Wall time during which at least one recorded call was pending: overlapping calls count once. */
  busyMs: number;
}

export interface TimedPort {
  port: StoragePort;
  totals: Breakdown;
  recording: boolean;
}

export function timedPort(port: StoragePort): TimedPort {
  const totals: Breakdown = { ops: {}, busyMs: 0 };
  const state: TimedPort = { port, totals, recording: false };
  let pending = 0;
  let busySince = 0;
  const timed = <A extends unknown[], R>(op: string, call: (...args: A) => Promise<R>, bytesOf: (...args: A) => number = () => 0) =>
    async (...args: A): Promise<R> => {
      if (!state.recording) return call(...args);
      const start = performance.now();
      if (pending++ === 0) busySince = start;
      try {
        return await call(...args);
      } finally {
        const end = performance.now();
        if (--pending === 0) totals.busyMs += end - busySince;
        const entry = (totals.ops[op] ??= { calls: 0, ms: 0, bytes: 0 });
        entry.calls++;
        entry.ms += end - start;
        entry.bytes += bytesOf(...args);
      }
    };
  state.port = {
    kind: port.kind,
    read: timed("read", port.read.bind(port)),
    stat: timed("stat", port.stat.bind(port)),
    list: timed("list", port.list.bind(port)),
    append: timed("append", port.append.bind(port), (_path, data) => data.length),
    write: timed("write", port.write.bind(port), (_path, data) => data.length),
    truncate: timed("truncate", port.truncate.bind(port)),
    remove: timed("remove", port.remove.bind(port)),
    ...(port.sync ? { sync: timed("sync", port.sync.bind(port)) } : {}),
    ...(port.acquireLock ? { acquireLock: timed("acquireLock", port.acquireLock.bind(port)) } : {}),
    ...(port.close ? { close: port.close.bind(port) } : {}),
  };
  return state;
}
