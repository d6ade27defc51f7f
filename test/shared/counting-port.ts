/** A port that counts the bytes read through it (universal APIs only: used in Node and Chromium). */
import type { ByteRange, StoragePort } from "../../src/port.js";

export interface ReadCounter {
  bytesRead: number;
  reads: number;
}

/** Wraps `port`: every method passes through; `counter` sums what every `read` returned. */
export function countingPort(port: StoragePort): { port: StoragePort; counter: ReadCounter } {
  const counter: ReadCounter = { bytesRead: 0, reads: 0 };
  const wrapped: StoragePort = {
    kind: port.kind,
    async read(path: string, range?: ByteRange) {
      const bytes = await port.read(path, range);
      counter.reads++;
      counter.bytesRead += bytes?.length ?? 0;
      return bytes;
    },
    stat: (path) => port.stat(path),
    list: (dir) => port.list(dir),
    append: (path, data) => port.append(path, data),
    write: (path, data) => port.write(path, data),
    truncate: (path, size) => port.truncate(path, size),
    remove: (path) => port.remove(path),
    ...(port.sync ? { sync: (path: string) => port.sync!(path) } : {}),
    ...(port.acquireLock ? { acquireLock: (key: string) => port.acquireLock!(key) } : {}),
    ...(port.watch ? { watch: (dir: string, onChange: (path: string) => void) => port.watch!(dir, onChange) } : {}),
    ...(port.close ? { close: () => port.close!() } : {}),
  };
  return { port: wrapped, counter };
}
