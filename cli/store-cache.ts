/**
 * How the CLI reads a store without writing into it: the store's folder, with the kit's own files
 * (`.sessionkit/`, where the listing catalog lives) mounted from the user's cache directory, one
 * folder per store. An agent's folder may be read-only or not ours to change; the catalog still
 * persists, so a read-only folder lists as fast as a writable one.
 */
import { createHash } from "node:crypto";
import nodePath from "node:path";
import { nodeFsStorage } from "../adapters/node-fs/index.js";
import type { StoragePortWith } from "../src/port.js";
import { cacheRoot } from "./cache-root.js";
import { openStorePort } from "./store-port.js";

/** The directory of the kit's files within a store (see src/session/listing.ts CATALOG_DIR). */
export const KIT_DIR = ".sessionkit";

/**
 * The cache folder of the store at `root`: `<cache root>/stores/<readable name>-<hash of the
 * path>`, so two stores never share one and the name says whose it is.
 */
export function storeCacheDir(root: string, env: NodeJS.ProcessEnv, home: string): string {
  const absolute = nodePath.resolve(root);
  const readable = absolute.replace(/^[/\\]+/, "").replace(/[/\\:]+/g, "-").slice(-60);
  const hash = createHash("sha256").update(absolute).digest("hex").slice(0, 12);
  return nodePath.join(cacheRoot(env, home), "stores", `${readable}-${hash}`);
}

/** The store at `root` for reading: its own files (store-port.ts), and `.sessionkit/` from the cache. */
export async function readingStorage(root: string, env: NodeJS.ProcessEnv, home: string): Promise<StoragePortWith<"close">> {
  return openStorePort(root, { [KIT_DIR]: nodeFsStorage({ root: storeCacheDir(root, env, home) }) });
}
