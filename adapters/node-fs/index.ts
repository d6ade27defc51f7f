/**
 * StoragePort over a directory of real files (Node, Electron main process). Appends go through
 * one cached "a" handle per file, writes are atomic (temp file + fsync + rename), locks are O_EXCL
 * lock files that name their owner so a crashed owner's lock can be taken over; no symbolic link
 * below the root is followed. The modules and why each works as it does: docs/DESIGN.md, "node-fs".
 *
 * @module sessionkit/adapters/node-fs
 */
import type { FullStoragePort } from "../../src/port.js";
import { DurableWrites } from "./durable-writes.js";
import { acquireLockFile } from "./lock-file.js";
import { StorageRoot } from "./paths.js";
import { PortWatch } from "./port-watch.js";
import { listDirectory, readRange, statFile } from "./reads.js";
import type { WatchMode } from "./watch-tree.js";

/** Options of {@link nodeFsStorage}. */
export interface NodeFsStorageOptions {
  /** Directory that holds everything; "~/" expands to the home directory. Created on first write. */
  root: string;
  /**
   * How `watch` sees changes made by other processes: "auto" (default) uses fs.watch and polls
   * where it is unsupported or fails; "poll" always polls. This port's own changes are reported
   * at once either way.
   */
  watchMode?: WatchMode;
  /** How often a polling watch looks; default 500 ms. */
  pollIntervalMs?: number;
}

/**
 * The port over a directory: a StoragePort with every optional method. `sync` fsyncs the file (a
 * file just written by `write` is durable already); `writeFiles` writes as `write` does but fsyncs
 * each directory once, after the last rename; a lock is a lock file (`<key>.lock`, created
 * exclusively) that names its owner, so other processes see it and a dead owner's lock is taken
 * over; `watch` reports the changes of this process and (through fs.watch or polling) of others;
 * `close` closes the file handles kept open for appends.
 */
export type NodeFsStorage = FullStoragePort & {
  /** Always "node-fs". */
  readonly kind: "node-fs";
  /** The absolute root directory. */
  readonly root: string;
};

/**
 * A StoragePort over a directory of real files, for Node and Electron's main process: a storage
 * path "sessions/a.jsonl" is the file `<root>/sessions/a.jsonl`. Appends are fast (a cached
 * handle per file), writes atomic (temp file, fsync, rename), locks shared with other processes.
 * A path that is, or goes through, a symbolic link below the root is refused with StorageError
 * "forbidden", wherever the link points; `list` leaves links out.
 */
export function nodeFsStorage(options: NodeFsStorageOptions): NodeFsStorage {
  const paths = new StorageRoot(options.root);
  const writes = new DurableWrites(paths);
  const watching = new PortWatch(paths, options);
  const changed = (path: string) => () => watching.changed(path);

  return {
    kind: "node-fs",
    root: paths.root,
    // async: a storage path that fails its check rejects, as every port's methods do, never throws.
    read: async (path, range) => readRange(paths, path, range),
    stat: async (path) => statFile(paths, path),
    list: async (dir) => listDirectory(paths, dir),
    append: (path, data) => writes.append(path, data).then(changed(path)),
    write: (path, data) => writes.write(path, data).then(changed(path)),
    truncate: (path, size) => writes.truncate(path, size).then(changed(path)),
    remove: (path) => writes.remove(path).then(changed(path)),
    sync: (path) => writes.sync(path),
    writeFiles: (files) => writes.writeFiles(files, (path) => watching.changed(path)),
    acquireLock: async (key) => acquireLockFile(paths, key),
    watch: (dir, onChange) => watching.watch(dir, onChange),
    close: () => writes.close(),
  };
}

export { expandHome } from "./paths.js";
export { terminalId, nodeTerminalBreadcrumb, type NodeTerminalBreadcrumb, type TerminalEnvironment } from "./terminal.js";
export { nodeArchiveCodecs, nodeCrc32, nodeDeflateSession, nodeInflateRaw, nodeSha256 } from "./archive-codecs.js";
