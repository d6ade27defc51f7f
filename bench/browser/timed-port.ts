/**
 * A StoragePort wrapper that adds up, per operation, how many calls were made and how long their
 * promises took, for calls started while `recording` is on (the workload's timed window): with
 * SessionManager's one write queue, the sum is the time spent waiting on storage, and the rest of
 * the window is SessionManager's own work (encoding, scheduling).
 */
import type { StoragePort } from "../../src/port.js";

export interface OpTotals {
  calls: number;
  ms: number;
  bytes: number;
}

export type Breakdown = Record<string, OpTotals>;

export interface TimedPort {
  port: StoragePort;
  totals: Breakdown;
  recording: boolean;
}

export function timedPort(port: StoragePort): TimedPort {
  const totals: Breakdown = {};
  const state: TimedPort = { port, totals, recording: false };
  const timed = <A extends unknown[], R>(op: string, call: (...args: A) => Promise<R>, bytesOf: (...args: A) => number = () => 0) =>
    async (...args: A): Promise<R> => {
      if (!state.recording) return call(...args);
      const start = performance.now();
      try {
        return await call(...args);
      } finally {
        const entry = (totals[op] ??= { calls: 0, ms: 0, bytes: 0 });
        entry.calls++;
        entry.ms += performance.now() - start;
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
