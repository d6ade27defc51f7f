/** The StorageError "collision" every port raises, in one wording. */
import { StorageError } from "../../src/port.js";

/** What keeps a path from being a file: a file at one of its parent paths, or a directory at the path itself. */
export interface InTheWay {
  /** The storage path of the file or directory in the way. */
  path: string;
  kind: "file" | "dir";
}

/** `cannot append to "a/b": "a" is a file`, `cannot write "d": it is a directory`. */
export function collisionError(action: string, path: string, inTheWay: InTheWay, cause?: unknown): StorageError {
  const what = inTheWay.path === path ? "it" : JSON.stringify(inTheWay.path);
  return new StorageError("collision", `cannot ${action} ${JSON.stringify(path)}: ${what} is a ${inTheWay.kind === "dir" ? "directory" : "file"}`, { path, cause });
}
