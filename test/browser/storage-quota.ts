/**
 * Real quota failures in the test browser: a Chromium storage bucket created with a small quota
 * gives genuine QuotaExceededErrors from its IndexedDB and OPFS, without touching the quota of
 * the origin that other test files share.
 */

/** The part of the Storage Buckets API (Chromium 122+) the tests use; TypeScript's DOM lib lacks it. */
export interface StorageBucket {
  readonly name: string;
  readonly indexedDB: IDBFactory;
  /** The bucket's own usage and quota, as the browser accounts them. */
  estimate(): Promise<{ usage: number; quota: number }>;
  getDirectory(): Promise<FileSystemDirectoryHandle>;
}

interface StorageBucketManager {
  open(name: string, options?: { quota?: number }): Promise<StorageBucket>;
  delete(name: string): Promise<void>;
}

function bucketManager(): StorageBucketManager {
  const manager = (navigator as Navigator & { storageBuckets?: StorageBucketManager }).storageBuckets;
  if (!manager) throw new Error("this browser has no Storage Buckets API (navigator.storageBuckets)");
  return manager;
}

/** A new, empty bucket that holds at most `quotaBytes`; delete it with `deleteBucket`. */
export function openSmallBucket(quotaBytes: number): Promise<StorageBucket> {
  return bucketManager().open(`sessionkit-test-${crypto.randomUUID()}`, { quota: quotaBytes });
}

export function deleteBucket(bucket: StorageBucket): Promise<void> {
  return bucketManager().delete(bucket.name);
}
