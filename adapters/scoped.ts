/**
 * A StoragePort that shows only some directories of another: paths outside them fail with
 * StorageError "forbidden", and a listing or watch of a directory above them shows only what lies
 * on the way to them. `sessionkit serve` exposes `sessions/` and `blobs/` of pi's agent folder,
 * which also holds credentials.
 */
import { StorageError, checkStoragePath, type StorageLock, type StoragePort, type StorageWatch } from "../src/port.js";
import { isAtOrBelow } from "./kit/watchers.js";

/** Options of {@link scopedStorage}. */
export interface ScopedOptions {
  /** The directories (storage paths, e.g. ["sessions", "blobs"]; "" for all) shown, with everything below them. */
  paths: readonly string[];
}

/**
 * `port` limited to `options.paths`: other paths fail with "forbidden" ("invalid" for a malformed
 * one). Its optional methods are those `port` has; closing it closes `port`.
 *
 * @throws StorageError "invalid" for an entry of `paths` that is not a storage path
 */
export function scopedStorage(port: StoragePort, options: ScopedOptions): StoragePort {
  const allowed = options.paths.map((dir) => checkStoragePath(dir, { allowRoot: true }));
  const inside = (path: string) => allowed.some((dir) => isAtOrBelow(path, dir));
  const onTheWay = (path: string) => allowed.some((dir) => isAtOrBelow(dir, path));
  const shown = (path: string) => inside(path) || onTheWay(path);
  const forbidden = (path: string) => new StorageError("forbidden", `${JSON.stringify(path)} is outside the served paths (${allowed.join(", ")})`, { path });
  /** A file path (or lock key) inside the allowed directories. */
  const file = (path: string): string => {
    if (!inside(checkStoragePath(path))) throw forbidden(path);
    return path;
  };
  /** A directory inside the allowed ones or on the way to one. */
  const dir = (path: string): string => {
    if (!shown(checkStoragePath(path, { allowRoot: true }))) throw forbidden(path);
    return path;
  };
  const scoped: StoragePort = {
    kind: `scoped(${port.kind})`,
    read: async (path, range) => port.read(file(path), range),
    stat: async (path) => port.stat(file(path)),
    async list(path) {
      const entries = await port.list(dir(path));
      return entries.filter((entry) => shown(path === "" ? entry.name : `${path}/${entry.name}`));
    },
    append: async (path, data) => port.append(file(path), data),
    write: async (path, data) => port.write(file(path), data),
    truncate: async (path, size) => port.truncate(file(path), size),
    remove: async (path) => port.remove(file(path)),
    close: async () => port.close?.(),
  };
  if (port.sync) {
    const sync = port.sync.bind(port);
    scoped.sync = async (path) => sync(file(path));
  }
  if (port.writeFiles) {
    const writeFiles = port.writeFiles.bind(port);
    scoped.writeFiles = async (files) => writeFiles(files.map(({ path, bytes }) => ({ path: file(path), bytes })));
  }
  if (port.acquireLock) {
    const acquire = port.acquireLock.bind(port);
    scoped.acquireLock = async (key): Promise<StorageLock> => acquire(file(key));
  }
  if (port.watch) {
    const watch = port.watch.bind(port);
    scoped.watch = async (path, onChange): Promise<StorageWatch> =>
      watch(dir(path), (changed) => {
        if (shown(changed)) onChange(changed);
      });
  }
  return scoped;
}
