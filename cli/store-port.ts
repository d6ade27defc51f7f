/**
 * How the CLI opens a store directory (every command, and `serve`): node-fs at the store's root,
 * and each of the store's own top-level folders that its user keeps elsewhere through a symbolic
 * link (`sessions -> /data/pi-sessions`: dotfiles, a bigger disk) resolved once, here, and mounted
 * from its real path. The agents read such a folder as any other, so the kit must too; node-fs
 * follows no link below its root (adapters/node-fs/paths.ts), so every link inside these folders
 * is still refused. The root itself may be a link: node-fs resolves it.
 */
import { lstat, readlink, realpath, stat } from "node:fs/promises";
import nodePath from "node:path";
import { mountedStorage, type Mounts } from "../adapters/mounted.js";
import { nodeFsStorage } from "../adapters/node-fs/index.js";
import { joinPath, type StoragePortWith } from "../src/port.js";
import { SESSIONS_DIR } from "../src/session/paths.js";
import { CliError } from "./errors.js";

/**
 * The folders of a store its user may keep elsewhere: every layout (pi's, oh-my-pi's, seed 003's)
 * keeps its sessions in `sessions/`, and blob files are in `blobs/` (src/blobs/blob-store.ts).
 */
const LINKABLE_FOLDERS = [SESSIONS_DIR, "blobs"] as const;

/** A real host directory and the storage path of the store it holds ("" for the root). */
interface HostDir {
  host: string;
  path: string;
}

/** A store directory as it is on disk: its root, and the real directory of each folder the store reads. */
export class StoreDirectory {
  private constructor(
    /** The root as given. */
    readonly root: string,
    /** The linked folders' real directories (mounted), then the root's real one (absent while the root does not exist). */
    private readonly hostDirs: readonly HostDir[],
  ) {}

  /**
   * Resolves the links among the store's top-level folders.
   * @throws CliError "not-found" for a folder that is a dangling link, "invalid" for one that links to a non-directory
   */
  static async find(root: string): Promise<StoreDirectory> {
    const hostDirs: HostDir[] = [];
    for (const folder of LINKABLE_FOLDERS) {
      const real = await linkedFolder(nodePath.join(root, folder));
      if (real !== null) hostDirs.push({ host: real, path: folder });
    }
    // A root that does not exist yet (import makes it) has no folders to resolve.
    const realRoot = await realpath(root).catch(() => null);
    if (realRoot !== null) hostDirs.push({ host: realRoot, path: "" });
    return new StoreDirectory(root, hostDirs);
  }

  /** The store's port, with `mounts` (a cache directory over `.sessionkit/`, say) besides its linked folders. */
  open(mounts: Mounts = {}): StoragePortWith<"close"> {
    const linked = this.hostDirs.filter(({ path }) => path !== "").map(({ host, path }) => [path, nodeFsStorage({ root: host })] as const);
    const base = nodeFsStorage({ root: this.root });
    return linked.length === 0 && Object.keys(mounts).length === 0 ? base : mountedStorage(base, { ...Object.fromEntries(linked), ...mounts });
  }

  /** The storage path of a file by its real path; null when it lies in none of the store's folders. */
  pathOf(realFile: string): string | null {
    // The innermost directory that holds it: a linked folder may point inside the root, or above it.
    const holders = this.hostDirs.filter(({ host }) => isInside(host, realFile)).sort((a, b) => b.host.length - a.host.length);
    const holder = holders[0];
    if (holder === undefined) return null;
    return joinPath(holder.path, nodePath.relative(holder.host, realFile).split(nodePath.sep).join("/"));
  }

  /** The real host file of a storage path (of a store whose root exists). */
  fileOf(path: string): string {
    const folder = this.hostDirs.find((dir) => dir.path !== "" && (path === dir.path || path.startsWith(`${dir.path}/`)));
    if (folder) return nodePath.join(folder.host, ...path.slice(folder.path.length + 1).split("/"));
    const root = this.hostDirs.find((dir) => dir.path === "")?.host ?? nodePath.resolve(this.root);
    return nodePath.join(root, ...path.split("/"));
  }

  /** Real host directory → the storage path it holds, for a server that tells clients storage paths only. */
  hostPaths(): Record<string, string> {
    return Object.fromEntries(this.hostDirs.map(({ host, path }) => [host, path]));
  }
}

/** The port of the store at `root`; see {@link StoreDirectory.find} for what fails. */
export async function openStorePort(root: string, mounts: Mounts = {}): Promise<StoragePortWith<"close">> {
  return (await StoreDirectory.find(root)).open(mounts);
}

/** The real directory `folder` links to; null when it is not a link (or not there: node-fs reads what is). */
async function linkedFolder(folder: string): Promise<string | null> {
  const info = await lstat(folder).catch(() => null);
  if (!info?.isSymbolicLink()) return null;
  const target = await readlink(folder);
  const pointed = await stat(folder).catch((error: unknown) => error as NodeJS.ErrnoException);
  if (pointed instanceof Error) {
    if (pointed.code === "ENOENT" || pointed.code === "ENOTDIR") throw new CliError("not-found", `${folder} is a symbolic link to ${target}, which does not exist (a store folder kept elsewhere must be there)`);
    throw new CliError("failed", `${folder} is a symbolic link to ${target}, which cannot be read (${pointed.code ?? pointed.message})`);
  }
  if (!pointed.isDirectory()) throw new CliError("invalid", `${folder} is a symbolic link to ${target}, which is not a directory`);
  return realpath(folder);
}

function isInside(dir: string, file: string): boolean {
  const relative = nodePath.relative(dir, file);
  return relative !== "" && !relative.startsWith("..") && !nodePath.isAbsolute(relative);
}
