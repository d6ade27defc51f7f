/**
 * A port whose paths all live below `prefix` of another port, for suites whose paths must sit
 * inside a served store's exposed directories. Paths are checked first, so invalid ones stay invalid.
 */
import { checkStoragePath, type ByteRange, type StoragePort } from "../../src/port.js";

export function below(prefix: string, port: StoragePort): StoragePort {
  const inner = (path: string) => `${prefix}/${checkStoragePath(path)}`;
  const outer = (path: string) => (path.startsWith(`${prefix}/`) ? path.slice(prefix.length + 1) : path);
  return {
    kind: port.kind,
    read: async (path: string, range?: ByteRange) => port.read(inner(path), range),
    stat: async (path) => port.stat(inner(path)),
    list: async (dir) => port.list(dir === "" ? prefix : inner(dir)),
    append: async (path, data) => port.append(inner(path), data),
    write: async (path, data) => port.write(inner(path), data),
    truncate: async (path, size) => port.truncate(inner(path), size),
    remove: async (path) => port.remove(inner(path)),
    ...(port.sync ? { sync: async (path: string) => port.sync!(inner(path)) } : {}),
    ...(port.acquireLock ? { acquireLock: async (key: string) => port.acquireLock!(inner(key)) } : {}),
    ...(port.watch
      ? { watch: async (dir: string, onChange: (path: string) => void) => port.watch!(dir === "" ? prefix : inner(dir), (path) => onChange(outer(path))) }
      : {}),
    ...(port.close ? { close: () => port.close!() } : {}),
  };
}
