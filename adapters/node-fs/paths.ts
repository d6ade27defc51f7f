/**
 * Where storage paths live on disk. Every host path node-fs opens, lists or watches is made by a
 * {@link StorageRoot}, so the rule about which host paths a storage path may reach has one place:
 * below the root's real path, through no symbolic link. The root itself may be (or lie below) a
 * link: it is resolved once. Links below it are never followed, wherever they point (a link from
 * sessions/ to the store's auth.json stays inside the root, yet would carry a client of a server
 * that exposes sessions/ only to a file it must not reach). How this is checked and what it costs:
 * docs/DESIGN.md, "node-fs".
 */
import { constants } from "node:fs";
import { lstat, mkdir, open, realpath, type FileHandle } from "node:fs/promises";
import os from "node:os";
import nodePath from "node:path";
import { baseName, checkStoragePath, parentDir, StorageError } from "../../src/port.js";
import { collisionError, type InTheWay } from "../kit/collision.js";
import { errorCode, isMissing, toStorageError } from "./errors.js";

/** What a failed operation's errno may mean when a file or directory is in the way. */
const COLLISION_ERRNOS = new Set(["ENOTDIR", "EISDIR", "EEXIST", "EPERM"]);

/** "~" and "~/…" name the home directory; other paths are returned as they are. */
export function expandHome(path: string): string {
  return path === "~" || path.startsWith("~/") ? nodePath.join(os.homedir(), path.slice(2)) : path;
}

/** open(2)'s flag that fails on a link as the last component; Windows has none (0), see {@link openNoFollow}. */
const NO_FOLLOW: number = constants.O_NOFOLLOW ?? 0;

/**
 * macOS and Windows file systems are case-insensitive by default and their realpath gives each
 * name as it is on disk: a storage path spelt in another case names the same directory there.
 */
const foldsCase = process.platform === "darwin" || process.platform === "win32";

function samePath(a: string, b: string): boolean {
  return a === b || (foldsCase && a.normalize("NFC").toLowerCase() === b.normalize("NFC").toLowerCase());
}

/** The StorageError of an operation refused because its path is, or goes through, a link. */
export function linkRefused(action: string, path: string): StorageError {
  return new StorageError("forbidden", `cannot ${action} ${JSON.stringify(path)}: it is or goes through a symbolic link, which node-fs does not follow below its root`, { path });
}

/** The host path of storage path `path` ("" is the root) below the root's real path. */
export function hostPath(realRoot: string, path: string): string {
  return path === "" ? realRoot : nodePath.join(realRoot, ...path.split("/"));
}

/** The storage path ("/"-separated) of a host path below the root's real path. */
export function storagePathOf(realRoot: string, file: string): string {
  return nodePath.relative(realRoot, file).split(nodePath.sep).join("/");
}

/**
 * Opens `file` (storage path `path`, its directory checked by {@link StorageRoot}) with numeric
 * `flags`, never through a link as its last component: O_NOFOLLOW where the platform has it
 * (atomic), else an lstat just before.
 */
export async function openNoFollow(file: string, flags: number, action: string, path: string): Promise<FileHandle> {
  if (NO_FOLLOW === 0 && (await lstat(file).catch(() => null))?.isSymbolicLink()) throw linkRefused(action, path);
  try {
    return await open(file, flags | NO_FOLLOW);
  } catch (error) {
    // ELOOP: the last component is a link (Linux, macOS); FreeBSD says EMLINK.
    const code = errorCode(error);
    if (code === "ELOOP" || code === "EMLINK") throw linkRefused(action, path);
    throw error;
  }
}

/** Fails with "forbidden" when `file` (storage path `path`) is a link; for operations that do not open it. */
export async function refuseLink(file: string, action: string, path: string): Promise<void> {
  const info = await lstat(file).catch((error: unknown) => {
    if (isMissing(error)) return null;
    throw error;
  });
  if (info?.isSymbolicLink()) throw linkRefused(action, path);
}

/**
 * A directory of real files in which storage path "sessions/a.jsonl" is `<root>/sessions/a.jsonl`.
 * Its methods check a storage path's directories on disk: each is an existing directory below the
 * root reached through no link (`realpath` gives the path itself), or missing with no link on the
 * way to it. A link swapped in between the check and the use (by a process that may rename
 * directories inside the root) is not seen: Node has no openat(2). Last components are opened
 * with {@link openNoFollow} or checked with {@link refuseLink}; `rename` and `unlink` never
 * follow them.
 */
export class StorageRoot {
  /** The absolute root directory, as given (links in it unresolved). */
  readonly root: string;
  /** The root's real path, once it exists. */
  private realRoot: string | undefined;

  /** `root` may start with "~/" (the home directory) and be relative (to the working directory). */
  constructor(root: string) {
    this.root = nodePath.resolve(expandHome(root));
  }

  /** The root's real path; null while the root does not exist. */
  async existingRoot(): Promise<string | null> {
    if (this.realRoot !== undefined) return this.realRoot;
    try {
      this.realRoot = await realpath(this.root);
    } catch (error) {
      if (isMissing(error)) return null;
      throw error;
    }
    return this.realRoot;
  }

  /**
   * The host directory of storage directory `dir` ("" is the root); null when it (or the root)
   * does not exist, or is not a directory.
   * @param action what the caller does ("list", "read", …), for the error
   * @param path the storage path the error names; default `dir`
   * @throws StorageError "forbidden" when it is, or lies below, a link
   */
  async existingDir(dir: string, action: string, path = dir): Promise<string | null> {
    checkStoragePath(dir, { allowRoot: true });
    const realRoot = await this.existingRoot();
    if (realRoot === null) return null;
    const host = hostPath(realRoot, dir);
    if (dir === "") return host;
    let real: string;
    try {
      real = await realpath(host);
    } catch (error) {
      if (errorCode(error) === "ELOOP") throw linkRefused(action, path);
      if (!isMissing(error)) throw error;
      await this.refuseLinkOnTheWay(realRoot, dir, action, path);
      return null;
    }
    if (!samePath(real, host)) throw linkRefused(action, path);
    return host;
  }

  /**
   * The host file of `path` for an operation on an existing file: its directory checked as
   * {@link existingDir} does; null when that directory does not exist.
   */
  async existingFile(path: string, action: string, named = path): Promise<string | null> {
    checkStoragePath(path);
    const dir = await this.existingDir(parentDir(path), action, named);
    return dir === null ? null : nodePath.join(dir, baseName(path));
  }

  /**
   * The host file of `path` for creating it: its directory checked, and made (`mkdir -p`, the
   * root too) when missing. `newDirParents`: the directories in which a directory was made, whose
   * fsync makes it durable.
   */
  async fileToCreate(path: string, action: string, named = path): Promise<{ file: string; newDirParents: string[] }> {
    const existing = await this.existingFile(path, action, named);
    if (existing !== null) return { file: existing, newDirParents: [] };
    const newDirParents = parentsOfNew(await mkdir(this.root, { recursive: true }), this.root);
    const realRoot = (await this.existingRoot())!;
    const dir = hostPath(realRoot, parentDir(path));
    newDirParents.push(...parentsOfNew(await mkdir(dir, { recursive: true }), dir));
    // mkdir -p goes through a link put on the way since the check: look again before using it.
    if (!samePath(await realpath(dir), dir)) throw linkRefused(action, named);
    return { file: nodePath.join(dir, baseName(path)), newDirParents };
  }

  /**
   * The StorageError of `action` on `path` that failed with `error`: "collision" when a file or
   * directory is in the way of `file` (the storage path the operation creates or opens; default
   * `path`), as ENOTDIR, EISDIR, EEXIST and EPERM (unlink of a directory, macOS) may mean; else as
   * {@link toStorageError} maps it.
   */
  async failure(error: unknown, action: string, path: string, file = path): Promise<StorageError> {
    const collision = COLLISION_ERRNOS.has(errorCode(error) ?? "") ? await this.collision(action, path, file, error).catch(() => undefined) : undefined;
    return collision ?? toStorageError(error, action, path);
  }

  /** StorageError "collision" when a file or directory is in the way of `file` (default `path`); undefined when nothing is. */
  async collision(action: string, path: string, file = path, cause?: unknown): Promise<StorageError | undefined> {
    const blocker = await this.inTheWay(file);
    return blocker && collisionError(action, path, blocker, cause);
  }

  /** What keeps storage path `path` from being a file: a file at one of its parent paths, or a directory at it. */
  private async inTheWay(path: string): Promise<InTheWay | undefined> {
    const realRoot = await this.existingRoot();
    if (realRoot === null) return undefined;
    const segments = path.split("/");
    for (let i = 1; i <= segments.length; i++) {
      const at = segments.slice(0, i).join("/");
      const info = await lstat(hostPath(realRoot, at)).catch(() => null);
      if (info === null) return undefined;
      if (i === segments.length) return info.isDirectory() ? { path, kind: "dir" } : undefined;
      if (!info.isDirectory()) return info.isFile() ? { path: at, kind: "file" } : undefined;
    }
    return undefined;
  }

  /** For a directory that realpath could not resolve: fails when an existing part of it is a link (a dangling one, say). */
  private async refuseLinkOnTheWay(realRoot: string, dir: string, action: string, path: string): Promise<void> {
    let host = realRoot;
    for (const segment of dir.split("/")) {
      host = nodePath.join(host, segment);
      const info = await lstat(host).catch((error: unknown) => {
        if (isMissing(error)) return null;
        throw error;
      });
      if (info === null || !info.isDirectory()) {
        if (info?.isSymbolicLink()) throw linkRefused(action, path);
        return;
      }
    }
  }
}

/**
 * The parents of the directories `mkdir -p` made: from `dir` (the innermost) up to `first` (the
 * outermost, as `mkdir` returns it; undefined when it made none).
 */
function parentsOfNew(first: string | undefined, dir: string): string[] {
  if (first === undefined) return [];
  const parents: string[] = [];
  for (let created = dir; ; created = nodePath.dirname(created)) {
    parents.push(nodePath.dirname(created));
    if (created === first || nodePath.dirname(created) === created) break;
  }
  return parents;
}
