/**
 * One StoragePort made of several: paths below a mount point go to the port mounted there (with
 * the mount point taken off), every other path to the base. The CLI mounts a cache directory over
 * a store's `.sessionkit/` so that reading an agent's folder (whose listing catalog lives at
 * `.sessionkit/catalog/…`) never writes into it: the folder may be read-only or not ours.
 * A watch reports the changes of the one port its directory routes to (watching the base's root
 * does not see a mounted port's files).
 *
 * @module sessionkit/adapters/mounted
 */
import {
  StorageError,
  checkStoragePath,
  writeFilesThenSync,
  type ByteRange,
  type DirEntry,
  type FileToWrite,
  type StorageLock,
  type StoragePort,
  type StoragePortWith,
  type StorageWatch,
} from "../src/port.js";

/** Mount point ("a" or "a/b", no leading or trailing "/") → the port that holds what is below it. */
export type Mounts = Readonly<Record<string, StoragePort>>;

/** The combined port; its optional methods are those the base has, and `close`, which closes the base and every mounted port. */
export type MountedStorage = StoragePortWith<"close">;

interface Route {
  port: StoragePort;
  /** The path in `port`. */
  path: string;
  /** The mount point ("" for the base): prefixed again to paths the port reports. */
  mount: string;
}

/**
 * One StoragePort made of several: a path below a mount point goes to the port mounted there (the
 * mount point taken off), every other path to `base`. E.g. `{ ".sessionkit": cacheStorage }` keeps
 * sessionkit's own files (listing catalogs, search indexes) away from a read-only agent folder.
 *
 * @throws StorageError "invalid" for a mount point that is not a valid storage path
 */
export function mountedStorage(base: StoragePort, mounts: Mounts): MountedStorage {
  const points = Object.keys(mounts).map((point) => checkStoragePath(point));
  // The longest mount point that holds a path wins (a mount may sit below another).
  points.sort((a, b) => b.length - a.length);

  function route(path: string): Route {
    for (const point of points) {
      if (path === point) return { port: mounts[point]!, path: "", mount: point };
      if (path.startsWith(`${point}/`)) return { port: mounts[point]!, path: path.slice(point.length + 1), mount: point };
    }
    return { port: base, path, mount: "" };
  }

  /** A file path: never the mount point itself, which is a directory. */
  function fileRoute(path: string): Route {
    const target = route(checkStoragePath(path));
    if (target.path === "") throw new StorageError("invalid", `${JSON.stringify(path)} is a mount point, a directory`, { path });
    return target;
  }

  const unprefixed = (mount: string, path: string) => (mount === "" ? path : path === "" ? mount : `${mount}/${path}`);

  const port: MountedStorage = {
    kind: `mounted(${base.kind})`,
    async read(path: string, range?: ByteRange) {
      const target = fileRoute(path);
      return target.port.read(target.path, range);
    },
    async stat(path: string) {
      const target = fileRoute(path);
      return target.port.stat(target.path);
    },
    async list(dir: string): Promise<DirEntry[]> {
      const target = route(checkStoragePath(dir, { allowRoot: true }));
      const entries = await target.port.list(target.path);
      // Mount points right below `dir` replace whatever the routed port holds by their names.
      const prefix = dir === "" ? "" : `${dir}/`;
      const below = points.filter((point) => point.startsWith(prefix) && point !== dir && !point.slice(prefix.length).includes("/"));
      if (below.length === 0) return entries;
      const names = new Set(below.map((point) => point.slice(prefix.length)));
      const merged = entries.filter((entry) => !names.has(entry.name));
      for (const point of below) {
        const children = await mounts[point]!.list("");
        if (children.length > 0) merged.push({ name: point.slice(prefix.length), kind: "dir", size: 0, mtimeMs: Math.max(...children.map((c) => c.mtimeMs)) });
      }
      return merged.sort((a, b) => (a.name < b.name ? -1 : a.name > b.name ? 1 : 0));
    },
    async append(path: string, data: Uint8Array) {
      const target = fileRoute(path);
      return target.port.append(target.path, data);
    },
    async write(path: string, data: Uint8Array) {
      const target = fileRoute(path);
      return target.port.write(target.path, data);
    },
    async truncate(path: string, size: number) {
      const target = fileRoute(path);
      return target.port.truncate(target.path, size);
    },
    async remove(path: string) {
      const target = fileRoute(path);
      return target.port.remove(target.path);
    },
    async close(): Promise<void> {
      const ports = new Set([base, ...Object.values(mounts)]);
      await Promise.all([...ports].map((p) => p.close?.()));
    },
  };
  if (base.sync) {
    port.sync = async (path: string) => {
      const target = fileRoute(path);
      await target.port.sync?.(target.path);
    };
  }
  if (base.writeFiles) {
    port.writeFiles = async (files: readonly FileToWrite[]) => {
      // Each port gets its own files, routed; every path is checked before anything is written.
      const byPort = new Map<StoragePort, FileToWrite[]>();
      for (const { path, bytes } of files) {
        const target = fileRoute(path);
        const routed = byPort.get(target.port) ?? [];
        routed.push({ path: target.path, bytes });
        byPort.set(target.port, routed);
      }
      const written = await Promise.allSettled([...byPort].map(([to, routed]) => (to.writeFiles ? to.writeFiles(routed) : writeFilesThenSync(to, routed))));
      for (const outcome of written) if (outcome.status === "rejected") throw outcome.reason;
    };
  }
  if (base.acquireLock) {
    port.acquireLock = async (key: string): Promise<StorageLock> => {
      const target = fileRoute(key);
      if (!target.port.acquireLock) throw new StorageError("unsupported", `the port mounted at ${target.mount} takes no locks`, { path: key });
      return target.port.acquireLock(target.path);
    };
  }
  if (base.watch) {
    port.watch = async (dir: string, onChange: (path: string) => void): Promise<StorageWatch> => {
      const target = route(checkStoragePath(dir, { allowRoot: true }));
      if (!target.port.watch) throw new StorageError("unsupported", `the port mounted at ${target.mount} cannot watch`, { path: dir });
      return target.port.watch(target.path, (path) => onChange(unprefixed(target.mount, path)));
    };
  }
  return port;
}
