/** PostgreSQL and connection failures as StorageErrors. */
import { StorageError, type StorageErrorCode } from "../../src/port.js";

/** SQLSTATEs the schema's functions raise (class "SK" is ours) and the server's we map. */
const CODES: Record<string, StorageErrorCode> = {
  SK404: "not-found",
  SK400: "invalid",
  SK409: "collision", // a file below a file, or over a directory (check_new_file)
  SK423: "locked", // a write under a lock that another writer has taken over
  "53100": "quota", // disk_full
};

const SQLSTATE = /^[0-9A-Z]{5}$/;

function sqlState(error: unknown): string | undefined {
  const code = (error as { code?: unknown } | null)?.code;
  return typeof code === "string" && SQLSTATE.test(code) ? code : undefined;
}

/**
 * The connection is gone (or unusable): a socket error, an error without a SQLSTATE, a
 * connection-exception class (08), or the server shutting the backend down (57P01-57P03).
 */
export function isConnectionLost(error: unknown): boolean {
  if (error instanceof StorageError) return false;
  const state = sqlState(error);
  return state === undefined || state.startsWith("08") || /^57P0[1-3]$/.test(state);
}

/**
 * A failure of `action` on `path` as a StorageError with the server's message; `lockMs`, the
 * lock_timeout the statement ran with, is named when that wait ran out.
 */
export function toStorageError(error: unknown, action: string, path: string, lockMs?: number): StorageError {
  if (error instanceof StorageError) return error;
  const message = error instanceof Error ? error.message : String(error);
  const state = sqlState(error);
  const mapped = state === undefined ? undefined : CODES[state];
  // The schema's own errors already say what and where.
  if (mapped && state?.startsWith("SK")) return new StorageError(mapped, message, { path, cause: error });
  const where = path === "" ? action : `${action} ${JSON.stringify(path)}`;
  if (mapped) return new StorageError(mapped, `postgres ${where}: ${message}`, { path, cause: error });
  if (state === "55P03") {
    const wait = lockMs === undefined ? "" : ` ${lockMs} ms`;
    return new StorageError("io", `postgres ${where}: waited${wait} for another transaction's lock (lockTimeoutMs) [${state}]`, { path, cause: error });
  }
  if (isConnectionLost(error)) return new StorageError("io", `postgres ${where}: lost the connection to the server (${message})`, { path, cause: error });
  return new StorageError("io", `postgres ${where}: ${message}${state ? ` [${state}]` : ""}`, { path, cause: error });
}
