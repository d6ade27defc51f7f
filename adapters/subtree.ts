/**
 * A StoragePort that is one directory of another: path `p` is `<dir>/p` in the other port. A team
 * store that `sessionkit sync` fills holds each machine's agent stores at
 * `machines/<machine>/<store>/`; `sessionkit serve` shows each as a store of its own through this.
 */
import { checkStoragePath, type StorageLock, type StoragePort, type StoragePortWith, type StorageWatch } from "../src/port.js";

/**
 * `port` seen from its directory `dir`: every path is taken as relative to `dir`. Its optional
 * methods are those `port` has, but closing it leaves `port` open: several subtrees share one
 * port (one database pool), which its owner closes.
 *
 * @throws StorageError "invalid" when `dir` is not a storage path
 */
export function subtreeStorage(port: StoragePort, dir: string): StoragePortWith<"close"> {
  const prefix = `${checkStoragePath(dir)}/`;
  const inner = (path: string) => prefix + checkStoragePath(path);
  const innerDir = (path: string) => (checkStoragePath(path, { allowRoot: true }) === "" ? dir : prefix + path);
  const subtree: StoragePortWith<"close"> = {
    kind: `subtree(${port.kind})`,
    read: async (path, range) => port.read(inner(path), range),
    stat: async (path) => port.stat(inner(path)),
    list: async (path) => port.list(innerDir(path)),
    append: async (path, data) => port.append(inner(path), data),
    write: async (path, data) => port.write(inner(path), data),
    truncate: async (path, size) => port.truncate(inner(path), size),
    remove: async (path) => port.remove(inner(path)),
    close: async () => {},
  };
  if (port.sync) {
    const sync = port.sync.bind(port);
    subtree.sync = async (path) => sync(inner(path));
  }
  if (port.writeFiles) {
    const writeFiles = port.writeFiles.bind(port);
    subtree.writeFiles = async (files) => writeFiles(files.map(({ path, bytes }) => ({ path: inner(path), bytes })));
  }
  if (port.acquireLock) {
    const acquire = port.acquireLock.bind(port);
    subtree.acquireLock = async (key): Promise<StorageLock> => acquire(inner(key));
  }
  if (port.watch) {
    const watch = port.watch.bind(port);
    subtree.watch = async (path, onChange): Promise<StorageWatch> =>
      watch(innerDir(path), (changed) => {
        if (changed.startsWith(prefix)) onChange(changed.slice(prefix.length));
        // `dir` or a directory above it: the base knows only that something below changed.
        else if (changed === "" || prefix.startsWith(`${changed}/`)) onChange("");
      });
  }
  return subtree;
}
