/** Directory listings for adapters that store files by full path, with implicit directories. */
import type { DirEntry } from "../src/port.js";

/**
 * The direct children of `dir` ("" is the root) among `files`; a directory's mtime is the newest
 * mtime of the files below it. Sorted by name.
 */
export function listChildren(dir: string, files: Iterable<{ path: string; size: number; mtimeMs: number }>): DirEntry[] {
  const prefix = dir === "" ? "" : `${dir}/`;
  const children = new Map<string, DirEntry>();
  for (const file of files) {
    if (!file.path.startsWith(prefix)) continue;
    const rest = file.path.slice(prefix.length);
    const slash = rest.indexOf("/");
    if (slash < 0) {
      children.set(rest, { name: rest, kind: "file", size: file.size, mtimeMs: file.mtimeMs });
      continue;
    }
    const name = rest.slice(0, slash);
    const seen = children.get(name);
    if (!seen || seen.mtimeMs < file.mtimeMs) children.set(name, { name, kind: "dir", size: 0, mtimeMs: file.mtimeMs });
  }
  return [...children.values()].sort((a, b) => (a.name < b.name ? -1 : a.name > b.name ? 1 : 0));
}
