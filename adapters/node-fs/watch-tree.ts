/**
 * Changes below a directory of real files, seen from outside this process too: `fs.watch` with
 * `recursive` (Node ≥ 20 on Linux, macOS and Windows), else (where it is unsupported, or fails:
 * no inotify watches left, a network file system) a poll that compares every file's size and mtime.
 */
import { watch as fsWatch, type FSWatcher } from "node:fs";
import { readdir, stat } from "node:fs/promises";
import nodePath from "node:path";
import { isAtOrBelow } from "../watchers.js";

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
 * Reports storage paths (relative to `root`, "/"-separated) at or below `dir` that changed. Live
 * when it resolves. A change the watcher cannot attribute (an overflow) reports `dir` itself.
 */
export async function watchTree(root: string, dir: string, onPath: (path: string) => void, options: TreeWatchOptions): Promise<TreeWatch> {
  let current: TreeWatch | undefined;
  let closed = false;
  const fallBack = async () => {
    current?.close();
    if (closed) return;
    current = await pollTree(root, dir, onPath, options);
    if (closed) current.close();
    onPath(dir); // whatever happened while switching
  };
  current = options.mode === "poll" ? await pollTree(root, dir, onPath, options) : await fsWatchTree(root, dir, onPath, options, () => void fallBack());
  current ??= await pollTree(root, dir, onPath, options);
  return {
    close() {
      closed = true;
      current?.close();
    },
  };
}

function storagePathOf(root: string, file: string): string {
  return nodePath.relative(root, file).split(nodePath.sep).join("/");
}

/** fs.watch on `dir`, or on its nearest existing ancestor while it does not exist yet; undefined where unsupported. */
async function fsWatchTree(root: string, dir: string, onPath: (path: string) => void, options: TreeWatchOptions, onFailure: () => void): Promise<TreeWatch | undefined> {
  const target = dir === "" ? root : nodePath.join(root, ...dir.split("/"));
  const watched = await nearestDirectory(target, root);
  if (watched === null) return undefined; // not even the root exists: poll until it does
  let watcher: FSWatcher;
  try {
    watcher = fsWatch(watched, { recursive: true }, (_event, filename) => {
      if (filename === null) return onPath(dir);
      const path = storagePathOf(root, nodePath.join(watched, filename.toString()));
      if (!options.ignore(nodePath.basename(path)) && isAtOrBelow(path, dir)) onPath(path);
    });
  } catch {
    return undefined; // ERR_FEATURE_UNAVAILABLE_ON_PLATFORM, ENOSPC (inotify limit), EPERM …
  }
  let failed = false;
  watcher.on("error", () => {
    if (failed) return;
    failed = true;
    watcher.close();
    onFailure();
  });
  return { close: () => watcher.close() };
}

async function nearestDirectory(target: string, root: string): Promise<string | null> {
  for (let dir = target; ; dir = nodePath.dirname(dir)) {
    const info = await stat(dir).catch(() => null);
    if (info?.isDirectory()) return dir;
    if (dir === root || dir === nodePath.dirname(dir)) return null;
  }
}

/** Every `pollIntervalMs`, compares each file's size and mtime below `dir` with the last look. */
async function pollTree(root: string, dir: string, onPath: (path: string) => void, options: TreeWatchOptions): Promise<TreeWatch> {
  const top = dir === "" ? root : nodePath.join(root, ...dir.split("/"));
  let seen = await snapshot(root, top, options.ignore);
  let timer: ReturnType<typeof setTimeout> | undefined;
  let closed = false;
  const look = async () => {
    const now = await snapshot(root, top, options.ignore);
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

/** Storage path -> "size:mtimeMs" of every file below `top` ({} when it does not exist). */
async function snapshot(root: string, top: string, ignore: (name: string) => boolean): Promise<Map<string, string>> {
  const files = new Map<string, string>();
  const walk = async (dir: string): Promise<void> => {
    const entries = await readdir(dir, { withFileTypes: true }).catch(() => []);
    await Promise.all(
      entries.map(async (entry) => {
        const full = nodePath.join(dir, entry.name);
        if (entry.isDirectory()) return walk(full);
        if (!entry.isFile() || ignore(entry.name)) return;
        const info = await stat(full).catch(() => null);
        if (info) files.set(storagePathOf(root, full), `${info.size}:${info.mtimeMs}`);
      }),
    );
  };
  await walk(top);
  return files;
}
