/**
 * Changes below a directory of real files, seen from outside this process too: `fs.watch` (see
 * fsWatchTree), else (where it is unsupported, or fails: no inotify watches left, a network file
 * system) a poll that compares every file's size and mtime.
 */
import { watch as fsWatch, type FSWatcher } from "node:fs";
import { lstat, readdir } from "node:fs/promises";
import nodePath from "node:path";
import { isAtOrBelow } from "../kit/watchers.js";
import { hostPath, storagePathOf, type StorageRoot } from "./paths.js";

/**
 * "auto": fs.watch, polling where it fails; "poll": always poll.
 *
 * @inline
 */
export type WatchMode = "auto" | "poll";

export interface TreeWatchOptions {
  /** "auto": fs.watch, polling where it fails; "poll": always poll. */
  mode: WatchMode;
  pollIntervalMs: number;
  /** File names never reported (the adapter's temp files). */
  ignore: (name: string) => boolean;
}

export interface TreeWatch {
  close(): void;
}

/**
 * Reports storage paths at or below `dir` (below `paths`' root) that changed. Live when it
 * resolves. A change the watcher cannot attribute (an overflow) reports `dir` itself. Links are
 * not followed: a directory that is a link is neither watched nor polled.
 */
export async function watchTree(paths: StorageRoot, dir: string, reportPath: (path: string) => void, options: TreeWatchOptions): Promise<TreeWatch> {
  let current: TreeWatch | undefined;
  let closed = false;
  // An event already under way when the watcher closed must not arrive after close().
  const onPath = (path: string) => closed || reportPath(path);
  const fallBack = async () => {
    current?.close();
    if (closed) return;
    current = await pollTree(paths, dir, onPath, options);
    if (closed) current.close();
    onPath(dir); // whatever happened while switching
  };
  current = options.mode === "poll" ? await pollTree(paths, dir, onPath, options) : await fsWatchTree(paths, dir, onPath, options, () => void fallBack());
  current ??= await pollTree(paths, dir, onPath, options);
  return {
    close() {
      closed = true;
      current?.close();
    },
  };
}

/**
 * fs.watch on `dir`, or on its nearest existing ancestor while it does not exist yet; undefined
 * where watching is unsupported or fails at once. macOS and Windows watch a tree natively
 * (`recursive`); elsewhere (Linux) every directory gets a watcher of its own, because Node 20's
 * recursive emulation there loses a file's later changes once it was replaced by a rename (which
 * is how every atomic write lands).
 */
async function fsWatchTree(paths: StorageRoot, dir: string, onPath: (path: string) => void, options: TreeWatchOptions, onFailure: () => void): Promise<TreeWatch | undefined> {
  const realRoot = await paths.existingRoot();
  if (realRoot === null) return undefined; // not even the root exists: poll until it does
  const target = hostPath(realRoot, dir);
  const top = await nearestDirectory(target, realRoot);
  if (top === null) return undefined;
  const report = (file: string) => {
    const path = storagePathOf(realRoot, file);
    if (!options.ignore(nodePath.basename(path)) && isAtOrBelow(path, dir)) onPath(path);
  };
  if (process.platform === "darwin" || process.platform === "win32") {
    try {
      const watcher = fsWatch(top, { recursive: true }, (_event, name) => (name === null ? onPath(dir) : report(nodePath.join(top, name.toString()))));
      watcher.on("error", () => {
        watcher.close();
        onFailure();
      });
      return { close: () => watcher.close() };
    } catch {
      return undefined;
    }
  }
  const tree = new DirectoryWatchers(target, report, () => onPath(dir), onFailure);
  return (await tree.add(top, false)) ? tree : undefined;
}

/** One fs.watch per directory below (or on the way to) a target directory. */
class DirectoryWatchers implements TreeWatch {
  private readonly watchers = new Map<string, FSWatcher>();
  private closed = false;

  constructor(
    private readonly target: string,
    private readonly report: (file: string) => void,
    private readonly overflow: () => void,
    private readonly onFailure: () => void,
  ) {}

  /** Only directories inside the target, or on the way down to it, are watched. */
  private wanted(directory: string): boolean {
    return isAtOrBelow(directory, this.target) || isAtOrBelow(this.target, directory);
  }

  /**
   * Watches `directory` and the directories below it. A directory that appeared after the watch
   * started may already hold files made before its watcher existed: `reportFiles` reports them.
   * Returns false when the watcher could not be made.
   */
  async add(directory: string, reportFiles: boolean): Promise<boolean> {
    if (this.closed || this.watchers.has(directory) || !this.wanted(directory)) return true;
    let watcher: FSWatcher;
    try {
      watcher = fsWatch(directory, (event, name) => this.changed(directory, event, name));
    } catch (error) {
      if ((error as NodeJS.ErrnoException).code === "ENOENT") return true; // gone already
      return false;
    }
    this.watchers.set(directory, watcher);
    watcher.on("error", () => this.drop(directory));
    const entries = await readdir(directory, { withFileTypes: true }).catch(() => []);
    for (const entry of entries) {
      const full = nodePath.join(directory, entry.name);
      if (entry.isDirectory()) {
        if (!(await this.add(full, reportFiles))) this.fail();
      } else if (reportFiles && isAtOrBelow(full, this.target)) {
        this.report(full);
      }
    }
    return true;
  }

  private changed(directory: string, event: string, name: string | Buffer | null): void {
    if (name === null) return this.overflow();
    const full = nodePath.join(directory, name.toString());
    if (isAtOrBelow(full, this.target)) this.report(full);
    if (event !== "rename") return;
    // Created, removed or renamed: a new directory needs a watcher, a removed one loses its own
    // (lstat: a link to a directory is no directory here).
    void lstat(full).then(
      async (info) => {
        if (info.isDirectory() && !(await this.add(full, true))) this.fail();
      },
      () => this.drop(full),
    );
  }

  private drop(directory: string): void {
    for (const [watched, watcher] of this.watchers) {
      if (isAtOrBelow(watched, directory)) {
        watcher.close();
        this.watchers.delete(watched);
      }
    }
  }

  private fail(): void {
    if (this.closed) return;
    this.close();
    this.onFailure();
  }

  close(): void {
    this.closed = true;
    for (const watcher of this.watchers.values()) watcher.close();
    this.watchers.clear();
  }
}

async function nearestDirectory(target: string, root: string): Promise<string | null> {
  for (let dir = target; ; dir = nodePath.dirname(dir)) {
    const info = await lstat(dir).catch(() => null);
    if (info?.isDirectory()) return dir;
    if (dir === root || dir === nodePath.dirname(dir)) return null;
  }
}

/** Every `pollIntervalMs`, compares each file's size and mtime below `dir` with the last look. */
async function pollTree(paths: StorageRoot, dir: string, onPath: (path: string) => void, options: TreeWatchOptions): Promise<TreeWatch> {
  let seen = await snapshot(paths, dir, options.ignore);
  let timer: ReturnType<typeof setTimeout> | undefined;
  let closed = false;
  const look = async () => {
    const now = await snapshot(paths, dir, options.ignore);
    if (closed) return;
    for (const [path, state] of now) if (seen.get(path) !== state) onPath(path);
    for (const path of seen.keys()) if (!now.has(path)) onPath(path);
    seen = now;
    timer = setTimeout(() => void look(), options.pollIntervalMs);
  };
  timer = setTimeout(() => void look(), options.pollIntervalMs);
  return {
    close() {
      closed = true;
      clearTimeout(timer);
    },
  };
}

/**
 * Storage path -> "size:mtimeMs" of every file below `dir`: {} when it does not exist, or is (or
 * has become) a link. Entries that are links are skipped.
 */
async function snapshot(paths: StorageRoot, dir: string, ignore: (name: string) => boolean): Promise<Map<string, string>> {
  const files = new Map<string, string>();
  const top = await paths.existingDir(dir, "watch").catch(() => null);
  const realRoot = await paths.existingRoot();
  if (top === null || realRoot === null) return files;
  const walk = async (host: string): Promise<void> => {
    const entries = await readdir(host, { withFileTypes: true }).catch(() => []);
    await Promise.all(
      entries.map(async (entry) => {
        const full = nodePath.join(host, entry.name);
        if (entry.isDirectory()) return walk(full);
        if (!entry.isFile() || ignore(entry.name)) return;
        const info = await lstat(full).catch(() => null);
        if (info?.isFile()) files.set(storagePathOf(realRoot, full), `${info.size}:${info.mtimeMs}`);
      }),
    );
  };
  await walk(top);
  return files;
}
