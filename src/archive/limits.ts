/**
 * Import limits: safe defaults against hostile archives, each one a caller can raise.
 * @category Archives
 */
export interface ArchiveLimits {
  /** Zip entries (and plain files per batch). */
  maxEntries: number;
  /** Uncompressed bytes of all members together; also caps a source stream that must be buffered. */
  maxTotalBytes: number;
  /** Uncompressed bytes of one member or plain file (it is held in memory while it is checked). */
  maxEntryBytes: number;
  /** Uncompressed / compressed size of one entry, from the central directory, before inflating. */
  maxRatio: number;
  /** Lines of one session. */
  maxSessionLines: number;
}

/**
 * The limits an import or verification applies unless `limits` raises them: 50,000 entries, 4 GiB
 * in all, 512 MiB per member, a compression ratio of 100, 2,000,000 lines per session.
 * @category Archives
 */
export const DEFAULT_LIMITS: Readonly<ArchiveLimits> = Object.freeze({
  maxEntries: 50_000,
  maxTotalBytes: 4 * 1024 ** 3,
  maxEntryBytes: 512 * 1024 ** 2,
  // Real sessions deflate 4-7×; a bomb of zeros deflates ~1000×.
  maxRatio: 100,
  maxSessionLines: 2_000_000,
});

/** Entries this small are never a bomb, whatever their ratio (a 10 KB blank file deflates 500×). */
export const RATIO_EXEMPT_BYTES = 64 * 1024;

export function resolveLimits(limits: Partial<ArchiveLimits> | undefined): ArchiveLimits {
  const out = { ...DEFAULT_LIMITS, ...limits };
  for (const [key, value] of Object.entries(out)) {
    if (typeof value !== "number" || !(value > 0)) throw new RangeError(`archive limit ${key} must be a positive number (got ${String(value)})`);
  }
  return out;
}
