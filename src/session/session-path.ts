/**
 * The storage path of a session file a caller names. pi's API takes absolute file paths, and
 * `sessionkit ls --json` prints them: one inside the port's root directory (StoragePort.root) is
 * taken as the path relative to it. Any other absolute path fails, saying what paths are.
 */
import { StorageError, type StoragePort } from "../port.js";

const ABSOLUTE = /^(?:[/\\]|[A-Za-z]:[/\\])/;
const WINDOWS = /^(?:[A-Za-z]:[/\\]|\\\\)/;
const EXAMPLE = `(such as "sessions/<dir>/<file>.jsonl")`;

/** `path` itself when it is relative (the port checks it); an absolute one as its path below `storage.root`. */
export function sessionStoragePath(storage: StoragePort, path: string): string {
  if (!ABSOLUTE.test(path)) return path;
  const { root } = storage;
  if (root === undefined) throw new StorageError("invalid", `${JSON.stringify(path)} is an absolute path: storage paths are relative to the storage root ${EXAMPLE}`, { path });
  const relative = pathBelow(root, path);
  if (relative === null) throw new StorageError("invalid", `${JSON.stringify(path)} is not inside the storage root ${root}: storage paths are relative to it ${EXAMPLE}`, { path });
  return relative;
}

/** `path`'s segments below `root`, joined with "/", after "." and ".." are resolved; null when it is not below it. */
function pathBelow(root: string, path: string): string | null {
  // Windows paths: either separator, and names compared without case, as Windows does.
  const windows = WINDOWS.test(root);
  const segments = (text: string) => resolveDots((windows ? text.split(/[/\\]/) : text.split("/")).filter((segment) => segment !== ""));
  const rootSegments = segments(root);
  const pathSegments = segments(path);
  const same = (a: string, b: string) => (windows ? a.toLowerCase() === b.toLowerCase() : a === b);
  if (pathSegments.length <= rootSegments.length || !rootSegments.every((segment, i) => same(segment, pathSegments[i]!))) return null;
  return pathSegments.slice(rootSegments.length).join("/");
}

function resolveDots(segments: string[]): string[] {
  const resolved: string[] = [];
  for (const segment of segments) {
    if (segment === "..") resolved.pop();
    else if (segment !== ".") resolved.push(segment);
  }
  return resolved;
}
