/** Node's errno codes as the port's StorageError codes, and the ENOENT cases that are no error. */
import { unlink } from "node:fs/promises";
import { StorageError } from "../../src/port.js";

/** The errno code ("ENOENT", …) of a Node error; undefined for anything else. */
export function errorCode(error: unknown): string | undefined {
  return typeof error === "object" && error !== null && "code" in error && typeof error.code === "string"
    ? error.code
    : undefined;
}

/** The file is not there: no such file, or a parent on the way is a file. */
export function isMissing(error: unknown): boolean {
  const code = errorCode(error);
  return code === "ENOENT" || code === "ENOTDIR";
}

/** `error` as the StorageError of `action` ("read", "append to", …) on `path`; a StorageError as it is. */
export function toStorageError(error: unknown, action: string, path: string): StorageError {
  if (error instanceof StorageError) return error;
  const code = errorCode(error);
  // EEXIST only means "locked" for lock files, and the lock file reports that itself. A name past
  // the file system's limit is the caller's mistake, not an i/o failure.
  const kind = code === "ENOENT" ? "not-found" : code === "ENOSPC" || code === "EDQUOT" ? "quota" : code === "ENAMETOOLONG" ? "invalid" : "io";
  const reason = error instanceof Error ? error.message : String(error);
  return new StorageError(kind, `cannot ${action} ${JSON.stringify(path)}: ${reason}`, { path, cause: error });
}

/** Removes a file; one that is already gone is removed. */
export async function unlinkIfPresent(file: string): Promise<void> {
  try {
    await unlink(file);
  } catch (error) {
    if (errorCode(error) !== "ENOENT") throw error;
  }
}
