/**
 * Where storage paths live on disk. Every host path node-fs opens, lists or watches is made by a
 * {@link StorageRoot}, so a rule about which host paths a storage path may reach has one place.
 */
import os from "node:os";
import nodePath from "node:path";
import { checkStoragePath } from "../../src/port.js";

/** "~" and "~/…" name the home directory; other paths are returned as they are. */
export function expandHome(path: string): string {
  return path === "~" || path.startsWith("~/") ? nodePath.join(os.homedir(), path.slice(2)) : path;
}

/** A directory of real files in which storage path "sessions/a.jsonl" is `<root>/sessions/a.jsonl`. */
export class StorageRoot {
  /** The absolute root directory. */
  readonly root: string;

  /** `root` may start with "~/" (the home directory) and be relative (to the working directory). */
  constructor(root: string) {
    this.root = nodePath.resolve(expandHome(root));
  }

  /** The host file of a storage path (checked: relative, no "." or ".." segments). */
  fileOf(path: string): string {
    return nodePath.join(this.root, ...checkStoragePath(path).split("/"));
  }

  /** The host directory of a storage directory; "" is the root. */
  dirOf(dir: string): string {
    checkStoragePath(dir, { allowRoot: true });
    return dir === "" ? this.root : this.fileOf(dir);
  }

  /** The lock file that stands for the lock named `key`: `<key>.lock`. */
  lockFileOf(key: string): string {
    return `${this.fileOf(key)}.lock`;
  }

  /** The storage path ("/"-separated) of a host file below the root. */
  storagePathOf(file: string): string {
    return nodePath.relative(this.root, file).split(nodePath.sep).join("/");
  }
}
