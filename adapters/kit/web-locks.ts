/** Exclusive cross-tab / cross-worker locks on the Web Locks API (`navigator.locks`). */
import { StorageError, type StorageLock } from "../../src/port.js";

/**
 * Takes the Web Lock `name` if nobody holds it, else fails at once with StorageError "locked".
 * The lock is held until `release()` (or until the page or worker goes away, which frees it).
 * `key` is the caller's lock key, used in error messages.
 */
export function acquireWebLock(name: string, key: string): Promise<StorageLock> {
  if (typeof navigator === "undefined" || navigator.locks === undefined) {
    return Promise.reject(new StorageError("unsupported", "Web Locks (navigator.locks) are not available here", { path: key }));
  }
  return new Promise<StorageLock>((resolve, reject) => {
    let releaseHeld: () => void = () => {};
    const held = new Promise<void>((resolveHeld) => (releaseHeld = resolveHeld));
    // The request settles once the callback's promise settles and the lock is free again.
    const request = navigator.locks.request(name, { ifAvailable: true }, (lock) => {
      if (lock === null) {
        reject(new StorageError("locked", `${key} is locked by another tab, worker or port`, { path: key }));
        return undefined;
      }
      resolve({
        release: async () => {
          releaseHeld();
          await request;
        },
      });
      return held;
    });
    request.catch((error: unknown) => {
      reject(new StorageError("io", `taking the lock ${key} failed: ${String(error)}`, { path: key, cause: error }));
    });
  });
}
