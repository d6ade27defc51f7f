/**
 * OPFS storage for a page: `opfsStorage()` starts a dedicated module worker that owns the files
 * (sync access handles: O(1) appends) and talks to it over the storage rpc. Inside a worker,
 * `opfsWorkerStorage()` is the same port without the hop.
 *
 * @module sessionkit/adapters/opfs
 */
import { StorageError, type ByteRange } from "../../src/port.js";
import { BroadcastChanges } from "../kit/broadcast-changes.js";
import { rpcClientStorage } from "../rpc/client.js";
import { encodeWorkerName } from "./worker-config.js";
import { opfsChangesChannel, type OpfsLocation, type OpfsStorage } from "./worker-storage.js";

export { DEFAULT_OPFS_ROOT, opfsChangesChannel, opfsWorkerStorage, type OpfsLocation, type OpfsStorage } from "./worker-storage.js";

/** Options of {@link opfsStorage}: the directory, and how to reach the storage worker. */
export interface OpfsStorageOptions extends OpfsLocation {
  /** How long a call waits for the worker before failing with "io"; default 30 s. */
  timeoutMs?: number;
  /**
   * Where the page serves the storage worker (the package's dist/adapters/opfs/sessionkit-opfs-worker.js,
   * one file without imports). Only needed where the bundler does not emit the worker itself and the
   * file is not copied beside the bundle (see the README's bundler notes).
   */
  workerUrl?: string | URL;
}

/**
 * Payload per message to our own worker: the session reader's 4 MiB ranges in one round trip each
 * (the rpc's default of 1 MiB suits any channel; a worker's postMessage takes this at once).
 */
const WORKER_CHUNK_BYTES = 4 << 20;

/**
 * A StoragePort on the browser's Origin Private File System, for a page: a module worker that the
 * port starts owns the files (fast, in-place appends) and the port talks to it.
 *
 * @throws StorageError "unsupported" where there are no Web Workers
 */
export function opfsStorage(options?: OpfsStorageOptions): OpfsStorage {
  if (typeof Worker === "undefined") throw new StorageError("unsupported", "opfsStorage needs Web Workers");
  const { timeoutMs, workerUrl, ...location } = options ?? {};
  const name = encodeWorkerName(location);
  // The literal `new Worker(new URL("./…", import.meta.url))` is what Vite, webpack and Rollup's
  // plugins look for to emit the worker; in dist the file is one bundle, which esbuild users copy.
  const worker =
    workerUrl === undefined
      ? new Worker(new URL("./sessionkit-opfs-worker.js", import.meta.url), { type: "module", name })
      : new Worker(workerUrl, { type: "module", name });
  // Our own worker: the bytes of appends and writes are moved to it, not copied once more.
  const client = rpcClientStorage(worker, { kind: "opfs", chunkBytes: WORKER_CHUNK_BYTES, transfer: true, ...(timeoutMs === undefined ? {} : { timeoutMs }) });
  // The worker reports every change it makes on the directory's channel; so do other tabs' workers.
  const changes = new BroadcastChanges(opfsChangesChannel(location));
  return {
    kind: "opfs",
    read: (path: string, range?: ByteRange) => client.read(path, range),
    stat: (path) => client.stat(path),
    list: (dir) => client.list(dir),
    append: (path, data) => client.append(path, data),
    write: (path, data) => client.write(path, data),
    truncate: (path, size) => client.truncate(path, size),
    remove: (path) => client.remove(path),
    sync: (path) => client.sync(path),
    writeFiles: (files) => client.writeFiles(files),
    acquireLock: (key) => client.acquireLock(key),
    watch: (dir, onChange) => changes.watch(dir, onChange),
    // Ending the worker frees its handles and Web Locks even if the close call failed.
    close: () =>
      client.close().finally(() => {
        worker.terminate();
        changes.close();
      }),
  };
}
