/**
 * Listing a store the CLI may not write to: a read-only folder must list as fast as a writable
 * one. The CLI reads every store through `readingStorage` (cli/store-cache.ts): the store's folder
 * with `.sessionkit/` (the catalog) mounted from the user's cache dir. Measured on the listing
 * benchmark's 300 sessions: writable vs read-only folder, both warm (catalog present), and, for
 * scale, the read-only folder without the mount (the catalog cannot be kept: every call is cold).
 */
import { mkdirSync, rmSync } from "node:fs";
import { join } from "node:path";
import { mountedStorage } from "../../adapters/mounted.js";
import { nodeFsStorage } from "../../adapters/node-fs/index.js";
import { readingStorage, storeCacheDir } from "../../cli/store-cache.js";
import { SessionManager, StorageError, type SessionInfo, type StoragePort } from "../../src/index.js";
import { CATALOG_DIR } from "../../src/session/listing.js";
import { LIST_CWD, LIST_ROOT, SCRATCH_DIR, ensureListSessions } from "../lib/data.js";
import { formatMs, interleave, type Case, type Sample } from "../lib/measure.js";
import { ratio, verdict, type Row } from "../lib/report.js";

/** A folder whose every write fails as on a read-only file system (root may write anywhere, so chmod would not do). */
function refusingWrites(port: StoragePort): StoragePort {
  const refuse = async (path: string): Promise<never> => {
    throw new StorageError("io", `EROFS: read-only file system, ${path}`, { path });
  };
  return { ...port, kind: `read-only(${port.kind})`, append: refuse, write: refuse, truncate: refuse, remove: refuse, acquireLock: undefined };
}

export async function benchStoreListing(runs: number): Promise<{ rows: Row[]; notes: string[] }> {
  const data = ensureListSessions();
  const home = join(SCRATCH_DIR, "store-listing-home");
  const writableCache = { XDG_CACHE_HOME: join(SCRATCH_DIR, "store-listing-cache-writable") };
  const readOnlyCache = { XDG_CACHE_HOME: join(SCRATCH_DIR, "store-listing-cache-read-only") };
  for (const env of [writableCache, readOnlyCache]) rmSync(env.XDG_CACHE_HOME, { recursive: true, force: true });
  // The folder's own catalog, left by the listing section (a writable port), would make the
  // no-mount case warm: with none there, every call of it is cold, as this row says.
  rmSync(join(LIST_ROOT, CATALOG_DIR), { recursive: true, force: true });
  mkdirSync(home, { recursive: true });

  const writable = await readingStorage(LIST_ROOT, writableCache, home);
  const readOnlyBase = refusingWrites(nodeFsStorage({ root: LIST_ROOT }));
  const readOnly = mountedStorage(readOnlyBase, { ".sessionkit": nodeFsStorage({ root: storeCacheDir(LIST_ROOT, readOnlyCache, home) }) });
  const list = (storage: StoragePort) => () => SessionManager.list(storage, LIST_CWD);
  // The timed call is the second one: the first (untimed) brings the catalog up to date.
  const warm = (name: string, storage: StoragePort): Case<SessionInfo[]> => ({ name, before: async () => void (await list(storage)()), run: list(storage) });
  const cases: Case<SessionInfo[]>[] = [
    warm("writable folder", writable),
    warm("read-only folder", readOnly),
    { name: "read-only folder, no cache mount", run: list(readOnlyBase) },
  ];
  const results = await interleave(cases, runs);
  const sample = (name: string): Sample => results.get(name)!.sample;
  const timing = (s: Sample) => `${formatMs(s.median)} (min ${formatMs(s.min)})`;
  const [w, r, cold] = ["writable folder", "read-only folder", "read-only folder, no cache mount"].map(sample) as [Sample, Sample, Sample];
  const same = ["read-only folder", "read-only folder, no cache mount"].every((name) => JSON.stringify(results.get(name)!.last) === JSON.stringify(results.get("writable folder")!.last));
  const what = `${data.files} sessions, ${(data.bytes / 1e9).toFixed(2)} GB`;
  await Promise.all([writable.close(), readOnly.close()]);
  return {
    rows: [
      {
        name: `list ${what} through the CLI's storage: read-only folder vs writable folder (both warm, catalog in the cache)`,
        ours: `read-only ${timing(r)}`,
        peer: `writable ${timing(w)}`,
        ratio: ratio(r.median / w.median),
        target: "≤ 1.1×",
        verdict: verdict(r.median / w.median <= 1.1),
        key: "listReadOnly",
        figures: { readOnlyMs: r.median, readOnlyMinMs: r.min, writableMs: w.median, writableMinMs: w.min, ratioToWritable: r.median / w.median, targetRatioToWritable: 1.1 },
      },
      {
        name: `list ${what}: read-only folder without the cache mount (its catalog cannot be written) vs with it`,
        ours: timing(cold),
        peer: `with the mount ${timing(r)}`,
        ratio: ratio(cold.median / r.median),
        target: "—",
        verdict: "info",
        key: "listReadOnly.noCacheMount",
        figures: { ms: cold.median, minMs: cold.min, ratioToMounted: cold.median / r.median },
      },
      {
        name: "the three listings give the same SessionInfo",
        ours: `${results.get("writable folder")!.last.length} listed`,
        peer: "",
        ratio: "",
        target: "equal",
        verdict: verdict(same),
        key: "listReadOnly.sameInfo",
        figures: { listed: results.get("writable folder")!.last.length, equal: same },
      },
    ],
    notes: [
      `read-only listing: the listing benchmark's ${data.files} sessions read through cli/store-cache.ts's readingStorage (\`.sessionkit/\` mounted from a cache dir); the read-only folder is the same folder behind a port whose every write fails with EROFS (this bench runs as root, for whom chmod makes nothing read-only; test/node/cli-stores.test.ts runs the CLI as user nobody on a chmod-ed store). ${runs} interleaved rounds; warm = a listing call just before the timed one.`,
    ],
  };
}
