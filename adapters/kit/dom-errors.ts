/** Maps errors thrown by browser storage APIs (DOMExceptions) onto StorageError codes. */
import { StorageError, type StorageErrorCode } from "../../src/port.js";

/** The DOMException name of an error, if it has one (fake-indexeddb and older engines use look-alikes). */
export function domErrorName(error: unknown): string | undefined {
  if (typeof error !== "object" || error === null || !("name" in error)) return undefined;
  return typeof error.name === "string" ? error.name : undefined;
}

const CODE_BY_DOM_NAME: Record<string, StorageErrorCode> = {
  QuotaExceededError: "quota",
  NoModificationAllowedError: "locked",
};

/**
 * Wraps a browser storage failure as a StorageError: QuotaExceededError becomes "quota", an
 * exclusive-handle conflict (NoModificationAllowedError) "locked", anything else "io".
 * StorageErrors pass through unchanged.
 */
export function toStorageError(error: unknown, action: string, path?: string): StorageError {
  if (error instanceof StorageError) return error;
  const name = domErrorName(error) ?? "Error";
  const detail = error instanceof Error || error instanceof DOMException ? error.message : String(error);
  const code = CODE_BY_DOM_NAME[name] ?? "io";
  return new StorageError(code, `${action} failed: ${name}: ${detail}`, { ...(path === undefined ? {} : { path }), cause: error });
}
