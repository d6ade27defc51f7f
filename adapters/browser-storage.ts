/**
 * What a session viewer needs to know about the browser's storage for this origin: how much is
 * used and allowed, and whether it may be evicted (navigator.storage).
 *
 * @module sessionkit/adapters/browser-storage
 */
import * as z from "zod/mini";

/** This origin's storage use, as {@link storageEstimate} reports it. */
export interface StorageEstimate {
  /** Bytes this origin uses (all storage kinds; browsers round and may lag behind recent writes). */
  usageBytes: number;
  /** Bytes this origin may use before writes fail with "quota". */
  quotaBytes: number;
  /** True when the browser will not evict this origin's data under storage pressure. */
  persisted: boolean;
}

const estimateSchema = z.object({ usage: z.number().check(z.nonnegative()), quota: z.number().check(z.nonnegative()) });

function storageManager(): StorageManager | undefined {
  return typeof navigator === "undefined" ? undefined : navigator.storage;
}

/** The origin's storage use and quota; null where the browser has no StorageManager (or in Node). */
export async function storageEstimate(): Promise<StorageEstimate | null> {
  const storage = storageManager();
  if (!storage?.estimate) return null;
  const [estimate, persisted] = await Promise.all([storage.estimate(), storage.persisted?.() ?? false]);
  const { usage, quota } = estimateSchema.parse(estimate);
  return { usageBytes: usage, quotaBytes: quota, persisted };
}

/**
 * Asks the browser to keep this origin's data under storage pressure (`navigator.storage.persist()`).
 * Resolves with whether the data is now persistent: Chromium decides silently (often from site
 * engagement), Firefox asks the user; false where the API is missing.
 */
export async function requestPersistence(): Promise<boolean> {
  const storage = storageManager();
  if (!storage?.persist) return false;
  if (await storage.persisted()) return true;
  return storage.persist();
}
