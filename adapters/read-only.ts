/**
 * A StoragePort that refuses every change: appends, writes (one or many), truncations, removals and locks fail
 * with StorageError "read-only", except below the directories named in `except` (what `sessionkit
 * serve` itself may write on a read-only store: its caches under `.sessionkit/`; its clients get
 * no exception). Reads, listings, watches and syncs go through: a sync changes no content.
 */
import { StorageError, type StorageLock, type StoragePort } from "../src/port.js";
import { isAtOrBelow } from "./kit/watchers.js";

/** Options of {@link readOnlyStorage}. */
export interface ReadOnlyOptions {
  /** Directories (storage paths; "" for all) below which changes still go through. Default none. */
  except?: readonly string[];
}

/**
 * `port` with its changes refused (StorageError "read-only"), except below `options.except`.
 * Its optional methods are those `port` has; closing it closes `port`.
 */
export function readOnlyStorage(port: StoragePort, options: ReadOnlyOptions = {}): StoragePort {
  const except = options.except ?? [];
  /** Throws "read-only" unless `path` lies below an excepted directory (checked by `port` itself). */
  const mayChange = (op: string, path: string): void => {
    if (!except.some((dir) => isAtOrBelow(path, dir))) throw new StorageError("read-only", `${op} refused: the store is served read-only`, { path });
  };
  const readOnly: StoragePort = {
    kind: `read-only(${port.kind})`,
    read: (path, range) => port.read(path, range),
    stat: (path) => port.stat(path),
    list: (dir) => port.list(dir),
    async append(path, data) {
      mayChange("append", path);
      return port.append(path, data);
    },
    async write(path, data) {
      mayChange("write", path);
      return port.write(path, data);
    },
    async truncate(path, size) {
      mayChange("truncate", path);
      return port.truncate(path, size);
    },
    async remove(path) {
      mayChange("remove", path);
      return port.remove(path);
    },
    close: async () => port.close?.(),
  };
  if (port.sync) readOnly.sync = port.sync.bind(port);
  if (port.writeFiles) {
    const writeFiles = port.writeFiles.bind(port);
    readOnly.writeFiles = async (files) => {
      for (const file of files) mayChange("write", file.path);
      return writeFiles(files);
    };
  }
  if (port.watch) readOnly.watch = port.watch.bind(port);
  if (port.acquireLock) {
    const acquire = port.acquireLock.bind(port);
    readOnly.acquireLock = async (key): Promise<StorageLock> => {
      mayChange("acquireLock", key);
      return acquire(key);
    };
  }
  return readOnly;
}

