/**
 * A StoragePort wrapper that fails one chosen operation, for fault-injection tests: the k-th
 * counted operation throws a StorageError "io" instead of reaching the wrapped storage (so it
 * changes nothing), every other operation passes through. It logs what it saw, so a fault-free
 * run tells how many operations a script performs.
 */
import { StorageError, type ByteRange, type StorageLock, type StoragePort } from "../../src/port.js";

type FaultableOperation = "read" | "stat" | "list" | "append" | "write" | "truncate" | "remove" | "sync" | "lock";

const ALL_OPERATIONS: ReadonlySet<FaultableOperation> = new Set([
  "read",
  "stat",
  "list",
  "append",
  "write",
  "truncate",
  "remove",
  "sync",
  "lock",
]);

interface LoggedOperation {
  /** 1-based position among the counted operations. */
  n: number;
  op: FaultableOperation;
  path: string;
}

export interface FaultyPortOptions {
  /** The 1-based number of the counted operation that fails; none when absent. */
  failAt?: number;
  /** Which operations are counted (and so may fail); all by default. */
  counted?: ReadonlySet<FaultableOperation>;
}

export type FaultyPort = StoragePort & {
  /** Counted operations so far, in call order. */
  readonly log: readonly LoggedOperation[];
  /** The error the fault threw, once it has. */
  readonly injected: StorageError | undefined;
};

export function faultyPort(inner: StoragePort, options: FaultyPortOptions = {}): FaultyPort {
  const counted = options.counted ?? ALL_OPERATIONS;
  const log: LoggedOperation[] = [];
  let injected: StorageError | undefined;

  /** Counts the operation; throws the injected fault when it is the chosen one. */
  function enter(op: FaultableOperation, path: string): void {
    if (!counted.has(op)) return;
    const n = log.length + 1;
    log.push({ n, op, path });
    if (n === options.failAt) {
      injected = new StorageError("io", `injected fault: operation ${n} (${op} ${JSON.stringify(path)})`, { path });
      throw injected;
    }
  }

  const port: FaultyPort = {
    kind: `faulty(${inner.kind})`,
    get log() {
      return log;
    },
    get injected() {
      return injected;
    },
    async read(path: string, range?: ByteRange) {
      enter("read", path);
      return inner.read(path, range);
    },
    async stat(path: string) {
      enter("stat", path);
      return inner.stat(path);
    },
    async list(dir: string) {
      enter("list", dir);
      return inner.list(dir);
    },
    async append(path: string, data: Uint8Array) {
      enter("append", path);
      return inner.append(path, data);
    },
    async write(path: string, data: Uint8Array) {
      enter("write", path);
      return inner.write(path, data);
    },
    async truncate(path: string, size: number) {
      enter("truncate", path);
      return inner.truncate(path, size);
    },
    async remove(path: string) {
      enter("remove", path);
      return inner.remove(path);
    },
  };
  if (inner.sync) {
    const sync = inner.sync.bind(inner);
    port.sync = async (path: string) => {
      enter("sync", path);
      return sync(path);
    };
  }
  if (inner.acquireLock) {
    const acquireLock = inner.acquireLock.bind(inner);
    port.acquireLock = async (key: string): Promise<StorageLock> => {
      enter("lock", key);
      return acquireLock(key);
    };
  }
  if (inner.close) port.close = inner.close.bind(inner);
  return port;
}
